#!/usr/bin/env bash
# Runs every zoolock test against real ZooKeeper servers that the tests
# start themselves on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --locked
