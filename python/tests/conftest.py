"""Fixtures: one real ZooKeeper server (through zkh's proxies) shared by the
suite, started and stopped zoolock and kazoo clients, unique lock paths, and
waits that follow the server through watches instead of sleeping."""

import signal
import threading
import uuid

import pytest

from zkh import Harness

# The suite's Ctrl-C tests send SIGINT to their own process. A shell
# without job control starts a background command (`scripts/test.sh &`)
# with SIGINT ignored, and Python then installs no KeyboardInterrupt
# handler: those tests failed, one of them by waiting for ever.
signal.signal(signal.SIGINT, signal.default_int_handler)

#: Short enough that a lost session shows quickly, long enough for a loaded CI box.
SESSION_TIMEOUT = 4.0
#: Upper bound of any wait on the server in these tests.
DEADLINE = 15.0


@pytest.fixture(scope="session")
def harness():
    with Harness(servers=1, tick_ms=200) as h:
        yield h


@pytest.fixture(scope="session")
def connect(harness):
    """Connect string through the proxies, so sessions can be expired."""
    return harness.connect


@pytest.fixture
def path(request):
    """A lock path no other test uses."""
    name = request.node.name.replace("[", "-").replace("]", "")
    return f"/zoolock-py/{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_client(connect):
    """Starts zoolock clients; stops them after the test."""
    import zoolock

    made = []

    def make(start=True, **kwargs):
        kwargs.setdefault("timeout", SESSION_TIMEOUT)
        kwargs.setdefault("hosts", connect)
        client = zoolock.KazooClient(**kwargs)
        made.append(client)
        if start:
            client.start(timeout=DEADLINE)
        return client

    yield make
    for client in made:
        client.stop()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def make_kazoo(connect):
    """Starts kazoo clients (the real one, from PyPI); stops them after the test."""
    from kazoo.client import KazooClient

    made = []

    def make():
        kz = KazooClient(hosts=connect, timeout=SESSION_TIMEOUT)
        kz.start(timeout=DEADLINE)
        made.append(kz)
        return kz

    yield make
    for kz in made:
        kz.stop()
        kz.close()


@pytest.fixture
def kz(make_kazoo):
    """A kazoo client, also used to look at the nodes the recipes leave."""
    return make_kazoo()


def until_children(kz, path, condition, what="the children to change"):
    """Waits, through a kazoo children watch, until ``condition(children)``
    holds for the children of ``path``; fails after DEADLINE seconds."""
    changed = threading.Condition()
    state = {"children": None}

    def watch(children):
        with changed:
            state["children"] = sorted(children or [])
            changed.notify_all()
        return not condition(state["children"])  # False stops watching

    kz.ensure_path(path)
    from kazoo.recipe.watchers import ChildrenWatch

    ChildrenWatch(kz, path, watch)
    with changed:
        if not changed.wait_for(lambda: state["children"] is not None and condition(state["children"]), DEADLINE):
            pytest.fail(f"timed out waiting for {what} under {path}: {state['children']}")
        return state["children"]


def run_in_thread(target, *args, **kwargs):
    """Runs ``target`` in a thread; ``.result()`` joins and returns or raises."""

    class Runner(threading.Thread):
        def __init__(self):
            super().__init__(daemon=True)
            self.outcome = None
            self.error = None

        def run(self):
            try:
                self.outcome = target(*args, **kwargs)
            except BaseException as err:  # noqa: B036 - handed to the test thread
                self.error = err

        def result(self, timeout=DEADLINE):
            self.join(timeout)
            if self.is_alive():
                pytest.fail(f"{target} did not return within {timeout} s")
            if self.error is not None:
                raise self.error
            return self.outcome

    runner = Runner()
    runner.start()
    return runner
