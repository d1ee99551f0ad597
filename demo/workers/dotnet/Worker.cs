// The demo's C# worker: the same protocol as the Rust worker (demo/src/worker.rs).
// Acquires the lock again and again and, while holding it, writes one record to
// the resource with its fencing token; it stops writing whenever it is told its
// lock is suspended or lost.
//
// ZooLockDemoWorker.exe --connect HOSTS --path P --resource HOST:PORT --name N
//     [--count K] [--session-timeout SECS] [--hold-ms MS] [--tls-ca CA --tls-cert CERT --tls-key KEY]
//
// Without --count it runs until a `stop` line (or end of input) on stdin, prints
// `idle` with its lock released and its session still open (so that orphan nodes
// can be counted), and exits at end of stdin. Stdout also carries `session <id>`,
// `told <name> <state> <ns>` lines (the session's Suspended or Lost, or a hold
// lost, by its reason: NodeDeleted, SessionExpired, ...) and `connected <name> <ns>`.
// Built by scripts/lib/build-worker.sh csharp demo (mcs, C# 7.2).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using ZooLock;

static class Worker
{
    static readonly object Out = new object();
    static readonly long EpochTicks = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc).Ticks;

    sealed class Args
    {
        internal string Connect, Path, Resource, Name;
        internal int? Count;
        internal TimeSpan SessionTimeout = TimeSpan.FromSeconds(10);
        internal TimeSpan Hold = TimeSpan.Zero;
        /// <summary>CA, client certificate and key (PEM files): connect over TLS.</summary>
        internal string TlsCa, TlsCert, TlsKey;
    }

    static int Main(string[] argv)
    {
        Args args;
        try { args = Parse(argv); }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine("worker: " + e.Message);
            Console.Error.WriteLine("usage: ZooLockDemoWorker.exe --connect HOSTS --path P --resource HOST:PORT --name NAME [--count K] [--session-timeout SECS] [--hold-ms MS] [--tls-ca CA --tls-cert CERT --tls-key KEY]");
            return 2;
        }
        try { return Run(args); }
        catch (Exception e)
        {
            Console.Error.WriteLine("worker {0}: {1}: {2}", args.Name, e.GetType().Name, e.Message);
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
                case "--resource": args.Resource = value; break;
                case "--name": args.Name = value; break;
                case "--tls-ca": args.TlsCa = value; break;
                case "--tls-cert": args.TlsCert = value; break;
                case "--tls-key": args.TlsKey = value; break;
                case "--count":
                    int count;
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out count))
                        throw new ArgumentException("--count: not a count: " + value);
                    args.Count = count;
                    break;
                case "--session-timeout":
                    double secs;
                    if (!double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out secs) || !(secs > 0) || secs > 1e6)
                        throw new ArgumentException("--session-timeout: not a positive number of seconds: " + value);
                    args.SessionTimeout = TimeSpan.FromSeconds(secs);
                    break;
                case "--hold-ms":
                    int ms;
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out ms))
                        throw new ArgumentException("--hold-ms: not a number of milliseconds: " + value);
                    args.Hold = TimeSpan.FromMilliseconds(ms);
                    break;
                default: throw new ArgumentException("unknown argument " + flag);
            }
        }
        if (args.Connect == null || args.Path == null || args.Resource == null || args.Name == null)
            throw new ArgumentException("--connect, --path, --resource and --name are required");
        if (args.Name.Length == 0 || args.Name.IndexOfAny(new[] { ' ', '\t', '\n', '\r' }) >= 0)
            throw new ArgumentException("--name must be one word");
        return args;
    }

    static int Run(Args args)
    {
        var options = new ZooKeeperSessionOptions { SessionTimeout = args.SessionTimeout };
        if (args.TlsCa != null)
        {
            options.UseTls = true;
            options.Ca = args.TlsCa;
            options.CertFile = args.TlsCert;
            options.KeyFile = args.TlsKey;
        }
        // The resource first: if it cannot be reached there is nothing to do, and no session to open.
        using (var resource = Resource.Connect(args.Resource))
        using (var session = new ZooKeeperSession(args.Connect, options))
        {
            long lastId = session.SessionId;
            Say("session " + lastId.ToString(CultureInfo.InvariantCulture));
            session.StateChanged += (sender, e) =>
            {
                switch (e.State)
                {
                    case ZooKeeperSessionState.Connected:
                        long id;
                        try { id = session.SessionId; }
                        catch (ObjectDisposedException) { return; }
                        if (Interlocked.Exchange(ref lastId, id) != id)
                            Say("session " + id.ToString(CultureInfo.InvariantCulture));
                        Say(string.Format(CultureInfo.InvariantCulture, "connected {0} {1}", args.Name, NowNs()));
                        break;
                    // What tells a holder to stop touching the resource.
                    case ZooKeeperSessionState.Suspended:
                    case ZooKeeperSessionState.Lost:
                        Say(string.Format(CultureInfo.InvariantCulture, "told {0} {1} {2}", args.Name, e.State, NowNs()));
                        break;
                }
            };
            var mutex = new ZooKeeperDistributedLock(args.Path, session, args.Name);

            // Without --count: stdin says when to stop (a `stop` line or its end), then when to exit (its end).
            var stop = new CancellationTokenSource();
            var endOfInput = new ManualResetEventSlim(false);
            if (!args.Count.HasValue)
            {
                var reader = new Thread(() =>
                {
                    try
                    {
                        string line;
                        while ((line = Console.In.ReadLine()) != null)
                            if (line.Trim() == "stop") stop.Cancel();
                    }
                    catch (IOException) { }
                    finally
                    {
                        stop.Cancel();
                        endOfInput.Set();
                    }
                });
                reader.IsBackground = true;
                reader.Start();
            }

            int done = 0;
            while (!stop.IsCancellationRequested && (!args.Count.HasValue || done < args.Count.Value))
            {
                var asked = Stopwatch.StartNew();
                long generation = session.Generation;
                ZooKeeperDistributedLockHandle handle;
                try { handle = mutex.Acquire(TimeSpan.FromSeconds(5), stop.Token); }
                catch (TimeoutException) { continue; }
                catch (OperationCanceledException) { break; }  // told to stop while waiting; no node is left
                catch (ObjectDisposedException) { break; }     // the session was closed
                catch (ZooLockException e)
                {
                    Console.Error.WriteLine("worker {0}: acquire: {1}", args.Name, e.Message);
                    continue;
                }
                using (handle)
                // A hold's end other than our release, by its reason: NodeDeleted when someone deleted our node.
                using (handle.HandleLostToken.Register(() => Say(string.Format(CultureInfo.InvariantCulture, "told {0} {1} {2}", args.Name, handle.LostReason, NowNs()))))
                {
                    long start = NowNs();
                    long waitUs = asked.Elapsed.Ticks / (TimeSpan.TicksPerMillisecond / 1000);
                    // Told suspended or lost: the resource must not be touched. HandleLostToken is
                    // cancelled from the thread pool, so also read the session's state, and skip
                    // a hold that was taken across an expiry (its generation changed).
                    if (!handle.IsSuspended && !handle.HandleLostToken.IsCancellationRequested
                        && session.State == ZooKeeperSessionState.Connected && session.Generation == generation)
                    {
                        resource.Write(args.Name, handle.FencingToken, waitUs, start);
                        done++;
                        if (args.Hold > TimeSpan.Zero) Thread.Sleep(args.Hold);
                    }
                }  // Dispose releases; it never throws
            }

            // The session's counters for the driver's summary, before idle.
            var metrics = new List<string>();
            foreach (var metric in session.GetMetrics())
                metrics.Add(metric.Key + "=" + metric.Value.ToString("R", CultureInfo.InvariantCulture));
            Say("metrics " + string.Join(" ", metrics));

            if (!args.Count.HasValue)
            {
                Say("idle");
                // Hold the session open until the driver has counted the nodes left.
                endOfInput.Wait();
            }
        }  // closes the session, then the connection to the resource
        return 0;
    }

    static long NowNs()
    {
        return (DateTime.UtcNow.Ticks - EpochTicks) * 100;
    }

    static void Say(string line)
    {
        lock (Out)
        {
            Console.Out.Write(line + "\n");
            Console.Out.Flush();
        }
    }

    /// <summary>The guarded resource: one line each way over a TCP connection.</summary>
    sealed class Resource : IDisposable
    {
        readonly TcpClient client;
        readonly StreamWriter writer;
        readonly StreamReader reader;

        Resource(TcpClient client)
        {
            this.client = client;
            var stream = client.GetStream();
            var utf8 = new UTF8Encoding(false);
            writer = new StreamWriter(stream, utf8) { NewLine = "\n", AutoFlush = false };
            reader = new StreamReader(stream, utf8);
        }

        internal static Resource Connect(string address)
        {
            int colon = address.LastIndexOf(':');
            int port;
            if (colon <= 0 || !int.TryParse(address.Substring(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out port) || port < 1 || port > 65535)
                throw new ArgumentException("--resource: expected HOST:PORT, got " + address);
            string host = address.Substring(0, colon).Trim('[', ']');
            var client = new TcpClient();
            try
            {
                client.NoDelay = true;
                client.Connect(host, port);
            }
            catch (SocketException e)
            {
                client.Close();
                throw new IOException(string.Format("cannot reach the resource at {0}: {1}", address, e.Message), e);
            }
            return new Resource(client);
        }

        /// <summary>Sends one write and reads its answer (<c>ok</c> or <c>refused &lt;n&gt;</c>).</summary>
        internal string Write(string worker, long token, long waitUs, long startNs)
        {
            writer.Write(string.Format(CultureInfo.InvariantCulture, "write {0} csharp {1} {2} {3}\n", worker, token, waitUs, startNs));
            writer.Flush();
            string reply = reader.ReadLine();
            if (reply == null) throw new IOException("the resource closed the connection");
            return reply;
        }

        public void Dispose()
        {
            client.Close();
        }
    }
}
