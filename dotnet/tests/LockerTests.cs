using System;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>The classic sample's shape: CreateLock, Lock, LockAsync, Release, Dispose.</summary>
    [TestFixture]
    public class LockerTests
    {
        static string[] Address { get { return Setup.Zk.Connect.Split(','); } }

        [Test]
        public void LockersTakeTurns()
        {
            var path = Fixture.Path("locker");
            using (var first = new ZookeeperLocker(path, Address))
            using (var second = new ZookeeperLocker(path, 4000, Address))
            {
                var mine = first.CreateLock();
                Assert.IsTrue(first.Lock(mine));
                Assert.IsFalse(first.Lock(mine, 200), "a held name waits for its own release: false once the timeout runs out");
                var theirs = second.CreateLock("second");
                Assert.IsFalse(second.Lock(theirs, 200));
                var pending = second.LockAsync(theirs);
                Assert.IsFalse(pending.IsCompleted);
                Assert.IsTrue(first.Release(mine));
                Assert.IsTrue(Fixture.Await(pending, "the second locker"));
                Assert.IsFalse(first.Release(mine), "a released name holds nothing");
                Assert.IsFalse(Fixture.Await(first.LockAsync(first.CreateLock("again"), 100), "a bounded wait"));
                Assert.IsTrue(second.Release(theirs));
            }
        }

        [Test]
        public void DisposeReleasesEverythingItHolds()
        {
            var path = Fixture.Path("locker-dispose");
            var locker = new ZookeeperLocker(path, (int)Fixture.SessionTimeout.TotalMilliseconds, Address);
            Assert.IsTrue(locker.Lock(locker.CreateLock("held")));
            using (var session = Fixture.Session())
            {
                var mutex = new ZooKeeperDistributedLock(path, session);
                Assert.IsNull(mutex.TryAcquire());
                locker.Dispose();
                locker.Dispose();
                using (var handle = mutex.TryAcquire()) Assert.IsNotNull(handle, "the locker's lock was released");
            }
            Assert.Throws<ObjectDisposedException>(() => locker.CreateLock());
            Assert.Throws<ObjectDisposedException>(() => locker.Lock("held"));
        }

        [Test]
        public void BadNamesAndTimeoutsAreRefused()
        {
            using (var locker = new ZookeeperLocker(Fixture.Path("locker-bad"), Address))
            {
                Assert.Throws<ArgumentNullException>(() => locker.CreateLock(null));
                Assert.Throws<ArgumentException>(() => locker.CreateLock(""));
                Assert.Throws<ArgumentException>(() => locker.CreateLock("a/b"));
                var name = locker.CreateLock("taken");
                Assert.Throws<ArgumentException>(() => locker.CreateLock("taken"));
                Assert.Throws<ArgumentException>(() => locker.Lock("never-created"));
                Assert.Throws<ArgumentOutOfRangeException>(() => locker.Lock(name, -5));
                Assert.Throws<ArgumentOutOfRangeException>(() => locker.LockAsync(name, -2));
            }
            Assert.Throws<ArgumentException>(() => new ZookeeperLocker("/x"));
            Assert.Throws<ArgumentNullException>(() => new ZookeeperLocker(null, Address));
            Assert.Throws<ArgumentException>(() => new ZookeeperLocker("relative/path", Address));
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZookeeperLocker("/x", -1, Address));
        }
    }
}
