using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Logging;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// The core's log events reach .NET for every step of a lock's life, at
    /// each level the docs name: connect, waiting behind others, held with its
    /// token, a try that timed out, released, closed (Verbose and Information);
    /// suspended (Information), lost with its reason (Warning), retries
    /// (Verbose), a node that could not be deleted (Error).
    /// </summary>
    [TestFixture]
    public class LogTests
    {
        BlockingCollection<ZooLockLogEventArgs> events;
        EventHandler<ZooLockLogEventArgs> handler;
        SourceLevels level;

        [SetUp]
        public void Listen()
        {
            events = new BlockingCollection<ZooLockLogEventArgs>();
            handler = (sender, args) => events.Add(args);
            level = ZooLockLog.Level;
            ZooLockLog.Level = SourceLevels.Verbose;
            ZooLockLog.Logged += handler;
        }

        [TearDown]
        public void Stop()
        {
            ZooLockLog.Logged -= handler;
            ZooLockLog.Level = level;
        }

        /// <summary>An expected event: its level and what its message contains.</summary>
        sealed class Expected
        {
            internal readonly TraceEventType Level;
            internal readonly string[] Parts;
            internal Expected(TraceEventType level, params string[] parts)
            {
                Level = level;
                Parts = parts;
            }
            internal bool Matches(ZooLockLogEventArgs e) { return e.Level == Level && Parts.All(p => e.Message.Contains(p)); }
            public override string ToString() { return Level + ": " + string.Join(" … ", Parts); }
        }

        /// <summary>Takes events until each expected one came, failing after <see cref="Fixture.Patience"/>.</summary>
        void Expect(params Expected[] expected)
        {
            var missing = new List<Expected>(expected);
            var seen = new List<string>();
            var watch = Stopwatch.StartNew();
            while (missing.Count > 0)
            {
                var left = Fixture.Patience - watch.Elapsed;
                ZooLockLogEventArgs e = null;
                if (left <= TimeSpan.Zero || !events.TryTake(out e, left))
                    Assert.Fail("no event for: " + string.Join("; ", missing) + "\nseen:\n" + string.Join("\n", seen));
                seen.Add(e.Level + " [" + e.Target + "] " + e.Message);
                missing.RemoveAll(x => x.Matches(e));
            }
        }

        [Test]
        public void ConnectAcquireATimedOutTryReleaseAndCloseAreEachLogged()
        {
            var path = Fixture.Path("logged");
            string id, otherId, node;
            long token;
            using (var session = Fixture.Session())
            using (var other = Fixture.Session())
            {
                id = "0x" + session.SessionId.ToString("x");
                otherId = "0x" + other.SessionId.ToString("x");
                var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience);
                token = handle.FencingToken;
                node = handle.Node;
                Assert.IsNull(new ZooKeeperDistributedLock(path, other).TryAcquire(TimeSpan.FromMilliseconds(200)));
                handle.Dispose();
            }
            Expect(
                new Expected(TraceEventType.Information, "zoolock session", "Connected", id),
                new Expected(TraceEventType.Information, "zoolock session", "Connected", otherId),
                new Expected(TraceEventType.Verbose, "zoolock holds", path, node, "token=" + token),
                new Expected(TraceEventType.Verbose, "zoolock waits", path, "ahead=1"),
                new Expected(TraceEventType.Verbose, "zoolock did not acquire", path),
                new Expected(TraceEventType.Verbose, "zoolock released", path),
                new Expected(TraceEventType.Information, "zoolock session", "Closed", id));
        }

        [Test]
        public void ALossIsAWarningWithItsReason()
        {
            var path = Fixture.Path("logged-loss");
            using (var session = Fixture.Session())
            using (var other = Fixture.Session())
            using (var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience))
            {
                other.Delete(handle.Node);
                Expect(new Expected(TraceEventType.Warning, "zoolock hold lost", path, "node_deleted"));
            }
        }

        [Test]
        public void ASuspensionIsInformationAndARetryVerbose()
        {
            var path = Fixture.Path("logged-suspended");
            using (var session = Fixture.Session())
            {
                var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience);
                // The release's delete reaches the server, its connection drops before the
                // answer: retried. Uncontended, the hold was decided on the mirror: a plain
                // delete (a hold decided by listing would send a multi with its release marker).
                var fault = Setup.Zk.ResetBeforeReply(session.SessionId, "delete", path);
                handle.Dispose();
                Setup.Zk.WaitFault(fault);
                Expect(
                    new Expected(TraceEventType.Information, "zoolock session", "Suspended"),
                    new Expected(TraceEventType.Verbose, "zoolock retries", path));
                handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience);
                Setup.Zk.Partition(session.SessionId);
                try { Expect(new Expected(TraceEventType.Information, "zoolock hold suspended", path)); }
                finally { Setup.Zk.Heal(session.SessionId); }
                handle.Dispose();
            }
        }

        /// <summary>
        /// Nodes made with an ACL that lets nobody delete their children: the
        /// lock's own node cannot be deleted, an error an operator must see.
        /// </summary>
        [Test]
        public void ANodeThatCannotBeDeletedIsAnError()
        {
            var path = Fixture.Path("logged-undeletable") + "/lock";
            var options = new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout }
                .AddAccessControl("world", "anyone", ZooKeeperSessionOptions.PermissionRead | ZooKeeperSessionOptions.PermissionCreate);
            using (var session = new ZooKeeperSession(Setup.Zk.Connect, options))
            {
                new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience).Dispose();
                Expect(new Expected(TraceEventType.Error, "could not delete", path));
            }
        }

        [Test]
        public void ForwardHandsEventsToADelegateUpToItsLevelUntilDisposed()
        {
            var path = Fixture.Path("forwarded");
            var forwarded = new BlockingCollection<Tuple<ZooLockLogLevel, string, string>>();
            ZooLockLog.Level = SourceLevels.Off;
            long token;
            using (ZooLockLog.Forward((level, category, message) => forwarded.Add(Tuple.Create(level, category, message)), ZooLockLogLevel.Debug))
            using (var session = Fixture.Session())
            using (var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience))
            {
                token = handle.FencingToken;
                Tuple<ZooLockLogLevel, string, string> seen;
                do Assert.IsTrue(forwarded.TryTake(out seen, Fixture.Patience), "the hold, forwarded");
                while (!seen.Item3.Contains("zoolock holds") || !seen.Item3.Contains(path));
                Assert.That(seen.Item1, Is.EqualTo(ZooLockLogLevel.Debug));
                StringAssert.StartsWith("zoolock::", seen.Item2);
                StringAssert.Contains("token=" + token, seen.Item3);
            }
            Assert.That(events, Is.Empty, "Level Off: nothing for Logged, while a forward asked for Debug");

            // A forward for warnings only; another, disposed at once, gets nothing.
            var warned = new BlockingCollection<Tuple<ZooLockLogLevel, string, string>>();
            var disposed = new BlockingCollection<string>();
            ZooLockLog.Forward((level, category, message) => disposed.Add(message)).Dispose();
            using (ZooLockLog.Forward((level, category, message) => warned.Add(Tuple.Create(level, category, message)), ZooLockLogLevel.Warning))
            using (var session = Fixture.Session())
            using (var other = Fixture.Session())
            {
                var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience);
                other.Delete(handle.Node);
                Tuple<ZooLockLogLevel, string, string> seen;
                // In order: the hold's own (debug) event came before its loss.
                do Assert.IsTrue(warned.TryTake(out seen, Fixture.Patience), "the loss, forwarded");
                while (!seen.Item3.Contains("zoolock hold lost") || !seen.Item3.Contains(path));
                Assert.That(seen.Item1, Is.EqualTo(ZooLockLogLevel.Warning));
                Assert.That(warned.Where(w => w.Item1 < ZooLockLogLevel.Warning), Is.Empty);
                handle.Dispose();
            }
            Assert.That(disposed, Is.Empty, "a disposed forward gets nothing");
            Assert.Throws<ArgumentNullException>(() => ZooLockLog.Forward(null));
            Assert.Throws<ArgumentOutOfRangeException>(() => ZooLockLog.Forward((l, c, m) => { }, (ZooLockLogLevel)9));
        }

        /// <summary>The .NET guide's (docs/dotnet.md) five-line ILogger adapter, as written there.</summary>
        static IDisposable ForwardToILogger(ILoggerFactory loggerFactory)
        {
            return
            ZooLockLog.Forward((level, category, message) =>
                loggerFactory.CreateLogger(category).Log(
                    (LogLevel)level, 0, message, null, (text, error) => text),
                ZooLockLogLevel.Debug);
        }

        const string Adapter = @"ZooLockLog.Forward((level, category, message) =>
    loggerFactory.CreateLogger(category).Log(
        (LogLevel)level, 0, message, null, (text, error) => text),
    ZooLockLogLevel.Debug);";

        static string Collapsed(string text) { return Regex.Replace(text, @"\s+", " "); }

        [Test]
        public void TheReadmesILoggerAdapterIsThisOneAndCompilesAndLogs()
        {
            var readme = File.ReadAllText(ZkHarness.Locate("ZOOLOCK_DOTNET_GUIDE", "docs/dotnet.md"));
            var source = File.ReadAllText(ZkHarness.Locate("ZOOLOCK_LOG_TESTS", "dotnet/tests/LogTests.cs"));
            StringAssert.Contains(Collapsed(Adapter), Collapsed(readme), "docs/dotnet.md's adapter");
            StringAssert.Contains(Collapsed("return " + Adapter), Collapsed(source), "the adapter compiled here");
            foreach (var level in Enum.GetValues(typeof(ZooLockLogLevel)).Cast<ZooLockLogLevel>())
                Assert.That(((LogLevel)level).ToString(), Is.EqualTo(level.ToString()), "numbered as LogLevel");

            var path = Fixture.Path("ilogger");
            var factory = new Recording();
            using (ForwardToILogger(factory))
            using (var session = Fixture.Session())
            using (var handle = new ZooKeeperDistributedLock(path, session).Acquire(Fixture.Patience))
            {
                Tuple<string, LogLevel, string> seen;
                do Assert.IsTrue(factory.Logged.TryTake(out seen, Fixture.Patience), "the hold, through an ILogger");
                while (!seen.Item3.Contains("zoolock holds") || !seen.Item3.Contains(path));
                Assert.That(seen.Item2, Is.EqualTo(LogLevel.Debug));
                StringAssert.StartsWith("zoolock::", seen.Item1);
            }
        }

        /// <summary>An ILoggerFactory that records what its loggers are given.</summary>
        sealed class Recording : ILoggerFactory
        {
            internal readonly BlockingCollection<Tuple<string, LogLevel, string>> Logged = new BlockingCollection<Tuple<string, LogLevel, string>>();
            public ILogger CreateLogger(string categoryName) { return new Logger(this, categoryName); }
            public void AddProvider(ILoggerProvider provider) { }
            public void Dispose() { }

            sealed class Logger : ILogger
            {
                readonly Recording factory;
                readonly string category;
                internal Logger(Recording factory, string category) { this.factory = factory; this.category = category; }
                public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception exception, Func<TState, Exception, string> formatter)
                {
                    factory.Logged.Add(Tuple.Create(category, logLevel, formatter(state, exception)));
                }
                public bool IsEnabled(LogLevel logLevel) { return true; }
                public IDisposable BeginScope<TState>(TState state) { return null; }
            }
        }
    }
}

namespace Microsoft.Extensions.Logging
{
    // The part of Microsoft.Extensions.Logging.Abstractions docs/dotnet.md's
    // adapter uses, with the package's names and numbers: the package is not
    // on this machine (no NuGet feed), and the adapter must compile as written.
    public enum LogLevel { Trace = 0, Debug = 1, Information = 2, Warning = 3, Error = 4, Critical = 5, None = 6 }

    public struct EventId
    {
        public EventId(int id, string name = null) { Id = id; Name = name; }
        public int Id { get; private set; }
        public string Name { get; private set; }
        public static implicit operator EventId(int i) { return new EventId(i); }
    }

    public interface ILogger
    {
        void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception exception, Func<TState, Exception, string> formatter);
        bool IsEnabled(LogLevel logLevel);
        IDisposable BeginScope<TState>(TState state);
    }

    public interface ILoggerProvider : IDisposable
    {
        ILogger CreateLogger(string categoryName);
    }

    public interface ILoggerFactory : IDisposable
    {
        ILogger CreateLogger(string categoryName);
        void AddProvider(ILoggerProvider provider);
    }
}
