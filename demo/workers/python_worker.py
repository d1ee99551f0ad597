#!/usr/bin/env python3
"""One worker of zoolock's main job, in Python.

The same program runs on zoolock or on kazoo: the import is the only
difference (`--client zoolock|kazoo`). It speaks the demo's worker protocol
(see demo/src/worker.rs): acquire, write once to the resource with a fencing
token while holding, release; print `session <id>` and
`told <name> <state> <ns>` lines (the session's state, or on zoolock a
hold's loss by its reason, e.g. NodeDeleted) and `connected <name> <ns>`
lines (connected again); without --count, run until `stop` on stdin,
print `idle`, and keep the session open until stdin ends.
"""

import argparse
import logging
import socket
import sys
import threading
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", choices=["zoolock", "kazoo"], default="zoolock")
    p.add_argument("--connect", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--resource", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--count", type=int)
    p.add_argument("--session-timeout", type=float, default=10.0)
    p.add_argument("--hold-ms", type=int, default=0)
    p.add_argument("--tls-ca")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--scheme", choices=["kazoo", "curator"], default="kazoo",
                   help="how zoolock names its nodes (curator: to share the path with Curator)")
    return p.parse_args()


def main():
    args = parse()
    # kazoo's and zoolock's log lines (lost connections, state changes) to
    # stderr, which the demo's driver copies into the run's log file.
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.client == "kazoo":
        from kazoo.client import KazooClient, KazooState
        from kazoo.exceptions import KazooException, LockTimeout
    else:
        from zoolock import KazooClient, KazooState
        from zoolock import KazooException, LockTimeout
    language = "kazoo" if args.client == "kazoo" else "python"

    printing = threading.Lock()

    def say(line):
        with printing:
            print(line, flush=True)

    # kazoo's TLS arguments, which zoolock's KazooClient takes as they are.
    tls = {}
    if args.tls_ca:
        tls = dict(use_ssl=True, ca=args.tls_ca, certfile=args.tls_cert,
                   keyfile=args.tls_key, check_hostname=True)
    zk = KazooClient(hosts=args.connect, timeout=args.session_timeout, **tls)
    told = threading.Event()  # set while the session is suspended or lost

    def on_state(state):
        if state == KazooState.CONNECTED:
            told.clear()
            say(f"connected {args.name} {time.time_ns()}")
            client_id = zk.client_id
            if client_id:
                say(f"session {client_id[0]}")
        else:
            told.set()
            say(f"told {args.name} {state} {time.time_ns()}")

    zk.add_listener(on_state)
    zk.start()
    say(f"session {zk.client_id[0]}")
    # kazoo has one naming; zoolock can also name its nodes Curator's way.
    lock = zk.Lock(args.path, args.name, scheme=args.scheme) if args.scheme == "curator" else zk.Lock(args.path, args.name)
    if hasattr(lock, "lost_reason"):  # zoolock; kazoo does not notice a lost hold
        def on_lock_state(state):
            # A hold's end other than our release, by its reason in the core's
            # words: NodeDeleted when someone deleted our node.
            if state == "LOST":
                reason = "".join(w.capitalize() for w in (lock.lost_reason or "LOST").split("_"))
                say(f"told {args.name} {reason} {time.time_ns()}")
        lock.add_listener(on_lock_state)
    host, port = args.resource.rsplit(":", 1)
    resource = socket.create_connection((host, int(port)))
    replies = resource.makefile("r")

    stop = threading.Event()
    if args.count is None:
        def watch_stdin():
            for line in sys.stdin:
                if line.strip() == "stop":
                    break
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    done = 0
    while not stop.is_set() and (args.count is None or done < args.count):
        asked = time.monotonic()
        try:
            lock.acquire(timeout=5)
        except LockTimeout:
            continue
        except KazooException as e:
            print(f"worker {args.name}: acquire: {e!r}", file=sys.stderr)
            continue
        start, wait_us = time.time_ns(), int((time.monotonic() - asked) * 1e6)
        try:
            token = None if told.is_set() else fencing_token(zk, lock, args)
            if token is None:
                print(f"worker {args.name}: acquired, but the lock is already gone: not writing", file=sys.stderr)
            else:
                resource.sendall(f"write {args.name} {language} {token} {wait_us} {start}\n".encode())
                replies.readline()
                done += 1
                time.sleep(args.hold_ms / 1000)  # the critical section's work
        except KazooException as e:  # kazoo's token lookup can meet a lost connection
            print(f"worker {args.name}: critical section: {e!r}", file=sys.stderr)
        finally:
            try:
                lock.release()
            except KazooException as e:
                print(f"worker {args.name}: release: {e!r}", file=sys.stderr)
    if hasattr(zk, "metrics"):  # zoolock: its session's counters for the summary, before idle
        say("metrics " + " ".join(f"{name}={value!r}" for name, value in zk.metrics().items()))
    if args.count is None:
        say("idle")
        for _ in sys.stdin:  # keep the session open until the driver has looked
            pass
    zk.stop()
    zk.close()


def fencing_token(zk, lock, args):
    """zoolock hands the token out (None once the hold is lost); for kazoo it
    is the czxid of its node, one more round trip — and None when the node
    is gone: the session can expire between acquire and this lookup, and
    kazoo does not notice a lost lock by itself."""
    if hasattr(lock, "fencing_token"):
        return lock.fencing_token
    stat = zk.exists(f"{args.path}/{lock.node}")
    return stat.czxid if stat else None


if __name__ == "__main__":
    main()
