"""Read/write locks: readers share, writers exclude, nobody jumps the queue."""

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children


def test_readers_share_and_writers_wait_for_them(make_client, kz, path):
    readers = [make_client().ReadLock(path, f"r{i}") for i in range(2)]
    writer = make_client().WriteLock(path, "w")
    assert all(r.acquire(blocking=False) for r in readers)
    assert isinstance(readers[0], zoolock.Lock) and readers[0].node.split("__rlock__")[1].isdigit()
    assert writer.acquire(blocking=False) is False
    waiting = run_in_thread(writer.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 3, "the writer to queue")
    assert writer.contenders() == ["r0", "r1", "w"]
    readers[0].release()
    readers[1].release()
    assert waiting.result() is True
    assert readers[0].acquire(blocking=False) is False


def test_a_reader_queues_behind_an_earlier_writer(make_client, kz, path):
    writer = make_client().WriteLock(path, "w")
    reader = make_client().ReadLock(path, "r")
    assert writer.acquire()
    with pytest.raises(zoolock.LockTimeout):
        reader.acquire(timeout=0.2)
    waiting = run_in_thread(reader.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "the reader to queue")
    writer.release()
    assert waiting.result() is True


def test_a_plain_lock_excludes_readers_too(make_client, path):
    reader = make_client().ReadLock(path)
    lock = make_client().Lock(path)
    assert reader.acquire()
    # Stricter than kazoo's plain Lock, which ignores readers.
    assert lock.acquire(blocking=False) is False
    reader.release()
    assert lock.acquire(blocking=False) is True
