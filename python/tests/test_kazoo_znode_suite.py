"""kazoo's own tests of the znode API, watches and election, run against zoolock.

The tests are kazoo 2.11's ``test_client.py`` (node operations and
transactions), ``test_watchers.py`` and ``test_election.py`` as its wheel
ships them: imported, subclassed and never edited. Unlike
``test_kazoo_suite.py`` (kazoo clients with zoolock's recipes), here
``self.client`` and every client kazoo's harness makes is a zoolock
``KazooClient``: the calls under test are zoolock's. The adapter changes only
the harness around them:

- the ensemble is the suite's zkh server, and sessions connect through its
  proxies so that ``expire_session()`` expires a zoolock session on the
  server (kazoo's own trick reaches into kazoo's connection);

The tests not run, and why, are in ``NOT_RUN`` (docs/python.md lists them too);
``TestAdapter`` checks what part of them zoolock does support.
"""

import types
from pathlib import Path

import pytest
import secure_servers
import zoolock
from conftest import DEADLINE
from kazoo_shipped import adapter
from kazoo import exceptions as kazoo_exceptions
from kazoo import testing as kazoo_testing
from kazoo.protocol.states import KazooState
from kazoo.tests import test_client as shipped_client
from kazoo.tests import test_election as shipped_election
from kazoo.tests import test_watchers as shipped_watchers

# kazoo's test_bad_session_expire raises from a listener on purpose: zoolock reports it as unraisable.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function TestConnection.test_bad_session_expire"
    ":pytest.PytestUnraisableExceptionWarning")

_PRIVATE = "sets or reads kazoo's private connection state (client._state, _connection, _queue)"

#: Tests of the shipped classes that are not run against zoolock, by "class.test", with the reason.
NOT_RUN = {
    "TestClient.test_client_id": "asserts the 16-byte session password, which zoolock never exposes "
                                 "(client_id is (session_id, None); docs/python.md)",
    "TestClient.test_create_on_broken_connection": _PRIVATE,
    "TestClient.test_invalid_auth": _PRIVATE,
    "TestClient.test_request_queuing_session_recovered": _PRIVATE + " with kazoo's handler and retry options",
    "TestClient.test_request_queuing_session_expired": _PRIVATE + " with kazoo's handler and retry options",
    "TestClient.test_update_host_list": "a kazoo client's set_hosts over a 3-server cluster whose servers it stops "
                                        "(test_kazoo_client_calls.test_set_hosts tests zoolock's)",
    "TestAuthentication.test_add_auth_on_reconnect": _PRIVATE + " (client._connection._socket, client.auth_data)",
    "TestClient.test_create_large_value": "zoolock refuses data over 1 MB before sending, with a ValueError; "
                                          "kazoo sends it and reports the server's dropped connection as "
                                          "ConnectionLoss (TestAdapter.test_large_values)",
    "TestClientTransactions.test_bad_transaction":
        "compares results[i].__class__ with kazoo's class: zoolock's are zoolock's exceptions, subclasses of "
        "kazoo's (TestAdapter.test_failed_transaction_results)",
    "TestConnection.test_chroot_warning": "sets kazoo's chroot attribute and expects kazoo's warning about a "
                                          "missing chroot (zoolock creates it, as kazoo then does)",
    "TestConnection.test_listener_only_called_on_real_state_change": "calls kazoo's private _make_state_change",
    "TestConnection.test_close_connecting_connection": _PRIVATE + " (client._call)",
    "TestConnection.test_closed": _PRIVATE,
    "TestNonChrootClient.test_unchroot": "kazoo's unchroot helper and a settable chroot: kazoo internals",
    "KazooChildrenWatcherTests.test_child_watcher_remove_session_watcher":
        "reads kazoo's private ChildrenWatch._session_watcher and client.state_listeners",
}

#: Classes of test_client.py not run at all: they test kazoo's connection handling, not node operations.
CLASSES_NOT_RUN = {
    "TestClientTransitions": "connection state transitions of kazoo's connection (lose_connection via _call)",
    "TestClientConstructor": "kazoo's constructor internals (handler, retry dicts, host parsing)",
    "TestSessionCallbacks": "kazoo's private _session_callback",
}


class _Server(types.SimpleNamespace):
    """A server as kazoo's harness sees one."""


class _Cluster:
    """What kazoo's harness asks of its cluster, answered by zkh's server."""

    def __init__(self, zkh):
        self.zkh = zkh

    def _servers(self):
        return [_Server(running=s["running"], address=address)
                for s, address in zip(self.zkh.call("info")["servers"], self.zkh.connect.split(","))]

    def __iter__(self):
        return iter(self._servers())

    def __getitem__(self, index):
        return self._servers()[index]

    def start(self):
        self.zkh.call("wait_ready")

    def terminate(self):
        """The server belongs to the suite's fixture, not to one test."""


class _TlsCluster(_Cluster):
    """The shared mutual-TLS server (secure_servers.py), as kazoo's SSL harness sees it."""

    def _servers(self):
        secure = self.zkh.secure.split(",")
        return [_Server(running=s.running, address=s.address, secure_address=address)
                for s, address in zip(super()._servers(), secure)]

    def get_ssl_client_configuration(self):
        files = self.zkh.tls_files
        return {name: Path(files[key]).read_bytes()
                for name, key in (("client_key", "client_key"), ("client_cert", "client_cert"), ("ca_cert", "ca"))}


class ZoolockClient(zoolock.KazooClient):
    """zoolock's client, knowing the suite's server for the harness."""

    zkh = None


class OnZoolock:
    """The harness part of kazoo's ``KazooTestHarness`` that differs here."""

    zkh = None

    @property
    def cluster(self):
        return _Cluster(self.zkh)

    @property
    def servers(self):
        return self.zkh.connect

    def _make(self, hosts, **options):
        options.setdefault("timeout", self.DEFAULT_CLIENT_TIMEOUT)
        client = ZoolockClient(hosts, **options)
        client.zkh = self.zkh
        self._clients.append(client)
        return client

    def _get_client(self, **client_options):
        return self._make(self.hosts, **client_options)

    def _get_nonchroot_client(self):
        return self._make(self.servers)

    def expire_session(self, event_factory):
        """Expires ``self.client``'s session on the server (zkh's proxy closes
        it from a second connection), then waits, as kazoo's harness does,
        until the client heard LOST and CONNECTED again."""
        lost, safe = event_factory(), event_factory()

        def watch(state):
            if state == KazooState.LOST:
                lost.set()
            elif lost.is_set() and state == KazooState.CONNECTED:
                safe.set()
                return True

        self.client.add_listener(watch)
        self.zkh.expire(self.client.client_id[0])
        assert lost.wait(DEADLINE), "the client did not hear its session expire"
        assert safe.wait(DEADLINE), "the client did not connect again"
        self.client.retry(self.client.get_async, "/")

    @classmethod
    def tearDownClass(cls):
        """kazoo's stops its global cluster here; the suite's fixture owns the server."""


@pytest.fixture(autouse=True)
def on_the_server(request, harness):
    test = request.instance
    if isinstance(test, OnZoolock):
        test.zkh = harness


adapted = adapter(NOT_RUN)


@adapted(shipped_client.TestClient)
class TestKazooClient(OnZoolock, shipped_client.TestClient):
    pass


@adapted(shipped_client.TestClientTransactions)
class TestKazooTransactions(OnZoolock, shipped_client.TestClientTransactions):
    pass


@adapted(shipped_client.TestConnection)
class TestKazooConnection(OnZoolock, shipped_client.TestConnection):
    pass


@adapted(shipped_client.TestCallbacks)
class TestKazooCallbacks(OnZoolock, shipped_client.TestCallbacks):
    pass


@adapted(shipped_client.TestAuthentication)
class TestKazooAuthentication(OnZoolock, shipped_client.TestAuthentication):
    pass


@adapted(shipped_client.TestNonChrootClient)
class TestKazooNonChrootClient(OnZoolock, shipped_client.TestNonChrootClient):
    pass


@adapted(shipped_client.TestSSLClient)
class TestKazooSSLClient(OnZoolock, shipped_client.TestSSLClient):
    @property
    def cluster(self):
        return _TlsCluster(self.zkh)

    @property
    def secure_servers(self):
        return self.zkh.secure

    def setUp(self):
        self.zkh = secure_servers.server("mutual_tls")
        super().setUp()


@adapted(shipped_client.TestReconfig)
class TestKazooReconfig(OnZoolock, shipped_client.TestReconfig):
    """On kazoo's reconfig ensemble (secure_servers.py: 3 servers, started on first use)."""

    def setUp(self):
        self.zkh = secure_servers.server("reconfig")
        super().setUp()


@adapted(shipped_watchers.KazooDataWatcherTests)
class TestKazooDataWatch(OnZoolock, shipped_watchers.KazooDataWatcherTests):
    pass


@adapted(shipped_watchers.KazooChildrenWatcherTests)
class TestKazooChildrenWatch(OnZoolock, shipped_watchers.KazooChildrenWatcherTests):
    pass


@adapted(shipped_watchers.KazooPatientChildrenWatcherTests)
class TestKazooPatientChildrenWatch(OnZoolock, shipped_watchers.KazooPatientChildrenWatcherTests):
    pass


@adapted(shipped_election.KazooElectionTests)
class TestKazooElection(OnZoolock, shipped_election.KazooElectionTests):
    pass


class TestAdapter(OnZoolock, kazoo_testing.KazooTestCase):
    """The adapter itself, and the parts of ``NOT_RUN``'s tests that zoolock supports."""

    def test_the_client_under_test_is_zoolocks(self):
        assert isinstance(self.client, zoolock.KazooClient) and self.client.chroot.startswith("/kazootests")
        node = self.client.create("/n", b"x", ephemeral=True)
        assert self.client.get(node)[1].ephemeralOwner == self.client.client_id[0]

    def test_large_values(self):
        self.client.create("/1", b"a" * (512 * 1024))
        assert self.client.exists("/1")
        with pytest.raises(ValueError):
            self.client.create("/2", b"a" * (2 * 1024 * 1024))
        assert self.client.exists("/2") is None

    def test_empty_acl_is_the_default(self):
        self.client.create("/1", acl=[])
        assert self.client.exists("/1")

    def test_failed_transaction_results(self):
        t = self.client.transaction()
        t.create("/fred")
        t.delete("/smith")
        t.create("/george")
        results = t.commit()
        assert [type(r) for r in results] == [zoolock.RolledBackError, zoolock.NoNodeError,
                                             zoolock.RuntimeInconsistency]
        assert isinstance(results[0], kazoo_exceptions.RolledBackError)
        assert isinstance(results[1], kazoo_exceptions.NoNodeError)
        assert self.client.exists("/fred") is None


def _shipped_tests(cls):
    return {name for name in dir(cls) if name.startswith("test")}


def test_every_shipped_test_is_run_or_listed():
    """A kazoo upgrade that adds or renames tests shows here."""
    run = [shipped_client.TestClient, shipped_client.TestClientTransactions, shipped_client.TestConnection,
           shipped_client.TestCallbacks, shipped_client.TestAuthentication,
           shipped_client.TestNonChrootClient, shipped_client.TestSSLClient, shipped_client.TestReconfig,
           shipped_watchers.KazooDataWatcherTests,
           shipped_watchers.KazooChildrenWatcherTests, shipped_watchers.KazooPatientChildrenWatcherTests,
           shipped_election.KazooElectionTests]
    listed = {f"{cls.__name__}.{name}" for cls in run for name in _shipped_tests(cls)}
    assert set(NOT_RUN) <= listed
    classes = {name for name, value in vars(shipped_client).items()
               if isinstance(value, type) and name.startswith("Test") and value.__module__ == shipped_client.__name__}
    assert classes == {cls.__name__ for cls in run if cls.__module__ == shipped_client.__name__} | set(CLASSES_NOT_RUN)
