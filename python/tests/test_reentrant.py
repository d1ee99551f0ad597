"""zk.Lock(path, reentrant=True): reentrant per thread (or asyncio task), like
Curator's InterProcessMutex and threading.RLock; kazoo's Lock stays the default."""

import asyncio
import threading

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children


def test_the_owning_thread_reenters_on_one_node_until_its_last_release(make_client, kz, path):
    lock = make_client().Lock(path, "owner", reentrant=True)
    assert lock.acquire() is True
    node, token = lock.node, lock.fencing_token
    assert lock.acquire(timeout=30) is True
    assert lock.acquire(blocking=False) is True
    with lock:
        assert kz.get_children(path) == [node] and lock.fencing_token == token, "one node"
    other = make_client().Lock(path, "other")
    waiting = run_in_thread(other.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "the other client to queue")
    for depth in (3, 2):
        assert lock.release() is True
        assert lock.is_acquired and kz.exists(f"{path}/{node}"), f"the node stays at depth {depth}"
        assert waiting.is_alive(), f"the other client still waits at depth {depth}"
    assert lock.release() is True
    assert waiting.result() is True
    assert not kz.exists(f"{path}/{node}")
    assert lock.release() is False
    assert other.release() is True


def test_another_thread_waits_for_the_owner_and_may_not_release(client, kz, path):
    lock = client.Lock(path, reentrant=True)
    assert lock.acquire() and lock.acquire()
    # As on a plain Lock held by this object (kazoo): False after the timeout, not LockTimeout.
    assert run_in_thread(lock.acquire, timeout=0.5).result() is False
    assert run_in_thread(lock.acquire, blocking=False).result() is False
    with pytest.raises(RuntimeError, match="another owner"):
        run_in_thread(lock.release).result()
    assert lock.is_acquired and len(kz.get_children(path)) == 1, "the refused release left the hold"

    holds, done = threading.Event(), threading.Event()

    def other_thread():
        got = lock.acquire(timeout=DEADLINE)
        holds.set()
        done.wait(DEADLINE)
        return got, lock.release()

    waiting = run_in_thread(other_thread)
    node = lock.node
    assert lock.release() is True
    assert not holds.is_set() and lock.is_acquired, "the owner holds at depth 1"
    assert lock.release() is True
    assert holds.wait(DEADLINE), "the other thread holds once the owner let go"
    assert lock.node != node
    with pytest.raises(RuntimeError):
        lock.release()
    done.set()
    assert waiting.result() == (True, True)
    assert lock.release() is False, "nothing held: nothing to refuse"


def test_a_loss_ends_the_hold_at_any_depth(client, kz, path):
    lock = client.Lock(path, reentrant=True)
    for _ in range(3):
        assert lock.acquire()
    kz.delete(f"{path}/{lock.node}")
    assert lock.lost.wait(DEADLINE) and lock.lost_reason == "NODE_DELETED"
    assert lock.release() is False, "no count survives the loss"
    assert lock.acquire() is True
    assert lock.release() is True
    assert lock.release() is False
    assert kz.get_children(path) == []


def test_asyncio_tasks_are_owners(client, kz, path):
    lock = client.Lock(path, reentrant=True)

    async def other_task():
        return await lock.acquire_async(timeout=0.5)

    async def main():
        async with lock:
            async with lock:
                assert len(kz.get_children(path)) == 1
                # Another task of the same thread is another owner: it waits.
                assert await asyncio.create_task(other_task()) is False
            assert lock.is_acquired
        assert not lock.is_acquired

    asyncio.run(asyncio.wait_for(main(), DEADLINE))
    assert kz.get_children(path) == []


def test_the_plain_lock_stays_kazoos(client, path):
    lock = client.Lock(path)
    assert lock.acquire()
    assert lock.acquire(timeout=0.3) is False
    assert run_in_thread(lock.release).result() is True, "any thread releases, as in kazoo"
    with pytest.raises(TypeError):
        client.ReadLock(path, reentrant=True)
