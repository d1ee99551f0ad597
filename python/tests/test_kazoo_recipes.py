"""kazoo's Python-only recipes handed a zoolock client: SetPartitioner
(through client.ShallowParty and client.Lock) and TreeCache (through
client.handler and the client's watcher sets)."""

import gc
import threading
import time
import weakref

from conftest import DEADLINE, until_children
from kazoo.recipe.cache import TreeCache, TreeEvent
from kazoo.recipe.partitioner import PartitionState, SetPartitioner


def until(partitioner, condition, what):
    """Waits on kazoo's ``state_change_event`` until ``condition(partitioner)``."""
    end = time.monotonic() + DEADLINE
    while True:
        partitioner.state_change_event.clear()
        if condition(partitioner):
            return
        left = end - time.monotonic()
        assert left > 0 and partitioner.state_change_event.wait(left), (what, partitioner.state)


def acquired(partitioner):
    """Waits (kazoo's own way) until ``partitioner`` holds its partitions."""
    partitioner.wait_for_acquire(timeout=DEADLINE)
    assert partitioner.acquired, partitioner.state
    return set(partitioner)


def test_set_partitioner_splits_between_zoolock_and_kazoo_members(make_client, kz, path):
    items = {"a", "b", "c", "d"}
    changed = threading.Event()
    first = SetPartitioner(make_client(), path, items, identifier="z0", time_boundary=0.1, state_change_event=changed)
    assert acquired(first) == items, "alone, it takes everything"
    others = [
        make_client().SetPartitioner(path, items, identifier="z1", time_boundary=0.1, state_change_event=changed),
        SetPartitioner(kz, path, items, identifier="k", time_boundary=0.1, state_change_event=changed),
    ]
    members = [first, *others]
    end = time.monotonic() + DEADLINE
    while True:
        # kazoo's loop: a member told to release releases; all settle on a split.
        changed.clear()
        for member in members:
            if member.release:
                member.release_set()
        held = [set(m) if m.acquired else None for m in members]
        if None not in held and sum(map(len, held)) == len(items) and set().union(*held) == items:
            break
        assert changed.wait(max(0.0, end - time.monotonic())), [m.state for m in members]
    assert sorted(c.split("-", 1)[1] for c in kz.get_children(f"{path}/party")) == ["k", "z0", "z1"]
    for member in members:
        member.finish()
    assert first.state == PartitionState.FAILURE and kz.get_children(f"{path}/party") == []


def test_a_partitioner_whose_session_expires_fails_out(harness, client, kz, path):
    partitioner = client.SetPartitioner(path, {"a"}, identifier="z", time_boundary=0.1)
    acquired(partitioner)
    harness.expire(client.client_id[0])
    until(partitioner, lambda p: p.failed, "the partitioner to fail out")
    until_children(kz, f"{path}/locks/a", lambda c: c == [], "the lock to go with the session")


def test_tree_cache_follows_a_tree(client, kz, path):
    events = []
    seen = threading.Condition()
    kz.create(f"{path}/a", b"1", makepath=True)
    cache = TreeCache(client, path)

    @cache.listen
    def on_event(event):
        with seen:
            events.append((event.event_type, event.event_data and event.event_data.path))
            seen.notify_all()

    def until(event):
        with seen:
            assert seen.wait_for(lambda: event in events, DEADLINE), (event, events)

    cache.start()
    until((TreeEvent.INITIALIZED, None))
    assert (TreeEvent.NODE_ADDED, f"{path}/a") in events
    assert cache.get_data(f"{path}/a").data == b"1"
    kz.create(f"{path}/a/b", b"2")
    until((TreeEvent.NODE_ADDED, f"{path}/a/b"))
    kz.set(f"{path}/a", b"3")
    until((TreeEvent.NODE_UPDATED, f"{path}/a"))
    assert cache.get_data(f"{path}/a").data == b"3"
    assert cache.get_children(f"{path}/a") == frozenset(["b"])
    kz.delete(f"{path}/a", recursive=True)
    until((TreeEvent.NODE_REMOVED, f"{path}/a"))
    assert cache.get_data(f"{path}/a") is None

    kz.create(f"{path}/c/d", makepath=True)
    until((TreeEvent.NODE_ADDED, f"{path}/c/d"))  # so c's children were listed, with their watch
    assert len(client._data_watchers[f"{path}/c"]) == 1 and len(client._child_watchers[f"{path}/c"]) == 1
    cache.close()
    # kazoo's close takes the cache's watch functions out of the client's sets: none runs again.
    assert client._data_watchers.get(f"{path}/c", set()) == set()
    assert client._child_watchers.get(f"{path}/c", set()) == set()
    # Nor is one called after the change: it would watch again (kazoo's _process_watch).
    fired = threading.Event()
    client.get(f"{path}/c", watch=lambda event: fired.set())
    kz.set(f"{path}/c", b"5")
    assert fired.wait(DEADLINE)
    client.sync_async(path).get(timeout=DEADLINE)  # after any get_async the cache's watch made
    assert client._data_watchers.get(f"{path}/c", set()) == set()

def test_a_watch_function_taken_out_is_let_go(client, kz, path):
    """kazoo's TreeCache.close takes its watch functions out of the client's
    sets; as with kazoo, they (and the tree they reference) are then freed,
    though the server's watches are still set (kazoo's test_close counts
    TreeNodes). A function that fired is let go too, and so are the
    arguments of the last async call."""
    seen = threading.Condition()
    events = []

    class Watcher:
        def __call__(self, event):
            with seen:
                events.append(event.type)
                seen.notify_all()

    quiet = f"{path}/quiet"
    kz.ensure_path(quiet)
    taken_out, fires = Watcher(), Watcher()
    refs = weakref.ref(taken_out), weakref.ref(fires)
    for node, watch in ((path, fires), (quiet, taken_out)):
        client.get(node, watch=watch)
        client.exists(node, watch=watch)
        client.get_children_async(node, watch=watch).get(timeout=DEADLINE)
    client._data_watchers[quiet].discard(taken_out)
    client._child_watchers[quiet].remove(taken_out)
    kz.set(path, b"changed")
    kz.create(f"{path}/child")
    with seen:
        assert seen.wait_for(lambda: {"CHANGED", "CHILD"} <= set(events), DEADLINE), events
    del taken_out, fires, watch
    gc.collect()
    assert [ref() for ref in refs] == [None, None]
    for node in (quiet, path):
        assert client._data_watchers.get(node, set()) == set() and client._child_watchers.get(node, set()) == set()


def test_tree_cache_across_an_expiry(harness, client, kz, path):
    events = []
    seen = threading.Condition()
    kz.ensure_path(path)
    cache = TreeCache(client, path)

    def on_event(event):
        with seen:
            events.append(event.event_type)
            seen.notify_all()

    cache.listen(on_event)
    cache.start()
    with seen:
        assert seen.wait_for(lambda: TreeEvent.INITIALIZED in events, DEADLINE)
    harness.expire(client.client_id[0])
    with seen:
        assert seen.wait_for(lambda: TreeEvent.CONNECTION_RECONNECTED in events, DEADLINE), events
    kz.create(f"{path}/after", b"x")
    with seen:
        assert seen.wait_for(lambda: events.count(TreeEvent.NODE_ADDED) >= 2, DEADLINE), events
    assert cache.get_data(f"{path}/after").data == b"x"
    cache.close()
