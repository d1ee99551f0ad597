#!/usr/bin/env bash
# Generates the C header and the C# files of zoolock's C ABI from ffi/ and the
# core's codes (codegen/src/main.rs says what and from where):
#   scripts/codegen.sh           writes ffi/include/zoolock.h, dotnet/src/NativeMethods.g.cs,
#                                dotnet/src/Codes.g.cs and dotnet/src/Acquire.g.cs, and the recipe
#                                lists of five hand-written files: commit them with the change
#   scripts/codegen.sh --check   generates into a temporary folder and fails if a
#                                committed file differs (the test command runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
files=(ffi/include/zoolock.h dotnet/src/NativeMethods.g.cs dotnet/src/Codes.g.cs dotnet/src/Acquire.g.cs
  core/src/recipe/mod.rs ffi/src/recipe.rs python/src/recipe.rs python/python/zoolock/_zoolock.pyi python/python/zoolock/__init__.py)
case "${1:-}" in
  "")
    scripts/lib/build-tools.sh
    target/debug/zoolock-codegen
    ;;
  --check)
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    scripts/lib/build-tools.sh
    target/debug/zoolock-codegen "$out"
    stale=()
    for file in "${files[@]}"; do
      diff -u "$file" "$out/$file" >&2 || stale+=("$file")
    done
    if [ ${#stale[@]} -ne 0 ]; then
      echo "generated files out of date: ${stale[*]}; run scripts/codegen.sh and commit the result" >&2
      exit 1
    fi
    echo "codegen: ${#files[@]} generated files up to date"
    ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac
