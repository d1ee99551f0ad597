#!/usr/bin/env python3
"""`cargo test --workspace`, with its test binaries run side by side.

cargo runs one test binary at a time; most of ours spend their time waiting
on ZooKeeper (session expiries, partitions, timeouts), so on two cores two
at once take well under the time. Each binary runs as cargo would run it (in
its package's directory, with CARGO_MANIFEST_DIR set); its output is printed
whole when it ends, and the run fails if any binary fails. Doctests follow,
through cargo. Arguments after the script's name go to every binary
(e.g. `--skip name`). JOBS sets how many binaries run at once (default 2:
at 3, tests that race the server on timing failed now and then on 2 cores).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

build = subprocess.run(
    ["cargo", "test", "--workspace", "--locked", "--no-run", "--message-format=json-render-diagnostics"],
    stdout=subprocess.PIPE, text=True)
if build.returncode != 0:
    sys.exit(build.returncode)
binaries = []
for line in build.stdout.splitlines():
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["profile"]["test"] and message.get("executable"):
        binaries.append((message["executable"], os.path.dirname(message["manifest_path"]), message["target"]["name"]))


# What cargo's rustup proxy gives the processes cargo starts: the toolchain
# it resolved. Without it a test that runs cargo itself (ffi's c_abi) had
# its rustc proxy resolve the toolchain anew, which in a scrubbed
# environment began an update of the machine's toolchain mid-run. And
# never fetch a toolchain from a test.
base_env = dict(os.environ)
base_env.setdefault("RUSTUP_AUTO_INSTALL", "0")
if "RUSTUP_TOOLCHAIN" not in base_env and shutil.which("rustup"):
    active = subprocess.run(["rustup", "show", "active-toolchain"], env=base_env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.split()
    if active:
        base_env["RUSTUP_TOOLCHAIN"] = active[0]


def run(binary):
    executable, package, name = binary
    started = time.monotonic()
    env = dict(base_env, CARGO_MANIFEST_DIR=package)
    done = subprocess.run([executable, *sys.argv[1:]], cwd=package, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return binary, done.returncode, done.stdout, time.monotonic() - started


# The longest (a minute or more) first, so that none of them starts last.
LONGEST = ["faults", "recipe", "invariant", "main_job", "cancellation", "c_abi", "bad_input"]
binaries.sort(key=lambda b: LONGEST.index(b[2]) if b[2] in LONGEST else len(LONGEST))
failed = []
with ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as pool:
    for (executable, package, name), code, output, took in pool.map(run, binaries):
        where = os.path.relpath(executable)
        print(f"     Running {os.path.relpath(package)}: {name} ({where}), {took:.1f} s", flush=True)
        print(output, end="", flush=True)
        if code != 0:
            failed.append(f"{os.path.relpath(package)}: {name} (exit {code})")
if failed:
    print("cargo-test: failed: " + ", ".join(failed), file=sys.stderr)
    sys.exit(1)
sys.exit(subprocess.run(["cargo", "test", "--workspace", "--locked", "--doc"]).returncode)
