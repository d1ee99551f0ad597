// One contender of the ensemble bed (bed/src/main.rs), in C#, on ZooLock's
// DistributedLock-shaped API. The Rust contender's protocol (bed/src/contend.rs):
//
//     mono ZooLockBedContender.exe CONNECT PATHS RESOURCE TIMEOUT_MS SEED NAME
//
// Acquires a random one of PATHS again and again; while its handle says it
// holds (not suspended, not lost), writes to the resource with its fencing
// token every few milliseconds, for a random while; then releases. Says what
// it does on stdout; ends when stdin closes.
// Built by scripts/lib/build-worker.sh csharp bed (mcs, C# 7.2).

using System;
using System.IO;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using ZooLock;

static class Contender
{
    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Seconds; public long Nanoseconds; }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int ClockGetTime(int clock, out Timespec now);

    /// <summary>CLOCK_MONOTONIC, in nanoseconds: the bed's one clock.</summary>
    static long Now()
    {
        Timespec now;
        ClockGetTime(1, out now);
        return now.Seconds * 1000000000L + now.Nanoseconds;
    }

    static void Say(string line)
    {
        lock (Console.Out)
        {
            Console.Out.WriteLine(line);
            Console.Out.Flush();
        }
    }

    static int Main(string[] argv)
    {
        if (argv.Length != 6)
        {
            Console.Error.WriteLine("usage: ZooLockBedContender.exe CONNECT PATHS RESOURCE TIMEOUT_MS SEED NAME");
            return 2;
        }
        string connect = argv[0], resource = argv[2], name = argv[5];
        string[] paths = argv[1].Split(',');
        var random = new Random((int)(ulong.Parse(argv[4]) % int.MaxValue));
        var timeout = TimeSpan.FromMilliseconds(int.Parse(argv[3]));
        var stop = new ManualResetEventSlim();
        new Thread(() => { Console.In.ReadToEnd(); stop.Set(); }) { IsBackground = true }.Start();
        using (var session = new ZooKeeperSession(connect, timeout, TimeSpan.FromSeconds(60)))
        {
            var locks = new ZooKeeperDistributedLock[paths.Length];
            bool mirror = Environment.GetEnvironmentVariable("ZOOLOCK_BED_MIRROR") != "no";
            for (int i = 0; i < paths.Length; i++) locks[i] = new ZooKeeperDistributedLock(paths[i], session, mirror: mirror);
            int colon = resource.LastIndexOf(':');
            var client = new TcpClient(resource.Substring(0, colon), int.Parse(resource.Substring(colon + 1))) { NoDelay = true };
            var stream = client.GetStream();
            var writer = new StreamWriter(stream) { AutoFlush = true, NewLine = "\n" };
            var replies = new StreamReader(stream);
            Say("ready");
            while (!stop.IsSet)
            {
                var mutex = locks[random.Next(locks.Length)];
                string path = mutex.Path;
                ZooKeeperDistributedLockHandle handle;
                try
                {
                    handle = mutex.TryAcquire(TimeSpan.FromMilliseconds(500 + random.Next(2500)));
                }
                catch (ZooLockException e)
                {
                    Say("error " + e.GetType().Name);
                    Thread.Sleep(50);
                    continue;
                }
                if (handle == null)
                {
                    Say("timeout " + path + " " + Now());
                    continue;
                }
                using (handle)
                {
                    long start = Now();
                    long token = handle.FencingToken;
                    long holdFor = (20 + random.Next(1500)) * 1000000L;
                    string state = StateOf(handle);
                    long readAt = Now();
                    if (state != "HELD")
                    {
                        Say(string.Format("end {0} {1} {2} {3} {4}", path, token, start, readAt, state));
                        continue;
                    }
                    Say(string.Format("begin {0} {1} {2}", path, token, start));
                    long last = readAt;
                    string ended;
                    while (true)
                    {
                        long before = Now();
                        state = StateOf(handle);
                        if (state != "HELD")
                        {
                            ended = before + " " + state;
                            break;
                        }
                        last = Now();
                        writer.WriteLine("w " + name + " " + path + " " + token);
                        replies.ReadLine();
                        if (Now() - start > holdFor || stop.IsSet)
                        {
                            ended = Now() + " released";
                            break;
                        }
                        Thread.Sleep(3);
                    }
                    Say(string.Format("end {0} {1} {2} {3}", path, token, last, ended));
                }
            }
        }
        Say("closed");
        return 0;
    }

    static string StateOf(ZooKeeperDistributedLockHandle handle)
    {
        if (handle.LostReason != LostReason.None) return "LOST";
        return handle.IsSuspended ? "SUSPENDED" : "HELD";
    }
}
