using System;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Leader election (LeaderLatch-like) over the core's lock, against the real server.</summary>
    [TestFixture]
    public class ElectionTests : TwoSessions
    {
        [Test]
        public void LeadershipPassesOnWithIncreasingTokens()
        {
            var path = Fixture.Path("election");
            var a = new ZooKeeperLeaderElection(path, session, "a");
            var b = new ZooKeeperLeaderElection(path, other, "b");
            var first = a.AwaitLeadership(Fixture.Patience);
            Assert.IsTrue(first.IsLeader);
            Assert.IsFalse(first.IsSuspended);
            StringAssert.StartsWith(path + "/", first.Node);
            var waiting = b.AwaitLeadershipAsync();
            Fixture.Eventually(() => a.GetContenders().Count == 2, "b is queued");
            Assert.That(b.GetContenders(), Is.EqualTo(new[] { "a", "b" }));
            Assert.IsFalse(waiting.IsCompleted);

            var lost = first.HandleLostToken;
            first.Dispose();
            first.Dispose();
            Assert.IsFalse(lost.IsCancellationRequested, "a resign is not a loss");
            using (var second = Fixture.Await(waiting, "b leads after a resigned"))
            {
                Assert.That(second.FencingToken, Is.GreaterThan(first.FencingToken));
                Assert.IsTrue(second.IsLeader);
                var third = a.AwaitLeadershipAsync();
                Fixture.Eventually(() => a.GetContenders().Count == 2, "a is queued again");
                second.Dispose();
                using (var term = Fixture.Await(third, "a leads again"))
                {
                    Assert.That(term.FencingToken, Is.GreaterThan(second.FencingToken));
                }
            }
            Assert.That(a.GetContenders(), Is.Empty);
        }

        [Test]
        public void TimeoutsAndCancellationWithdrawTheCandidacy()
        {
            var path = Fixture.Path("election-timeout");
            var leader = new ZooKeeperLeaderElection(path, session, "leader");
            var candidate = new ZooKeeperLeaderElection(path, other, "candidate");
            using (leader.TryAwaitLeadership())
            {
                Assert.IsNull(candidate.TryAwaitLeadership());
                Assert.IsNull(candidate.TryAwaitLeadership(TimeSpan.FromMilliseconds(200)));
                Assert.Throws<TimeoutException>(() => candidate.AwaitLeadership(TimeSpan.FromMilliseconds(200)));
                Assert.IsNull(Fixture.Await(candidate.TryAwaitLeadershipAsync(TimeSpan.FromMilliseconds(200)), "TryAwaitLeadershipAsync"));
                Assert.IsInstanceOf<TimeoutException>(Fixture.Failure(candidate.AwaitLeadershipAsync(TimeSpan.FromMilliseconds(200))));
                using (var cancel = new CancellationTokenSource())
                {
                    var waiting = candidate.AwaitLeadershipAsync(null, cancel.Token);
                    Fixture.Eventually(() => leader.GetContenders().Count == 2, "the candidate is queued");
                    cancel.Cancel();
                    Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(waiting));
                }
                Assert.Throws<OperationCanceledException>(() => candidate.AwaitLeadership(null, new CancellationToken(true)));
                Fixture.Eventually(() => leader.GetContenders().Count == 1, "every withdrawn candidacy's node is gone");
                Assert.That(leader.GetContenders(), Is.EqualTo(new[] { "leader" }));
            }
            Assert.Throws<ArgumentException>(() => new ZooKeeperLeaderElection("relative", session));
        }

        [Test]
        public void ADeposedLeaderLearnsItAndCannotWrite()
        {
            var path = Fixture.Path("election-deposed");
            session.Create(path + "/state", ZooKeeperCreateFlags.MakePath);
            var election = new ZooKeeperLeaderElection(path + "/leader", session, "me");
            using (var term = election.AwaitLeadership(Fixture.Patience))
            {
                using (var fenced = term.Fenced()) fenced.SetData(path + "/state", new byte[] { 1 }).Commit();
                using (var stale = term.Fenced().SetData(path + "/state", new byte[] { 2 }))
                {
                    other.Delete(term.Node);
                    Assert.Throws<ZooLockNotHeldException>(() => stale.Commit());
                }
                Assert.IsTrue(term.HandleLostToken.WaitHandle.WaitOne(Fixture.Patience), "HandleLost was cancelled");
                Assert.IsFalse(term.IsLeader);
                Assert.Throws<ZooLockNotHeldException>(() => term.Fenced());
                Assert.That(other.GetData(path + "/state"), Is.EqualTo(new byte[] { 1 }));
            }
        }
    }
}
