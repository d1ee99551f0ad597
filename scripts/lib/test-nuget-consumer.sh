#!/usr/bin/env bash
# A fresh consumer of a ZooLock NuGet package, against a real ZooKeeper (the
# harness's zkh). Installs PACKAGE from a folder feed (nuget install), then:
# - its files and metadata: exactly the runtimes/RID/native folders given,
#   the nuspec's license, repository, readme and release notes, XML docs of
#   public members only;
# - in place: dotnet/consumer/Program.cs and the README's example, compiled
#   with mcs against the installed lib/net462/ZooLock.dll and run with no
#   environment variables (no LD_LIBRARY_PATH, no MONO_PATH): the program's
#   .config file points at the package's lib/net462 (<probing>), where
#   ZooLock finds its native library in the package's runtimes folder;
# - with MSBuild (xbuild, Mono's): a classic project that references the
#   package's dll and imports build/ZooLock.targets, as packages.config does;
#   the native library is copied next to the program;
# - without a loadable library: ZooLock.dll alone, then beside a library it
#   cannot load, throws ZooLockNativeLibraryException with what was tried.
# With --aarch64-root ROOT (scripts/lib/setup-aarch64-root.sh), the same
# program also runs in place under qemu-user with ROOT's arm64 Mono (the
# linux-arm64 library loads, a lock is contended and handed over), and
# without a loadable library.
#   scripts/lib/test-nuget-consumer.sh PACKAGE.nupkg RID... [--aarch64-root ROOT]
# Used by scripts/test-dotnet.sh (the package it just packed, linux-x64) and
# scripts/test-packages.sh (the one in dist/, every runtime it ships).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ] || [ ! -f "$1" ]; then
  echo "usage: $0 PACKAGE.nupkg RID... [--aarch64-root ROOT]" >&2
  exit 2
fi
package=$1; shift
rids=() aarch64_root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --aarch64-root) aarch64_root=$2; shift 2 ;;
    *) rids+=("$1"); shift ;;
  esac
done
scripts/lib/setup-dotnet.sh
scripts/lib/build-tools.sh
file=$(basename "$package" .nupkg)
version=${file#ZooLock.}
work=$(mktemp -d "${TMPDIR:-/tmp}/zoolock-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
feed="$work/feed"; consumer="$work/consumer"
mkdir -p "$feed" "$consumer"
cp "$package" "$feed/"
nuget install ZooLock -Version "$version" -Source "$feed" -OutputDirectory "$consumer/packages" -NonInteractive
installed="$consumer/packages/ZooLock.$version"
fail() { echo "test-nuget-consumer: $*" >&2; exit 1; }
# What a user's environment would not have: the program runs with these only.
user() { env -i HOME="$HOME" LANG=C.UTF-8 PATH=/usr/bin:/bin "$@"; }

echo "== the package's files and metadata"
for f in lib/net462/ZooLock.dll lib/net462/ZooLock.xml build/ZooLock.targets README.md; do
  [ -f "$installed/$f" ] || fail "the installed package lacks $f"
done
shipped=$(cd "$installed/runtimes" && ls -d */native | sed 's|/native$||' | sort | tr '\n' ' ')
want=$(printf '%s\n' "${rids[@]}" | sort | tr '\n' ' ')
[ "$shipped" = "$want" ] || fail "the package ships runtimes for '$shipped', expected '$want'"
for rid in "${rids[@]}"; do
  case "$rid" in win-*) library=zoolock_ffi.dll ;; *) library=libzoolock_ffi.so ;; esac
  [ -f "$installed/runtimes/$rid/native/$library" ] || fail "no runtimes/$rid/native/$library"
done
nuspec=$(unzip -p "$installed/ZooLock.$version.nupkg" ZooLock.nuspec)
for element in '<license type="expression">MIT</license>' '<repository type="git"' '<readme>README.md</readme>' '<releaseNotes>'; do
  grep -qF "$element" <<<"$nuspec" || fail "the nuspec lacks $element"
done
mcs @dotnet/mcs.rsp -target:exe -r:System.Xml.Linq.dll -r:System.Xml.dll -out:"$work/PublicDocs.exe" dotnet/tools/PublicDocs.cs
mono "$work/PublicDocs.exe" --check "$installed/lib/net462/ZooLock.dll" "$installed/lib/net462/ZooLock.xml"

coproc ZKH { exec target/debug/zkh; }
echo '{"cmd":"start"}' >&"${ZKH[1]}"
read -r started <&"${ZKH[0]}"
connect=$(sed -n 's/.*"connect":"\([^"]*\)".*/\1/p' <<<"$started")
[ -n "$connect" ] || fail "zkh did not start a server: $started"

echo "== in place: mcs against lib/net462, run with no environment variables"
cat >"$consumer/app.config" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <runtime>
    <assemblyBinding xmlns="urn:schemas-microsoft-com:asm.v1">
      <probing privatePath="packages/ZooLock.$version/lib/net462" />
    </assemblyBinding>
  </runtime>
</configuration>
EOF
mcs -langversion:7.2 -r:"$installed/lib/net462/ZooLock.dll" -out:"$consumer/Program.exe" dotnet/consumer/Program.cs
cp "$consumer/app.config" "$consumer/Program.exe.config"
(cd "$consumer" && user mono Program.exe "$connect")
# Ended with acquires waiting: zoolock's exit hook cancels them and returns
# once their tasks have ended, on its callback thread: a callback after the
# hook (on a thread Mono has not met) crashed Mono's exit, a pool thread
# started in it could delay the exit up to a minute. Eight times: the hook
# races the cancelled acquires' completions.
for run in 1 2 3 4 5 6 7 8; do
  status=0
  ended=$(cd "$consumer" && user timeout -s KILL 30 mono Program.exe --pending-at-exit "$connect") || status=$?
  echo "$ended"
  [ "$status" = 0 ] || fail "--pending-at-exit run $run did not exit within 30 s (status $status)"
  grep -qx "consumer: at exit the connect is Canceled, 16 acquires cancelled, 0 on the thread pool" <<<"$ended" ||
    fail "--pending-at-exit run $run: not every call ended by the exit hook, off the thread pool"
done
sed -n '/^```csharp$/,/^```$/p' "$installed/README.md" | sed '1d;$d' >"$consumer/Example.cs"
[ -s "$consumer/Example.cs" ] || fail "the package's README.md has no csharp example"
mcs -langversion:7.2 -r:"$installed/lib/net462/ZooLock.dll" -out:"$consumer/Example.exe" "$consumer/Example.cs"
cp "$consumer/app.config" "$consumer/Example.exe.config"
(cd "$consumer" && user mono Example.exe "$connect")
[ ! -e "$consumer/libzoolock_ffi.so" ] && [ ! -e "$consumer/ZooLock.dll" ] || fail "a library was copied next to the program"

echo "== MSBuild (xbuild): a packages.config-style project imports build/ZooLock.targets"
msbuild_dir="$work/msbuild"
mkdir -p "$msbuild_dir"
cp dotnet/consumer/Program.cs "$msbuild_dir/"
cat >"$msbuild_dir/Consumer.csproj" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<Project ToolsVersion="4.0" DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <AssemblyName>Consumer</AssemblyName>
    <TargetFrameworkVersion>v4.6.2</TargetFrameworkVersion>
    <OutputPath>bin</OutputPath>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="System" />
    <Reference Include="ZooLock"><HintPath>$installed/lib/net462/ZooLock.dll</HintPath></Reference>
    <Compile Include="Program.cs" />
  </ItemGroup>
  <Import Project="\$(MSBuildToolsPath)/Microsoft.CSharp.targets" />
  <Import Project="$installed/build/ZooLock.targets" />
</Project>
EOF
(cd "$msbuild_dir" && xbuild /nologo /verbosity:quiet Consumer.csproj) >"$work/xbuild.log" 2>&1 || { cat "$work/xbuild.log" >&2; fail "xbuild failed"; }
if grep -q "has no native library" "$work/xbuild.log"; then cat "$work/xbuild.log" >&2; fail "ZooLock.targets found no library for this machine"; fi
[ -f "$msbuild_dir/bin/libzoolock_ffi.so" ] || fail "build/ZooLock.targets did not copy libzoolock_ffi.so next to the program"
(cd "$msbuild_dir/bin" && user mono Consumer.exe --contend "$connect")

if [ -n "$aarch64_root" ]; then
  echo "== in place, under qemu-user: arm64 Mono loads runtimes/linux-arm64"
  (cd "$consumer" && user qemu-aarch64 -L "$aarch64_root" "$aarch64_root/usr/bin/mono-sgen" Program.exe --contend "$connect")
fi

echo '{"cmd":"shutdown"}' >&"${ZKH[1]}"
wait "$ZKH_PID" 2>/dev/null || true

echo "== without a loadable native library: ZooLockNativeLibraryException"
case "$(uname -m)" in x86_64) rid=linux-x64 ;; aarch64) rid=linux-arm64 ;; *) rid=unknown ;; esac
# expect DIR RID MONO... -- PART...: Program.exe in DIR throws ZooLockNativeLibraryException for RID, whose message holds each PART.
expect() {
  local dir=$1 rid=$2; shift 2
  local mono=()
  while [ "$1" != -- ]; do mono+=("$1"); shift; done
  shift
  local out
  out=$(cd "$dir" && user "${mono[@]}" Program.exe --no-native "$rid" 2>&1) || { echo "$out" >&2; fail "$dir: not ZooLockNativeLibraryException"; }
  for part in "$@"; do
    grep -qF -- "$part" <<<"$out" || { echo "$out" >&2; fail "$dir: the message lacks '$part'"; }
  done
  echo "$out"
}
alone="$work/alone"
mkdir -p "$alone"
cp "$installed/lib/net462/ZooLock.dll" "$consumer/Program.exe" "$alone/"
expect "$alone" "$rid" mono -- "libzoolock_ffi.so" "runtime $rid" "Tried: $alone/libzoolock_ffi.so: not there" "copy runtimes/$rid/native/libzoolock_ffi.so"
broken="$work/broken"
mkdir -p "$broken"
cp "$installed/lib/net462/ZooLock.dll" "$consumer/Program.exe" "$broken/"
# Longer than an ELF header, so that the loader reads it and says what is wrong.
head -c 4096 /dev/zero | tr '\0' 'x' >"$broken/libzoolock_ffi.so"
expect "$broken" "$rid" mono -- "$broken/libzoolock_ffi.so: " "cannot be loaded" "invalid ELF header"
if [ -n "$aarch64_root" ]; then
  # The x86-64 library where arm64 Mono looks first: loaded by no one, and said why.
  cp "$installed/runtimes/linux-x64/native/libzoolock_ffi.so" "$broken/libzoolock_ffi.so"
  expect "$broken" linux-arm64 qemu-aarch64 -L "$aarch64_root" "$aarch64_root/usr/bin/mono-sgen" -- \
    "runtime linux-arm64" "$broken/libzoolock_ffi.so: built for x86-64, not for this arm64 process" "cannot be loaded"
fi
echo "package $package installs and runs"
