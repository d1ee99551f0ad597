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
        public void ALockingQueuePutsAllInOrderInOneTransaction()
        {
            var path = Fixture.Path("locking-queue-all");
            var a = new ZooKeeperLockingQueue(path, session);
            var b = new ZooKeeperLockingQueue(path, other);
            var waiting = b.GetAsync(null);
            a.PutAll(new[] { B("x"), new byte[0], B("z") }, 5);
            Assert.That(session.GetChildren(path + "/entries").OrderBy(c => c),
                Is.EqualTo(new[] { "entry-005-0000000000", "entry-005-0000000001", "entry-005-0000000002" }), "kazoo's names, one priority");
            Assert.That(S(Fixture.Await(waiting, "a waiting get takes the first")), Is.EqualTo("x"));
            Assert.IsTrue(b.Consume());
            Assert.IsTrue(a.PutAllAsync(new[] { B("urgent") }, 1).Wait(Fixture.Patience), "PutAllAsync");
            a.PutAll(new byte[0][]);
            Assert.That(a.Count, Is.EqualTo(3), "an empty list puts nothing");
            Assert.That(S(a.Get()), Is.EqualTo("urgent"));
            Assert.IsTrue(a.Consume());
            Assert.That(a.Get(), Is.EqualTo(new byte[0]));
            Assert.IsTrue(a.Consume());

            Assert.Throws<ArgumentOutOfRangeException>(() => a.PutAll(new[] { B("x") }, 1000));
            Assert.Throws<ArgumentNullException>(() => a.PutAll(null));
            Assert.Throws<ArgumentException>(() => a.PutAll(new[] { B("x"), null }));
            using (var cancelled = new CancellationTokenSource())
            {
                cancelled.Cancel();
                Assert.IsTrue(a.PutAllAsync(new[] { B("never") }, 100, cancelled.Token).IsCanceled);
            }
            Assert.That(a.Count, Is.EqualTo(1), "nothing refused was put");
            Assert.That(S(a.Get()), Is.EqualTo("z"));
            Assert.IsTrue(a.Consume());
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
