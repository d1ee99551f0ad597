"""Semaphores in kazoo's layout."""

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children


def test_max_leases_holders_at_once(make_client, kz, path):
    sems = [make_client().Semaphore(path, f"s{i}", max_leases=2) for i in range(3)]
    assert sems[0].acquire() and sems[1].acquire(blocking=False)
    assert sems[2].acquire(blocking=False) is False
    assert sorted(sems[2].lease_holders()) == ["s0", "s1"]
    assert kz.get(path)[0] == b"2"
    with pytest.raises(zoolock.LockTimeout, match="Failed to acquire semaphore"):
        sems[2].acquire(timeout=0.2)
    waiting = run_in_thread(sems[2].acquire, timeout=DEADLINE)
    until_children(kz, path + "-__lock__", lambda c: len(c) == 1, "the third to wait for admission")
    assert sems[0].release() is True and sems[0].release() is False
    assert waiting.result() is True
    assert sorted(sems[1].lease_holders()) == ["s1", "s2"]


def test_with_and_inconsistent_max_leases(make_client, path):
    sem = make_client().Semaphore(path, max_leases=3)
    with sem as entered:
        assert entered is None and sem.is_acquired and sem.state == "HELD"
    assert not sem.is_acquired
    other = make_client().Semaphore(path, max_leases=2)
    with pytest.raises(ValueError, match="Inconsistent max leases: 3, expected: 2"):
        other.acquire()


def test_cancel_a_waiting_semaphore(make_client, kz, path):
    holder = make_client().Semaphore(path)
    waiter = make_client().Semaphore(path)
    assert holder.acquire()
    waiting = run_in_thread(waiter.acquire)
    until_children(kz, path + "-__lock__", lambda c: len(c) == 1, "the waiter to queue")
    waiter.cancel()
    with pytest.raises(zoolock.CancelledError):
        waiting.result()
    until_children(kz, path + "-__lock__", lambda c: c == [], "the admission node to go")
    assert len(kz.get_children(path)) == 1


def test_multiple_acquire_and_release(client, path):
    """kazoo's own test: a second acquire on a holding semaphore is True at once."""
    sem = client.Semaphore(path, "one")
    assert sem.acquire(timeout=DEADLINE) is True
    assert sem.acquire(timeout=DEADLINE) is True
    assert sem.acquire(blocking=False) is True
    assert sem.release() is True
    assert sem.release() is False


def test_deleting_a_lease_node_says_node_deleted(client, kz, path):
    sem = client.Semaphore(path, "one")
    assert sem.acquire()
    (lease,) = kz.get_children(path)
    kz.delete(f"{path}/{lease}")
    assert sem.lost.wait(DEADLINE)
    assert sem.lost_reason == "NODE_DELETED" and not sem.is_acquired
