using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Web.Script.Serialization;

namespace ZooLock.Tests
{
    /// <summary>
    /// A client of the harness's <c>zkh</c> process (harness/README.md):
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
            : this(new Dictionary<string, object> { { "force_sync", forceSync } }) { }

        /// <summary>
        /// Starts zkh and a standalone server with the <c>start</c> fields of
        /// <paramref name="start"/> (harness/README.md), e.g. <c>tls</c> or <c>sasl</c>.
        /// </summary>
        public ZkHarness(Dictionary<string, object> start)
        {
            var info = new ProcessStartInfo(Locate("ZOOLOCK_ZKH", "target/debug/zkh"))
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
            };
            process = Process.Start(info);
            var command = new Dictionary<string, object>(start) { { "cmd", "start" } };
            if (!command.ContainsKey("servers")) command["servers"] = 1;
            var started = Send(command);
            Connect = (string)started["connect"];
            Direct = (string)started["direct"];
            object secure, byIp, files;
            if (started.TryGetValue("secure", out secure)) Secure = (string)secure;
            if (started.TryGetValue("secure_by_ip", out byIp)) SecureByIp = (string)byIp;
            if (started.TryGetValue("tls_files", out files)) TlsFiles = (Dictionary<string, object>)files;
        }

        /// <summary>With <c>tls</c>: the secureClientPorts as <c>localhost:port</c>, the name the servers' certificate carries; else null.</summary>
        public string Secure { get; private set; }

        /// <summary>With <c>tls</c>: the secureClientPorts as <c>127.0.0.1:port</c>, which fails a host name check; else null.</summary>
        public string SecureByIp { get; private set; }

        /// <summary>With <c>tls</c>: the PEM paths (<c>ca</c>, <c>client_cert</c>, <c>client_key</c>, <c>client_key_encrypted</c>, <c>client_key_password</c>, <c>other_ca</c>, <c>stranger_cert</c>, <c>stranger_key</c>); else null.</summary>
        public Dictionary<string, object> TlsFiles { get; private set; }

        /// <summary>One of <see cref="TlsFiles"/>.</summary>
        public string Pem(string name)
        {
            return (string)TlsFiles[name];
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

        /// <summary>Cuts the session's connections off: requests stay unanswered until <see cref="Heal"/>.</summary>
        public void Partition(long sessionId)
        {
            Send(new Dictionary<string, object> { { "cmd", "partition" }, { "session", sessionId.ToString() } });
        }

        /// <summary>Ends a <see cref="Partition"/>.</summary>
        public void Heal(long sessionId)
        {
            Send(new Dictionary<string, object> { { "cmd", "heal" }, { "session", sessionId.ToString() } });
        }

        /// <summary>
        /// Arms a request-level fault (harness/README.md): the server applies the
        /// session's <paramref name="nth"/> request with <paramref name="op"/> (ZooKeeper's name,
        /// e.g. "create2"; any op if null) under the path prefix <paramref name="path"/>, then its
        /// reply is dropped and the connection reset. Returns the fault's id.
        /// </summary>
        public long DropReply(long sessionId, string op = null, string path = null, int nth = 1)
        {
            return Convert.ToInt64(Send(Select("drop_reply", sessionId, op, path, nth))["fault"]);
        }

        /// <summary>
        /// Arms a fault that forwards the picked request and resets the connection at once: the
        /// client sees a connection loss, the server applies the request. Returns the fault's id.
        /// </summary>
        public long ResetBeforeReply(long sessionId, string op = null, string path = null, int nth = 1)
        {
            return Convert.ToInt64(Send(Select("reset_before_reply", sessionId, op, path, nth))["fault"]);
        }

        /// <summary>
        /// Arms a fault that holds the picked request back and resets the connection (the server
        /// has not seen it); once the client reconnected, the request goes to the server just
        /// <paramref name="land"/> ("before" or "after") the session's <paramref name="landNth"/>
        /// later request with <paramref name="landOp"/> under <paramref name="landPath"/>, and its
        /// reply is swallowed. Returns the fault's id.
        /// </summary>
        public long LandLate(long sessionId, string op = null, string path = null, int nth = 1,
            string land = "before", string landOp = null, string landPath = null, int landNth = 1)
        {
            var command = Select("land_late", sessionId, op, path, nth);
            command["land"] = land;
            command["land_nth"] = landNth;
            if (landOp != null) command["land_op"] = landOp;
            if (landPath != null) command["land_path"] = landPath;
            return Convert.ToInt64(Send(command)["fault"]);
        }

        /// <summary>What the fault did: "state" ("armed", ..., "fired", "missed", "disarmed"), "op", "path", "xid", "reply_err".</summary>
        public Dictionary<string, object> Fault(long faultId)
        {
            return Send(new Dictionary<string, object> { { "cmd", "fault" }, { "fault", faultId } });
        }

        /// <summary>Waits until the fault reached <paramref name="until"/>; throws on timeout, or if it was missed or disarmed.</summary>
        public Dictionary<string, object> WaitFault(long faultId, string until = "fired", int timeoutMs = 10000)
        {
            return Send(new Dictionary<string, object> { { "cmd", "wait_fault" }, { "fault", faultId }, { "until", until }, { "timeout_ms", timeoutMs } });
        }

        /// <summary>Disarms the fault unless a request matched it already.</summary>
        public Dictionary<string, object> Disarm(long faultId)
        {
            return Send(new Dictionary<string, object> { { "cmd", "disarm" }, { "fault", faultId } });
        }

        static Dictionary<string, object> Select(string cmd, long sessionId, string op, string path, int nth)
        {
            var command = new Dictionary<string, object> { { "cmd", cmd }, { "session", sessionId.ToString() }, { "nth", nth } };
            if (op != null) command["op"] = op;
            if (path != null) command["path"] = path;
            return command;
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
