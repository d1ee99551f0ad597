using System;
using System.Collections.Generic;

namespace ZooLock.Tests
{
    /// <summary>
    /// ZooKeeper servers in the security modes (harness/README.md), each
    /// started on first use and shared by the security tests and the
    /// bad-input catalogue: TLS without and with client certificates, and
    /// SASL DIGEST-MD5 required of every session. zkh stops them when this
    /// process ends (its stdin closes).
    /// </summary>
    public static class SecureServers
    {
        /// <summary>The SASL server's one JAAS user and its password.</summary>
        public const string SaslUser = "locker", SaslPassword = "s3cret-pw";

        /// <summary>The connect timeout of the TLS and SASL cases: each must fail within it.</summary>
        public static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(5);

        static readonly Lazy<ZkHarness> tls = Start(new Dictionary<string, object> { { "tls", new Dictionary<string, object> { { "client_auth", false } } } });
        static readonly Lazy<ZkHarness> mutualTls = Start(new Dictionary<string, object> { { "tls", new Dictionary<string, object> { { "client_auth", true } } } });
        static readonly Lazy<ZkHarness> sasl = Start(new Dictionary<string, object>
        {
            { "sasl", new Dictionary<string, object> { { "users", new Dictionary<string, object> { { SaslUser, SaslPassword } } }, { "required", true } } },
        });

        /// <summary>TLS, <c>ssl.clientAuth=none</c>.</summary>
        public static ZkHarness Tls { get { return tls.Value; } }

        /// <summary>TLS, <c>ssl.clientAuth=need</c>.</summary>
        public static ZkHarness MutualTls { get { return mutualTls.Value; } }

        /// <summary>SASL DIGEST-MD5 required (<c>enforce.auth.enabled</c>).</summary>
        public static ZkHarness Sasl { get { return sasl.Value; } }

        static Lazy<ZkHarness> Start(Dictionary<string, object> start)
        {
            return new Lazy<ZkHarness>(() =>
            {
                var harness = new ZkHarness(start);
                AppDomain.CurrentDomain.ProcessExit += (sender, args) => harness.Dispose();
                return harness;
            });
        }

        /// <summary>Options with the short session and connect timeouts of these tests.</summary>
        public static ZooKeeperSessionOptions Options()
        {
            return new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout, ConnectTimeout = ConnectTimeout };
        }

        /// <summary>Options trusting the TLS server's CA.</summary>
        public static ZooKeeperSessionOptions Trusting(ZkHarness zk)
        {
            var options = Options();
            options.UseTls = true;
            options.Ca = zk.Pem("ca");
            return options;
        }

        /// <summary>Starts the server a catalogue entry needs, if any, before its clock runs.</summary>
        public static void Prepare(string id)
        {
            if (id == "sasl-unknown-mechanism") return;
            if (id.StartsWith("sasl-")) { Sasl.ToString(); return; }
            if (id == "tls-no-client-cert" || id == "tls-untrusted-client-cert" || id.StartsWith("tls-key-password-")) { MutualTls.ToString(); return; }
            if (id.StartsWith("tls-")) Tls.ToString();
        }
    }
}
