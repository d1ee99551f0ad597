#!/usr/bin/env bash
# The .NET binding, end to end: packs ZooLock.<version>.nupkg into
# target/dotnet (scripts/lib/pack-dotnet.sh: the native library, release, and the
# C# library, Mono's mcs), compiles the tests against that very assembly,
# runs the NUnit suite against a real ZooKeeper (the harness's zkh), then
# installs the package from a folder feed into a fresh consumer, compiles a
# small program against it and runs it against a real server
# (scripts/lib/test-nuget-consumer.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
scripts/lib/setup-dotnet.sh

out=target/dotnet
rm -rf "$out"
mkdir -p "$out/tests"

echo "== ZooLock package (native library, C# library), the harness and the peer"
package=$(scripts/lib/pack-dotnet.sh "$out" | tail -1)
scripts/lib/build-tools.sh

echo "== the public API: the packed assembly's against dotnet/PublicAPI.txt"
mcs @dotnet/mcs.rsp -target:exe -out:"$out/PublicApi.exe" dotnet/tools/PublicApi.cs
mono "$out/PublicApi.exe" "$out/pack/lib/net462/ZooLock.dll" >"$out/PublicAPI.txt"
if ! diff -u dotnet/PublicAPI.txt "$out/PublicAPI.txt"; then
  echo "dotnet: the public API changed (above); if that is meant, take it:" >&2
  echo "  cp $out/PublicAPI.txt dotnet/PublicAPI.txt" >&2
  exit 1
fi

echo "== C# tests (mcs, dotnet/mcs.rsp)"
nunit=/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll
cp "$out/pack/lib/net462/ZooLock.dll" "$nunit" "$out/pack/runtimes/linux-x64/native/libzoolock_ffi.so" "$out/tests/"
# dotnet/mcs.rsp's -unsafe also serves the bad-input catalogue, which calls the
# C ABI with bytes C# strings cannot hold.
mcs @dotnet/mcs.rsp -target:library -out:"$out/tests/ZooLock.Tests.dll" \
  -r:"$out/tests/ZooLock.dll" -r:"$nunit" -r:System.Web.Extensions.dll dotnet/tests/*.cs

echo "== NUnit suite against a real ZooKeeper"
# Within 15 minutes (it takes one): a hang, at exit too, ends with Mono's
# thread dump (SIGQUIT) and a failure instead of CI's timeout.
status=0
(
  cd "$out/tests"
  ZOOLOCK_ZKH="$OLDPWD/target/debug/zkh" ZOOLOCK_PEER="$OLDPWD/target/debug/peer" RUST_BACKTRACE=0 \
    timeout -s QUIT -k 20 900 nunit-console -nologo -noshadow -domain:None -xml=TestResult.xml ZooLock.Tests.dll
) || status=$?
attr() { sed -n "s/.*<test-results [^>]*\b$1=\"\([0-9]*\)\".*/\1/p" "$out/tests/TestResult.xml"; }
total=$(attr total); failed=$(( $(attr failures) + $(attr errors) ))
summary="dotnet: $(( total - failed - $(attr not-run) )) passed, $failed failed"
echo "$summary"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$total" -eq 0 ]; then
  exit 1
fi

echo "== consumer: install $package from a folder feed, compile, run against a real server"
scripts/lib/test-nuget-consumer.sh "$package" linux-x64
echo "$summary"
