using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// <c>new ZooKeeperDistributedLock(path, session, reentrant: true)</c>: reentrant per
    /// thread, like Curator's <c>InterProcessMutex</c>; the counting is the core's.
    /// </summary>
    [TestFixture]
    public class ReentrantTests : TwoSessions
    {
        static readonly TimeSpan Short = TimeSpan.FromMilliseconds(300);

        [Test]
        public void TheOwningThreadReentersOnOneNodeUntilItsLastHandleIsDisposed()
        {
            var path = Fixture.Path("reentrant");
            var mutex = new ZooKeeperDistributedLock(path, session, "owner", reentrant: true);
            var theirs = new ZooKeeperDistributedLock(path, other, "other");
            var outer = mutex.Acquire(Fixture.Patience);
            var watch = Stopwatch.StartNew();
            var inner = mutex.TryAcquire();
            var third = mutex.Acquire(TimeSpan.FromSeconds(30));
            Assert.IsNotNull(inner, "a single try re-enters");
            Assert.That(watch.Elapsed, Is.LessThan(TimeSpan.FromSeconds(5)), "re-entries return at once");
            Assert.That(new[] { inner.Node, third.Node }, Is.EqualTo(new[] { outer.Node, outer.Node }));
            Assert.That(inner.FencingToken, Is.EqualTo(outer.FencingToken));
            Assert.That(mutex.GetContenders(), Is.EqualTo(new[] { "owner" }), "one node");

            var waiting = theirs.AcquireAsync(Fixture.Patience);
            Fixture.Eventually(() => mutex.GetContenders().Count == 2, "the other session queues");
            third.Dispose();
            outer.Dispose();
            Assert.IsFalse(waiting.IsCompleted, "one handle is still undisposed");
            Assert.That(mutex.GetContenders(), Is.EqualTo(new[] { "owner", "other" }));
            Assert.IsFalse(inner.HandleLostToken.IsCancellationRequested);
            inner.Dispose();
            using (Fixture.Await(waiting, "the other session's acquire")) { }
            Assert.That(mutex.GetContenders(), Is.Empty);
        }

        [Test]
        public void OtherThreadsAndAsyncAcquiresWaitForTheOwner()
        {
            var mutex = new ZooKeeperDistributedLock(Fixture.Path("reentrant-threads"), session, reentrant: true);
            using (mutex.Acquire(Fixture.Patience))
            using (mutex.Acquire(Fixture.Patience))
            {
                Assert.IsNull(Fixture.Await(Task.Run(() => mutex.TryAcquire(Short)), "another thread's TryAcquire"));
                Assert.IsNull(Fixture.Await(Task.Run(() => mutex.TryAcquire()), "another thread's single try"));
                Assert.IsInstanceOf<TimeoutException>(Fixture.Failure(Task.Run(() => mutex.Acquire(Short))));
                // An async acquire has no thread: an owner of its own, even from the owning thread.
                Assert.IsNull(Fixture.Await(mutex.TryAcquireAsync(Short), "TryAcquireAsync"));
            }
            var fromThere = Fixture.Await(Task.Run(() => mutex.Acquire(Fixture.Patience)), "another thread, once free");
            Assert.IsNull(mutex.TryAcquire(), "the other thread owns it now");
            fromThere.Dispose();
            Assert.That(mutex.GetContenders(), Is.Empty);
        }

        [Test]
        public void ALossEndsTheHoldAtAnyDepthAndStaleHandlesLeaveTheNextHoldAlone()
        {
            var mutex = new ZooKeeperDistributedLock(Fixture.Path("reentrant-lost"), session, reentrant: true);
            var outer = mutex.Acquire(Fixture.Patience);
            var inner = mutex.Acquire(Fixture.Patience);
            var lost = inner.HandleLostToken;
            using (var operatorPeer = new Peer("delete", Setup.Zk.Connect, outer.Node, "operator"))
            {
                Assert.That(operatorPeer.ReadLine(Fixture.Patience), Is.EqualTo("deleted"));
            }
            Assert.IsTrue(lost.WaitHandle.WaitOne(Fixture.Patience), "HandleLost was cancelled");
            Assert.IsTrue(outer.HandleLostToken.WaitHandle.WaitOne(Fixture.Patience), "for every handle of the hold");
            Assert.That(outer.LostReason, Is.EqualTo(LostReason.NodeDeleted));

            using (var again = mutex.Acquire(Fixture.Patience))
            {
                Assert.That(again.FencingToken, Is.GreaterThan(outer.FencingToken), "a new hold, on a new node");
                Assert.IsFalse(again.HandleLostToken.IsCancellationRequested);
                Assert.IsTrue(outer.HandleLostToken.IsCancellationRequested, "the old hold's token stays cancelled");
                inner.Dispose();
                outer.Dispose();
                Assert.That(mutex.GetContenders().Count, Is.EqualTo(1), "the stale handles let the new hold be");
                Assert.IsNull(new ZooKeeperDistributedLock(mutex.Path, other).TryAcquire());
            }
            Assert.That(mutex.GetContenders(), Is.Empty);
        }
    }
}
