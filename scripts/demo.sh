#!/usr/bin/env bash
# The main job: workers in Rust, Python (zoolock), kazoo and C# contend for one
# zoolock lock guarding a shared resource (with --scheme curator: Rust, Python
# and Curator); the run ends with a verified summary. Starts its own local
# ZooKeeper unless given --connect HOSTS. Other flags: --workers N,
# --acquisitions K, --path P, --languages rust,python,… (to leave one out),
# --verbose (the workers' client logs on the terminal too, not only in the
# log file the run names); --faults [--duration SECS] for the run under
# injected faults on a 3-node ensemble; --tls for the run over TLS (its own
# server's secureClientPort, client certificates required; every language
# but Curator).
# Builds every language the run asks for first; one that cannot be built
# fails the command by name (the driver checks again before it starts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/lib/setup.sh

languages="" scheme=kazoo previous="" tls=""
for arg in "$@"; do
  case "$previous" in
    --languages) languages=$arg ;;
    --scheme) scheme=$arg ;;
  esac
  [ "$arg" = --tls ] && tls=1
  previous=$arg
done
if [ -z "$languages" ]; then
  # The driver's default: every language that can share the path.
  case "$scheme${tls:+-tls}" in
    curator-tls) languages=rust,python ;;
    *-tls) languages=rust,python,kazoo,csharp ;;
    curator) languages=rust,python,curator ;;
    *) languages=rust,python,kazoo,csharp ;;
  esac
fi
asked() { case ",$languages," in *",$1,"*) return 0 ;; esac; return 1; }

cargo build --release --locked -q -p zoolock-demo
failed=()
if asked python || asked kazoo; then
  scripts/lib/install-python.sh || failed+=("python/kazoo: zoolock's Python module or kazoo could not be installed into .venv")
fi
if asked csharp; then
  scripts/lib/build-worker.sh csharp demo >/dev/null || failed+=("csharp: the C# worker could not be built (Mono)")
fi
if asked curator; then
  scripts/lib/build-worker.sh curator demo >/dev/null || failed+=("curator: the Curator worker could not be built (Java, Curator's jars)")
fi
if [ ${#failed[@]} -gt 0 ]; then
  for why in "${failed[@]}"; do
    echo "demo: the $why (see above)" >&2
  done
  echo "demo: leave a language out with --languages (asked for: $languages)" >&2
  exit 1
fi
exec target/release/zoolock-demo "$@"
