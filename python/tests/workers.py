"""Functions run in child processes (multiprocessing's 'spawn' imports them)."""

import zoolock


def hold_and_release(connect, path):
    """Starts a fresh client in a spawned process, takes and gives back the lock."""
    client = zoolock.KazooClient(hosts=connect, timeout=4.0)
    client.start(timeout=15)
    try:
        lock = client.Lock(path, "spawned")
        got = lock.acquire(timeout=15)
        token = lock.fencing_token
        lock.release()
        return got, token
    finally:
        client.stop()
