using System;
using System.Collections;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// The catalogue of bad inputs and misuses every language runs
    /// (tests/bad_inputs.txt; the C# cases are in BadInputCases.cs): each entry
    /// ends in the exception dotnet/src/Errors.cs maps the core's error to, or
    /// in its documented outcome, within its bound, and leaves no ephemeral
    /// node. Then what only C# can get wrong (nulls) and native panics.
    /// </summary>
    [TestFixture]
    public class BadInputTests
    {
        const string Language = "csharp";

        /// <summary>One test per catalogue entry, named by its id.</summary>
        public static IEnumerable<TestCaseData> Entries()
        {
            return CatalogueEntry.ReadAll().Select(entry => new TestCaseData(entry).SetName(entry.Id));
        }

        [TestCaseSource("Entries")]
        public void EndsAsDocumented(CatalogueEntry entry)
        {
            string reason;
            if (entry.NotFor.TryGetValue(Language, out reason))
            {
                Assert.IsFalse(BadInputCases.All.ContainsKey(entry.Id), "implemented, though the catalogue says it does not apply");
                Assert.Ignore(reason);
            }
            Action<BadInputContext> run;
            if (!BadInputCases.All.TryGetValue(entry.Id, out run)) Assert.Fail(entry.Id + " is in the catalogue but not implemented for C#");
            // A server of its own (TLS, SASL) starts before the entry's clock runs.
            SecureServers.Prepare(entry.Id);
            using (var ctx = new BadInputContext(entry))
            {
                var watch = Stopwatch.StartNew();
                var task = Task.Factory.StartNew(() => run(ctx), TaskCreationOptions.LongRunning);
                try
                {
                    if (!task.Wait(entry.Within)) Assert.Fail(entry.Id + " did not return within " + entry.Within);
                }
                catch (AggregateException error)
                {
                    ExceptionDispatchInfo.Capture(error.InnerException).Throw();
                }
                Assert.That(ctx.Checks, Is.GreaterThan(0), "the case checked nothing");
                var orphans = BadInputContext.Tree(ctx.Base).Where(node => node.Value != "0").Select(node => node.Key).ToList();
                Assert.That(orphans, Is.Empty, "ephemeral nodes left behind");
                Console.WriteLine("{0}: {1} in {2:F2} s", entry.Id, entry.Expect, watch.Elapsed.TotalSeconds);
            }
        }

        [Test]
        public void EveryCaseIsInTheCatalogue()
        {
            var ids = new HashSet<string>(CatalogueEntry.ReadAll().Select(entry => entry.Id));
            Assert.That(BadInputCases.All.Keys.Where(id => !ids.Contains(id)), Is.Empty);
        }

        // What only C# can get wrong.

        [Test]
        public void NullsAreArgumentNullExceptions()
        {
            using (var session = Fixture.Session())
            {
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperSession(null));
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock(null, session));
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedLock("/a", null));
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedReaderWriterLock(null, session));
                Assert.Throws<ArgumentNullException>(() => new ZooKeeperDistributedSemaphore(null, 1, session));
                Assert.Throws<ArgumentNullException>(() => new ZookeeperLocker(null, Setup.Zk.Connect));
                Assert.Throws<ArgumentNullException>(() => new ZookeeperLocker("/a", (string[])null));
            }
        }

        [Test]
        public void ANativePanicIsAnExceptionNotACrash()
        {
            var error = Assert.Throws<ZooLockInternalException>(() => SelfTest.Panic());
            Assert.That(error.Status, Is.EqualTo(ZooLockStatus.Panic));
            StringAssert.Contains("as asked", error.Message);
            var inTask = Fixture.Failure(SelfTest.PanicInTask());
            Assert.IsInstanceOf<ZooLockInternalException>(inTask);
            StringAssert.Contains("in a task", inTask.Message);
            using (var session = Fixture.Session())
            using (new ZooKeeperDistributedLock(Fixture.Path("after-panic"), session).Acquire())
            {
                Assert.That(SelfTest.NativeVersion(), Is.Not.Empty, "the library still works");
            }
        }
    }

    /// <summary>One line of tests/bad_inputs.txt.</summary>
    public sealed class CatalogueEntry
    {
        public string Id { get; private set; }
        public string Expect { get; private set; }
        public TimeSpan Within { get; private set; }
        /// <summary>Languages the entry does not apply to, with the reason.</summary>
        public IDictionary<string, string> NotFor { get; private set; }

        public override string ToString() { return Id; }

        public static List<CatalogueEntry> ReadAll()
        {
            var entries = new List<CatalogueEntry>();
            var lines = File.ReadAllLines(ZkHarness.Locate("ZOOLOCK_BAD_INPUTS", "tests/bad_inputs.txt"));
            for (int n = 0; n < lines.Length; n++)
            {
                var line = lines[n];
                if (line.Trim().Length == 0 || line.StartsWith("#")) continue;
                var fields = line.Split('|').Select(f => f.Trim()).ToArray();
                if (fields.Length < 4 || fields.Length > 5) throw new FormatException("bad_inputs.txt:" + (n + 1) + ": expected 4 or 5 fields");
                var notFor = new Dictionary<string, string>();
                foreach (var skip in fields.Length == 5 ? fields[4].Split(';') : new string[0])
                {
                    int colon = skip.IndexOf(':');
                    if (colon < 0 || skip.Substring(colon + 1).Trim().Length == 0)
                        throw new FormatException("bad_inputs.txt:" + (n + 1) + ": a language without a reason: " + skip);
                    notFor[skip.Substring(0, colon).Trim()] = skip.Substring(colon + 1).Trim();
                }
                entries.Add(new CatalogueEntry
                {
                    Id = fields[0],
                    Expect = fields[1],
                    Within = TimeSpan.FromSeconds(double.Parse(fields[2], System.Globalization.CultureInfo.InvariantCulture)),
                    NotFor = notFor,
                });
            }
            return entries;
        }
    }

    /// <summary>What a case is handed: its entry, sessions, paths of its own, and Check.</summary>
    public sealed class BadInputContext : IDisposable
    {
        static int next;
        readonly List<IDisposable> owned = new List<IDisposable>();
        int checks;

        public BadInputContext(CatalogueEntry entry)
        {
            Entry = entry;
            Base = string.Format("/zoolock-dotnet/bad-input/{0}-{1}-{2}", entry.Id, Process.GetCurrentProcess().Id, Interlocked.Increment(ref next));
        }

        public CatalogueEntry Entry { get; private set; }

        /// <summary>Every path of the entry lies below this one.</summary>
        public string Base { get; private set; }

        public int Checks { get { return Volatile.Read(ref checks); } }

        public string Path(string name) { return Base + "/" + name; }

        /// <summary>A new session, disposed after the entry.</summary>
        public ZooKeeperSession Session() { return Own(Fixture.Session()); }

        /// <summary>Disposes <paramref name="disposable"/> after the entry.</summary>
        public T Own<T>(T disposable) where T : IDisposable
        {
            lock (owned) owned.Add(disposable);
            return disposable;
        }

        /// <summary>Calls <paramref name="call"/> and checks its outcome against the entry's; returns what it returned.</summary>
        public object Check(string what, Func<object> call)
        {
            Interlocked.Increment(ref checks);
            object result;
            try { result = call(); }
            catch (Exception error)
            {
                if (error is AggregateException) error = ((AggregateException)error).InnerException;
                if (!Fits(error))
                    Assert.Fail("{0}: expected {1}, got {2}: {3}", what, Entry.Expect, error.GetType().Name, error.Message);
                return null;
            }
            var handle = result as IDisposable;
            if (handle != null) Own(handle);
            bool fits;
            switch (Entry.Expect)
            {
                case "acquired": fits = result is ZooKeeperHandle || true.Equals(result); break;
                case "not-acquired": fits = result == null || false.Equals(result); break;
                case "released-nothing": fits = false.Equals(result); break;
                case "ok": fits = true; break;
                default: fits = false; break;
            }
            if (!fits) Assert.Fail("{0}: expected {1}, got {2}", what, Entry.Expect, result ?? "null");
            return result;
        }

        /// <summary>Check for a call that returns nothing.</summary>
        public void Check(string what, Action call)
        {
            Check(what, () => { call(); return "returned"; });
        }

        /// <summary>Checks a status code of the C ABI: the code of the expected core error.</summary>
        public void CheckStatus(string what, int status)
        {
            Interlocked.Increment(ref checks);
            Assert.That(((ZooLockStatus)status).ToString(), Is.EqualTo(Entry.Expect), what);
        }

        /// <summary>Whether an exception is what Errors.cs makes of the expected core error (ErrorsTests.Expected).</summary>
        bool Fits(Exception error)
        {
            if (Entry.Expect == "timed-out") return error is TimeoutException;
            ZooLockStatus status;
            if (!Enum.TryParse(Entry.Expect, out status) || status == ZooLockStatus.Ok) return false;
            var zooLock = error as ZooLockException;
            return ErrorsTests.Expected[status].IsInstanceOfType(error) && (zooLock == null || zooLock.Status == status);
        }

        /// <summary>The nodes below <paramref name="path"/> and their ephemeral owners ("0": persistent), from zkh.</summary>
        public static Dictionary<string, string> Tree(string path)
        {
            var answer = Setup.Zk.Send(new Dictionary<string, object> { { "cmd", "tree" }, { "path", path } });
            var nodes = new Dictionary<string, string>();
            foreach (Dictionary<string, object> node in (IEnumerable)answer["nodes"])
                nodes[(string)node["path"]] = (string)node["ephemeral_owner"];
            return nodes;
        }

        /// <summary>The result of a task, or its exception as thrown by a blocking call.</summary>
        public static T Await<T>(Task<T> task)
        {
            try
            {
                if (!task.Wait(Fixture.Patience)) Assert.Fail("the task did not finish");
            }
            catch (AggregateException error)
            {
                ExceptionDispatchInfo.Capture(error.InnerException).Throw();
            }
            return task.Result;
        }

        public void Dispose()
        {
            List<IDisposable> all;
            lock (owned) all = new List<IDisposable>(owned);
            all.Reverse();
            foreach (var disposable in all)
            {
                try { disposable.Dispose(); }
                catch (Exception) { /* a session already closed by the case */ }
            }
        }
    }
}
