using System;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// DistributedLock's shape beside zoolock's own: HandleLostToken on every
    /// handle, its handle type names, locks by name (mapped to a path as
    /// DistributedLock maps it) or by ZooKeeperPath from a connection string,
    /// sessions shared per connection string and options and closed with the
    /// last hold, its options builder and provider, and a program written for
    /// DistributedLock that runs on zoolock with only its using line changed.
    /// </summary>
    [TestFixture]
    public class DistributedLockTests
    {
        static string Connect { get { return Setup.Zk.Connect; } }

        [TearDown]
        public void NoSharedSessionOutlivesItsHolds()
        {
            Assert.That(SharedSessions.Count, Is.EqualTo(0), "every shared session closed with its last hold");
        }

        [Test]
        public void EveryHandleHasHandleLostToken()
        {
            var path = Fixture.Path("lost-token");
            using (var session = Fixture.Session())
            using (var other = Fixture.Session())
            {
                ZooKeeperDistributedLockHandle mutex = new ZooKeeperDistributedLock(path + "/m", session).Acquire(Fixture.Patience);
                ZooKeeperDistributedReaderWriterLockHandle read = new ZooKeeperDistributedReaderWriterLock(path + "/rw", session).AcquireReadLock(Fixture.Patience);
                ZooKeeperDistributedSemaphoreHandle lease = new ZooKeeperDistributedSemaphore(path + "/s", 1, session).Acquire(Fixture.Patience);
                ZooKeeperLeadership term = new ZooKeeperLeaderElection(path + "/e", session).AwaitLeadership(Fixture.Patience);
                var tokens = new[] { mutex.HandleLostToken, read.HandleLostToken, lease.HandleLostToken, term.HandleLostToken };
                Assert.That(tokens.Select(t => t.IsCancellationRequested), Is.All.False);
                Setup.Zk.Expire(session.SessionId);
                foreach (var token in tokens) Assert.IsTrue(token.WaitHandle.WaitOne(Fixture.Patience), "cancelled by the expiry");
#pragma warning disable 618 // the earlier names, kept for a release
                Assert.That(mutex.HandleLost, Is.EqualTo(mutex.HandleLostToken));
                Assert.That(term.HandleLost, Is.EqualTo(term.HandleLostToken));
                ZooKeeperLockHandle earlier = mutex;
                ZooKeeperSemaphoreHandle earlierLease = lease;
#pragma warning restore 618
                Assert.That(earlier.FencingToken, Is.EqualTo(mutex.FencingToken));
                Assert.IsNotNull(earlierLease);
                foreach (var handle in new IDisposable[] { mutex, read, lease, term }) handle.Dispose();
                Assert.Throws<ObjectDisposedException>(() => { var t = mutex.HandleLostToken; });
                Assert.Throws<ObjectDisposedException>(() => { var t = term.HandleLostToken; });
            }
        }

        /// <summary>
        /// A fleet that moves one service at a time: a service still on
        /// DistributedLock.ZooKeeper (its <c>lock-&lt;seq&gt;</c> node, made here as it
        /// makes it) and one on ZooLock with its naming scheme exclude each other;
        /// the default scheme is refused there.
        /// </summary>
        [Test]
        public void TheDistributedLockNamingSchemeQueuesWithDistributedLockServices()
        {
            var path = Fixture.Path("dl-fleet");
            using (var oldService = Fixture.Session())
            {
                var theirs = oldService.Create(path + "/lock-", ZooKeeperCreateFlags.Ephemeral | ZooKeeperCreateFlags.Sequence | ZooKeeperCreateFlags.MakePath);
                var migrated = new ZooKeeperDistributedLock(new ZooKeeperPath(path), Connect,
                    o => o.NamingScheme(ZooKeeperNamingScheme.DistributedLock));
                Assert.IsNull(migrated.TryAcquire(), "the old service holds");
                Assert.Throws<ZooLockConfigurationException>(() => new ZooKeeperDistributedLock(new ZooKeeperPath(path), Connect).TryAcquire(Fixture.Patience));
                Assert.That(oldService.GetChildren(path), Is.EquivalentTo(new[] { theirs.Substring(path.Length + 1) }), "no node left");
                oldService.Delete(theirs);
                using (migrated.Acquire(Fixture.Patience))
                {
                    var ours = oldService.GetChildren(path).Single();
                    StringAssert.IsMatch("^lock-[0-9]{10}$", ours);
                    var next = oldService.Create(path + "/lock-", ZooKeeperCreateFlags.Ephemeral | ZooKeeperCreateFlags.Sequence);
                    // DistributedLock's rule: the lowest `lock-` sequence holds, and that is ours.
                    Assert.That(oldService.GetChildren(path).OrderBy(n => n, StringComparer.Ordinal).First(), Is.EqualTo(ours));
                    oldService.Delete(next);
                }
            }
            using (var session = Fixture.Session())
            {
                var own = new ZooKeeperDistributedLock(path, session, naming: ZooKeeperNamingScheme.DistributedLock);
                using (own.Acquire(Fixture.Patience))
                    StringAssert.IsMatch("^lock-[0-9]{10}$", session.GetChildren(path).Single());
                Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperDistributedLock(path, session, naming: (ZooKeeperNamingScheme)7));
            }
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperDistributedLock(new ZooKeeperPath(path), Connect,
                o => o.NamingScheme(ZooKeeperNamingScheme.Other)));
            Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedReaderWriterLock(new ZooKeeperPath(path), Connect,
                o => o.NamingScheme(ZooKeeperNamingScheme.DistributedLock)));
        }

        [Test]
        public void NamesMapToPathsAsDistributedLockMapsThem()
        {
            // A valid node name is its own path; others are repaired and get the Base64 SHA-512
            // of the name appended, its '/' made '_' (SHA-512 of "" is cf83e135…, of "a/b" 87c703f4…).
            const string EmptyHash = "z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg_SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==";
            const string SlashHash = "h8cD9EDAsTIrHRk6W7ZtbKdnEjZQVdETQBjCoYAeTKfIs0zIgDX_xaRDZA2V8GjR1Do1fOGJd8nPzpTqaUM6dw==";
            Assert.That(new ZooKeeperDistributedLock("MyLockName", Connect).Path, Is.EqualTo("/MyLockName"));
            Assert.That(new ZooKeeperDistributedLock("", Connect).Path, Is.EqualTo("/EMPTY" + EmptyHash));
            Assert.That(new ZooKeeperDistributedLock("a/b", Connect).Path, Is.EqualTo("/a_b" + SlashHash));
            StringAssert.StartsWith("/zookeeper_", new ZooKeeperDistributedLock("zookeeper", Connect).Path);
            StringAssert.StartsWith("/.._", new ZooKeeperDistributedReaderWriterLock("..", Connect).Path);
            StringAssert.StartsWith("/tab_", new ZooKeeperDistributedSemaphore("tab\t", 2, Connect).Path);
            var locks = new ZooKeeperPath("/locks");
            Assert.That(new ZooKeeperDistributedLock(locks, "zookeeper", Connect).Path, Is.EqualTo("/locks/zookeeper"));
            Assert.That(new ZooKeeperDistributedSemaphore(locks, "jobs", 3, Connect).Path, Is.EqualTo("/locks/jobs"));
            Assert.That(new ZooKeeperDistributedLock(new ZooKeeperPath("/locks/ledger"), Connect).Path, Is.EqualTo("/locks/ledger"));
            Assert.That(new ZooKeeperDistributedSynchronizationProvider(locks, Connect).CreateReaderWriterLock("x y").Path, Is.EqualTo("/locks/x y"));

            Assert.Throws<ArgumentException>(() => new ZooKeeperPath("relative"));
            Assert.Throws<ArgumentException>(() => new ZooKeeperPath("/a//b"));
            Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedLock(ZooKeeperPath.Root, Connect));
            Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedLock(new ZooKeeperPath("/zookeeper/x"), Connect));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock(default(ZooKeeperPath), Connect));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock((string)null, Connect));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock("name", (string)null));
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperDistributedLock("name", Connect, o => o.SessionTimeout(TimeSpan.Zero)));
            Assert.That(new ZooKeeperPath("/a"), Is.EqualTo(new ZooKeeperPath("/a")));
            Assert.IsTrue(new ZooKeeperPath("/a") != new ZooKeeperPath("/b"));
            Assert.That(SharedSessions.Count, Is.EqualTo(0), "making locks connects nothing");
        }

        [Test]
        public void LocksOfOneConnectionStringShareASessionThatClosesWithTheLastHold()
        {
            var path = Fixture.Path("shared");
            using (var observer = Fixture.Session())
            {
                var first = new ZooKeeperDistributedLock(new ZooKeeperPath(path + "/a"), Connect);
                var second = new ZooKeeperDistributedSemaphore(new ZooKeeperPath(path + "/b"), 2, Connect);
                var a = first.Acquire(Fixture.Patience);
                var b = second.Acquire(Fixture.Patience);
                Assert.That(SharedSessions.Count, Is.EqualTo(1));
                var owner = observer.Exists(a.Node).EphemeralOwner;
                Assert.That(observer.Inspect(path + "/b").Single().SessionId, Is.EqualTo(owner), "one session for both");
                Assert.IsNull(first.TryAcquire(), "a second acquire through the shared session is a contender of its own");

                using (var other = new ZooKeeperDistributedLock(new ZooKeeperPath(path + "/c"), Connect, o => o.SessionTimeout(Fixture.SessionTimeout)).Acquire(Fixture.Patience))
                {
                    Assert.That(SharedSessions.Count, Is.EqualTo(2), "other options, another session");
                    Assert.That(observer.Exists(other.Node).EphemeralOwner, Is.Not.EqualTo(owner));
                }
                Assert.That(SharedSessions.Count, Is.EqualTo(1));

                a.Dispose();
                Assert.That(SharedSessions.Count, Is.EqualTo(1), "b still holds");
                Assert.IsNull(observer.Exists(a.Node));
                var node = observer.Inspect(path + "/b").Single().Node;
                b.Dispose();
                Assert.That(SharedSessions.Count, Is.EqualTo(0), "closed with the last hold");
                Assert.IsNull(observer.Exists(node));

                using (var again = Fixture.Await(first.AcquireAsync(Fixture.Patience), "an acquire on a new shared session"))
                {
                    Assert.That(observer.Exists(again.Node).EphemeralOwner, Is.Not.EqualTo(owner), "a new session");
                    Assert.That(first.GetContenders(), Is.EqualTo(new[] { "" }));
                }
            }
        }

        /// <summary>A hold nobody disposed: once collected, its shared session closes and the server frees the lock.</summary>
        [Test]
        public void AForgottenHandleLetsItsSharedSessionClose()
        {
            var path = Fixture.Path("forgotten");
            using (var observer = Fixture.Session())
            {
                var node = HoldAndForget(path);
                Assert.That(observer.Exists(node), Is.Not.Null);
                Fixture.Eventually(() =>
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    return SharedSessions.Count == 0;
                }, "the forgotten hold's session closed");
                Fixture.Eventually(() => observer.Exists(node) == null, "its node is gone");
                using (var next = new ZooKeeperDistributedLock(new ZooKeeperPath(path), Connect).TryAcquire(Fixture.Patience))
                    Assert.IsNotNull(next);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static string HoldAndForget(string path)
        {
            return new ZooKeeperDistributedLock(new ZooKeeperPath(path), Connect).Acquire(Fixture.Patience).Node;
        }

        /// <summary>Threads that acquire and release through one shared session at once: one session, closed at the end.</summary>
        [Test]
        public void ConcurrentHoldsShareOneSessionAndCloseIt()
        {
            var path = Fixture.Path("concurrent");
            var semaphore = new ZooKeeperDistributedSemaphore(new ZooKeeperPath(path), 3, Connect);
            int holding = 0, most = 0;
            var workers = Enumerable.Range(0, 8).Select(i => System.Threading.Tasks.Task.Run(async () =>
            {
                for (int round = 0; round < 5; round++)
                {
                    using (await semaphore.AcquireAsync(Fixture.Patience))
                    {
                        var now = Interlocked.Increment(ref holding);
                        int seen;
                        while ((seen = Volatile.Read(ref most)) < now && Interlocked.CompareExchange(ref most, now, seen) != seen) { }
                        Assert.That(SharedSessions.Count, Is.EqualTo(1));
                        Interlocked.Decrement(ref holding);
                    }
                }
            })).ToArray();
            Assert.IsTrue(System.Threading.Tasks.Task.WaitAll(workers, TimeSpan.FromTicks(Fixture.Patience.Ticks * 3)), "every worker finished");
            Assert.That(most, Is.InRange(1, 3), "never more holders than leases");
        }

        [Test]
        public void AFailedOrCancelledConnectLeavesNoSharedSession()
        {
            var nowhere = new ZooKeeperDistributedLock("x", "127.0.0.1:1", o => o.ConnectTimeout(TimeSpan.FromMilliseconds(200)));
            Assert.Throws<ZooLockConnectionException>(() => nowhere.Acquire());
            Assert.IsInstanceOf<ZooLockConnectionException>(Fixture.Failure(nowhere.TryAcquireAsync()));
            using (var cancel = new CancellationTokenSource())
            {
                cancel.Cancel();
                Assert.Throws<OperationCanceledException>(() => nowhere.TryAcquire(TimeSpan.Zero, cancel.Token));
            }
        }

        /// <summary>
        /// Two acquisitions wait for one shared connect to a server that never
        /// answers: each token ends its own wait only, and once both gave up the
        /// shared session is forgotten (closed if it ever connects).
        /// </summary>
        [Test]
        public void EachTokenEndsOnlyItsOwnWaitForASharedConnect()
        {
            var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
            silent.Start();
            try
            {
                var address = "127.0.0.1:" + ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;
                Action<ZooKeeperDistributedSynchronizationOptionsBuilder> slow = o => o.ConnectTimeout(TimeSpan.FromMinutes(10));
                using (var first = new CancellationTokenSource())
                using (var second = new CancellationTokenSource())
                {
                    var a = new ZooKeeperDistributedLock("a", address, slow).AcquireAsync(null, first.Token);
                    var b = new ZooKeeperDistributedSemaphore("b", 2, address, slow).AcquireAsync(null, second.Token);
                    Assert.That(SharedSessions.Count, Is.EqualTo(1), "one connect for both");
                    first.Cancel();
                    Assert.IsTrue(Fixture.Failure(a) is OperationCanceledException);
                    Assert.IsFalse(b.IsCompleted, "the other still waits");
                    Assert.That(SharedSessions.Count, Is.EqualTo(1));
                    second.Cancel();
                    Assert.IsTrue(Fixture.Failure(b) is OperationCanceledException);
                }
            }
            finally { silent.Stop(); }
        }

        /// <summary>
        /// A server that never answers, and the default connect timeout (15 s):
        /// a timed acquire's limit counts its connect (at least a healthy
        /// connect's second), and a synchronous acquire's token ends its wait.
        /// </summary>
        [Test]
        public void AnAcquireKeepsItsLimitAndTokenWhileItsSessionConnects()
        {
            var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
            silent.Start();
            try
            {
                var address = "127.0.0.1:" + ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;
                var theLock = new ZooKeeperDistributedLock("limits", address);
                var watch = System.Diagnostics.Stopwatch.StartNew();
                Assert.IsNull(theLock.TryAcquire(TimeSpan.FromSeconds(1)));
                Assert.IsNull(Fixture.Await(theLock.TryAcquireAsync(TimeSpan.Zero), "a zero-timeout try"));
                Assert.Throws<TimeoutException>(() => theLock.Acquire(TimeSpan.FromMilliseconds(500)));
                using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(300)))
                {
                    Assert.Throws<OperationCanceledException>(() => theLock.Acquire(null, cancel.Token));
                }
                // 1 + 1 + 1 + 0.3 s, where each waited for the 15 s connect.
                Assert.That(watch.Elapsed, Is.LessThan(TimeSpan.FromSeconds(8)));
            }
            finally { silent.Stop(); }
        }

        /// <summary>
        /// dotnet/tests/SAMPLE.cs (zoolock's) and SAMPLE.Medallion.txt (its twin for
        /// DistributedLock) are the same program but for one line: theirs, <c>using ZooLock;</c> in ours.
        /// </summary>
        static void OnlyTheUsingLineDiffers(string sample, string theirUsing)
        {
            var ours = File.ReadAllLines(ZkHarness.Locate("ZOOLOCK_SAMPLE_" + sample, "dotnet/tests/" + sample + ".cs"));
            var theirs = File.ReadAllLines(ZkHarness.Locate("ZOOLOCK_SAMPLE_" + sample + "_MEDALLION", "dotnet/tests/" + sample + ".Medallion.txt"));
            Assert.That(ours.Length, Is.EqualTo(theirs.Length), "line for line");
            var changed = Enumerable.Range(0, ours.Length).Where(i => ours[i] != theirs[i]).ToList();
            Assert.That(changed.Select(i => theirs[i]), Is.EqualTo(new[] { theirUsing }));
            Assert.That(changed.Select(i => ours[i]), Is.EqualTo(new[] { "using ZooLock;" }));
        }

        /// <summary>
        /// A service written against DistributedLock's interfaces and provider
        /// extensions (Medallion.Threading) compiles against zoolock's with only
        /// its using line changed, and runs on zoolock's provider.
        /// </summary>
        [Test]
        public void AServiceOnDistributedLocksInterfacesRunsWithOnlyItsUsingLineChanged()
        {
            OnlyTheUsingLineDiffers("DistributedLockInterfacesSample", "using Medallion.Threading;");

            var provider = new ZooKeeperDistributedSynchronizationProvider(Connect);
            var service = new DistributedLockInterfacesSample.Service(provider, provider, provider);
            var output = Fixture.Await(service.RunAsync(CancellationToken.None), "the service");
            Assert.That(output.Split(new[] { Environment.NewLine }, StringSplitOptions.RemoveEmptyEntries), Is.EqualTo(new[]
            {
                "holds /interfaces-lock, told of a loss",
                "the provider's try does not get it",
                "the provider acquires it",
                "readers keep the writer out",
                "2 tickets taken",
            }));
            Assert.That(new ZooKeeperDistributedLock(new ZooKeeperPath("/interfaces/by-path"), Connect, assumePathExists: true).Name,
                Is.EqualTo("/interfaces/by-path"));
        }

        [Test]
        public void ADistributedLockProgramRunsWithOnlyItsUsingLineChanged()
        {
            OnlyTheUsingLineDiffers("DistributedLockSample", "using Medallion.Threading.ZooKeeper;");

            var output = Fixture.Await(DistributedLockSample.Worker.RunAsync(Connect), "the sample");
            Assert.That(output.Split(new[] { Environment.NewLine }, StringSplitOptions.RemoveEmptyEntries), Is.EqualTo(new[]
            {
                "I have the lock",
                "a second acquire does not get it",
                "two readers",
                "the writer waits for the readers",
                "the writer alone",
                "two tickets taken",
                "a provider's lock",
            }));
        }
    }
}
