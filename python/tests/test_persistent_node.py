"""PersistentNode (Curator's, ephemeral): the node kazoo sees, kept across an
expiry and a deletion, and a killed process's registration taken over."""

import os
import signal
import subprocess
import sys
import threading

import pytest
import zoolock
from conftest import DEADLINE, SESSION_TIMEOUT, run_in_thread
from kazoo.recipe.watchers import DataWatch
from test_barrier import until_watched


def until_node(kz, node, data, changed_from=None):
    """Waits through kazoo's DataWatch until ``node`` holds ``data`` (and its
    owner is not ``changed_from``); its owner's session id."""
    seen = threading.Event()
    owners = []

    def watch(value, stat):
        if stat is not None and value == data and stat.owner_session_id not in (0, changed_from):
            owners.append(stat.owner_session_id)
            seen.set()
            return False

    DataWatch(kz, node, watch)
    assert seen.wait(DEADLINE), f"{node} never held {data!r}"
    return owners[0]


def test_kept_across_an_expiry_and_a_deletion_then_closed(harness, client, kz, path):
    node_path = f"{path}/worker-1"
    node = client.PersistentNode(node_path, b"10.0.0.1:80")
    assert isinstance(node, zoolock.PersistentNode) and not node.is_started
    assert kz.exists(node_path) is None, "nothing is sent before start()"
    node.start()
    assert node.is_started and node.data == b"10.0.0.1:80"
    data, stat = kz.get(node_path)
    assert data == b"10.0.0.1:80" and stat.owner_session_id == client.client_id[0]

    harness.expire(client.client_id[0])
    until_node(kz, node_path, b"10.0.0.1:80", changed_from=stat.owner_session_id)
    kz.delete(node_path)
    until_node(kz, node_path, b"10.0.0.1:80")
    node.set_data(b"10.0.0.1:81")
    assert kz.get(node_path)[0] == b"10.0.0.1:81" and node.data == b"10.0.0.1:81"

    assert node.close() is True and not node.is_started
    assert kz.exists(node_path) is None
    assert node.close() is False
    with client.PersistentNode(node_path, b"again") as again:
        assert kz.get(node_path)[0] == b"again" and again.is_started
    assert kz.exists(node_path) is None


def test_a_client_s_restart_keeps_the_data_and_a_stop_inside_with_raises_nothing(make_client, kz, path):
    """After ``client.restart()`` (a new session), ``start()`` makes the node
    with the data last set; leaving a ``with`` block on a stopped client
    raises nothing (the node went with its session)."""
    client = make_client()
    node_path = f"{path}/worker-1"
    node = client.PersistentNode(node_path, b"first")
    node.start()
    node.set_data(b"second")
    client.restart()
    assert not node.is_started, "its session closed with the restart"
    node.start()
    assert kz.get(node_path)[0] == b"second" and node.data == b"second"
    node.close()
    with client.PersistentNode(node_path, b"inside") as inside:
        client.stop()
    assert not inside.is_started and kz.exists(node_path) is None


KEEP_A_NODE = """
import sys, zoolock
client = zoolock.KazooClient(hosts=sys.argv[1], timeout=float(sys.argv[3]))
client.start()
zoolock.PersistentNode(client, sys.argv[2], b"killed").start()
print(hex(client.client_id[0]), flush=True)
sys.stdin.read()
"""


def test_a_killed_process_s_node_is_taken_over_once_its_session_expires(make_client, kz, connect, path):
    """The restart of a killed service: its node outlives it until its
    session expires; the new process's start() waits that out, then the
    node is the new one's, never the dead one's data."""
    node_path = f"{path}/worker-1"
    worker = subprocess.Popen([sys.executable, "-c", KEEP_A_NODE, connect, node_path, str(SESSION_TIMEOUT)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        dead = int(worker.stdout.readline(), 16)
        assert kz.exists(node_path).owner_session_id == dead
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        worker.kill()
        worker.wait()
    restarted = make_client()
    node = restarted.PersistentNode(node_path, b"restarted")
    node.start()
    data, stat = kz.get(node_path)
    assert (data, stat.owner_session_id) == (b"restarted", restarted.client_id[0])
    node.close()


def test_ctrl_c_ends_a_start_waiting_out_another_node_and_leaves_nothing(harness, client, kz, path):
    """A start() waiting for another session's node to go is a wait like an
    acquire's: Ctrl-C ends it, and the other node stays as it was."""
    node_path = f"{path}/worker-1"
    kz.create(node_path, b"earlier", ephemeral=True, makepath=True)
    node = client.PersistentNode(node_path, b"mine")
    helper = run_in_thread(lambda: (until_watched(harness, node_path, client.client_id[0]),
                                    os.kill(os.getpid(), signal.SIGINT)))
    with pytest.raises(KeyboardInterrupt):
        node.start()
    helper.result()
    assert not node.is_started
    data, stat = kz.get(node_path)
    assert (data, stat.owner_session_id) == (b"earlier", kz.client_id[0])
    kz.delete(node_path)
    node.start()
    assert kz.get(node_path)[0] == b"mine"
    node.close()


def test_persistent_node_arguments(client, kz, path):
    with pytest.raises(TypeError):
        client.PersistentNode(f"{path}/n", "not bytes")
    with pytest.raises(zoolock.BadArgumentsError):
        client.PersistentNode("relative/n")
    with pytest.raises(zoolock.BadArgumentsError):
        client.PersistentNode("/")
    with pytest.raises(TypeError):
        zoolock.PersistentNode(kz, f"{path}/n")
    node = client.PersistentNode(f"{path}/n")
    with pytest.raises(TypeError):
        node.set_data("not bytes")
    with pytest.raises(ValueError):
        node.set_data(b"x" * 1_000_001)
    node.start()
    assert kz.get(f"{path}/n")[0] == b""
    node.close()
