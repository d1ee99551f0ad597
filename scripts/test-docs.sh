#!/usr/bin/env bash
# Runs every code block of README.md, ARCHITECTURE.md, core/README.md, cli/README.md and
# docs/ against one real ZooKeeper server (scripts/lib/doc-blocks.py says
# how each kind of block runs). Builds each language's part once: the
# harness, the CLI and the C library (cargo), core/examples (by the runner),
# the Python package into .venv, the ZooLock assembly (mcs).
#   scripts/test-docs.sh [FILE...]    only the blocks of these files
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
scripts/lib/setup-dotnet.sh
scripts/lib/build-tools.sh
scripts/lib/install-python.sh

target=${CARGO_TARGET_DIR:-target}
dotnet="$target/docs/dotnet"
rm -rf "$dotnet"
mkdir -p "$dotnet"
mcs @dotnet/mcs.rsp -target:library -out:"$dotnet/ZooLock.dll" dotnet/src/*.cs
ln -s "$(realpath "$target/debug/libzoolock_ffi.so")" "$dotnet/libzoolock_ffi.so"

ZOOLOCK_DOCS_DOTNET="$(realpath "$dotnet")" python3 scripts/lib/doc-blocks.py "$@"
