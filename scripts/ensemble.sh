#!/usr/bin/env bash
# The ensemble fault bed for a long time: N seeded schedules (500 by
# default) on a 3-server and then a 5-server ensemble, with a seed of its
# own each run (printed; --seed S replays it). See scripts/test-ensemble.sh.
#
#   scripts/ensemble.sh [--schedules N] [--seed S]
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=500
seed=$(( $(date +%s) % 1000000 ))
while [ $# -gt 0 ]; do
  case "$1" in
    --schedules) schedules="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "ensemble: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
echo "ensemble: $schedules schedules on 3 servers, then on 5, seed $seed"
half=$(( schedules / 2 ))
scripts/test-ensemble.sh --schedules "$half" --seed "$seed" --servers 3
scripts/test-ensemble.sh --schedules "$(( schedules - half ))" --seed "$seed" --first "$half" --servers 5
