#!/usr/bin/env bash
# The main job: workers in Rust, Python (zoolock), kazoo and C# contend for one
# zoolock lock guarding a shared resource (with --scheme curator: Rust, Python
# and Curator); the run ends with a verified summary. Starts its own local ZooKeeper unless given --connect HOSTS. Other
# flags: --workers N, --acquisitions K, --path P, --languages rust,python,…;
# --faults [--duration SECS] for the run under injected faults on a 3-node
# ensemble.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --locked -q -p zoolock-demo
# The other languages' workers, built once; a language that cannot be built
# here is left out of the run (the summary lists who took part).
if ! .venv/bin/python -c "import zoolock, kazoo" 2>/dev/null; then
  scripts/setup-python.sh && .venv/bin/python -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation ./python || echo "demo: no Python workers (see above)" >&2
fi
{ scripts/setup-dotnet.sh && scripts/build-demo-dotnet.sh >/dev/null; } || echo "demo: no C# workers (see above)" >&2
scripts/build-demo-curator.sh >/dev/null || echo "demo: no Curator workers (see above)" >&2
exec target/release/zoolock-demo "$@"
