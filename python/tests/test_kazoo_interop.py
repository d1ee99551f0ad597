"""zoolock and the real kazoo (from PyPI) on the same paths."""

import pytest
from conftest import DEADLINE, run_in_thread, until_children


@pytest.mark.parametrize("first", ["kazoo", "zoolock"])
def test_locks_exclude_each_other_and_see_each_other(first, client, kz, path):
    ours, theirs = client.Lock(path, "zoolock"), kz.Lock(path, "kazoo")
    holder, other = (theirs, ours) if first == "kazoo" else (ours, theirs)
    assert holder.acquire()
    assert other.acquire(blocking=False) is False
    waiting = run_in_thread(other.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "the other to queue")
    expected = [first, "kazoo" if first == "zoolock" else "zoolock"]
    assert ours.contenders() == expected and theirs.contenders() == expected
    holder.release()
    assert waiting.result() is True
    assert holder.acquire(blocking=False) is False
    other.release()


@pytest.mark.parametrize("kind", ["Lock", "WriteLock"])
def test_fifo_handover_between_kazoo_and_zoolock(kind, make_client, make_kazoo, kz, path):
    holder = getattr(make_client(), kind)(path, "holder")
    assert holder.acquire()
    order, waiters = [], []
    for i in range(4):
        name = f"{'kazoo' if i % 2 == 0 else 'zoolock'}-{i}"
        lock = getattr(make_kazoo() if i % 2 == 0 else make_client(), kind)(path, name)

        def take(lock=lock, name=name):
            assert lock.acquire(timeout=DEADLINE)
            order.append(name)
            lock.release()

        waiters.append(run_in_thread(take))
        until_children(kz, path, lambda c, n=i + 2: len(c) == n, f"{name} to queue")
    assert kz.Lock(path).contenders() == ["holder", "kazoo-0", "zoolock-1", "kazoo-2", "zoolock-3"]
    holder.release()
    for waiter in waiters:
        waiter.result()
    assert order == ["kazoo-0", "zoolock-1", "kazoo-2", "zoolock-3"]


def test_read_write_locks_with_kazoo(client, kz, path):
    kazoo_reader, zoolock_reader = kz.ReadLock(path, "kr"), client.ReadLock(path, "zr")
    assert kazoo_reader.acquire() and zoolock_reader.acquire(blocking=False)
    zoolock_writer, kazoo_writer = client.WriteLock(path, "zw"), kz.WriteLock(path, "kw")
    assert zoolock_writer.acquire(blocking=False) is False
    assert kazoo_writer.acquire(blocking=False) is False
    writing = run_in_thread(zoolock_writer.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 3, "the zoolock writer to queue")
    assert kazoo_writer.contenders() == ["kr", "zr", "zw"] == zoolock_writer.contenders()
    kazoo_reader.release()
    zoolock_reader.release()
    assert writing.result() is True
    assert kz.ReadLock(path).acquire(blocking=False) is False
    reading = run_in_thread(kazoo_reader.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "the kazoo reader to queue")
    zoolock_writer.release()
    assert reading.result() is True
    assert client.ReadLock(path).acquire(blocking=False) is True


def test_semaphore_shared_with_kazoo(client, kz, path):
    theirs = [kz.Semaphore(path, f"k{i}", max_leases=2) for i in range(2)]
    ours = [client.Semaphore(path, f"z{i}", max_leases=2) for i in range(2)]
    assert theirs[0].acquire() and ours[0].acquire(blocking=False)
    assert ours[1].acquire(blocking=False) is False
    assert theirs[1].acquire(blocking=False) is False
    assert sorted(ours[1].lease_holders()) == ["k0", "z0"] == sorted(theirs[1].lease_holders())
    waiting = run_in_thread(theirs[1].acquire, timeout=DEADLINE)
    until_children(kz, path + "-__lock__", lambda c: len(c) == 1, "kazoo to wait for a lease")
    ours[0].release()
    assert waiting.result() is True
    zoolock_waiting = run_in_thread(ours[1].acquire, timeout=DEADLINE)
    until_children(kz, path + "-__lock__", lambda c: len(c) == 1, "zoolock to wait for a lease")
    theirs[0].release()
    assert zoolock_waiting.result() is True
    assert sorted(theirs[0].lease_holders()) == ["k1", "z1"]


def test_semaphore_admits_kazoo_and_zoolock_in_queue_order(make_client, make_kazoo, kz, path):
    holder = make_client().Semaphore(path, "holder")
    assert holder.acquire()
    order, waiters = [], []
    for i in range(4):
        name = f"{'kazoo' if i % 2 == 0 else 'zoolock'}-{i}"
        sem = (make_kazoo() if i % 2 == 0 else make_client()).Semaphore(path, name)

        def take(sem=sem, name=name):
            assert sem.acquire(timeout=DEADLINE)
            order.append(name)
            sem.release()

        waiters.append(run_in_thread(take))
        # Waiters queue on the admission lock; the first holds it and watches the pool.
        until_children(kz, path + "-__lock__", lambda c, n=i + 1: len(c) == n, f"{name} to queue")
    holder.release()
    for waiter in waiters:
        waiter.result()
    assert order == ["kazoo-0", "zoolock-1", "kazoo-2", "zoolock-3"]


@pytest.mark.parametrize("resumer", ["kazoo", "zoolock"])
def test_client_id_resumes_across_kazoo_and_zoolock(resumer, make_client, make_kazoo, kz, harness, path):
    """A kazoo client resumes a zoolock session by its client_id, and the
    other way round: the same session, its ephemeral node kept, until the
    resumer closes it. The first client is cut off meanwhile: the server
    drops one client's connection when another attaches to its session."""
    from kazoo.client import KazooClient
    import zoolock

    first = make_client() if resumer == "kazoo" else make_kazoo()
    node = first.create(f"{path}/eph", b"x", ephemeral=True, makepath=True)
    client_id = first.client_id
    harness.partition(client_id[0])
    try:
        # Straight to the server: the proxies hold back every connection of a cut-off session.
        make = KazooClient if resumer == "kazoo" else zoolock.KazooClient
        second = make(hosts=harness.direct, timeout=4.0, client_id=client_id)
        second.start(timeout=DEADLINE)
        try:
            assert second.client_id == client_id
            assert second.exists(node).ephemeralOwner == client_id[0]
        finally:
            second.stop()
            second.close()
        until_children(kz, path, lambda c: c == [], "the session's node to go with it")
    finally:
        harness.heal(client_id[0])
