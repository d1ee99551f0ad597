using System;
using ZooLock;

/// <summary>
/// A consumer of the ZooLock NuGet package, compiled against the installed
/// package by scripts/test-dotnet.sh: both APIs against a real server.
/// Usage: Program.exe host:port[,host:port…]
/// </summary>
static class Program
{
    static int Main(string[] args)
    {
        var connect = args[0];
        using (var locker = new ZookeeperLocker("/consumer/classic", connect.Split(',')))
        {
            var name = locker.CreateLock();
            if (!locker.Lock(name, 5000)) return Fail("the classic locker did not lock");
            if (!locker.Release(name)) return Fail("the classic locker did not release");
        }
        using (var session = new ZooKeeperSession(connect))
        {
            var mutex = new ZooKeeperDistributedLock("/consumer/modern", session, "consumer");
            long first;
            using (var handle = mutex.Acquire(TimeSpan.FromSeconds(5)))
            {
                first = handle.FencingToken;
                if (mutex.TryAcquire() != null) return Fail("a second holder got in");
            }
            using (var handle = mutex.AcquireAsync().Result)
            {
                if (handle.FencingToken <= first) return Fail("fencing tokens did not increase");
                Console.WriteLine("consumer: locked twice, fencing tokens {0} < {1}", first, handle.FencingToken);
            }
        }
        Console.WriteLine("consumer: ok");
        return 0;
    }

    static int Fail(string what)
    {
        Console.Error.WriteLine("consumer: " + what);
        return 1;
    }
}
