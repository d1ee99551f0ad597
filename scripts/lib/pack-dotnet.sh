#!/usr/bin/env bash
# Packs the ZooLock NuGet package: the native library (cargo, release), the
# ZooLock assembly and its XML docs (Mono's mcs, the flags of dotnet/mcs.rsp),
# build/ZooLock.targets, packed by nuget from dotnet/ZooLock.nuspec at the
# workspace's version.
#   scripts/lib/pack-dotnet.sh OUT_DIR  ->  OUT_DIR/ZooLock.<version>.nupkg
# The package's contents are staged in OUT_DIR/pack (scripts/test-dotnet.sh
# compiles its tests against OUT_DIR/pack/lib/net462/ZooLock.dll).
# Used by scripts/test-dotnet.sh and scripts/package.sh. Prints the package's path last.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
scripts/lib/setup-dotnet.sh
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
pack="$out/pack"
rm -rf "$pack" "$out/ZooLock.$version.nupkg"
mkdir -p "$pack/lib/net462" "$pack/runtimes/linux-x64/native" "$pack/build"

cargo build --locked --release -q -p zoolock-ffi --lib
# The C# sources include generated files: never pack stale ones.
scripts/codegen.sh --check >&2
mcs @dotnet/mcs.rsp -target:library -optimize+ \
  -doc:"$pack/lib/net462/ZooLock.xml" -out:"$pack/lib/net462/ZooLock.dll" dotnet/src/*.cs
cp dotnet/build/ZooLock.targets "$pack/build/"
objcopy --strip-debug target/release/libzoolock_ffi.so "$pack/runtimes/linux-x64/native/libzoolock_ffi.so" 2>/dev/null \
  || cp target/release/libzoolock_ffi.so "$pack/runtimes/linux-x64/native/"
nuget pack dotnet/ZooLock.nuspec -BasePath "$pack" -OutputDirectory "$out" -Version "$version" -NonInteractive >&2
echo "$out/ZooLock.$version.nupkg"
