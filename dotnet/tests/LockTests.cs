using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>The core's lock behaviours, seen through the modern C# API.</summary>
    [TestFixture]
    public class LockTests : TwoSessions
    {
        [Test]
        public void AcquireGivesAFencingTokenAndANode()
        {
            var path = Fixture.Path("acquire");
            var mutex = new ZooKeeperDistributedLock(path, session, "me");
            using (var handle = mutex.Acquire())
            {
                Assert.That(handle.FencingToken, Is.GreaterThan(0));
                StringAssert.StartsWith(path + "/", handle.Node);
                Assert.That(mutex.GetContenders(), Is.EqualTo(new[] { "me" }));
                Assert.IsFalse(handle.IsSuspended);
                Assert.IsFalse(handle.HandleLostToken.IsCancellationRequested);
            }
            Assert.That(mutex.GetContenders(), Is.Empty);
        }

        [Test]
        public void TryAcquireReturnsNullWhileHeldElsewhere()
        {
            var path = Fixture.Path("try");
            var mine = new ZooKeeperDistributedLock(path, session);
            var theirs = new ZooKeeperDistributedLock(path, other);
            using (mine.Acquire())
            {
                Assert.IsNull(theirs.TryAcquire());
                Assert.IsNull(Fixture.Await(theirs.TryAcquireAsync(), "TryAcquireAsync"));
                Assert.IsNull(theirs.TryAcquire(TimeSpan.FromMilliseconds(100)));
            }
            using (var handle = theirs.TryAcquire())
            {
                Assert.IsNotNull(handle);
            }
            Assert.That(mine.GetContenders(), Is.Empty, "failed tries left no node");
        }

        [Test]
        public void AcquireTimesOutAndLeavesNoNode()
        {
            var path = Fixture.Path("timeout");
            var mine = new ZooKeeperDistributedLock(path, session, "holder");
            var theirs = new ZooKeeperDistributedLock(path, other, "waiter");
            using (mine.Acquire())
            {
                var watch = Stopwatch.StartNew();
                Assert.Throws<TimeoutException>(() => theirs.Acquire(TimeSpan.FromMilliseconds(300)));
                Assert.That(watch.ElapsedMilliseconds, Is.GreaterThanOrEqualTo(290));
                Assert.IsInstanceOf<TimeoutException>(Fixture.Failure(theirs.AcquireAsync(TimeSpan.FromMilliseconds(200))));
                Assert.That(mine.GetContenders(), Is.EqualTo(new[] { "holder" }));
            }
        }

        [Test]
        public void WaitersAreServedInArrivalOrder()
        {
            var path = Fixture.Path("fifo");
            var holder = new ZooKeeperDistributedLock(path, session, "holder");
            var order = new List<string>();
            var first = holder.Acquire();
            var waiters = new List<Task<ZooKeeperDistributedLockHandle>>();
            for (int i = 0; i < 3; i++)
            {
                var name = "waiter" + i;
                var waiter = new ZooKeeperDistributedLock(path, i % 2 == 0 ? other : session, name);
                waiters.Add(waiter.AcquireAsync().ContinueWith(t =>
                {
                    lock (order) order.Add(name);
                    return t.Result;
                }));
                Fixture.Eventually(() => holder.GetContenders().Count == i + 2, name + " is queued");
            }
            Assert.That(holder.GetContenders(), Is.EqualTo(new[] { "holder", "waiter0", "waiter1", "waiter2" }));
            first.Dispose();
            foreach (var waiter in waiters)
            {
                var handle = Fixture.Await(waiter, "the next waiter");
                lock (order) Assert.That(order.Count, Is.EqualTo(waiters.IndexOf(waiter) + 1), "only one holder at a time");
                handle.Dispose();
            }
            Assert.That(order, Is.EqualTo(new[] { "waiter0", "waiter1", "waiter2" }));
        }

        [Test]
        public void FencingTokensIncreaseFromHolderToHolder()
        {
            var path = Fixture.Path("fencing");
            var locks = new[] { new ZooKeeperDistributedLock(path, session), new ZooKeeperDistributedLock(path, other) };
            long last = 0;
            for (int i = 0; i < 6; i++)
            {
                using (var handle = locks[i % 2].Acquire())
                {
                    Assert.That(handle.FencingToken, Is.GreaterThan(last));
                    last = handle.FencingToken;
                }
            }
        }

        [Test]
        public void CancellingTheTokenEndsABlockingWaitWithoutANode()
        {
            var path = Fixture.Path("cancel");
            var mine = new ZooKeeperDistributedLock(path, session, "holder");
            var theirs = new ZooKeeperDistributedLock(path, other, "waiter");
            using (mine.Acquire())
            using (var cancel = new CancellationTokenSource())
            {
                Exception caught = null;
                var waiter = new Thread(() =>
                {
                    try { theirs.Acquire(null, cancel.Token); }
                    catch (Exception error) { caught = error; }
                });
                waiter.Start();
                Fixture.Eventually(() => mine.GetContenders().Count == 2, "the waiter is queued");
                cancel.Cancel();
                Assert.IsTrue(waiter.Join(Fixture.Patience), "the wait ended");
                Assert.IsInstanceOf<OperationCanceledException>(caught);
                Assert.That(((OperationCanceledException)caught).CancellationToken, Is.EqualTo(cancel.Token));
                Assert.That(mine.GetContenders(), Is.EqualTo(new[] { "holder" }));
            }
        }

        [Test]
        public void CancellingTheTokenEndsAnAsyncWaitWithoutANode()
        {
            var path = Fixture.Path("cancel-async");
            var mine = new ZooKeeperDistributedLock(path, session, "holder");
            var theirs = new ZooKeeperDistributedLock(path, other, "waiter");
            using (mine.Acquire())
            using (var cancel = new CancellationTokenSource())
            {
                var waiting = theirs.AcquireAsync(null, cancel.Token);
                Fixture.Eventually(() => mine.GetContenders().Count == 2, "the waiter is queued");
                cancel.Cancel();
                Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(waiting));
                Assert.IsTrue(waiting.IsCanceled);
                Assert.That(mine.GetContenders(), Is.EqualTo(new[] { "holder" }));
                Assert.Throws<OperationCanceledException>(() => theirs.Acquire(null, cancel.Token), "an already cancelled token");
                Assert.IsTrue(theirs.AcquireAsync(null, cancel.Token).IsCanceled);
            }
        }

        [Test]
        public void DeletingTheHoldersNodeCancelsHandleLostWithNodeDeleted()
        {
            var mutex = new ZooKeeperDistributedLock(Fixture.Path("node-deleted"), session);
            using (var handle = mutex.Acquire())
            {
                var lost = handle.HandleLostToken;
                Assert.That(handle.LostReason, Is.EqualTo(LostReason.None));
                using (var operatorPeer = new Peer("delete", Setup.Zk.Connect, handle.Node, "operator"))
                {
                    Assert.That(operatorPeer.ReadLine(Fixture.Patience), Is.EqualTo("deleted"));
                }
                Assert.IsTrue(lost.WaitHandle.WaitOne(Fixture.Patience), "HandleLost was cancelled");
                Assert.That(handle.LostReason, Is.EqualTo(LostReason.NodeDeleted));
            }
            using (var again = mutex.Acquire(Fixture.Patience)) { }
        }

        [Test]
        public void DisposeReleasesAndIsHarmlessTwice()
        {
            var path = Fixture.Path("dispose");
            var mine = new ZooKeeperDistributedLock(path, session);
            var theirs = new ZooKeeperDistributedLock(path, other);
            var handle = mine.Acquire();
            var waiting = theirs.AcquireAsync();
            Fixture.Eventually(() => mine.GetContenders().Count == 2, "the waiter is queued");
            Assert.IsFalse(waiting.IsCompleted);
            handle.Dispose();
            handle.Dispose();
            using (Fixture.Await(waiting, "the waiter after the release")) { }
            Assert.Throws<ObjectDisposedException>(() => { var token = handle.HandleLostToken; });
        }

        [Test]
        public void AHandleNeverDisposedIsReleasedWhenFinalized()
        {
            var path = Fixture.Path("finalized");
            long token = 0;
            // Acquired on a thread that ends, so that no stack slot keeps the handle alive.
            var forgetful = new Thread(() => token = new ZooKeeperDistributedLock(path, session).Acquire().FencingToken);
            forgetful.Start();
            forgetful.Join();
            var theirs = new ZooKeeperDistributedLock(path, other);
            Assert.IsNull(theirs.TryAcquire(), "still held before the collector ran");
            GC.Collect();
            GC.WaitForPendingFinalizers();
            using (var handle = theirs.Acquire(Fixture.Patience))
            {
                Assert.That(handle.FencingToken, Is.GreaterThan(token));
            }
        }

        [Test]
        public void ConcurrentAcquiresOfOneObjectExcludeEachOther()
        {
            var mutex = new ZooKeeperDistributedLock(Fixture.Path("threads"), session);
            int inside = 0, overlaps = 0;
            var workers = new List<Task>();
            for (int t = 0; t < 4; t++)
            {
                workers.Add(Task.Run(() =>
                {
                    for (int i = 0; i < 10; i++)
                    {
                        using (mutex.Acquire())
                        {
                            if (Interlocked.Increment(ref inside) != 1) Interlocked.Increment(ref overlaps);
                            Thread.Yield();
                            Interlocked.Decrement(ref inside);
                        }
                    }
                }));
            }
            Assert.IsTrue(Task.WaitAll(workers.ToArray(), TimeSpan.FromSeconds(60)));
            Assert.That(overlaps, Is.EqualTo(0));
        }
    }
}
