using System;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>kazoo's Barrier and DoubleBarrier (the core's) from C#, against the real server.</summary>
    [TestFixture]
    public class BarrierTests : TwoSessions
    {
        [Test]
        public void ABarrierHoldsWaitersUntilItIsRemoved()
        {
            var path = Fixture.Path("barrier");
            var barrier = new ZooKeeperBarrier(path, session);
            Assert.IsTrue(barrier.Wait(), "no node: no barrier");
            barrier.Create();
            barrier.Create();
            Assert.IsFalse(barrier.Wait(TimeSpan.Zero));
            Assert.IsFalse(barrier.Wait(TimeSpan.FromMilliseconds(100)));
            var waiting = new ZooKeeperBarrier(path, other).WaitAsync();
            Assert.IsTrue(barrier.Remove());
            Assert.IsTrue(Fixture.Await(waiting, "the waiter to see the barrier go"));
            Assert.IsFalse(barrier.Remove(), "removed already");
            Assert.Throws<ArgumentException>(() => new ZooKeeperBarrier("relative", session));
        }

        [Test]
        public void AWaiterGoesOnAcrossAnExpiryAndCancels()
        {
            var path = Fixture.Path("barrier-expiry");
            var barrier = new ZooKeeperBarrier(path, other);
            barrier.Create();
            var waiter = new ZooKeeperBarrier(path, session);
            var waiting = waiter.WaitAsync();
            Setup.Zk.Expire(session.SessionId);
            Assert.IsTrue(barrier.Remove());
            Assert.IsTrue(Fixture.Await(waiting, "the waiter after an expiry"));

            barrier.Create();
            using (var cancel = new CancellationTokenSource())
            {
                var cancelled = waiter.WaitAsync(null, cancel.Token);
                cancel.Cancel();
                Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(cancelled));
            }
        }

        [Test]
        public void MembersEnterTogetherAndLeaveTogether()
        {
            var path = Fixture.Path("double-barrier");
            using (var third = Fixture.Session())
            {
                var members = new[] { session, other, third }
                    .Select((s, i) => new ZooKeeperDoubleBarrier(path, s, 3, "m" + i)).ToArray();
                Assert.IsFalse(members[0].IsParticipating);
                var entering = members.Take(2).Select(m => m.EnterAsync()).ToArray();
                // The first enter creates the path: until then there is nothing to list.
                Fixture.Eventually(() => session.Exists(path) != null && session.GetChildren(path).Count == 2, "two members are in");
                Assert.IsFalse(entering.Any(e => e.IsCompleted), "two of three wait");
                members[2].Enter();
                foreach (var entered in entering) Assert.IsTrue(entered.Wait(Fixture.Patience));
                Assert.IsTrue(members.All(m => m.IsParticipating));
                Assert.That(session.GetChildren(path).Count, Is.EqualTo(4), "a node per member and 'ready'");
                Assert.That(session.GetData(members[1].Node), Is.EqualTo(new[] { (byte)'m', (byte)'1' }));

                var leaving = members.Take(2).Select(m => m.LeaveAsync()).ToArray();
                Fixture.Eventually(() => !session.GetChildren(path).Contains("ready"), "'ready' goes");
                Assert.IsFalse(leaving.Any(l => l.IsCompleted), "no one leaves before everyone does");
                members[2].Leave();
                foreach (var left in leaving) Assert.IsTrue(left.Wait(Fixture.Patience));
                Assert.IsFalse(members.Any(m => m.IsParticipating));
                Assert.That(session.GetChildren(path), Is.Empty);
            }
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperDoubleBarrier(path, session, 0));
        }

        [Test]
        public void ACancelledEnterLeavesNoMember()
        {
            var path = Fixture.Path("double-barrier-cancel");
            var member = new ZooKeeperDoubleBarrier(path, session, 2);
            StringAssert.EndsWith("-" + System.Diagnostics.Process.GetCurrentProcess().Id, member.Identifier);
            using (var cancel = new CancellationTokenSource())
            {
                var entering = member.EnterAsync(cancel.Token);
                Fixture.Eventually(() => other.Exists(member.Node) != null, "the member's node");
                cancel.Cancel();
                Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(entering));
            }
            Fixture.Eventually(() => other.Exists(member.Node) == null, "the member's node to go");
            Assert.IsFalse(member.IsParticipating);
        }
    }
}
