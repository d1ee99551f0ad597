#!/usr/bin/env bash
# The packages in dist/ (scripts/package.sh), installed and run the way a
# user does, and only if they were built from this very commit, against a
# real ZooKeeper (the harness's zkh) on loopback; the aarch64 ones under
# qemu-user with an arm64 Debian userland (scripts/lib/setup-aarch64-root.sh):
# - every native file (the wheels' modules, the NuGet libraries, the CLIs)
#   needs glibc 2.17 at most (scripts/lib/glibc-check.py);
# - each wheel, into a fresh venv of its architecture's CPython by that
#   CPython's pip, with no Rust on PATH: a lock contended and handed over
#   (tests/packages/take_a_lock.py);
# - the NuGet package, into a fresh consumer from a folder feed
#   (scripts/lib/test-nuget-consumer.sh), run by Mono on x86-64 and arm64;
#   its Windows x64 library under Wine: the C ABI's scenarios from C
#   programs built by mingw-w64 (ffi/tests/c_abi.rs, its ignored test);
# - each CLI archive (man page and completions too): the x86-64
#   `zoolock exec` and the aarch64 `zoolock hold` hand one lock to each
#   other, both ways;
# - the crates: scripts/package.sh checked the packaged crate and its tests
#   against the packaged harness; here a Rust service with only the
#   dependency lines docs/install.md and docs/rust.md give (the crates
#   unpacked as vendor/, the README's example as main) builds and holds.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(git describe --always --dirty)
if [ ! -f dist/SOURCE ] || [ "$(cat dist/SOURCE)" != "$here" ]; then
  echo "test-packages: dist/ was not built from $here ($(cat dist/SOURCE 2>/dev/null || echo 'no dist/SOURCE')): run scripts/package.sh" >&2
  exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
root=$(scripts/lib/setup-aarch64-root.sh | tail -1)
qemu=$(command -v qemu-aarch64)
arm() { "$qemu" -L "$root" "$@"; }
passed=0
section=$SECONDS
done_() { passed=$((passed + 1)); echo "-- passed: $1 ($((SECONDS - section)) s)"; section=$SECONDS; }
fail() { echo "test-packages: $*" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-packages.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== glibc: every native file in dist/ needs GLIBC_2.17 at most"
mkdir -p "$work/unpacked/wheels" "$work/unpacked/nuget" "$work/unpacked/cli"
for wheel in dist/zoolock-"$version"-*.whl; do
  unzip -q -o "$wheel" 'zoolock/*.so' -d "$work/unpacked/wheels/$(basename "$wheel" .whl)"
done
unzip -q -o "dist/ZooLock.$version.nupkg" 'runtimes/*' -d "$work/unpacked/nuget"
for arch in x86_64 aarch64; do
  tar -xzf "dist/zoolock-$version-$arch-linux-gnu.tar.gz" -C "$work/unpacked/cli"
done
mapfile -t natives < <(find "$work/unpacked" -type f \( -name '*.so' -o -name zoolock \) | sort)
[ ${#natives[@]} -eq 6 ] || fail "expected 6 native files (2 wheels, 2 NuGet libraries, 2 CLIs), found: ${natives[*]}"
.venv/bin/python scripts/lib/glibc-check.py 2.17 "${natives[@]}"
done_ "glibc <= 2.17"

echo "== the NuGet package's win-x64 library under Wine: the C ABI's scenarios"
ZOOLOCK_WINDOWS_DLL="$work/unpacked/nuget/runtimes/win-x64/native/zoolock_ffi.dll" \
  cargo test --workspace --locked -q --test c_abi -- --ignored the_windows_dll
done_ "win-x64 library under Wine"

scripts/lib/build-tools.sh
coproc ZKH { exec target/debug/zkh; }
echo '{"cmd":"start"}' >&"${ZKH[1]}"
read -r started <&"${ZKH[0]}"
connect=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' <<<"$started")
[ -n "$connect" ] || fail "zkh did not start a server: $started"

echo "== the x86_64 wheel, in a fresh venv without Rust"
# The system's directories, less any that holds cargo or rustc (Debian's
# Rust, which scripts/package.sh installs, is in /usr/bin): then a folder
# with the system's python3 and sh alone.
path=""
for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  if [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ]; then continue; fi
  path="${path:+$path:}$dir"
done
mkdir -p "$work/bin"
ln -s "$(PATH=/usr/bin:/bin command -v python3)" "$work/bin/python3"
ln -s /bin/sh "$work/bin/sh"
path="$work/bin${path:+:$path}"
user() { env -i HOME="$work" LANG=C.UTF-8 PATH="$1/bin:$path" "${@:2}"; }
user "$work/venv" python3 -m venv "$work/venv"
if user "$work/venv" sh -c 'command -v cargo || command -v rustc'; then
  fail "the user's PATH still finds a Rust toolchain"
fi
user "$work/venv" python -m pip install --quiet --disable-pip-version-check --no-index "$PWD"/dist/zoolock-"$version"-cp39-abi3-*_x86_64.whl
(cd "$work" && user "$work/venv" python "$OLDPWD/tests/packages/take_a_lock.py" "$connect")
done_ "x86_64 wheel"

echo "== the aarch64 wheel, under qemu: the aarch64 CPython's venv and pip"
# pip is pure Python: .venv's (the same CPython 3.11) serves the aarch64 one.
mkdir -p "$work/pip"
ln -s "$(.venv/bin/python -c 'import os, pip; print(os.path.dirname(pip.__file__))')" "$work/pip/pip"
arm "$root/usr/bin/python3.11" -m venv --without-pip "$work/arm-venv"
env -i HOME="$work" LANG=C.UTF-8 PATH="$path" PYTHONPATH="$work/pip" "$qemu" -L "$root" "$work/arm-venv/bin/python" \
  -m pip install --quiet --disable-pip-version-check --no-index "$PWD"/dist/zoolock-"$version"-cp39-abi3-*_aarch64.whl
(cd "$work" && env -i HOME="$work" LANG=C.UTF-8 PATH="$path" "$qemu" -L "$root" "$work/arm-venv/bin/python" \
  -c 'import platform; print("aarch64 venv:", platform.machine())')
(cd "$work" && env -i HOME="$work" LANG=C.UTF-8 PATH="$path" "$qemu" -L "$root" "$work/arm-venv/bin/python" \
  "$OLDPWD/tests/packages/take_a_lock.py" "$connect")
done_ "aarch64 wheel"

echo "== the CLI archives: x86_64 and aarch64 zoolock hand one lock to each other"
x86="$work/unpacked/cli/zoolock-$version-x86_64-linux-gnu/zoolock"
aarch64="$work/unpacked/cli/zoolock-$version-aarch64-linux-gnu/zoolock"
"$x86" --version
arm "$aarch64" --version
for arch in x86_64 aarch64; do
  dir="$work/unpacked/cli/zoolock-$version-$arch-linux-gnu"
  for f in README.md LICENSE man/man1/zoolock.1 completions/zoolock.bash completions/_zoolock completions/zoolock.fish; do
    [ -s "$dir/$f" ] || fail "the $arch archive lacks $f"
  done
  bash -n "$dir/completions/zoolock.bash" || fail "the $arch archive's bash completion does not parse"
done
# No config file of this machine's may feed the zoolocks below.
export ZOOLOCK_CONFIG=/dev/null
# The aarch64 zoolock takes part through `hold` (held until SIGTERM, the
# token printed when held): `exec` starts CMD's supervisor by running
# /proc/self/exe, and qemu-user without binfmt_misc cannot run that again.
# A fifo says when each side holds; `zoolock watch` when the other queues.
lock="/zoolock-packages/cli"
wait_line() { local line=""; read -r -t 120 line <"$1"; [[ "$line" =~ $2 ]] || fail "read '$line' from $1, expected $2"; }
# The token fifo stays open here, so that `hold` can open it before anyone reads.
wait_token() { local line=""; read -r -t 120 -u "$token" line; [[ "$line" =~ ^[0-9]+$ ]] || fail "zoolock hold printed '$line', not a token"; }
queued() {
  local identifier=$1 events="$work/watch" line="" fd
  rm -f "$events"
  mkfifo "$events"
  "$x86" --connect "$connect" watch --json "$lock" >"$events" &
  local watch_pid=$!
  exec {fd}<"$events"
  while read -r -t 120 -u "$fd" line && [[ "$line" != *"\"identifier\":\"$identifier\""* ]]; do :; done
  kill "$watch_pid"
  wait "$watch_pid" 2>/dev/null || true
  exec {fd}<&-
  [[ "$line" == *"\"identifier\":\"$identifier\""* ]] || fail "$identifier never queued on $lock"
}
rm -f "$work/held" "$work/go" "$work/token" "$work/ran"
mkfifo "$work/held" "$work/go" "$work/token"
exec {token}<>"$work/token"

# x86_64 exec holds; aarch64 hold queues, and holds once exec's CMD ends.
"$x86" --connect "$connect" exec --identifier x86-exec "$lock" -- sh -c "echo held >'$work/held'; read x <'$work/go'" &
exec_pid=$!
wait_line "$work/held" '^held$'
"$qemu" -L "$root" "$aarch64" --connect "$connect" hold --identifier arm-hold --timeout 120 "$lock" >"$work/token" &
hold_pid=$!
queued arm-hold
echo go >"$work/go"
wait "$exec_pid" || fail "the x86_64 zoolock exec failed"
wait_token
kill -TERM "$hold_pid"
wait "$hold_pid" || fail "the aarch64 zoolock hold did not end cleanly on SIGTERM"
echo "x86_64 exec -> aarch64 hold: handed over"

# aarch64 hold holds; x86_64 exec queues, and runs CMD once hold lets go.
"$qemu" -L "$root" "$aarch64" --connect "$connect" hold --identifier arm-hold "$lock" >"$work/token" &
hold_pid=$!
wait_token
"$x86" --connect "$connect" exec --identifier x86-exec --timeout 120 "$lock" -- sh -c "echo ran" >"$work/ran" &
exec_pid=$!
queued x86-exec
[ ! -s "$work/ran" ] || fail "the x86_64 zoolock exec ran CMD while the aarch64 zoolock held"
kill -TERM "$hold_pid"
wait "$hold_pid" || fail "the aarch64 zoolock hold did not end cleanly on SIGTERM"
wait "$exec_pid" || fail "the x86_64 zoolock exec failed"
[ "$(cat "$work/ran")" = ran ] || fail "the x86_64 zoolock exec did not run CMD"
echo "aarch64 hold -> x86_64 exec: handed over"
exec {token}>&-
done_ "CLI archives"

echo "== the crates: a Rust service with docs/install.md's dependency lines, run against the server"
zk_version=$(sed -n 's/^version = "\(.*\)"/\1/p' zookeeper-client/Cargo.toml)
ls "dist/zoolock-$version.crate" "dist/zk-harness-$version.crate" "dist/zoolock-zookeeper-client-$zk_version.crate"
service="$work/service"
mkdir -p "$service/vendor" "$service/src"
tar -m -xzf "dist/zoolock-$version.crate" -C "$service/vendor"
tar -m -xzf "dist/zoolock-zookeeper-client-$zk_version.crate" -C "$service/vendor"
# docs/install.md's lines, and tokio as docs/rust.md says; the README's example as main.
cat >"$service/Cargo.toml" <<TOML
[package]
name = "service"
version = "0.1.0"
edition = "2021"

[dependencies]
zoolock = { path = "vendor/zoolock-$version" }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[patch.crates-io]
zoolock-zookeeper-client = { path = "vendor/zoolock-zookeeper-client-$zk_version" }
TOML
cp core/examples/readme.rs "$service/src/main.rs"
# The workspace's lock file as a start: the same versions, so the build reuses target/.
cp Cargo.lock "$service/Cargo.lock"
CARGO_TARGET_DIR="$PWD/target" cargo build -q --manifest-path "$service/Cargo.toml"
said=$(ZOOKEEPER="$connect" "$PWD/target/debug/service")
[[ "$said" == *" holds with token "* ]] || fail "the service said: $said"
done_ "crates"

echo '{"cmd":"shutdown"}' >&"${ZKH[1]}"
wait "$ZKH_PID" 2>/dev/null || true

echo "== the NuGet package, in a fresh consumer (x86_64, and aarch64 under qemu)"
scripts/lib/test-nuget-consumer.sh "dist/ZooLock.$version.nupkg" linux-x64 linux-arm64 win-x64 --aarch64-root "$root"
done_ "NuGet package"

echo "packages: $passed passed, 0 failed"
