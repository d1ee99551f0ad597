using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>Starts one real ZooKeeper server (through zkh) for the whole run.</summary>
    [SetUpFixture]
    public class Setup
    {
        /// <summary>The server of this run.</summary>
        public static ZkHarness Zk { get; private set; }

        [SetUp]
        public void StartServer()
        {
            Zk = new ZkHarness();
        }

        [TearDown]
        public void StopServer()
        {
            Zk.Dispose();
        }
    }

    /// <summary>What the fixtures share: sessions, unique paths, bounded waits.</summary>
    public static class Fixture
    {
        static int next;

        /// <summary>Long enough for a loaded CI machine, short enough for expiry tests.</summary>
        public static readonly TimeSpan SessionTimeout = TimeSpan.FromSeconds(4);

        /// <summary>How long a test waits for something that should happen at once.</summary>
        public static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

        /// <summary>A session through the harness's proxy (so it can be expired).</summary>
        public static ZooKeeperSession Session()
        {
            return new ZooKeeperSession(Setup.Zk.Connect, SessionTimeout, TimeSpan.Zero);
        }

        /// <summary>A lock path no other test uses.</summary>
        public static string Path(string name)
        {
            return string.Format("/zoolock-dotnet/{0}-{1}-{2}", name, Process.GetCurrentProcess().Id, Interlocked.Increment(ref next));
        }

        /// <summary>
        /// Polls <paramref name="condition"/> until it holds, failing after
        /// <see cref="Patience"/>: only for facts no event announces (another
        /// client's node appearing on the server).
        /// </summary>
        public static void Eventually(Func<bool> condition, string what)
        {
            var watch = Stopwatch.StartNew();
            while (!condition())
            {
                if (watch.Elapsed > Patience) Assert.Fail("timed out waiting until " + what);
                Thread.Sleep(20);
            }
        }

        /// <summary>Waits for a task that must finish, failing after <see cref="Patience"/>.</summary>
        public static T Await<T>(Task<T> task, string what)
        {
            if (!task.Wait(Patience)) Assert.Fail("timed out waiting for " + what);
            return task.Result;
        }

        /// <summary>The exception a faulted or cancelled task ends with.</summary>
        public static Exception Failure(Task task)
        {
            try
            {
                if (!task.Wait(Patience)) Assert.Fail("the task did not finish");
            }
            catch (AggregateException error)
            {
                return error.InnerException;
            }
            Assert.Fail("the task succeeded");
            return null;
        }
    }
}
