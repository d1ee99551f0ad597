using System;
using System.Collections.Concurrent;
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
