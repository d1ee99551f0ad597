# Sourced by scripts/package.sh: `zig_env TRIPLE...` exports what cargo and
# maturin need to compile C and link Rust for each TRIPLE with zig (PyPI
# ziglang, driven by maturin's `zig cc`) against glibc 2.17's symbols, the
# floor of manylinux2014: a library linked by the machine's gcc needs the
# machine's glibc (2.34 here). Works for any TRIPLE Debian's rustc has a
# std for: x86_64- and aarch64-unknown-linux-gnu.
#
# Why not `maturin --zig` for the wheel and cargo-zigbuild for the rest: each
# writes its own wrapper scripts, and cargo fingerprints every unit by its
# linker's path, so two tools rebuild the whole tree twice. One set of
# wrappers, set for every triple in every package build (also for the host's
# build scripts and proc macros), lets the wheel, the NuGet native library
# and the CLI of one architecture share every dependency they have in common.
#
# Needs .venv with maturin and ziglang (scripts/package.sh installs them).

zig_env() {
  local root dir triple zig_target upper lower tool
  root=$(pwd)
  dir="$root/target/dist/zig"
  mkdir -p "$dir"
  for triple in "$@"; do
    case "$triple" in
      x86_64-unknown-linux-gnu) zig_target=x86_64-linux-gnu.2.17 ;;
      aarch64-unknown-linux-gnu) zig_target=aarch64-linux-gnu.2.17 ;;
      *) echo "zig_env: no zig target for $triple" >&2; return 1 ;;
    esac
    # cc and c++ compile and link; ar archives the C objects of -sys crates.
    # -fno-sanitize=all: zig turns UBSan on for C built without -O.
    for tool in cc c++ ar; do
      local flags=""
      [ "$tool" = ar ] || flags="-fno-sanitize=all -target $zig_target"
      local wrapper="$dir/$triple-$tool"
      local text
      text=$(printf '#!/bin/sh\n# Written by scripts/lib/zig-env.sh.\nPATH="%s/.venv/bin:$PATH" exec "%s/.venv/bin/maturin" zig %s -- %s "$@"\n' \
        "$root" "$root" "$tool" "$flags")
      if [ ! -x "$wrapper" ] || [ "$(cat "$wrapper")" != "$text" ]; then
        printf '%s\n' "$text" >"$wrapper.tmp"
        chmod +x "$wrapper.tmp"
        mv -f "$wrapper.tmp" "$wrapper"
      fi
    done
    lower=${triple//-/_}
    upper=$(tr '[:lower:]' '[:upper:]' <<<"$lower")
    export "CC_$lower=$dir/$triple-cc" "CXX_$lower=$dir/$triple-c++" "AR_$lower=$dir/$triple-ar"
    export "CARGO_TARGET_${upper}_LINKER=$dir/$triple-cc"
    unset "CARGO_TARGET_${upper}_RUNNER"
  done
}
