"""zoolock-Python against kazoo and the Rust core, on one local server, in
one run: prints a table of rates and ratios (not a timed test).

    .venv/bin/python tests/python/bench.py [--seconds 2] [--rounds 3] [--force-sync]

Starts its own server through zkh (forceSync=no unless --force-sync) and
connects straight to it. Contestants run one after another in interleaved
rounds; each figure is the median of its rounds.
"""

import argparse
import asyncio
import multiprocessing
import resource
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from zkh import ROOT, Harness  # noqa: E402

LOCKS = 64
PROCESSES = 4


def zoolock_client(connect):
    import zoolock

    client = zoolock.KazooClient(hosts=connect)
    client.start()
    return client


def kazoo_client(connect):
    from kazoo.client import KazooClient

    client = KazooClient(hosts=connect)
    client.start()
    return client


def make_client(kind, connect):
    return zoolock_client(connect) if kind == "zoolock" else kazoo_client(connect)


def cycle(lock, until):
    done = 0
    while time.monotonic() < until:
        lock.acquire()
        lock.release()
        done += 1
    return done


def uncontended(kind, connect, seconds):
    client = make_client(kind, connect)
    lock = client.Lock(f"/bench/{kind}-{uuid.uuid4().hex[:8]}")
    cycle(lock, time.monotonic() + 0.2)  # warm up: the path, the server's JIT
    started = time.monotonic()
    done = cycle(lock, started + seconds)
    rate = done / (time.monotonic() - started)
    client.stop()
    return rate


def many_threads(kind, connect, seconds):
    client = make_client(kind, connect)
    base = f"/bench/{kind}-many-{uuid.uuid4().hex[:8]}"
    locks = [client.Lock(f"{base}/{i}") for i in range(LOCKS)]
    for lock in locks:
        cycle(lock, time.monotonic() + 0.01)
    counts = [0] * LOCKS
    start = threading.Barrier(LOCKS + 1)
    until = []

    def run(i):
        start.wait()
        counts[i] = cycle(locks[i], until[0])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(LOCKS)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    until.append(started + seconds)
    start.wait()
    for thread in threads:
        thread.join()
    rate = sum(counts) / (time.monotonic() - started)
    client.stop()
    return rate


def many_asyncio(connect, seconds):
    client = zoolock_client(connect)
    base = f"/bench/asyncio-many-{uuid.uuid4().hex[:8]}"
    locks = [client.Lock(f"{base}/{i}") for i in range(LOCKS)]

    async def run(lock, until):
        done = 0
        while time.monotonic() < until:
            await lock.acquire_async()
            await lock.release_async()
            done += 1
        return done

    async def main():
        await asyncio.gather(*(run(lock, time.monotonic() + 0.05) for lock in locks))
        started = time.monotonic()
        counts = await asyncio.gather(*(run(lock, started + seconds) for lock in locks))
        return sum(counts) / (time.monotonic() - started)

    rate = asyncio.run(main())
    client.stop()
    return rate


def contend_worker(kind, connect, path, ready, go, seconds, results):
    client = make_client(kind, connect)
    lock = client.Lock(path)
    ready.release()
    go.wait()
    results.put(cycle(lock, time.monotonic() + seconds))
    client.stop()


def processes(kind, connect, seconds, context):
    path = f"/bench/{kind}-contended-{uuid.uuid4().hex[:8]}"
    ready, go, results = context.Semaphore(0), context.Event(), context.Queue()
    workers = [
        context.Process(target=contend_worker, args=(kind, connect, path, ready, go, seconds, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        ready.acquire()
    started = time.monotonic()
    go.set()
    total = sum(results.get() for _ in workers)
    rate = total / (time.monotonic() - started)
    for worker in workers:
        worker.join()
    return rate


def rust_core(binary, connect, mode, seconds):
    args = [str(binary), connect, "uncontended", str(seconds)] if mode == "uncontended" else [
        str(binary), connect, "many", str(LOCKS), str(seconds)]
    return float(subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip())


def client_cpu():
    """Seconds of CPU used by this process and its finished children."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def build_rust_contestant():
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "zoolock-python", "--example", "core_cycles"],
        cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "examples" / "core_cycles"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one round of one contestant")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--force-sync", action="store_true", help="fsync every write, as production servers do")
    args = parser.parse_args()
    binary = build_rust_contestant()
    context = multiprocessing.get_context("spawn")
    contestants = {
        "uncontended: Rust core": lambda c: rust_core(binary, c, "uncontended", args.seconds),
        "uncontended: zoolock-Python": lambda c: uncontended("zoolock", c, args.seconds),
        "uncontended: kazoo": lambda c: uncontended("kazoo", c, args.seconds),
        f"{PROCESSES} processes, one lock: zoolock-Python": lambda c: processes("zoolock", c, args.seconds, context),
        f"{PROCESSES} processes, one lock: kazoo": lambda c: processes("kazoo", c, args.seconds, context),
        f"{LOCKS} locks: Rust core": lambda c: rust_core(binary, c, "many", args.seconds),
        f"{LOCKS} locks: zoolock-Python threads": lambda c: many_threads("zoolock", c, args.seconds),
        f"{LOCKS} locks: zoolock-Python asyncio": lambda c: many_asyncio(c, args.seconds),
        f"{LOCKS} locks: kazoo threads": lambda c: many_threads("kazoo", c, args.seconds),
    }
    rates = {name: [] for name in contestants}
    cpu = {name: [] for name in contestants}
    with Harness(servers=1, force_sync=args.force_sync) as harness:
        for round_ in range(args.rounds):
            for name, run in contestants.items():
                used = client_cpu()
                rate = run(harness.direct)
                rates[name].append(rate)
                cpu[name].append((client_cpu() - used) / (rate * args.seconds) * 1e6)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    median = {name: statistics.median(samples) for name, samples in rates.items()}
    kazoo = {
        "uncontended": median["uncontended: kazoo"],
        "processes": median[f"{PROCESSES} processes, one lock: kazoo"],
        "locks": median[f"{LOCKS} locks: kazoo threads"],
    }
    rust = {"uncontended": median["uncontended: Rust core"], "locks": median[f"{LOCKS} locks: Rust core"]}
    print(f"\none local ZooKeeper, forceSync={'yes' if args.force_sync else 'no'}, "
          f"{args.rounds} rounds of {args.seconds:g} s, medians (acquire+release cycles/s)\n")
    print(f"{'contestant':<44}{'cycles/s':>10}{'× kazoo':>10}{'× Rust':>10}{'client CPU µs/cycle':>22}")
    for name, rate in median.items():
        group = next(key for key in kazoo if key in name.split(":")[0])
        ratio_rust = f"{rate / rust[group]:.2f}" if group in rust else "-"
        used = statistics.median(cpu[name])
        print(f"{name:<44}{rate:>10.0f}{rate / kazoo[group]:>10.2f}{ratio_rust:>10}{used:>22.0f}")
    print("\nclient CPU: user+system time of the contestant's own processes (warm-up included), per cycle;\n"
          "on a busy 2-core machine it says more than the rates, which the server's share of the CPU bounds.")


if __name__ == "__main__":
    main()
