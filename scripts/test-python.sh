#!/usr/bin/env bash
# The Python package's suite: builds zkh (the harness's server driver),
# installs ./python into .venv the way users do (pip install), and runs
# pytest against real ZooKeeper servers, kazoo from PyPI alongside.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh
scripts/lib/build-tools.sh
scripts/lib/install-python.sh
# From the tests' folder, so `import zoolock` is the installed package.
cd python/tests
status=0
../../.venv/bin/python -m pytest -p no:cacheprovider "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
