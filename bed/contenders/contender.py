"""One contender of the ensemble bed (bed/src/main.rs), in Python, on
zoolock's KazooClient. The Rust contender's protocol (bed/src/contend.rs):

    python contender.py CONNECT PATHS RESOURCE TIMEOUT_MS SEED NAME

Acquires a random one of PATHS again and again; while its reads say HELD,
writes to the resource with its fencing token every few milliseconds, for a
random while; then releases. Says what it does on stdout; ends when stdin
closes.
"""

import os
import random
import socket
import sys
import threading
import time

import zoolock
from zoolock import KazooException, LockTimeout


def say(line):
    print(line, flush=True)


def main():
    connect, paths, resource, timeout_ms, seed, name = sys.argv[1:7]
    rng = random.Random(int(seed))
    zk = zoolock.KazooClient(hosts=connect, timeout=int(timeout_ms) / 1000)
    zk.start(timeout=60)
    mirror = os.environ.get("ZOOLOCK_BED_MIRROR") != "no"
    locks = [zk.Lock(path, mirror=mirror) for path in paths.split(",")]
    host, port = resource.rsplit(":", 1)
    store = socket.create_connection((host, int(port)))
    store.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    replies = store.makefile("r")
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    say("ready")
    now = time.monotonic_ns
    while not stop.is_set():
        lock = rng.choice(locks)
        path = lock.path
        try:
            got = lock.acquire(timeout=rng.uniform(0.5, 3.0))
        except LockTimeout:
            got = False
        except KazooException as e:
            say(f"error {type(e).__name__}")
            time.sleep(0.05)
            continue
        if not got:
            say(f"timeout {path} {now()}")
            continue
        start = now()
        token = lock.fencing_token
        hold_for = rng.randint(20, 1520) * 1_000_000
        state, read_at = lock.state, now()
        if state != "HELD":
            say(f"end {path} {token} {start} {read_at} {state}")
            release(lock)
            continue
        say(f"begin {path} {token} {start}")
        last = read_at
        while True:
            before = now()
            state = lock.state
            if state != "HELD":
                ended = f"{before} {state}"
                break
            last = now()
            store.sendall(f"w {name} {path} {token}\n".encode())
            replies.readline()
            if now() - start > hold_for or stop.is_set():
                ended = f"{now()} released"
                break
            time.sleep(0.003)
        release(lock)
        say(f"end {path} {token} {last} {ended}")
    zk.stop()
    zk.close()
    say("closed")


def release(lock):
    try:
        lock.release()
    except KazooException:
        pass


if __name__ == "__main__":
    main()
