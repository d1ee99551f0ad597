#!/usr/bin/env bash
# An arm64 Debian userland to run the linux-aarch64 packages on this x86-64
# machine under qemu-user: CPython 3.11, Mono's runtime, glibc and the few
# libraries they load, unpacked (dpkg -x, never installed) from Debian's
# arm64 packages into ROOT. Run a program as
#   qemu-aarch64 -L ROOT ROOT/usr/bin/python3.11 …
# qemu-user looks for every file under ROOT first, then in /: Mono's
# managed assemblies (the same on every architecture) come from this
# machine's /usr/lib/mono. Prints ROOT last.
#   scripts/lib/setup-aarch64-root.sh [ROOT]    (default /var/cache/zoolock/aarch64-root)
# Made once per machine: ROOT/.packages lists what it holds, and a root
# whose list differs from this script's is made again. Adds the arm64
# architecture to dpkg for apt-get download (nothing of it is installed).
set -euo pipefail
root=${1:-/var/cache/zoolock/aarch64-root}
packages=(
  libc6 libgcc-s1 zlib1g libssl3
  # CPython 3.11 and the standard library's compiled modules zoolock's test imports.
  python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1 libffi8 libbz2-1.0 liblzma5 libcrypt1 libuuid1
  # Mono's runtime and its native half (libmono-native), which links Kerberos.
  mono-runtime-sgen mono-runtime-common libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
)
want=$(printf '%s\n' "${packages[@]}")
if [ -f "$root/.packages" ] && [ "$(cat "$root/.packages")" = "$want" ]; then
  echo "$root"
  exit 0
fi

need_apt=()
command -v qemu-aarch64 >/dev/null 2>&1 || need_apt+=(qemu-user)
if [ ${#need_apt[@]} -gt 0 ] || ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-aarch64-root: needs root for: dpkg --add-architecture arm64; apt-get install ${need_apt[*]}" >&2
    exit 1
  fi
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup-aarch64-root: dpkg --add-architecture arm64" >&2
  dpkg --add-architecture arm64
  apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup-aarch64-root: apt-get install ${need_apt[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

echo "setup-aarch64-root: apt-get download ${#packages[@]} arm64 packages into $root" >&2
debs=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-arm64-debs.XXXXXX")
trap 'rm -rf "$debs"' EXIT
chmod 755 "$debs"   # apt-get download fetches as the _apt user
if ! (cd "$debs" && apt-get download -q=2 "${packages[@]/%/:arm64}" >/dev/null); then
  # The package lists may be older than the mirror: fetch them and try once more.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  (cd "$debs" && apt-get download -q=2 "${packages[@]/%/:arm64}" >/dev/null)
fi
rm -rf "$root.new"
mkdir -p "$root.new"
for deb in "$debs"/*.deb; do
  dpkg -x "$deb" "$root.new"
done
printf '%s\n' "$want" >"$root.new/.packages"
rm -rf "$root"
mv "$root.new" "$root"
echo "$root"
