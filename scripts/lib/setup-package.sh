#!/usr/bin/env bash
# Installs what scripts/package.sh needs to build every package for linux
# x86-64 and aarch64 and the .NET library for Windows x64 on this x86-64
# machine, and what scripts/test-packages.sh runs the Windows one with:
# - Debian's Rust (rustc-web, cargo-web: /usr/bin/rustc and /usr/bin/cargo)
#   with the aarch64 standard library (libstd-rust-web-dev:arm64, after
#   dpkg --add-architecture arm64): rustup's toolchain here has no aarch64
#   std, and `rustup target add` cannot reach its server;
# - for Windows: the sources of that rustc's std (rust-web-src: Debian has
#   no Windows std, so package.sh builds it), mingw-w64's C compiler and
#   linker, and Wine (wine64) to run the C ABI's tests;
# - into .venv (PyPI): ziglang, the C compiler and linker that links against
#   glibc 2.17's symbols (scripts/lib/zig-env.sh), and auditwheel.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/lib/setup-python.sh

need_apt=()
[ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] || need_apt+=(rustc-web cargo-web)
[ -d /usr/lib/rustlib/aarch64-unknown-linux-gnu/lib ] || need_apt+=(libstd-rust-web-dev:arm64)
[ -f /usr/lib/rustlib/src/rust/library/std/Cargo.toml ] || need_apt+=(rust-web-src)
command -v x86_64-w64-mingw32-gcc >/dev/null || need_apt+=(gcc-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || need_apt+=(wine64)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "zoolock's packages need: dpkg --add-architecture arm64 && apt-get install ${need_apt[*]}" >&2
    exit 1
  fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "setup-package: dpkg --add-architecture arm64"
    dpkg --add-architecture arm64
  fi
  echo "setup-package: apt-get install ${need_apt[*]}"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

tools=("ziglang==0.17.0" "auditwheel==6.8.2")
if ! .venv/bin/python -c 'import ziglang, auditwheel' 2>/dev/null; then
  echo "setup-package: pip install ${tools[*]}"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${tools[@]}"
fi
