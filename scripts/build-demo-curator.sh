#!/usr/bin/env bash
# Builds the demo's Curator worker (demo/workers/curator/CuratorWorker.java)
# against Debian's Curator jars in /usr/share/java, into target/demo/curator/,
# and writes target/demo/curator/run, which starts one worker:
#   target/demo/curator/run --connect HOSTS --path P --resource HOST:PORT --name N ...
# Downloads nothing: a missing jar or tool is reported with the Debian package
# that provides it. Does nothing when the classes are newer than the source.
set -euo pipefail
cd "$(dirname "$0")/.."

src=demo/workers/curator/CuratorWorker.java
out=target/demo/curator
classes=$out/classes
jars=/usr/share/java

# jar (without .jar) -> Debian package. ZooKeeper's and Curator's manifests
# name further jars (netty, jackson, ...): the JVM adds those that exist.
need=(
  "curator-recipes libcurator-recipes-java"
  "curator-framework libcurator-framework-java"
  "curator-client libcurator-client-java"
  "zookeeper libzookeeper-java"
  "zookeeper-jute libzookeeper-java"
  "guava libguava-java"
  "slf4j-api libslf4j-java"
  # Curator/ZooKeeper log through slf4j; slf4j-simple sends it to stderr
  # (stdout carries the worker protocol), at the level set in `run`.
  "slf4j-simple libslf4j-java"
)

missing=0
for tool in "java openjdk-17-jre-headless" "javac openjdk-17-jdk-headless"; do
  set -- $tool
  if ! command -v "$1" >/dev/null; then
    echo "build-demo-curator: '$1' not found: apt-get install $2" >&2
    missing=1
  fi
done
cp=""
for entry in "${need[@]}"; do
  set -- $entry
  if [ ! -f "$jars/$1.jar" ]; then
    echo "build-demo-curator: $jars/$1.jar is missing: apt-get install $2" >&2
    missing=1
  fi
  cp="${cp:+$cp:}$jars/$1.jar"
done
[ "$missing" = 0 ] || exit 1

stamp=$classes/CuratorWorker.class
if [ ! -f "$stamp" ] || [ "$src" -nt "$stamp" ] || [ "$0" -nt "$stamp" ] || [ ! -x "$out/run" ] \
   || ! grep -qF "$PWD/$classes:" "$out/run"; then
  echo "build-demo-curator: javac $src" >&2
  rm -rf "$classes"
  mkdir -p "$classes"
  javac -nowarn -Xlint:none --release 17 -encoding UTF-8 -cp "$cp" -d "$classes" "$src"

  abs_classes=$(cd "$classes" && pwd)
  tmp=$(mktemp "$out/run.XXXXXX")
  cat >"$tmp" <<EOF
#!/bin/sh
# Written by scripts/build-demo-curator.sh: one Curator worker of the demo.
# Curator/ZooKeeper logging goes to stderr at \${CURATOR_WORKER_LOG:-error}
# (off, error, warn, info, debug); stdout carries only the worker protocol.
exec java \${CURATOR_WORKER_JAVA_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k} \\
  -Dorg.slf4j.simpleLogger.logFile=System.err \\
  -Dorg.slf4j.simpleLogger.defaultLogLevel="\${CURATOR_WORKER_LOG:-error}" \\
  -Dorg.slf4j.simpleLogger.showDateTime=true \\
  -cp '$abs_classes:$cp' CuratorWorker "\$@"
EOF
  chmod +x "$tmp"
  mv -f "$tmp" "$out/run"
  # The run script is written after the classes: touch the stamp last.
  touch "$stamp"
fi
echo "$out/run"
