using System;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>ZooKeeperCounter and ZooKeeperNonBlockingLease: kazoo's node formats, from C#.</summary>
    [TestFixture]
    public class CounterLeaseTests : TwoSessions
    {
        static readonly DateTime Now = new DateTime(2026, 11, 26, 23, 0, 0, DateTimeKind.Utc);
        static readonly TimeSpan Hour = TimeSpan.FromHours(1);

        [Test]
        public void ACounterKeepsKazoosTextAndTellsBeforeAndAfter()
        {
            var path = Fixture.Path("counter");
            using (var counter = new ZooKeeperCounter(path, session))
            {
                Assert.That(counter.GetValue(), Is.EqualTo(0));
                var change = counter.Add(5);
                Assert.That(new[] { change.PreValue, change.PostValue }, Is.EqualTo(new long[] { 0, 5 }));
                Assert.That(counter.Subtract(7).PostValue, Is.EqualTo(-2));
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("-2"), "kazoo's repr");
                session.SetData(path, Encoding.ASCII.GetBytes("seven"));
                Assert.Throws<InvalidDataException>(() => counter.Add(1));
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("seven"), "nothing written");
                using (var cancelled = new CancellationTokenSource())
                {
                    cancelled.Cancel();
                    Assert.Throws<OperationCanceledException>(() => counter.Add(1, cancelled.Token));
                }
            }
            using (var curator = new ZooKeeperCounter(path + "-curator", session, 0, curatorFormat: true))
            {
                curator.Add(258);
                Assert.That(session.GetData(path + "-curator"), Is.EqualTo(new byte[] { 0, 0, 1, 2 }));
            }
        }

        [Test]
        public void CompareAndSetSetsOnlyFromTheValueExpected()
        {
            var path = Fixture.Path("counter-cas");
            using (var counter = new ZooKeeperCounter(path, session))
            using (var theirs = new ZooKeeperCounter(path, other))
            {
                Assert.That(counter.CompareAndSet(0, 7), Is.True);
                theirs.Add(1);
                Assert.That(counter.CompareAndSetAsync(7, 9).Result, Is.False, "no longer 7");
                Assert.That(counter.CompareAndSetAsync(8, 9).Result, Is.True);
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("9"));
            }
            using (var curator = new ZooKeeperCounter(path + "-curator", session, 0, curatorFormat: true))
            {
                Assert.Throws<ArgumentException>(() => curator.CompareAndSet(0, 1L << 31));
                Assert.That(curator.CompareAndSet(0, -2), Is.True);
                Assert.That(session.GetData(path + "-curator"), Is.EqualTo(new byte[] { 0xff, 0xff, 0xff, 0xfe }));
            }
            using (var floats = new ZooKeeperDoubleCounter(path + "-float", session))
            {
                Assert.That(floats.CompareAndSet(0.0, 2.5), Is.True);
                Assert.That(floats.CompareAndSetAsync(0.0, 3.5).Result, Is.False);
                Assert.That(Encoding.ASCII.GetString(session.GetData(path + "-float")), Is.EqualTo("2.5"));
            }
        }

        [Test]
        public void ADoubleCounterKeepsKazoosFloatText()
        {
            var path = Fixture.Path("counter-float");
            using (var counter = new ZooKeeperDoubleCounter(path, session))
            using (var theirs = new ZooKeeperDoubleCounter(path, other, 1.5))
            {
                Assert.That(counter.GetValue(), Is.EqualTo(0.0));
                var change = counter.Add(0.1);
                Assert.That(new[] { change.PreValue, change.PostValue }, Is.EqualTo(new[] { 0.0, 0.1 }));
                Assert.That(theirs.Add(0.2).PostValue, Is.EqualTo(0.1 + 0.2));
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("0.30000000000000004"), "Python's repr, as kazoo writes it");
                Assert.That(counter.Subtract(2.3).PostValue, Is.EqualTo(0.1 + 0.2 - 2.3));

                // What kazoo's Counter(path, 0.0) writes: repr of a float, or of an int it was set to.
                foreach (var kazoo in new[] { "2.5", "-7", "1e+16", "inf" })
                {
                    session.SetData(path, Encoding.ASCII.GetBytes(kazoo));
                    Assert.That(counter.GetValue(), Is.EqualTo(double.Parse(kazoo == "inf" ? "Infinity" : kazoo, System.Globalization.CultureInfo.InvariantCulture)), kazoo);
                }
                session.SetData(path, Encoding.ASCII.GetBytes("1e+16"));
                counter.Add(2.0);
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("1.0000000000000002e+16"), "Python's repr past 1e16");
                session.SetData(path, new byte[0]);
                Assert.That(theirs.GetValue(), Is.EqualTo(1.5), "an empty node reads as the default");

                session.SetData(path, Encoding.ASCII.GetBytes("seven"));
                Assert.Throws<InvalidDataException>(() => counter.Add(1.0));
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("seven"), "nothing written");
            }
            using (var whole = new ZooKeeperCounter(path, session))
            {
                session.SetData(path, Encoding.ASCII.GetBytes("2.5"));
                Assert.Throws<InvalidDataException>(() => whole.GetValue(), "a whole-number counter on a float");
            }
            Assert.Throws<ArgumentException>(() => new ZooKeeperDoubleCounter("relative", session));
        }

        [Test]
        public void AsyncFormsDoTheSame()
        {
            var path = Fixture.Path("counter-async");
            using (var counter = new ZooKeeperCounter(path, session, 10))
            using (var ratio = new ZooKeeperDoubleCounter(path + "-float", other))
            {
                Assert.That(Fixture.Await(counter.GetValueAsync(), "GetValueAsync"), Is.EqualTo(10));
                var change = Fixture.Await(counter.AddAsync(-3), "AddAsync");
                Assert.That(new[] { change.PreValue, change.PostValue }, Is.EqualTo(new long[] { 10, 7 }));
                Assert.That(Encoding.ASCII.GetString(session.GetData(path)), Is.EqualTo("7"));
                var half = Fixture.Await(ratio.AddAsync(0.5), "AddAsync");
                Assert.That(new[] { half.PreValue, half.PostValue }, Is.EqualTo(new[] { 0.0, 0.5 }));
                Assert.That(Fixture.Await(ratio.GetValueAsync(), "GetValueAsync"), Is.EqualTo(0.5));

                session.SetData(path, Encoding.ASCII.GetBytes("seven"));
                Assert.IsInstanceOf<InvalidDataException>(Fixture.Failure(counter.AddAsync(1)));
                session.SetData(path, Encoding.ASCII.GetBytes(long.MaxValue.ToString()));
                Assert.IsInstanceOf<ArgumentException>(Fixture.Failure(counter.AddAsync(1)), "out of range");
                using (var cancelled = new CancellationTokenSource())
                {
                    cancelled.Cancel();
                    Assert.IsTrue(counter.AddAsync(1, cancelled.Token).IsCanceled);
                    Assert.IsTrue(ratio.GetValueAsync(cancelled.Token).IsCanceled);
                }
            }
        }

        [Test]
        public void ATokenEndsACounterChangeInFlight()
        {
            var path = Fixture.Path("counter-in-flight");
            using (var counter = new ZooKeeperCounter(path, session))
            using (var cancel = new CancellationTokenSource())
            {
                counter.Add(1);
                Setup.Zk.Partition(session.SessionId);
                try
                {
                    var reading = counter.GetValueAsync(cancel.Token);
                    var adding = counter.AddAsync(1, cancel.Token);
                    Assert.IsFalse(reading.IsCompleted || adding.IsCompleted, "no answer through a partition");
                    cancel.Cancel();
                    Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(reading));
                    Assert.IsInstanceOf<OperationCanceledException>(Fixture.Failure(adding));
                }
                finally { Setup.Zk.Heal(session.SessionId); }
            }
        }

        [Test]
        public void ConcurrentChangesFromTwoSessionsAllCount()
        {
            var path = Fixture.Path("counter-race");
            using (var mine = new ZooKeeperCounter(path, session))
            using (var theirs = new ZooKeeperCounter(path, other))
            {
                var adders = new[] { mine, theirs }.Select(c => Task.Run(() => { for (int i = 0; i < 20; i++) c.Add(1); })).ToArray();
                Assert.IsTrue(Task.WaitAll(adders, Fixture.Patience), "the adds finished");
                Assert.That(mine.GetValue(), Is.EqualTo(40));
            }
        }

        [Test]
        public void ALeaseIsHeldUntilItsEndAndRenewedByItsHolder()
        {
            var path = Fixture.Path("lease");
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtain(session, path, Hour, "a", Now));
            Assert.That(Encoding.UTF8.GetString(session.GetData(path + "/lease_holder")),
                Is.EqualTo("{\"version\": 1, \"holder\": \"a\", \"end\": \"2026-11-27T00:00:00\"}"));
            Assert.IsFalse(ZooKeeperNonBlockingLease.TryObtain(other, path, Hour, "b", Now.AddMinutes(59)));
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtain(session, path, Hour, "a", Now.AddMinutes(30)), "a renewal");
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtain(other, path, Hour, "b", Now.AddMinutes(90)));
            Assert.That(session.GetChildren(path), Is.EqualTo(new[] { "lease_holder" }), "the try's lock node is gone");

            var pool = Fixture.Path("leases");
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtainOneOf(session, 2, pool, Hour, "a", Now));
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtainOneOf(other, 2, pool, Hour, "b", Now));
            Assert.IsFalse(ZooKeeperNonBlockingLease.TryObtainOneOf(other, 2, pool, Hour, "c", Now));
            Assert.Throws<ArgumentException>(() => ZooKeeperNonBlockingLease.TryObtain(session, "relative", Hour));

            // kazoo's default identifier, the host's name: every process of the host renews one lease.
            var host = Fixture.Path("lease-default");
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtain(session, host, Hour, utcNow: Now));
            Assert.IsTrue(ZooKeeperNonBlockingLease.TryObtain(other, host, Hour, System.Net.Dns.GetHostName(), Now.AddMinutes(30)));
        }
    }
}
