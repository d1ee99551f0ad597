using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// How a <see cref="ZooKeeperSession"/> connects and what it puts on the
    /// nodes it creates: timeouts, credentials (DistributedLock's
    /// <see cref="AddAuthInfo"/>), the ACL of created nodes
    /// (<see cref="AddAccessControl"/>), TLS and SASL. The names are the core's
    /// and kazoo's (docs/security.md). <see cref="ToString"/>
    /// never shows a password, credential or inline key.
    /// </summary>
    /// <example><code>
    /// var options = new ZooKeeperSessionOptions { UseTls = true, Ca = "/etc/zk/ca.pem" }
    ///     .Sasl("DIGEST-MD5", "locker", password)
    ///     .AddAuthInfo("digest", Encoding.UTF8.GetBytes("locker:" + password))
    ///     .AddAccessControl("auth", "", ZooKeeperSessionOptions.PermissionAll);
    /// using (var session = new ZooKeeperSession("zk1:2281,zk2:2281", options)) { ... }
    /// </code></example>
    public sealed unsafe class ZooKeeperSessionOptions
    {
        /// <summary>ZooKeeper's read permission bit.</summary>
        public const int PermissionRead = 1;
        /// <summary>ZooKeeper's write permission bit.</summary>
        public const int PermissionWrite = 2;
        /// <summary>ZooKeeper's create permission bit.</summary>
        public const int PermissionCreate = 4;
        /// <summary>ZooKeeper's delete permission bit.</summary>
        public const int PermissionDelete = 8;
        /// <summary>ZooKeeper's admin permission bit.</summary>
        public const int PermissionAdmin = 16;
        /// <summary>Every permission.</summary>
        public const int PermissionAll = 31;

        readonly List<KeyValuePair<string, byte[]>> auth = new List<KeyValuePair<string, byte[]>>();
        readonly List<Tuple<int, string, string>> acl = new List<Tuple<int, string, string>>();

        /// <summary>Defaults: 10 s session and 15 s connect timeouts, no credentials, nodes world-readable and writable, plaintext, no SASL.</summary>
        public ZooKeeperSessionOptions()
        {
            VerifyCerts = true;
            CheckHostname = true;
        }

        /// <summary>Asked of the server; <see cref="TimeSpan.Zero"/> for the default (10 s).</summary>
        public TimeSpan SessionTimeout { get; set; }

        /// <summary>How long to try before <see cref="ZooLockConnectionException"/>; <see cref="TimeSpan.Zero"/> for the default (15 s).</summary>
        public TimeSpan ConnectTimeout { get; set; }

        /// <summary>Connect over TLS to the servers' <c>secureClientPort</c>s (kazoo's <c>use_ssl</c>). The other TLS options need it.</summary>
        public bool UseTls { get; set; }

        /// <summary>The CA bundle (PEM file, or the PEM text itself) the servers' certificates must chain to; null for the system's.</summary>
        public string Ca { get; set; }

        /// <summary>This client's certificate chain (PEM file or text), for servers with <c>ssl.clientAuth=need</c>.</summary>
        public string CertFile { get; set; }

        /// <summary>The private key of <see cref="CertFile"/> (PEM file or text): PKCS#8, PKCS#1 or SEC1; encrypted PKCS#8 with <see cref="KeyFilePassword"/>.</summary>
        public string KeyFile { get; set; }

        /// <summary>The password of an encrypted PKCS#8 <see cref="KeyFile"/>.</summary>
        public string KeyFilePassword { get; set; }

        /// <summary>Whether the servers' certificates are verified (on by default). Off is refused with <see cref="ZooLockTlsException"/>: zoolock cannot skip verification.</summary>
        public bool VerifyCerts { get; set; }

        /// <summary>Whether a server's certificate must name the host connected to (on by default).</summary>
        public bool CheckHostname { get; set; }

        /// <summary>The SASL mechanism ("DIGEST-MD5"), or null for no SASL.</summary>
        public string SaslMechanism { get; set; }

        /// <summary>The SASL user, as the servers' JAAS file names it.</summary>
        public string SaslUsername { get; set; }

        /// <summary>The SASL user's password.</summary>
        public string SaslPassword { get; set; }

        /// <summary>
        /// The session to resume instead of opening a new one (kazoo's
        /// <c>client_id=</c>), as <see cref="ZooKeeperSession.ClientId"/> gave it,
        /// maybe in another process; null (the default) opens a new one. If the
        /// server no longer has that session or the password is wrong (it does
        /// not say which), connecting fails with
        /// <see cref="ZooLockSessionExpiredException"/> and opens none. A session
        /// that expires after it was resumed is replaced by a new one, as always.
        /// </summary>
        public ZooKeeperClientId Resume { get; set; }

        /// <summary>Authenticates with SASL on every connection (kazoo's <c>sasl_options</c>).</summary>
        public ZooKeeperSessionOptions Sasl(string mechanism, string username, string password)
        {
            SaslMechanism = mechanism;
            SaslUsername = username;
            SaslPassword = password;
            return this;
        }

        /// <summary>Adds credentials sent when the session connects (<c>addauth</c>), e.g. scheme "digest" with the UTF-8 of "user:password".</summary>
        public ZooKeeperSessionOptions AddAuthInfo(string scheme, IReadOnlyList<byte> auth)
        {
            if (scheme == null) throw new ArgumentNullException("scheme");
            if (auth == null) throw new ArgumentNullException("auth");
            this.auth.Add(new KeyValuePair<string, byte[]>(scheme, auth.ToArray()));
            return this;
        }

        /// <summary>
        /// Adds an entry to the ACL of every node the session creates:
        /// <paramref name="permissionFlags"/> (the <c>Permission*</c> bits) for
        /// <paramref name="scheme"/>:<paramref name="id"/> ("world"/"anyone",
        /// "digest"/"user:hash", "auth"/""). The first entry replaces the default (world:anyone, all).
        /// </summary>
        public ZooKeeperSessionOptions AddAccessControl(string scheme, string id, int permissionFlags)
        {
            if (scheme == null) throw new ArgumentNullException("scheme");
            if (id == null) throw new ArgumentNullException("id");
            if (permissionFlags <= 0 || permissionFlags > PermissionAll)
                throw new ArgumentOutOfRangeException("permissionFlags", permissionFlags, "a combination of the Permission* bits");
            acl.Add(Tuple.Create(permissionFlags, scheme, id));
            return this;
        }

        /// <summary>The options, with every secret shown as &lt;redacted&gt; and inline PEM as &lt;PEM text&gt;.</summary>
        public override string ToString()
        {
            var text = new StringBuilder("ZooKeeperSessionOptions { ");
            text.AppendFormat("SessionTimeout = {0}, ConnectTimeout = {1}", SessionTimeout, ConnectTimeout);
            if (auth.Count > 0)
                text.AppendFormat(", Auth = [{0}]", string.Join(", ", auth.Select(a => a.Key + ":<redacted>")));
            if (acl.Count > 0)
                text.AppendFormat(", Acl = [{0}]", string.Join(", ", acl.Select(a => string.Format("{0}:{1}:{2}", a.Item2, a.Item3, a.Item1))));
            if (UseTls)
                text.AppendFormat(", Tls = {{ Ca = {0}, CertFile = {1}, KeyFile = {2}, KeyFilePassword = {3}, VerifyCerts = {4}, CheckHostname = {5} }}",
                    Shown(Ca), Shown(CertFile), Shown(KeyFile), KeyFilePassword == null ? "null" : "<redacted>", VerifyCerts, CheckHostname);
            if (SaslMechanism != null)
                text.AppendFormat(", Sasl = {{ {0}, {1}, <redacted> }}", SaslMechanism, SaslUsername);
            if (Resume != null)
                text.AppendFormat(", Resume = {0}", Resume);
            return text.Append(" }").ToString();
        }

        /// <summary>A PEM option as <see cref="ToString"/> shows it: the file name, never the PEM text (it may hold a key).</summary>
        static string Shown(string pem)
        {
            if (pem == null) return "null";
            return pem.Contains("-----BEGIN ") ? "<PEM text>" : pem;
        }

        /// <summary>Connects with these options: the native session, or the exception its status maps to.</summary>
        internal ZlSession* Connect(string connectString)
        {
            var native = Build(connectString);
            try
            {
                // The native library loads (Build called it): log events from here on, the connect's too.
                ZooLockLog.Install();
                ZlSession* session;
                Interop.Check(NativeMethods.zl_session_connect_with(native, &session));
                return session;
            }
            finally { NativeMethods.zl_session_options_free(native); }
        }

        /// <summary>The native options (the caller frees them), or the exception a refused value maps to.</summary>
        internal ZlSessionOptions* Build(string connectString)
        {
            uint sessionMillis = ZooKeeperSession.ToMillis(SessionTimeout, "SessionTimeout");
            uint connectMillis = ZooKeeperSession.ToMillis(ConnectTimeout, "ConnectTimeout");
            if (SaslMechanism == null && (SaslUsername != null || SaslPassword != null))
                throw new ArgumentException("SaslUsername and SaslPassword need a SaslMechanism (\"DIGEST-MD5\")", "options");
            ZlSessionOptions* native;
            var connect = Interop.Bytes(connectString);
            fixed (byte* text = connect)
            {
                Interop.Check(NativeMethods.zl_session_options_new(text, (uint)connect.Length, &native));
            }
            try
            {
                if (sessionMillis > 0) Interop.Check(NativeMethods.zl_session_options_set_session_timeout(native, sessionMillis));
                if (connectMillis > 0) Interop.Check(NativeMethods.zl_session_options_set_connect_timeout(native, connectMillis));
                foreach (var pair in auth) Set(native, pair.Key, pair.Value, (o, s, sl, c, cl) => NativeMethods.zl_session_options_add_auth(o, s, sl, c, cl));
                foreach (var entry in acl)
                {
                    var permissions = (uint)entry.Item1;
                    Set(native, entry.Item2, Interop.Bytes(entry.Item3), (o, s, sl, i, il) => NativeMethods.zl_session_options_add_acl(o, permissions, s, sl, i, il));
                }
                SetPem(native, NativeMethods.ZL_PEM_CA, Ca);
                SetPem(native, NativeMethods.ZL_PEM_CERTFILE, CertFile);
                SetPem(native, NativeMethods.ZL_PEM_KEYFILE, KeyFile);
                if (KeyFilePassword != null)
                {
                    var password = Interop.Bytes(KeyFilePassword);
                    fixed (byte* p = password) Interop.Check(NativeMethods.zl_session_options_set_tls_keyfile_password(native, p, (uint)password.Length));
                }
                Interop.Check(NativeMethods.zl_session_options_set_tls_checks(native, VerifyCerts ? 1 : 0, CheckHostname ? 1 : 0));
                // Last, as the setters above turn TLS on: off with any of them given is the core's ArgumentException at the connect.
                Interop.Check(NativeMethods.zl_session_options_set_tls(native, UseTls ? 1 : 0));
                if (SaslMechanism != null)
                {
                    byte[] mechanism = Interop.Bytes(SaslMechanism), user = Interop.Bytes(SaslUsername), password = Interop.Bytes(SaslPassword);
                    fixed (byte* m = mechanism)
                    fixed (byte* u = user)
                    fixed (byte* p = password)
                    {
                        Interop.Check(NativeMethods.zl_session_options_set_sasl(native, m, (uint)mechanism.Length, u, (uint)user.Length, p, (uint)password.Length));
                    }
                }
                if (Resume != null)
                {
                    var password = Resume.Password.ToArray();
                    fixed (byte* p = password) Interop.Check(NativeMethods.zl_session_options_set_resume(native, Resume.SessionId, p, (uint)password.Length));
                }
                return native;
            }
            catch (Exception)
            {
                NativeMethods.zl_session_options_free(native);
                throw;
            }
        }

        delegate int PairSetter(ZlSessionOptions* options, byte* first, uint firstLen, byte* second, uint secondLen);

        static void Set(ZlSessionOptions* native, string first, byte[] second, PairSetter setter)
        {
            var head = Interop.Bytes(first);
            fixed (byte* h = head)
            fixed (byte* s = second)
            {
                Interop.Check(setter(native, h, (uint)head.Length, s, (uint)second.Length));
            }
        }

        static void SetPem(ZlSessionOptions* native, int which, string pem)
        {
            if (pem == null) return;
            var bytes = Interop.Bytes(pem);
            fixed (byte* p = bytes) Interop.Check(NativeMethods.zl_session_options_set_tls_pem(native, which, p, (uint)bytes.Length));
        }
    }
}
