#!/usr/bin/env bash
# Runs the randomized invariant test (core/tests/invariant.rs) for a long
# time in a release build, counting every violation instead of stopping at
# the first, and prints at the end: acquisitions, faults by kind (request
# faults by kind and op: fired, unmatched, missed, unlanded), overlaps,
# holders without their node, fencing, hangs and orphans.
#
#   scripts/soak.sh --minutes 30 [--seed N] [--without delete-holder,drop-reply]
#
# The seed is printed; ZOOLOCK_SEED=N replays the same schedule of steps.
# The whole step log (which request each request fault hit) is kept in
# target/tmp/invariant-<seed>.log.
# The kazoo peer joins when .venv has kazoo (scripts/lib/setup-python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=30
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) export ZOOLOCK_SEED="$2"; shift 2 ;;
    --without) export ZOOLOCK_WITHOUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

scripts/lib/setup.sh
[ -x .venv/bin/python ] || scripts/lib/setup-python.sh
export ZOOLOCK_MINUTES="$minutes" ZOOLOCK_KEEP_GOING=1
unset ZOOLOCK_STEPS
echo "soak: ${minutes} min of random steps (release build)"
status=0
cargo test --release --locked -p zoolock --test invariant random_steps -- --nocapture --test-threads 1 \
  >target/soak.log 2>&1 || status=$?
# The summary, the violations and where the full step log went.
sed 's/^test .* \.\.\. zoolock invariant run/zoolock invariant run/' target/soak.log |
  awk '/^zoolock invariant run/ { p = 1 } p { print } p && /^orphans:/ { exit }'
grep -E '^  at step|^replay:|^step log:' target/soak.log || true
if [ "$status" -ne 0 ] && ! grep -q '^zoolock invariant run' target/soak.log; then
  tail -n 40 target/soak.log
fi
echo "soak: full output in target/soak.log"
exit "$status"
