#!/usr/bin/env bash
# Runs every zoolock test against real ZooKeeper servers that the tests
# start themselves on free loopback ports (or, for faults inside an
# ensemble, on hosts in network namespaces of their own): the Rust core,
# harness and demo, each binding's suite, the ensemble fault bed with
# contenders in every language, every code block of the documentation, the packages
# a user installs (built into dist/ by scripts/package.sh, then installed and
# run without a Rust toolchain), then
# the main job with workers in every language, plainly and under injected
# faults. Installs what it needs first (Debian packages; PyPI into .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's time, so that a slow one is seen (CI's budget is 30 minutes on 2 cores).
step() {
  local started=$SECONDS
  "$@"
  echo "test.sh: $* took $((SECONDS - started)) s (at $SECONDS s)"
}
step scripts/lib/setup.sh
# One formatting for every crate (rustfmt.toml).
cargo fmt --all --check
# The published crates build with the Rust they declare (rust-version).
step scripts/lib/msrv-check.py
# The core without its default features (tls, sasl): it builds, and refuses a TLS or SASL session by name.
step cargo test --locked -q -p zoolock --no-default-features --lib security
# cargo test --workspace, two test binaries at a time.
step scripts/lib/cargo-test.py
step scripts/lib/build-tools.sh
# The C header and C# files generated from ffi/ and the core's codes are committed: they must be current.
step scripts/codegen.sh --check
# The packages first: the binding suites below run what users install (the
# x86-64 wheel, the glibc 2.17 native library), not a second build of them.
step scripts/package.sh
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
ZOOLOCK_WHEEL=$(ls dist/zoolock-"$version"-cp39-abi3-*manylinux_2_17_x86_64*.whl)
ZOOLOCK_NATIVE=$PWD/target/dist/x86_64-unknown-linux-gnu/dist/libzoolock_ffi.so
export ZOOLOCK_WHEEL ZOOLOCK_NATIVE
step scripts/test-python.sh
step scripts/test-dotnet.sh
step scripts/test-ensemble.sh
step scripts/test-docs.sh
step scripts/test-packages.sh

echo "== the main job: Rust, Python, kazoo and C# workers on one lock, then Rust, Python and Curator"
scripts/lib/build-worker.sh csharp demo >/dev/null
scripts/lib/build-worker.sh curator demo >/dev/null
kazoo_named=(--workers 8 --languages rust,python,kazoo,csharp --path /zoolock-ci/main-job)
curator_named=(--workers 6 --scheme curator --languages rust,python,curator --path /zoolock-ci/curator)
target/debug/zoolock-demo "${kazoo_named[@]}" --acquisitions 25
target/debug/zoolock-demo "${kazoo_named[@]}" --faults --duration 20
target/debug/zoolock-demo "${curator_named[@]}" --acquisitions 25
target/debug/zoolock-demo "${curator_named[@]}" --faults --duration 20
echo "main job: 4 passed, 0 failed"
echo "test.sh: all passed in $SECONDS s"
