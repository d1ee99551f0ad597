#!/usr/bin/env bash
# Packs the ZooLock NuGet package: the ZooLock assembly (Mono's mcs, the
# flags of dotnet/mcs.rsp) with its XML docs for public members only
# (dotnet/tools/PublicDocs.cs), the native library of each runtime
# identifier given, build/ZooLock.targets and the package's README, by nuget
# from dotnet/ZooLock.nuspec at the workspace's version.
#   scripts/lib/pack-dotnet.sh OUT_DIR [RID=LIBRARY...]  ->  OUT_DIR/ZooLock.<version>.nupkg
# Without RID=LIBRARY: linux-x64 only, $ZOOLOCK_NATIVE if set (scripts/test.sh
# sets it to the library scripts/package.sh built), else cargo's release
# build for this machine; scripts/package.sh passes the glibc 2.17 builds of
# every architecture it ships.
# NuGet 2.8 cannot write metadata newer than its schema (license
# expression, repository, readme): nuget packs without them, then the full
# nuspec replaces the packed one (dotnet/tools/nuspec.py).
# The package's contents are staged in OUT_DIR/pack (scripts/test-dotnet.sh
# compiles its tests against OUT_DIR/pack/lib/net462/ZooLock.dll).
# Prints the package's path last.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [RID=LIBRARY...]" >&2
  exit 2
fi
out=$1; shift
scripts/lib/setup-dotnet.sh
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
pack="$out/pack"
rm -rf "$pack" "$out/ZooLock.$version.nupkg"
mkdir -p "$pack/lib/net462" "$pack/build"

natives=("$@")
if [ ${#natives[@]} -eq 0 ] && [ -n "${ZOOLOCK_NATIVE:-}" ]; then
  natives=(linux-x64="$ZOOLOCK_NATIVE")
elif [ ${#natives[@]} -eq 0 ]; then
  cargo build --locked --release -q -p zoolock-ffi --lib
  mkdir -p target/release/stripped
  objcopy --strip-debug target/release/libzoolock_ffi.so target/release/stripped/libzoolock_ffi.so
  natives=(linux-x64=target/release/stripped/libzoolock_ffi.so)
fi
# The C# sources include generated files: never pack stale ones.
scripts/codegen.sh --check >&2
for native in "${natives[@]}"; do
  rid=${native%%=*} library=${native#*=}
  mkdir -p "$pack/runtimes/$rid/native"
  cp "$library" "$pack/runtimes/$rid/native/"
done

mcs @dotnet/mcs.rsp -target:library -optimize+ \
  -doc:"$pack/ZooLock.all.xml" -out:"$pack/lib/net462/ZooLock.dll" dotnet/src/*.cs
tools="$out/tools"
mkdir -p "$tools"
mcs @dotnet/mcs.rsp -target:exe -r:System.Xml.Linq.dll -r:System.Xml.dll -out:"$tools/PublicDocs.exe" dotnet/tools/PublicDocs.cs
mono "$tools/PublicDocs.exe" "$pack/lib/net462/ZooLock.dll" "$pack/ZooLock.all.xml" "$pack/lib/net462/ZooLock.xml" >&2
rm "$pack/ZooLock.all.xml"
cp dotnet/build/ZooLock.targets "$pack/build/"
cp dotnet/README.md "$pack/README.md"

nuspec="$pack/ZooLock.nuspec"
python3 dotnet/tools/nuspec.py full dotnet/ZooLock.nuspec "$version" "$(git rev-parse HEAD 2>/dev/null || true)" >"$nuspec"
python3 dotnet/tools/nuspec.py legacy dotnet/ZooLock.nuspec "$version" "" >"$pack/legacy.nuspec"
nuget pack "$pack/legacy.nuspec" -BasePath "$pack" -OutputDirectory "$out" -Version "$version" -NonInteractive >&2
rm "$pack/legacy.nuspec"
python3 dotnet/tools/nuspec.py replace "$out/ZooLock.$version.nupkg" "$nuspec"
echo "$out/ZooLock.$version.nupkg"
