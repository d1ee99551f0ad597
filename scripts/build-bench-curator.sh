#!/usr/bin/env bash
# Builds the bench's Curator contestant (bench/contestants/curator/CuratorContestant.java,
# the protocol of bench/contestants/PROTOCOL.md) against Debian's Curator jars
# in /usr/share/java, into target/bench/curator/, and writes
# target/bench/curator/run, which starts one contestant:
#   target/bench/curator/run --connect HOSTS --path P --scenario a|b|c|scale ...
# The work is scripts/build-curator.sh's (shared with the demo's worker).
# The bench measures steady state: full tiered JIT (no TieredStopAtLevel),
# which the contestant reaches during its warm-up (--warmup seconds of cycles,
# 2 by default, before `ready`). At the few hundred cycles a second of a busy
# 2-core machine, the default thresholds left C2 compiling ZooKeeper's client
# code (~120 compilations) through the measured window, on the core the server
# needs; CompileThresholdScaling=0.1 compiles the same hot code ten times
# sooner (1 compilation left in the window, client CPU per cycle halved).
# The serial collector: short pauses on a heap this small, no GC threads
# competing with the server. CURATOR_BENCH_JAVA_OPTS replaces these.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/build-curator.sh build-bench-curator bench/contestants/curator/CuratorContestant.java target/bench/curator \
  CURATOR_BENCH "-XX:+UseSerialGC -XX:CompileThresholdScaling=0.1 -Xss512k" "one Curator contestant of the bench."
