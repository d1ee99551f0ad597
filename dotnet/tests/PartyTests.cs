using System;
using System.Linq;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>kazoo's Party and ShallowParty (the core's) from C#, against the real server.</summary>
    [TestFixture]
    public class PartyTests : TwoSessions
    {
        [TestCase(false)]
        [TestCase(true)]
        public void MembersJoinAndLeaveInKazoosLayouts(bool shallow)
        {
            var path = Fixture.Path(shallow ? "shallow-party" : "party");
            var a = new ZooKeeperParty(path, session, "a", shallow);
            var b = new ZooKeeperParty(path, other, "b", shallow);
            Assert.That(a.GetMembers(), Is.Empty);
            a.Join();
            Assert.IsTrue(b.JoinAsync().Wait(Fixture.Patience), "b joins");
            Assert.IsTrue(a.IsParticipating && b.IsParticipating);
            Assert.That(a.GetMembers().OrderBy(m => m), Is.EqualTo(new[] { "a", "b" }));
            foreach (var node in session.GetChildren(path))
            {
                // <uuid4 hex>-<identifier>, or <uuid4 hex>__party__ holding the identifier.
                if (shallow) StringAssert.IsMatch("^[0-9a-f]{32}-[ab]$", node);
                else StringAssert.IsMatch("^[0-9a-f]{32}__party__$", node);
            }
            Assert.IsTrue(b.Leave());
            Assert.IsFalse(b.Leave(), "left already");
            Assert.IsFalse(b.IsParticipating);
            Assert.That(Fixture.Await(a.GetMembersAsync(), "members"), Is.EqualTo(new[] { "a" }));
            a.Leave();
            Assert.Throws<ArgumentException>(() => new ZooKeeperParty(path, session, "a/b", true));
        }

        [Test]
        public void AMemberJoinsAgainAfterAnExpiry()
        {
            var path = Fixture.Path("party-expiry");
            var member = new ZooKeeperParty(path, session, "me");
            member.Join();
            var owner = other.Exists(path + "/" + other.GetChildren(path).Single()).EphemeralOwner;
            Setup.Zk.Expire(session.SessionId);
            Fixture.Eventually(() =>
            {
                var nodes = other.GetChildren(path);
                return nodes.Count == 1 && other.Exists(path + "/" + nodes[0]) is ZooKeeperStat stat && stat.EphemeralOwner != owner;
            }, "the member's node of the next session");
            Assert.IsTrue(member.IsParticipating);
            Assert.That(new ZooKeeperParty(path, other).GetMembers(), Is.EqualTo(new[] { "me" }));
        }
    }
}
