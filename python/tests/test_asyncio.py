"""asyncio: waits never block the event loop; cancelling a task leaves no node."""

import asyncio

import pytest
import zoolock
from conftest import DEADLINE, until_children


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, DEADLINE))


def test_async_with_and_acquire_async(client, kz, path):
    lock = client.Lock(path, "async")

    async def main():
        async with lock:
            assert lock.is_acquired and kz.get_children(path) == [lock.node]
        assert not lock.is_acquired
        assert await lock.acquire_async(blocking=False) is True
        assert await lock.release_async() is True
        assert await lock.release_async() is False

    run(main())
    assert kz.get_children(path) == []


def test_waiting_does_not_block_the_loop(make_client, path):
    holder, waiter = make_client().Lock(path), make_client().Lock(path)
    assert holder.acquire()

    async def main():
        ticks = 0
        acquiring = asyncio.ensure_future(waiter.acquire_async(timeout=DEADLINE))
        while ticks < 20:  # the loop keeps running while the acquire waits
            await asyncio.sleep(0.005)
            ticks += 1
        assert not acquiring.done()
        assert await holder.release_async()
        assert await acquiring is True
        with pytest.raises(zoolock.LockTimeout):
            await holder.acquire_async(timeout=0.1)
        assert await waiter.release_async()

    run(main())


def test_cancelling_the_task_removes_the_node(make_client, kz, path):
    holder, waiter = make_client().Lock(path), make_client().Lock(path)
    assert holder.acquire()

    async def main():
        task = asyncio.ensure_future(waiter.acquire_async())
        await asyncio.to_thread(until_children, kz, path, lambda c: len(c) == 2, "the waiter to queue")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    until_children(kz, path, lambda c: c == [holder.node], "the cancelled node to go")
    assert not waiter.is_acquired


def test_semaphore_and_lost_event_async(client, path):
    sem = client.Semaphore(path, "s", max_leases=1)

    async def main():
        async with sem:
            assert sem.lease_holders() == ["s"]
        assert await sem.acquire_async(lease=0.2)
        assert await sem.lost.wait_async(DEADLINE) is True
        assert sem.lost_reason == "LEASE_EXPIRED"

    run(main())


def test_each_new_loop_on_a_thread_gets_its_completions(client, path):
    # zoolock keeps the bridge of the loop a thread last ran: a later loop
    # (possibly at the dead one's address) must get its own, or its awaits
    # would never complete.
    lock = client.Lock(path)

    async def cycle():
        assert await lock.acquire_async() is True
        assert await lock.release_async() is True

    for _ in range(4):
        run(cycle())
    loops = [asyncio.new_event_loop() for _ in range(2)]
    try:
        for event_loop in loops + loops:
            event_loop.run_until_complete(asyncio.wait_for(cycle(), DEADLINE))
    finally:
        for event_loop in loops:
            event_loop.close()


def test_acquire_async_needs_a_running_loop(client, path):
    with pytest.raises(RuntimeError):
        client.Lock(path).acquire_async()


def test_cancelling_at_any_moment_never_strands_the_lock(client, kz, path):
    lock = client.Lock(path)

    async def main():
        for spins in range(40):
            task = asyncio.ensure_future(lock.acquire_async())
            for _ in range(spins % 8):  # cancel at different points of the acquire
                await asyncio.sleep(0)
            task.cancel()
            try:
                if await task:  # won before the cancel landed: ours to release
                    await lock.release_async()
            except asyncio.CancelledError:
                pass
        # Whatever raced, the lock object is not wedged and nothing was left.
        assert await asyncio.wait_for(lock.acquire_async(), DEADLINE)
        assert await lock.release_async()

    run(main())
    until_children(kz, path, lambda c: c == [], "every node to go")
