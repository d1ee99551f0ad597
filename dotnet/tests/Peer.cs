using System;
using System.Collections.Concurrent;
using System.Diagnostics;

namespace ZooLock.Tests
{
    /// <summary>
    /// A Rust process on zoolock's core (harness/peer/), for tests
    /// across languages: it prints what it did, one line at a time, and
    /// waits for a line on stdin before it lets go.
    /// </summary>
    public sealed class Peer : IDisposable
    {
        readonly Process process;
        readonly BlockingCollection<string> lines = new BlockingCollection<string>();

        /// <summary>Starts <c>peer MODE --connect … --path … --name …</c> (from <c>ZOOLOCK_PEER</c>, else target/release/peer).</summary>
        public Peer(string mode, string connect, string path, string name, string extra = "")
        {
            var program = ZkHarness.Locate("ZOOLOCK_PEER", "target/release/peer");
            var arguments = string.Format("{0} --connect {1} --path {2} --name {3} {4}", mode, connect, path, name, extra);
            process = Process.Start(new ProcessStartInfo(program, arguments)
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
            });
            process.OutputDataReceived += (sender, args) =>
            {
                if (args.Data == null) lines.CompleteAdding();
                else lines.Add(args.Data);
            };
            process.BeginOutputReadLine();
        }

        /// <summary>The next line the peer printed, waiting up to <paramref name="timeout"/>; null if none came.</summary>
        public string ReadLine(TimeSpan timeout)
        {
            string line;
            try { return lines.TryTake(out line, timeout) ? line : null; }
            catch (InvalidOperationException) { return null; }
        }

        /// <summary>A line the peer already printed, without waiting; null if none.</summary>
        public string Printed()
        {
            string line;
            return lines.TryTake(out line) ? line : null;
        }

        /// <summary>Sends one line to the peer.</summary>
        public void Send(string line)
        {
            process.StandardInput.WriteLine(line);
            process.StandardInput.Flush();
        }

        /// <summary>Closes its input and waits for it to exit (killing it after a while).</summary>
        public void Dispose()
        {
            try { process.StandardInput.Close(); } catch (Exception) { }
            if (!process.WaitForExit(20000)) process.Kill();
            process.Dispose();
        }
    }
}
