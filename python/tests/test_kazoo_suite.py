"""kazoo's own lock tests, run against zoolock.

The tests are kazoo 2.11's ``kazoo/tests/test_lock.py`` as its wheel ships
them: imported, subclassed and never edited (their ``except
kazoo.exceptions...`` clauses included; zoolock's exceptions are also kazoo's).
The adapter below changes only the harness around them:

- ``self.client`` and ``self._get_client()`` are kazoo clients for what the
  tests inspect (``get``, ``set``, ``ensure_path``, ``handler``), whose
  ``Lock``, ``ReadLock``, ``WriteLock`` and ``Semaphore`` are zoolock's, made
  on a zoolock client of the same ensemble and chroot, started and stopped
  with the kazoo one;
- the ensemble is zkh's (3 servers, as kazoo's harness starts), one for the
  whole module, and sessions connect through its proxies so that
  ``expire_session()`` expires, on the server, both of ``self.client``'s
  sessions — kazoo's own trick only fakes an expiry inside kazoo's connection
  and cannot reach zoolock's session.

The tests not run here, and why, are listed in ``NOT_RUN``; the ones waiting
for a fix, in ``WAITING_FOR``.
"""

import signal
import threading
import types

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread, until_children
from kazoo_shipped import adapter
from kazoo import testing as kazoo_testing  # as a module, like kazoo's tests below
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState
from kazoo.tests import test_lock as shipped  # only as a module: pytest must not collect kazoo's classes as they are
from zkh import Harness

# kazoo's harness starts its first client before the chroot exists; kazoo warns about that.
pytestmark = pytest.mark.filterwarnings("ignore:No chroot path exists:UserWarning")

#: kazoo's harness runs a 3-node cluster; so does this module.
SERVERS = 3
#: After this long a test is ended (see ``on_the_ensemble``): a hang becomes a failure.
TEST_DEADLINE = 4 * DEADLINE

#: Tests that cannot run against zoolock, by "class.test", with the reason.
NOT_RUN = {
    "TestSemaphore.test_handle_session_loss":
        "waits on kazoo's private Semaphore.wake_event (the rest of it: "
        "TestAdapter.test_semaphore_handle_session_loss_without_wake_event)",
    "TestSemaphore.test_acquire_after_cancelled":
        "asserts kazoo's undocumented Semaphore.cancelled attribute, which zoolock does not have (the rest "
        "of it: TestAdapter.test_semaphore_acquire_after_cancelled_without_cancelled)",
    "TestSequence.test_get_predecessor":
        "unit-tests kazoo's private Lock._get_predecessor on kazoo's own Lock with a MagicMock client: "
        "no zoolock code would run (zoolock also queues behind Curator's '-lock-' nodes without "
        "extra_lock_patterns; docs/interop.md)",
    "TestSequence.test_get_predecessor_go":
        "unit-tests kazoo's private Lock._get_predecessor on kazoo's own Lock with a MagicMock client: "
        "no zoolock code would run",
}

#: Tests that fail until a fix lands, by "class.test": (reason, deadline in seconds). They run as
#: strict xfails, so a fix turns them into failures until they leave this list. Issue 10 items 3
#: (a Semaphore that holds: acquire() blocked forever) and 4 (a Lock that holds: acquire(timeout)
#: raised LockTimeout) kept TestSemaphore.test_multiple_acquire_and_release and
#: KazooLockTests.test_lock_no_double_calls here until branch holder fixed them.
WAITING_FOR = {}


class KazooWithZoolockRecipes(KazooClient):
    """A kazoo client whose lock recipes are zoolock's.

    Everything else (reads and writes the tests inspect with, listeners, the
    handler) is kazoo's. The zoolock client shares the hosts, chroot and
    session timeout, and starts and stops with this one.
    """

    def __init__(self, hosts, **options):
        super().__init__(hosts, **options)
        self.zoolock = zoolock.KazooClient(hosts=hosts, timeout=options.get("timeout", 10.0))
        #: Every recipe made, for the deadline to cancel.
        self.recipes = []
        self.Lock = self._recipe(self.zoolock.Lock)
        self.ReadLock = self._recipe(self.zoolock.ReadLock)
        self.WriteLock = self._recipe(self.zoolock.WriteLock)
        self.Semaphore = self._recipe(self.zoolock.Semaphore)

    def _recipe(self, make):
        def recipe(*args, **kwargs):
            made = make(*args, **kwargs)
            self.recipes.append(made)
            return made

        return recipe

    def start(self, timeout=15):
        super().start(timeout)
        # The chroot may not exist yet: both clients create it on their first write.
        self.zoolock.start(timeout)

    def stop(self):
        self.zoolock.stop()
        super().stop()


class _Cluster:
    """What kazoo's harness asks of its cluster, answered by zkh's ensemble."""

    def __init__(self, zkh):
        self.zkh = zkh

    def __iter__(self):
        return iter([types.SimpleNamespace(running=s["running"]) for s in self.zkh.call("info")["servers"]])

    def start(self):
        self.zkh.call("wait_ready")

    def terminate(self):
        """The ensemble belongs to this module's fixture, not to one test."""

    def get_logs(self):
        return [s["log"] for s in self.zkh.call("info")["servers"]]


class OnZoolock:
    """The harness part of kazoo's ``KazooTestHarness`` that differs here."""

    #: The zkh ensemble (set by the ``on_the_ensemble`` fixture).
    zkh = None

    @property
    def cluster(self):
        return _Cluster(self.zkh)

    @property
    def servers(self):
        return self.zkh.connect

    def _get_client(self, **client_options):
        client_options.setdefault("timeout", self.DEFAULT_CLIENT_TIMEOUT)
        client = KazooWithZoolockRecipes(self.hosts, **client_options)
        self._clients.append(client)
        return client

    def expire_session(self, event_factory):
        """Expires ``self.client``'s kazoo and zoolock sessions on the server.

        zkh's proxy learned each session's password from its connect
        handshake; it attaches a second connection with that id and password
        and closes it, and the server ends the session. Then, as kazoo's
        harness does, waits until each client has heard LOST and CONNECTED
        again (on a new session).
        """
        clients = (self.client, self.client.zoolock)
        reconnected = []
        for client in clients:
            lost, safe = event_factory(), event_factory()

            def watch(state, lost=lost, safe=safe):
                if state == KazooState.LOST:
                    lost.set()
                elif lost.is_set() and state == KazooState.CONNECTED:
                    safe.set()
                    return True

            client.add_listener(watch)
            reconnected.append((client, lost, safe))
        for client in clients:
            self.zkh.expire(client.client_id[0])
        for client, lost, safe in reconnected:
            assert lost.wait(DEADLINE), f"{client} did not hear its session expire"
            assert safe.wait(DEADLINE), f"{client} did not connect again"
        self.client.retry(self.client.get_async, "/")

    @classmethod
    def tearDownClass(cls):
        """kazoo's stops its global cluster here; this module's fixture owns the ensemble."""


@pytest.fixture(scope="module")
def ensemble():
    with Harness(servers=SERVERS) as zkh:
        yield zkh


class DeadlineExceeded(Exception):
    """A test of this module ran past its deadline."""


@pytest.fixture(autouse=True)
def on_the_ensemble(request):
    """Points an adapted test at the ensemble, and ends it if it hangs: past
    its deadline, every recipe its clients made is cancelled and
    ``DeadlineExceeded`` is raised in the test's thread (SIGALRM), again every
    few seconds, so that a tearDown joining a stuck thread ends too."""
    test = request.instance
    if not isinstance(test, OnZoolock):
        yield
        return
    test.zkh = request.getfixturevalue("ensemble")
    name = f"{getattr(test, 'shipped', type(test)).__name__}.{request.node.name}"
    deadline = WAITING_FOR.get(name, (None, TEST_DEADLINE))[1]

    def past_deadline(signum, frame):
        for client in list(test._clients):
            for recipe in list(client.recipes):
                recipe.cancel()
        raise DeadlineExceeded(f"{name} still running after {deadline} s: its acquires were cancelled")

    previous = signal.signal(signal.SIGALRM, past_deadline)
    signal.setitimer(signal.ITIMER_REAL, deadline, 5.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


adapted = adapter(NOT_RUN, WAITING_FOR)


@adapted(shipped.KazooLockTests)
class TestKazooLock(OnZoolock, shipped.KazooLockTests):
    pass


@adapted(shipped.TestSemaphore)
class TestKazooSemaphore(OnZoolock, shipped.TestSemaphore):
    pass


@adapted(shipped.TestSequence)
class TestKazooSequence(shipped.TestSequence):
    pass


class TestAdapter(OnZoolock, kazoo_testing.KazooTestCase):
    """The adapter itself, and what the tests in ``NOT_RUN`` check apart from kazoo's private attributes."""

    def test_recipes_are_zoolocks_and_expiry_reaches_both_sessions(self):
        assert isinstance(self.client, KazooClient)
        lock = self.client.Lock("/adapter", "me")
        assert isinstance(lock, zoolock.Lock) and isinstance(self.client.Semaphore("/leases"), zoolock.Semaphore)
        assert isinstance(self.client.ReadLock("/rw"), zoolock.ReadLock)
        assert isinstance(self.client.WriteLock("/rw"), zoolock.WriteLock)
        assert lock.acquire()
        # kazoo inspects zoolock's node (same chroot) from its own session, maybe on another
        # server of the three: sync first, or it may read before that server applied the create.
        self.client.sync("/adapter")
        assert self.client.get_children("/adapter") == [lock.node]
        sessions = self.client.client_id[0], self.client.zoolock.client_id[0]
        self.expire_session(threading.Event)
        # Lost; the reason may be the node's deletion, seen before the expiry (zkh closes the session
        # from a second connection, maybe on another server, while the first is still open).
        assert lock.lost.wait(DEADLINE) and not lock.is_acquired
        assert self.client.client_id[0] != sessions[0] and self.client.zoolock.client_id[0] != sessions[1]
        # The server ended the session: its node is gone (synced again: the close was another session's).
        self.client.sync("/adapter")
        assert self.client.get_children("/adapter") == []

    def test_semaphore_handle_session_loss_without_wake_event(self):
        """kazoo's test_handle_session_loss: a Semaphore waiter whose session
        expires queues again on the new session and gets the lease. Instead of
        kazoo's private wake_event, it waits for the waiter's node under the
        admission lock."""
        path = "/semaphore"
        expire_semaphore = self.client.Semaphore(path, "fred", max_leases=1)
        client = self._get_client()
        client.start()
        lh_semaphore = client.Semaphore(path, "george", max_leases=1)
        assert lh_semaphore.acquire()
        entered, leave = threading.Event(), threading.Event()

        def sema_one():
            with expire_semaphore:
                entered.set()
                leave.wait(DEADLINE)

        waiter = run_in_thread(sema_one)
        until_children(self.client, path + "-__lock__", lambda c: len(c) == 1, "fred to wait for a lease")
        self.expire_session(threading.Event)
        assert lh_semaphore.release()
        client.stop()
        assert entered.wait(DEADLINE)
        assert expire_semaphore.lease_holders() == ["fred"]
        leave.set()
        waiter.result()

    def test_semaphore_acquire_after_cancelled_without_cancelled(self):
        """kazoo's test_acquire_after_cancelled without its assert on kazoo's ``cancelled`` attribute."""
        lock = self.client.Semaphore("/semaphore")
        assert lock.acquire() is True
        assert lock.release() is True
        lock.cancel()
        assert lock.acquire() is True


def test_every_shipped_test_is_run_or_listed():
    """A kazoo upgrade that adds or renames tests shows here."""
    shipped_tests = {
        f"{cls.__name__}.{name}"
        for cls in (shipped.KazooLockTests, shipped.TestSemaphore, shipped.TestSequence)
        for name in dir(cls)
        if name.startswith("test")
    }
    assert len(shipped_tests) == 31
    assert set(NOT_RUN) | set(WAITING_FOR) <= shipped_tests
