using System;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Text;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// <see cref="ZooKeeperSessionOptions"/> against real servers
    /// (<see cref="SecureServers"/> and the run's plain one): TLS with and
    /// without client certificates, an encrypted client key, SASL
    /// DIGEST-MD5, digest auth with a digest ACL on created nodes; secrets in
    /// no <c>ToString()</c> or message. The catalogue (tests/bad_inputs.txt)
    /// covers each wrong TLS and SASL case once more.
    /// </summary>
    [TestFixture]
    public class SecurityTests
    {
        static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);

        static void ConnectAndLock(string connect, ZooKeeperSessionOptions options)
        {
            using (var session = new ZooKeeperSession(connect, options))
            {
                var handle = new ZooKeeperDistributedLock(Fixture.Path("security"), session).Acquire(Patience);
                Assert.IsNotNull(handle);
                handle.Dispose();
            }
        }

        [Test]
        public void TlsConnectAndLock()
        {
            var zk = SecureServers.Tls;
            ConnectAndLock(zk.Secure, SecureServers.Trusting(zk));
        }

        [Test]
        public void TlsWithClientCertificateAndPemText()
        {
            var zk = SecureServers.MutualTls;
            var options = SecureServers.Trusting(zk);
            options.CertFile = zk.Pem("client_cert");
            options.KeyFile = System.IO.File.ReadAllText(zk.Pem("client_key"));
            ConnectAndLock(zk.Secure, options);
        }

        [Test]
        public void TlsEncryptedKeyAndItsPassword()
        {
            var zk = SecureServers.MutualTls;
            Func<string, ZooKeeperSessionOptions> options = password =>
            {
                var o = SecureServers.Trusting(zk);
                o.CertFile = zk.Pem("client_cert");
                o.KeyFile = zk.Pem("client_key_encrypted");
                o.KeyFilePassword = password;
                return o;
            };
            ConnectAndLock(zk.Secure, options(zk.Pem("client_key_password")));
            var error = Assert.Throws<ZooLockTlsException>(() => new ZooKeeperSession(zk.Secure, options("not-the-pw")));
            StringAssert.DoesNotContain("not-the-pw", error.Message);
        }

        [Test]
        public void TlsFailureIsAnAuthenticationExceptionSayingWhy()
        {
            var zk = SecureServers.Tls;
            var options = SecureServers.Trusting(zk);
            options.Ca = zk.Pem("other_ca");
            var error = Assert.Catch<AuthenticationException>(() => new ZooKeeperSession(zk.Secure, options));
            Assert.IsInstanceOf<ZooLockTlsException>(error);
            Assert.AreEqual(ZooLockStatus.Tls, ((ZooLockTlsException)error).Status);
            StringAssert.Contains("unknown issuer", error.Message);
        }

        [Test]
        public void CheckHostnameIsOnByDefault()
        {
            var zk = SecureServers.Tls;
            var error = Assert.Throws<ZooLockTlsException>(() => new ZooKeeperSession(zk.SecureByIp, SecureServers.Trusting(zk)));
            StringAssert.Contains("does not name this host", error.Message);
            var options = SecureServers.Trusting(zk);
            options.CheckHostname = false;
            ConnectAndLock(zk.SecureByIp, options);
        }

        [Test]
        public void SaslConnectAndLock()
        {
            var zk = SecureServers.Sasl;
            ConnectAndLock(zk.Connect, SecureServers.Options().Sasl("DIGEST-MD5", SecureServers.SaslUser, SecureServers.SaslPassword));
        }

        [Test]
        public void SaslWrongPasswordIsAuthFailed()
        {
            var zk = SecureServers.Sasl;
            var options = SecureServers.Options().Sasl("DIGEST-MD5", SecureServers.SaslUser, "wrong-pw");
            var error = Assert.Throws<ZooLockAuthException>(() => new ZooKeeperSession(zk.Connect, options));
            Assert.AreEqual(ZooLockStatus.AuthFailed, error.Status);
            StringAssert.DoesNotContain("wrong-pw", error.Message);
        }

        /// <summary>
        /// Nodes created under a digest ACL (DistributedLock's AddAuthInfo and
        /// AddAccessControl) refuse a session without the credentials
        /// (NoAuth), and serve one with them.
        /// </summary>
        [Test]
        public void DigestAuthAndAclOfCreatedNodes()
        {
            var path = Fixture.Path("digest-acl");
            byte[] hash;
            using (var sha1 = SHA1.Create()) hash = sha1.ComputeHash(Encoding.UTF8.GetBytes("alice:alice-pw"));
            Func<ZooKeeperSessionOptions> alice = () => new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout }
                .AddAuthInfo("digest", Encoding.UTF8.GetBytes("alice:alice-pw"))
                .AddAccessControl("digest", "alice:" + Convert.ToBase64String(hash), ZooKeeperSessionOptions.PermissionAll);
            using (var owner = new ZooKeeperSession(Setup.Zk.Connect, alice()))
            using (var stranger = Fixture.Session())
            using (var friend = new ZooKeeperSession(Setup.Zk.Connect, alice()))
            {
                var handle = new ZooKeeperDistributedLock(path, owner).Acquire(Patience);
                var error = Assert.Throws<ZooLockAuthException>(() => new ZooKeeperDistributedLock(path, stranger).Acquire(Patience));
                Assert.AreEqual(ZooLockStatus.NoAuth, error.Status);
                handle.Dispose();
                using (var again = new ZooKeeperDistributedLock(path, friend).Acquire(Patience)) Assert.IsNotNull(again);
            }
        }

        /// <summary>An ACL of a scheme the server does not know is refused by ZooKeeper, by its own kind.</summary>
        [Test]
        public void AnAclOfAnUnknownSchemeIsInvalid()
        {
            var options = new ZooKeeperSessionOptions { SessionTimeout = Fixture.SessionTimeout }
                .AddAccessControl("no-such-scheme", "x", ZooKeeperSessionOptions.PermissionAll);
            using (var session = new ZooKeeperSession(Setup.Zk.Connect, options))
            {
                var error = Assert.Throws<ZooLockInvalidAclException>(() => session.Create(Fixture.Path("invalid-acl")));
                Assert.AreEqual(ZooLockStatus.InvalidAcl, error.Status);
            }
        }

        [Test]
        public void TlsOptionsNeedUseTlsAndSaslNeedsAMechanism()
        {
            var options = SecureServers.Options();
            options.Ca = "/etc/zk/ca.pem";
            var refused = Assert.Throws<ArgumentException>(() => new ZooKeeperSession("127.0.0.1:1", options));
            // The core's check, word for word as in every language.
            Assert.AreEqual("invalid argument: ca needs TLS on (kazoo's use_ssl=True): with TLS off the session would connect in plaintext", refused.Message);
            var sasl = SecureServers.Options();
            sasl.SaslUsername = "locker";
            Assert.Throws<ArgumentException>(() => new ZooKeeperSession("127.0.0.1:1", sasl));
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZooKeeperSessionOptions().AddAccessControl("world", "anyone", 64));
            Assert.Throws<ArgumentNullException>(() => new ZooKeeperSession("127.0.0.1:1", (ZooKeeperSessionOptions)null));
        }

        [Test]
        public void ToStringAndErrorsNeverShowSecrets()
        {
            var options = SecureServers.Options()
                .AddAuthInfo("digest", Encoding.UTF8.GetBytes("locker:hunter2"))
                .Sasl("DIGEST-MD5", "locker", "sasl-pw-99");
            options.UseTls = true;
            options.Ca = "/etc/zk/ca.pem";
            options.KeyFile = "-----BEGIN PRIVATE KEY-----\nS3CRETKEY\n-----END PRIVATE KEY-----\n";
            options.CertFile = "/etc/zk/c.pem";
            options.KeyFilePassword = "kp-1234";
            var shown = options.ToString();
            var error = Assert.Throws<ZooLockTlsException>(() => new ZooKeeperSession("127.0.0.1:1", options));
            foreach (var secret in new[] { "hunter2", "sasl-pw-99", "S3CRETKEY", "kp-1234" })
            {
                StringAssert.DoesNotContain(secret, shown);
                StringAssert.DoesNotContain(secret, error.Message);
            }
            StringAssert.Contains("/etc/zk/ca.pem", shown);
            StringAssert.Contains("locker", shown);
        }
    }
}
