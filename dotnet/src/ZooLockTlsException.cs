using System;
using System.Security.Authentication;

namespace ZooLock
{
    /// <summary>
    /// A TLS connect failed, and the message says why: a server certificate
    /// <see cref="ZooKeeperSessionOptions.Ca"/> does not vouch for or that does
    /// not name the host, a client certificate the server refuses (or none
    /// where it wants one), an unreadable certificate or key, a wrong
    /// <see cref="ZooKeeperSessionOptions.KeyFilePassword"/>, plaintext and TLS
    /// ports swapped, or <see cref="ZooKeeperSessionOptions.VerifyCerts"/> off.
    /// An <see cref="AuthenticationException"/>, what .NET's own TLS
    /// (<c>SslStream</c>) throws for the same failures, so code that handles
    /// those handles this; <see cref="Status"/> is <see cref="ZooLockStatus.Tls"/>.
    /// </summary>
    [Serializable]
    public class ZooLockTlsException : AuthenticationException
    {
        /// <summary>The native status code behind the error: <see cref="ZooLockStatus.Tls"/>.</summary>
        public ZooLockStatus Status { get; private set; }

        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockTlsException(ZooLockStatus status, string message) : base(message) { Status = status; }
    }
}
