"""Bad inputs and misuses. First the catalogue every language runs
(tests/bad_inputs.txt; the cases are in bad_input_cases.py): each entry ends
in the exception kazoo would raise for the core's error (python/src/errors.rs)
or in its documented outcome, within its bound, and leaves no ephemeral node.
Then what only Python can get wrong: argument types and kazoo's options."""

import threading
import time
import uuid
from dataclasses import dataclass, field

import pytest
import zoolock
from bad_input_cases import CASES
from conftest import SESSION_TIMEOUT
from zkh import ROOT

LANGUAGE = "python"

#: The exception each core error variant is raised as (python/src/errors.rs).
ERRORS = {
    "InvalidPath": zoolock.BadArgumentsError,
    "InvalidConnectString": ValueError,
    "InvalidArgument": ValueError,
    "InconsistentLeases": ValueError,
    "ConnectTimeout": zoolock.KazooTimeoutError,
    "NoChroot": zoolock.NoNodeError,
    "ConnectionLoss": zoolock.ConnectionLoss,
    "Cancelled": zoolock.CancelledError,
    "Closed": zoolock.ConnectionClosedError,
    "Forked": zoolock.ForkedError,
    "NoAuth": zoolock.NoAuthError,
    "AuthFailed": zoolock.AuthFailedError,
    "NoNode": zoolock.NoNodeError,
    "NodeExists": zoolock.NodeExistsError,
    "BadVersion": zoolock.BadVersionError,
    "NotEmpty": zoolock.NotEmptyError,
    "SessionExpired": zoolock.SessionExpiredError,
    "NoChildrenForEphemerals": zoolock.NoChildrenForEphemeralsError,
    "InvalidAcl": zoolock.InvalidACLError,
    "ZooKeeper": zoolock.ZookeeperError,
    "NotOwner": RuntimeError,
    "Tls": zoolock.TlsError,
}

#: What a call that returns must return, for the outcomes that are not errors.
RETURNS = {"acquired": True, "not-acquired": False, "released-nothing": False}


@dataclass
class Entry:
    id: str
    expect: str
    within: float
    not_for: dict = field(default_factory=dict)


def read_catalogue():
    entries = []
    for number, line in enumerate((ROOT / "tests" / "bad_inputs.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        assert len(fields) in (4, 5), f"bad_inputs.txt:{number}: expected 4 or 5 fields"
        not_for = {}
        for skip in fields[4].split(";") if len(fields) == 5 else []:
            language, _, reason = skip.partition(":")
            assert reason.strip(), f"bad_inputs.txt:{number}: no reason for {language}"
            not_for[language.strip()] = reason.strip()
        entries.append(Entry(fields[0], fields[1], float(fields[2]), not_for))
    return entries


ENTRIES = read_catalogue()


class Ctx:
    """What a case is handed: its entry, clients, paths of its own, ``check``."""

    def __init__(self, entry, harness, connect, kz):
        self.entry, self.harness, self.connect, self.kz = entry, harness, connect, kz
        #: Every path of the entry lies below this one.
        self.base = f"/zoolock-py/bad-input/{entry.id}-{uuid.uuid4().hex[:8]}"
        self.clients = []
        self.checks = 0

    def client(self, start=True, **kwargs):
        kwargs.setdefault("hosts", self.connect)
        kwargs.setdefault("timeout", SESSION_TIMEOUT)
        client = zoolock.KazooClient(**kwargs)
        self.clients.append(client)
        if start:
            client.start(timeout=15)
        return client

    def path(self, name):
        return f"{self.base}/{name}"

    def check(self, what, call):
        """Calls ``call()`` and checks its outcome against the entry's."""
        self.checks += 1
        expect = self.entry.expect
        try:
            result = call()
        except Exception as err:  # noqa: BLE001 - compared with the expected type
            wanted = zoolock.LockTimeout if expect == "timed-out" else ERRORS.get(expect)
            if type(err) not in (wanted if isinstance(wanted, tuple) else (wanted,)):
                raise AssertionError(f"{what}: expected {expect}, got {type(err).__name__}: {err}") from err
            return
        if expect != "ok":
            assert expect in RETURNS and result is RETURNS[expect], f"{what}: expected {expect}, got {result!r}"

    def close(self):
        for client in self.clients:
            client.stop()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_catalogue_entry(entry, harness, connect, kz):
    if LANGUAGE in entry.not_for:
        assert entry.id not in CASES, "implemented, though the catalogue says it does not apply"
        pytest.skip(entry.not_for[LANGUAGE])
    case = CASES.get(entry.id)
    assert case is not None, f"{entry.id} is in the catalogue but not implemented for Python"
    ctx = Ctx(entry, harness, connect, kz)
    outcome = {}
    if hasattr(case, "prepare"):
        case.prepare()  # a server of its own, started before the clock runs

    def run():
        try:
            case(ctx)
        except BaseException as err:  # noqa: B036 - handed to the test thread
            outcome["error"] = err

    started = time.monotonic()
    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(entry.within)
    try:
        assert not runner.is_alive(), f"{entry.id} did not return within {entry.within} s"
        if "error" in outcome:
            raise outcome["error"]
        assert ctx.checks, "the case checked nothing"
        nodes = harness.call("tree", path=ctx.base)["nodes"]
        orphans = [n["path"] for n in nodes if n["ephemeral_owner"] != "0"]
        assert not orphans, f"left ephemeral nodes: {orphans}"
    finally:
        ctx.close()
    print(f"{entry.id}: {entry.expect} in {time.monotonic() - started:.2f} s")


def test_every_case_is_in_the_catalogue():
    assert set(CASES) <= {e.id for e in ENTRIES}


# What only Python can get wrong.


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


def test_a_znode_path_not_utf8_is_bad_arguments(client, path):
    # Refused as the core refuses it (the catalogue's path-not-utf8), not as a UnicodeEncodeError.
    bad = path + "/\udcff"
    for name, call in (("exists", client.exists), ("get", client.get), ("create", client.create),
                       ("delete", client.delete), ("get_children", client.get_children), ("get_acls", client.get_acls)):
        with pytest.raises(zoolock.BadArgumentsError, match="not UTF-8"):
            call(bad)


def test_identifiers_are_strs_of_anything(client, kz, path):
    lock = client.Lock(path, identifier=1234)
    assert lock.identifier == "1234"
    assert client.Lock(path, identifier=0).identifier == ""  # kazoo: str(identifier or "")
    with lock:
        assert lock.contenders() == ["1234"]


def test_client_arguments(connect):
    with pytest.raises(TypeError, match="unexpected keyword"):
        zoolock.KazooClient(hosts=connect, no_such_option=1)
    for kwargs in ({"handler": object()}, {"read_only": True},
                   {"randomize_hosts": False}, {"connection_retry": {"max_tries": 1}}):
        with pytest.raises(TypeError, match="does not support"):
            zoolock.KazooClient(hosts=connect, **kwargs)
    # kazoo's defaults are accepted as given.
    zoolock.KazooClient(hosts=connect, read_only=None, randomize_hosts=True, use_ssl=False, verify_certs=True)
    with pytest.raises(ValueError):
        zoolock.KazooClient(hosts=connect, default_acl=[(64, ("world", "anyone"))])


def test_hosts_as_a_list_with_a_chroot(kz, connect, path):
    kz.ensure_path("/chroot-test")
    client = zoolock.KazooClient(hosts=connect.split(",") + ["/chroot-test"])
    assert client.hosts == [(host, int(port)) for host, port in (h.rsplit(":", 1) for h in connect.split(","))]
    assert client.chroot == "/chroot-test"
    client.start()
    try:
        with client.Lock(path):
            assert len(kz.get_children("/chroot-test" + path)) == 1
    finally:
        client.stop()


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
