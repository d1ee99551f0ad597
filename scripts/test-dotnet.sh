#!/usr/bin/env bash
# The .NET binding, end to end: builds the native library (release) and the
# C# library and tests with Mono's mcs, runs the NUnit suite against a real
# ZooKeeper (the harness's zkh), packs ZooLock.<version>.nupkg with nuget,
# then installs it from a folder feed into a fresh consumer, compiles a small
# program against it and runs it against a real server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-dotnet.sh

out=target/dotnet
rm -rf "$out"
mkdir -p "$out/tests" "$out/pack/lib/net462" "$out/pack/runtimes/linux-x64/native" "$out/pack/build"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

echo "== native library (cargo build --release -p zoolock-ffi) and the harness"
cargo build --locked --release -p zoolock-ffi --lib --example peer
cargo build --locked -p zk-harness --bin zkh
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git diff --quiet -- dotnet/src/NativeMethods.g.cs; then
  echo "dotnet/src/NativeMethods.g.cs differs from what ffi/build.rs generates: commit the generated file" >&2
  exit 1
fi

echo "== C# library and tests (mcs, C# 7.2)"
mcs -langversion:7.2 -target:library -unsafe -warnaserror+ -optimize+ \
  -doc:"$out/pack/lib/net462/ZooLock.xml" -out:"$out/pack/lib/net462/ZooLock.dll" dotnet/src/*.cs
nunit=/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
cp "$out/pack/lib/net462/ZooLock.dll" "$nunit" target/release/libzoolock_ffi.so "$out/tests/"
# -unsafe: the bad-input catalogue also calls the C ABI with bytes C# strings cannot hold.
mcs -langversion:7.2 -target:library -unsafe -warnaserror+ -out:"$out/tests/ZooLock.Tests.dll" \
  -r:"$out/tests/ZooLock.dll" -r:"$nunit" -r:System.Web.Extensions.dll dotnet/tests/*.cs

echo "== NUnit suite against a real ZooKeeper"
status=0
(
  cd "$out/tests"
  ZOOLOCK_ZKH="$OLDPWD/target/debug/zkh" ZOOLOCK_PEER="$OLDPWD/target/release/examples/peer" RUST_BACKTRACE=0 \
    nunit-console -nologo -noshadow -domain:None -xml=TestResult.xml ZooLock.Tests.dll
) || status=$?
attr() { sed -n "s/.*<test-results [^>]*\b$1=\"\([0-9]*\)\".*/\1/p" "$out/tests/TestResult.xml"; }
total=$(attr total); failed=$(( $(attr failures) + $(attr errors) ))
summary="dotnet: $(( total - failed - $(attr not-run) )) passed, $failed failed"
echo "$summary"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$total" -eq 0 ]; then
  exit 1
fi

echo "== NuGet package"
cp dotnet/build/ZooLock.targets "$out/pack/build/"
objcopy --strip-debug target/release/libzoolock_ffi.so "$out/pack/runtimes/linux-x64/native/libzoolock_ffi.so" 2>/dev/null \
  || cp target/release/libzoolock_ffi.so "$out/pack/runtimes/linux-x64/native/"
nuget pack dotnet/ZooLock.nuspec -BasePath "$out/pack" -OutputDirectory "$out" -Version "$version" -NonInteractive
package="$out/ZooLock.$version.nupkg"

echo "== consumer: install from a folder feed, compile, run against a real server"
feed="$out/feed"; consumer="$out/consumer"
mkdir -p "$feed" "$consumer"
cp "$package" "$feed/"
nuget install ZooLock -Version "$version" -Source "$PWD/$feed" -OutputDirectory "$consumer/packages" -NonInteractive
installed="$consumer/packages/ZooLock.$version"
for file in lib/net462/ZooLock.dll lib/net462/ZooLock.xml runtimes/linux-x64/native/libzoolock_ffi.so build/ZooLock.targets; do
  [ -f "$installed/$file" ] || { echo "the installed package lacks $file" >&2; exit 1; }
done
cp "$installed/lib/net462/ZooLock.dll" "$consumer/"
mcs -langversion:7.2 -r:"$consumer/ZooLock.dll" -out:"$consumer/Program.exe" dotnet/consumer/Program.cs
coproc ZKH { exec target/debug/zkh; }
echo '{"cmd":"start"}' >&"${ZKH[1]}"
read -r started <&"${ZKH[0]}"
connect=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' <<<"$started")
[ -n "$connect" ] || { echo "zkh did not start a server: $started" >&2; exit 1; }
LD_LIBRARY_PATH="$PWD/$installed/runtimes/linux-x64/native" mono "$consumer/Program.exe" "$connect"
echo '{"cmd":"shutdown"}' >&"${ZKH[1]}"
wait "$ZKH_PID" 2>/dev/null || true
echo "package $package installs and runs"
echo "$summary"
