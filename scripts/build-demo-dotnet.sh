#!/usr/bin/env bash
# Builds the demo's C# worker: the native library (cargo, release), the
# ZooLock assembly and demo/workers/dotnet/Worker.cs (Mono's mcs, C# 7.2), as
# scripts/test-dotnet.sh builds them, into target/demo/dotnet/:
#   ZooLockDemoWorker.exe  ZooLock.dll  libzoolock_ffi.so
# Run it with `mono target/demo/dotnet/ZooLockDemoWorker.exe --connect … …`
# (Mono finds libzoolock_ffi.so beside the assembly). Only what is out of date
# is rebuilt; prints the worker's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-dotnet.sh

out=target/demo/dotnet
tmp="$out/.build"   # compiled here, then moved: a failed build leaves nothing half-written
mkdir -p "$out" "$tmp"

# Cargo is quick when nothing changed. (Its build script also regenerates
# dotnet/src/NativeMethods.g.cs, which scripts/test-dotnet.sh checks.)
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

if stale "$out/ZooLockDemoWorker.exe" demo/workers/dotnet/Worker.cs "$out/ZooLock.dll"; then
  mcs -langversion:7.2 -target:exe -warnaserror+ -optimize+ -nologo \
    -r:"$out/ZooLock.dll" -out:"$tmp/ZooLockDemoWorker.exe" demo/workers/dotnet/Worker.cs
  mv -f "$tmp/ZooLockDemoWorker.exe" "$out/ZooLockDemoWorker.exe"
fi

echo "$out/ZooLockDemoWorker.exe"
