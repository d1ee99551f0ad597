using System;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Curator's LeaderLatch (the core's) from C#, against the real server.</summary>
    [TestFixture]
    public class LeaderLatchTests : TwoSessions
    {
        static readonly TimeSpan Patience = TimeSpan.FromSeconds(15);

        [Test]
        public void OneLeadsAtATimeAndACloseHandsOver()
        {
            var path = Fixture.Path("latch");
            var first = new ZooKeeperLeaderLatch(path, session, "first");
            Assert.IsFalse(first.HasLeadership);
            Assert.IsNull(other.Exists(path), "nothing is sent before Start");
            first.Start();
            Assert.IsTrue(first.WaitForLeadership(Patience));
            Assert.Throws<ArgumentException>(() => first.Start());
            using (var second = new ZooKeeperLeaderLatch(path, other, "second"))
            {
                second.Start();
                Assert.IsFalse(second.WaitForLeadership(TimeSpan.FromMilliseconds(300)), "the first leads");
                var waiting = second.WaitForLeadershipAsync();
                var token = first.FencingToken.Value;
                first.Close();
                Assert.IsFalse(first.HasLeadership);
                Assert.IsTrue(Fixture.Await(waiting, "the second to lead once the first closed"));
                Assert.Greater(second.FencingToken.Value, token);
                Assert.AreEqual(1, other.GetChildren(path).Count, "the first's node went with its close");
                Assert.Throws<ObjectDisposedException>(() => first.WaitForLeadership(TimeSpan.Zero));
                Assert.Throws<ObjectDisposedException>(() => first.Start());
            }
            Assert.AreEqual(0, other.GetChildren(path).Count, "the second's node went with its Dispose");
            first.Dispose();
            first.Dispose();
        }

        [Test]
        public void ATermLostToAnExpiryIsLedAgainAndATokenEndsAWait()
        {
            var path = Fixture.Path("latch-expiry");
            using (var latch = new ZooKeeperLeaderLatch(path, session))
            {
                latch.Start();
                Assert.IsTrue(latch.WaitForLeadership(Patience));
                var first = latch.FencingToken.Value;
                var expired = session.SessionId;
                Setup.Zk.Expire(expired);
                Fixture.Eventually(() => latch.FencingToken.GetValueOrDefault() > first, "leads again on the next session");
                Assert.AreNotEqual(expired, session.SessionId);

                using (var waiter = new ZooKeeperLeaderLatch(path, other))
                using (var cancel = new CancellationTokenSource())
                {
                    waiter.Start();
                    var waiting = waiter.WaitForLeadershipAsync(null, cancel.Token);
                    cancel.Cancel();
                    Assert.Catch<OperationCanceledException>(() => waiting.GetAwaiter().GetResult());
                    Assert.AreEqual(2, other.GetChildren(path).Count, "a token ends the wait, not the candidacy");
                }
            }
            Assert.AreEqual(0, other.GetChildren(path).Count);
        }

        /// <summary>Its session disposed under it, a waiting latch's wait ends instead of waiting for ever.</summary>
        [Test]
        public void ASessionDisposedUnderALatchEndsItsWait()
        {
            var path = Fixture.Path("latch-session-disposed");
            using (var leader = new ZooKeeperLeaderLatch(path, session))
            using (var latch = new ZooKeeperLeaderLatch(path, other))
            {
                leader.Start();
                Assert.IsTrue(leader.WaitForLeadership(Patience));
                latch.Start();
                var waiting = latch.WaitForLeadershipAsync();
                other.Dispose();
                Assert.IsInstanceOf<ObjectDisposedException>(Fixture.Failure(waiting), "the wait ends with its session");
                Assert.Throws<ObjectDisposedException>(() => latch.Start());
            }
        }
    }
}
