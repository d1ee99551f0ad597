#!/usr/bin/env bash
# The ensemble fault bed (bed/): a 3-server ensemble and contenders in Rust,
# Python, C# and the CLI, each on a host of its own (network namespaces the
# bed makes and removes; root), through seeded fault schedules inside the
# ensemble and around it; the history checker fails on any two believed
# holds of a path that overlap, any write the fencing resource accepted out
# of token order, any orphan node, any hang.
#
#   scripts/test-ensemble.sh [--schedules N] [--seed S] [--servers 3|5]
#
# The test command runs 13 schedules (every kind once) with seed 1, twice:
# with the default design (four sessions on a path: they mirror), then with
# the Rust, Python and C# contenders listing (`--mirror no`: a waiter behind
# a writer holds on its release marker). A failure prints the flags that
# replay its schedule. Python's contender runs
# on the zoolock in .venv, C#'s on the native library $ZOOLOCK_NATIVE (else
# the release build), the CLI's on target/debug/zoolock.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
scripts/lib/build-tools.sh
[ -x .venv/bin/python ] && .venv/bin/python -c 'import zoolock' 2>/dev/null || scripts/lib/install-python.sh
csharp=$(scripts/lib/build-worker.sh csharp bed | tail -1)
if [ $# -gt 0 ]; then
  exec target/debug/zoolock-bed --csharp "$csharp" "$@"
fi
target/debug/zoolock-bed --csharp "$csharp" --schedules 13 --seed 1
target/debug/zoolock-bed --csharp "$csharp" --schedules 13 --seed 1 --mirror no
