#!/usr/bin/env bash
# Builds the demo's Curator worker (demo/workers/curator/CuratorWorker.java)
# against Debian's Curator jars in /usr/share/java, into target/demo/curator/,
# and writes target/demo/curator/run, which starts one worker:
#   target/demo/curator/run --connect HOSTS --path P --resource HOST:PORT --name N ...
# The work is scripts/build-curator.sh's (shared with the bench's contestant).
# The worker starts often and runs briefly: C1 only, a small heap's GC.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/build-curator.sh build-demo-curator demo/workers/curator/CuratorWorker.java target/demo/curator \
  CURATOR_WORKER "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k" "one Curator worker of the demo."
