#!/usr/bin/env bash
# The Python package's suite: builds zkh (the harness's server driver),
# installs ./python into .venv the way users do (pip install), and runs
# pytest against real ZooKeeper servers, kazoo from PyPI alongside.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-python.sh
cargo build --locked -p zk-harness --bin zkh
# maturin is already in .venv: no isolated build environment to download.
# Its PEP 517 backend runs the `maturin` executable from PATH, so .venv/bin
# must be on it (the venv is not activated).
PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation ./python
# From the tests' folder, so `import zoolock` is the installed package.
cd tests/python
status=0
../../.venv/bin/python -m pytest -p no:cacheprovider "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
