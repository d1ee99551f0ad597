using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Session states, expiry and what a holder learns of them.</summary>
    [TestFixture]
    public class SessionTests
    {
        [Test]
        public void HandleLostFiresWhenTheSessionExpiresAndTheSessionComesBack()
        {
            using (var session = Fixture.Session())
            {
                var states = new BlockingCollection<ZooKeeperSessionState>();
                session.StateChanged += (sender, args) => states.Add(args.State);
                var mutex = new ZooKeeperDistributedLock(Fixture.Path("expiry"), session);
                var handle = mutex.Acquire();
                var lost = handle.HandleLostToken;
                Assert.IsFalse(lost.IsCancellationRequested);
                Assert.That(session.Generation, Is.EqualTo(1));

                Setup.Zk.Expire(session.SessionId);
                Assert.IsTrue(lost.WaitHandle.WaitOne(Fixture.Patience), "HandleLost was cancelled");
                Assert.That(handle.LostReason, Is.EqualTo(LostReason.SessionExpired));
                ZooKeeperSessionState state;
                do
                {
                    Assert.IsTrue(states.TryTake(out state, Fixture.Patience), "the session came back");
                } while (state != ZooKeeperSessionState.Connected);
                Assert.That(session.Generation, Is.EqualTo(2));
                handle.Dispose();
                using (var again = mutex.Acquire(Fixture.Patience))
                {
                    Assert.That(again.FencingToken, Is.GreaterThan(0));
                    Assert.IsFalse(again.HandleLostToken.IsCancellationRequested, "a new hold has a fresh token");
                }
            }
        }

        /// <summary>
        /// kazoo's <c>client_id</c>: a second client resumes the first one's
        /// session by id and password, and the session's lock node stays while
        /// the first client is gone without closing (cut off, never disposed: a
        /// killed process). The node is the session's, not the second client's
        /// lock's: that one does not hold beside it. Disposing the second client
        /// ends the session, and the node with it.
        /// </summary>
        [Test]
        public void AResumedSessionKeepsTheLockNodeOfAClientGoneWithoutClosing()
        {
            var path = Fixture.Path("resume");
            var first = Fixture.Session();
            var handle = new ZooKeeperDistributedLock(path, first).Acquire();
            var id = first.ClientId;
            Assert.That(id.SessionId, Is.EqualTo(first.SessionId));
            Assert.That(id.Password.Count, Is.EqualTo(16));
            Setup.Zk.Partition(id.SessionId);
            try
            {
                // Straight to the server: the proxy holds back every connection of a cut-off session.
                var options = new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout, Resume = id };
                using (var second = new ZooKeeperSession(Setup.Zk.Direct, options))
                {
                    Assert.That(second.SessionId, Is.EqualTo(id.SessionId));
                    Assert.That(second.ClientId, Is.EqualTo(id));
                    var children = second.GetChildren(path);
                    Assert.That(children.Count, Is.EqualTo(1));
                    Assert.That(second.Exists(path + "/" + children[0]).EphemeralOwner, Is.EqualTo(id.SessionId));
                    using (var other = new ZooKeeperDistributedLock(path, second).TryAcquire())
                    {
                        Assert.IsNull(other, "a second holder beside the session's node");
                    }
                }
                using (var observer = new ZooKeeperSession(Setup.Zk.Direct, Fixture.SessionTimeout, TimeSpan.Zero))
                {
                    Fixture.Eventually(() => observer.GetChildren(path).Count == 0, "the session's node goes with it");
                }
            }
            finally
            {
                Setup.Zk.Heal(id.SessionId);
                handle.Dispose();
                first.Dispose();
            }
        }

        /// <summary>
        /// Resuming a session the server no longer has (or with a wrong
        /// password: the server answers alike) throws at once; the password
        /// shows nowhere.
        /// </summary>
        [Test]
        public void ResumingAnEndedSessionThrowsSessionExpired()
        {
            ZooKeeperClientId id;
            using (var ended = Fixture.Session()) id = ended.ClientId;
            var options = new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout, Resume = id };
            var e = Assert.Throws<ZooLockSessionExpiredException>(() => new ZooKeeperSession(Setup.Zk.Direct, options).Dispose());
            StringAssert.Contains("could not resume the session at", e.Message);
            var shown = string.Format("0x{0:x}, Password = <redacted>", id.SessionId);
            StringAssert.Contains(shown, options.ToString());
            StringAssert.Contains(shown, id.ToString());
            StringAssert.DoesNotContain(BitConverter.ToString(id.Password.ToArray()), options.ToString());
            options.Resume = new ZooKeeperClientId(id.SessionId, new byte[15]);
            Assert.Throws<ArgumentException>(() => new ZooKeeperSession(Setup.Zk.Direct, options).Dispose());
        }

        [Test]
        public void HandleLostFiresWhenTheSessionIsDisposed()
        {
            var session = Fixture.Session();
            var handle = new ZooKeeperDistributedLock(Fixture.Path("closed"), session).Acquire();
            var lost = handle.HandleLostToken;
            var states = new BlockingCollection<ZooKeeperSessionState>();
            session.StateChanged += (sender, args) => states.Add(args.State);
            session.Dispose();
            Assert.IsTrue(lost.WaitHandle.WaitOne(Fixture.Patience));
            handle.Dispose();
            session.Dispose();
        }

        [Test]
        public void ALossBeforeHandleLostIsReadIsNotMissed()
        {
            using (var session = Fixture.Session())
            {
                var handle = new ZooKeeperDistributedLock(Fixture.Path("late"), session).Acquire();
                Setup.Zk.Expire(session.SessionId);
                // Nothing announces a loss to a handle that never asked: read the token until it says so.
                Fixture.Eventually(() => handle.HandleLostToken.IsCancellationRequested, "the loss shows on a token asked for afterwards");
                handle.Dispose();
            }
        }

        [Test]
        public void AHandleIsSuspendedWhileTheConnectionIsDown()
        {
            using (var session = Fixture.Session())
            {
                var states = new BlockingCollection<ZooKeeperSessionState>();
                session.StateChanged += (sender, args) => states.Add(args.State);
                var handle = new ZooKeeperDistributedLock(Fixture.Path("suspended"), session).Acquire();
                var id = session.SessionId.ToString();
                Setup.Zk.Send(new System.Collections.Generic.Dictionary<string, object> { { "cmd", "partition" }, { "session", id } });
                try
                {
                    ZooKeeperSessionState state;
                    Assert.IsTrue(states.TryTake(out state, Fixture.Patience), "the session noticed");
                    Assert.That(state, Is.EqualTo(ZooKeeperSessionState.Suspended));
                    // The hold learns of it from the session, right after the session's own event.
                    Fixture.Eventually(() => handle.IsSuspended, "the handle is suspended");
                }
                finally
                {
                    Setup.Zk.Send(new System.Collections.Generic.Dictionary<string, object> { { "cmd", "heal" }, { "session", id } });
                }
                ZooKeeperSessionState back;
                Assert.IsTrue(states.TryTake(out back, Fixture.Patience), "the session came back");
                Assert.That(back, Is.EqualTo(ZooKeeperSessionState.Connected));
                Fixture.Eventually(() => !handle.IsSuspended, "the handle holds again");
                Assert.IsFalse(handle.HandleLostToken.IsCancellationRequested, "a suspension is not a loss");
                handle.Dispose();
            }
        }

        [Test]
        public void AConnectTimeoutLongerThanTheSessionTimeoutIsWaitedOut()
        {
            // zookeeper-client stops connecting after about the session timeout; the connect timeout is the caller's.
            var connectTimeout = TimeSpan.FromSeconds(3);
            var watch = System.Diagnostics.Stopwatch.StartNew();
            var error = Assert.Throws<ZooLockConnectionException>(() => new ZooKeeperSession("127.0.0.1:1", TimeSpan.FromSeconds(1), connectTimeout));
            var waited = watch.Elapsed;
            Assert.That(waited, Is.GreaterThanOrEqualTo(connectTimeout), error.Message);
            var stated = TimeSpan.FromSeconds(double.Parse(System.Text.RegularExpressions.Regex.Match(error.Message, @"within ([\d.]+)s").Groups[1].Value,
                System.Globalization.CultureInfo.InvariantCulture));
            Assert.That(stated, Is.InRange(connectTimeout, waited), error.Message);
        }

        [Test]
        public void SessionReportsItsIdAndState()
        {
            using (var session = Fixture.Session())
            {
                Assert.That(session.State, Is.EqualTo(ZooKeeperSessionState.Connected));
                Assert.That(session.SessionId, Is.Not.EqualTo(0));
                Assert.That(session.ConnectString, Is.EqualTo(Setup.Zk.Connect));
                session.Dispose();
                Assert.Throws<ObjectDisposedException>(() => { var state = session.State; });
            }
        }
    }
}
