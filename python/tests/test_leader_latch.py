"""LeaderLatch (Curator's): one leader with kazoo's Election on the same
path, a term lost to an expiry campaigned for again, a client's restart,
Ctrl-C in a wait, and what start, close and the arguments refuse."""

import os
import signal
import subprocess
import sys
import threading

import pytest
import zoolock
from conftest import DEADLINE, SESSION_TIMEOUT, run_in_thread, until_children


def test_leads_beside_kazoo_s_election_and_hands_over_on_close(client, kz, path):
    latch = client.LeaderLatch(path, "zoolock")
    assert isinstance(latch, zoolock.LeaderLatch) and not latch.has_leadership
    assert kz.exists(path) is None, "nothing is sent before start()"
    latch.start()
    assert latch.wait(DEADLINE) and latch.has_leadership
    token = latch.fencing_token
    assert isinstance(token, int)

    kazoo_led = threading.Event()
    election = kz.Election(path, "kazoo")
    runner = run_in_thread(election.run, kazoo_led.set)
    until_children(kz, path, lambda c: len(c) == 2, "kazoo's candidate queued")
    assert election.contenders() == ["zoolock", "kazoo"]
    assert not kazoo_led.is_set()
    with pytest.raises(ValueError):
        latch.start()

    latch.close()
    assert kazoo_led.wait(DEADLINE), "kazoo's candidate leads once the latch closed"
    runner.result()
    assert not latch.has_leadership and latch.fencing_token is None
    with pytest.raises(zoolock.ConnectionClosedError):
        latch.wait(0)
    with pytest.raises(zoolock.ConnectionClosedError):
        latch.start()
    latch.close()
    with client.LeaderLatch(path) as again:
        assert again.wait(DEADLINE)
    assert kz.get_children(path) == []


def test_a_term_lost_to_an_expiry_is_led_again(harness, client, kz, path):
    latch = client.LeaderLatch(path)
    latch.start()
    assert latch.wait(DEADLINE)
    first, session = latch.fencing_token, client.client_id[0]
    harness.expire(session)
    owners = threading.Event()

    def new_owner(children):
        owned = [kz.exists(f"{path}/{c}") for c in children]
        if any(stat is not None and stat.owner_session_id not in (0, session) for stat in owned):
            owners.set()
            return False

    kz.ChildrenWatch(path, new_owner)
    assert owners.wait(DEADLINE), "a node of the next session"
    assert latch.wait(DEADLINE) and latch.fencing_token > first
    latch.close()
    assert kz.get_children(path) == []


def test_a_client_s_restart_ends_the_candidacy_until_started_again(make_client, kz, path):
    """The latch's session closed with ``restart()``: a wait says so instead
    of waiting for ever on a latch that never started; ``start()`` joins on
    the new session."""
    client = make_client()
    latch = client.LeaderLatch(path)
    latch.start()
    assert latch.wait(DEADLINE)
    client.restart()
    with pytest.raises(zoolock.ConnectionClosedError):
        latch.wait(DEADLINE)
    assert not latch.has_leadership
    latch.start()
    assert latch.wait(DEADLINE) and latch.has_leadership
    latch.close()
    assert kz.get_children(path) == []


LEAD = """
import sys, zoolock
client = zoolock.KazooClient(hosts=sys.argv[1], timeout=float(sys.argv[3]))
client.start()
latch = zoolock.LeaderLatch(client, sys.argv[2], "killed")
latch.start()
assert latch.wait(15)
print(latch.fencing_token, flush=True)
sys.stdin.read()
"""


def test_a_killed_leader_s_term_passes_on_once_its_session_expires(client, kz, connect, path):
    """A leader process killed while it leads: its node stays until its
    session expires (nobody else leads meanwhile), then the waiting
    candidate leads with a greater token."""
    leader = subprocess.Popen([sys.executable, "-c", LEAD, connect, path, str(SESSION_TIMEOUT)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        killed_token = int(leader.stdout.readline())
        latch = client.LeaderLatch(path, "next")
        latch.start()
        until_children(kz, path, lambda c: len(c) == 2, "the next candidate queued")
        leader.send_signal(signal.SIGKILL)
        leader.wait()
    finally:
        leader.kill()
        leader.wait()
    assert latch.wait(DEADLINE), "leads once the killed leader's session expired"
    assert latch.fencing_token > killed_token
    assert kz.Election(path).contenders() == ["next"]
    latch.close()


def test_ctrl_c_ends_a_wait_and_keeps_the_candidacy(make_client, client, kz, path):
    leader = make_client().LeaderLatch(path, "leader")
    leader.start()
    assert leader.wait(DEADLINE)
    latch = client.LeaderLatch(path, "waiting")
    latch.start()
    helper = run_in_thread(lambda: (until_children(kz, path, lambda c: len(c) == 2, "the candidate queued"),
                                    os.kill(os.getpid(), signal.SIGINT)))
    with pytest.raises(KeyboardInterrupt):
        latch.wait()
    helper.result()
    assert len(kz.get_children(path)) == 2, "Ctrl-C ended the wait, not the candidacy"
    leader.close()
    assert latch.wait(DEADLINE)
    latch.close()
    assert kz.get_children(path) == []


def test_leader_latch_arguments(client, kz, path):
    with pytest.raises(zoolock.BadArgumentsError):
        client.LeaderLatch("relative")
    with pytest.raises(TypeError):
        zoolock.LeaderLatch(kz, path)
    latch = client.LeaderLatch(path)
    with pytest.raises(ValueError):
        latch.wait(-1)
    assert latch.wait(0) is False, "not started: it does not lead"
