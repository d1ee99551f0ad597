using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Reflection.Emit;
using System.Text;
using System.Threading;
using NUnit.Framework;
using ZooLock.Native;

namespace ZooLock.Tests
{
    /// <summary>
    /// The C# side of each entry of tests/bad_inputs.txt: the bad calls, each
    /// through <see cref="BadInputContext.Check(string, Func{object})"/>. A case
    /// disposes what its set-up held; the runner then looks for nodes left behind.
    /// </summary>
    public static unsafe class BadInputCases
    {
        /// <summary>zoolock's limits (core/src/options.rs: MAX_PATH_BYTES, MAX_IDENTIFIER_BYTES).</summary>
        const int MaxPathBytes = 16 * 1024, MaxIdentifierBytes = 1000000;

        static readonly TimeSpan Patience = TimeSpan.FromSeconds(5);
        static readonly TimeSpan Short = TimeSpan.FromMilliseconds(500);

        public static readonly Dictionary<string, Action<BadInputContext>> All = new Dictionary<string, Action<BadInputContext>>
        {
            { "path-empty", BadPath("") },
            { "path-relative", BadPath("locks/x") },
            { "path-root", BadPath("/") },
            { "path-trailing-slash", BadPath("/locks/x/") },
            { "path-double-slash", BadPath("/locks//x") },
            { "path-dot", BadPath("/locks/./x") },
            { "path-dotdot", BadPath("/locks/../x") },
            { "path-nul", BadPath("/locks/x\0y") },
            { "path-control-char", BadPath("/locks/x\u0001y") },
            { "path-private-use", BadPath("/locks/x\ue000") },
            { "path-reserved", BadPath("/zookeeper") },
            { "path-reserved-child", BadPath("/zookeeper/locks") },
            { "path-not-utf8", c =>
                {
                    BadPath("/locks/\ud800")(c);
                    var bytes = Encoding.ASCII.GetBytes("/locks/").Concat(new byte[] { 0xff }).ToArray();
                    NativeNew(c, bytes, new byte[0], (int)ZooKeeperNamingScheme.Kazoo);
                } },
            { "path-too-long", BadPath("/" + new string('p', MaxPathBytes)) },
            { "limits-fit-one-request", LimitsFit },
            { "identifier-not-utf8", c =>
                {
                    BadIdentifier("\ud800")(c);
                    NativeNew(c, Encoding.ASCII.GetBytes(c.Path("lock")), new byte[] { 0xff, 0xfe }, (int)ZooKeeperNamingScheme.Kazoo);
                } },
            { "identifier-too-large", BadIdentifier(new string('x', MaxIdentifierBytes + 1)) },
            { "scheme-unknown", c =>
                {
                    var session = c.Session();
                    session.With(s =>
                    {
                        var path = Encoding.ASCII.GetBytes(c.Path("lock"));
                        ZlHolder* created = null;
                        int status;
                        fixed (byte* p = path) status = NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex, 7, null, 0, 0, &created);
                        if (created != null) NativeMethods.zl_holder_free(created);
                        c.CheckStatus("zl_lock_new, scheme 7", status);
                        return 0;
                    });
                } },
            { "connect-empty", BadConnect("") },
            { "connect-chroot-only", BadConnect("/app") },
            { "connect-hosts-empty", BadConnect(" , ,/app") },
            { "connect-host-whitespace", BadConnect("zk 1:2181") },
            { "connect-bracket-port-empty", BadConnect("[::1]:") },
            { "connect-port-not-number", BadConnect("127.0.0.1:abc") },
            { "connect-port-signed", BadConnect("127.0.0.1:+2181") },
            { "connect-port-zero", BadConnect("127.0.0.1:0") },
            { "connect-port-too-large", BadConnect("127.0.0.1:65536") },
            { "connect-too-many-colons", BadConnect("zk1:2181:2181") },
            { "connect-bracket-unclosed", BadConnect("[::1:2181") },
            { "connect-chroot-trailing-slash", BadConnect("127.0.0.1:2181/app/") },
            { "connect-chroot-reserved", BadConnect("127.0.0.1:2181/zookeeper") },
            { "server-unreachable", c => Connect(c, "127.0.0.1:" + FreePort(), TimeSpan.Zero, TimeSpan.FromSeconds(1)) },
            { "connect-no-port-unreachable", c => Connect(c, "192.0.2.1", TimeSpan.Zero, TimeSpan.FromSeconds(1)) },
            { "missing-chroot", c => Connect(c, Setup.Zk.Connect + "/zoolock-no-such-chroot", TimeSpan.Zero, TimeSpan.Zero) },
            { "session-timeout-negative", c => Connect(c, Setup.Zk.Connect, TimeSpan.FromSeconds(-1), TimeSpan.Zero) },
            { "session-timeout-too-large", c =>
                {
                    Connect(c, Setup.Zk.Connect, TimeSpan.FromDays(30), TimeSpan.Zero);
                    Connect(c, Setup.Zk.Connect, TimeSpan.MaxValue, TimeSpan.Zero);
                } },
            { "connect-timeout-negative", c => Connect(c, Setup.Zk.Connect, TimeSpan.Zero, TimeSpan.FromSeconds(-1)) },
            { "resume-bad-client-id", c =>
                {
                    foreach (var id in new[] { new ZooKeeperClientId(0, new byte[16]), new ZooKeeperClientId(7, new byte[15]) })
                    {
                        var options = new ZooKeeperSessionOptions { Resume = id };
                        c.Check("ZooKeeperSession resuming " + id, () => new ZooKeeperSession(Setup.Zk.Connect, options));
                    }
                } },
            { "resume-ended-session", c =>
                {
                    ZooKeeperClientId id;
                    using (var ended = Fixture.Session()) id = ended.ClientId;
                    var options = new ZooKeeperSessionOptions { Resume = id };
                    c.Check("ZooKeeperSession", () => new ZooKeeperSession(Setup.Zk.Connect, options));
                } },
            { "timeout-negative", c =>
                {
                    var session = c.Session();
                    var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
                    var rw = new ZooKeeperDistributedReaderWriterLock(c.Path("rw"), session);
                    var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
                    var negative = TimeSpan.FromSeconds(-1);
                    c.Check("Acquire", () => mutex.Acquire(negative));
                    c.Check("TryAcquire", () => mutex.TryAcquire(negative));
                    c.Check("AcquireAsync", () => mutex.AcquireAsync(negative));
                    c.Check("TryAcquireAsync", () => mutex.TryAcquireAsync(negative));
                    c.Check("AcquireReadLock", () => rw.AcquireReadLock(negative));
                    c.Check("TryAcquireWriteLock", () => rw.TryAcquireWriteLock(negative));
                    c.Check("semaphore Acquire", () => semaphore.Acquire(negative));
                    c.Check("semaphore TryAcquireAsync", () => semaphore.TryAcquireAsync(negative));
                } },
            { "timeout-infinite", AcquireBoth(Timeout.InfiniteTimeSpan) },
            { "timeout-too-large", AcquireBoth(TimeSpan.MaxValue) },
            { "lease-zero", c => NativeLease(c, 0) },
            { "lease-negative", c => NativeLease(c, -2) },
            { "semaphore-max-leases-zero", MaxLeases(0) },
            { "semaphore-max-leases-negative", MaxLeases(-1) },
            { "semaphore-max-leases-inconsistent", c =>
                {
                    var session = c.Session();
                    var first = new ZooKeeperDistributedSemaphore(c.Path("pool"), 2, session, "first");
                    using (first.Acquire(Patience))
                    {
                        var other = new ZooKeeperDistributedSemaphore(c.Path("pool"), 3, session, "other");
                        c.Check("Acquire", () => other.Acquire(Patience));
                        CollectionAssert.AreEqual(new[] { "first" }, first.GetLeaseHolders());
                    }
                } },
            { "release-without-acquire", c =>
                {
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    var name = locker.CreateLock();
                    c.Check("Release of a name never locked", () => locker.Release(name));
                    c.Check("Release of a name never created", () => locker.Release("never-created"));
                } },
            { "double-release", c =>
                {
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    var name = locker.CreateLock();
                    Assert.IsTrue(locker.Lock(name, (int)Patience.TotalMilliseconds) && locker.Release(name));
                    c.Check("second Release", () => locker.Release(name));
                    var session = c.Session();
                    var handle = new ZooKeeperDistributedLock(c.Path("mutex"), session).Acquire(Patience);
                    var lease = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session).Acquire(Patience);
                    handle.Dispose();
                    handle.Dispose();
                    lease.Dispose();
                    lease.Dispose();
                } },
            { "acquire-again-while-held", c =>
                {
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    var name = locker.CreateLock();
                    Assert.IsTrue(locker.Lock(name, (int)Patience.TotalMilliseconds));
                    c.Check("ZookeeperLocker.Lock again", () => locker.Lock(name, (int)Short.TotalMilliseconds));
                    Assert.IsTrue(locker.Release(name));
                } },
            { "try-again-while-held", c =>
                {
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    var name = locker.CreateLock();
                    Assert.IsTrue(locker.Lock(name, (int)Patience.TotalMilliseconds));
                    c.Check("ZookeeperLocker.Lock(name, 0) again", () => locker.Lock(name, 0));
                    Assert.IsTrue(locker.Release(name));
                    AgainWhileHeld(c, (mutex, semaphore) => c.Check("TryAcquire again", () => mutex.TryAcquire(TimeSpan.Zero)));
                } },
            { "reentrant-acquire-by-non-owner", c =>
                {
                    var mutex = new ZooKeeperDistributedLock(c.Path("lock"), c.Session(), reentrant: true);
                    var outer = mutex.Acquire(Patience);
                    var inner = mutex.Acquire(Patience);
                    c.Check("TryAcquire(0.5 s) on another thread", () => System.Threading.Tasks.Task.Run(() => mutex.TryAcquire(Short)).Result);
                    c.Check("TryAcquire() on another thread", () => System.Threading.Tasks.Task.Run(() => mutex.TryAcquire()).Result);
                    inner.Dispose();
                    Assert.That(mutex.GetContenders().Count, Is.EqualTo(1), "the hold is untouched");
                    outer.Dispose();
                    Assert.That(mutex.GetContenders(), Is.Empty);
                } },
            { "reentrant-release-by-non-owner", NativeReleaseByNonOwner },
            { "second-acquire-of-one-object", c => AgainWhileHeld(c, (mutex, semaphore) =>
                {
                    c.Check("Acquire again", () => mutex.Acquire(Short));
                    c.Check("semaphore Acquire again", () => semaphore.Acquire(Short));
                }) },
            { "acquire-after-close", c =>
                {
                    var session = c.Session();
                    var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
                    var rw = new ZooKeeperDistributedReaderWriterLock(c.Path("rw"), session);
                    var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
                    session.Dispose();
                    c.Check("Acquire", () => mutex.Acquire());
                    c.Check("TryAcquire", () => mutex.TryAcquire());
                    c.Check("AcquireAsync", () => BadInputContext.Await(mutex.AcquireAsync()));
                    c.Check("AcquireReadLock", () => rw.AcquireReadLock());
                    c.Check("AcquireWriteLockAsync", () => BadInputContext.Await(rw.AcquireWriteLockAsync()));
                    c.Check("semaphore Acquire", () => semaphore.Acquire());
                } },
            { "lock-after-close", c =>
                {
                    var session = c.Session();
                    session.Dispose();
                    c.Check("ZooKeeperDistributedLock", () => new ZooKeeperDistributedLock(c.Path("lock"), session));
                    c.Check("ZooKeeperDistributedReaderWriterLock", () => new ZooKeeperDistributedReaderWriterLock(c.Path("lock"), session));
                    c.Check("ZooKeeperDistributedSemaphore", () => new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session));
                } },
            { "query-after-close", c =>
                {
                    var session = c.Session();
                    var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
                    var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
                    session.Dispose();
                    c.Check("GetContenders", () => mutex.GetContenders());
                    c.Check("GetLeaseHolders", () => semaphore.GetLeaseHolders());
                } },
            { "release-after-close", c =>
                {
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    var name = locker.CreateLock();
                    Assert.IsTrue(locker.Lock(name, (int)Patience.TotalMilliseconds));
                    var handle = new ZooKeeperDistributedLock(c.Path("mutex"), locker.Session).Acquire(Patience);
                    locker.Session.Dispose();
                    c.Check("Release", () => locker.Release(name));
                    handle.Dispose();
                } },
            { "waiting-when-closed", c => QueueWaiters(c, CancellationToken.None, (session, cancel, lockWaiter, leaseWaiter) =>
                {
                    session.Dispose();
                    c.Check("queued AcquireAsync", () => BadInputContext.Await(lockWaiter));
                    c.Check("queued semaphore AcquireAsync", () => BadInputContext.Await(leaseWaiter));
                }) },
            { "close-twice", c =>
                {
                    var session = c.Session();
                    session.Dispose();
                    c.Check("second Dispose", () => session.Dispose());
                    var locker = c.Own(new ZookeeperLocker(c.Path("lock"), Setup.Zk.Connect));
                    locker.Dispose();
                    c.Check("second ZookeeperLocker.Dispose", () => locker.Dispose());
                } },
            { "cancel-while-waiting", c =>
                {
                    using (var cancel = new CancellationTokenSource())
                    {
                        QueueWaiters(c, cancel.Token, (session, _, lockWaiter, leaseWaiter) =>
                        {
                            cancel.Cancel();
                            c.Check("queued AcquireAsync", () => BadInputContext.Await(lockWaiter));
                            c.Check("queued semaphore AcquireAsync", () => BadInputContext.Await(leaseWaiter));
                            Assert.That(Children(c.Path("lock")).Count, Is.EqualTo(1), "the holder's node alone");
                        });
                    }
                } },
            { "cancel-token-already-cancelled", c =>
                {
                    var session = c.Session();
                    var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
                    var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
                    var cancelled = new CancellationToken(true);
                    c.Check("Acquire", () => mutex.Acquire(null, cancelled));
                    c.Check("TryAcquireAsync", () => BadInputContext.Await(mutex.TryAcquireAsync(Patience, cancelled)));
                    c.Check("semaphore Acquire", () => semaphore.Acquire(null, cancelled));
                } },
            { "acl-forbids-create", c =>
                {
                    var readOnly = c.Path("read-only");
                    Setup.Zk.Send(new Dictionary<string, object> { { "cmd", "create" }, { "path", readOnly }, { "acl", "read" } });
                    var session = c.Session();
                    c.Check("Acquire", () => new ZooKeeperDistributedLock(readOnly, session).Acquire(Patience));
                    c.Check("AcquireWriteLock", () => new ZooKeeperDistributedReaderWriterLock(readOnly, session).AcquireWriteLock(Patience));
                    c.Check("semaphore Acquire", () => new ZooKeeperDistributedSemaphore(readOnly + "/pool", 1, session).Acquire(Patience));
                } },
            { "lock-under-ephemeral", c =>
                {
                    var session = c.Session();
                    using (var held = new ZooKeeperDistributedLock(c.Path("lock"), session).Acquire(Patience))
                    {
                        c.Check("Acquire", () => new ZooKeeperDistributedLock(held.Node, session).Acquire(Patience));
                        c.Check("AcquireReadLock", () => new ZooKeeperDistributedReaderWriterLock(held.Node, session).AcquireReadLock(Patience));
                        c.Check("semaphore Acquire", () => new ZooKeeperDistributedSemaphore(held.Node + "/pool", 1, session).Acquire(Patience));
                    }
                } },
            { "chroot-deleted", c =>
                {
                    ZooKeeperSession inside;
                    using (var held = new ZooKeeperDistributedLock(c.Path("lock"), c.Session()).Acquire(Patience))
                    {
                        inside = c.Own(new ZooKeeperSession(Setup.Zk.Connect + held.Node, Fixture.SessionTimeout, TimeSpan.Zero));
                    }
                    c.Check("Acquire", () => new ZooKeeperDistributedLock("/locks/x", inside).Acquire(Patience));
                    c.Check("AcquireReadLock", () => new ZooKeeperDistributedReaderWriterLock("/locks/x", inside).AcquireReadLock(Patience));
                    c.Check("AcquireWriteLock", () => new ZooKeeperDistributedReaderWriterLock("/locks/x", inside).AcquireWriteLock(Patience));
                    c.Check("semaphore Acquire", () => new ZooKeeperDistributedSemaphore("/pools/x", 1, inside).Acquire(Patience));
                } },
            { "tls-wrong-ca", c => Secure(c, SecureServers.Tls, zk => zk.Secure, zk => { var o = SecureServers.Trusting(zk); o.Ca = zk.Pem("other_ca"); return o; }) },
            { "tls-no-client-cert", c => Secure(c, SecureServers.MutualTls, zk => zk.Secure, SecureServers.Trusting) },
            { "tls-untrusted-client-cert", c => Secure(c, SecureServers.MutualTls, zk => zk.Secure, zk =>
                {
                    var o = SecureServers.Trusting(zk);
                    o.CertFile = zk.Pem("stranger_cert");
                    o.KeyFile = zk.Pem("stranger_key");
                    return o;
                }) },
            { "tls-key-password-wrong", c => Secure(c, SecureServers.MutualTls, zk => zk.Secure, zk => { var o = EncryptedKey(zk); o.KeyFilePassword = "not-the-pw"; return o; }) },
            { "tls-key-password-missing", c => Secure(c, SecureServers.MutualTls, zk => zk.Secure, EncryptedKey) },
            { "tls-plaintext-to-secure-port", c => Secure(c, SecureServers.Tls, zk => zk.SecureByIp, zk => SecureServers.Options()) },
            { "tls-to-plain-port", c => Secure(c, SecureServers.Tls, zk => zk.Direct, zk => { var o = SecureServers.Trusting(zk); o.CheckHostname = false; return o; }) },
            { "tls-hostname-mismatch", c => Secure(c, SecureServers.Tls, zk => zk.SecureByIp, SecureServers.Trusting) },
            { "tls-verify-certs-off", c => Secure(c, SecureServers.Tls, zk => zk.Secure, zk =>
                {
                    var o = SecureServers.Trusting(zk);
                    o.VerifyCerts = false;
                    o.CheckHostname = false;
                    return o;
                }) },
            { "tls-check-hostname-without-verify", c => Secure(c, SecureServers.Tls, zk => zk.Secure, zk => { var o = SecureServers.Trusting(zk); o.VerifyCerts = false; return o; }) },
            { "tls-host-rustls-cannot-name", c =>
                {
                    var zk = SecureServers.Tls;
                    var hosts = zk.SecureByIp.Replace("127.0.0.1", "127.1");
                    foreach (var checkHostname in new[] { true, false })
                        c.Check("connect, CheckHostname " + checkHostname, () =>
                        {
                            var options = SecureServers.Trusting(zk);
                            options.CheckHostname = checkHostname;
                            try { return new ZooKeeperSession(hosts, options); }
                            catch (ArgumentException error)
                            {
                                StringAssert.Contains("\"127.1\"", error.Message, "the host is named");
                                throw;
                            }
                        });
                } },
            { "sasl-wrong-password", c => Secure(c, SecureServers.Sasl, zk => zk.Connect, zk => SecureServers.Options().Sasl("DIGEST-MD5", SecureServers.SaslUser, "wrong-pw")) },
            { "sasl-missing-where-required", c => Secure(c, SecureServers.Sasl, zk => zk.Connect, zk => SecureServers.Options()) },
            { "sasl-unknown-mechanism", c =>
                {
                    foreach (var mechanism in new[] { "PLAIN", "GSSAPI" })
                        c.Check(mechanism, () => new ZooKeeperSession("127.0.0.1:1", SecureServers.Options().Sasl(mechanism, "u", "p")));
                } },
            { "recipe-path-invalid", BadRecipePath("recipes/x") },
            { "recipe-path-not-utf8", c =>
                {
                    BadRecipePath("/recipes/\ud800")(c);
                    NativeRecipesNew(c, Encoding.ASCII.GetBytes("/recipes/").Concat(new byte[] { 0xff }).ToArray());
                } },
            { "recipe-null-handle", NullHandles },
            { "recipe-timeout-negative", c =>
                {
                    var session = c.Session();
                    var barrier = new ZooKeeperBarrier(c.Path("barrier"), session);
                    var jobs = new ZooKeeperLockingQueue(c.Path("jobs"), session);
                    var negative = TimeSpan.FromSeconds(-1);
                    c.Check("Barrier.Wait", () => barrier.Wait(negative));
                    c.Check("Barrier.WaitAsync", () => barrier.WaitAsync(negative));
                    c.Check("LockingQueue.Get", () => jobs.Get(negative));
                    c.Check("LockingQueue.GetAsync", () => jobs.GetAsync(negative));
                    var path = Encoding.ASCII.GetBytes(c.Path("native"));
                    session.With(s =>
                    {
                        ZlBarrier* b;
                        ZlLockingQueue* q;
                        fixed (byte* p = path)
                        {
                            Interop.Check(NativeMethods.zl_barrier_new((ZlSession*)s, p, (uint)path.Length, &b));
                            Interop.Check(NativeMethods.zl_locking_queue_new((ZlSession*)s, p, (uint)path.Length, &q));
                        }
                        c.CheckStatus("zl_barrier_wait_async, -2 ms", NativeMethods.zl_barrier_wait_async(b, -2, null, Never<NativeMethods.zl_barrier_wait_async_callback_delegate>(), null));
                        c.CheckStatus("zl_locking_queue_get_async, -2 ms", NativeMethods.zl_locking_queue_get_async(q, -2, null, Never<NativeMethods.zl_locking_queue_get_async_callback_delegate>(), null));
                        NativeMethods.zl_barrier_free(b);
                        NativeMethods.zl_locking_queue_free(q);
                        return 0;
                    });
                } },
            { "queue-priority-out-of-range", c =>
                {
                    var session = c.Session();
                    var queue = new ZooKeeperQueue(c.Path("queue"), session);
                    var jobs = new ZooKeeperLockingQueue(c.Path("jobs"), session);
                    var x = Encoding.ASCII.GetBytes("x");
                    c.Check("Queue.Put", () => queue.Put(x, 1000));
                    c.Check("LockingQueue.Put", () => jobs.Put(x, 1000));
                    c.Check("LockingQueue.PutAll", () => jobs.PutAll(new[] { x }, 1000));
                    c.Check("LockingQueue.PutAllAsync", () => jobs.PutAllAsync(new[] { x }, 1000));
                    Assert.That(queue.Count + jobs.Count, Is.EqualTo(0), "nothing put");
                } },
            { "multi-lock-no-paths", c =>
                {
                    var session = c.Session();
                    c.Check("ZooKeeperDistributedMultiLock of no paths", () => new ZooKeeperDistributedMultiLock(new string[0], session));
                } },
            { "double-barrier-no-clients", c =>
                {
                    var session = c.Session();
                    foreach (var count in new[] { 0, -1 })
                        c.Check("ZooKeeperDoubleBarrier of " + count, () => new ZooKeeperDoubleBarrier(c.Path("barrier"), session, count));
                } },
            { "acl-empty", c =>
                {
                    var session = c.Session();
                    var path = c.Path("node");
                    session.Create(path, ZooKeeperCreateFlags.MakePath);
                    c.Check("SetAccessControl", () => session.SetAccessControl(path, new ZooKeeperAccessControl[0]));
                    c.Check("SetAccessControlAsync", () => BadInputContext.Await(session.SetAccessControlAsync(path, new ZooKeeperAccessControl[0])));
                    ZooKeeperStat stat;
                    Assert.That(session.GetAccessControl(path, out stat), Is.EqualTo(new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) }), "unchanged");
                } },
            { "recipe-after-close", RecipesAfterClose },
            { "transaction-too-large", c =>
                {
                    var session = c.Session();
                    var big = new byte[700000];
                    session.Create(c.Base, ZooKeeperCreateFlags.MakePath);
                    using (var transaction = session.Transaction().Create(c.Path("a"), big).Create(c.Path("b"), big))
                        c.Check("Commit", () => transaction.Commit());
                    var jobs = new ZooKeeperLockingQueue(c.Path("jobs"), session);
                    c.Check("LockingQueue.PutAll", () => jobs.PutAll(new[] { big, big }));
                    Assert.That(session.GetChildren(c.Base), Is.EqualTo(new[] { "jobs" }), "nothing made but the queue's path");
                    Assert.That(jobs.Count, Is.EqualTo(0), "nothing put");
                } },
        };

        /// <summary>Each recipe, a lease try, a multi-lock and the ACL calls on a bad path.</summary>
        static Action<BadInputContext> BadRecipePath(string path)
        {
            return c =>
            {
                var session = c.Session();
                var hour = TimeSpan.FromHours(1);
                c.Check("ZooKeeperBarrier", () => new ZooKeeperBarrier(path, session));
                c.Check("ZooKeeperDoubleBarrier", () => new ZooKeeperDoubleBarrier(path, session, 2));
                c.Check("ZooKeeperParty", () => new ZooKeeperParty(path, session));
                c.Check("ZooKeeperParty, shallow", () => new ZooKeeperParty(path, session, null, true));
                c.Check("ZooKeeperQueue", () => new ZooKeeperQueue(path, session));
                c.Check("ZooKeeperLockingQueue", () => new ZooKeeperLockingQueue(path, session));
                c.Check("ZooKeeperCounter", () => new ZooKeeperCounter(path, session));
                c.Check("ZooKeeperDoubleCounter", () => new ZooKeeperDoubleCounter(path, session));
                c.Check("TryObtain", () => ZooKeeperNonBlockingLease.TryObtain(session, path, hour));
                c.Check("TryObtainOneOf", () => ZooKeeperNonBlockingLease.TryObtainOneOf(session, 2, path, hour));
                c.Check("ZooKeeperDistributedMultiLock", () => new ZooKeeperDistributedMultiLock(new[] { c.Path("a"), path }, session));
                ZooKeeperStat stat;
                var open = new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) };
                c.Check("GetAccessControl", () => session.GetAccessControl(path, out stat));
                c.Check("GetAccessControlAsync", () => BadInputContext.Await(session.GetAccessControlAsync(path)));
                c.Check("SetAccessControl", () => session.SetAccessControl(path, open));
                c.Check("SetAccessControlAsync", () => BadInputContext.Await(session.SetAccessControlAsync(path, open)));
            };
        }

        /// <summary>A callback of type <typeparamref name="T"/> that fails the test if it ever runs (kept alive here).</summary>
        static T Never<T>() where T : class
        {
            var method = typeof(BadInputCases).GetMethod("NeverCalled", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
            var callback = Delegate.CreateDelegate(typeof(T), method);
            lock (Callbacks) Callbacks.Add(callback);
            return (T)(object)callback;
        }

        static readonly List<Delegate> Callbacks = new List<Delegate>();

        static void NeverCalled(void* user, int status, byte* data, uint length, ZlStat* stat, byte* message, uint messageLength)
        {
            Console.Error.WriteLine("a call that did not start called back (status {0})", status);
            Environment.FailFast("a call that did not start called back");
        }

        /// <summary>Each recipe's <c>_new</c>, the lease try and the ACL calls with a path of raw bytes, which C# strings cannot carry.</summary>
        static void NativeRecipesNew(BadInputContext c, byte[] path)
        {
            var paths = Interop.EncodeList(new[] { path });
            var open = Interop.EncodeList(new[] { "31", "world", "anyone" });
            c.Session().With(s =>
            {
                var session = (ZlSession*)s;
                uint n = (uint)path.Length;
                fixed (byte* p = path, list = paths, acl = open)
                {
                    ZlBarrier* barrier = null;
                    c.CheckStatus("zl_barrier_new", NativeMethods.zl_barrier_new(session, p, n, &barrier));
                    ZlDoubleBarrier* doubleBarrier = null;
                    c.CheckStatus("zl_double_barrier_new", NativeMethods.zl_double_barrier_new(session, p, n, 2, null, 0, &doubleBarrier));
                    ZlParty* party = null;
                    c.CheckStatus("zl_party_new", NativeMethods.zl_party_new(session, p, n, null, 0, 0, &party));
                    ZlQueue* queue = null;
                    c.CheckStatus("zl_queue_new", NativeMethods.zl_queue_new(session, p, n, &queue));
                    ZlLockingQueue* lockingQueue = null;
                    c.CheckStatus("zl_locking_queue_new", NativeMethods.zl_locking_queue_new(session, p, n, &lockingQueue));
                    var zero = new ZlCounterValue();
                    ZlCounter* counter = null;
                    c.CheckStatus("zl_counter_new", NativeMethods.zl_counter_new(session, p, n, &zero, NativeMethods.ZL_COUNTER_KAZOO, &counter));
                    ZlHolder* multi = null;
                    c.CheckStatus("zl_multi_lock_new", NativeMethods.zl_multi_lock_new(session, list, (uint)paths.Length, null, 0, &multi));
                    byte obtained;
                    c.CheckStatus("zl_lease_try", NativeMethods.zl_lease_try(session, p, n, null, 0, 3600000, 0, 1, null, &obtained));
                    byte* got;
                    uint gotLength;
                    c.CheckStatus("zl_session_get_acls", NativeMethods.zl_session_get_acls(session, p, n, &got, &gotLength, null));
                    c.CheckStatus("zl_session_set_acls", NativeMethods.zl_session_set_acls(session, p, n, acl, (uint)open.Length, -1, null));
                    c.CheckStatus("zl_session_get_acls_async", NativeMethods.zl_session_get_acls_async(session, p, n, null,
                        Never<NativeMethods.zl_session_get_acls_async_callback_delegate>(), null));
                    c.CheckStatus("zl_session_set_acls_async", NativeMethods.zl_session_set_acls_async(session, p, n, acl, (uint)open.Length, -1, null,
                        Never<NativeMethods.zl_session_set_acls_async_callback_delegate>(), null));
                    Assert.IsTrue(barrier == null && doubleBarrier == null && party == null && queue == null && lockingQueue == null
                        && counter == null && multi == null, "no handle made");
                }
                return 0;
            });
        }

        /// <summary>
        /// Every entry point whose first parameter is a handle (<c>Zl…*</c>),
        /// found by reflection so that a new one is checked without an edit here:
        /// called with a null handle, every other pointer at zeroed scratch memory,
        /// numbers zero and callbacks that must never run.
        /// </summary>
        static void NullHandles(BadInputContext c)
        {
            var entries = typeof(NativeMethods).GetMethods(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic)
                .Where(m => m.ReturnType == typeof(int) && m.GetParameters().Length > 0 && IsHandle(m.GetParameters()[0].ParameterType))
                .OrderBy(m => m.Name).ToList();
            var scratch = new byte[4096];
            fixed (byte* zeroed = scratch)
            {
                foreach (var entry in entries)
                    c.CheckStatus(entry.Name, CallWithNullHandle(entry)((IntPtr)zeroed));
            }
            // Not vacuous: every kind of handle the header declares was among them.
            var kinds = entries.Select(m => m.GetParameters()[0].ParameterType.GetElementType()).Distinct().ToList();
            foreach (var handle in typeof(NativeMethods).Assembly.GetTypes().Where(t => t.Namespace == "ZooLock.Native" && IsHandle(t.MakePointerType())))
                Assert.That(kinds, Has.Member(handle), "an entry point taking " + handle.Name);
        }

        /// <summary>
        /// <paramref name="entry"/> as a call of one scratch pointer: a null handle
        /// first, the scratch for every other pointer, zero for numbers, a callback
        /// that must never run. Emitted, as Mono's reflection cannot pass pointers.
        /// </summary>
        static Func<IntPtr, int> CallWithNullHandle(MethodInfo entry)
        {
            var parameters = entry.GetParameters();
            var callbacks = parameters.Select(p => typeof(Delegate).IsAssignableFrom(p.ParameterType) ? NeverOf(p.ParameterType) : null).ToArray();
            var call = new DynamicMethod("null_" + entry.Name, typeof(int), new[] { typeof(Delegate[]), typeof(IntPtr) }, typeof(BadInputCases).Module, true);
            var il = call.GetILGenerator();
            for (int i = 0; i < parameters.Length; i++)
            {
                var type = parameters[i].ParameterType;
                if (type.IsPointer && i == 0) { il.Emit(OpCodes.Ldc_I4_0); il.Emit(OpCodes.Conv_U); }
                else if (type.IsPointer) il.Emit(OpCodes.Ldarg_1);
                else if (callbacks[i] != null) { il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Ldc_I4, i); il.Emit(OpCodes.Ldelem_Ref); il.Emit(OpCodes.Castclass, type); }
                else
                {
                    var zero = il.DeclareLocal(type);
                    il.Emit(OpCodes.Ldloca, zero);
                    il.Emit(OpCodes.Initobj, type);
                    il.Emit(OpCodes.Ldloc, zero);
                }
            }
            il.Emit(OpCodes.Call, entry);
            il.Emit(OpCodes.Ret);
            return (Func<IntPtr, int>)call.CreateDelegate(typeof(Func<IntPtr, int>), callbacks);
        }

        /// <summary>An opaque handle of the C ABI: a struct of the header's with no fields (a value type such as ZlStat has some).</summary>
        static bool IsHandle(Type type)
        {
            if (!type.IsPointer) return false;
            var element = type.GetElementType();
            return element.IsValueType && element.Name.StartsWith("Zl")
                && element.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic).Length == 0;
        }

        /// <summary>A callback of any of the header's types that fails the test if it ever runs.</summary>
        static Delegate NeverOf(Type type)
        {
            var invoke = type.GetMethod("Invoke");
            if (invoke.ReturnType != typeof(void)) throw new NotSupportedException(type.Name + " returns a value");
            var never = new DynamicMethod("never", typeof(void), invoke.GetParameters().Select(p => p.ParameterType).ToArray(), typeof(BadInputCases).Module, true);
            var il = never.GetILGenerator();
            il.Emit(OpCodes.Call, typeof(BadInputCases).GetMethod("CalledBack", BindingFlags.NonPublic | BindingFlags.Static));
            il.Emit(OpCodes.Ret);
            var callback = never.CreateDelegate(type);
            lock (Callbacks) Callbacks.Add(callback);
            return callback;
        }

        static void CalledBack()
        {
            Environment.FailFast("a call given a null handle called back");
        }

        /// <summary>Each recipe's first call after its session was disposed.</summary>
        static void RecipesAfterClose(BadInputContext c)
        {
            var session = c.Session();
            var path = c.Path("node");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            var barrier = new ZooKeeperBarrier(c.Path("barrier"), session);
            var doubleBarrier = new ZooKeeperDoubleBarrier(c.Path("double"), session, 2);
            var party = new ZooKeeperParty(c.Path("party"), session);
            var node = c.Own(new ZooKeeperPersistentNode(c.Path("registry/n"), session));
            var queue = new ZooKeeperQueue(c.Path("queue"), session);
            var jobs = new ZooKeeperLockingQueue(c.Path("jobs"), session);
            var counter = c.Own(new ZooKeeperCounter(c.Path("counter"), session));
            var multi = new ZooKeeperDistributedMultiLock(new[] { c.Path("a"), c.Path("b") }, session);
            var transaction = c.Own(session.Transaction().Create(c.Path("t")));
            var x = Encoding.ASCII.GetBytes("x");
            var open = new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) };
            session.Dispose();
            c.Check("Barrier.Create", () => barrier.Create());
            c.Check("Barrier.Wait", () => barrier.Wait(Patience));
            c.Check("DoubleBarrier.Enter", () => doubleBarrier.Enter());
            c.Check("Party.Join", () => party.Join());
            c.Check("PersistentNode.Start", () => node.Start());
            c.Check("Queue.Put", () => queue.Put(x));
            c.Check("Queue.Get", () => queue.Get());
            c.Check("LockingQueue.Put", () => jobs.Put(x));
            c.Check("LockingQueue.PutAll", () => jobs.PutAll(new[] { x }));
            c.Check("LockingQueue.Get", () => jobs.Get(Patience));
            c.Check("Counter.GetValue", () => counter.GetValue());
            c.Check("Counter.Add", () => counter.Add(1));
            c.Check("TryObtain", () => ZooKeeperNonBlockingLease.TryObtain(session, c.Path("lease"), TimeSpan.FromHours(1)));
            c.Check("MultiLock.Acquire", () => multi.Acquire(Patience));
            ZooKeeperStat stat;
            c.Check("GetAccessControl", () => session.GetAccessControl(path, out stat));
            c.Check("GetAccessControlAsync", () => session.GetAccessControlAsync(path));
            c.Check("SetAccessControl", () => session.SetAccessControl(path, open));
            c.Check("AddAuthInfo", () => session.AddAuthInfo("digest", x));
            c.Check("AddAuthInfoAsync", () => session.AddAuthInfoAsync("digest", x));
            c.Check("Transaction.Commit", () => transaction.Commit());
        }

        /// <summary>Every lock type, and a semaphore, on a bad path.</summary>
        static Action<BadInputContext> BadPath(string path)
        {
            return c =>
            {
                var session = c.Session();
                c.Check("ZooKeeperDistributedLock", () => new ZooKeeperDistributedLock(path, session));
                c.Check("ZooKeeperDistributedReaderWriterLock", () => new ZooKeeperDistributedReaderWriterLock(path, session));
                c.Check("ZooKeeperDistributedSemaphore", () => new ZooKeeperDistributedSemaphore(path, 1, session));
                c.Check("ZookeeperLocker", () => new ZookeeperLocker(path, Setup.Zk.Connect));
            };
        }

        static Action<BadInputContext> BadIdentifier(string identifier)
        {
            return c =>
            {
                var session = c.Session();
                c.Check("ZooKeeperDistributedLock", () => new ZooKeeperDistributedLock(c.Path("lock"), session, identifier));
                c.Check("ZooKeeperDistributedReaderWriterLock", () => new ZooKeeperDistributedReaderWriterLock(c.Path("lock"), session, identifier));
                c.Check("ZooKeeperDistributedSemaphore", () => new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session, identifier));
            };
        }

        /// <summary>zl_lock_new and zl_semaphore_new with raw bytes, which C# strings cannot carry.</summary>
        static void NativeNew(BadInputContext c, byte[] path, byte[] identifier, int scheme)
        {
            c.Session().With(s =>
            {
                ZlHolder* lockHandle = null;
                ZlHolder* semaphoreHandle = null;
                int lockStatus, semaphoreStatus;
                fixed (byte* p = path, i = identifier)
                {
                    lockStatus = NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex, scheme, i, (uint)identifier.Length, 0, &lockHandle);
                    semaphoreStatus = NativeMethods.zl_semaphore_new((ZlSession*)s, p, (uint)path.Length, i, (uint)identifier.Length, 1, &semaphoreHandle);
                }
                if (lockHandle != null) NativeMethods.zl_holder_free(lockHandle);
                if (semaphoreHandle != null) NativeMethods.zl_holder_free(semaphoreHandle);
                c.CheckStatus("zl_lock_new", lockStatus);
                c.CheckStatus("zl_semaphore_new", semaphoreStatus);
                return 0;
            });
        }

        /// <summary>zl_holder_release by another owner than the one holding a reentrant lock, which a .NET handle never does.</summary>
        static void NativeReleaseByNonOwner(BadInputContext c)
        {
            var path = Encoding.ASCII.GetBytes(c.Path("lock"));
            c.Session().With(s =>
            {
                ZlHolder* lockHandle;
                fixed (byte* p = path)
                {
                    Interop.Check(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex, (int)ZooKeeperNamingScheme.Kazoo, null, 0, 1, &lockHandle));
                }
                try
                {
                    const ulong owner = 1, other = 2, holderItself = 0;
                    byte acquired, released;
                    for (int depth = 0; depth < 2; depth++)
                    {
                        Interop.Check(NativeMethods.zl_holder_acquire(lockHandle, 5000, -1, owner, null, &acquired));
                        Assert.That(acquired, Is.EqualTo(1));
                    }
                    c.CheckStatus("zl_holder_release by another owner", NativeMethods.zl_holder_release(lockHandle, other, &released));
                    c.CheckStatus("zl_holder_release by the holder itself", NativeMethods.zl_holder_release(lockHandle, holderItself, &released));
                    int state;
                    for (int depth = 2; depth > 0; depth--)
                    {
                        Interop.Check(NativeMethods.zl_holder_state(lockHandle, &state));
                        Assert.That(state, Is.EqualTo((int)LockState.Held), "held at depth {0}", depth);
                        Interop.Check(NativeMethods.zl_holder_release(lockHandle, owner, &released));
                        Assert.That(released, Is.EqualTo(1));
                    }
                    Interop.Check(NativeMethods.zl_holder_release(lockHandle, owner, &released));
                    Assert.That(released, Is.EqualTo(0), "two acquires, two releases");
                }
                finally { NativeMethods.zl_holder_free(lockHandle); }
                return 0;
            });
        }

        /// <summary>zl_holder_acquire on a lock and a semaphore holder with a lease, which the .NET API does not offer.</summary>
        static void NativeLease(BadInputContext c, long leaseMs)
        {
            var path = Encoding.ASCII.GetBytes(c.Path("lock"));
            var pool = Encoding.ASCII.GetBytes(c.Path("pool"));
            c.Session().With(s =>
            {
                ZlHolder* lockHandle;
                ZlHolder* semaphoreHandle;
                fixed (byte* p = path, q = pool)
                {
                    Interop.Check(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex, (int)ZooKeeperNamingScheme.Kazoo, null, 0, 0, &lockHandle));
                    Interop.Check(NativeMethods.zl_semaphore_new((ZlSession*)s, q, (uint)pool.Length, null, 0, 1, &semaphoreHandle));
                }
                byte acquired;
                c.CheckStatus("zl_holder_acquire on a lock", NativeMethods.zl_holder_acquire(lockHandle, 5000, leaseMs, 0, null, &acquired));
                c.CheckStatus("zl_holder_acquire on a semaphore", NativeMethods.zl_holder_acquire(semaphoreHandle, 5000, leaseMs, 0, null, &acquired));
                NativeMethods.zl_holder_free(lockHandle);
                NativeMethods.zl_holder_free(semaphoreHandle);
                return 0;
            });
        }

        static Action<BadInputContext> BadConnect(string connect)
        {
            return c => Connect(c, connect, TimeSpan.Zero, TimeSpan.FromSeconds(2));
        }

        static void Connect(BadInputContext c, string connect, TimeSpan sessionTimeout, TimeSpan connectTimeout)
        {
            c.Check("ZooKeeperSession", () => new ZooKeeperSession(connect, sessionTimeout, connectTimeout));
        }

        /// <summary>Connects to <paramref name="zk"/> at <paramref name="hosts"/> with <paramref name="options"/>: the check, which must end within the connect timeout.</summary>
        static void Secure(BadInputContext c, ZkHarness zk, Func<ZkHarness, string> hosts, Func<ZkHarness, ZooKeeperSessionOptions> options)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            c.Check("ZooKeeperSession", () => new ZooKeeperSession(hosts(zk), options(zk)));
            Assert.That(watch.Elapsed, Is.LessThanOrEqualTo(SecureServers.ConnectTimeout + TimeSpan.FromSeconds(1)), "failed only after " + watch.Elapsed);
        }

        /// <summary>The client certificate with its key encrypted (PKCS#8), no password yet.</summary>
        static ZooKeeperSessionOptions EncryptedKey(ZkHarness zk)
        {
            var o = SecureServers.Trusting(zk);
            o.CertFile = zk.Pem("client_cert");
            o.KeyFile = zk.Pem("client_key_encrypted");
            return o;
        }

        static int FreePort()
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            int port = ((IPEndPoint)listener.LocalEndpoint).Port;
            listener.Stop();
            return port;
        }

        static Action<BadInputContext> MaxLeases(int count)
        {
            return c => c.Check("ZooKeeperDistributedSemaphore", () => new ZooKeeperDistributedSemaphore(c.Path("pool"), count, c.Session()));
        }

        /// <summary>The longest path and the largest identifier, together in one request.</summary>
        static void LimitsFit(BadInputContext c)
        {
            var session = c.Session();
            Func<string, string> longest = name => c.Path(name) + new string('p', MaxPathBytes - c.Path(name).Length);
            var identifier = new string('x', MaxIdentifierBytes);
            var slow = TimeSpan.FromSeconds(20); // megabyte writes, each synced to disk: slow on a loaded machine
            var held = c.Check("Acquire", () => new ZooKeeperDistributedLock(longest("lock"), session, identifier).Acquire(slow));
            var lease = c.Check("semaphore Acquire", () => new ZooKeeperDistributedSemaphore(longest("pool"), 1, session, identifier).Acquire(slow));
            ((IDisposable)held).Dispose();
            ((IDisposable)lease).Dispose();
        }

        /// <summary>A free lock and semaphore acquired with <paramref name="timeout"/>; released.</summary>
        static Action<BadInputContext> AcquireBoth(TimeSpan timeout)
        {
            return c =>
            {
                var session = c.Session();
                var held = c.Check("Acquire", () => new ZooKeeperDistributedLock(c.Path("lock"), session).Acquire(timeout));
                ((IDisposable)held).Dispose();
                held = c.Check("TryAcquireAsync", () => BadInputContext.Await(new ZooKeeperDistributedLock(c.Path("lock"), session).TryAcquireAsync(timeout)));
                ((IDisposable)held).Dispose();
                var lease = c.Check("semaphore Acquire", () => new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session).Acquire(timeout));
                ((IDisposable)lease).Dispose();
            };
        }

        static void AgainWhileHeld(BadInputContext c, Action<ZooKeeperDistributedLock, ZooKeeperDistributedSemaphore> again)
        {
            var session = c.Session();
            var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
            var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
            using (mutex.Acquire(Patience))
            using (semaphore.Acquire(Patience))
            {
                again(mutex, semaphore);
            }
        }

        /// <summary>A holder and a queued waiter, of a lock and of a semaphore, on one session.</summary>
        static void QueueWaiters(BadInputContext c, CancellationToken token,
            Action<ZooKeeperSession, CancellationToken, System.Threading.Tasks.Task<ZooKeeperDistributedLockHandle>, System.Threading.Tasks.Task<ZooKeeperDistributedSemaphoreHandle>> then)
        {
            var session = c.Session();
            var mutex = new ZooKeeperDistributedLock(c.Path("lock"), session);
            var semaphore = new ZooKeeperDistributedSemaphore(c.Path("pool"), 1, session);
            using (mutex.Acquire(Patience))
            using (semaphore.Acquire(Patience))
            {
                var lockWaiter = mutex.AcquireAsync(null, token);
                var leaseWaiter = semaphore.AcquireAsync(null, token);
                Fixture.Eventually(() => Children(c.Path("lock")).Count == 2, "the lock's waiter is queued");
                Fixture.Eventually(() => Children(c.Path("pool") + "-__lock__").Count == 1, "the semaphore's waiter is admitted");
                then(session, token, lockWaiter, leaseWaiter);
            }
        }

        /// <summary>The children of <paramref name="path"/>, from zkh.</summary>
        static List<string> Children(string path)
        {
            return BadInputContext.Tree(path).Keys.Where(node => node.LastIndexOf('/') == path.Length).ToList();
        }
    }
}
