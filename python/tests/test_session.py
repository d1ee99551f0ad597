"""The client's life: start/stop, listeners, expiry, fork, Ctrl-C, logging."""

import logging
import multiprocessing
import os
import re
import signal
import threading
import time

import pytest
import zoolock
from kazoo import exceptions as kazoo_exceptions
from conftest import DEADLINE, run_in_thread, until_children


class States:
    """Collects listener calls; ``wait_for(state)`` waits for one."""

    def __init__(self):
        self.seen = []
        self.changed = threading.Condition()

    def __call__(self, state):
        with self.changed:
            self.seen.append(state)
            self.changed.notify_all()

    def wait_for(self, *states):
        with self.changed:
            assert self.changed.wait_for(lambda: self.seen[-len(states):] == list(states), DEADLINE), self.seen


def test_lifecycle_states_and_client_id(make_client, path):
    client = make_client(start=False)
    states = States()
    client.add_listener(states)
    lock = client.Lock(path)  # before start(), as kazoo allows
    assert client.state == zoolock.KazooState.LOST and not client.connected and client.client_id is None
    client.start()
    states.wait_for("CONNECTED")
    assert client.connected and client.state == "CONNECTED"
    session_id, password = client.client_id
    assert session_id > 0 and type(password) is bytes and len(password) == 16
    assert lock.acquire()
    client.stop()
    states.wait_for("CONNECTED", "LOST")
    assert client.state == "LOST" and client.client_id is None
    # A stopped client starts again; its locks work on the new session.
    client.start()
    assert client.client_id[0] != session_id
    assert lock.acquire(blocking=False) and lock.release()
    client.stop()
    client.close()
    assert zoolock.Client is zoolock.KazooClient


def test_a_listener_returning_true_is_removed(make_client):
    client = make_client(start=False)
    once = States()
    client.add_listener(lambda s: once(s) or True)
    always = States()
    client.add_listener(always)
    client.start()
    client.stop()
    client.start()
    always.wait_for("CONNECTED", "LOST", "CONNECTED")
    assert once.seen == ["CONNECTED"]


def test_listeners_are_a_set_as_in_kazoo(make_client, path):
    client = make_client(start=False)
    heard, last = States(), States()
    client.add_listener(heard.__call__)
    client.add_listener(heard.__call__)  # an equal bound method: kept once
    client.add_listener(last)
    client.start()
    last.wait_for("CONNECTED")
    client.remove_listener(heard.__call__)  # a new bound method object, equal to the first
    client.stop()
    last.wait_for("CONNECTED", "LOST")
    assert heard.seen == ["CONNECTED"]


def test_unstarted_or_stopped_client_fails_at_once(make_client, path):
    client = make_client(start=False)
    lock, sem = client.Lock(path), client.Semaphore(path + "-sem")
    for call in (lock.acquire, lock.contenders, sem.acquire, sem.lease_holders):
        started = time.monotonic()
        with pytest.raises(zoolock.ConnectionClosedError):
            call()
        assert time.monotonic() - started < 1
    assert lock.release() is False and sem.release() is False
    client.start()
    client.stop()
    with pytest.raises(zoolock.SessionExpiredError):  # ConnectionClosedError is one, as in kazoo
        lock.acquire(blocking=False)


def test_stop_fails_pending_acquires(make_client, kz, path):
    holder = kz.Lock(path)
    assert holder.acquire()
    client = make_client()
    lock = client.Lock(path)
    waiting = run_in_thread(lock.acquire)
    until_children(kz, path, lambda c: len(c) == 2, "the waiter to queue")
    client.stop()
    with pytest.raises(zoolock.ConnectionClosedError):
        waiting.result()
    until_children(kz, path, lambda c: c == [holder.node], "the waiter's node to go with its session")


def test_start_fails_clearly_when_nobody_listens():
    client = zoolock.KazooClient(hosts="127.0.0.1:1", timeout=2.0)
    started = time.monotonic()
    with pytest.raises(zoolock.KazooTimeoutError):
        client.start(timeout=0.5)
    assert time.monotonic() - started < 5
    assert not issubclass(zoolock.KazooTimeoutError, zoolock.KazooException)  # as kazoo's


def test_start_waits_out_a_timeout_longer_than_the_session_timeout():
    # zookeeper-client stops connecting after about the session timeout; start(timeout) is the caller's.
    client = zoolock.KazooClient(hosts="127.0.0.1:1", timeout=1.0)
    started = time.monotonic()
    with pytest.raises(zoolock.KazooTimeoutError) as raised:
        client.start(timeout=3)
    waited = time.monotonic() - started
    assert waited >= 3, f"gave up after {waited:.2f}s: {raised.value}"
    assert str(raised.value) == "Connection time-out"  # kazoo's words; the core's reason is the cause
    stated = float(re.search(r"within ([\d.]+)s", str(raised.value.__cause__)).group(1))
    assert 3 <= stated <= waited, f"states {stated}s, waited {waited:.2f}s: {raised.value}"


def test_expiry_while_holding_is_reported(make_client, make_kazoo, harness, path):
    client = make_client()
    states = States()
    client.add_listener(states)
    lock = client.Lock(path)
    lock_states = States()
    lock.add_listener(lock_states)
    assert lock.acquire()
    harness.expire(client.client_id[0])
    assert lock.lost.wait(DEADLINE) is True
    assert lock.lost_reason == "SESSION_EXPIRED" and not lock.is_acquired and lock.state == "LOST"
    lock_states.wait_for("LOST")
    assert lock_states.seen[0] == "HELD" and set(lock_states.seen[1:-1]) <= {"SUSPENDED"}
    states.wait_for("LOST", "CONNECTED")  # a new session was opened by itself
    other = make_kazoo().Lock(path)
    assert other.acquire(timeout=DEADLINE)
    other.release()
    assert lock.acquire(timeout=DEADLINE) and not lock.lost.is_set()


def test_a_partition_suspends_the_hold_until_healed(make_client, harness, path):
    client = make_client()
    session = States()
    client.add_listener(session)
    lock = client.Lock(path)
    held = States()
    lock.add_listener(held)
    assert lock.acquire()
    session_id = client.client_id[0]
    harness.partition(session_id)
    try:
        held.wait_for("HELD", "SUSPENDED")
        assert lock.state == "SUSPENDED" and lock.is_acquired and not lock.lost.is_set()
        session.wait_for("SUSPENDED")
    finally:
        harness.heal(session_id)
    held.wait_for("HELD", "SUSPENDED", "HELD")
    session.wait_for("SUSPENDED", "CONNECTED")
    assert lock.release()


def test_expiry_while_waiting_requeues_on_the_new_session(make_client, kz, harness, path):
    holder = kz.Lock(path, "kazoo")
    assert holder.acquire()
    client = make_client()
    waiter = client.Lock(path, "zoolock")
    waiting = run_in_thread(waiter.acquire, timeout=DEADLINE)
    (first,) = set(until_children(kz, path, lambda c: len(c) == 2, "the waiter to queue")) - {holder.node}
    harness.expire(client.client_id[0])
    until_children(kz, path, lambda c: len(c) == 2 and first not in c, "the waiter to queue again")
    holder.release()
    assert waiting.result() is True
    assert kz.get_children(path) == [waiter.node] and waiter.node != first
    waiter.release()


def test_ctrl_c_interrupts_a_blocking_acquire_and_leaves_no_node(make_client, kz, path):
    holder = kz.Lock(path)
    assert holder.acquire()
    client = make_client()
    lock = client.Lock(path)
    sent = []

    def interrupt_once_queued():
        until_children(kz, path, lambda c: len(c) == 2, "the waiter to queue")
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    helper = run_in_thread(interrupt_once_queued)
    with pytest.raises(KeyboardInterrupt):
        lock.acquire()
    assert time.monotonic() - sent[0] < 1.0
    helper.result()
    until_children(kz, path, lambda c: c == [holder.node], "the interrupted node to go")
    assert client.connected and not lock.is_acquired


def test_a_forked_child_gets_a_clear_error(client, path):
    lock = client.Lock(path)
    assert lock.acquire()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            signal.alarm(10)  # a hang kills the child, and the parent sees it
            outcome = []
            for call in (lambda: lock.acquire(blocking=False), lock.contenders,
                         lambda: zoolock.KazooClient(hosts=[f"{h}:{p}" for h, p in client.hosts]).start()):
                try:
                    call()
                    outcome.append("no error")
                except zoolock.ForkedError as err:
                    outcome.append("ForkedError" if "spawn" in str(err) else str(err))
            os.write(write_end, ",".join(outcome).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end) as pipe:
        said = pipe.read()
    assert os.WIFEXITED(status), f"the child hung or crashed: {status}"
    assert said == "ForkedError,ForkedError,ForkedError"
    assert lock.is_acquired and lock.release()  # the parent goes on


EXIT_WITH_CALLS_WAITING = """
import socket, sys, threading, zoolock
connect, path = sys.argv[1], sys.argv[2]
silent = socket.socket()  # accepts connections, never answers
silent.bind(("127.0.0.1", 0))
silent.listen(8)
client = zoolock.KazooClient(hosts=connect, timeout=4.0)
client.start(timeout=15)
assert client.Lock(path, "holder").acquire(timeout=15)
for i in range(8):
    threading.Thread(target=client.Lock(path, str(i)).acquire, daemon=True).start()
stuck = zoolock.KazooClient(hosts="127.0.0.1:%d" % silent.getsockname()[1], timeout=4.0)
threading.Thread(target=stuck.start, kwargs={"timeout": 60}, daemon=True).start()
queued = threading.Event()
def seen(children):
    if len(children) == 9:
        queued.set()
client.ChildrenWatch(path, seen)
assert queued.wait(15), "the 8 waiters did not queue"
print("returning", flush=True)
"""


def test_a_script_returning_with_calls_waiting_exits_cleanly(connect, path):
    """The interpreter's exit with 8 acquires waiting behind a holder and a
    start() to a server that never answers, nothing closed: no hang, no
    crash, no traceback (the binding's callback gate closes at atexit)."""
    import subprocess
    import sys

    for run in range(5):  # a path each: an exited holder's session lasts its timeout
        done = subprocess.run([sys.executable, "-c", EXIT_WITH_CALLS_WAITING, connect, f"{path}/{run}"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "returning\n"), done.stderr
        for sign in ("panic", "Fatal Python error", "Traceback", "Exception ignored"):
            assert sign not in done.stderr, done.stderr


EXIT_WITH_CALLBACKS_BLOCKED = """
import sys, threading, zoolock
client = zoolock.KazooClient(hosts=sys.argv[1], timeout=4.0)
client.start(timeout=15)
never, entered = threading.Event(), threading.Semaphore(0)
def stuck(*args):
    entered.release()
    never.wait()
lock = client.Lock(sys.argv[2] + "/lock")
lock.add_listener(stuck)  # blocks the client's listener thread at HELD
assert lock.acquire(timeout=15)
node = client.create(sys.argv[2] + "/node", b"0", makepath=True)
client.get(node, watch=stuck)  # blocks the session's watch thread
client.set(node, b"1")
assert entered.acquire(timeout=15) and entered.acquire(timeout=15), "the callbacks did not run"
print("returning", flush=True)
"""


def test_a_script_returning_while_its_callbacks_block_exits(connect, path):
    """A watch function and a listener that never return (kazoo runs them
    on daemon threads): the interpreter's exit waits a moment for them,
    then goes on; no hang, no crash, no traceback."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", EXIT_WITH_CALLBACKS_BLOCKED, connect, path],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "returning\n"), done.stderr
    for sign in ("panic", "Fatal Python error", "Traceback", "Exception ignored"):
        assert sign not in done.stderr, done.stderr


FORK_BEFORE_START = """
import os, sys, threading, zoolock
pid = os.fork()
if pid == 0:
    client = zoolock.KazooClient(hosts=sys.argv[1], timeout=4.0)
    connected = threading.Event()
    client.add_listener(lambda state: state == "CONNECTED" and connected.set())
    client.start(timeout=10)
    lock = client.Lock(sys.argv[2])
    ok = lock.acquire(timeout=10) and lock.release() and connected.wait(10)
    client.stop()
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 2)
"""


def test_a_child_forked_before_zoolock_started_can_use_it(connect, path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FORK_BEFORE_START, connect, path], timeout=60)
    assert done.returncode == 0


def test_spawned_processes_work(connect, path):
    context = multiprocessing.get_context("spawn")
    from workers import hold_and_release

    with context.Pool(2) as pool:
        results = pool.starmap(hold_and_release, [(connect, path)] * 2)
    assert [got for got, _ in results] == [True, True]
    assert results[0][1] != results[1][1]


def test_rust_logs_reach_python_logging(make_client):
    heard = threading.Event()

    class Catch(logging.Handler):
        def emit(self, record):
            if "state: CLOSED" in record.getMessage():
                heard.set()

    logger = logging.getLogger("zoolock")
    handler = Catch(level=logging.INFO)
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        make_client().stop()
        assert heard.wait(DEADLINE)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def test_a_locks_spans_are_not_log_lines(make_client, path):
    """The core's tracing spans (acquire, hold, release) are context for a
    Rust subscriber, not events: at INFO only the session's lines reach
    ``logging`` (they cost a log record and a GIL hand-off per step)."""
    heard, closed = [], threading.Event()

    class Catch(logging.Handler):
        def emit(self, record):
            heard.append(record.getMessage())
            if "state: CLOSED" in heard[-1]:
                closed.set()

    logger = logging.getLogger("zoolock")
    handler, previous = Catch(level=logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        client = make_client()
        lock = client.Lock(path, "spans")
        for _ in range(3):
            with lock:
                pass
        client.stop()
        assert closed.wait(DEADLINE), heard  # the log thread keeps order: all before it came
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    spans = [line for line in heard if any(name in line for name in ("acquire;", "hold;", "release;", "span="))]
    assert spans == [], spans
    assert any("state: CONNECTED" in line for line in heard), heard


def test_debug_lines_follow_a_level_lowered_at_run_time(client, path):
    """Debug events are dropped unformatted while the "zoolock" logger is above
    DEBUG (its level is cached); lowered at run time, the next call's come through."""
    heard = threading.Event()

    class Catch(logging.Handler):
        def emit(self, record):
            if record.levelno == logging.DEBUG and "zoolock holds" in record.getMessage():
                heard.set()

    logger = logging.getLogger("zoolock")
    previous = logger.level
    handler = Catch(level=logging.DEBUG)
    logger.addHandler(handler)
    lock = client.Lock(path, "debug")
    try:
        logger.setLevel(logging.WARNING)
        for _ in range(3):
            with lock:
                pass
        assert not heard.is_set()
        logger.setLevel(logging.DEBUG)
        with lock:
            pass
        assert heard.wait(DEADLINE), "no debug line from the first call after the level was lowered"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


#: A worker that holds a lock, says its client_id and node, then waits to be killed.
HOLD_AND_TELL = """
import sys, zoolock
client = zoolock.KazooClient(hosts=sys.argv[1], timeout=30.0)
client.start()
lock = client.Lock(sys.argv[2], "worker")
assert lock.acquire(timeout=15)
session_id, password = client.client_id
print(session_id, password.hex(), flush=True)
sys.stdin.read()
"""


def killed_holder(connect, path):
    """The client_id of a worker process that held a lock on ``path`` and was killed."""
    import subprocess
    import sys

    worker = subprocess.Popen([sys.executable, "-c", HOLD_AND_TELL, connect, path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        said = worker.stdout.readline().split()
    finally:
        worker.kill()
        worker.wait()
    return int(said[0]), bytes.fromhex(said[1])


def test_client_id_resumes_the_session_of_a_killed_process(make_client, kz, connect, path):
    """kazoo's client_id: a process that died without closing leaves its
    session (and its lock node) to whoever resumes it by id and password."""
    session_id, password = killed_holder(connect, path)
    (node,) = kz.get_children(path)

    heard, connected = [], threading.Event()

    class Catch(logging.Handler):
        def emit(self, record):
            heard.append(record.getMessage())
            if f"CONNECTED, session {session_id:#x}" in heard[-1]:
                connected.set()

    logger = logging.getLogger("zoolock")
    handler, previous = Catch(level=logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        client = make_client(client_id=(session_id, password))
        assert connected.wait(DEADLINE), heard
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    assert client.client_id == (session_id, password)
    assert kz.exists(f"{path}/{node}").ephemeralOwner == session_id
    # The hold is the session's node, not this client's lock object's: it queues behind it.
    assert client.Lock(path).acquire(blocking=False) is False
    assert kz.get_children(path) == [node]
    shown = "\n".join(heard + [repr(client), str(client.client_id[0])])
    for form in (password.hex(), repr(password), str(list(password))):
        assert form not in shown
    client.stop()
    until_children(kz, path, lambda c: c == [], "the resumed session's node to go when it closes")


def test_concurrent_starts_resume_the_session_once(make_client, kz, connect, path):
    """start() from several threads at once: one resumes client_id, and the
    session stays (a start() that resumed it too and lost the race would
    close it on its way out)."""
    session_id, password = killed_holder(connect, path)
    client = make_client(start=False, client_id=(session_id, password))
    together = threading.Barrier(4)

    def start():
        together.wait()
        client.start(timeout=DEADLINE)

    for started in [run_in_thread(start) for _ in range(4)]:
        started.result()
    assert client.client_id == (session_id, password)
    (node,) = kz.get_children(path)
    assert kz.exists(f"{path}/{node}").ephemeralOwner == session_id


def test_client_id_of_an_ended_session_is_session_expired(make_client):
    """What kazoo reports as LOST before it opens a new session is
    SessionExpiredError from start(); the next start() opens a new session."""
    ended = make_client()
    client_id = ended.client_id
    ended.stop()
    client = make_client(start=False, client_id=client_id)
    with pytest.raises(zoolock.SessionExpiredError) as raised:
        client.start(timeout=DEADLINE)
    assert "could not resume the session at" in str(raised.value)
    assert isinstance(raised.value, kazoo_exceptions.SessionExpiredError)
    client.start(timeout=DEADLINE)
    assert client.connected and client.client_id[0] != client_id[0]


def test_client_id_that_names_no_session_is_refused(make_client):
    for bad in [(1, "sixteen-chars-pw"), ("1", b"0" * 16), (1,), 5]:
        with pytest.raises(TypeError):
            zoolock.KazooClient(client_id=bad)
    for bad in [(0, b"0" * 16), (1, b"short")]:
        client = make_client(start=False, client_id=bad)
        with pytest.raises(ValueError):
            client.start(timeout=DEADLINE)
