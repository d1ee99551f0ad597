#!/usr/bin/env bash
# A fresh consumer of a ZooLock NuGet package: installs PACKAGE from a folder
# feed (nuget install), checks its files, compiles dotnet/consumer/Program.cs
# against the installed assembly and runs it against a real ZooKeeper (the
# harness's zkh), with the package's native library.
#   scripts/lib/test-nuget-consumer.sh PACKAGE.nupkg
# Used by scripts/test-dotnet.sh (the package it just packed) and
# scripts/test-packages.sh (the one in dist/).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 PACKAGE.nupkg" >&2
  exit 2
fi
package=$1
scripts/lib/setup-dotnet.sh
cargo build --locked -q -p zk-harness --bin zkh
file=$(basename "$package" .nupkg)
version=${file#ZooLock.}
work=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
feed="$work/feed"; consumer="$work/consumer"
mkdir -p "$feed" "$consumer"
cp "$package" "$feed/"
nuget install ZooLock -Version "$version" -Source "$feed" -OutputDirectory "$consumer/packages" -NonInteractive
installed="$consumer/packages/ZooLock.$version"
for f in lib/net462/ZooLock.dll lib/net462/ZooLock.xml runtimes/linux-x64/native/libzoolock_ffi.so build/ZooLock.targets; do
  [ -f "$installed/$f" ] || { echo "the installed package lacks $f" >&2; exit 1; }
done
cp "$installed/lib/net462/ZooLock.dll" "$consumer/"
mcs -langversion:7.2 -r:"$consumer/ZooLock.dll" -out:"$consumer/Program.exe" dotnet/consumer/Program.cs
coproc ZKH { exec target/debug/zkh; }
echo '{"cmd":"start"}' >&"${ZKH[1]}"
read -r started <&"${ZKH[0]}"
connect=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' <<<"$started")
[ -n "$connect" ] || { echo "zkh did not start a server: $started" >&2; exit 1; }
LD_LIBRARY_PATH="$installed/runtimes/linux-x64/native" mono "$consumer/Program.exe" "$connect"
echo '{"cmd":"shutdown"}' >&"${ZKH[1]}"
wait "$ZKH_PID" 2>/dev/null || true
echo "package $package installs and runs"
