using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Linq;

namespace ZooLock
{
    /// <summary>
    /// A ZooKeeper session's id and password (kazoo's <c>client_id</c>): with
    /// them another client, in this process or another, resumes the session
    /// (<see cref="ZooKeeperSessionOptions.Resume"/>) and its ephemeral nodes
    /// stay. The password is the session's secret: <see cref="ToString"/>
    /// shows the id only.
    /// </summary>
    public sealed class ZooKeeperClientId : IEquatable<ZooKeeperClientId>
    {
        /// <summary>A session's id and password, as <see cref="ZooKeeperSession.ClientId"/> gave them.</summary>
        public ZooKeeperClientId(long sessionId, IReadOnlyList<byte> password)
        {
            if (password == null) throw new ArgumentNullException("password");
            SessionId = sessionId;
            Password = new ReadOnlyCollection<byte>(password.ToArray());
        }

        /// <summary>The session's id, as ZooKeeper shows it (<c>ephemeralOwner</c>).</summary>
        public long SessionId { get; private set; }

        /// <summary>The session's password (16 bytes): a secret, for whoever may resume the session.</summary>
        public IReadOnlyList<byte> Password { get; private set; }

        /// <summary>The same session id and password.</summary>
        public bool Equals(ZooKeeperClientId other)
        {
            return other != null && SessionId == other.SessionId && Password.SequenceEqual(other.Password);
        }

        /// <summary>The same session id and password.</summary>
        public override bool Equals(object obj) { return Equals(obj as ZooKeeperClientId); }

        /// <summary>From the session id.</summary>
        public override int GetHashCode() { return SessionId.GetHashCode(); }

        /// <summary>The session id in hexadecimal, never the password.</summary>
        public override string ToString()
        {
            return string.Format("ZooKeeperClientId {{ SessionId = 0x{0:x}, Password = <redacted> }}", SessionId);
        }
    }
}
