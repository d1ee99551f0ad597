#!/usr/bin/env python3
"""The bench's Python contestant: zoolock's module or kazoo itself.

One program, one import apart (`--client zoolock|kazoo`), speaking the
protocol of bench/contestants/PROTOCOL.md:

    python_contestant.py --client zoolock|kazoo --connect HOSTS
        --path /bench/<run>/<scenario> --scenario a|b|c|scale
        [--sessions N] [--locks N] [--waiters N] [--seconds S]
        [--warmup S] [--c-mode threads|asyncio]

It connects, warms up, prints `ready`, waits for `go` on stdin, runs for S
seconds and prints one JSON line. Both clients run the very same loops
(bound methods in locals, one perf_counter_ns and one list append per op),
so the difference between them is the library's.

- a: one client, one lock, acquire → release in a loop; samples = cycle times.
- b: --sessions N clients, one thread each, on one lock; samples = waits
  (acquire call to holding).
- c: one client, --locks N locks `<path>/lock-<i>`; samples = cycle times.
  kazoo: one thread per lock. zoolock: asyncio tasks (`acquire_async` /
  `release_async`) by default, the cheaper of its two natural ways: on one
  local server (2 cores, busy), 64 asyncio tasks took 67-82 µs of client CPU
  and 1.7-1.8 context switches per cycle against 93-130 µs and 5.6-6.6 for
  64 threads blocking in `acquire` (a park and a GIL hand-off per request),
  in interleaved runs (perf stat over the window, 2026-11). `--c-mode
  threads` runs kazoo's way for comparison.
- scale (zoolock only): one client holds the lock while --waiters N asyncio
  tasks queue behind it; on `go` the holder releases and every waiter takes
  and releases the lock in turn. Checks that fencing tokens strictly increase
  in the order served and that each waiter is served exactly once. kazoo
  prints {"unsupported": ...}: a thread per waiter, 10,000 of them, is not a
  way anyone would use it.

Logs and errors go to stderr; any failure exits non-zero.
"""

import argparse
import asyncio
import gc
import json
import os
import sys
import threading
import time
import traceback

now = time.perf_counter_ns

SESSION_TIMEOUT = 10.0
# No acquire in a window should ever take this long: a stuck run fails.
STUCK_AFTER = 60.0


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", choices=["zoolock", "kazoo"], default="zoolock")
    p.add_argument("--connect", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--scenario", choices=["a", "b", "c", "scale"], required=True)
    p.add_argument("--sessions", type=int, default=1)
    p.add_argument("--locks", type=int, default=64)
    p.add_argument("--waiters", type=int, default=10000)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=0.5,
                   help="seconds of cycles before `ready` (at least one cycle per lock/session)")
    p.add_argument("--c-mode", choices=["threads", "asyncio"],
                   help="scenario c with zoolock: one thread per lock, or asyncio tasks (the default)")
    args = p.parse_args()
    if args.sessions < 1 or args.locks < 1 or args.waiters < 1 or args.seconds <= 0:
        p.error("--sessions, --locks, --waiters and --seconds must be positive")
    if args.c_mode == "asyncio" and args.client == "kazoo":
        p.error("kazoo has no asyncio locks")
    return args


def log(message):
    print(f"python contestant: {message}", file=sys.stderr, flush=True)


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def wait_go():
    """Blocks until the line `go` arrives on stdin; end of input is a failure."""
    while True:
        line = sys.stdin.readline()
        if not line:
            raise RuntimeError("stdin ended before `go`")
        if line.strip() == "go":
            return


def connect(client, hosts):
    if client == "kazoo":
        from kazoo.client import KazooClient
    else:
        from zoolock import KazooClient
    zk = KazooClient(hosts=hosts, timeout=SESSION_TIMEOUT)
    zk.start()
    return zk


def close(clients):
    for zk in clients:
        zk.stop()
        zk.close()


def cpu_seconds():
    times = os.times()
    return times.user + times.system


def report(samples_ns, elapsed_ns, cpu_in_window):
    # Converted once, after the window: the loops keep raw nanoseconds.
    if samples_ns:
        log(f"client CPU in the window: {cpu_in_window / len(samples_ns) * 1e6:.0f} µs/op")
    return {"ops": len(samples_ns), "seconds": elapsed_ns / 1e9,
            "samples_us": [s // 1000 for s in samples_ns]}


# --- the loops: identical for both clients ---------------------------------

def cycles(lock, end, samples):
    """acquire → release until `end`; appends each cycle's time. Returns the
    time the last cycle ended."""
    acquire, release, append = lock.acquire, lock.release, samples.append
    t = now()
    while t < end:
        acquire()
        release()
        t2 = now()
        append(t2 - t)
        t = t2
    return t


def waits(lock, end, samples):
    """acquire → release until `end`; appends each acquisition's wait."""
    acquire, release, append = lock.acquire, lock.release, samples.append
    while True:
        t = now()
        if t >= end:
            return t
        acquire()
        append(now() - t)
        release()


async def cycles_async(lock, end, samples):
    acquire, release, append = lock.acquire_async, lock.release_async, samples.append
    t = now()
    while t < end:
        await acquire()
        await release()
        t2 = now()
        append(t2 - t)
        t = t2
    return t


def warm_up(lock, loop, seconds):
    lock.acquire()
    lock.release()
    loop(lock, now() + int(seconds * 1e9), [])


# --- scenarios ---------------------------------------------------------------

def scenario_a(args):
    zk = connect(args.client, args.connect)
    lock = zk.Lock(args.path)
    warm_up(lock, cycles, args.warmup)
    say("ready")
    wait_go()
    samples = []
    cpu, start = cpu_seconds(), now()
    last = cycles(lock, start + int(args.seconds * 1e9), samples)
    cpu = cpu_seconds() - cpu
    close([zk])
    return report(samples, last - start, cpu)


def run_threads(locks, loop, args):
    """One thread per lock: warm up, `ready`, `go`, the window. Returns the
    report; raises if a thread failed or got stuck."""
    n = len(locks)
    warmed = threading.Barrier(n + 1)
    go = threading.Event()
    window = [0]
    results = [None] * n
    errors = []

    def worker(i):
        lock = locks[i]
        try:
            warm_up(lock, loop, args.warmup)
            warmed.wait()
            go.wait()
            samples = []
            results[i] = (samples, loop(lock, window[0], samples))
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(f"thread {i}: {e!r}\n{traceback.format_exc()}")
            warmed.abort()

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
    for thread in threads:
        thread.start()
    try:
        warmed.wait(timeout=STUCK_AFTER + args.warmup)
    except threading.BrokenBarrierError:
        raise RuntimeError("warm-up failed: " + "; ".join(errors or ["stuck"]))
    say("ready")
    wait_go()
    cpu, start = cpu_seconds(), now()
    window[0] = start + int(args.seconds * 1e9)
    go.set()
    deadline = time.monotonic() + args.seconds + STUCK_AFTER
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    cpu = cpu_seconds() - cpu
    if errors:
        raise RuntimeError("; ".join(errors))
    if any(thread.is_alive() for thread in threads):
        raise RuntimeError(f"a thread is stuck {STUCK_AFTER:g} s after the window")
    if n > 1:
        per_thread = sorted(len(thread_samples) for thread_samples, _ in results)
        log(f"ops per thread: min {per_thread[0]}, median {per_thread[n // 2]}, max {per_thread[-1]}")
    samples = [s for thread_samples, _ in results for s in thread_samples]
    return report(samples, max(last for _, last in results) - start, cpu)


def scenario_b(args):
    clients = [connect(args.client, args.connect) for _ in range(args.sessions)]
    try:
        result = run_threads([zk.Lock(args.path) for zk in clients], waits, args)
    finally:
        close(clients)
    return result


def scenario_c(args):
    zk = connect(args.client, args.connect)
    locks = [zk.Lock(f"{args.path}/lock-{i}") for i in range(args.locks)]
    mode = args.c_mode or ("asyncio" if args.client == "zoolock" else "threads")
    try:
        if mode == "threads":
            return run_threads(locks, cycles, args)
        return asyncio.run(scenario_c_asyncio(locks, args))
    finally:
        close([zk])


async def scenario_c_asyncio(locks, args):
    async def warm(lock):
        await lock.acquire_async()
        await lock.release_async()
        await cycles_async(lock, warm_end, [])

    warm_end = now() + int(args.warmup * 1e9)
    await asyncio.gather(*(warm(lock) for lock in locks))
    say("ready")
    await asyncio.get_running_loop().run_in_executor(None, wait_go)
    cpu, start = cpu_seconds(), now()
    end = start + int(args.seconds * 1e9)
    per_lock = [[] for _ in locks]
    lasts = await asyncio.wait_for(
        asyncio.gather(*(cycles_async(lock, end, samples) for lock, samples in zip(locks, per_lock))),
        args.seconds + STUCK_AFTER)
    cpu = cpu_seconds() - cpu
    return report([s for samples in per_lock for s in samples], max(lasts) - start, cpu)


def rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def scenario_scale(args):
    zk = connect(args.client, args.connect)
    try:
        return asyncio.run(scenario_scale_asyncio(zk, args))
    finally:
        close([zk])


async def scenario_scale_asyncio(zk, args):
    n = args.waiters
    holder = zk.Lock(args.path, "holder")
    warm_up(holder, cycles, min(args.warmup, 0.2))
    await holder.acquire_async()
    gc.collect()
    rss_before = rss_bytes()

    served = []     # (waiter, fencing token), in the order served
    ended = [0]     # when the last waiter released

    async def waiter(i, lock, acquired):
        await acquired
        served.append((i, lock.fencing_token))
        await lock.release_async()
        ended[0] = now()

    # Each acquire starts (its node is created) when acquire_async is called:
    # call them in order here, not from inside the tasks.
    tasks = []
    for i in range(n):
        lock = zk.Lock(args.path, str(i))
        tasks.append(asyncio.ensure_future(waiter(i, lock, lock.acquire_async())))

    # No event says "all N nodes exist": poll the queue, bounded.
    queued_by = time.monotonic() + STUCK_AFTER + n / 1000
    # zoolock's Python API has no child watch: poll the queue (bounded).
    polls = 0
    while True:
        polls += 1
        queue = holder.contenders()
        if len(queue) >= n + 1:
            break
        if time.monotonic() > queued_by or any(task.done() for task in tasks):
            raise RuntimeError(f"only {len(queue) - 1} of {n} waiters queued")
        await asyncio.sleep(0.05)
    if queue[0] != "holder":
        raise RuntimeError(f"the holder is not first in the queue: {queue[0]!r}")
    if queue[1:] != [str(i) for i in range(n)]:
        # zoolock starts each acquire on its runtime's threads: calls made in
        # order need not create their nodes in that order. Served order is
        # judged by fencing tokens below, as the protocol says.
        log("note: the waiters' nodes are not in the order their acquire_async calls were made")
    del queue
    gc.collect()
    rss_queued = rss_bytes()
    log(f"{n} waiters queued ({polls} polls of the queue); RSS {rss_before >> 20} → {rss_queued >> 20} MiB")

    say("ready")
    await asyncio.get_running_loop().run_in_executor(None, wait_go)
    start = now()
    await holder.release_async()
    done, pending = await asyncio.wait(tasks, timeout=STUCK_AFTER + n / 100)
    for task in pending:
        task.cancel()
    failed = [task.exception() for task in done if task.exception() is not None]
    if failed:
        raise RuntimeError(f"{len(failed)} waiters failed, the first: {failed[0]!r}")
    if pending:
        raise RuntimeError(f"{len(pending)} waiters not served after {STUCK_AFTER + n / 100:g} s")

    tokens = [token for _, token in served]
    increasing = all(token is not None for token in tokens) and all(
        a < b for a, b in zip(tokens, tokens[1:]))
    once = len(served) == n and sorted(i for i, _ in served) == list(range(n))
    if not increasing:
        log("fencing tokens did not strictly increase in the order served")
    if not once:
        log("some waiter was not served exactly once")
    return {"waiters": n, "bytes_per_waiter": (rss_queued - rss_before) / n, "served": len(served),
            "in_order": increasing and once, "seconds": (ended[0] - start) / 1e9}


def main():
    args = parse()
    if args.scenario == "scale" and args.client == "kazoo":
        say(json.dumps({"unsupported": "kazoo has no asyncio locks: 10,000 waiters would be 10,000 threads"}))
        return 0
    run = {"a": scenario_a, "b": scenario_b, "c": scenario_c, "scale": scenario_scale}[args.scenario]
    try:
        result = run(args)
    except BaseException as e:  # noqa: BLE001
        log(f"{args.client} scenario {args.scenario}: {e!r}")
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)  # threads may be stuck in the library: do not wait for them
    say(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
