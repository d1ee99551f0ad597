#!/usr/bin/env bash
# Builds ./python and installs it into .venv the way users do (pip install),
# after scripts/lib/setup-python.sh. Used by test-python.sh, demo.sh and bench.sh.
# maturin is already in .venv: no isolated build environment to download.
# Its PEP 517 backend runs the `maturin` executable from PATH, so .venv/bin
# must be on it (the venv is not activated). Cargo only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/lib/setup-python.sh
if [ -n "${ZOOLOCK_WHEEL:-}" ]; then
  # scripts/test.sh: the wheel scripts/package.sh built, as users get it.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$ZOOLOCK_WHEEL"
else
  PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation ./python
fi
