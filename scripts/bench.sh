#!/usr/bin/env bash
# The bench command: builds every contestant, then zoolock-bench starts its
# own private ZooKeeper (forceSync=yes, then no), runs each contestant in
# each scenario against it, stops everything, prints the table and writes
# bench/results/latest.{md,json,png}. Flags go to zoolock-bench:
# --seconds S, --rounds R,
# --only raw,rust,rust-mirror,rust-adaptive,rust-own-runtime,python,csharp,zookeeper-client,kazoo,curator,
# --scenarios A,B1,B2,B4,B8,B16,B32,C,herd2,herd8,herd32,scale, --force-sync yes|no|both,
# --delay MS (a network's delay each way, through the bench's relay),
# --quick (B8 and C, 1 s, 3 rounds, forceSync=no: bench/results/quick.md, about four minutes).
# The chart: bench/results/latest.png (every scenario) and latest-bn.png (B(N) against N).
# Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
cargo build --release --locked -q -p zoolock-bench
# A language that cannot be built here is left out: its rows say "not built here".
if scripts/lib/install-python.sh; then
  # The chart only; not a dependency of zoolock.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "matplotlib>=3.8,<4"
else
  echo "bench: no Python contestants (see above)" >&2
fi
scripts/lib/build-worker.sh csharp bench >/dev/null || echo "bench: no C# contestant (see above)" >&2
scripts/lib/build-worker.sh curator bench >/dev/null || echo "bench: no Curator contestant (see above)" >&2
status=0
target/release/zoolock-bench "$@" || status=$?
.venv/bin/python bench/chart.py bench/results/latest.json bench/results/latest.png >/dev/null \
  || echo "bench: no chart (matplotlib missing)" >&2
exit "$status"
