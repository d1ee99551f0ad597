using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>What operators read from .NET: metrics, inspection, and the core's log events.</summary>
    [TestFixture]
    public class OperatorTests
    {
        const string Waits = "zoolock_acquire_wait_seconds_count", Holds = "zoolock_hold_seconds_count", Handoffs = "zoolock_handoffs_total";

        [Test]
        public void MetricsCountAKnownSequenceOfAcquisitions()
        {
            using (var a = Fixture.Session())
            using (var b = Fixture.Session())
            {
                var fresh = a.GetMetrics();
                Assert.That(fresh.Keys, Has.Member(Waits).And.Member("zoolock_losses_total{reason=\"node_deleted\"}"));
                Assert.That(fresh.Values.All(v => v == 0), "a new session counts nothing");
                var path = Fixture.Path("metrics");
                var first = new ZooKeeperDistributedLock(path, a).Acquire();
                var waiting = new ZooKeeperDistributedLock(path, b).AcquireAsync(Fixture.Patience);
                Fixture.Eventually(() => a.Inspect(path).Count == 2, "b queues");
                first.Dispose();
                var second = Fixture.Await(waiting, "b's acquire");
                var seenA = a.GetMetrics();
                var seenB = b.GetMetrics();
                Assert.That(new[] { seenA[Waits], seenA[Handoffs], seenA[Holds] }, Is.EqualTo(new[] { 1.0, 0, 1 }));
                Assert.That(new[] { seenB[Waits], seenB[Handoffs], seenB[Holds] }, Is.EqualTo(new[] { 1.0, 1, 0 }));
                Assert.That(seenB["zoolock_acquire_wait_seconds_sum"], Is.GreaterThan(0));
                second.Dispose();
                Assert.That(b.GetMetrics()[Holds], Is.EqualTo(1));
            }
        }

        [Test]
        public void InspectListsHoldersThenWaitersWithTheirSessionsAndTokens()
        {
            using (var a = Fixture.Session())
            using (var b = Fixture.Session())
            {
                var path = Fixture.Path("inspect");
                Assert.That(a.Inspect(path), Is.Empty);
                var before = DateTime.UtcNow;
                var held = new ZooKeeperDistributedLock(path, a, "holder").Acquire();
                var waiting = new ZooKeeperDistributedLock(path, b, "waiter").AcquireAsync(Fixture.Patience);
                Fixture.Eventually(() => a.Inspect(path).Count == 2, "the waiter queues");
                var seen = b.Inspect(path);
                Assert.That(seen.Select(p => p.Identifier), Is.EqualTo(new[] { "holder", "waiter" }));
                Assert.That(seen.Select(p => p.Holds), Is.EqualTo(new[] { true, false }));
                Assert.That(seen.Select(p => p.SessionId), Is.EqualTo(new[] { a.SessionId, b.SessionId }));
                Assert.That(seen.Select(p => p.Kind), Is.All.EqualTo(ZooKeeperParticipantKind.Lock));
                Assert.That(seen.Select(p => p.Scheme), Is.All.EqualTo(ZooKeeperNamingScheme.Kazoo));
                Assert.That(seen[0].Node, Is.EqualTo(held.Node));
                Assert.That(seen[0].FencingToken, Is.EqualTo(held.FencingToken));
                Assert.That(seen[1].FencingToken, Is.GreaterThan(held.FencingToken));
                // The server's clock, on this machine: within the test's run.
                Assert.That(seen[0].Created, Is.InRange(new DateTimeOffset(before.AddSeconds(-5)), DateTimeOffset.UtcNow.AddSeconds(5)));
                Assert.That(seen[0].Created.Offset, Is.EqualTo(TimeSpan.Zero));
                held.Dispose();
                using (var next = Fixture.Await(waiting, "the waiter's acquire"))
                {
                    var now = a.Inspect(path).Single();
                    Assert.That(new object[] { now.Identifier, now.Holds, now.FencingToken }, Is.EqualTo(new object[] { "waiter", true, next.FencingToken }));
                }
            }
        }

        [Test]
        public void InspectTellsLeasesAndRefusesABadPath()
        {
            using (var session = Fixture.Session())
            {
                var path = Fixture.Path("leases");
                var semaphore = new ZooKeeperDistributedSemaphore(path, 2, session, "lease");
                using (semaphore.Acquire())
                using (semaphore.Acquire())
                {
                    var seen = session.Inspect(path);
                    Assert.That(seen.Select(p => p.Kind), Is.EqualTo(new[] { ZooKeeperParticipantKind.Lease, ZooKeeperParticipantKind.Lease }));
                    Assert.That(seen.Select(p => p.Holds), Is.All.True);
                }
                Assert.Throws<ArgumentException>(() => session.Inspect("no/slash"));
            }
            var closed = Fixture.Session();
            closed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => closed.GetMetrics());
        }

        [Test]
        public void ASessionExpiryReachesLoggedAndTheTraceSourceAsAWarning()
        {
            var events = new BlockingCollection<ZooLockLogEventArgs>();
            EventHandler<ZooLockLogEventArgs> handler = (sender, args) => events.Add(args);
            var traced = new Collector();
            var switchLevel = ZooLockLog.TraceSource.Switch.Level;
            ZooLockLog.TraceSource.Switch.Level = SourceLevels.Warning;
            ZooLockLog.TraceSource.Listeners.Add(traced);
            ZooLockLog.Logged += handler;
            try
            {
                using (var session = Fixture.Session())
                {
                    var id = "0x" + session.SessionId.ToString("x");
                    Setup.Zk.Expire(session.SessionId);
                    ZooLockLogEventArgs seen;
                    do
                    {
                        Assert.IsTrue(events.TryTake(out seen, Fixture.Patience), "a warning naming the expired session");
                    } while (!(seen.Level == TraceEventType.Warning && seen.Message.Contains(id)));
                    StringAssert.StartsWith("zoolock", seen.Target);
                    StringAssert.Contains("session ended", seen.Message);
                    Assert.That(traced.Lines, Has.Some.Contains(id), "the trace source's listener saw it too");
                }
            }
            finally
            {
                ZooLockLog.Logged -= handler;
                ZooLockLog.TraceSource.Listeners.Remove(traced);
                ZooLockLog.TraceSource.Switch.Level = switchLevel;
            }
        }

        [Test]
        public void InformationLevelAddsSessionStateChangesAndOffStopsEvents()
        {
            var events = new BlockingCollection<ZooLockLogEventArgs>();
            EventHandler<ZooLockLogEventArgs> handler = (sender, args) => events.Add(args);
            ZooLockLog.Logged += handler;
            var level = ZooLockLog.Level;
            try
            {
                ZooLockLog.Level = SourceLevels.Information;
                ZooLockLogEventArgs seen;
                using (var session = Fixture.Session())
                {
                    // An expiry's state changes (Lost, then Connected on the next session) are information.
                    var id = "0x" + session.SessionId.ToString("x");
                    Setup.Zk.Expire(session.SessionId);
                    do
                    {
                        Assert.IsTrue(events.TryTake(out seen, Fixture.Patience), "the session's loss, logged as information");
                    } while (!(seen.Level == TraceEventType.Information && seen.Message.Contains(id) && seen.Message.Contains("Lost")));
                }
                ZooLockLog.Level = SourceLevels.Off;
                while (events.TryTake(out seen)) { }
                using (var quiet = Fixture.Session())
                {
                    // An expiry logs a warning before the state callbacks, on the
                    // same thread: once Connected is heard, it would have come.
                    var states = new BlockingCollection<ZooKeeperSessionState>();
                    quiet.StateChanged += (sender, args) => states.Add(args.State);
                    Setup.Zk.Expire(quiet.SessionId);
                    ZooKeeperSessionState state;
                    do
                    {
                        Assert.IsTrue(states.TryTake(out state, Fixture.Patience), "the session came back");
                    } while (state != ZooKeeperSessionState.Connected);
                }
                Assert.That(events, Is.Empty, "nothing while Off");
            }
            finally
            {
                ZooLockLog.Logged -= handler;
                ZooLockLog.Level = level;
            }
        }

        sealed class Collector : TraceListener
        {
            internal readonly ConcurrentQueue<string> Lines = new ConcurrentQueue<string>();
            public override void Write(string message) { Lines.Enqueue(message); }
            public override void WriteLine(string message) { Lines.Enqueue(message); }
        }
    }
}
