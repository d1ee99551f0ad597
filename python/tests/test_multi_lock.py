"""MultiLock: several kazoo Locks, all or nothing, one token per path."""

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children


def test_holds_every_path_with_a_token_each_and_kazoo_locks_see_it(client, kz, path):
    a, b = f"{path}/a", f"{path}/b"
    multi = client.MultiLock([b, a, b], "multi")
    assert multi.paths == [a, b]
    assert multi.fencing_tokens == {}
    assert multi.acquire() is True
    tokens = multi.fencing_tokens
    assert list(tokens) == [a, b] and all(isinstance(t, int) and t > 0 for t in tokens.values())
    # Each path is a kazoo Lock: kazoo's lock on it sees the holder and waits.
    assert kz.Lock(a).contenders() == ["multi"] and kz.Lock(b).contenders() == ["multi"]
    assert kz.Lock(b, "kazoo").acquire(blocking=False) is False
    assert multi.release() is True
    assert kz.get_children(a) == [] and kz.get_children(b) == []
    with multi as entered:
        assert entered is None and multi.state == "HELD"
        assert all(t > tokens[p] for p, t in multi.fencing_tokens.items()), "tokens rise with each hold"
    assert multi.is_acquired is False


def test_a_path_held_by_kazoo_means_none_held_and_no_node_left(client, kz, path):
    a, b = f"{path}/a", f"{path}/b"
    theirs = kz.Lock(b, "kazoo")
    assert theirs.acquire()
    multi = client.MultiLock([a, b], "multi")
    assert multi.acquire(blocking=False) is False
    assert kz.get_children(a) == [] and len(kz.get_children(b)) == 1
    with pytest.raises(zoolock.LockTimeout):
        multi.acquire(timeout=0.3)
    assert kz.get_children(a) == [] and len(kz.get_children(b)) == 1
    # Blocking: it takes a, queues on b behind kazoo, and holds both once kazoo lets go.
    waiting = run_in_thread(multi.acquire, timeout=DEADLINE)
    until_children(kz, b, lambda c: len(c) == 2, "the multi-lock to queue on b")
    assert kz.Lock(a, "other").acquire(blocking=False) is False
    theirs.release()
    assert waiting.result() is True
    assert list(multi.fencing_tokens) == [a, b]
    multi.release()


def test_deleting_one_paths_node_loses_the_hold_and_frees_the_others(client, kz, path):
    a, b = f"{path}/a", f"{path}/b"
    multi = client.MultiLock([a, b])
    assert multi.acquire()
    (node,) = kz.get_children(b)
    kz.delete(f"{b}/{node}")
    assert multi.lost.wait(DEADLINE) and multi.state == "LOST"
    until_children(kz, a, lambda c: c == [], "the other path's node to go")
    assert multi.fencing_tokens == {}


def test_bad_input(client):
    with pytest.raises(TypeError, match="not a str"):
        client.MultiLock("/a")
    with pytest.raises(ValueError, match="at least one path"):
        client.MultiLock([])
    with pytest.raises(zoolock.BadArgumentsError):
        client.MultiLock(["/a", "relative"])
    with pytest.raises(ValueError):
        client.MultiLock(["/a"]).acquire(blocking=False, timeout=1)


def test_an_expiry_loses_every_path_and_the_next_session_holds_again(client, kz, harness, path):
    a, b = f"{path}/a", f"{path}/b"
    multi = client.MultiLock([a, b])
    assert multi.acquire()
    harness.expire(client.client_id[0])
    assert multi.lost.wait(15) and multi.lost_reason == "SESSION_EXPIRED" and multi.fencing_tokens == {}
    until_children(kz, a, lambda c: c == [], "a's node to go with the session")
    until_children(kz, b, lambda c: c == [], "b's node to go with the session")
    assert multi.acquire(timeout=DEADLINE) and list(multi.fencing_tokens) == [a, b]
    multi.release()
