"""What a worker switched from kazoo with one import relies on (issue 21,
items 8-12), and the same surfaces attacked: a lock object collected while
it holds or while it acquires, a callback that blocks or re-enters, stop()
and restart() from a callback, Ctrl-C while start() waits for a listener.

Where a failure would be a hang, a watchdog timer undoes the block after
DEADLINE and the test asserts it never had to."""

import asyncio
import gc
import os
import queue
import signal
import threading

import pytest
import zoolock
from conftest import DEADLINE, run_in_thread

#: How long a contender tries before the test concludes that a hold stays
#: (a hold that was dropped goes within milliseconds).
STAYS = 1.5


@pytest.fixture
def base(client, path):
    client.ensure_path(path)
    return path


class Watchdog:
    """Releases ``lock`` (held by the test) after DEADLINE, so that a
    deadlock fails the test instead of hanging it; ``fired`` says whether it had to."""

    def __init__(self, lock):
        self.fired = False

        def rescue():
            self.fired = True
            lock.release()

        self.timer = threading.Timer(DEADLINE, rescue)
        self.timer.daemon = True

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        return False


def block_watch_thread(client, node):
    """A watch on ``node`` whose callback, at the node's first change, waits
    for a lock the calling (test) thread holds: the client's watch callbacks
    are then stuck until the test releases it. Returns the lock, held."""
    held = threading.Lock()
    held.acquire()
    entered = threading.Event()

    def stuck(data, stat):
        if data == b"block":
            entered.set()
            with held:
                pass

    client.DataWatch(node, stuck)
    client.set(node, b"block")
    assert entered.wait(DEADLINE)
    return held


# ---- 8. a lock object collected while it holds keeps the hold --------------------


def test_a_collected_lock_keeps_its_hold_until_its_session_ends(make_client, kz, path):
    worker, other = make_client(), make_client()
    if not worker.Lock(path, "worker").acquire(blocking=False):  # kazoo's idiom: no reference kept
        pytest.fail("an uncontended try failed")
    gc.collect()
    with pytest.raises(zoolock.LockTimeout):
        other.Lock(path, "other").acquire(timeout=STAYS)
    assert [kz.get(f"{path}/{c}")[0] for c in kz.get_children(path)] == [b"worker"]
    worker.stop()
    assert other.Lock(path, "other").acquire(timeout=DEADLINE)


@pytest.mark.parametrize("held, contender", [("ReadLock", "WriteLock"), ("WriteLock", "ReadLock")])
def test_a_collected_read_or_write_lock_keeps_its_hold(make_client, path, held, contender):
    worker, other = make_client(), make_client()
    assert getattr(worker, held)(path, "worker").acquire(timeout=DEADLINE)
    gc.collect()
    with pytest.raises(zoolock.LockTimeout):
        getattr(other, contender)(path).acquire(timeout=STAYS)
    worker.stop()
    assert getattr(other, contender)(path).acquire(timeout=DEADLINE)


def test_a_collected_semaphore_keeps_its_lease(make_client, path):
    worker, other = make_client(), make_client()
    assert worker.Semaphore(path, "worker", max_leases=1).acquire(blocking=False)
    gc.collect()
    with pytest.raises(zoolock.LockTimeout):
        other.Semaphore(path, "other", max_leases=1).acquire(timeout=STAYS)
    assert other.Semaphore(path, "other", max_leases=1).lease_holders() == ["worker"]
    worker.stop()
    assert other.Semaphore(path, "other", max_leases=1).acquire(timeout=DEADLINE)


def test_a_collected_lock_still_tells_its_listeners_how_its_hold_ended(make_client, kz, path):
    worker = make_client()
    heard = queue.Queue()
    lock = worker.Lock(path)
    lock.add_listener(heard.put)
    assert lock.acquire(timeout=DEADLINE)
    node = f"{path}/{lock.node}"
    assert heard.get(timeout=DEADLINE) == "HELD"
    del lock
    gc.collect()
    kz.delete(node)  # an operator breaks the "stuck" lock
    assert heard.get(timeout=DEADLINE) == "LOST"
    assert worker.Lock(path).acquire(timeout=DEADLINE)


def test_a_collected_lock_with_a_lease_lets_go_when_the_lease_ends(make_client, path):
    worker, other = make_client(), make_client()
    assert worker.Lock(path).acquire(lease=0.5)
    gc.collect()
    assert other.Lock(path).acquire(timeout=DEADLINE)


def test_a_collected_lock_is_released_by_an_expiry_and_not_taken_again(make_client, kz, harness, path):
    worker, other = make_client(), make_client()
    assert worker.Lock(path).acquire(timeout=DEADLINE)
    gc.collect()
    harness.expire(worker.client_id[0])
    taken = other.Lock(path)
    assert taken.acquire(timeout=DEADLINE)
    assert worker.retry(worker.exists, path) is not None  # the worker's new session is up
    assert len(kz.get_children(path)) == 1


def test_a_lock_collected_while_its_async_acquire_waits_keeps_the_hold_it_wins(make_client, path):
    worker, blocker, other = make_client(), make_client(), make_client()
    first = blocker.Lock(path)
    assert first.acquire(timeout=DEADLINE)

    async def acquire_and_drop():
        pending = asyncio.ensure_future(worker.Lock(path, "worker").acquire_async(timeout=DEADLINE))
        gc.collect()  # the Lock object is gone; its acquire goes on
        await asyncio.sleep(0)
        assert first.release()
        return await pending

    assert asyncio.run(acquire_and_drop())
    gc.collect()
    with pytest.raises(zoolock.LockTimeout):
        other.Lock(path).acquire(timeout=STAYS)
    worker.stop()
    assert other.Lock(path).acquire(timeout=DEADLINE)


def test_a_collected_lock_that_never_held_leaves_no_node(make_client, kz, path):
    holder, worker = make_client(), make_client()
    assert holder.Lock(path).acquire(timeout=DEADLINE)
    assert not worker.Lock(path).acquire(blocking=False)
    with pytest.raises(zoolock.LockTimeout):
        worker.Lock(path).acquire(timeout=0.2)
    gc.collect()
    assert len(kz.get_children(path)) == 1


# ---- 9. a registration waits for the server, never for another callback -----------


def test_registering_watches_never_waits_for_a_blocked_callback(client, base):
    """kazoo's LockingQueue registers a watch while holding a lock that its
    own earlier watch callback waits for: the registration must return."""
    node = client.create(f"{base}/n", b"0")
    held = block_watch_thread(client, node)
    first_calls = []
    with Watchdog(held) as dog:
        client.DataWatch(node, lambda data, stat: first_calls.append(threading.current_thread()))
        client.ChildrenWatch(base, lambda children: first_calls.append(threading.current_thread()))
        one_shot = []
        client.get(node, watch=one_shot.append)
        client.exists(node, watch=one_shot.append)
        client.get_children(base, watch=one_shot.append)
    assert not dog.fired, "a registration waited for the blocked callback"
    # kazoo's: the first calls run in the constructing thread.
    assert first_calls == [threading.current_thread()] * 2
    held.release()


def test_a_watch_made_off_the_main_thread_calls_first_there_and_its_callback_may_call_the_client(client, base):
    """A worker thread's DataWatch and ChildrenWatch (kazoo applications make
    them in threads, and their callbacks read what changed): the first call
    runs in that thread, and may call the client, which waits there."""
    node = client.create(f"{base}/n", b"0")

    def watch_from_a_worker():
        calls = []

        def on_data(data, stat):
            calls.append(("data", threading.current_thread(), client.get(node)[0]))

        def on_children(children):
            calls.append(("children", threading.current_thread(), client.get_children(base)))

        client.DataWatch(node, on_data)
        client.ChildrenWatch(base, on_children)
        return threading.current_thread(), calls

    worker, calls = run_in_thread(watch_from_a_worker).result(timeout=DEADLINE)
    assert calls == [("data", worker, b"0"), ("children", worker, ["n"])]


def test_a_blocked_callback_does_not_stall_another_clients_watches(make_client, base):
    blocked, free = make_client(), make_client()
    node = blocked.create(f"{base}/n", b"0")
    held = block_watch_thread(blocked, node)
    calls = queue.Queue()
    with Watchdog(held) as dog:
        free.DataWatch(node, lambda data, stat: calls.put(data))
        assert calls.get(timeout=DEADLINE) == b"block"
        fired = threading.Event()
        free.get(node, watch=lambda event: fired.set())
        free.set(node, b"next")
        assert calls.get(timeout=DEADLINE) == b"next"
        assert fired.wait(DEADLINE)
    assert not dog.fired, "another client's watch waited for the blocked callback"
    held.release()


def test_a_callback_that_registers_watches_and_reads_returns(client, base):
    """Re-entry: a callback on the watch thread registering more watches."""
    node = client.create(f"{base}/n", b"0")
    nested, done = queue.Queue(), threading.Event()

    def on_change(data, stat):
        if data == b"go":
            client.DataWatch(node, lambda d, s: nested.put(d))
            client.get(node, watch=lambda event: nested.put(event.type))
            client.get_children(base)
            done.set()

    client.DataWatch(node, on_change)
    client.set(node, b"go")
    assert done.wait(DEADLINE)
    assert nested.get(timeout=DEADLINE) == b"go"
    client.set(node, b"after")
    assert {nested.get(timeout=DEADLINE), nested.get(timeout=DEADLINE)} == {b"after", "CHANGED"}


def test_a_one_shot_watch_is_never_called_inside_the_registering_call(client, kz, base):
    """A change landing right behind the read (another client's write sent
    with it) fires the watch on the watch thread, never inside get(), whose
    caller may hold what the function takes."""
    node = client.create(f"{base}/n", b"0")
    fired = queue.Queue()
    for i in range(20):
        written = kz.set_async(node, b"%d" % i)
        client.get(node, watch=lambda event: fired.put(threading.current_thread()))
        written.get(timeout=DEADLINE)
        kz.set(node, b"after")  # fires it if the first write came before the read
        assert fired.get(timeout=DEADLINE) is not threading.current_thread()


# ---- 10. watches resume after stop()/start() ---------------------------------------


@pytest.mark.parametrize("how", ["stop-start", "restart"])
def test_watches_read_again_after_the_client_is_restarted(make_client, base, how):
    client, writer = make_client(), make_client()
    node = writer.create(f"{base}/n", b"before")
    data, children = queue.Queue(), queue.Queue()
    client.DataWatch(node, lambda value, stat: data.put(value))
    client.ChildrenWatch(base, lambda names: children.put(sorted(names)))
    assert data.get(timeout=DEADLINE) == b"before" and children.get(timeout=DEADLINE) == ["n"]

    if how == "restart":
        writer.set(node, b"while-away")
        writer.create(f"{base}/m")
        client.restart()
    else:
        client.stop()
        writer.set(node, b"while-away")
        writer.create(f"{base}/m")
        client.start()
    assert data.get(timeout=DEADLINE) == b"while-away"
    assert children.get(timeout=DEADLINE) == ["m", "n"]
    # Watching again: the next change is the next call.
    writer.set(node, b"after")
    assert data.get(timeout=DEADLINE) == b"after"
    # Nothing changed across a restart: no call (the next call is the next change).
    client.restart()
    writer.delete(f"{base}/m")
    assert children.get(timeout=DEADLINE) == ["n"]
    assert data.empty()


def test_a_watch_made_before_start_starts_with_the_client(make_client, base):
    """kazoo's: a watch made on a client not started yet reads once it is."""
    writer = make_client()
    node = writer.create(f"{base}/n", b"0")
    client = make_client(start=False)
    data, children = queue.Queue(), queue.Queue()
    client.DataWatch(node, lambda value, stat: data.put(value))
    client.ChildrenWatch(base, lambda names: children.put(sorted(names)))
    assert data.empty() and children.empty()
    client.start()
    assert data.get(timeout=DEADLINE) == b"0" and children.get(timeout=DEADLINE) == ["n"]
    writer.set(node, b"1")
    assert data.get(timeout=DEADLINE) == b"1"


def test_a_stopped_watch_stays_stopped_after_a_restart(make_client, base):
    client, writer = make_client(), make_client()
    node = writer.create(f"{base}/n", b"0")
    calls = queue.Queue()
    watch = client.DataWatch(node, lambda value, stat: calls.put(value))
    ended = client.DataWatch(node, lambda value, stat: (calls.put(("ended", value)), False)[1])
    assert {calls.get(timeout=DEADLINE), calls.get(timeout=DEADLINE)} == {b"0", ("ended", b"0")}
    watch.stop()
    sessionless = client.ChildrenWatch(base, lambda names: calls.put(names), allow_session_lost=False)
    assert calls.get(timeout=DEADLINE) == ["n"]
    client.restart()
    writer.set(node, b"1")
    writer.create(f"{base}/m")
    witness = queue.Queue()
    client.DataWatch(node, lambda value, stat: witness.put(value))
    assert witness.get(timeout=DEADLINE) == b"1"
    writer.set(node, b"2")
    assert witness.get(timeout=DEADLINE) == b"2"
    assert calls.empty() and sessionless._stopped and ended._stopped


def test_stop_and_restart_from_inside_a_watch_callback(make_client, base):
    client, writer = make_client(), make_client()
    node = writer.create(f"{base}/n", b"0")
    calls, outcome = queue.Queue(), queue.Queue()

    def on_change(value, stat):
        calls.put(value)
        try:
            if value == b"restart":
                client.restart()
            elif value == b"stop":
                client.stop()
            else:
                return
            outcome.put(None)
        except BaseException as err:  # noqa: B036 - handed to the test
            outcome.put(err)

    client.DataWatch(node, on_change)
    assert calls.get(timeout=DEADLINE) == b"0"
    writer.set(node, b"restart")
    assert calls.get(timeout=DEADLINE) == b"restart"
    assert outcome.get(timeout=DEADLINE) is None
    assert client.connected
    writer.set(node, b"stop")
    assert calls.get(timeout=DEADLINE) == b"stop"
    assert outcome.get(timeout=DEADLINE) is None
    assert not client.connected
    writer.set(node, b"after")
    client.start()
    assert calls.get(timeout=DEADLINE) == b"after"


# ---- 11. listeners hear CONNECTED before start() returns ----------------------------


def test_a_listener_added_before_start_hears_connected_before_start_returns(make_client):
    client = make_client(start=False)
    heard = []
    client.add_listener(heard.append)
    client.start()
    assert heard == ["CONNECTED"]
    client.stop()
    client.start()
    assert heard == ["CONNECTED", "LOST", "CONNECTED"]
    client.restart()
    assert heard == ["CONNECTED", "LOST", "CONNECTED", "LOST", "CONNECTED"]


def test_start_from_a_listener_returns(make_client):
    client = make_client(start=False)
    heard, outcome = queue.Queue(), queue.Queue()

    def restart_once_lost(state):
        heard.put(state)
        if state == "LOST" and outcome.empty():
            try:
                client.start()
                outcome.put(None)
            except BaseException as err:  # noqa: B036 - handed to the test
                outcome.put(err)

    client.add_listener(restart_once_lost)
    client.start()
    client.stop()
    assert outcome.get(timeout=DEADLINE) is None
    assert [heard.get(timeout=DEADLINE) for _ in range(3)] == ["CONNECTED", "LOST", "CONNECTED"]
    assert client.connected


def test_a_blocked_listener_does_not_delay_another_clients_listeners(make_client, path):
    stuck, free = make_client(), make_client()
    held = threading.Lock()
    held.acquire()
    entered = threading.Event()

    def blocking(state):
        entered.set()
        with held:
            pass

    lock = stuck.Lock(path)
    lock.add_listener(blocking)
    assert lock.acquire(timeout=DEADLINE)
    assert entered.wait(DEADLINE)
    heard = queue.Queue()
    with Watchdog(held) as dog:
        other = free.Lock(f"{path}-free")
        other.add_listener(heard.put)
        assert other.acquire(timeout=DEADLINE)
        assert heard.get(timeout=DEADLINE) == "HELD"
        free.stop()
        assert heard.get(timeout=DEADLINE) == "LOST"
    assert not dog.fired, "one client's listener waited for another's"
    held.release()


def test_ctrl_c_interrupts_start_waiting_for_a_blocked_listener(make_client):
    """A listener must not block (kazoo says so too); if one does, Ctrl-C still ends start()."""
    client = make_client(start=False)
    held = threading.Lock()
    held.acquire()
    entered = threading.Event()

    def blocking(state):
        entered.set()
        with held:
            pass

    client.add_listener(blocking)

    def interrupt_once_blocked():
        assert entered.wait(DEADLINE)
        os.kill(os.getpid(), signal.SIGINT)

    helper = run_in_thread(interrupt_once_blocked)
    with Watchdog(held) as dog:
        with pytest.raises(KeyboardInterrupt):
            client.start()
    helper.result()
    assert not dog.fired
    held.release()


def test_a_listener_that_never_returns_delays_start_but_never_hangs_it(make_client):
    """As kazoo's stop() waits for its connection thread at most the session
    timeout (10 s at least), start() waits that long for a blocked listener,
    then goes on (with a warning in the log)."""
    client = make_client(start=False)
    held = threading.Lock()
    held.acquire()
    client.add_listener(lambda state: held.acquire() and held.release())
    try:
        with Watchdog(held) as dog:
            client.start()
        assert not dog.fired, "start() waited for the listener until the watchdog freed it"
        assert client.connected
    finally:
        if not dog.fired:
            held.release()


# ---- 12. retry: kazoo's retryable exceptions ------------------------------------------


def test_retry_retries_force_retry_and_operation_timeout_as_kazoos(client):
    import kazoo.exceptions
    import kazoo.retry

    for raised in (
        kazoo.retry.ForceRetryError,
        kazoo.exceptions.OperationTimeoutError,
        zoolock.ForceRetryError,
        zoolock.OperationTimeoutError,
    ):
        calls = []

        def flaky():
            calls.append(1)
            if len(calls) < 3:
                raise raised()
            return "done"

        assert client.retry(flaky) == "done" and len(calls) == 3, raised


def test_retry_keeps_retrying_a_forced_retry_past_five_tries_and_ctrl_c_ends_it(client):
    """kazoo's client.retry has no limit of tries for a lost race; Ctrl-C ends its pauses."""
    calls = []

    def loses_six_races():
        calls.append(1)
        if len(calls) <= 6:
            raise zoolock.ForceRetryError()
        return len(calls)

    assert client.retry(loses_six_races) == 7
    tried = threading.Event()

    def always_loses():
        tried.set()
        raise zoolock.ForceRetryError()

    def interrupt_once_tried():
        assert tried.wait(DEADLINE)
        os.kill(os.getpid(), signal.SIGINT)

    helper = run_in_thread(interrupt_once_tried)
    with pytest.raises(KeyboardInterrupt):
        client.retry(always_loses)
    helper.result()


def test_kazoos_counter_over_zoolock_clients_counts_every_increment(make_client, path):
    """kazoo's Counter raises ForceRetryError on a lost compare-and-set and
    relies on client.retry to try again."""
    from kazoo.recipe.counter import Counter

    clients = [make_client(), make_client()]
    errors = []

    def count(client):
        counter = Counter(client, path)
        for _ in range(30):
            try:
                counter += 1
            except Exception as err:  # noqa: BLE001 - the test counts them
                errors.append(err)

    workers = [run_in_thread(count, c) for c in clients]
    for worker in workers:
        worker.result(timeout=DEADLINE * 4)
    assert errors == []
    assert Counter(clients[0], path).value == 60
