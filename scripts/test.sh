#!/usr/bin/env bash
# Runs every zoolock test against real ZooKeeper servers that the tests
# start themselves on free loopback ports (or, for faults inside an
# ensemble, on hosts in network namespaces of their own): the Rust core,
# harness and demo, each binding's suite, the ensemble fault bed with
# contenders in every language, every code block of the documentation, the
# main job with workers in every language, plainly and under injected
# faults, then the packages a user installs (built into dist/ by
# scripts/package.sh, then installed and run without a Rust toolchain).
# Installs what it needs first (Debian packages; PyPI into .venv).
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
# The packages (scripts/package.sh) build in the background, at the lowest
# priority, while the suites run: the suites mostly wait on ZooKeeper, and
# take the CPU first when they need it. First the x86-64 packages, beside
# the Rust tests: the binding suites run what users install (the x86-64
# wheel, the glibc 2.17 native library), not a second build of them. Then
# the other architectures' and the packages that hold them all, beside the
# binding suites; the packages' own tests come after. Each in its own
# process group (setsid), so that a failure here stops all of it.
# What they install is installed first: never two apt or pip runs at once.
background() {
  local log=target/package-$1.log
  bg_started=$SECONDS
  setsid nice -n 19 scripts/package.sh "$1" >"$log" 2>&1 &
  bg_pid=$!
  trap 'kill -- -"$bg_pid" 2>/dev/null || true' EXIT
}
finish_background() {
  local status=0
  wait "$bg_pid" || status=$?
  trap - EXIT
  cat "target/package-$1.log"
  echo "test.sh: scripts/package.sh $1 took $((SECONDS - bg_started)) s, in the background (at $SECONDS s)"
  [ "$status" -eq 0 ] || { echo "test.sh: scripts/package.sh $1 failed ($status)" >&2; exit 1; }
}
step scripts/lib/setup-package.sh
step scripts/lib/setup-dotnet.sh
scripts/lib/setup-aarch64-root.sh >/dev/null
# The test binaries before the packages: both are builds, neither waits.
step cargo test --workspace --locked -q --no-run
background host
# cargo test --workspace, two test binaries at a time.
step scripts/lib/cargo-test.py
step scripts/lib/build-tools.sh
# The C header and C# files generated from ffi/ and the core's codes are committed: they must be current.
step scripts/codegen.sh --check
finish_background host
background rest
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
ZOOLOCK_WHEEL=$(ls dist/zoolock-"$version"-cp39-abi3-*manylinux_2_17_x86_64*.whl)
ZOOLOCK_NATIVE=$PWD/target/dist/x86_64-unknown-linux-gnu/dist/libzoolock_ffi.so
export ZOOLOCK_WHEEL ZOOLOCK_NATIVE
step scripts/test-python.sh
step scripts/test-dotnet.sh
step scripts/test-ensemble.sh
step scripts/test-docs.sh
# The main job needs none of the other architectures' packages: it runs while they build.
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
finish_background rest
step scripts/test-packages.sh

echo "test.sh: all passed in $SECONDS s"
