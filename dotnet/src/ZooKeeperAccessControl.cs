using System;

namespace ZooLock
{
    /// <summary>
    /// One entry of a node's ACL: <see cref="Permissions"/> (the
    /// <c>ZooKeeperSessionOptions.Permission*</c> bits) for
    /// <see cref="Scheme"/>:<see cref="Id"/> ("world"/"anyone",
    /// "digest"/"user:hash", "auth"/"").
    /// </summary>
    public sealed class ZooKeeperAccessControl : IEquatable<ZooKeeperAccessControl>
    {
        /// <summary>An entry; <paramref name="permissions"/> a combination of the Permission* bits.</summary>
        public ZooKeeperAccessControl(string scheme, string id, int permissions)
        {
            if (scheme == null) throw new ArgumentNullException("scheme");
            if (id == null) throw new ArgumentNullException("id");
            if (permissions <= 0 || permissions > ZooKeeperSessionOptions.PermissionAll)
                throw new ArgumentOutOfRangeException("permissions", permissions, "a combination of the Permission* bits");
            Scheme = scheme;
            Id = id;
            Permissions = permissions;
        }

        /// <summary>The authentication scheme: "world", "digest", "auth", "ip", …</summary>
        public string Scheme { get; private set; }

        /// <summary>Who, in the scheme's terms.</summary>
        public string Id { get; private set; }

        /// <summary>The <c>ZooKeeperSessionOptions.Permission*</c> bits granted.</summary>
        public int Permissions { get; private set; }

        /// <summary>Same scheme, id and permissions.</summary>
        public bool Equals(ZooKeeperAccessControl other)
        {
            return other != null && Scheme == other.Scheme && Id == other.Id && Permissions == other.Permissions;
        }

        /// <inheritdoc />
        public override bool Equals(object obj) { return Equals(obj as ZooKeeperAccessControl); }

        /// <inheritdoc />
        public override int GetHashCode() { return (Scheme + ":" + Id).GetHashCode() ^ Permissions; }

        /// <summary>"scheme:id:permissions".</summary>
        public override string ToString() { return Scheme + ":" + Id + ":" + Permissions; }
    }
}
