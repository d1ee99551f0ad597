using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's options for the locks made from a connection string:
    /// the session they share (<see cref="SessionTimeout"/>,
    /// <see cref="ConnectTimeout"/>, <see cref="AddAuthInfo"/>) and the ACL of
    /// the nodes they create (<see cref="AddAccessControl"/>), as
    /// <see cref="ZooKeeperSessionOptions"/> names them. TLS and SASL need a
    /// <see cref="ZooKeeperSession"/> of your own.
    /// </summary>
    public sealed class ZooKeeperDistributedSynchronizationOptionsBuilder
    {
        readonly ZooKeeperSessionOptions options = new ZooKeeperSessionOptions();
        readonly StringBuilder identity = new StringBuilder();
        ZooKeeperNamingScheme naming = ZooKeeperNamingScheme.Kazoo;

        ZooKeeperDistributedSynchronizationOptionsBuilder() { }

        /// <summary>Asked of the server (zoolock's default: 10 s). Waiters wait up to this long after a holder's process dies.</summary>
        /// <exception cref="ArgumentOutOfRangeException">Not positive.</exception>
        public ZooKeeperDistributedSynchronizationOptionsBuilder SessionTimeout(TimeSpan sessionTimeout)
        {
            options.SessionTimeout = Positive(sessionTimeout, "sessionTimeout");
            return this;
        }

        /// <summary>How long to try to connect before <see cref="ZooLockConnectionException"/> (default: 15 s).</summary>
        /// <exception cref="ArgumentOutOfRangeException">Not positive.</exception>
        public ZooKeeperDistributedSynchronizationOptionsBuilder ConnectTimeout(TimeSpan connectTimeout)
        {
            options.ConnectTimeout = Positive(connectTimeout, "connectTimeout");
            return this;
        }

        /// <summary>Adds credentials sent when the session connects (<see cref="ZooKeeperSessionOptions.AddAuthInfo"/>).</summary>
        public ZooKeeperDistributedSynchronizationOptionsBuilder AddAuthInfo(string scheme, IReadOnlyList<byte> auth)
        {
            options.AddAuthInfo(scheme, auth);
            identity.Append("\nauth ").Append(scheme).Append(' ').Append(Convert.ToBase64String(auth.ToArray()));
            return this;
        }

        /// <summary>Adds an entry to the ACL of the nodes created (<see cref="ZooKeeperSessionOptions.AddAccessControl"/>).</summary>
        public ZooKeeperDistributedSynchronizationOptionsBuilder AddAccessControl(string scheme, string id, int permissionFlags)
        {
            options.AddAccessControl(scheme, id, permissionFlags);
            identity.Append("\nacl ").Append(scheme).Append(' ').Append(id).Append(' ').Append(permissionFlags);
            return this;
        }

        /// <summary>
        /// Whose node names a lock writes (default: kazoo's, as every zoolock
        /// language does). <see cref="ZooKeeperNamingScheme.DistributedLock"/>
        /// while services on DistributedLock.ZooKeeper share the path: its
        /// <c>lock-&lt;seq&gt;</c>, so that the two exclude each other and a
        /// fleet moves one service at a time (mutexes only; docs/dotnet.md).
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException">Not a scheme zoolock writes.</exception>
        public ZooKeeperDistributedSynchronizationOptionsBuilder NamingScheme(ZooKeeperNamingScheme scheme)
        {
            naming = Written(scheme, "scheme");
            return this;
        }

        /// <summary><paramref name="scheme"/>, if zoolock writes nodes of that scheme.</summary>
        internal static ZooKeeperNamingScheme Written(ZooKeeperNamingScheme scheme, string parameter)
        {
            if (!Enum.IsDefined(typeof(ZooKeeperNamingScheme), scheme) || scheme == ZooKeeperNamingScheme.Other)
                throw new ArgumentOutOfRangeException(parameter, scheme, "not a scheme zoolock writes");
            return scheme;
        }

        static TimeSpan Positive(TimeSpan value, string parameter)
        {
            if (value <= TimeSpan.Zero) throw new ArgumentOutOfRangeException(parameter, value, "must be positive");
            return value;
        }

        /// <summary>
        /// The session source of <paramref name="connectionString"/> with the options
        /// <paramref name="configure"/> sets: locks with equal ones share one session.
        /// </summary>
        internal static SessionSource Source(string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> configure)
        {
            if (connectionString == null) throw new ArgumentNullException("connectionString");
            var builder = new ZooKeeperDistributedSynchronizationOptionsBuilder();
            if (configure != null) configure(builder);
            var key = string.Format("{0}\nsession {1}\nconnect {2}{3}", connectionString,
                builder.options.SessionTimeout.Ticks, builder.options.ConnectTimeout.Ticks, builder.identity);
            return new SharedSessions.Source(key, connectionString, builder.options) { Naming = builder.naming };
        }
    }
}
