// The bench's C# contestant: zoolock's .NET library (ZooLock) under Mono,
// speaking bench/contestants/PROTOCOL.md.
//
// ZooLockBenchContestant.exe --connect HOSTS --path P --scenario a|b|c|scale
//     [--sessions N] [--locks N] [--waiters N] [--seconds S] [--api sync|async]
//
// --api is this contestant's own: how a and c acquire. `sync` (the default)
// loops Acquire() on threads, one per loop; `async` loops `await
// AcquireAsync()` as tasks. A handle's Dispose releases, blocking, either way
// (the library has no asynchronous release). b is one thread per session
// (sync); scale is always AcquireAsync tasks (10,000 threads would not do).
// Why sync for c: see ScenarioC.
//
// The measuring is kept out of the way of what is measured: Stopwatch
// timestamps, samples in preallocated int arrays (one per loop, merged at
// the end), nothing printed until the window is over.
// Built by scripts/lib/build-worker.sh csharp bench (mcs, C# 7.2).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using ZooLock;

static class Contestant
{
    static readonly double UsPerTick = 1e6 / Stopwatch.Frequency;

    sealed class Args
    {
        internal string Connect, Path, Scenario, Api;
        internal int Sessions = 1, Locks = 64, Waiters = 10000;
        internal double Seconds = 3;
    }

    static int Main(string[] argv)
    {
        Args args;
        try { args = Parse(argv); }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine("contestant: " + e.Message);
            Console.Error.WriteLine("usage: ZooLockBenchContestant.exe --connect HOSTS --path /bench/RUN --scenario a|b|c|scale " +
                "[--sessions N] [--locks N] [--waiters N] [--seconds S] [--api sync|async]");
            return 2;
        }
        try
        {
            switch (args.Scenario)
            {
                case "a": return ScenarioA(args);
                case "b": return ScenarioB(args);
                case "c": return ScenarioC(args);
                default: return Scale(args);
            }
        }
        catch (Exception e)
        {
            Console.Error.WriteLine("contestant ({0}): {1}", args.Scenario, e);
            return 1;
        }
    }

    static Args Parse(string[] argv)
    {
        var args = new Args();
        for (int i = 0; i < argv.Length; i += 2)
        {
            string flag = argv[i];
            if (i + 1 >= argv.Length) throw new ArgumentException(flag + " needs a value");
            string value = argv[i + 1];
            switch (flag)
            {
                case "--connect": args.Connect = value; break;
                case "--path": args.Path = value; break;
                case "--scenario": args.Scenario = value; break;
                case "--api": args.Api = value; break;
                case "--sessions": args.Sessions = Count(flag, value); break;
                case "--locks": args.Locks = Count(flag, value); break;
                case "--waiters": args.Waiters = Count(flag, value); break;
                case "--seconds":
                    double seconds;
                    if (!double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out seconds) || !(seconds > 0) || seconds > 1e6)
                        throw new ArgumentException("--seconds: not a positive number: " + value);
                    args.Seconds = seconds;
                    break;
                default: throw new ArgumentException("unknown flag " + flag);
            }
        }
        if (args.Connect == null || args.Path == null || args.Scenario == null)
            throw new ArgumentException("--connect, --path and --scenario are required");
        if (Array.IndexOf(new[] { "a", "b", "c", "scale" }, args.Scenario) < 0)
            throw new ArgumentException("unknown scenario " + args.Scenario);
        if (args.Api == null) args.Api = "sync";
        if (args.Api != "sync" && args.Api != "async") throw new ArgumentException("--api: sync or async, not " + args.Api);
        if (args.Scenario == "b" && args.Api != "sync") throw new ArgumentException("scenario b runs one thread per session (--api sync)");
        return args;
    }

    static int Count(string flag, string value)
    {
        int count;
        if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out count) || count < 1)
            throw new ArgumentException(flag + ": not a positive count: " + value);
        return count;
    }

    // ---- scenarios ----

    /// <summary>a: one session, one lock, acquire then release; a sample is one cycle.</summary>
    static int ScenarioA(Args args)
    {
        using (var session = new ZooKeeperSession(args.Connect))
        {
            var mutex = new ZooKeeperDistributedLock(args.Path, session);
            var loops = new[] { new Loop(mutex, Capacity(args, 2000)) };
            return Window(args, loops, true);
        }
    }

    /// <summary>b: N sessions on one lock, one thread each; a sample is one acquisition's wait.</summary>
    static int ScenarioB(Args args)
    {
        var sessions = new List<ZooKeeperSession>();
        try
        {
            var loops = new Loop[args.Sessions];
            for (int i = 0; i < loops.Length; i++)
            {
                var session = new ZooKeeperSession(args.Connect);
                sessions.Add(session);
                loops[i] = new Loop(new ZooKeeperDistributedLock(args.Path, session), Capacity(args, 2000 / args.Sessions));
            }
            return Window(args, loops, false);
        }
        finally
        {
            foreach (var session in sessions) session.Dispose();
        }
    }

    /// <summary>
    /// c: one session, --locks different locks (&lt;path&gt;/lock-i) looped
    /// concurrently; a sample is one cycle. Threads with Acquire (the default)
    /// beat tasks with AcquireAsync: 5,150 against 4,570 cycles/s, 129 against
    /// 153 µs of client CPU per cycle (median of 9 interleaved rounds, 2 cores,
    /// forceSync=no, 2026-11; even with a pool thread per loop, below). A task's
    /// acquire completes through two more threads (zoolock's callback thread,
    /// then the pool) and its release blocks a pool thread all the same.
    /// </summary>
    static int ScenarioC(Args args)
    {
        using (var session = new ZooKeeperSession(args.Connect))
        {
            var loops = new Loop[args.Locks];
            int each = Capacity(args, 8000 / args.Locks);
            for (int i = 0; i < loops.Length; i++)
                loops[i] = new Loop(new ZooKeeperDistributedLock(args.Path + "/lock-" + i, session), each);
            return Window(args, loops, true);
        }
    }

    /// <summary>
    /// scale: one session, one lock: take it, queue --waiters AcquireAsync
    /// tasks in order, wait for all their nodes, measure resident memory; on
    /// go release and let each waiter acquire, note its fencing token and
    /// release in turn.
    /// </summary>
    static int Scale(Args args)
    {
        int n = args.Waiters;
        using (var session = new ZooKeeperSession(args.Connect))
        {
            var mutex = new ZooKeeperDistributedLock(args.Path, session);
            mutex.Acquire().Dispose();   // warm up: one full cycle (and the JIT)
            var first = mutex.Acquire();
            // Waiters whose acquire completed, in the order they were served.
            var tokens = new long[n];
            var order = new int[n];
            int served = 0;
            long lastRelease = 0;
            var done = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            Func<int, Task> waiter = async index =>
            {
                try
                {
                    var handle = await mutex.AcquireAsync().ConfigureAwait(false);
                    int slot = Interlocked.Increment(ref served) - 1;
                    if (slot < n)
                    {
                        tokens[slot] = handle.FencingToken;
                        order[slot] = index;
                    }
                    handle.Dispose();
                    if (slot == n - 1)
                    {
                        Volatile.Write(ref lastRelease, Stopwatch.GetTimestamp());
                        done.TrySetResult(true);
                    }
                }
                catch (Exception e)
                {
                    done.TrySetException(e);
                    throw;
                }
            };

            Collect();
            long rssBefore = Rss(), gcBefore = GC.GetTotalMemory(true);
            var queueing = Stopwatch.StartNew();
            var waiters = new Task[n];
            for (int i = 0; i < n; i++) waiters[i] = waiter(i);
            var deadline = Stopwatch.StartNew();
            int queued;
            // The .NET API has no child watch: poll the queue (bounded).
            while ((queued = mutex.GetContenders().Count) < n + 1)
            {
                Fail(waiters);
                if (deadline.Elapsed > TimeSpan.FromSeconds(120 + n / 100))
                    throw new TimeoutException(string.Format("only {0} of {1} waiters queued", queued - 1, n));
                Thread.Sleep(50);
            }
            double queueSeconds = queueing.Elapsed.TotalSeconds;
            Collect();
            long rssQueued = Rss(), gcQueued = GC.GetTotalMemory(true);
            Console.Error.WriteLine("scale: {0} waiters queued in {1:F2} s; RSS {2} -> {3} kB, GC heap {4} -> {5} kB",
                n, queueSeconds, rssBefore / 1024, rssQueued / 1024, gcBefore / 1024, gcQueued / 1024);

            Ready();
            long started = Stopwatch.GetTimestamp();
            first.Dispose();
            if (!done.Task.Wait(TimeSpan.FromSeconds(120 + n / 50)))
                throw new TimeoutException(string.Format("only {0} of {1} waiters served", Volatile.Read(ref served), n));
            if (!Task.WaitAll(waiters, TimeSpan.FromSeconds(30))) throw new TimeoutException("waiters did not finish");
            Fail(waiters);
            double seconds = (Volatile.Read(ref lastRelease) - started) / (double)Stopwatch.Frequency;

            int count = Volatile.Read(ref served);
            bool inOrder = count == n;
            var seen = new bool[n];
            int displaced = 0, farthest = 0;
            for (int i = 0; i < n && inOrder; i++)
            {
                if (seen[order[i]] || (i > 0 && tokens[i] <= tokens[i - 1])) inOrder = false;
                seen[order[i]] = true;
                if (order[i] != i) displaced++;
                farthest = Math.Max(farthest, Math.Abs(order[i] - i));
            }
            // Each AcquireAsync starts a task on zoolock's runtime, which sends the create:
            // the nodes (so the turns) follow the calls' order only roughly. The tokens decide.
            Console.Error.WriteLine("scale: served {0} in {1:F2} s; tokens strictly increasing, each once: {2}; " +
                "served out of call order: {3} (at most {4} places off)", count, seconds, inOrder, displaced, farthest);
            var json = new StringBuilder();
            json.Append("{\"waiters\": ").Append(n)
                .Append(", \"bytes_per_waiter\": ").Append((rssQueued - rssBefore) / n)
                .Append(", \"gc_bytes_per_waiter\": ").Append((gcQueued - gcBefore) / n)
                .Append(", \"served\": ").Append(count)
                .Append(", \"in_order\": ").Append(inOrder ? "true" : "false")
                .Append(", \"seconds\": ").Append(Number(seconds))
                .Append("}");
            Print(json.ToString());
        }
        return 0;
    }

    /// <summary>Rethrows the failure of any waiter that failed.</summary>
    static void Fail(Task[] waiters)
    {
        foreach (var task in waiters)
            if (task.IsFaulted || task.IsCanceled) task.GetAwaiter().GetResult();
    }

    // ---- the timed window of a, b and c ----

    /// <summary>One lock looped by one thread or task, with its own samples.</summary>
    sealed class Loop
    {
        internal readonly ZooKeeperDistributedLock Mutex;
        internal int[] Samples;
        internal int Count;
        internal Exception Error;

        internal Loop(ZooKeeperDistributedLock mutex, int capacity)
        {
            Mutex = mutex;
            Samples = new int[capacity];
        }

        void Add(long ticks)
        {
            if (Count == Samples.Length) Array.Resize(ref Samples, Samples.Length * 2);
            Samples[Count++] = (int)(ticks * UsPerTick);
        }

        /// <summary>Until the deadline: a cycle is one sample, or only the wait for the hold.</summary>
        internal void Run(long deadline, bool wholeCycle)
        {
            var mutex = Mutex;
            long now = Stopwatch.GetTimestamp();
            while (now < deadline)
            {
                var handle = mutex.Acquire();
                if (!wholeCycle) Add(Stopwatch.GetTimestamp() - now);
                handle.Dispose();
                long end = Stopwatch.GetTimestamp();
                if (wholeCycle) Add(end - now);
                now = end;
            }
        }

        internal async Task RunAsync(long deadline)
        {
            var mutex = Mutex;
            long now = Stopwatch.GetTimestamp();
            while (now < deadline)
            {
                var handle = await mutex.AcquireAsync().ConfigureAwait(false);
                handle.Dispose();
                long end = Stopwatch.GetTimestamp();
                Add(end - now);
                now = end;
            }
        }
    }

    /// <summary>
    /// Warms every loop up (one cycle each), prints ready, waits for go, runs
    /// the loops for --seconds and prints the one JSON line.
    /// </summary>
    static int Window(Args args, Loop[] loops, bool wholeCycle)
    {
        foreach (var loop in loops) loop.Mutex.Acquire().Dispose();
        if (args.Api == "async")
            foreach (var loop in loops) loop.Mutex.AcquireAsync().Result.Dispose();

        long length = (long)(args.Seconds * Stopwatch.Frequency);
        long deadline = 0, started = 0;
        TimeSpan cpuBefore = TimeSpan.Zero;
        if (args.Api == "sync")
        {
            var go = new ManualResetEventSlim(false);
            var threads = new Thread[loops.Length];
            for (int i = 0; i < loops.Length; i++)
            {
                var loop = loops[i];
                threads[i] = new Thread(() =>
                {
                    try
                    {
                        go.Wait();
                        loop.Run(Volatile.Read(ref deadline), wholeCycle);
                    }
                    catch (Exception e) { loop.Error = e; }
                }, 256 * 1024);
                // A loop stuck in a dead server must not keep the process alive.
                threads[i].IsBackground = true;
                threads[i].Start();
            }
            Ready();
            cpuBefore = Cpu();
            started = Stopwatch.GetTimestamp();
            Volatile.Write(ref deadline, started + length);
            go.Set();
            var limit = TimeSpan.FromSeconds(args.Seconds + 60);
            foreach (var thread in threads)
                if (!thread.Join(limit)) throw new TimeoutException("a loop did not end within a minute of the window");
        }
        else
        {
            // Dispose releases blocking a pool thread for a round trip: without a
            // pool thread per loop the loops would wait for the pool to grow.
            int workers, ports;
            ThreadPool.GetMinThreads(out workers, out ports);
            ThreadPool.SetMinThreads(Math.Max(workers, loops.Length + 2), ports);
            Ready();
            cpuBefore = Cpu();
            started = Stopwatch.GetTimestamp();
            deadline = started + length;
            var tasks = new Task[loops.Length];
            for (int i = 0; i < loops.Length; i++) tasks[i] = loops[i].RunAsync(deadline);
            if (!Task.WaitAll(tasks, TimeSpan.FromSeconds(args.Seconds + 60)))
                throw new TimeoutException("a loop did not end within a minute of the window");
        }
        double seconds = (Stopwatch.GetTimestamp() - started) / (double)Stopwatch.Frequency;
        foreach (var loop in loops)
            if (loop.Error != null) throw new Exception("a loop failed", loop.Error);

        long ops = 0;
        foreach (var loop in loops) ops += loop.Count;
        Console.Error.WriteLine("client CPU {0:F0} µs/op ({1})", (Cpu() - cpuBefore).TotalMilliseconds * 1000 / Math.Max(ops, 1), args.Api);
        var json = new StringBuilder(64 + (int)Math.Min(ops, 1 << 24) * 6);
        json.Append("{\"ops\": ").Append(ops)
            .Append(", \"seconds\": ").Append(Number(seconds))
            .Append(", \"api\": \"").Append(args.Api).Append('"')
            .Append(", \"samples_us\": [");
        bool firstSample = true;
        foreach (var loop in loops)
            for (int i = 0; i < loop.Count; i++)
            {
                if (!firstSample) json.Append(", ");
                firstSample = false;
                json.Append(loop.Samples[i]);
            }
        json.Append("]}");
        Print(json.ToString());
        return 0;
    }

    /// <summary>Samples to preallocate for a loop expected to run near <paramref name="perSecond"/>.</summary>
    static int Capacity(Args args, int perSecond)
    {
        return (int)Math.Min(1 << 22, Math.Max(1024, 2 * perSecond * args.Seconds));
    }

    // ---- protocol and measuring helpers ----

    static void Ready()
    {
        Print("ready");
        string line;
        while ((line = Console.In.ReadLine()) != null)
            if (line.Trim() == "go") return;
        throw new EndOfStreamException("stdin ended before go");
    }

    static void Print(string line)
    {
        Console.Out.WriteLine(line);
        Console.Out.Flush();
    }

    static string Number(double value)
    {
        return value.ToString("0.######", CultureInfo.InvariantCulture);
    }

    /// <summary>The process's CPU time, user and system.</summary>
    static TimeSpan Cpu()
    {
        using (var self = Process.GetCurrentProcess()) return self.TotalProcessorTime;
    }

    static void Collect()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    /// <summary>Resident set size in bytes (VmRSS of /proc/self/status).</summary>
    static long Rss()
    {
        foreach (var line in File.ReadAllLines("/proc/self/status"))
        {
            if (!line.StartsWith("VmRSS:", StringComparison.Ordinal)) continue;
            var fields = line.Substring(6).Trim().Split(' ');
            return long.Parse(fields[0], CultureInfo.InvariantCulture) * 1024;
        }
        throw new InvalidOperationException("no VmRSS in /proc/self/status");
    }
}
