using System;
using System.Diagnostics;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Bad inputs throw the documented exceptions; nothing in native code brings the process down.</summary>
    [TestFixture]
    public class BadInputTests
    {
        [Test]
        public void BadPathsAreArgumentExceptions()
        {
            using (var session = Fixture.Session())
            {
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock(null, session));
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock("/a", null));
                foreach (var bad in new[] { "", "relative", "/", "/a/", "/a//b", "/a/../b", "/zookeeper/x", "/a\0b" })
                {
                    Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedLock(bad, session), bad);
                    Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedReaderWriterLock(bad, session), bad);
                    Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedSemaphore(bad, 1, session), bad);
                }
                Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperDistributedSemaphore("/s", 0, session));
            }
        }

        [Test]
        public void BadConnectStringsAndHosts()
        {
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperSession(null));
            foreach (var bad in new[] { "", "host:99999", "host:abc", "ho st:1", "h:1/bad/" })
            {
                Assert.Throws<ArgumentException>(() => new ZooKeeperSession(bad), bad);
            }
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperSession("h:1", TimeSpan.FromSeconds(-1), TimeSpan.Zero));
            var watch = Stopwatch.StartNew();
            var error = Assert.Throws<ZooLockConnectionException>(() => new ZooKeeperSession("127.0.0.1:1", TimeSpan.Zero, TimeSpan.FromMilliseconds(500)));
            Assert.That(error.Status, Is.EqualTo(ZooLockStatus.ConnectTimeout));
            Assert.That(watch.Elapsed, Is.LessThan(TimeSpan.FromSeconds(10)));
            var chroot = Assert.Throws<ZooLockConfigurationException>(() => new ZooKeeperSession(Setup.Zk.Connect + "/no/such/chroot"));
            Assert.That(chroot.Status, Is.EqualTo(ZooLockStatus.NoChroot));
        }

        [Test]
        public void NegativeTimeoutsAreRefused()
        {
            using (var session = Fixture.Session())
            {
                var mutex = new ZooKeeperDistributedLock(Fixture.Path("negative"), session);
                Assert.Throws<ArgumentOutOfRangeException>(() => mutex.Acquire(TimeSpan.FromSeconds(-2)));
                Assert.Throws<ArgumentOutOfRangeException>(() => mutex.TryAcquire(TimeSpan.FromMilliseconds(-5)));
                Assert.Throws<ArgumentOutOfRangeException>(() => mutex.AcquireAsync(TimeSpan.FromMilliseconds(-5)));
                Assert.Throws<ArgumentOutOfRangeException>(() => mutex.TryAcquireAsync(TimeSpan.FromMilliseconds(-5)));
                using (mutex.Acquire(Timeout.InfiniteTimeSpan)) { }
            }
        }

        [Test]
        public void UseAfterDisposeIsObjectDisposed()
        {
            var session = Fixture.Session();
            var path = Fixture.Path("disposed");
            var mutex = new ZooKeeperDistributedLock(path, session);
            var semaphore = new ZooKeeperDistributedSemaphore(path + "-s", 1, session);
            var waiter = new ZooKeeperDistributedLock(path, session);
            var handle = mutex.Acquire();
            var waiting = waiter.AcquireAsync();
            session.Dispose();
            Assert.IsInstanceOf<ObjectDisposedException>(Fixture.Failure(waiting), "a wait pending when the session closed");
            Assert.Throws<ObjectDisposedException>(() => new ZooKeeperDistributedLock(path, session));
            Assert.Throws<ObjectDisposedException>(() => mutex.Acquire());
            Assert.Throws<ObjectDisposedException>(() => semaphore.TryAcquire());
            Assert.IsInstanceOf<ObjectDisposedException>(Fixture.Failure(mutex.AcquireAsync()));
            handle.Dispose();
            handle.Dispose();
        }

        [Test]
        public void ANativePanicIsAnExceptionNotACrash()
        {
            var error = Assert.Throws<ZooLockInternalException>(() => SelfTest.Panic());
            Assert.That(error.Status, Is.EqualTo(ZooLockStatus.Panic));
            StringAssert.Contains("as asked", error.Message);
            var inTask = Fixture.Failure(SelfTest.PanicInTask());
            Assert.IsInstanceOf<ZooLockInternalException>(inTask);
            StringAssert.Contains("in a task", inTask.Message);
            using (var session = Fixture.Session())
            using (new ZooKeeperDistributedLock(Fixture.Path("after-panic"), session).Acquire())
            {
                Assert.That(SelfTest.NativeVersion(), Is.Not.Empty, "the library still works");
            }
        }
    }
}
