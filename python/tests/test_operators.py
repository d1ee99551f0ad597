"""What operators read: a client's metrics after a known sequence of
acquisitions, and ``inspect(path)`` against the tree as kazoo reads it."""

import datetime

import pytest
from conftest import DEADLINE, run_in_thread, until_children
from test_session import States

import zoolock

WAITS, WAITED = "zoolock_acquire_wait_seconds_count", "zoolock_acquire_wait_seconds_sum"
HOLDS = "zoolock_hold_seconds_count"
HANDOFFS, SUSPENSIONS = "zoolock_handoffs_total", "zoolock_suspensions_total"


def losses(reason):
    return f'zoolock_losses_total{{reason="{reason}"}}'


def changes(state):
    return f'zoolock_session_state_changes_total{{state="{state}"}}'


def test_metrics_count_a_known_sequence_of_acquisitions(make_client, kz, harness, path):
    a, b = make_client(), make_client()
    fresh = a.metrics()
    assert all(isinstance(v, float) for v in fresh.values())
    assert {WAITS, WAITED, HOLDS, HANDOFFS, SUSPENSIONS, losses("node_deleted"), changes("suspended")} <= set(fresh)
    assert all(v == 0 for v in fresh.values()), fresh

    first, second = a.Lock(path, "a"), b.Lock(path, "b")
    assert first.acquire()
    waiting = run_in_thread(second.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "b to queue")
    first.release()
    assert waiting.result() is True
    seen_a, seen_b = a.metrics(), b.metrics()
    assert (seen_a[WAITS], seen_a[HANDOFFS], seen_a[HOLDS]) == (1, 0, 1), seen_a
    assert (seen_b[WAITS], seen_b[HANDOFFS], seen_b[HOLDS]) == (1, 1, 0), seen_b
    assert seen_b[WAITED] > 0

    # A partition suspends b's hold; healed, it holds again.
    held = States()
    second.add_listener(held)
    session_id = b.client_id[0]
    harness.partition(session_id)
    try:
        held.wait_for("SUSPENDED")
    finally:
        harness.heal(session_id)
    held.wait_for("SUSPENDED", "HELD")
    # An operator deletes b's node: a loss of its own reason.
    kz.delete(f"{path}/{second.node}")
    assert second.lost.wait(DEADLINE)
    seen_b = b.metrics()
    assert seen_b[SUSPENSIONS] == 1 and seen_b[losses("node_deleted")] == 1, seen_b
    assert seen_b[changes("suspended")] == 1 and seen_b[changes("connected")] == 1, seen_b
    assert seen_b[losses("session_expired")] == 0 and seen_b[HOLDS] == 1, seen_b
    # The counts are the session's: a's are as they were.
    assert a.metrics() == seen_a


def test_metrics_and_inspect_need_a_started_client(make_client, path):
    client = make_client(start=False)
    with pytest.raises(zoolock.ConnectionClosedError):
        client.metrics()
    with pytest.raises(zoolock.ConnectionClosedError):
        client.inspect(path)


def expected_from_tree(kz, path, node, holds, kind, scheme):
    data, stat = kz.get(node)
    return (node, kind, holds, data.decode(), stat.ephemeralOwner, scheme, stat.ctime, stat.czxid)


def seen(participants):
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return [
        (p.node, p.kind, p.holds, p.identifier, p.session_id, p.scheme, (p.created - epoch) // datetime.timedelta(milliseconds=1), p.fencing_token)
        for p in participants
    ]


def test_inspect_lists_holders_then_waiters_as_the_tree_has_them(client, make_client, kz, path):
    assert client.inspect(path) == []
    holder = client.Lock(path, "zoolock-holder")
    assert holder.acquire()
    theirs = kz.Lock(path, "kazoo-waiter")
    kazoo_waiting = run_in_thread(theirs.acquire, timeout=DEADLINE)
    until_children(kz, path, lambda c: len(c) == 2, "kazoo's waiter to queue")
    # Created raw: a zoolock lock of the Curator scheme refuses a path where kazoo queues (MixedSchemes).
    curator_node = kz.create(
        f"{path}/_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-", b"curator-named", ephemeral=True, sequence=True
    )
    children = until_children(kz, path, lambda c: len(c) == 3, "the Curator-named node")
    holder_node = f"{path}/{holder.node}"  # kazoo's Lock.node is the node's name
    (kazoo_node,) = [f"{path}/{c}" for c in children if f"{path}/{c}" not in (holder_node, curator_node)]
    participants = client.inspect(path)
    assert seen(participants) == [
        expected_from_tree(kz, path, holder_node, True, "lock", "kazoo"),
        expected_from_tree(kz, path, kazoo_node, False, "lock", "kazoo"),
        expected_from_tree(kz, path, curator_node, False, "lock", "curator"),
    ]
    assert participants[0].session_id == client.client_id[0]
    assert participants[0].fencing_token == holder.fencing_token
    assert "holds lock" in repr(participants[0])
    holder.release()
    assert kazoo_waiting.result() is True
    assert [(p.identifier, p.holds) for p in client.inspect(path)] == [("kazoo-waiter", True), ("curator-named", False)]
    theirs.release()
    assert [(p.identifier, p.holds) for p in client.inspect(path)] == [("curator-named", True)]


def test_inspect_tells_readers_writers_and_leases(client, kz, path):
    rw, sem = f"{path}/rw", f"{path}/sem"
    reader, writer = client.ReadLock(rw, "r"), client.WriteLock(rw, "w")
    assert reader.acquire()
    writing = run_in_thread(writer.acquire, timeout=DEADLINE)
    until_children(kz, rw, lambda c: len(c) == 2, "the writer to queue")
    assert [(p.kind, p.holds, p.identifier) for p in client.inspect(rw)] == [("read", True, "r"), ("lock", False, "w")]
    reader.release()
    assert writing.result() is True
    writer.release()

    leases = [client.Semaphore(sem, f"lease-{i}", max_leases=2) for i in range(3)]
    assert leases[0].acquire() and leases[1].acquire()
    waiting = run_in_thread(leases[2].acquire, timeout=DEADLINE)
    until_children(kz, sem + "-__lock__", lambda c: len(c) == 1, "the third to queue")
    listed = client.inspect(sem)
    assert [(p.kind, p.holds, p.identifier) for p in listed] == [
        ("lease", True, "lease-0"),
        ("lease", True, "lease-1"),
        ("lease", False, "lease-2"),
    ]
    leases[0].release()
    assert waiting.result() is True
    for lease in leases[1:]:
        lease.release()
