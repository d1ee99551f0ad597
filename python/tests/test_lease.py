"""NonBlockingLease and MultiNonBlockingLease, shared with kazoo's on one path."""

import datetime
import socket

import pytest
import zoolock
from kazoo.recipe.lease import MultiNonBlockingLease as KazooMultiLease
from kazoo.recipe.lease import NonBlockingLease as KazooLease

NOW = datetime.datetime(2026, 11, 26, 23, 0, 0)
HOUR = datetime.timedelta(hours=1)


def clock(minutes):
    return lambda: NOW + datetime.timedelta(minutes=minutes)


def test_zoolock_and_kazoo_share_one_lease(client, kz, path):
    ours = client.NonBlockingLease(path, HOUR, identifier="zoolock", utcnow=clock(0))
    assert ours and ours.obtained and ours.identifier == "zoolock" and ours.path == path
    assert kz.get(path + "/lease_holder")[0] == b'{"version": 1, "holder": "zoolock", "end": "2026-11-27T00:00:00"}'
    assert not KazooLease(kz, path, HOUR, identifier="kazoo", utcnow=clock(59))
    assert client.NonBlockingLease(path, HOUR, identifier="zoolock", utcnow=clock(30)), "a renewal"
    assert not KazooLease(kz, path, HOUR, identifier="kazoo", utcnow=clock(60)), "renewed to 00:30"
    assert KazooLease(kz, path, HOUR, identifier="kazoo", utcnow=clock(90))
    assert not zoolock.NonBlockingLease(client, path, HOUR, identifier="zoolock", utcnow=clock(91))
    assert zoolock.NonBlockingLease(client, path, HOUR, identifier="zoolock", utcnow=clock(150))
    # Each try's lock node came and went, kazoo's and ours alike.
    assert kz.get_children(path) == ["lease_holder"]


def test_multi_leases_count_kazoo_and_zoolock_holders_together(client, kz, path):
    assert client.MultiNonBlockingLease(2, path, HOUR, identifier="z1", utcnow=clock(0))
    assert KazooMultiLease(kz, 2, path, HOUR, identifier="k1", utcnow=clock(0))
    assert not client.MultiNonBlockingLease(2, path, HOUR, identifier="z2", utcnow=clock(1))
    assert not KazooMultiLease(kz, 2, path, HOUR, identifier="k2", utcnow=clock(1))
    assert client.MultiNonBlockingLease(2, path, HOUR, identifier="z2", utcnow=clock(61))


def test_default_identifier_and_bad_input(client, kz, path):
    lease = client.NonBlockingLease(path, HOUR, utcnow=clock(0))
    assert lease and lease.identifier == socket.gethostname()
    assert KazooLease(kz, path, HOUR, utcnow=clock(30)), "kazoo's default identifier is the same: a renewal"
    with pytest.raises(ValueError, match="duration"):
        client.NonBlockingLease(path, -HOUR)
    with pytest.raises(zoolock.BadArgumentsError):
        client.NonBlockingLease("relative", HOUR)
    kz.set(path + "/lease_holder", b"not json")
    with pytest.raises(ValueError, match="not JSON"):
        client.NonBlockingLease(path, HOUR, utcnow=clock(0))


def test_a_lease_outlives_its_session_and_a_partitioned_try_completes_once_healed(client, kz, harness, path):
    import threading

    from conftest import DEADLINE, run_in_thread

    assert client.NonBlockingLease(path, HOUR, identifier="zoolock", utcnow=clock(0))
    harness.expire(client.client_id[0])
    # The record is persistent: the lease ends at its time, not with the session (kazoo's too).
    assert not KazooLease(kz, path, HOUR, identifier="kazoo", utcnow=clock(30))
    assert client.NonBlockingLease(path, HOUR, identifier="zoolock", utcnow=clock(30)), "renewed on the next session"
    suspended = threading.Event()
    client.add_listener(lambda state: suspended.set() if state == "SUSPENDED" else None)
    session_id = client.client_id[0]
    harness.partition(session_id)
    try:
        assert suspended.wait(DEADLINE)
        trying = run_in_thread(lambda: bool(client.NonBlockingLease(path, HOUR, identifier="zoolock", utcnow=clock(45))))
    finally:
        harness.heal(session_id)
    assert trying.result() is True
    assert kz.get_children(path) == ["lease_holder"], "no lock node left by the try"
