"""kazoo's own recipe tests, run against zoolock.

The tests are kazoo 2.11's ``test_barrier.py``, ``test_party.py``,
``test_queue.py``, ``test_counter.py``, ``test_lease.py``,
``test_partitioner.py``, ``test_cache.py`` and ``test_interrupt.py`` as its
wheel ships them: imported, subclassed and never edited. As in
``test_kazoo_znode_suite.py``, ``self.client`` and every client kazoo's
harness makes is a zoolock ``KazooClient``: ``client.Barrier``,
``client.Party``, ``client.Queue``, ``client.Counter``,
``client.NonBlockingLease``, ... are zoolock's (the core's recipes), and
kazoo's own ``SetPartitioner``, ``TreeCache`` and lease classes run over the
zoolock client. The adapter changes only the harness around them:

- the ensemble is the suite's zkh server; ``lose_connection()`` resets the
  client's connections in zkh's proxy and ``expire_session()`` ends its
  session on the server (kazoo's own tricks reach into kazoo's connection);
- the handler kazoo's TreeCache tests pick (the first of kazoo's gevent,
  eventlet and threading handlers installed) is zoolock's, the one handler
  it has; it is not passed to the client, which takes none;
- past ``TEST_DEADLINE`` a test's clients are stopped (waking any recipe
  waiting on them) and the test fails, so that a hang cannot stall the suite.

The tests not run, and why, are in ``NOT_RUN``.
"""

import queue
import signal
import threading

import pytest
import zoolock
from conftest import DEADLINE
from kazoo_shipped import adapter
from kazoo import testing as kazoo_testing
from kazoo.protocol.states import KazooState
from kazoo.tests import test_barrier as shipped_barrier
from kazoo.tests import test_cache as shipped_cache
from kazoo.tests import test_counter as shipped_counter
from kazoo.tests import test_interrupt as shipped_interrupt
from kazoo.tests import test_lease as shipped_lease
from kazoo.tests import test_partitioner as shipped_partitioner
from kazoo.tests import test_party as shipped_party
from kazoo.tests import test_queue as shipped_queue
from test_kazoo_znode_suite import OnZoolock as OnZoolockServer

#: After this long a test is ended (see ``on_the_server``): a hang becomes a failure.
TEST_DEADLINE = 4 * DEADLINE

#: Tests of the shipped classes that are not run against zoolock, by "class.test", with the reason.
NOT_RUN = {
    "KazooLockingQueueTests.test_concurrent_execution":
        "times three get(0.1) against the clock: zoolock's timeout bounds the whole get (so that it ends by "
        "its timeout during a partition), kazoo's only the wait after its first look, and under load all "
        "three ended before the entry came, 3 runs in 16 (TestAdapter.test_locking_queue_consumers_of_one_client)",
}


class OnZoolock(OnZoolockServer):
    """The harness part of kazoo's ``KazooTestHarness`` that differs here."""

    def choose_an_installed_handler(self):
        """kazoo's TreeCache tests run under the handler this returns: zoolock's."""
        return zoolock.KazooClient.handler.fget(None)

    def _make(self, hosts, **options):
        if options.get("handler") is zoolock.KazooClient.handler.fget(None):
            del options["handler"]
        return super()._make(hosts, **options)

    def lose_connection(self, event_factory):
        """Resets ``self.client``'s connections in zkh's proxy (the session
        lives on), then waits, as kazoo's harness does, until the client
        heard SUSPENDED and CONNECTED again."""
        lost, safe = event_factory(), event_factory()

        def watch(state):
            if state == KazooState.SUSPENDED:
                lost.set()
            elif lost.is_set() and state == KazooState.CONNECTED:
                safe.set()
                return True

        self.client.add_listener(watch)
        self.zkh.call("drop", session=str(self.client.client_id[0]))
        assert lost.wait(DEADLINE), "the client did not hear its connection drop"
        assert safe.wait(DEADLINE), "the client did not connect again"
        self.client.retry(self.client.get_async, "/")


class DeadlineExceeded(Exception):
    """A test of this module ran past its deadline."""


@pytest.fixture(autouse=True)
def on_the_server(request, harness):
    """Points an adapted test at the suite's server, and ends it if it hangs:
    past its deadline its clients are stopped (from another thread: a stop
    wakes every recipe waiting on the client) and ``DeadlineExceeded`` is
    raised in the test's thread (SIGALRM), again every few seconds, so that a
    test joining a stuck thread ends too."""
    test = request.instance
    if not isinstance(test, OnZoolock):
        yield
        return
    test.zkh = harness
    name = f"{test.shipped.__name__}.{request.node.name}"

    def past_deadline(signum, frame):
        clients = list(test._clients)
        threading.Thread(target=lambda: [c.stop() for c in clients], daemon=True).start()
        raise DeadlineExceeded(f"{name} still running after {TEST_DEADLINE} s: its clients were stopped")

    previous = signal.signal(signal.SIGALRM, past_deadline)
    signal.setitimer(signal.ITIMER_REAL, TEST_DEADLINE, 5.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


adapted = adapter(NOT_RUN)


@adapted(shipped_barrier.KazooBarrierTests)
class TestKazooBarrier(OnZoolock, shipped_barrier.KazooBarrierTests):
    pass


@adapted(shipped_barrier.KazooDoubleBarrierTests)
class TestKazooDoubleBarrier(OnZoolock, shipped_barrier.KazooDoubleBarrierTests):
    pass


@adapted(shipped_party.KazooPartyTests)
class TestKazooParty(OnZoolock, shipped_party.KazooPartyTests):
    pass


@adapted(shipped_party.KazooShallowPartyTests)
class TestKazooShallowParty(OnZoolock, shipped_party.KazooShallowPartyTests):
    pass


@adapted(shipped_queue.KazooQueueTests)
class TestKazooQueue(OnZoolock, shipped_queue.KazooQueueTests):
    pass


@adapted(shipped_queue.KazooLockingQueueTests)
class TestKazooLockingQueue(OnZoolock, shipped_queue.KazooLockingQueueTests):
    pass


@adapted(shipped_counter.KazooCounterTests)
class TestKazooCounter(OnZoolock, shipped_counter.KazooCounterTests):
    pass


@adapted(shipped_lease.NonBlockingLeaseTests)
class TestKazooNonBlockingLease(OnZoolock, shipped_lease.NonBlockingLeaseTests):
    pass


@adapted(shipped_lease.MultiNonBlockingLeaseTest)
class TestKazooMultiNonBlockingLease(OnZoolock, shipped_lease.MultiNonBlockingLeaseTest):
    pass


@adapted(shipped_partitioner.KazooPartitionerTests)
class TestKazooPartitioner(OnZoolock, shipped_partitioner.KazooPartitionerTests):
    pass


@adapted(shipped_cache.KazooTreeCacheTests)
class TestKazooTreeCache(OnZoolock, shipped_cache.KazooTreeCacheTests):
    pass


@adapted(shipped_interrupt.KazooInterruptTests)
class TestKazooInterrupt(OnZoolock, shipped_interrupt.KazooInterruptTests):
    pass


class TestAdapter(OnZoolock, kazoo_testing.KazooTestCase):
    """What the tests in ``NOT_RUN`` check, without the clock."""

    shipped = kazoo_testing.KazooTestCase

    def test_locking_queue_consumers_of_one_client(self):
        """kazoo's test_concurrent_execution: consumers sharing one client
        each lock an entry once; woken together by one entry, one takes it."""
        path = self.client.LockingQueue("/queue").path
        got = queue.Queue()
        for _ in range(3):
            consumer = self.client.LockingQueue(path)
            self.client.handler.spawn(lambda consumer=consumer: got.put(consumer.get()))
        producer = self.client.LockingQueue(path)
        producer.put(b"one")
        values = [got.get(timeout=DEADLINE)]
        producer.put_all([b"two", b"three"])
        values += [got.get(timeout=DEADLINE) for _ in range(2)]
        assert sorted(values) == [b"one", b"three", b"two"]


#: Every test class of the recipe files, run above.
RUN = [shipped_barrier.KazooBarrierTests, shipped_barrier.KazooDoubleBarrierTests, shipped_party.KazooPartyTests,
       shipped_party.KazooShallowPartyTests, shipped_queue.KazooQueueTests, shipped_queue.KazooLockingQueueTests,
       shipped_counter.KazooCounterTests, shipped_lease.NonBlockingLeaseTests,
       shipped_lease.MultiNonBlockingLeaseTest, shipped_partitioner.KazooPartitionerTests,
       shipped_cache.KazooTreeCacheTests, shipped_interrupt.KazooInterruptTests]


def test_every_shipped_test_is_run_or_listed():
    """A kazoo upgrade that adds or renames tests or classes shows here."""
    listed = {f"{cls.__name__}.{name}" for cls in RUN for name in dir(cls) if name.startswith("test")}
    assert set(NOT_RUN) <= listed
    modules = {shipped_barrier, shipped_party, shipped_queue, shipped_counter, shipped_lease, shipped_partitioner,
               shipped_cache, shipped_interrupt}
    with_tests = {value for module in modules for value in vars(module).values()
                  if isinstance(value, type) and value.__module__ == module.__name__
                  and any(name.startswith("test") for name in vars(value))}
    assert with_tests == set(RUN)
