using System;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>ZooKeeperDistributedMultiLock: several paths, all or none, a fencing token each.</summary>
    [TestFixture]
    public class MultiLockTests : TwoSessions
    {
        [Test]
        public void HoldsEveryPathWithATokenEachAndReleasesThemTogether()
        {
            var path = Fixture.Path("multi");
            string a = path + "/a", b = path + "/b";
            var multi = new ZooKeeperDistributedMultiLock(new[] { b, a, b }, session, "multi");
            Assert.That(multi.Paths, Is.EqualTo(new[] { a, b }));
            long first;
            using (var handle = multi.Acquire(Fixture.Patience))
            {
                Assert.That(handle.FencingTokens.Keys, Is.EqualTo(new[] { a, b }));
                Assert.That(handle.FencingTokens.Values, Is.All.GreaterThan(0));
                first = handle.FencingTokens[a];
                // Each path is a plain lock: a single lock on one of them waits.
                Assert.IsNull(new ZooKeeperDistributedLock(b, other).TryAcquire());
                Assert.That(session.GetChildren(a).Count, Is.EqualTo(1));
            }
            Assert.That(session.GetChildren(a), Is.Empty);
            Assert.That(session.GetChildren(b), Is.Empty);
            using (var again = Fixture.Await(multi.AcquireAsync(), "a second hold"))
            {
                Assert.That(again.FencingTokens[a], Is.GreaterThan(first));
            }
        }

        [Test]
        public void OnePathTakenMeansNoneHeldAndNoNodeLeft()
        {
            var path = Fixture.Path("multi-taken");
            string a = path + "/a", b = path + "/b";
            using (new ZooKeeperDistributedLock(b, other).Acquire(Fixture.Patience))
            {
                var multi = new ZooKeeperDistributedMultiLock(new[] { a, b }, session);
                Assert.IsNull(multi.TryAcquire());
                Assert.Throws<TimeoutException>(() => multi.Acquire(TimeSpan.FromMilliseconds(200)));
                using (var cancel = new CancellationTokenSource())
                {
                    var waiting = multi.AcquireAsync(null, cancel.Token);
                    Fixture.Eventually(() => session.GetChildren(b).Count == 2, "the multi-lock queued on b");
                    cancel.Cancel();
                    Assert.That(Fixture.Failure(waiting), Is.InstanceOf<OperationCanceledException>());
                }
                Assert.That(session.GetChildren(a), Is.Empty, "the cancel removed the node on a");
                Assert.That(session.GetChildren(b).Count, Is.EqualTo(1));
            }
        }

        [Test]
        public void DeletingOnePathsNodeFiresHandleLostToken()
        {
            var path = Fixture.Path("multi-lost");
            string a = path + "/a", b = path + "/b";
            using (var handle = new ZooKeeperDistributedMultiLock(new[] { a, b }, session).Acquire(Fixture.Patience))
            {
                other.Delete(b + "/" + other.GetChildren(b).Single());
                Assert.IsTrue(handle.HandleLostToken.WaitHandle.WaitOne(Fixture.Patience), "lost with one path's node");
                Assert.That(handle.LostReason, Is.EqualTo(LostReason.NodeDeleted));
                Fixture.Eventually(() => session.GetChildren(a).Count == 0, "the other path's node gone");
            }
        }

        [Test]
        public void AnExpiryLosesEveryPathAndTheNextSessionHoldsAgain()
        {
            var path = Fixture.Path("multi-expiry");
            string a = path + "/a", b = path + "/b";
            var multi = new ZooKeeperDistributedMultiLock(new[] { a, b }, session);
            using (var handle = multi.Acquire(Fixture.Patience))
            {
                Setup.Zk.Expire(session.SessionId);
                Assert.IsTrue(handle.HandleLostToken.WaitHandle.WaitOne(Fixture.Patience), "lost with the session");
                Assert.That(handle.LostReason, Is.EqualTo(LostReason.SessionExpired));
                Fixture.Eventually(() => other.GetChildren(a).Count == 0 && other.GetChildren(b).Count == 0, "both nodes gone with the session");
            }
            using (var again = multi.Acquire(Fixture.Patience))
            {
                Assert.That(again.FencingTokens.Keys, Is.EqualTo(new[] { a, b }), "held again once the session has a new ZooKeeper session");
            }
        }

        [Test]
        public void BadInputIsRefused()
        {
            Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedMultiLock(new string[0], session));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedMultiLock((string[])null, session));
            var refused = Assert.Throws<ArgumentException>(() => new ZooKeeperDistributedMultiLock(new[] { "/ok", "relative" }, session));
            StringAssert.Contains("\"relative\"", refused.Message);
        }
    }
}
