using System;
using System.Linq;
using System.Text;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>kazoo's Queue and LockingQueue (the core's) from C#, against the real server.</summary>
    [TestFixture]
    public class QueueTests : TwoSessions
    {
        static byte[] B(string text) { return Encoding.UTF8.GetBytes(text); }

        static string S(byte[] value) { return value == null ? null : Encoding.UTF8.GetString(value); }

        [Test]
        public void AQueueGivesEntriesByPriorityThenOrder()
        {
            var path = Fixture.Path("queue");
            var queue = new ZooKeeperQueue(path, session);
            Assert.IsNull(queue.Get(), "no path: empty");
            Assert.That(queue.Put(B("one")), Is.EqualTo(path + "/entry-100-0000000000"));
            queue.Put(B("two"));
            queue.Put(B("urgent"), 1);
            queue.Put(new byte[0], 999);
            Assert.That(queue.Count, Is.EqualTo(4));
            var other = new ZooKeeperQueue(path, this.other);
            Assert.That(S(other.Get()), Is.EqualTo("urgent"));
            Assert.That(S(queue.Get()), Is.EqualTo("one"));
            Assert.That(S(Fixture.Await(other.GetAsync(), "GetAsync")), Is.EqualTo("two"));
            Assert.That(queue.Get(), Is.EqualTo(new byte[0]), "an empty value is not 'none'");
            Assert.IsNull(queue.Get());
            Assert.That(session.GetChildren(path), Is.Empty);
            Assert.Throws<ArgumentOutOfRangeException>(() => queue.Put(B("x"), 1000));
        }

        [Test]
        public void ALockingQueueLocksConsumesAndReleases()
        {
            var path = Fixture.Path("locking-queue");
            var a = new ZooKeeperLockingQueue(path, session);
            var b = new ZooKeeperLockingQueue(path, other);
            Assert.IsNull(a.Get(TimeSpan.FromMilliseconds(50)), "empty: times out");
            Assert.IsFalse(a.Consume() || a.Release() || a.HoldsLock(), "nothing got");
            a.Put(B("first"));
            a.Put(B("second"));
            Assert.That(S(a.Get()), Is.EqualTo("first"));
            Assert.That(S(a.Get()), Is.EqualTo("first"), "the same until consumed");
            Assert.That(session.GetChildren(path + "/taken"), Is.EqualTo(new[] { "entry-100-0000000000" }));
            Assert.That(S(b.Get()), Is.EqualTo("second"), "a locked entry is skipped");
            Assert.IsTrue(b.Release());
            Assert.IsTrue(a.HoldsLock());
            Assert.IsTrue(a.Consume());
            Assert.That(a.Count, Is.EqualTo(1));

            var waiting = b.GetAsync(null);
            Assert.That(S(Fixture.Await(waiting, "b gets the released entry")), Is.EqualTo("second"));
            Assert.IsTrue(b.Consume());
            var late = a.GetAsync(null);
            b.Put(B("late"));
            Assert.That(S(Fixture.Await(late, "a waiting get takes a later entry")), Is.EqualTo("late"));
            Assert.IsTrue(a.Consume());
            Assert.That(a.Count, Is.EqualTo(0));
        }

        [Test]
        public void AnEntryOfAnExpiredConsumerGoesToAnotherAndACancelledGetLeavesNoLock()
        {
            var path = Fixture.Path("locking-queue-expiry");
            var a = new ZooKeeperLockingQueue(path, session);
            var b = new ZooKeeperLockingQueue(path, other);
            a.Put(B("job"));
            Assert.That(S(a.Get()), Is.EqualTo("job"));
            var taking = b.GetAsync(null);
            Setup.Zk.Expire(session.SessionId);
            Assert.That(S(Fixture.Await(taking, "the entry, free once a's session ended")), Is.EqualTo("job"));
            Assert.IsFalse(a.HoldsLock());
            Assert.IsFalse(a.Consume(), "a cannot consume what b holds");
            Assert.IsTrue(b.Consume());

            using (var cancel = new CancellationTokenSource())
            {
                var waiting = a.GetAsync(null, cancel.Token);
                cancel.Cancel();
                Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(waiting));
            }
            b.Put(B("free"));
            Assert.That(other.GetChildren(path + "/taken"), Is.Empty);
            Assert.That(S(b.Get(TimeSpan.FromSeconds(10))), Is.EqualTo("free"));
        }
    }
}
