#!/usr/bin/env bash
# Installs what the .NET binding's build and tests need on a fresh Debian
# machine: Mono (mcs, the C# 7.2 compiler, and the runtime), NUnit 2.6's
# console runner and NuGet 2.8, all Debian packages. Nothing else is fetched.
set -euo pipefail

need_apt=()
{ command -v mcs && command -v mono; } >/dev/null 2>&1 || need_apt+=(mono-complete)
[ -f /usr/lib/mono/4.5/System.Web.Extensions.dll ] || need_apt+=(mono-complete)
command -v nunit-console >/dev/null 2>&1 || need_apt+=(nunit-console)
[ -f /usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll ] || need_apt+=(libnunit-framework2.6.3-cil)
command -v nuget >/dev/null 2>&1 || need_apt+=(nuget)

if [ ${#need_apt[@]} -gt 0 ]; then
  mapfile -t need_apt < <(printf '%s\n' "${need_apt[@]}" | sort -u)
  if [ "$(id -u)" -ne 0 ]; then
    echo "zoolock's .NET binding needs these Debian packages: ${need_apt[*]}" >&2
    echo "install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup-dotnet: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
