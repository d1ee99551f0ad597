#!/usr/bin/env bash
# Builds one C# program on zoolock's .NET library, as scripts/test-dotnet.sh
# builds the library: the native library (cargo, release), the ZooLock
# assembly (Mono's mcs, C# 7.2) and the program, into OUT_DIR:
#   PROGRAM.exe  ZooLock.dll  libzoolock_ffi.so
# `scripts/build-dotnet-program.sh OUT_DIR PROGRAM.exe SOURCE.cs…`
# Mono finds libzoolock_ffi.so beside the assembly. Only what is out of date
# is rebuilt; prints the program's path last. Used by build-demo-dotnet.sh
# (the demo's worker) and build-bench-dotnet.sh (the bench's contestant).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo "usage: $0 OUT_DIR PROGRAM.exe SOURCE.cs…" >&2
  exit 2
fi
out=$1; program=$2; shift 2
scripts/setup-dotnet.sh

tmp="$out/.build"   # compiled here, then moved: a failed build leaves nothing half-written
mkdir -p "$out" "$tmp"

# Cargo is quick when nothing changed. (Its build script also regenerates
# dotnet/src/NativeMethods.g.cs and ffi/include/zoolock.h, which scripts/pack-dotnet.sh checks.)
cargo build --locked --release -q -p zoolock-ffi --lib
if ! cmp -s target/release/libzoolock_ffi.so "$out/libzoolock_ffi.so"; then
  cp target/release/libzoolock_ffi.so "$tmp/libzoolock_ffi.so"
  mv -f "$tmp/libzoolock_ffi.so" "$out/libzoolock_ffi.so"
fi

# stale TARGET SOURCE…: true if TARGET is missing or older than any source.
stale() {
  local target=$1; shift
  [ -f "$target" ] || return 0
  local source
  for source in "$@"; do
    [ "$source" -nt "$target" ] && return 0
  done
  return 1
}

if stale "$out/ZooLock.dll" dotnet/src/*.cs; then
  mcs -langversion:7.2 -target:library -unsafe -warnaserror+ -optimize+ -nologo \
    -out:"$tmp/ZooLock.dll" dotnet/src/*.cs
  mv -f "$tmp/ZooLock.dll" "$out/ZooLock.dll"
fi

if stale "$out/$program" "$@" "$out/ZooLock.dll"; then
  mcs -langversion:7.2 -target:exe -warnaserror+ -optimize+ -nologo \
    -r:"$out/ZooLock.dll" -out:"$tmp/$program" "$@"
  mv -f "$tmp/$program" "$out/$program"
fi

echo "$out/$program"
