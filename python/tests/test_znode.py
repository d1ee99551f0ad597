"""zoolock's own tests of what kazoo's suite (test_kazoo_znode_suite.py) does
not cover: fenced writes, chroot creation, the one-shot ``watch=`` built on
the core's watches, a decorator-form watch kept alive, ``retry``, and null
data shared with kazoo."""

import gc
import threading
import uuid

import kazoo.exceptions
import pytest
import zoolock
from conftest import DEADLINE


@pytest.fixture
def base(client, path):
    client.ensure_path(path)
    return path


# ---- null data ----------------------------------------------------------------


def test_null_data_round_trips_apart_from_empty_data(client, base):
    """``None`` is ZooKeeper's null data, in and out, in every call that carries data."""
    null, empty = client.create(f"{base}/null", None), client.create(f"{base}/empty")
    assert client.get(null)[0] is None
    assert client.get(empty)[0] == b""  # kazoo's default value is b"", not None
    assert client.get_async(null).get(timeout=DEADLINE)[0] is None
    client.set(empty, None)
    client.set(null, b"")
    assert client.get(empty)[0] is None and client.get(null)[0] == b""

    transaction = client.transaction()
    transaction.create(f"{base}/made", None)
    transaction.set_data(null, None)
    transaction.create(f"{base}/made-empty")
    transaction.commit()
    assert client.get(f"{base}/made")[0] is None and client.get(null)[0] is None
    assert client.get(f"{base}/made-empty")[0] == b""

    calls, called = [], threading.Event()

    def watch(data, stat):
        calls.append((data, stat is not None))
        called.set()

    client.DataWatch(null, watch)
    assert calls == [(None, True)]  # null data of a node that exists: data None, a stat
    called.clear()
    client.set(null, b"x")
    assert called.wait(DEADLINE)
    called.clear()
    client.set(null, None)
    assert called.wait(DEADLINE)
    assert calls == [(None, True), (b"x", True), (None, True)]


def test_null_data_is_shared_with_kazoo_both_ways(client, kz, base):
    kz.create(f"{base}/by-kazoo", None)
    assert client.get(f"{base}/by-kazoo")[0] is None
    client.create(f"{base}/by-zoolock", None)
    assert kz.get(f"{base}/by-zoolock")[0] is None
    client.create(f"{base}/empty-by-zoolock", b"")
    kz.create(f"{base}/empty-by-kazoo", b"")
    assert kz.get(f"{base}/empty-by-zoolock")[0] == b"" and client.get(f"{base}/empty-by-kazoo")[0] == b""
    kz.set(f"{base}/empty-by-zoolock", None)
    client.set(f"{base}/empty-by-kazoo", None)
    assert client.get(f"{base}/empty-by-zoolock")[0] is None and kz.get(f"{base}/empty-by-kazoo")[0] is None


# ---- fenced writes ------------------------------------------------------------


def test_a_fenced_write_commits_while_the_lock_holds(client, base):
    client.create(f"{base}/state", b"v0")
    lock = client.Lock(f"{base}/lock", "me")
    assert lock.acquire(timeout=DEADLINE)
    t = lock.fenced()
    t.set_data(f"{base}/state", b"v1")
    t.create(f"{base}/log", b"entry")
    results = t.commit()
    assert results[1] == f"{base}/log" and isinstance(results[0], zoolock.ZnodeStat)
    assert client.get(f"{base}/state")[0] == b"v1"
    assert lock.release()


def test_a_fenced_write_by_a_handle_that_does_not_hold_writes_nothing(client, base):
    client.create(f"{base}/state", b"v0")
    lock = client.Lock(f"{base}/lock")
    with pytest.raises(zoolock.NotHeldError) as refused:
        with lock.fenced() as t:
            t.set_data(f"{base}/state", b"never")
    assert isinstance(refused.value, kazoo.exceptions.KazooException)  # kazoo's base catches it
    assert lock.acquire(timeout=DEADLINE)
    t = lock.fenced()
    t.set_data(f"{base}/state", b"released")
    assert lock.release()
    with pytest.raises(zoolock.NotHeldError):
        t.commit()
    assert client.get(f"{base}/state")[0] == b"v0"


def test_a_stale_holder_whose_node_was_deleted_writes_nothing(client, kz, base):
    """The stale holder does not know yet (no event seen): the server refuses the multi."""
    client.create(f"{base}/state", b"v0")
    lock = client.Lock(f"{base}/lock")
    assert lock.acquire(timeout=DEADLINE)
    t = lock.fenced()
    t.set_data(f"{base}/state", b"stale")
    kz.delete(f"{base}/lock/{lock.node}")  # an operator, or an expiry seen by everyone but this holder
    with pytest.raises(zoolock.NotHeldError):
        t.commit()
    assert client.get(f"{base}/state")[0] == b"v0"
    assert lock.lost.wait(DEADLINE)


def test_a_fenced_write_after_the_session_expired_writes_nothing(client, harness, base):
    client.create(f"{base}/state", b"v0")
    lock = client.Lock(f"{base}/lock")
    assert lock.acquire(timeout=DEADLINE)
    harness.expire(client.client_id[0])
    assert lock.lost.wait(DEADLINE)
    with pytest.raises(zoolock.NotHeldError):
        t = lock.fenced()
        t.set_data(f"{base}/state", b"stale")
        t.commit()
    assert client.retry(client.get, f"{base}/state")[0] == b"v0"


def test_a_failed_operation_of_a_fenced_write_is_reported_per_operation(client, base):
    lock = client.Lock(f"{base}/lock")
    assert lock.acquire(timeout=DEADLINE)
    t = lock.fenced()
    t.create(f"{base}/a")
    t.delete(f"{base}/missing")
    results = t.commit()
    assert type(results[0]) is zoolock.RolledBackError and type(results[1]) is zoolock.NoNodeError
    assert client.exists(f"{base}/a") is None
    assert lock.release()


def test_a_semaphore_lease_and_a_leader_fence_too(client, base):
    semaphore = client.Semaphore(f"{base}/pool", max_leases=2)
    assert semaphore.acquire(timeout=DEADLINE)
    t = semaphore.fenced()
    t.create(f"{base}/by-lease")
    assert t.commit() == [f"{base}/by-lease"]
    assert semaphore.release()
    with pytest.raises(zoolock.NotHeldError):
        semaphore.fenced().commit()

    election = client.Election(f"{base}/election", "leader-1")
    done = []

    def lead():
        t = election.fenced()
        t.create(f"{base}/by-leader")
        done.append(t.commit())

    election.run(lead)
    assert done == [[f"{base}/by-leader"]]
    with pytest.raises(zoolock.NotHeldError):
        election.fenced().commit()


def test_a_leaders_fence_holds_for_its_own_term_only(client, base):
    election = client.Election(f"{base}/election", "leader-1")
    first, tokens = [], []

    def first_term():
        tokens.append(election.lock.fencing_token)
        first.append(election.fenced())

    def second_term():
        tokens.append(election.lock.fencing_token)
        first[0].create(f"{base}/by-first-term")
        with pytest.raises(zoolock.NotHeldError):
            first[0].commit()
        t = election.fenced()
        t.create(f"{base}/by-second-term")
        assert t.commit() == [f"{base}/by-second-term"]

    election.run(first_term)
    election.run(second_term)
    assert client.exists(f"{base}/by-first-term") is None
    assert None not in tokens and tokens[0] < tokens[1]
    assert election.lock.fencing_token is None


def test_a_fence_goes_on_its_locks_client(make_client, base):
    one, other = make_client(), make_client()
    lock = one.Lock(f"{base}/lock")
    assert lock.acquire(timeout=DEADLINE)
    with pytest.raises(TypeError):
        zoolock.TransactionRequest(other, fence=lock).commit()
    assert lock.release()


def test_a_refused_acl_is_kazoos_invalid_acl_error(client, base):
    bogus = [(31, ("no-such-scheme", "x"))]
    with pytest.raises(zoolock.InvalidACLError) as refused:
        client.create(f"{base}/n", acl=bogus)
    assert isinstance(refused.value, kazoo.exceptions.InvalidACLError)
    t = client.transaction()
    t.create(f"{base}/n", acl=bogus)
    assert type(t.commit()[0]) is zoolock.InvalidACLError


# ---- chroot -----------------------------------------------------------------------


def test_a_missing_chroot_is_created_on_the_first_write_as_kazoo_does(make_client, kz, connect):
    chroot = f"/zoolock-py-chroot-{uuid.uuid4().hex[:8]}"
    client = make_client(hosts=connect + chroot)  # starts: kazoo's start() does not need the chroot either
    assert kz.exists(chroot) is None
    assert client.exists("/a") is None  # reads do not create it
    assert client.create("/a/b", b"x", makepath=True) == "/a/b"
    assert kz.get(f"{chroot}/a/b")[0] == b"x"
    kz.delete(chroot, recursive=True)


def test_a_lock_and_ensure_path_create_a_missing_chroot_too(make_client, kz, connect):
    chroot = f"/zoolock-py-chroot-{uuid.uuid4().hex[:8]}/nested"
    client = make_client(hosts=connect + chroot)
    lock = client.Lock("/locks/x")
    assert lock.acquire(timeout=DEADLINE)
    assert kz.get_children(f"{chroot}/locks/x") == [lock.node]
    assert lock.release()
    kz.delete(chroot.rsplit("/", 1)[0], recursive=True)
    client.ensure_path("/")
    assert kz.exists(chroot)
    kz.delete(chroot.rsplit("/", 1)[0], recursive=True)


def test_create_chroot_false_refuses_a_missing_chroot(make_client, kz, connect):
    chroot = f"/zoolock-py-chroot-{uuid.uuid4().hex[:8]}"
    client = make_client(start=False, hosts=connect + chroot, create_chroot=False)
    with pytest.raises(zoolock.NoNodeError):
        client.start(timeout=DEADLINE)
    assert kz.exists(chroot) is None


# ---- one-shot watches and watch lifetimes ----------------------------------------


def test_a_get_watch_fires_once_at_the_next_change(client, base):
    node = client.create(f"{base}/n", b"0")
    events, fired = [], threading.Event()

    def watch(event):
        events.append(event)
        fired.set()

    client.get(node, watch=watch)
    client.set(node, b"1")
    assert fired.wait(DEADLINE)
    fired.clear()
    client.set(node, b"2")
    client.delete(node)
    client.sync(node)
    assert not fired.wait(0.5)  # no event to wait for: a second call would have come by now
    assert events == [zoolock.WatchedEvent(zoolock.EventType.CHANGED, "CONNECTED", node)]


def test_pending_one_shot_watches_fire_with_the_session_event_as_kazoos(make_client, harness, base):
    """kazoo fires every pending one-shot watch with a NONE event when the
    connection drops or the session ends; the core's watches would survive."""
    client = make_client()
    node = client.create(f"{base}/n")
    events, fired = [], threading.Event()
    client.exists(node, watch=lambda e: (events.append(e), fired.set()))
    session = client.client_id[0]
    harness.partition(session)
    try:
        assert fired.wait(DEADLINE)
    finally:
        harness.heal(session)
    assert events == [zoolock.WatchedEvent(zoolock.EventType.NONE, "CONNECTING", None)]
    fired.clear()
    client.retry(client.get, node, watch=lambda e: (events.append(e), fired.set()))
    client.stop()
    assert fired.wait(DEADLINE)
    assert events[1:] == [zoolock.WatchedEvent(zoolock.EventType.NONE, "CLOSED", None)]


@pytest.mark.parametrize("watcher", ["zoolock", "kazoo"])
def test_one_shot_watches_fire_in_the_order_the_server_sent_their_events(watcher, client, make_kazoo, base):
    """kazoo calls one-shot watch functions in the order the server sent
    the events, and its TreeCache relies on it (a child's deletion heard
    before its parent's). Deletes pipelined by another client make the
    events arrive back to back. Each node is watched as TreeCache watches
    it, for data and for children: its deletion calls the function once for
    each (kazoo itself runs the same test)."""
    kz = make_kazoo()
    watching = client if watcher == "zoolock" else make_kazoo()
    names = [client.create(f"{base}/n{i:03}") for i in range(100)]
    heard, all_heard = [], threading.Event()

    def watch(event):
        heard.append(event.path)
        if len(heard) == 2 * len(names):
            all_heard.set()

    for name in names:
        watching.get(name, watch=watch)
        watching.get_children(name, watch=watch)
    for deleted in [kz.delete_async(name) for name in names]:
        deleted.get(timeout=DEADLINE)
    assert all_heard.wait(DEADLINE)
    assert heard == [name for name in names for _ in range(2)]


def test_a_children_watch_fires_when_the_node_is_deleted(client, base):
    node = client.create(f"{base}/parent")
    fired = threading.Event()
    events = []
    client.get_children(node, watch=lambda e: (events.append(e), fired.set()))
    client.delete(node)
    assert fired.wait(DEADLINE)
    assert events[0].type == zoolock.EventType.DELETED


def test_a_decorated_watch_lives_on_after_its_object_is_dropped(client, base):
    node = client.create(f"{base}/n", b"0")
    seen, changed = [], threading.Condition()

    @client.DataWatch(node)
    def on_change(data, stat):
        with changed:
            seen.append(data)
            changed.notify_all()

    gc.collect()
    client.set(node, b"1")
    with changed:
        assert changed.wait_for(lambda: seen[-1:] == [b"1"], DEADLINE)


def test_stopping_watches_and_closing_the_client_log_no_warning(make_client, base, caplog):
    """Ending a watch as asked (its client stopped and closed) is no
    trouble worth a warning; only a watch that ends on its own is."""
    client = make_client()
    client.ensure_path(base)
    client.DataWatch(base, lambda data, stat: None)
    client.ChildrenWatch(base, lambda children: None)
    with caplog.at_level("WARNING", logger="zoolock"):
        client.stop()
        client.close()
        # The core's watch tasks end on the close; their log lines reach Python by then.
        gc.collect()
    assert [r.getMessage() for r in caplog.records if "watch ended" in r.getMessage()] == []


# ---- the session's order ------------------------------------------------------


def test_a_call_after_an_async_one_reaches_the_server_after_it(client, base):
    """kazoo sends each request when it is called and ZooKeeper applies a
    session's requests in that order: what an ``*_async`` call wrote, the
    next call on the client reads (the async forms ran on a worker thread,
    which a later blocking call overtook)."""
    for i in range(50):
        node = f"{base}/n{i}"
        created = client.create_async(node, b"a")
        assert client.exists(node) is not None, f"exists overtook create_async at {i}"
        client.set_async(node, b"b")
        assert client.get(node)[0] == b"b"
        transaction = client.transaction()
        transaction.set_data(node, b"c")
        transaction.commit_async()
        assert client.get_async(node).get(timeout=DEADLINE)[0] == b"c"
        deleted = client.delete_async(node)
        assert client.exists(node) is None
        assert created.get(timeout=DEADLINE) == node and deleted.get(timeout=DEADLINE) is True


def test_a_read_with_a_watch_is_sent_before_its_async_form_returns(client, base):
    """``get_async(p, watch=w)`` then ``set(p)``: the read sees the old data
    and its watch the change, as in kazoo (the watched read went through
    the session's watch task, which the blocking set overtook)."""
    for i in range(30):
        node = client.create(f"{base}/w{i}", b"old")
        fired = threading.Event()
        read = client.get_async(node, watch=lambda event: fired.set())
        client.set(node, b"new")
        assert read.get(timeout=DEADLINE)[0] == b"old", f"the set overtook the watched read at {i}"
        assert fired.wait(DEADLINE)
        seen = threading.Event()
        exists = client.exists_async(f"{node}-x", watch=lambda event: seen.set())
        client.create(f"{node}-x")
        assert exists.get(timeout=DEADLINE) is None and seen.wait(DEADLINE)


def test_async_results_are_set_in_the_order_of_the_calls(client, base):
    """One session's replies come in the order its requests were sent; the
    results are set in that order, and a callback may wait on another
    result (kazoo sets results off its callback thread)."""
    order, inner = [], []
    results = [client.create_async(f"{base}/n{i}") for i in range(100)]
    for i, result in enumerate(results):
        result.rawlink(lambda _, i=i: order.append(i))
    results[0].rawlink(lambda _: inner.append(client.exists_async(base).get(timeout=DEADLINE)))
    results[-1].get(timeout=DEADLINE)
    done = threading.Event()
    client.handler.dispatch_callback(type("Callback", (), {"func": done.set, "args": ()})())
    assert done.wait(DEADLINE)
    assert order == list(range(100))
    assert inner and inner[0].numChildren >= 1


def test_a_refused_async_call_raises_bad_arguments_at_once_and_others_in_the_result(client, base):
    """As kazoo: a wrong type raises at the call; what the server or the
    core refuses is the result's exception."""
    with pytest.raises(TypeError):
        client.create_async(f"{base}/n", value="text")
    missing = client.get_async(f"{base}/missing")
    with pytest.raises(zoolock.NoNodeError):
        missing.get(timeout=DEADLINE)
    assert missing.exception is not None


# ---- retry --------------------------------------------------------------------------


def test_retry_calls_again_after_a_connection_loss_only(client, base):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise zoolock.ConnectionLoss("lost")
        return client.exists(base)

    assert client.retry(flaky) is not None and len(calls) == 2

    def missing():
        calls.append(1)
        return client.get(f"{base}/missing")

    calls.clear()
    with pytest.raises(zoolock.NoNodeError):
        client.retry(missing)
    assert len(calls) == 1


def test_retry_gives_up_after_five_tries_and_not_on_a_closed_client(make_client):
    client = make_client()
    calls = []

    def always_lost():
        calls.append(1)
        raise zoolock.ConnectionLoss("lost")

    with pytest.raises(zoolock.ConnectionLoss):
        client.retry(always_lost)
    assert len(calls) == 5
    client.stop()
    with pytest.raises(zoolock.ConnectionClosedError):
        client.retry(client.get, "/")


def test_ctrl_c_interrupts_retry_waiting_for_the_connection(make_client, harness):
    """retry waits for the session to be connected again between tries: Ctrl-C ends that wait."""
    import os
    import signal
    import time

    from conftest import run_in_thread

    client = make_client()
    session = client.client_id[0]
    suspended = threading.Event()
    client.add_listener(lambda state: suspended.set() if state == "SUSPENDED" else None)
    tries, sent, tried = [], [], threading.Event()

    def lost():
        tries.append(1)
        tried.set()
        raise zoolock.ConnectionLoss("lost")

    def interrupt_once_waiting():
        assert tried.wait(DEADLINE)  # retry waits for the connection next
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    harness.partition(session)
    try:
        assert suspended.wait(DEADLINE)  # else retry would try again at once, and give up
        helper = run_in_thread(interrupt_once_waiting)
        with pytest.raises(KeyboardInterrupt):
            client.retry(lost)  # the first try fails; the wait for a connection never ends before the heal
        assert time.monotonic() - sent[0] < 1.0
        helper.result()
    finally:
        harness.heal(session)
    assert len(tries) == 1


def test_kazoo_argument_names_and_defaults_of_the_znode_api():
    import inspect

    from kazoo.client import KazooClient as KazooKazooClient
    from kazoo.client import TransactionRequest as KazooTransactionRequest
    from kazoo.recipe.election import Election as KazooElection
    from kazoo.recipe.watchers import ChildrenWatch as KazooChildrenWatch
    from kazoo.recipe.watchers import DataWatch as KazooDataWatch

    def params(function):
        return [(p.name, p.default) for p in inspect.signature(function).parameters.values()
                if p.name not in ("self", "client")]

    names = ["exists", "get", "get_children", "create", "set", "delete", "ensure_path", "sync",
             "transaction", "exists_async", "get_async", "get_children_async", "create_async", "set_async",
             "delete_async", "ensure_path_async", "sync_async", "add_listener"]
    for name in names:
        assert params(getattr(zoolock.KazooClient, name)) == params(getattr(KazooKazooClient, name)), name
    for name in ["create", "delete", "set_data", "check", "commit", "commit_async"]:
        assert params(getattr(zoolock.TransactionRequest, name)) == params(getattr(KazooTransactionRequest, name))
    for ours, theirs in [(zoolock.DataWatch, KazooDataWatch), (zoolock.ChildrenWatch, KazooChildrenWatch),
                         (zoolock.Election, KazooElection)]:
        assert params(ours.__init__) == params(theirs.__init__), ours
    assert params(zoolock.Election.run) == params(KazooElection.run)
    assert zoolock.ZnodeStat._fields == __import__("kazoo.protocol.states").protocol.states.ZnodeStat._fields
