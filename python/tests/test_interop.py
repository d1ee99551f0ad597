"""A lock path shared with kazoo itself (docs/interop.md's matrix): zoolock's
default scheme and kazoo exclude each other; the Curator scheme, whose nodes
kazoo would not see, refuses a path where kazoo queues, with kazoo's
ConfigurationError, and leaves no node. zookeeper-client's and
DistributedLock's cells are in core/tests/interop.rs."""

import kazoo.exceptions
import pytest

import zoolock


def test_kazoo_and_the_default_scheme_exclude_each_other(client, kz, path):
    theirs = kz.Lock(path, "kazoo")
    assert theirs.acquire(timeout=5)
    ours = client.Lock(path, "zoolock")
    assert not ours.acquire(blocking=False)
    theirs.release()
    assert ours.acquire(timeout=5)
    assert not kz.Lock(path, "kazoo-2").acquire(blocking=False)
    ours.release()


def test_the_curator_scheme_refuses_a_path_where_kazoo_queues(client, kz, path):
    theirs = kz.Lock(path, "kazoo")
    assert theirs.acquire(timeout=5)
    before = kz.get_children(path)
    ours = client.Lock(path, "zoolock", scheme="curator")
    with pytest.raises(zoolock.ConfigurationError) as refused:
        ours.acquire(timeout=5)
    assert isinstance(refused.value, kazoo.exceptions.ConfigurationError)
    assert before[0] in str(refused.value) and "kazoo scheme" in str(refused.value)
    assert not ours.is_acquired and kz.get_children(path) == before
    theirs.release()


def test_the_distributedlock_scheme_queues_with_distributedlock_nodes(client, kz, path):
    # A .NET service still on DistributedLock.ZooKeeper holds: its node is `lock-<seq>`.
    theirs = kz.create(path + "/lock-", b"", ephemeral=True, sequence=True, makepath=True)
    ours = client.Lock(path, "py-worker", scheme="distributedlock")
    assert not ours.acquire(blocking=False)
    with pytest.raises(zoolock.ConfigurationError):
        client.Lock(path, "py-worker").acquire(timeout=5)
    kz.delete(theirs)
    assert ours.acquire(timeout=5)
    assert ours.contenders() == ["py-worker"]
    ours.release()
    with pytest.raises(ValueError, match="distributedlock"):
        client.Lock(path, scheme="nope")
    with pytest.raises(ValueError, match="mutex nodes only"):
        client.ReadLock(path, scheme="distributedlock")
