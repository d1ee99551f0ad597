using System;
using System.Linq;
using System.Text;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Curator's PersistentNode (ephemeral; the core's) from C#, against the real server.</summary>
    [TestFixture]
    public class PersistentNodeTests : TwoSessions
    {
        static byte[] Bytes(string text) { return Encoding.UTF8.GetBytes(text); }

        bool Holds(string path, string data, Func<long, bool> owner)
        {
            var stat = other.Exists(path);
            return stat != null && owner(stat.EphemeralOwner) && other.GetData(path).SequenceEqual(Bytes(data));
        }

        [Test]
        public void KeptAcrossAnExpiryAndADeletionThenDeletedOnDispose()
        {
            var path = Fixture.Path("registry") + "/worker-1";
            var node = new ZooKeeperPersistentNode(path, session, Bytes("10.0.0.1:80"));
            Assert.IsFalse(node.IsStarted);
            Assert.IsNull(other.Exists(path), "nothing is sent before Start");
            node.Start();
            Assert.IsTrue(node.IsStarted);
            var first = session.SessionId;
            Assert.IsTrue(Holds(path, "10.0.0.1:80", owner => owner == first));

            Setup.Zk.Expire(first);
            Fixture.Eventually(() => Holds(path, "10.0.0.1:80", owner => owner != first && owner != 0), "the node of the next session");
            other.Delete(path);
            Fixture.Eventually(() => Holds(path, "10.0.0.1:80", owner => owner != 0), "the node made again after a deletion");
            node.SetData(Bytes("10.0.0.1:81"));
            Assert.IsTrue(Holds(path, "10.0.0.1:81", owner => owner == session.SessionId));
            Assert.IsTrue(node.SetDataAsync(Bytes("10.0.0.1:82")).Wait(Fixture.Patience), "SetDataAsync");
            Assert.IsTrue(Holds(path, "10.0.0.1:82", owner => owner == session.SessionId));

            node.Dispose();
            Assert.IsNull(other.Exists(path), "deleted on Dispose");
            node.Dispose();
            Assert.Throws<ObjectDisposedException>(() => node.Start());
        }

        /// <summary>
        /// Another session's node at the path is waited out: a token ends the
        /// wait with nothing of ours left; once it goes, Start makes ours.
        /// </summary>
        [Test]
        public void AnotherSessionsNodeIsWaitedOutAndATokenEndsTheWait()
        {
            var path = Fixture.Path("registry-earlier") + "/worker-1";
            var parent = path.Substring(0, path.LastIndexOf('/'));
            other.Create(parent);
            other.Create(path, Bytes("earlier"), ZooKeeperCreateFlags.Ephemeral);
            using (var node = new ZooKeeperPersistentNode(path, session, Bytes("mine")))
            {
                using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(300)))
                    Assert.That(Fixture.Failure(node.StartAsync(cancel.Token)), Is.InstanceOf<OperationCanceledException>());
                Assert.IsFalse(node.IsStarted);
                Assert.IsTrue(Holds(path, "earlier", owner => owner == other.SessionId), "another's node is left as it is");
                var starting = node.StartAsync();
                other.Delete(path);
                Assert.IsTrue(starting.Wait(Fixture.Patience), "started once the other node went");
                Assert.IsTrue(Holds(path, "mine", owner => owner == session.SessionId));
                Assert.IsTrue(node.Close());
                Assert.IsFalse(node.Close(), "closed already");
            }
            Assert.IsNull(other.Exists(path));
            Assert.Throws<ArgumentException>(() => new ZooKeeperPersistentNode("relative", session));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperPersistentNode(path, null));
        }
    }
}
