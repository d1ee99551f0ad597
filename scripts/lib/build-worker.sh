#!/usr/bin/env bash
# Builds one demo worker or bench contestant that is neither Rust nor Python,
# and prints its path last:
#
#   scripts/lib/build-worker.sh LANGUAGE PROGRAM     (LANGUAGE csharp|curator, PROGRAM demo|bench)
#
#   csharp  demo    demo/workers/dotnet/Worker.cs          -> target/demo/dotnet/ZooLockDemoWorker.exe
#   csharp  bench   bench/contestants/dotnet/Contestant.cs -> target/bench/dotnet/ZooLockBenchContestant.exe
#   csharp  bed     bed/contenders/Contender.cs            -> target/bed/dotnet/ZooLockBedContender.exe
#   curator demo    demo/workers/curator/CuratorWorker.java         -> target/demo/curator/run
#   curator bench   bench/contestants/curator/CuratorContestant.java -> target/bench/curator/run
#   curator peer    tests/peers/CuratorMutex.java                   -> target/peers/curator/run
#
# csharp: the native library ($ZOOLOCK_NATIVE, else cargo's release build), the ZooLock assembly and the
# program (Mono's mcs, the flags of dotnet/mcs.rsp), side by side in the
# output directory, where Mono finds libzoolock_ffi.so:
#   mono target/demo/dotnet/ZooLockDemoWorker.exe --connect … …
# curator: Java on Debian's Curator jars (/usr/share/java), classes in
# OUT/classes, and OUT/run, a launcher that starts one:
#   target/demo/curator/run --connect HOSTS --path P --resource HOST:PORT --name N ...
#   target/bench/curator/run --connect HOSTS --path P --scenario a|b|c|scale ...
# $CURATOR_WORKER_JAVA_OPTS (demo) or $CURATOR_BENCH_JAVA_OPTS (bench) replaces
# the JVM options below; ${…}_LOG is Curator/ZooKeeper's log level on stderr
# (default error). Downloads nothing: a missing jar or tool is reported with
# the Debian package that provides it.
#
# Only what is out of date is rebuilt (the Java classes also when this script
# changed); a launcher is rewritten only when its text changes.
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.."

if [ $# -ne 2 ]; then
  echo "usage: scripts/lib/build-worker.sh csharp|curator demo|bench|bed|peer" >&2
  exit 2
fi
language=$1 which=$2 name="build-worker $1 $2"
case "$language $which" in
  "csharp demo") out=target/demo/dotnet program=ZooLockDemoWorker.exe src=demo/workers/dotnet/Worker.cs ;;
  "csharp bench") out=target/bench/dotnet program=ZooLockBenchContestant.exe src=bench/contestants/dotnet/Contestant.cs ;;
  "csharp bed") out=target/bed/dotnet program=ZooLockBedContender.exe src=bed/contenders/Contender.cs ;;
  # The worker starts often and runs briefly: C1 only, a small heap's GC.
  "curator demo")
    out=target/demo/curator src=demo/workers/curator/CuratorWorker.java env=CURATOR_WORKER
    java_opts="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k" description="one Curator worker of the demo." ;;
  # The bench measures steady state: full tiered JIT (no TieredStopAtLevel),
  # which the contestant reaches during its warm-up (--warmup seconds of
  # cycles, 2 by default, before `ready`). At the few hundred cycles a second
  # of a busy 2-core machine, the default thresholds left C2 compiling
  # ZooKeeper's client code (~120 compilations) through the measured window,
  # on the core the server needs; CompileThresholdScaling=0.1 compiles the
  # same hot code ten times sooner (1 compilation left in the window, client
  # CPU per cycle halved). The serial collector: short pauses on a heap this
  # small, no GC threads competing with the server.
  # A peer of the core's interop test: briefly, once a test.
  "curator peer")
    out=target/peers/curator src=tests/peers/CuratorMutex.java env=CURATOR_PEER
    java_opts="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k" description="Curator's InterProcessMutex for core/tests/interop.rs." ;;
  "curator bench")
    out=target/bench/curator src=bench/contestants/curator/CuratorContestant.java env=CURATOR_BENCH
    java_opts="-XX:+UseSerialGC -XX:CompileThresholdScaling=0.1 -Xss512k" description="one Curator contestant of the bench." ;;
  *)
    echo "usage: scripts/lib/build-worker.sh csharp|curator demo|bench|bed|peer" >&2
    exit 2 ;;
esac

# stale TARGET SOURCE…: true if TARGET is missing or older than any source.
stale() {
  local target=$1; shift
  [ -f "$target" ] || return 0
  local source
  for source in "$@"; do
    [ "$source" -nt "$target" ] && return 0
  done
  return 1
}

build_csharp() {
  scripts/lib/setup-dotnet.sh
  local tmp="$out/.build"   # compiled here, then moved: a failed build leaves nothing half-written
  mkdir -p "$out" "$tmp"

  # Cargo is quick when nothing changed. (The generated C# files are scripts/codegen.sh's, committed.)
  local native=${ZOOLOCK_NATIVE:-target/release/libzoolock_ffi.so}
  [ -n "${ZOOLOCK_NATIVE:-}" ] || cargo build --locked --release -q -p zoolock-ffi --lib
  if ! cmp -s "$native" "$out/libzoolock_ffi.so"; then
    cp "$native" "$tmp/libzoolock_ffi.so"
    mv -f "$tmp/libzoolock_ffi.so" "$out/libzoolock_ffi.so"
  fi

  if stale "$out/ZooLock.dll" dotnet/src/*.cs dotnet/mcs.rsp; then
    mcs @dotnet/mcs.rsp -target:library -optimize+ -out:"$tmp/ZooLock.dll" dotnet/src/*.cs
    mv -f "$tmp/ZooLock.dll" "$out/ZooLock.dll"
  fi

  if stale "$out/$program" "$src" "$out/ZooLock.dll" dotnet/mcs.rsp; then
    mcs @dotnet/mcs.rsp -target:exe -optimize+ -r:"$out/ZooLock.dll" -out:"$tmp/$program" "$src"
    mv -f "$tmp/$program" "$out/$program"
  fi
  echo "$out/$program"
}

build_curator() {
  local main classes=$out/classes jars=/usr/share/java
  main=$(basename "$src" .java)
  # jar (without .jar) -> Debian package. ZooKeeper's and Curator's manifests
  # name further jars (netty, jackson, ...): the JVM adds those that exist.
  local need=(
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

  local missing=0 tool entry cp=""
  for tool in "java openjdk-17-jre-headless" "javac openjdk-17-jdk-headless"; do
    set -- $tool
    if ! command -v "$1" >/dev/null; then
      echo "$name: '$1' not found: apt-get install $2" >&2
      missing=1
    fi
  done
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
  local stamp=$classes/$main.class
  if stale "$stamp" "$src" "$self"; then
    echo "$name: javac $src" >&2
    rm -rf "$classes"
    mkdir -p "$classes"
    javac -nowarn -Xlint:none --release 17 -encoding UTF-8 -cp "$cp" -d "$classes" "$src"
    touch "$stamp"
  fi

  local abs_classes launcher tmp
  abs_classes=$(cd "$classes" && pwd)
  launcher=$(cat <<EOF
#!/bin/sh
# Written by scripts/lib/build-worker.sh curator $which: $description
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
}

"build_$language"
