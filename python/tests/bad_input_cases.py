"""The Python side of each entry of the bad-input catalogue (tests/bad_inputs.txt):
the bad calls, each handed to ``ctx.check``. A case releases what its set-up
held; the runner (test_bad_input.py) then looks for nodes left behind."""

import datetime
import socket

import zoolock
import secure_servers
from zoolock.security import OPEN_ACL_UNSAFE
from conftest import run_in_thread, until_children

#: zoolock's limits (core/src/options.rs: MAX_PATH_BYTES, MAX_IDENTIFIER_BYTES).
MAX_PATH_BYTES = 16 * 1024
MAX_IDENTIFIER_BYTES = 1_000_000
PATIENCE = 5.0


def lock_kinds(client):
    return (client.Lock, client.ReadLock, client.WriteLock)


def bad_path(path):
    def case(ctx):
        client = ctx.client()
        for make in (*lock_kinds(client), client.Semaphore):
            ctx.check(make.__name__, lambda make=make: make(path))

    return case


def bad_identifier(identifier):
    def case(ctx):
        client = ctx.client()
        for make in lock_kinds(client):
            ctx.check(make.__name__, lambda make=make: make(ctx.path("lock"), identifier=identifier))
        ctx.check("Semaphore", lambda: client.Semaphore(ctx.path("pool"), identifier=identifier))

    return case


def bad_connect(hosts):
    def case(ctx):
        client = ctx.client(start=False, hosts=hosts)
        ctx.check("start", lambda: client.start(timeout=2))

    return case


def unreachable(hosts):
    def case(ctx):
        client = ctx.client(start=False, hosts=hosts() if callable(hosts) else hosts)
        ctx.check("start", lambda: client.start(timeout=1))

    return case


def free_port_hosts():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def session_timeout(timeout):
    def case(ctx):
        ctx.check("KazooClient", lambda: ctx.client(timeout=timeout))

    return case


def resume_bad_client_id(ctx):
    for client_id in ((0, b"1" * 16), (7, b"1" * 15)):
        client = ctx.client(start=False, client_id=client_id)
        ctx.check(f"start, client_id {client_id[0]}", lambda client=client: client.start(timeout=PATIENCE))


def resume_ended_session(ctx):
    ended = ctx.client()
    client_id = ended.client_id
    ended.stop()
    client = ctx.client(start=False, client_id=client_id)
    ctx.check("start", lambda: client.start(timeout=PATIENCE))


def session_timeout_too_large(ctx):
    # 30 days: over the signed 32-bit milliseconds of the protocol; 1e300: over a Duration.
    for timeout in (30 * 86_400, 1e300):
        client = ctx.client(start=False, timeout=timeout)
        ctx.check(f"start, timeout={timeout}", lambda client=client: client.start(timeout=PATIENCE))


def missing_chroot(ctx):
    # kazoo's default creates a missing chroot; create_chroot=False refuses it.
    client = ctx.client(start=False, hosts=ctx.connect + "/zoolock-no-such-chroot", create_chroot=False)
    ctx.check("start", lambda: client.start(timeout=PATIENCE))


def connect_timeout(timeout):
    def case(ctx):
        client = ctx.client(start=False)
        ctx.check("start", lambda: client.start(timeout=timeout))

    return case


def acquire_both(**kwargs):
    """A free lock and semaphore acquired with ``kwargs``; released if held."""

    def case(ctx):
        client = ctx.client()
        lock, semaphore = client.Lock(ctx.path("lock")), client.Semaphore(ctx.path("pool"))
        ctx.check("Lock.acquire", lambda: lock.acquire(**kwargs))
        ctx.check("Semaphore.acquire", lambda: semaphore.acquire(**kwargs))
        lock.release()
        semaphore.release()

    return case


def held(ctx, client=None):
    """A held lock and a held semaphore lease of ``client`` (a new one by default)."""
    client = client or ctx.client()
    lock, semaphore = client.Lock(ctx.path("lock")), client.Semaphore(ctx.path("pool"))
    assert lock.acquire(timeout=PATIENCE) and semaphore.acquire(timeout=PATIENCE)
    return client, lock, semaphore


def again_while_held(**kwargs):
    def case(ctx):
        _, lock, semaphore = held(ctx)
        ctx.check("Lock.acquire again", lambda: lock.acquire(**kwargs))
        assert lock.release() and semaphore.release()

    return case


def reentrant_by_non_owner(*calls):
    """A reentrant lock held twice; each of ``calls`` made on it from another thread."""

    def case(ctx):
        lock = ctx.client().Lock(ctx.path("lock"), reentrant=True)
        assert lock.acquire(timeout=PATIENCE) and lock.acquire(timeout=PATIENCE)
        for what, call in calls:
            ctx.check(f"{what} from another thread", lambda: run_in_thread(call, lock).result())
        assert lock.release() and lock.is_acquired, "the hold is untouched"
        assert lock.release() and not lock.release()

    return case


def semaphore_again_while_held(ctx):
    _, lock, semaphore = held(ctx)
    ctx.check("Semaphore.acquire again", lambda: semaphore.acquire(timeout=0.5))
    ctx.check("Semaphore.acquire try again", lambda: semaphore.acquire(blocking=False))
    assert lock.release() and semaphore.release()
    assert not semaphore.release(), "one lease, given back by one release"


def limits_fit(ctx):
    client = ctx.client()

    def longest(name):
        prefix = ctx.path(name)
        return prefix + "p" * (MAX_PATH_BYTES - len(prefix.encode()))

    identifier = "x" * MAX_IDENTIFIER_BYTES
    lock = client.Lock(longest("lock"), identifier=identifier)
    semaphore = client.Semaphore(longest("pool"), identifier=identifier)
    # Megabyte writes, each synced to disk: slow on a loaded machine.
    ctx.check("Lock.acquire", lambda: lock.acquire(timeout=20))
    ctx.check("Semaphore.acquire", lambda: semaphore.acquire(timeout=20))
    assert lock.release() and semaphore.release()


def scheme_unknown(ctx):
    client = ctx.client()
    for make in lock_kinds(client):
        ctx.check(make.__name__, lambda make=make: make(ctx.path("lock"), scheme="zookeeper"))


def max_leases(count):
    def case(ctx):
        client = ctx.client()
        ctx.check("Semaphore", lambda: client.Semaphore(ctx.path("pool"), max_leases=count))

    return case


def inconsistent_leases(ctx):
    client = ctx.client()
    first = client.Semaphore(ctx.path("pool"), "first", max_leases=2)
    assert first.acquire(timeout=PATIENCE)
    other = client.Semaphore(ctx.path("pool"), "other", max_leases=3)
    ctx.check("Semaphore.acquire", lambda: other.acquire(timeout=PATIENCE))
    assert first.lease_holders() == ["first"]
    assert first.release()


def release_without_acquire(ctx):
    client = ctx.client()
    for make in lock_kinds(client):
        ctx.check(f"{make.__name__}.release", make(ctx.path("lock")).release)
    ctx.check("Semaphore.release", client.Semaphore(ctx.path("pool")).release)


def double_release(ctx):
    _, lock, semaphore = held(ctx)
    assert lock.release() and semaphore.release()
    ctx.check("second Lock.release", lock.release)
    ctx.check("second Semaphore.release", semaphore.release)


def after_close(ctx):
    client = ctx.client()
    lock, semaphore = client.Lock(ctx.path("lock")), client.Semaphore(ctx.path("pool"))
    client.stop()
    ctx.check("Lock.acquire", lock.acquire)
    ctx.check("Semaphore.acquire", semaphore.acquire)


def lock_after_close(ctx):
    client = ctx.client()
    client.stop()
    for make in lock_kinds(client):
        ctx.check(make.__name__, lambda make=make: make(ctx.path("lock")).acquire())
    ctx.check("Semaphore", lambda: client.Semaphore(ctx.path("pool")).acquire())


def never_started(ctx):
    client = ctx.client(start=False)
    ctx.check("Lock.acquire", lambda: client.Lock(ctx.path("lock")).acquire())
    ctx.check("Semaphore.acquire", lambda: client.Semaphore(ctx.path("pool")).acquire())


def query_after_close(ctx):
    client = ctx.client()
    lock, semaphore = client.Lock(ctx.path("lock")), client.Semaphore(ctx.path("pool"))
    client.stop()
    ctx.check("contenders", lock.contenders)
    ctx.check("lease_holders", semaphore.lease_holders)


def release_after_close(ctx):
    client, lock, semaphore = held(ctx)
    client.stop()
    ctx.check("Lock.release", lock.release)
    ctx.check("Semaphore.release", semaphore.release)


def queue_waiters(ctx):
    """A holder and a waiter, of a lock and of a semaphore, all on one client."""
    client, lock, semaphore = held(ctx)
    waiting_lock, waiting_semaphore = client.Lock(lock.path), client.Semaphore(semaphore.path)
    waiters = run_in_thread(waiting_lock.acquire), run_in_thread(waiting_semaphore.acquire)
    until_children(ctx.kz, lock.path, lambda c: len(c) == 2, "the lock's waiter")
    until_children(ctx.kz, semaphore.path + "-__lock__", lambda c: len(c) == 1, "the semaphore's waiter")
    return client, (lock, semaphore), (waiting_lock, waiting_semaphore), waiters


def waiting_when_closed(ctx):
    client, _, _, (lock_waiter, semaphore_waiter) = queue_waiters(ctx)
    client.stop()
    ctx.check("queued Lock.acquire", lock_waiter.result)
    ctx.check("queued Semaphore.acquire", semaphore_waiter.result)


def close_twice(ctx):
    client = ctx.client()
    client.stop()
    ctx.check("second stop", client.stop)


def cancel_while_waiting(ctx):
    _, (lock, semaphore), waiting, (lock_waiter, semaphore_waiter) = queue_waiters(ctx)
    for handle in waiting:
        handle.cancel()
    ctx.check("queued Lock.acquire", lock_waiter.result)
    ctx.check("queued Semaphore.acquire", semaphore_waiter.result)
    assert len(ctx.kz.get_children(lock.path)) == 1, "the holder's node alone"
    assert lock.release() and semaphore.release()


def cancel_with_nothing_pending(ctx):
    client = ctx.client()
    lock, semaphore = client.Lock(ctx.path("lock")), client.Semaphore(ctx.path("pool"))
    lock.cancel()
    semaphore.cancel()
    ctx.check("Lock.acquire", lambda: lock.acquire(timeout=PATIENCE))
    ctx.check("Semaphore.acquire", lambda: semaphore.acquire(timeout=PATIENCE))
    assert lock.release() and semaphore.release()


def acl_forbids_create(ctx):
    read_only = ctx.path("read-only")
    ctx.harness.call("create", path=read_only, acl="read")
    client = ctx.client()
    ctx.check("Lock.acquire", lambda: client.Lock(read_only).acquire(timeout=PATIENCE))
    ctx.check("Semaphore.acquire", lambda: client.Semaphore(read_only + "/pool").acquire(timeout=PATIENCE))


def lock_under_ephemeral(ctx):
    client, lock, semaphore = held(ctx)
    ephemeral = f"{lock.path}/{lock.node}"
    for make in lock_kinds(client):
        ctx.check(make.__name__, lambda make=make: make(ephemeral).acquire(timeout=PATIENCE))
    ctx.check("Semaphore", lambda: client.Semaphore(ephemeral + "/pool").acquire(timeout=PATIENCE))
    assert lock.release() and semaphore.release()


def chroot_deleted(ctx):
    lock = ctx.client().Lock(ctx.path("lock"))
    assert lock.acquire(timeout=PATIENCE)
    inside = ctx.client(hosts=ctx.connect + f"{lock.path}/{lock.node}", create_chroot=False)
    assert lock.release()
    for make in lock_kinds(inside):
        ctx.check(make.__name__, lambda make=make: make("/locks/x").acquire(timeout=PATIENCE))
    ctx.check("Semaphore", lambda: inside.Semaphore("/pools/x").acquire(timeout=PATIENCE))


#: The connect timeout of the TLS and SASL cases: each must fail within it.
SECURE_CONNECT_TIMEOUT = 5.0


def secure(mode, hosts, start_timeout=SECURE_CONNECT_TIMEOUT, **arguments):
    """A client of the ``mode`` server (secure_servers.py) with ``hosts``
    ("secure", "secure_by_ip" or "direct") and ``arguments``, each a value or a
    function of the server's tls_files; its start() is the check."""

    def case(ctx):
        zk = secure_servers.server(mode)
        files = zk.tls_files or {}
        given = {k: v(files) if callable(v) else v for k, v in arguments.items()}

        def start():
            client = ctx.client(start=False, hosts=getattr(zk, hosts), **given)
            client.start(timeout=start_timeout)

        ctx.check("start", start)

    # The server starts before the entry's clock does (test_bad_input.py).
    case.prepare = lambda: secure_servers.server(mode)
    return case


def ca(files):
    return files["ca"]


def host_rustls_cannot_name(ctx):
    zk = secure_servers.server("tls")
    hosts = zk.secure_by_ip.replace("127.0.0.1", "127.1")
    for check_hostname in (True, False):
        def start(check_hostname=check_hostname):
            client = ctx.client(start=False, hosts=hosts, use_ssl=True, ca=zk.tls_files["ca"],
                                check_hostname=check_hostname)
            try:
                client.start(timeout=SECURE_CONNECT_TIMEOUT)
            except ValueError as error:
                assert '"127.1"' in str(error), f"the host is not named: {error}"
                raise

        ctx.check(f"start, check_hostname={check_hostname}", start)


host_rustls_cannot_name.prepare = lambda: secure_servers.server("tls")


def sasl_options(mechanism="DIGEST-MD5", password=secure_servers.SASL_PASSWORD):
    return {"mechanism": mechanism, "username": secure_servers.SASL_USER, "password": password}


def unknown_mechanism(ctx):
    ctx.check("KazooClient", lambda: ctx.client(start=False, sasl_options=sasl_options("PLAIN")))


HOUR = datetime.timedelta(hours=1)


def recipes_on_bad_path(path, acl_calls=True):
    """Each recipe, one lease try, a multi-lock and (``acl_calls``) the ACL calls on ``path``."""

    def case(ctx):
        client = ctx.client()
        acls = (
            ("get_acls", lambda: client.get_acls(path)),
            ("set_acls", lambda: client.set_acls(path, OPEN_ACL_UNSAFE)),
        )
        for name, make in acls * acl_calls + (
            ("Barrier", lambda: client.Barrier(path)),
            ("DoubleBarrier", lambda: client.DoubleBarrier(path, 2)),
            ("Party", lambda: client.Party(path)),
            ("ShallowParty", lambda: client.ShallowParty(path)),
            ("Queue", lambda: client.Queue(path)),
            ("LockingQueue", lambda: client.LockingQueue(path)),
            ("Counter", lambda: client.Counter(path)),
            ("NonBlockingLease", lambda: client.NonBlockingLease(path, HOUR)),
            ("MultiNonBlockingLease", lambda: client.MultiNonBlockingLease(2, path, HOUR)),
            ("MultiLock", lambda: client.MultiLock([ctx.path("a"), path])),
        ):
            ctx.check(name, make)

    return case


def priority_out_of_range(ctx):
    client = ctx.client()
    queue, jobs = client.Queue(ctx.path("queue")), client.LockingQueue(ctx.path("jobs"))
    ctx.check("Queue.put", lambda: queue.put(b"x", priority=1000))
    ctx.check("LockingQueue.put", lambda: jobs.put(b"x", priority=1000))
    ctx.check("LockingQueue.put_all", lambda: jobs.put_all([b"x"], priority=1000))
    assert (len(queue), len(jobs)) == (0, 0), "nothing put"


def multi_lock_no_paths(ctx):
    client = ctx.client()
    ctx.check("MultiLock([])", lambda: client.MultiLock([]))


def double_barrier_no_clients(ctx):
    client = ctx.client()
    ctx.check("DoubleBarrier(path, 0)", lambda: client.DoubleBarrier(ctx.path("barrier"), 0))


def recipe_timeout_negative(ctx):
    client = ctx.client()
    barrier, jobs = client.Barrier(ctx.path("barrier")), client.LockingQueue(ctx.path("jobs"))
    ctx.check("Barrier.wait(timeout=-1)", lambda: barrier.wait(timeout=-1))
    ctx.check("LockingQueue.get(timeout=-1)", lambda: jobs.get(timeout=-1))


def acl_empty(ctx):
    client = ctx.client()
    path = ctx.path("node")
    client.create(path, makepath=True)
    ctx.check("set_acls(path, [])", lambda: client.set_acls(path, []))
    assert client.get_acls(path)[0] == OPEN_ACL_UNSAFE, "unchanged"


def transaction_too_large(ctx):
    client = ctx.client()
    big = b"x" * 700_000
    client.ensure_path(ctx.base)
    transaction = client.transaction()
    transaction.create(ctx.path("a"), big)
    transaction.create(ctx.path("b"), big)
    ctx.check("transaction.commit", transaction.commit)
    jobs = client.LockingQueue(ctx.path("jobs"))
    ctx.check("LockingQueue.put_all", lambda: jobs.put_all([big, big]))
    assert client.get_children(ctx.base) == ["jobs"], "nothing made but the queue's path"
    assert len(jobs) == 0, "nothing put"


def recipe_after_close(ctx):
    client = ctx.client()
    path = ctx.path("node")
    client.create(path, makepath=True)
    barrier = client.Barrier(ctx.path("barrier"))
    double = client.DoubleBarrier(ctx.path("double"), 2)
    party = client.Party(ctx.path("party"))
    node = client.PersistentNode(ctx.path("registry/n"))
    queue, jobs = client.Queue(ctx.path("queue")), client.LockingQueue(ctx.path("jobs"))
    counter = client.Counter(ctx.path("counter"))
    multi = client.MultiLock([ctx.path("a"), ctx.path("b")])
    transaction = client.transaction()
    transaction.create(ctx.path("t"))
    client.stop()
    for name, call in (
        ("Barrier.create", barrier.create),
        ("Barrier.wait", lambda: barrier.wait(timeout=PATIENCE)),
        ("DoubleBarrier.enter", double.enter),
        ("Party.join", party.join),
        ("PersistentNode.start", node.start),
        ("Queue.put", lambda: queue.put(b"x")),
        ("Queue.get", queue.get),
        ("LockingQueue.put", lambda: jobs.put(b"x")),
        ("LockingQueue.put_all", lambda: jobs.put_all([b"x"])),
        ("LockingQueue.get", lambda: jobs.get(timeout=PATIENCE)),
        ("Counter.value", lambda: counter.value),
        ("Counter += 1", lambda: counter.__add__(1)),
        ("NonBlockingLease", lambda: client.NonBlockingLease(ctx.path("lease"), HOUR)),
        ("MultiLock.acquire", lambda: multi.acquire(timeout=PATIENCE)),
        ("get_acls", lambda: client.get_acls(path)),
        ("set_acls", lambda: client.set_acls(path, OPEN_ACL_UNSAFE)),
        ("add_auth", lambda: client.add_auth("digest", "user:pw")),
        ("transaction.commit", transaction.commit),
    ):
        ctx.check(name, call)


SECURE_CASES = {
    "tls-wrong-ca": secure("tls", "secure", use_ssl=True, ca=lambda f: f["other_ca"]),
    "tls-no-client-cert": secure("mutual_tls", "secure", use_ssl=True, ca=ca),
    "tls-untrusted-client-cert": secure("mutual_tls", "secure", use_ssl=True, ca=ca,
                                        certfile=lambda f: f["stranger_cert"], keyfile=lambda f: f["stranger_key"]),
    "tls-key-password-wrong": secure("mutual_tls", "secure", use_ssl=True, ca=ca, certfile=lambda f: f["client_cert"],
                                     keyfile=lambda f: f["client_key_encrypted"], keyfile_password="not-the-pw"),
    "tls-key-password-missing": secure("mutual_tls", "secure", use_ssl=True, ca=ca,
                                       certfile=lambda f: f["client_cert"],
                                       keyfile=lambda f: f["client_key_encrypted"]),
    "tls-plaintext-to-secure-port": secure("tls", "secure_by_ip"),
    "tls-to-plain-port": secure("tls", "direct", use_ssl=True, ca=ca),
    "tls-hostname-mismatch": secure("tls", "secure_by_ip", use_ssl=True, ca=ca, check_hostname=True),
    "tls-verify-certs-off": secure("tls", "secure", use_ssl=True, ca=ca, verify_certs=False),
    "tls-check-hostname-without-verify": secure("tls", "secure", use_ssl=True, ca=ca, verify_certs=False,
                                                check_hostname=True),
    "tls-host-rustls-cannot-name": host_rustls_cannot_name,
    "sasl-wrong-password": secure("sasl", "connect", sasl_options=sasl_options(password="wrong-pw")),
    "sasl-missing-where-required": secure("sasl", "connect"),
    "sasl-unknown-mechanism": unknown_mechanism,
}


CASES = {
    "path-empty": bad_path(""),
    "path-relative": bad_path("locks/x"),
    "path-root": bad_path("/"),
    "path-trailing-slash": bad_path("/locks/x/"),
    "path-double-slash": bad_path("/locks//x"),
    "path-dot": bad_path("/locks/./x"),
    "path-dotdot": bad_path("/locks/../x"),
    "path-nul": bad_path("/locks/x\0y"),
    "path-control-char": bad_path("/locks/x\x01y"),
    "path-private-use": bad_path("/locks/x\ue000"),
    "path-reserved": bad_path("/zookeeper"),
    "path-reserved-child": bad_path("/zookeeper/locks"),
    "path-not-utf8": bad_path("/locks/\udcff"),
    "path-too-long": bad_path("/" + "p" * MAX_PATH_BYTES),
    "limits-fit-one-request": limits_fit,
    "identifier-not-utf8": bad_identifier("\udcff"),
    "identifier-too-large": bad_identifier("x" * (MAX_IDENTIFIER_BYTES + 1)),
    "scheme-unknown": scheme_unknown,
    "connect-empty": bad_connect(""),
    "connect-chroot-only": bad_connect("/app"),
    "connect-hosts-empty": bad_connect(" , ,/app"),
    "connect-host-whitespace": bad_connect("zk 1:2181"),
    "connect-bracket-port-empty": bad_connect("[::1]:"),
    "connect-port-not-number": bad_connect("127.0.0.1:abc"),
    "connect-port-signed": bad_connect("127.0.0.1:+2181"),
    "connect-port-zero": bad_connect("127.0.0.1:0"),
    "connect-port-too-large": bad_connect("127.0.0.1:65536"),
    "connect-too-many-colons": bad_connect("zk1:2181:2181"),
    "connect-bracket-unclosed": bad_connect("[::1:2181"),
    "connect-chroot-trailing-slash": bad_connect("127.0.0.1:2181/app/"),
    "connect-chroot-reserved": bad_connect("127.0.0.1:2181/zookeeper"),
    "server-unreachable": unreachable(free_port_hosts),
    "connect-no-port-unreachable": unreachable("192.0.2.1"),
    "missing-chroot": missing_chroot,
    "session-timeout-zero": session_timeout(0),
    "session-timeout-negative": session_timeout(-1),
    "session-timeout-too-large": session_timeout_too_large,
    "connect-timeout-zero": connect_timeout(0),
    "connect-timeout-negative": connect_timeout(-1),
    "resume-bad-client-id": resume_bad_client_id,
    "resume-ended-session": resume_ended_session,
    "timeout-negative": acquire_both(timeout=-1),
    "timeout-nan": acquire_both(timeout=float("nan")),
    "timeout-infinite": acquire_both(timeout=float("inf")),
    "timeout-too-large": acquire_both(timeout=1e300),
    "timeout-without-blocking": acquire_both(blocking=False, timeout=1),
    "lease-zero": acquire_both(lease=0),
    "lease-negative": acquire_both(lease=-1),
    "semaphore-max-leases-zero": max_leases(0),
    "semaphore-max-leases-negative": max_leases(-1),
    "semaphore-max-leases-too-large": max_leases(2**32),
    "semaphore-max-leases-inconsistent": inconsistent_leases,
    "release-without-acquire": release_without_acquire,
    "double-release": double_release,
    "acquire-again-while-held": again_while_held(timeout=0.5),
    "try-again-while-held": again_while_held(blocking=False),
    "reentrant-acquire-by-non-owner": reentrant_by_non_owner(
        ("Lock.acquire(timeout=0.5)", lambda lock: lock.acquire(timeout=0.5)),
        ("Lock.acquire(blocking=False)", lambda lock: lock.acquire(blocking=False)),
    ),
    "reentrant-release-by-non-owner": reentrant_by_non_owner(("Lock.release", lambda lock: lock.release())),
    "semaphore-again-while-held": semaphore_again_while_held,
    "acquire-after-close": after_close,
    "lock-after-close": lock_after_close,
    "acquire-never-started": never_started,
    "query-after-close": query_after_close,
    "release-after-close": release_after_close,
    "waiting-when-closed": waiting_when_closed,
    "close-twice": close_twice,
    "cancel-while-waiting": cancel_while_waiting,
    "cancel-with-nothing-pending": cancel_with_nothing_pending,
    "acl-forbids-create": acl_forbids_create,
    "lock-under-ephemeral": lock_under_ephemeral,
    "chroot-deleted": chroot_deleted,
    # kazoo's znode calls take a relative path from the root: only the recipes refuse it.
    "recipe-path-invalid": recipes_on_bad_path("recipes/x", acl_calls=False),
    "recipe-path-not-utf8": recipes_on_bad_path("/recipes/\udcff"),
    "recipe-timeout-negative": recipe_timeout_negative,
    "queue-priority-out-of-range": priority_out_of_range,
    "multi-lock-no-paths": multi_lock_no_paths,
    "double-barrier-no-clients": double_barrier_no_clients,
    "acl-empty": acl_empty,
    "recipe-after-close": recipe_after_close,
    "transaction-too-large": transaction_too_large,
    **SECURE_CASES,
}
