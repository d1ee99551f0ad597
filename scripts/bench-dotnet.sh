#!/usr/bin/env bash
# Uncontended acquire+release cycles/s from C# beside the Rust core on one
# private ZooKeeper (forceSync=no), interleaved rounds; prints the ratios.
# Not part of the tests. `scripts/bench-dotnet.sh [rounds] [seconds per round]`
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-dotnet.sh
out=target/dotnet-bench
mkdir -p "$out"
cargo build --locked --release -p zoolock-ffi --lib --example peer
cargo build --locked -p zk-harness --bin zkh
mcs -langversion:7.2 -target:library -unsafe -optimize+ -out:"$out/ZooLock.dll" dotnet/src/*.cs
mcs -langversion:7.2 -optimize+ -out:"$out/Bench.exe" -r:"$out/ZooLock.dll" -r:System.Web.Extensions.dll \
  dotnet/bench/Bench.cs dotnet/tests/ZkHarness.cs dotnet/tests/Peer.cs
cp target/release/libzoolock_ffi.so "$out/"
ZOOLOCK_ZKH="$PWD/target/debug/zkh" ZOOLOCK_PEER="$PWD/target/release/examples/peer" mono "$out/Bench.exe" "$@"
