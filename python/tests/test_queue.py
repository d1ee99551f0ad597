"""Queue and LockingQueue in kazoo's layout, shared with kazoo's own classes."""

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children
from kazoo.recipe.queue import LockingQueue as KazooLockingQueue
from kazoo.recipe.queue import Queue as KazooQueue


def test_a_queue_shared_with_kazoo(client, kz, path):
    queue = client.Queue(path)
    assert isinstance(queue, zoolock.Queue) and queue.get() is None and len(queue) == 0
    kazoos = KazooQueue(kz, path)
    queue.put(b"one")
    kazoos.put(b"two")
    queue.put(b"urgent", priority=1)
    kazoos.put(b"later", priority=500)
    assert len(queue) == 4 == len(kazoos)
    assert sorted(kz.get_children(path))[0] == "entry-001-0000000002"
    assert kazoos.get() == b"urgent"
    assert queue.get() == b"one"
    assert kazoos.get() == b"two"
    assert queue.get() == b"later"
    assert queue.get() is None and kazoos.get() is None
    with pytest.raises(TypeError, match="value must be a byte string"):
        queue.put("text")
    with pytest.raises(TypeError, match="priority must be an int"):
        queue.put(b"x", priority="1")
    with pytest.raises(ValueError, match="priority must be between 0 and 999"):
        queue.put(b"x", priority=1000)


def test_a_locking_queue_shared_with_kazoo(make_client, kz, path):
    queue = make_client().LockingQueue(path)
    kazoos = KazooLockingQueue(kz, path)
    kazoos.put(b"first")
    queue.put_all([b"second", b"third"])
    queue.put(b"zero", priority=0)
    assert len(queue) == 4 == len(kazoos)
    assert sorted(kz.get_children(path)) == ["entries", "taken"]

    assert queue.get() == b"zero"
    entry, value = queue.processing_element
    assert value == b"zero" and kz.get(f"{path}/taken/{entry}")[0] == queue.id
    assert queue.get() == b"zero", "the same until consumed"
    assert kazoos.get(timeout=5) == b"first", "kazoo skips zoolock's locked entry"
    assert queue.get(timeout=0.1) == b"zero"
    assert queue.release() is True and queue.holds_lock() is False
    assert kazoos.consume() is True
    other = make_client().LockingQueue(path)
    assert other.get(timeout=5) == b"zero" and other.holds_lock()
    assert other.consume() is True and other.consume() is False
    assert [queue.get(), queue.consume(), queue.get(), queue.consume()] == [b"second", True, b"third", True]
    assert queue.get(timeout=0.1) is None and len(queue) == 0

    waiting = run_in_thread(queue.get)
    until_children(kz, f"{path}/entries", lambda c: c == [], "an empty queue")
    kazoos.put(b"late")
    assert waiting.result() == b"late"
    assert queue.consume() is True
    with pytest.raises(TypeError, match="values must be a list"):
        queue.put_all((b"a",))
    with pytest.raises(TypeError, match="value must be a byte string"):
        queue.put_all([b"a", "b"])
    assert len(queue) == 0, "put_all checks every value before it sends"


def test_an_entry_of_an_expired_consumer_goes_to_another(harness, client, kz, path):
    """kazoo's consumer returns the entry it lost from ``get`` again and
    ``consume`` raises or deletes another's; zoolock's says it lost it."""
    queue = client.LockingQueue(path)
    kazoos = KazooLockingQueue(kz, path)
    kazoos.put(b"job")
    assert queue.get() == b"job"
    assert kazoos.get(timeout=0.1) is None
    harness.expire(client.client_id[0])
    assert kazoos.get(timeout=15) == b"job", "free once zoolock's session ended"
    assert queue.holds_lock() is False and queue.consume() is False
    assert kazoos.consume() is True
    assert len(queue) == 0


def test_recipes_made_before_start_work_after_start_and_a_restart(make_client, kz, path):
    """kazoo's recipes may be made before ``start()``; zoolock's follow the client's new session."""
    client = make_client(start=False)
    queue = client.Queue(path)
    with pytest.raises(zoolock.ConnectionClosedError):
        queue.put(b"early")
    client.start(timeout=DEADLINE)
    queue.put(b"one")
    client.stop()
    client.start(timeout=DEADLINE)
    queue.put(b"two")
    assert [queue.get(), queue.get(), queue.get()] == [b"one", b"two", None]
