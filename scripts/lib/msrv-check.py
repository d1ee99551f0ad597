#!/usr/bin/env python3
"""The published crates build with the Rust they declare (`rust-version`).

No older toolchain can be installed here, so the check is in two parts:
- clippy's `incompatible_msrv` on each published crate: no std API newer
  than the declared version;
- every crate a published crate builds with (Cargo.lock, normal and build
  dependencies) declares a `rust-version` no newer than the crate's own.
A dependency update that needs a newer Rust fails here until the declared
version moves with it (and CHANGELOG says so).
"""
import json
import subprocess
import sys

PUBLISHED = ["zoolock", "zk-harness", "zoolock-zookeeper-client"]


def version(text):
    return tuple(int(part) for part in text.split("."))[:2]


meta = json.loads(
    subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", "x86_64-unknown-linux-gnu"]
    )
)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
failures = []
for name in PUBLISHED:
    root = next(p for p in meta["packages"] if p["name"] == name and p["source"] is None)
    declared = root["rust_version"]
    if not declared:
        failures.append(f"{name} declares no rust-version")
        continue
    seen, stack = set(), [root["id"]]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for dep in nodes[node]["deps"]:
            if any(kind["kind"] in (None, "build") for kind in dep["dep_kinds"]):
                stack.append(dep["pkg"])
    for node in sorted(seen):
        dep = packages[node]
        needs = dep["rust_version"]
        if needs and version(needs) > version(declared):
            failures.append(f"{name} declares Rust {declared}, but {dep['name']} {dep['version']} needs {needs}")

# One clippy run for every published crate (each is held to its own
# rust-version): one feature resolution, so their dependencies are checked once.
packages_args = [arg for name in PUBLISHED for arg in ("-p", name)]
clippy = subprocess.run(
    ["cargo", "clippy", "--locked", "-q", *packages_args, "--no-deps", "--lib", "--",
     "-A", "clippy::all", "-D", "clippy::incompatible_msrv"],
    capture_output=True,
    text=True,
)
if clippy.returncode != 0:
    failures.append(f"{', '.join(PUBLISHED)}: std API newer than their rust-version:\n{clippy.stderr}")

for failure in failures:
    print(f"msrv-check: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
