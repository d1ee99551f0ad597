"""Bad input is refused with kazoo's exception types, before any network call."""

import time

import pytest
import zoolock


@pytest.mark.parametrize("bad", ["", "relative/path", "/ends/", "/a//b", "/a/../b", "/", "/zookeeper/x"])
def test_bad_paths_are_value_errors(client, bad):
    for make in (client.Lock, client.ReadLock, client.WriteLock, client.Semaphore):
        with pytest.raises(ValueError):
            make(bad)


def test_wrong_types_are_type_errors(client, path):
    with pytest.raises(TypeError):
        client.Lock(42)
    with pytest.raises(TypeError):
        client.Lock(path, extra_lock_patterns="__lock__")
    with pytest.raises(TypeError):
        zoolock.Lock("not a client", path)
    lock = client.Lock(path)
    with pytest.raises(TypeError):
        lock.acquire(timeout="1")
    with pytest.raises(TypeError):
        lock.acquire(lease="soon")
    for bad in ("2", 2.5, True):
        with pytest.raises(TypeError):
            client.Semaphore(path, max_leases=bad)
    with pytest.raises(TypeError):
        client.Lock(path, scheme=1)
    with pytest.raises(ValueError):
        client.Lock(path, scheme="zookeeper")


def test_bad_numbers_are_value_errors(client, path):
    lock = client.Lock(path)
    for kwargs in ({"timeout": -1}, {"timeout": float("nan")}, {"lease": -1}, {"lease": 0}):
        with pytest.raises(ValueError):
            lock.acquire(**kwargs)
    with pytest.raises(ValueError):
        lock.acquire(blocking=False, timeout=1)  # as kazoo (threading.Lock) refuses it
    for bad in (0, -1, 2**40):
        with pytest.raises(ValueError):
            client.Semaphore(path, max_leases=bad)
    assert client.Lock(path).acquire(timeout=float("inf"))


def test_identifiers_are_strs_of_anything(client, kz, path):
    lock = client.Lock(path, identifier=1234)
    assert lock.identifier == "1234"
    assert client.Lock(path, identifier=0).identifier == ""  # kazoo: str(identifier or "")
    with lock:
        assert lock.contenders() == ["1234"]


def test_release_without_acquire_is_false(client, path):
    assert client.Lock(path).release() is False
    assert client.Semaphore(path).release() is False


def test_client_arguments(connect):
    with pytest.raises(TypeError, match="unexpected keyword"):
        zoolock.KazooClient(hosts=connect, no_such_option=1)
    for kwargs in ({"handler": object()}, {"client_id": (1, b"x")}, {"use_ssl": True}, {"read_only": True},
                   {"randomize_hosts": False}, {"connection_retry": {"max_tries": 1}}):
        with pytest.raises(TypeError, match="does not support"):
            zoolock.KazooClient(hosts=connect, **kwargs)
    for timeout in (0, -1):
        with pytest.raises(ValueError):
            zoolock.KazooClient(hosts=connect, timeout=timeout)
    # kazoo's defaults are accepted as given.
    zoolock.KazooClient(hosts=connect, read_only=None, randomize_hosts=True, use_ssl=False, verify_certs=True)
    for bad_hosts in ("", "host:notaport", "host:99999"):
        client = zoolock.KazooClient(hosts=bad_hosts)
        started = time.monotonic()
        with pytest.raises(ValueError):
            client.start()
        assert time.monotonic() - started < 1


def test_hosts_as_a_list_with_a_chroot(kz, connect, path):
    kz.ensure_path("/chroot-test")
    client = zoolock.KazooClient(hosts=connect.split(",") + ["/chroot-test"])
    assert client.hosts == connect + "/chroot-test"
    client.start()
    try:
        with client.Lock(path):
            assert len(kz.get_children("/chroot-test" + path)) == 1
    finally:
        client.stop()
    missing = zoolock.KazooClient(hosts=connect + "/no-such-chroot")
    with pytest.raises(zoolock.NoNodeError):
        missing.start()


def test_acls_and_auth(connect, kz, path):
    from kazoo.client import KazooClient as Kazoo
    from kazoo.exceptions import NoAuthError
    from zoolock.security import make_digest_acl

    acl = make_digest_acl("alice", "secret", all=True)
    alice = zoolock.KazooClient(hosts=connect, auth_data={("digest", "alice:secret")}, default_acl=[acl])
    kazoo_alice = Kazoo(hosts=connect, auth_data=[("digest", "alice:secret")])
    alice.start()
    kazoo_alice.start()
    try:
        lock = alice.Lock(path)
        with lock:
            acls, _ = kazoo_alice.get_acls(f"{path}/{lock.node}")
            assert [(a.perms, a.id.scheme, a.id.id) for a in acls] == [(31, "digest", acl.id.id)]
            with pytest.raises(NoAuthError):
                kz.get(f"{path}/{lock.node}")
    finally:
        alice.stop()
        kazoo_alice.stop()
    with pytest.raises(ValueError):
        zoolock.KazooClient(hosts=connect, default_acl=[(64, ("world", "anyone"))])
