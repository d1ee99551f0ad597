#!/usr/bin/env bash
# Installs what zoolock's tests and demo need on a fresh Debian machine:
# Debian's ZooKeeper server (and the Java it depends on), and Curator with a
# Java compiler for the demo's Curator worker. Each step says what it
# installs; nothing else is fetched.
set -euo pipefail

need_apt=()
[ -f /usr/share/java/zookeeper.jar ] || need_apt+=(zookeeper)
command -v java >/dev/null 2>&1 || need_apt+=(default-jre-headless)
command -v javac >/dev/null 2>&1 || need_apt+=(default-jdk-headless)
[ -f /usr/share/java/curator-recipes.jar ] || need_apt+=(libcurator-recipes-java)
# Partitions made in the kernel, in the tests' own network namespaces (zk_harness::net).
command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || need_apt+=(nftables)
# The man page is checked with groff -ww (cli/tests/conventions.rs).
command -v groff >/dev/null 2>&1 || need_apt+=(groff-base)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "zoolock needs these Debian packages: ${need_apt[*]}" >&2
    echo "install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
