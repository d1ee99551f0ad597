using System;
using System.Linq;
using System.Text;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// .NET's conventions, the same on every type: members of a disposed
    /// object throw <see cref="ObjectDisposedException"/>, a call in the wrong
    /// state <see cref="InvalidOperationException"/>, times are
    /// <see cref="DateTimeOffset"/>s, messages name what was wrong.
    /// </summary>
    [TestFixture]
    public class ConventionsTests : TwoSessions
    {
        static string[] Address { get { return Setup.Zk.Connect.Split(','); } }

        [Test]
        public void ALeadershipsHandleLostThrowsOnceDisposedAsALockHandlesDoes()
        {
            var path = Fixture.Path("disposed-term");
            var term = new ZooKeeperLeaderElection(path, session).AwaitLeadership(Fixture.Patience);
            term.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { var lost = term.HandleLostToken; });
            var handle = new ZooKeeperDistributedLock(path + "-lock", session).Acquire(Fixture.Patience);
            handle.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { var lost = handle.HandleLostToken; });
        }

        [Test]
        public void EveryStateOfADisposedHandleOrLeadershipThrows()
        {
            var path = Fixture.Path("disposed-state");
            var term = new ZooKeeperLeaderElection(path, session).AwaitLeadership(Fixture.Patience);
            var handle = new ZooKeeperDistributedLock(path + "-lock", session).Acquire(Fixture.Patience);
            term.Dispose();
            handle.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { var suspended = term.IsSuspended; });
            Assert.Throws<ObjectDisposedException>(() => { var leads = term.IsLeader; });
            Assert.Throws<ObjectDisposedException>(() => { var suspended = handle.IsSuspended; });
            Assert.Throws<ObjectDisposedException>(() => { var reason = handle.LostReason; });
        }

        [Test]
        public void CommittingTwiceIsAnInvalidOperation()
        {
            var path = Fixture.Path("commit-twice");
            using (var transaction = session.Transaction().Create(path))
            {
                transaction.Commit();
                Assert.Throws<InvalidOperationException>(() => transaction.Commit());
                Assert.Throws<InvalidOperationException>(() => transaction.Create(path + "-more"));
                Assert.Throws<InvalidOperationException>(() => transaction.CommitAsync());
            }
            Assert.IsNotNull(other.Exists(path));
        }

        [Test]
        public void ABadNodePathIsAnInvalidPathNotAnInvalidLockPath()
        {
            var error = Assert.Throws<ArgumentException>(() => session.Create("no-slash"));
            StringAssert.StartsWith("invalid path \"no-slash\"", error.Message);
            StringAssert.DoesNotContain("lock", error.Message);
            Assert.That(error.ParamName, Is.EqualTo("path"));
            error = Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedLock("/", session));
            StringAssert.Contains("the root cannot be a lock path", error.Message);
        }

        [Test]
        public void StatTimesAreDateTimeOffsets()
        {
            var path = Fixture.Path("stat-times");
            var before = DateTimeOffset.UtcNow;
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            var stat = session.SetData(path, Encoding.UTF8.GetBytes("v2"));
            object ctime = stat.Ctime, mtime = stat.Mtime;
            Assert.IsInstanceOf<DateTimeOffset>(ctime);
            Assert.IsInstanceOf<DateTimeOffset>(mtime);
            // The server's clock is this machine's.
            Assert.That((DateTimeOffset)ctime, Is.EqualTo(before).Within(TimeSpan.FromMinutes(1)));
            Assert.That((DateTimeOffset)mtime, Is.GreaterThanOrEqualTo((DateTimeOffset)ctime));
            Assert.That(((DateTimeOffset)ctime).Offset, Is.EqualTo(TimeSpan.Zero));
            using (new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience))
            {
                object created = session.Inspect(path).Single().Created;
                Assert.IsInstanceOf<DateTimeOffset>(created);
            }
        }

        [Test]
        public void AParticipantWithoutAnIdentifierPrintsItQuoted()
        {
            var path = Fixture.Path("no-identifier");
            var semaphore = new ZooKeeperDistributedSemaphore(path, 2, session);
            using (semaphore.Acquire(Fixture.Patience))
            using (new ZooKeeperDistributedSemaphore(path, 2, session, "worker-7").Acquire(Fixture.Patience))
            {
                var shown = session.Inspect(path).Select(p => p.ToString()).ToList();
                Assert.That(shown.Count(s => s.Contains(" identifier=\"\" ")), Is.EqualTo(1), string.Join("\n", shown));
                Assert.That(shown.Count(s => s.Contains(" identifier=\"worker-7\" ")), Is.EqualTo(1), string.Join("\n", shown));
            }
        }

        [Test]
        public void ALockerLocksANameAgainAfterReleasingIt()
        {
            using (var locker = new ZookeeperLocker(Fixture.Path("locker-again"), Address))
            {
                var name = locker.CreateLock();
                Assert.IsTrue(locker.Lock(name, (int)Fixture.Patience.TotalMilliseconds));
                Assert.IsTrue(locker.Release(name));
                Assert.IsFalse(locker.Release(name), "nothing held");
                Assert.IsTrue(locker.Lock(name, (int)Fixture.Patience.TotalMilliseconds), "the name is still this locker's");
                Assert.IsTrue(Fixture.Await(locker.LockAsync(locker.CreateLock("other"), 0), "a second name") == false);
                Assert.IsTrue(locker.Release(name));
            }
        }

        [Test]
        public void ADisposedLockerThrowsFromEveryMember()
        {
            var locker = new ZookeeperLocker(Fixture.Path("locker-disposed"), Address);
            var name = locker.CreateLock();
            Assert.IsTrue(locker.Lock(name));
            locker.Dispose();
            Assert.Throws<ObjectDisposedException>(() => locker.Release(name));
            Assert.Throws<ObjectDisposedException>(() => locker.Lock(name));
            Assert.Throws<ObjectDisposedException>(() => locker.LockAsync(name));
            Assert.Throws<ObjectDisposedException>(() => locker.CreateLock());
            locker.Dispose();
        }
    }
}
