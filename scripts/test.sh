#!/usr/bin/env bash
# Runs every zoolock test against real ZooKeeper servers that the tests
# start themselves on free loopback ports: the Rust core, harness and demo,
# each binding's suite, every code block of the documentation, the packages
# a user installs (built into dist/ by scripts/package.sh, then installed and
# run without a Rust toolchain), then
# the main job with workers in every language, plainly and under injected
# faults. Installs what it needs first (Debian packages; PyPI into .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
# One formatting for every crate (rustfmt.toml).
cargo fmt --all --check
# The C header and C# files generated from ffi/ and the core's codes are committed: they must be current.
scripts/codegen.sh --check
cargo test --workspace --locked
scripts/test-python.sh
scripts/test-dotnet.sh
# Every code block of README.md and docs/ (and ARCHITECTURE.md, core/README.md), against one server.
scripts/test-docs.sh
scripts/package.sh
scripts/test-packages.sh

echo "== the main job: Rust, Python, kazoo and C# workers on one lock, then Rust, Python and Curator"
scripts/lib/build-worker.sh csharp demo >/dev/null
scripts/lib/build-worker.sh curator demo >/dev/null
cargo build --release --locked -q -p zoolock-demo
kazoo_named=(--workers 8 --languages rust,python,kazoo,csharp --path /zoolock-ci/main-job)
curator_named=(--workers 6 --scheme curator --languages rust,python,curator --path /zoolock-ci/curator)
target/release/zoolock-demo "${kazoo_named[@]}" --acquisitions 25
target/release/zoolock-demo "${kazoo_named[@]}" --faults --duration 20
target/release/zoolock-demo "${curator_named[@]}" --acquisitions 25
target/release/zoolock-demo "${curator_named[@]}" --faults --duration 20
echo "main job: 4 passed, 0 failed"
