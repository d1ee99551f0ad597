"""The core lock's behaviours, seen from Python, against a real server."""

import threading
import time

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children


def test_acquire_release_and_the_node_kazoo_would_write(client, kz, path):
    lock = client.Lock(path, "worker-1")
    assert not lock.is_acquired and lock.node is None and lock.fencing_token is None
    assert lock.acquire() is True
    assert lock.is_acquired and lock.state == zoolock.LockState.HELD
    children = kz.get_children(path)
    assert children == [lock.node]
    prefix, sequence = lock.node.split("__lock__")
    assert len(prefix) == 32 and len(sequence) == 10
    assert kz.get(f"{path}/{lock.node}")[0] == b"worker-1"
    assert lock.contenders() == ["worker-1"]
    assert lock.release() is True
    assert lock.release() is False
    assert not lock.is_acquired and lock.state == "RELEASED"
    assert kz.get_children(path) == []


def test_with_returns_none_and_releases(client, kz, path):
    lock = client.Lock(path)
    with lock as entered:
        assert entered is None
        assert lock.is_acquired
    assert not lock.is_acquired and kz.get_children(path) == []


def test_non_blocking_returns_false_and_leaves_no_node(make_client, kz, path):
    holder, other = make_client().Lock(path, "holder"), make_client().Lock(path, "other")
    assert holder.acquire()
    assert other.acquire(blocking=False) is False
    with pytest.raises(zoolock.LockTimeout):  # kazoo too: a blocking try with no time left
        other.acquire(timeout=0)
    assert kz.get_children(path) == [holder.node]


def test_timeout_raises_lock_timeout_and_leaves_no_node(make_client, kz, path):
    holder, other = make_client().Lock(path), make_client().Lock(path)
    assert holder.acquire()
    started = time.monotonic()
    with pytest.raises(zoolock.LockTimeout, match="Failed to acquire lock on .* after 0.3 seconds"):
        other.acquire(timeout=0.3)
    assert 0.25 < time.monotonic() - started < 5
    assert issubclass(zoolock.LockTimeout, zoolock.KazooException)
    assert kz.get_children(path) == [holder.node]


def test_cancel_ends_a_waiting_acquire_without_a_node(make_client, kz, path):
    holder, waiter = make_client().Lock(path, "holder"), make_client().Lock(path, "waiter")
    assert holder.acquire()
    waiting = run_in_thread(waiter.acquire)
    until_children(kz, path, lambda c: len(c) == 2, "the waiter to queue")
    waiter.cancel()
    with pytest.raises(zoolock.CancelledError):
        waiting.result()
    assert kz.get_children(path) == [holder.node]
    # A cancel with nothing pending does not spoil the next acquire (kazoo's would).
    waiter.cancel()
    holder.release()
    assert waiter.acquire(timeout=DEADLINE)


def test_fifo_handover(make_client, kz, path):
    holder = make_client().Lock(path, "holder")
    assert holder.acquire()
    order = []
    waiters = []
    for i in range(4):
        lock = make_client().Lock(path, f"w{i}")

        def take(lock=lock, i=i):
            assert lock.acquire(timeout=DEADLINE)
            order.append(i)
            lock.release()

        waiters.append(run_in_thread(take))
        until_children(kz, path, lambda c, n=i + 2: len(c) == n, f"waiter {i} to queue")
    assert holder.contenders() == ["holder", "w0", "w1", "w2", "w3"]
    holder.release()
    for waiter in waiters:
        waiter.result()
    assert order == [0, 1, 2, 3]


def test_many_threads_on_one_lock_object_hold_it_one_at_a_time(client, path):
    lock = client.Lock(path)
    inside, most, entries = [0], [0], [0]
    guard = threading.Lock()

    def work():
        for _ in range(15):
            with lock:
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                    entries[0] += 1
                with guard:
                    inside[0] -= 1

    threads = [run_in_thread(work) for _ in range(6)]
    for thread in threads:
        thread.result(timeout=60)
    assert entries[0] == 90 and most[0] == 1


def test_waiting_releases_the_gil(make_client, path):
    holder, waiter = make_client().Lock(path), make_client().Lock(path)
    assert holder.acquire()
    ticks = [0]
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1

    ticker = run_in_thread(tick)
    # The main thread blocks in a Rust wait; the ticker must keep running.
    with pytest.raises(zoolock.LockTimeout):
        waiter.acquire(timeout=0.5)
    stop.set()
    ticker.result()
    assert ticks[0] > 10_000


def test_fencing_tokens_increase_from_holder_to_holder(make_client, path):
    locks = [make_client().Lock(path) for _ in range(3)]
    tokens = []
    for _ in range(2):
        for lock in locks:
            with lock:
                tokens.append(lock.fencing_token)
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens)


def test_persistent_hold_survives_stop(make_client, kz, path):
    owner = make_client()
    lock = owner.Lock(path, "persistent")
    assert lock.acquire(ephemeral=False)
    node = lock.node
    owner.stop()
    assert kz.get_children(path) == [node]
    assert kz.exists(f"{path}/{node}").ephemeralOwner == 0
    other = make_client().Lock(path)
    assert other.acquire(blocking=False) is False
    kz.delete(f"{path}/{node}")
    assert other.acquire(timeout=DEADLINE)


def test_stop_loses_the_hold_and_says_so(make_client, path):
    owner = make_client()
    lock = owner.Lock(path)
    heard = []
    lost_heard = threading.Event()

    def listener(state):
        heard.append(state)
        if state == "LOST":
            lost_heard.set()

    lock.add_listener(listener)
    assert lock.acquire()
    assert not lock.lost.is_set()
    owner.stop()
    assert lock.lost.wait(DEADLINE) and lock.lost.is_set()
    assert lock.lost_reason == "SESSION_CLOSED" and not lock.is_acquired
    assert lost_heard.wait(DEADLINE) and heard == ["HELD", "LOST"]
    assert lock.release() is False


def test_lease_releases_by_itself(client, kz, path):
    lock = client.Lock(path)
    assert lock.acquire(lease=0.3)
    assert lock.lost.wait(DEADLINE)
    assert lock.lost_reason == "LEASE_EXPIRED"
    until_children(kz, path, lambda c: c == [], "the leased node to go")


def test_lost_wait_is_false_after_a_release(client, path):
    lock = client.Lock(path)
    assert lock.acquire()
    releaser = run_in_thread(lock.release)
    assert lock.lost.wait(DEADLINE) is False
    assert releaser.result() is True


def test_curator_scheme_names_nodes_like_curator(client, kz, path):
    lock = client.Lock(path, scheme="curator")
    with lock:
        (name,) = kz.get_children(path)
        assert name.startswith("_c_") and "-lock-" in name and lock.node == name


def test_a_second_acquire_on_a_held_lock_is_false_not_lock_timeout(make_client, path):
    """kazoo's test_lock_no_double_calls: the handle itself holds the lock."""
    lock = make_client().Lock(path, "one")
    assert lock.acquire() is True
    assert lock.acquire(timeout=0.5) is False
    assert lock.acquire(blocking=False) is False
    assert lock.is_acquired is True
    other = make_client().Lock(path, "two")
    with pytest.raises(zoolock.LockTimeout):
        other.acquire(timeout=0.5)
    assert lock.release() is True
    assert lock.is_acquired is False


def test_deleting_the_holders_node_says_node_deleted(make_client, kz, path):
    lock = make_client().Lock(path)
    assert lock.acquire()
    kz.delete(f"{path}/{lock.node}")
    assert lock.lost.wait(DEADLINE)
    assert lock.lost_reason == "NODE_DELETED" and lock.state == "LOST"
    assert not lock.is_acquired
    assert make_client().Lock(path).acquire(blocking=False) is True


def test_a_lock_that_lists_hands_over_to_a_mirrored_one_and_back(make_client, kz, path):
    """mirror=False waits by listing, as kazoo does; either design excludes
    the other on one path and wakes on the other's release."""
    listing = make_client().Lock(path, "listing", mirror=False)
    mirrored = make_client().Lock(path, "mirrored")
    assert listing.acquire(timeout=DEADLINE)
    waiting = run_in_thread(lambda: mirrored.acquire(timeout=DEADLINE))
    until_children(kz, path, lambda children: len(children) == 2, "the mirrored lock to queue")
    assert not mirrored.is_acquired
    listing.release()
    assert waiting.result(DEADLINE)
    got = run_in_thread(lambda: listing.acquire(timeout=DEADLINE))
    until_children(kz, path, lambda children: len(children) == 2, "the listing lock to queue")
    mirrored.release()
    assert got.result(DEADLINE)
    listing.release()


READ_STATE_IN_A_LOOP = """
import sys, time, zoolock
client = zoolock.KazooClient(hosts=sys.argv[1], timeout=float(sys.argv[3]))
client.start(timeout=15)
lock = client.Lock(sys.argv[2], scheme=sys.argv[4])
assert lock.acquire(timeout=15)
print("held", lock.node, flush=True)
while True:
    before = time.monotonic_ns()
    state = lock.state
    print(before, state, flush=True)
    time.sleep(0.001)
"""


@pytest.mark.parametrize("scheme", ["kazoo", "distributedlock"])
def test_a_holder_paused_past_its_session_reads_not_held_at_once_on_resume(make_client, connect, path, scheme):
    """A process stopped (SIGSTOP, a long GC, a paused VM) for longer than
    its session timeout: its first read of the state after it resumes says
    the hold is not HELD, before any timer of the session has run."""
    import signal
    import subprocess
    import sys

    timeout = 2.0
    worker = subprocess.Popen([sys.executable, "-c", READ_STATE_IN_A_LOOP, connect, path, str(timeout), scheme],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().startswith("held ")
        assert worker.stdout.readline().split()[1] == "HELD"
        worker.send_signal(signal.SIGSTOP)
        time.sleep(1.5 * timeout)  # the fault: a pause of 1.5 session timeouts
        resumed = time.monotonic_ns()
        worker.send_signal(signal.SIGCONT)
        after = []
        while len(after) < 20:
            at, state = worker.stdout.readline().split()
            if int(at) >= resumed:
                after.append(state)
    finally:
        worker.kill()
        worker.wait()
    assert "HELD" not in after, after


@pytest.mark.parametrize("scheme", ["kazoo", "curator", "distributedlock"])
def test_a_holder_killed_mid_hold_is_followed_once_its_session_expires(make_client, kz, connect, path, scheme):
    """SIGKILL while holding, in each scheme: the node outlives the process
    only until its session expires; a waiter of the same scheme then holds,
    the dead holder's node gone and no other left behind."""
    import signal
    import subprocess
    import sys

    worker = subprocess.Popen([sys.executable, "-c", READ_STATE_IN_A_LOOP, connect, path, "2.0", scheme],
                              stdout=subprocess.PIPE, text=True)
    try:
        said = worker.stdout.readline().split()
        assert said[0] == "held", said
        dead_node = said[1]
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        worker.kill()
        worker.wait()
    waiter = make_client().Lock(path, scheme=scheme)
    assert waiter.acquire(timeout=DEADLINE)
    try:
        children = kz.get_children(path)
        assert dead_node.rsplit("/", 1)[-1] not in children
        assert children == [waiter.node.rsplit("/", 1)[-1]], children
    finally:
        waiter.release()
