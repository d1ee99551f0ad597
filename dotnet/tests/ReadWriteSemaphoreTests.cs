using System;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Read/write locks and semaphores.</summary>
    [TestFixture]
    public class ReadWriteSemaphoreTests : TwoSessions
    {
        [Test]
        public void ReadersShareAndAWriterWaitsForAllOfThem()
        {
            var path = Fixture.Path("rw");
            var mine = new ZooKeeperDistributedReaderWriterLock(path, session, "a");
            var theirs = new ZooKeeperDistributedReaderWriterLock(path, other, "b");
            var inspect = new ZooKeeperDistributedLock(path, session);
            var first = mine.AcquireReadLock();
            var second = theirs.AcquireReadLock(TimeSpan.FromSeconds(5));
            Assert.IsNull(theirs.TryAcquireWriteLock(), "readers exclude a writer");
            var writing = mine.AcquireWriteLockAsync();
            Fixture.Eventually(() => inspect.GetContenders().Count == 3, "the writer is queued");
            Assert.IsNull(theirs.TryAcquireReadLock(), "a reader queues behind a waiting writer");
            first.Dispose();
            Assert.IsFalse(writing.IsCompleted, "one reader is still in");
            second.Dispose();
            using (var writer = Fixture.Await(writing, "the writer"))
            {
                Assert.That(writer.FencingToken, Is.GreaterThan(0));
                Assert.IsNull(theirs.TryAcquireReadLock());
                Assert.IsNull(Fixture.Await(theirs.TryAcquireWriteLockAsync(TimeSpan.FromMilliseconds(100)), "a try"));
            }
            using (theirs.AcquireWriteLock(TimeSpan.FromSeconds(5))) { }
            using (Fixture.Await(theirs.AcquireReadLockAsync(), "a reader")) { }
        }

        [Test]
        public void ASemaphoreAdmitsMaxCountHolders()
        {
            var path = Fixture.Path("semaphore");
            var mine = new ZooKeeperDistributedSemaphore(path, 2, session, "a");
            var theirs = new ZooKeeperDistributedSemaphore(path, 2, other, "b");
            var one = mine.Acquire();
            var two = theirs.Acquire(TimeSpan.FromSeconds(5));
            Assert.That(mine.GetLeaseHolders(), Is.EquivalentTo(new[] { "a", "b" }));
            Assert.IsNull(mine.TryAcquire());
            Assert.Throws<TimeoutException>(() => theirs.Acquire(TimeSpan.FromMilliseconds(200)));
            var waiting = theirs.AcquireAsync();
            Assert.IsFalse(waiting.IsCompleted);
            one.Dispose();
            one.Dispose();
            using (Fixture.Await(waiting, "a freed lease"))
            {
                Assert.That(mine.GetLeaseHolders(), Is.EquivalentTo(new[] { "b", "b" }));
            }
            two.Dispose();
            Assert.That(mine.GetLeaseHolders(), Is.Empty);
        }

        [Test]
        public void ASemaphoreOfAnotherSizeIsRefused()
        {
            var path = Fixture.Path("semaphore-size");
            using (new ZooKeeperDistributedSemaphore(path, 2, session).Acquire()) { }
            var error = Assert.Throws<ZooLockConfigurationException>(() => new ZooKeeperDistributedSemaphore(path, 3, other).Acquire());
            Assert.That(error.Status, Is.EqualTo(ZooLockStatus.InconsistentLeases));
        }
    }
}
