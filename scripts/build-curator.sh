#!/usr/bin/env bash
# Builds one Java program on Debian's Curator jars (/usr/share/java) and
# writes a launcher for it. Shared by scripts/build-demo-curator.sh (the
# demo's worker) and scripts/build-bench-curator.sh (the bench's contestant):
#
#   scripts/build-curator.sh NAME SOURCE OUT ENV DEFAULT_JAVA_OPTS DESCRIPTION
#
#   NAME               who is building, for messages (e.g. build-demo-curator)
#   SOURCE             one .java file; its public class is the main class
#   OUT                output directory: classes in OUT/classes, launcher OUT/run
#   ENV                prefix of the launcher's variables: ${ENV}_JAVA_OPTS
#                      (replaces DEFAULT_JAVA_OPTS) and ${ENV}_LOG (the
#                      Curator/ZooKeeper log level on stderr, default error)
#   DESCRIPTION        one line for the launcher's header
#
# Downloads nothing: a missing jar or tool is reported with the Debian package
# that provides it. Compiles only when the classes are older than the source
# (or this script); rewrites the launcher only when its text changes.
# Prints the launcher's path.
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."

if [ $# -ne 6 ]; then
  echo "usage: scripts/build-curator.sh NAME SOURCE OUT ENV DEFAULT_JAVA_OPTS DESCRIPTION" >&2
  exit 2
fi
name=$1 src=$2 out=$3 env=$4 java_opts=$5 description=$6
main=$(basename "$src" .java)
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
  # (stdout carries the program's protocol), at the level set in `run`.
  "slf4j-simple libslf4j-java"
)

missing=0
for tool in "java openjdk-17-jre-headless" "javac openjdk-17-jdk-headless"; do
  set -- $tool
  if ! command -v "$1" >/dev/null; then
    echo "$name: '$1' not found: apt-get install $2" >&2
    missing=1
  fi
done
cp=""
for entry in "${need[@]}"; do
  set -- $entry
  if [ ! -f "$jars/$1.jar" ]; then
    echo "$name: $jars/$1.jar is missing: apt-get install $2" >&2
    missing=1
  fi
  cp="${cp:+$cp:}$jars/$1.jar"
done
[ "$missing" = 0 ] || exit 1

mkdir -p "$out"
stamp=$classes/$main.class
if [ ! -f "$stamp" ] || [ "$src" -nt "$stamp" ] || [ "$self" -nt "$stamp" ]; then
  echo "$name: javac $src" >&2
  rm -rf "$classes"
  mkdir -p "$classes"
  javac -nowarn -Xlint:none --release 17 -encoding UTF-8 -cp "$cp" -d "$classes" "$src"
  touch "$stamp"
fi

abs_classes=$(cd "$classes" && pwd)
launcher=$(cat <<EOF
#!/bin/sh
# Written by scripts/$name.sh: $description
# Curator/ZooKeeper logging goes to stderr at \${${env}_LOG:-error}
# (off, error, warn, info, debug); stdout carries only the program's protocol.
# \$${env}_JAVA_OPTS replaces the JVM options below.
exec java \${${env}_JAVA_OPTS:-$java_opts} \\
  -Dorg.slf4j.simpleLogger.logFile=System.err \\
  -Dorg.slf4j.simpleLogger.defaultLogLevel="\${${env}_LOG:-error}" \\
  -Dorg.slf4j.simpleLogger.showDateTime=true \\
  -cp '$abs_classes:$cp' $main "\$@"
EOF
)
if [ ! -x "$out/run" ] || [ "$(cat "$out/run")" != "$launcher" ]; then
  tmp=$(mktemp "$out/run.XXXXXX")
  printf '%s\n' "$launcher" >"$tmp"
  chmod +x "$tmp"
  mv -f "$tmp" "$out/run"
fi
echo "$out/run"
