#!/usr/bin/env bash
# The main job: workers contend for one zoolock lock guarding a shared
# ledger; the run ends with a verified summary. Starts its own local
# ZooKeeper unless given --connect HOSTS. Other flags: --workers N,
# --acquisitions K, --path P; --faults [--duration SECS] for the run under
# injected faults on a 3-node ensemble.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --locked -q -p zoolock-demo
exec target/release/zoolock-demo "$@"
