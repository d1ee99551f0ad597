using System;
using System.Linq;
using System.Text;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>The znode API on a session, its transactions and fenced writes, against the real server.</summary>
    [TestFixture]
    public class ZnodeTests : TwoSessions
    {
        static byte[] Bytes(string text) { return Encoding.UTF8.GetBytes(text); }

        [Test]
        public void CreateGetSetExistsChildrenAndDeleteRoundTrip()
        {
            var path = Fixture.Path("znode");
            Assert.IsNull(session.Exists(path));
            Assert.That(session.Create(path + "/config", Bytes("v1"), ZooKeeperCreateFlags.MakePath), Is.EqualTo(path + "/config"));
            ZooKeeperStat stat;
            Assert.That(other.GetData(path + "/config", out stat), Is.EqualTo(Bytes("v1")));
            Assert.That(stat.Version, Is.EqualTo(0));
            Assert.That(stat.DataLength, Is.EqualTo(2));
            Assert.That(stat.EphemeralOwner, Is.EqualTo(0));
            Assert.That(stat.Czxid, Is.GreaterThan(0));

            var set = session.SetData(path + "/config", Bytes("v2"), 0);
            Assert.That(set.Version, Is.EqualTo(1));
            Assert.That(set.Mzxid, Is.GreaterThan(stat.Mzxid));
            Assert.That(other.GetData(path + "/config"), Is.EqualTo(Bytes("v2")));
            Assert.That(session.SetData(path + "/config", new byte[0]).Version, Is.EqualTo(2), "-1 is any version");
            Assert.That(session.GetData(path + "/config"), Is.Empty);

            session.Create(path + "/b");
            Assert.That(other.GetChildren(path).OrderBy(c => c), Is.EqualTo(new[] { "b", "config" }));
            Assert.That(other.Exists(path).NumChildren, Is.EqualTo(2));

            session.Delete(path + "/config", 2);
            Assert.IsNull(other.Exists(path + "/config"));
            session.Delete(path, -1, true);
            Assert.IsNull(other.Exists(path));
        }

        /// <summary>ZooKeeper's null data (kazoo's None) is null in and out, apart from an empty array.</summary>
        [Test]
        public void NullDataRoundTripsApartFromEmptyData()
        {
            var path = Fixture.Path("null-data");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            Assert.That(other.GetData(path), Is.Not.Null.And.Empty, "Create(path) makes empty data, as kazoo's create(path)");
            session.Create(path + "/null", null);
            session.Create(path + "/empty", new byte[0]);
            ZooKeeperStat stat;
            Assert.IsNull(other.GetData(path + "/null", out stat));
            Assert.That(stat.DataLength, Is.EqualTo(0));
            Assert.That(other.GetData(path + "/empty"), Is.Not.Null.And.Empty);
            Assert.IsNull(Fixture.Await(other.GetDataAsync(path + "/null"), "GetDataAsync"));

            session.SetData(path + "/empty", null);
            Fixture.Await(session.SetDataAsync(path + "/null", new byte[0]), "SetDataAsync");
            Assert.IsNull(other.GetData(path + "/empty"));
            Assert.That(other.GetData(path + "/null"), Is.Not.Null.And.Empty);
            Fixture.Await(session.CreateAsync(path + "/async", null), "CreateAsync");
            Assert.IsNull(other.GetData(path + "/async"));

            using (var transaction = session.Transaction())
            {
                transaction.Create(path + "/made", null).SetData(path + "/null", null).Create(path + "/made-empty").Commit();
            }
            Assert.IsNull(other.GetData(path + "/made"));
            Assert.IsNull(other.GetData(path + "/null"));
            Assert.That(other.GetData(path + "/made-empty"), Is.Not.Null.And.Empty);
            session.Delete(path, -1, true);
        }

        [Test]
        public void AccessControlAndCredentialsAddedAtRunTime()
        {
            var path = Fixture.Path("acl");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            ZooKeeperStat stat;
            Assert.That(session.GetAccessControl(path, out stat),
                Is.EqualTo(new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) }));
            Assert.That(stat.Aversion, Is.EqualTo(0));

            session.AddAuthInfo("digest", Bytes("owner:pw"));
            var creatorOnly = new[] { new ZooKeeperAccessControl("auth", "", ZooKeeperSessionOptions.PermissionAll) };
            session.SetAccessControl(path, creatorOnly, 0);
            Assert.Throws<ZooLockAuthException>(() => other.GetData(path));
            var acl = session.GetAccessControl(path, out stat);
            Assert.That(acl.Count, Is.EqualTo(1));
            Assert.That(acl[0].Scheme, Is.EqualTo("digest"));
            StringAssert.StartsWith("owner:", acl[0].Id);
            Assert.That(stat.Aversion, Is.EqualTo(1));
            Assert.Throws<ZooLockBadVersionException>(() => session.SetAccessControl(path, acl, 0));
            Assert.Throws<ZooLockInvalidAclException>(() => session.SetAccessControl(path, new ZooKeeperAccessControl[0]));
            Assert.Throws<ZooLockNoNodeException>(() => other.GetAccessControl(path + "/none", out stat));

            other.AddAuthInfo("digest", Bytes("owner:pw"));
            Assert.That(other.GetData(path), Is.Empty);
            session.Delete(path);
        }

        [Test]
        public void AccessControlAsyncFormsDoTheSame()
        {
            var path = Fixture.Path("acl-async");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            var read = Fixture.Await(session.GetAccessControlAsync(path), "GetAccessControlAsync");
            Assert.That(read.Acl, Is.EqualTo(new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) }));
            Assert.That(read.Stat.Aversion, Is.EqualTo(0));

            Assert.IsTrue(session.AddAuthInfoAsync("digest", Bytes("owner:pw")).Wait(Fixture.Patience), "AddAuthInfoAsync");
            var creatorOnly = new[] { new ZooKeeperAccessControl("auth", "", ZooKeeperSessionOptions.PermissionAll) };
            Assert.That(Fixture.Await(session.SetAccessControlAsync(path, creatorOnly, read.Stat.Aversion), "SetAccessControlAsync").Aversion,
                Is.EqualTo(1));
            Assert.IsInstanceOf<ZooLockAuthException>(Fixture.Failure(other.GetDataAsync(path)));
            read = Fixture.Await(session.GetAccessControlAsync(path), "GetAccessControlAsync");
            Assert.That(read.Acl.Single().Scheme, Is.EqualTo("digest"));
            StringAssert.StartsWith("owner:", read.Acl.Single().Id);
            Assert.That(read.Stat.Aversion, Is.EqualTo(1));
            Assert.IsInstanceOf<ZooLockBadVersionException>(Fixture.Failure(session.SetAccessControlAsync(path, read.Acl, 0)));
            Assert.IsInstanceOf<ZooLockInvalidAclException>(Fixture.Failure(session.SetAccessControlAsync(path, new ZooKeeperAccessControl[0])));
            Assert.IsInstanceOf<ZooLockNoNodeException>(Fixture.Failure(other.GetAccessControlAsync(path + "/none")));
            Assert.IsInstanceOf<ArgumentException>(Fixture.Failure(other.AddAuthInfoAsync("", Bytes("owner:pw"))));
            Assert.Throws<ArgumentNullException>(() => other.SetAccessControlAsync(path, null));
            Assert.Throws<ArgumentNullException>(() => other.AddAuthInfoAsync("digest", null));

            using (var cancelled = new System.Threading.CancellationTokenSource())
            {
                cancelled.Cancel();
                Assert.IsTrue(other.GetAccessControlAsync(path, cancelled.Token).IsCanceled);
                Assert.IsTrue(other.SetAccessControlAsync(path, creatorOnly, -1, cancelled.Token).IsCanceled);
                Assert.IsTrue(other.AddAuthInfoAsync("digest", Bytes("owner:pw"), cancelled.Token).IsCanceled);
            }
            Assert.IsInstanceOf<ZooLockAuthException>(Fixture.Failure(other.GetDataAsync(path)), "the cancelled auth was never sent");
            Assert.IsTrue(other.AddAuthInfoAsync("digest", Bytes("owner:pw")).Wait(Fixture.Patience), "AddAuthInfoAsync");
            Assert.That(Fixture.Await(other.GetDataAsync(path), "GetDataAsync"), Is.Empty);
            session.Delete(path);
        }

        [Test]
        public void EphemeralAndSequentialNodes()
        {
            var path = Fixture.Path("modes");
            var first = session.Create(path + "/job-", ZooKeeperCreateFlags.Sequence | ZooKeeperCreateFlags.MakePath);
            var second = session.Create(path + "/job-", ZooKeeperCreateFlags.Sequence | ZooKeeperCreateFlags.Ephemeral);
            StringAssert.IsMatch("/job-[0-9]{10}$", first);
            Assert.That(string.CompareOrdinal(second, first), Is.GreaterThan(0));
            Assert.That(other.Exists(second).EphemeralOwner, Is.EqualTo(session.SessionId));
            session.Dispose();
            Assert.IsNull(other.Exists(second), "an ephemeral node goes with its session");
            Assert.IsNotNull(other.Exists(first));
            Assert.Throws<ObjectDisposedException>(() => session.Exists(path));
        }

        [Test]
        public void EachRefusalHasItsException()
        {
            var path = Fixture.Path("errors");
            Assert.Throws<ZooLockNoNodeException>(() => session.GetData(path));
            Assert.Throws<ZooLockNoNodeException>(() => session.SetData(path, Bytes("x")));
            Assert.Throws<ZooLockNoNodeException>(() => session.Delete(path));
            Assert.Throws<ZooLockNoNodeException>(() => session.GetChildren(path));
            Assert.Throws<ZooLockNoNodeException>(() => session.Create(path + "/child"), "no parent without MakePath");
            session.Create(path, Bytes("x"));
            Assert.Throws<ZooLockNodeExistsException>(() => other.Create(path));
            Assert.Throws<ZooLockBadVersionException>(() => other.SetData(path, Bytes("y"), 5));
            Assert.Throws<ZooLockBadVersionException>(() => other.Delete(path, 5));
            session.Create(path + "/child");
            Assert.Throws<ZooLockNotEmptyException>(() => other.Delete(path));
            var ephemeral = session.Create(path + "/ephemeral", ZooKeeperCreateFlags.Ephemeral);
            Assert.Throws<ZooLockNoChildrenForEphemeralsException>(() => session.Create(ephemeral + "/child"));
            Assert.That(session.GetData(path), Is.EqualTo(Bytes("x")), "nothing refused changed the node");
            Assert.Throws<ArgumentException>(() => session.Exists("relative"));
            Assert.Throws<ArgumentException>(() => session.Delete("/"));
            Assert.Throws<ArgumentNullException>(() => session.GetData(null));
            session.Delete(path, -1, true);
        }

        [Test]
        public void AsyncFormsDoTheSame()
        {
            var path = Fixture.Path("async");
            Assert.That(Fixture.Await(session.CreateAsync(path, Bytes("a")), "CreateAsync"), Is.EqualTo(path));
            Assert.That(Fixture.Await(session.ExistsAsync(path), "ExistsAsync").Version, Is.EqualTo(0));
            Assert.That(Fixture.Await(session.SetDataAsync(path, Bytes("b")), "SetDataAsync").Version, Is.EqualTo(1));
            Assert.That(Fixture.Await(session.GetDataAsync(path), "GetDataAsync"), Is.EqualTo(Bytes("b")));
            Assert.That(Fixture.Await(session.GetChildrenAsync(path), "GetChildrenAsync"), Is.Empty);
            Assert.IsInstanceOf<ZooLockBadVersionException>(Fixture.Failure(session.DeleteAsync(path, 7)));
            Assert.IsTrue(session.DeleteAsync(path).Wait(Fixture.Patience));
            Assert.IsInstanceOf<ZooLockNoNodeException>(Fixture.Failure(session.GetDataAsync(path)));
        }

        /// <summary>ZooKeeper applies a session's requests in the order they were sent, and a Task-returning call
        /// sends when it is called: a later call reads what an earlier one wrote (the Task forms were sent by the
        /// runtime's next turn, which a blocking call made meanwhile overtook).</summary>
        [Test]
        public void ACallAfterAnAsyncOneReachesTheServerAfterIt()
        {
            var path = Fixture.Path("order");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            for (var i = 0; i < 50; i++)
            {
                var node = path + "/n" + i;
                var created = session.CreateAsync(node, Bytes("a"));
                Assert.IsNotNull(session.Exists(node), "Exists overtook CreateAsync at " + i);
                var set = session.SetDataAsync(node, Bytes("b"));
                Assert.That(session.GetData(node), Is.EqualTo(Bytes("b")));
                var deleted = session.DeleteAsync(node);
                Assert.IsNull(session.Exists(node));
                Assert.That(Fixture.Await(created, "CreateAsync"), Is.EqualTo(node));
                Fixture.Await(set, "SetDataAsync");
                Assert.IsTrue(deleted.Wait(Fixture.Patience), "DeleteAsync");
            }
        }

        [Test]
        public void ATransactionCommitsAllOrNothing()
        {
            var path = Fixture.Path("multi");
            session.Create(path, ZooKeeperCreateFlags.MakePath);
            using (var transaction = session.Transaction())
            {
                var results = transaction.Check(path, 0).Create(path + "/a", Bytes("1")).Create(path + "/q-", ZooKeeperCreateFlags.Sequence)
                    .SetData(path, Bytes("p")).Commit();
                Assert.That(results.Count, Is.EqualTo(4));
                Assert.That(results[1], Is.EqualTo(path + "/a"));
                StringAssert.IsMatch("/q-[0-9]{10}$", results[2]);
                Assert.That(results[3], Is.EqualTo(path));
                Assert.Throws<InvalidOperationException>(() => transaction.Commit(), "committed once");
            }
            using (var transaction = session.Transaction())
            {
                var failed = Assert.Throws<ZooLockBadVersionException>(() => transaction.Delete(path + "/a").SetData(path, Bytes("x"), 0).Commit());
                StringAssert.Contains(path, failed.Message);
            }
            Assert.IsNotNull(other.Exists(path + "/a"), "the delete before the failing set was not made");
            Assert.That(other.GetData(path), Is.EqualTo(Bytes("p")));
            using (var transaction = session.Transaction())
            {
                Assert.Throws<ArgumentException>(() => transaction.Create(path + "/x/y", ZooKeeperCreateFlags.MakePath).Commit());
            }
            using (var transaction = session.Transaction())
            {
                Assert.That(Fixture.Await(transaction.Delete(path + "/a").CommitAsync(), "CommitAsync"), Is.EqualTo(new[] { path + "/a" }));
            }
            session.Delete(path, -1, true);
        }

        [Test]
        public void AFencedWriteIsRefusedOnceAnotherSessionDeletedTheHoldersNode()
        {
            var path = Fixture.Path("fenced");
            session.Create(path + "/state", Bytes("0"), ZooKeeperCreateFlags.MakePath);
            var mutex = new ZooKeeperDistributedLock(path + "/lock", session);
            using (var handle = mutex.Acquire())
            {
                using (var fenced = handle.Fenced()) fenced.SetData(path + "/state", Bytes("1")).Commit();
                Assert.That(other.GetData(path + "/state"), Is.EqualTo(Bytes("1")));

                var lost = handle.HandleLostToken;
                using (var stale = handle.Fenced().SetData(path + "/state", Bytes("2")))
                {
                    other.Delete(handle.Node);
                    Assert.Throws<ZooLockNotHeldException>(() => stale.Commit());
                }
                Assert.That(other.GetData(path + "/state"), Is.EqualTo(Bytes("1")), "the stale holder wrote nothing");
                Assert.IsTrue(lost.WaitHandle.WaitOne(Fixture.Patience), "HandleLost was cancelled");
                Assert.Throws<ZooLockNotHeldException>(() => handle.Fenced());
            }
            var semaphore = new ZooKeeperDistributedSemaphore(path + "/pool", 2, session);
            using (var lease = semaphore.Acquire())
            {
                using (var fenced = lease.Fenced()) fenced.Create(path + "/by-lease").Commit();
                Assert.IsNotNull(other.Exists(path + "/by-lease"));
            }
            var released = mutex.Acquire();
            released.Dispose();
            Assert.Throws<ObjectDisposedException>(() => released.Fenced());
        }
    }
}
