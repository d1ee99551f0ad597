using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using ZooLock;
using ZooLock.Tests;

/// <summary>
/// Uncontended acquire+release cycles per second from C# against the Rust
/// core, on one private server (zkh, forceSync=no), in interleaved rounds of
/// one run so that noise on the host hits every contestant alike. The Rust
/// contestants run in the peer process (ffi/examples/peer.rs), each on its
/// own lock path. Run by scripts/bench-dotnet.sh [rounds] [seconds].
/// </summary>
static class Bench
{
    static int Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0]) : 9;
        int millis = (int)((args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 1.5) * 1000);
        using (var zk = new ZkHarness(forceSync: false))
        using (var session = new ZooKeeperSession(zk.Direct))
        using (var rustBlocking = new Peer("bench", zk.Direct, "/bench/rust-blocking", "rust", "--millis " + millis + " --style blocking"))
        using (var rustAsync = new Peer("bench", zk.Direct, "/bench/rust-async", "rust", "--millis " + millis + " --style async"))
        {
            var mutex = new ZooKeeperDistributedLock("/bench/csharp", session);
            var contestants = new List<KeyValuePair<string, Func<double>>>
            {
                Contestant("Rust core, blocking API (acquire_blocking)", () => Rust(rustBlocking)),
                Contestant("C# Acquire()/Dispose()", () => Cycles(millis, () => mutex.Acquire().Dispose())),
                Contestant("Rust core, async API (one task)", () => Rust(rustAsync)),
                Contestant("C# AcquireAsync()/Dispose()", () => Cycles(millis, () => mutex.AcquireAsync().Result.Dispose())),
            };
            Cycles(millis / 2, () => mutex.Acquire().Dispose());
            var rates = contestants.ToDictionary(c => c.Key, c => new List<double>());
            var syncRatios = new List<double>();
            var asyncRatios = new List<double>();
            for (int round = 0; round < rounds; round++)
            {
                // Each pair (Rust, C#) runs back to back; every other round C# goes first.
                var order = round % 2 == 0 ? new[] { 0, 1, 2, 3 } : new[] { 1, 0, 3, 2 };
                foreach (int i in order) rates[contestants[i].Key].Add(contestants[i].Value());
                // Ratios within one round compare runs seconds apart, under the same load.
                syncRatios.Add(rates[contestants[1].Key][round] / rates[contestants[0].Key][round]);
                asyncRatios.Add(rates[contestants[3].Key][round] / rates[contestants[2].Key][round]);
            }
            double floor = Median(rates[contestants[0].Key]);
            Console.WriteLine("uncontended acquire+release, one client each, one local server (forceSync=no); median of {0} interleaved rounds of {1} ms", rounds, millis);
            Console.WriteLine("| contestant | cycles/s | × Rust blocking |");
            Console.WriteLine("|---|---:|---:|");
            foreach (var contestant in contestants)
            {
                double rate = Median(rates[contestant.Key]);
                Console.WriteLine("| {0} | {1:F0} | {2:F2} |", contestant.Key, rate, rate / floor);
            }
            Console.WriteLine("median of per-round ratios: C# sync / Rust blocking {0:F2}; C# async / Rust async {1:F2}",
                Median(syncRatios), Median(asyncRatios));
        }
        return 0;
    }

    static double Median(List<double> values)
    {
        return values.OrderBy(x => x).ElementAt(values.Count / 2);
    }

    static KeyValuePair<string, Func<double>> Contestant(string name, Func<double> round)
    {
        return new KeyValuePair<string, Func<double>>(name, round);
    }

    static double Cycles(int millis, Action cycle)
    {
        var watch = Stopwatch.StartNew();
        long done = 0;
        while (watch.ElapsedMilliseconds < millis)
        {
            cycle();
            done++;
        }
        return done / watch.Elapsed.TotalSeconds;
    }

    /// <summary>One round in the peer: it answers "cycles seconds".</summary>
    static double Rust(Peer peer)
    {
        peer.Send("round");
        var answer = peer.ReadLine(TimeSpan.FromSeconds(60));
        if (answer == null) throw new InvalidOperationException("the Rust peer did not answer");
        var parts = answer.Split(' ');
        return double.Parse(parts[0]) / double.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture);
    }
}
