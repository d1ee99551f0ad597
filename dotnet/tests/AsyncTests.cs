using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// The async forms complete from native callbacks: a token cancels a call
    /// while it is in flight (its request sent, no answer yet), and connecting
    /// has an async form of its own.
    /// </summary>
    [TestFixture]
    public class AsyncTests
    {
        static byte[] Bytes(string text) { return Encoding.UTF8.GetBytes(text); }

        /// <summary>
        /// Every znode call and a commit, started on a session whose server cannot
        /// answer (partitioned), end cancelled as soon as their token is, not when
        /// the connection is given up on.
        /// </summary>
        [Test]
        public void ATokenCancelsZnodeCallsAndCommitsInFlight()
        {
            using (var session = Fixture.Session())
            using (var cancel = new CancellationTokenSource())
            {
                var path = Fixture.Path("in-flight");
                session.Create(path + "/child", Bytes("x"), ZooKeeperCreateFlags.MakePath);
                var transaction = session.Transaction().SetData(path + "/child", Bytes("y"));
                var open = new[] { new ZooKeeperAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionAll) };
                Setup.Zk.Partition(session.SessionId);
                try
                {
                    var token = cancel.Token;
                    var calls = new Dictionary<string, Task>
                    {
                        { "ExistsAsync", session.ExistsAsync(path, token) },
                        { "GetDataAsync", session.GetDataAsync(path, token) },
                        { "SetDataAsync", session.SetDataAsync(path, Bytes("z"), -1, token) },
                        { "CreateAsync", session.CreateAsync(path + "/new", ZooKeeperCreateFlags.None, token) },
                        { "DeleteAsync", session.DeleteAsync(path + "/child", -1, false, token) },
                        { "GetChildrenAsync", session.GetChildrenAsync(path, token) },
                        { "CommitAsync", transaction.CommitAsync(token) },
                        { "GetAccessControlAsync", session.GetAccessControlAsync(path, token) },
                        { "SetAccessControlAsync", session.SetAccessControlAsync(path, open, -1, token) },
                        { "AddAuthInfoAsync", session.AddAuthInfoAsync("digest", Bytes("user:pw"), token) },
                        { "PutAllAsync", new ZooKeeperLockingQueue(path + "/jobs", session).PutAllAsync(new[] { Bytes("j") }, 100, token) },
                    };
                    foreach (var call in calls) Assert.IsFalse(call.Value.IsCompleted, call.Key + " cannot have an answer yet");
                    cancel.Cancel();
                    foreach (var call in calls)
                    {
                        var error = Fixture.Failure(call.Value);
                        Assert.IsInstanceOf<OperationCanceledException>(error, call.Key + " ended by its token: " + error);
                        Assert.IsTrue(call.Value.IsCanceled, call.Key);
                    }
                }
                finally
                {
                    Setup.Zk.Heal(session.SessionId);
                    transaction.Dispose();
                }
            }
        }

        /// <summary>Calls in flight when their session is disposed end (they do not hang), and nothing is freed under them.</summary>
        [Test]
        public void DisposingASessionEndsItsCallsInFlight()
        {
            var session = Fixture.Session();
            var path = Fixture.Path("disposed-in-flight");
            var id = session.SessionId;
            Setup.Zk.Partition(id);
            Task<byte[]> reading;
            Task<IList<string>> listing;
            try
            {
                reading = session.GetDataAsync(path);
                listing = session.GetChildrenAsync(path);
                Assert.IsFalse(reading.IsCompleted);
                session.Dispose();
            }
            finally { Setup.Zk.Heal(id); }
            foreach (Task call in new Task[] { reading, listing })
            {
                var error = Fixture.Failure(call);
                Assert.IsTrue(error is ObjectDisposedException || error is ZooLockConnectionException, error.ToString());
            }
            Assert.Throws<ObjectDisposedException>(() => session.ExistsAsync(path));
        }

        [Test]
        public void ConnectAsyncOpensASessionAndReportsFailuresInItsTask()
        {
            var options = new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout };
            using (var session = Fixture.Await(ZooKeeperSession.ConnectAsync(Setup.Zk.Connect, options), "ConnectAsync"))
            {
                Assert.That(session.State, Is.EqualTo(ZooKeeperSessionState.Connected));
                var path = Fixture.Path("connect-async");
                var mutex = new ZooKeeperDistributedLock(path, session);
                using (mutex.Acquire(Fixture.Patience)) Assert.That(session.GetChildren(path).Count, Is.EqualTo(1));
            }
            var refused = new ZooKeeperSessionOptions { ConnectTimeout = TimeSpan.FromMilliseconds(300) };
            Assert.IsInstanceOf<ZooLockConnectionException>(Fixture.Failure(ZooKeeperSession.ConnectAsync("127.0.0.1:1", refused)));
            Assert.IsInstanceOf<ArgumentException>(Fixture.Failure(ZooKeeperSession.ConnectAsync("127.0.0.1:99999")));
            Assert.Throws<ArgumentNullException>(() => ZooKeeperSession.ConnectAsync(null));
        }

        /// <summary>A server that accepts the connection and never answers: only the token ends the wait.</summary>
        [Test]
        public void ATokenCancelsAConnectInFlight()
        {
            var silent = new TcpListener(IPAddress.Loopback, 0);
            silent.Start();
            try
            {
                var address = "127.0.0.1:" + ((IPEndPoint)silent.LocalEndpoint).Port;
                var options = new ZooKeeperSessionOptions { ConnectTimeout = TimeSpan.FromMinutes(10) };
                using (var cancel = new CancellationTokenSource())
                {
                    var connecting = ZooKeeperSession.ConnectAsync(address, options, cancel.Token);
                    Assert.IsFalse(connecting.IsCompleted);
                    cancel.Cancel();
                    Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(connecting));
                    Assert.IsTrue(connecting.IsCanceled);
                }
            }
            finally { silent.Stop(); }
        }
    }
}
