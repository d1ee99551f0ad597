#!/usr/bin/env bash
# The packages in dist/ (scripts/package.sh), installed and run the way a
# user does, and only if they were built from this very commit:
# - the wheel, into a fresh venv whose PATH has no cargo or rustc: imports
#   zoolock and takes a lock against a real ZooKeeper (the harness's zkh);
# - the NuGet package, into a fresh consumer from a folder feed
#   (scripts/lib/test-nuget-consumer.sh);
# - the crates: `cargo package` verified them and built the crate's tests
#   against the packaged harness; here only their presence is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(git describe --always --dirty)
if [ ! -f dist/SOURCE ] || [ "$(cat dist/SOURCE)" != "$here" ]; then
  echo "test-packages: dist/ was not built from $here ($(cat dist/SOURCE 2>/dev/null || echo 'no dist/SOURCE')): run scripts/package.sh" >&2
  exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
wheel=$(ls "$PWD"/dist/zoolock-"$version"-cp39-abi3-*.whl)
passed=0

echo "== the wheel, in a fresh venv without Rust"
cargo build --locked -q -p zk-harness --bin zkh
# The system's directories, less any that holds cargo or rustc.
path=""
for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  if [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ]; then continue; fi
  path="${path:+$path:}$dir"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
user() { env -i HOME="$work" LANG=C.UTF-8 PATH="$work/venv/bin:$path" "$@"; }
user python3 -m venv "$work/venv"
if user sh -c 'command -v cargo || command -v rustc'; then
  echo "test-packages: the user's PATH still finds a Rust toolchain" >&2
  exit 1
fi
user python -m pip install --quiet --disable-pip-version-check --no-index "$wheel"
coproc ZKH { exec target/debug/zkh; }
echo '{"cmd":"start"}' >&"${ZKH[1]}"
read -r started <&"${ZKH[0]}"
connect=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' <<<"$started")
[ -n "$connect" ] || { echo "zkh did not start a server: $started" >&2; exit 1; }
(cd "$work" && user python "$OLDPWD/tests/packages/take_a_lock.py" "$connect")
echo '{"cmd":"shutdown"}' >&"${ZKH[1]}"
wait "$ZKH_PID" 2>/dev/null || true
passed=$((passed + 1))

echo "== the NuGet package, in a fresh consumer"
scripts/lib/test-nuget-consumer.sh "dist/ZooLock.$version.nupkg"
passed=$((passed + 1))

echo "== the crates"
ls "dist/zoolock-$version.crate" "dist/zk-harness-$version.crate"
passed=$((passed + 1))
echo "packages: $passed passed, 0 failed"
