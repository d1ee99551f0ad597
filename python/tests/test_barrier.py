"""Barrier and DoubleBarrier in kazoo's layout, shared with kazoo's own classes."""

import itertools
import socket
import threading
import time

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children
from kazoo.recipe.barrier import Barrier as KazooBarrier
from kazoo.recipe.barrier import DoubleBarrier as KazooDoubleBarrier
from kazoo.recipe.watchers import DataWatch


def test_a_barrier_shared_with_kazoo(client, kz, path):
    barrier = client.Barrier(path)
    assert isinstance(barrier, zoolock.Barrier) and barrier.path == path and barrier.client is client
    assert barrier.wait() is True, "no node: no barrier"
    barrier.create()
    kazoos = KazooBarrier(kz, path)
    assert kazoos.wait(timeout=0.1) is False, "kazoo sees zoolock's barrier"
    assert barrier.wait(timeout=0) is False
    waiting = run_in_thread(barrier.wait)
    assert kazoos.remove() is True
    assert waiting.result() is True
    kazoos.create()
    kazoo_waiting = run_in_thread(kazoos.wait, 15)
    assert barrier.remove() is True and barrier.remove() is False
    assert kazoo_waiting.result() is True
    with pytest.raises(TypeError):
        zoolock.Barrier(kz, path)
    with pytest.raises(zoolock.BadArgumentsError):
        client.Barrier("relative")


def test_a_barrier_waiter_across_a_partition_and_an_expiry(harness, client, kz, path):
    """kazoo's wait raises ConnectionLoss, or hangs after an expiry; zoolock's goes on."""
    barrier = client.Barrier(path)
    for fault in ("partition", "expire"):
        kz.ensure_path(path)
        waiting = run_in_thread(barrier.wait)
        session_id = client.client_id[0]
        until_watched(harness, path, session_id)
        if fault == "partition":
            harness.partition(session_id)
            kz.delete(path)
            harness.heal(session_id)
        else:
            harness.expire(session_id)
            kz.delete(path)
        assert waiting.result() is True, fault


def until_watched(harness, path, session_id):
    """Waits until the server lists a data watch of the session on ``path``
    (the ``wchp`` four-letter word): no event tells a test a watch is set."""
    wanted = f"0x{session_id:x}"
    host, port = harness.direct.split(",")[0].rsplit(":", 1)
    for _ in range(500):
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"wchp")
            lines = b"".join(iter(lambda: s.recv(4096), b"")).decode().splitlines()
        if path in lines:
            watchers = itertools.takewhile(lambda line: line[:1].isspace(), lines[lines.index(path) + 1:])
            if wanted in (line.strip() for line in watchers):
                return
        time.sleep(0.02)
    pytest.fail(f"no watch of {wanted} on {path}")


def test_a_double_barrier_with_kazoo_members(make_client, kz, path):
    zoolocks = [make_client().DoubleBarrier(path, 3, identifier=f"z{i}") for i in range(2)]
    kazoos = KazooDoubleBarrier(kz, path, 3, identifier="k")
    assert not zoolocks[0].participating and len(zoolocks[0].node_name) == 32
    assert zoolocks[0].create_path == f"{path}/{zoolocks[0].node_name}"
    entering = [run_in_thread(member.enter) for member in zoolocks]
    until_children(kz, path, lambda c: len(c) == 2, "two members")
    assert not any(e.outcome for e in entering) and all(e.is_alive() for e in entering)
    kazoos.enter()
    for entered in entering:
        entered.result()
    assert all(m.participating for m in zoolocks) and kazoos.participating
    assert sorted(kz.get_children(path)) == sorted([m.node_name for m in zoolocks] + [kazoos.node_name, "ready"])
    assert kz.get(zoolocks[1].create_path)[0] == b"z1"

    leaving = [run_in_thread(member.leave) for member in zoolocks]
    until_children(kz, path, lambda c: "ready" not in c, "the ready node to go")
    kazoos.leave()
    for left in leaving:
        left.result()
    assert not any(m.participating for m in zoolocks)
    assert kz.get_children(path) == []


def test_double_barrier_arguments(client, path):
    member = client.DoubleBarrier(path, 1, node_name="me")
    assert member.create_path == f"{path}/me"
    member.enter()
    assert member.participating
    member.leave()
    assert not member.participating
    import os

    assert client.DoubleBarrier(path, 2).identifier.endswith(f"-{os.getpid()}"), "kazoo's <fqdn>-<pid>"
    with pytest.raises(ValueError):
        client.DoubleBarrier(path, 0)
    with pytest.raises(ValueError):
        client.DoubleBarrier(path, 2, node_name="a/b")
    with pytest.raises(TypeError):
        client.DoubleBarrier(path)



def test_an_entering_member_survives_an_expiry(harness, make_client, kz, path):
    """kazoo's enter waits on a watch an expiry resets without waking it, with
    no node of its own left; zoolock's enters again on the next session."""
    first_client = make_client()
    first = first_client.DoubleBarrier(path, 2, identifier="first")
    entering = run_in_thread(first.enter)
    until_children(kz, path, lambda c: c == [first.node_name], "the first member")
    owner = kz.exists(first.create_path).owner_session_id
    renewed = threading.Event()

    def node_changed(data, stat):
        if stat is not None and stat.owner_session_id != owner:
            renewed.set()
            return False
        return True

    harness.expire(first_client.client_id[0])
    DataWatch(kz, first.create_path, node_changed)
    assert renewed.wait(DEADLINE), "the member's node of the next session"
    KazooDoubleBarrier(kz, path, 2, identifier="kazoo").enter()
    entering.result()
    assert first.participating
