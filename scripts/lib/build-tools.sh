#!/usr/bin/env bash
# The programs and the C library the suites drive, in the dev profile:
# target/debug/{zkh,peer,zoolock,zoolock-demo,libzoolock_ffi.so}, ...
# Every script builds them with this one command: cargo unifies features per
# command, so a `-p` of its own would build the shared crates (tokio, the
# core) once more, differently.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --locked -q --workspace --exclude zoolock-python --bins --lib
