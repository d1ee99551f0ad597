#!/usr/bin/env bash
# Runs every zoolock test against real ZooKeeper servers that the tests
# start themselves on free loopback ports: the Rust core and harness, then
# each binding's suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --locked
for suite in scripts/test-python.sh scripts/test-dotnet.sh; do
  if [ -x "$suite" ]; then
    echo "== $suite"
    "$suite"
  fi
done
