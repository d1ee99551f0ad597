using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Web.Script.Serialization;

namespace ZooLock.Tests
{
    /// <summary>
    /// A client of the harness's <c>zkh</c> process (tests/harness/README.md):
    /// real ZooKeeper servers behind proxies that can expire a session. One
    /// JSON command per line in, one JSON answer per line out; the servers
    /// die when this process's stdin to zkh closes.
    /// </summary>
    public sealed class ZkHarness : IDisposable
    {
        readonly Process process;
        readonly JavaScriptSerializer json = new JavaScriptSerializer();
        readonly object gate = new object();

        /// <summary>Starts zkh (from <c>ZOOLOCK_ZKH</c>, else target/debug/zkh) and a standalone server.</summary>
        public ZkHarness(bool forceSync = true)
        {
            var info = new ProcessStartInfo(Locate("ZOOLOCK_ZKH", "target/debug/zkh"))
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
            };
            process = Process.Start(info);
            var started = Send(new Dictionary<string, object> { { "cmd", "start" }, { "servers", 1 }, { "force_sync", forceSync } });
            Connect = (string)started["connect"];
            Direct = (string)started["direct"];
        }

        /// <summary>The connect string through the proxies: sessions made with it can be expired.</summary>
        public string Connect { get; private set; }

        /// <summary>The connect string straight to the server (for benchmarks).</summary>
        public string Direct { get; private set; }

        /// <summary>Expires a session on the server; its client sees it expire.</summary>
        public void Expire(long sessionId)
        {
            Send(new Dictionary<string, object> { { "cmd", "expire" }, { "session", sessionId.ToString() } });
        }

        /// <summary>Sends one command and returns its answer; throws if the answer is not ok.</summary>
        public Dictionary<string, object> Send(Dictionary<string, object> command)
        {
            lock (gate)
            {
                process.StandardInput.WriteLine(json.Serialize(command));
                process.StandardInput.Flush();
                var line = process.StandardOutput.ReadLine();
                if (line == null) throw new InvalidOperationException("zkh exited");
                var answer = json.Deserialize<Dictionary<string, object>>(line);
                if (!(bool)answer["ok"]) throw new InvalidOperationException("zkh: " + answer["error"]);
                return answer;
            }
        }

        /// <summary>Stops the servers and zkh.</summary>
        public void Dispose()
        {
            try { Send(new Dictionary<string, object> { { "cmd", "shutdown" } }); }
            catch (Exception) { }
            try { process.StandardInput.Close(); } catch (Exception) { }
            if (!process.WaitForExit(30000)) process.Kill();
            process.Dispose();
        }

        /// <summary>A program named by an environment variable, else found under the repository root.</summary>
        public static string Locate(string variable, string relative)
        {
            var named = Environment.GetEnvironmentVariable(variable);
            if (!string.IsNullOrEmpty(named)) return named;
            var start = Path.GetDirectoryName(typeof(ZkHarness).Assembly.Location);
            for (var dir = new DirectoryInfo(start); dir != null; dir = dir.Parent)
            {
                var candidate = Path.Combine(dir.FullName, relative);
                if (File.Exists(candidate)) return candidate;
            }
            throw new FileNotFoundException(variable + " is not set and " + relative + " was not found above " + start);
        }
    }
}
