#!/usr/bin/env bash
# Creates .venv (python3 -m venv) if missing and installs what the Python
# package's build and tests need from PyPI: maturin (the build backend),
# pytest, kazoo (the peer the interop tests and the benchmark run against),
# pyOpenSSL<24 and pyjks, which kazoo's test harness imports, and objgraph,
# which kazoo's TreeCache tests import (kazoo's own tests run against zoolock:
# python/tests/test_kazoo_*suite.py), and mypy, whose stubtest checks the
# stubs against the installed package.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Debian's python3 and its venv module (ensurepip is packaged apart).
need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "zoolock's Python package needs these Debian packages: ${need_apt[*]}" >&2
    echo "install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup-python: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
  echo "zoolock's Python package needs CPython 3.9 or newer" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup-python: python3 -m venv .venv"
  python3 -m venv .venv
fi
want=("maturin>=1.7,<2" "pytest>=7" "kazoo==2.11.0" "pyopenssl<24" "pyjks" "objgraph" "mypy==1.13.0")
if ! .venv/bin/python - "${want[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for name in ("maturin", "pytest", "kazoo", "pyopenssl", "pyjks", "objgraph", "mypy"):
    version(name)
PY
then
  echo "setup-python: pip install ${want[*]}"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${want[@]}"
fi
