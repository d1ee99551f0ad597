#!/usr/bin/env bash
# Builds what a user installs without a Rust toolchain, and the crate, into dist/:
#   zoolock-<v>-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
#       the Python module, one abi3 wheel for CPython >= 3.9 on any glibc >= 2.17.
#       Built by maturin with zig (ziglang from PyPI) as the linker: zig links
#       against glibc 2.17's symbols, where a plain build here would need the
#       machine's glibc 2.34 symbols (manylinux_2_34 only). maturin checks the
#       wheel's compliance for the tag it is asked for (its auditwheel check,
#       an error if not compliant); auditwheel (PyPI's own tool) checks again.
#   ZooLock.<v>.nupkg      the .NET package (scripts/lib/pack-dotnet.sh)
#   zoolock-<v>.crate, zk-harness-<v>.crate
#       `cargo package`: the crate and the harness its tests and doctests run
#       against (published with it: a dev-dependency without a version would
#       be dropped from the package). The packaged crate's tests are built
#       against the packaged harness.
#   SOURCE                 the commit they were built from (`git describe --dirty`)
# scripts/test-packages.sh installs and runs them. Tools go into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
scripts/lib/setup-python.sh
tools=("ziglang==0.17.0" "auditwheel==6.8.2")
if ! .venv/bin/python -c 'import ziglang, auditwheel' 2>/dev/null; then
  echo "package: pip install ${tools[*]}"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${tools[@]}"
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
rm -rf dist
mkdir -p dist

echo "== Python wheel (maturin, zig, manylinux2014)"
# Its own target dir: the zig linker changes every fingerprint, and would
# otherwise rebuild the release tree that scripts/lib/install-python.sh uses.
PATH="$PWD/.venv/bin:$PATH" CARGO_TARGET_DIR="$PWD/target/wheel" .venv/bin/maturin build --quiet --release --locked \
  -m python/Cargo.toml --compatibility manylinux2014 --zig --out dist
wheel=$(ls dist/zoolock-"$version"-cp39-abi3-*manylinux_2_17_x86_64*.whl)
.venv/bin/auditwheel show "$wheel" | tee target/auditwheel.txt | tr '\n' ' ' | grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' \
  || { cat target/auditwheel.txt >&2; echo "package: auditwheel does not find $wheel manylinux2014-compliant" >&2; exit 1; }
echo "$wheel: manylinux_2_17_x86_64 (auditwheel show)"

echo "== NuGet package"
scripts/lib/pack-dotnet.sh dist >/dev/null
rm -rf dist/pack
ls dist/ZooLock."$version".nupkg

echo "== crates (cargo package)"
cargo package --locked --allow-dirty -q -p zk-harness -p zoolock
cp target/package/zk-harness-"$version".crate target/package/zoolock-"$version".crate dist/
# The packaged crate's tests build against the packaged harness, as they
# would against the published one. Unpacked outside the workspace (whose
# manifest would otherwise claim them), built in its target dir.
check=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-crates.XXXXXX")
trap 'rm -rf "$check"' EXIT
tar -xzf dist/zoolock-"$version".crate -C "$check"
tar -xzf dist/zk-harness-"$version".crate -C "$check"
CARGO_TARGET_DIR="$PWD/target" cargo test -q --no-run --manifest-path "$check/zoolock-$version/Cargo.toml" \
  --config "patch.crates-io.zk-harness.path=\"$check/zk-harness-$version\""
ls dist/*.crate

git describe --always --dirty >dist/SOURCE
echo "dist/ built from $(cat dist/SOURCE)"
