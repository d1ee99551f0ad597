using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using ZooLock;

/// <summary>
/// A consumer of the ZooLock NuGet package, compiled with mcs against the
/// installed package by scripts/lib/test-nuget-consumer.sh.
///   Program.exe HOSTS               both APIs against a real server
///   Program.exe --contend HOSTS     one lock taken, contended and handed over (fencing tokens increase)
///   Program.exe --pending-at-exit HOSTS
///                                   returns from Main while a connect and acquires wait: the process must still exit
///   Program.exe --no-native RID     where the native library cannot be loaded: every first touch
///                                   (ZooLockLog first, then a session, a locker, an async connect,
///                                   a ZooKeeperPath, a lock from a connection string, a log forward) throws
///                                   ZooLockNativeLibraryException naming RID; prints its message
/// </summary>
static class Program
{
    static int Main(string[] args)
    {
        if (args.Length == 2 && args[0] == "--no-native") return NoNative(args[1]);
        if (args.Length == 2 && args[0] == "--contend") return Contend(args[1]);
        if (args.Length == 2 && args[0] == "--pending-at-exit") return PendingAtExit(args[1]);
        var connect = args[0];
        using (var locker = new ZookeeperLocker("/consumer/classic", connect.Split(',')))
        {
            var name = locker.CreateLock();
            if (!locker.Lock(name, 5000)) return Fail("the classic locker did not lock");
            if (!locker.Release(name)) return Fail("the classic locker did not release");
        }
        int status = Contend(connect);
        if (status == 0) Console.WriteLine("consumer: ok");
        return status;
    }

    static int Contend(string connect)
    {
        using (var session = new ZooKeeperSession(connect, TimeSpan.FromSeconds(20), TimeSpan.FromSeconds(30)))
        {
            var mutex = new ZooKeeperDistributedLock("/consumer/modern", session, "consumer");
            var waiter = new ZooKeeperDistributedLock("/consumer/modern", session, "waiter");
            long first;
            var handle = mutex.Acquire(TimeSpan.FromSeconds(30));
            first = handle.FencingToken;
            if (mutex.TryAcquire() != null) return Fail("a second holder got in");
            var waiting = waiter.AcquireAsync(TimeSpan.FromSeconds(60));
            if (waiting.IsCompleted) return Fail("the waiter got the lock while it was held");
            handle.Dispose();
            using (var next = waiting.Result)
            {
                if (next.FencingToken <= first) return Fail("fencing tokens did not increase");
                Console.WriteLine("consumer: lock held, contended and handed over on {0}, fencing tokens {1} < {2}",
                    RuntimeInfo(), first, next.FencingToken);
            }
        }
        return 0;
    }

    /// <summary>
    /// A program that ends while acquires and a connect still wait, nothing
    /// disposed: at exit zoolock cancels them, and their completions must not
    /// keep Mono waiting.
    /// </summary>
    static int PendingAtExit(string connect)
    {
        // Accepts (the kernel does) but never speaks ZooKeeper: the connect waits.
        var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        silent.Start();
        var connecting = ZooKeeperSession.ConnectAsync(silent.LocalEndpoint.ToString(),
            new ZooKeeperSessionOptions { ConnectTimeout = TimeSpan.FromMinutes(10) });
        if (connecting.IsCompleted) return Fail("a connect to a silent server completed");
        // A user's exit handler, after zoolock's: it sees the connect end
        // (cancelled at exit), so the runtime has met the thread that ended it.
        // And the acquires' ends, none of them on a thread-pool thread: Mono
        // may wait up to a minute at exit for a pool thread started then.
        var cancelled = 0;
        var pooled = 0;
        AppDomain.CurrentDomain.ProcessExit += (sender, e) =>
        {
            try { connecting.Wait(TimeSpan.FromSeconds(30)); }
            catch (AggregateException) { }
            Console.WriteLine("consumer: at exit the connect is {0}, {1} acquires cancelled, {2} on the thread pool",
                connecting.Status, Volatile.Read(ref cancelled), Volatile.Read(ref pooled));
        };
        var session = new ZooKeeperSession(connect, TimeSpan.FromSeconds(20), TimeSpan.FromSeconds(30));
        var path = "/consumer/pending-" + Guid.NewGuid().ToString("N");
        new ZooKeeperDistributedLock(path, session, "holder").Acquire(TimeSpan.FromSeconds(30));
        for (var i = 0; i < 16; i++)
        {
            var waiting = new ZooKeeperDistributedLock(path, session, "waiter " + i).AcquireAsync();
            if (waiting.IsCompleted) return Fail("a waiter got the lock while it was held");
            waiting.ContinueWith(ended =>
            {
                if (Thread.CurrentThread.IsThreadPoolThread) Interlocked.Increment(ref pooled);
                if (ended.IsCanceled) Interlocked.Increment(ref cancelled);
            }, TaskContinuationOptions.ExecuteSynchronously);
        }
        Console.WriteLine("consumer: returning from Main with a connect and 16 acquires waiting");
        return 0;
    }

    static int NoNative(string rid)
    {
        var seen = 0;
        foreach (var touch in new Action[] {
            () => ZooLockLog.Level = SourceLevels.Verbose,
            () => new ZooKeeperSession("127.0.0.1:1").Dispose(),
            () => new ZookeeperLocker("/consumer/none", "127.0.0.1:1").Dispose(),
            () => ZooKeeperSession.ConnectAsync("127.0.0.1:1"),
            () => new ZooKeeperPath("/consumer/none"),
            () => new ZooKeeperDistributedLock("none", "127.0.0.1:1"),
            () => ZooLockLog.Forward((level, category, message) => { }).Dispose(),
        })
        {
            try
            {
                touch();
                return Fail("a first touch succeeded without the native library");
            }
            catch (ZooLockNativeLibraryException e)
            {
                if (e.RuntimeIdentifier != rid) return Fail("RuntimeIdentifier " + e.RuntimeIdentifier + ", expected " + rid);
                if (e.Status != ZooLockNativeLibraryException.NoStatus) return Fail("Status " + e.Status);
                if (seen++ == 0) Console.WriteLine(e.Message);
            }
        }
        return 0;
    }

    /// <summary>The process's architecture, by reflection: .NET Framework 4.6.2's mscorlib has no RuntimeInformation.</summary>
    static string RuntimeInfo()
    {
        var type = Type.GetType("System.Runtime.InteropServices.RuntimeInformation");
        var property = type == null ? null : type.GetProperty("ProcessArchitecture");
        return property == null ? "an unknown architecture" : property.GetValue(null, null).ToString();
    }

    static int Fail(string what)
    {
        Console.Error.WriteLine("consumer: " + what);
        return 1;
    }
}
