using System;
using System.Threading;

namespace ZooLock
{
    /// <summary>Maps native status codes to exceptions: the one place that does.</summary>
    internal static class Errors
    {
        internal static Exception FromStatus(int code, string message, CancellationToken token)
        {
            var status = (ZooLockStatus)code;
            // Only a code this assembly does not know (or Ok) falls through to the base class.
            return StatusMapping.Map(new Mapping(token), status, message) ?? new ZooLockException(status, message);
        }

        /// <summary>The exception an acquire that timed out throws.</summary>
        internal static TimeoutException Timeout(string path, long millis)
        {
            return new TimeoutException(string.Format("could not acquire {0} within {1} ms", path, millis));
        }

        /// <summary>
        /// One exception per status (the generated <see cref="IStatusMapping{T}"/>): a status the core
        /// adds fails to compile here until it is mapped. The message is the core's, unchanged.
        /// </summary>
        sealed class Mapping : IStatusMapping<Exception>
        {
            readonly CancellationToken token;

            internal Mapping(CancellationToken token) { this.token = token; }

            public Exception InvalidPath(string message) { return new ArgumentException(message, "path"); }
            public Exception InvalidConnectString(string message) { return new ArgumentException(message, "connectString"); }
            public Exception InvalidArgument(string message) { return new ArgumentException(message); }
            public Exception ConnectTimeout(string message) { return new ZooLockConnectionException(ZooLockStatus.ConnectTimeout, message); }
            public Exception NoChroot(string message) { return new ZooLockConfigurationException(ZooLockStatus.NoChroot, message); }
            public Exception ConnectionLoss(string message) { return new ZooLockConnectionException(ZooLockStatus.ConnectionLoss, message); }
            public Exception OutcomeUnknown(string message) { return new ZooLockConnectionException(ZooLockStatus.OutcomeUnknown, message); }
            public Exception Cancelled(string message) { return new OperationCanceledException(message, token); }
            public Exception Closed(string message) { return new ObjectDisposedException(typeof(ZooKeeperSession).Name, message); }
            public Exception Forked(string message) { return new ZooLockForkedException(message); }
            public Exception NoAuth(string message) { return new ZooLockAuthException(ZooLockStatus.NoAuth, message); }
            public Exception AuthFailed(string message) { return new ZooLockAuthException(ZooLockStatus.AuthFailed, message); }
            public Exception InconsistentLeases(string message) { return new ZooLockConfigurationException(ZooLockStatus.InconsistentLeases, message); }
            public Exception MixedSchemes(string message) { return new ZooLockConfigurationException(ZooLockStatus.MixedSchemes, message); }
            public Exception ZooKeeper(string message) { return new ZooLockZooKeeperException(message); }
            // What Monitor.Exit throws on a thread that does not hold the monitor.
            public Exception NotOwner(string message) { return new SynchronizationLockException(message); }
            public Exception NoNode(string message) { return new ZooLockNoNodeException(message); }
            public Exception NodeExists(string message) { return new ZooLockNodeExistsException(message); }
            public Exception BadVersion(string message) { return new ZooLockBadVersionException(message); }
            public Exception NotEmpty(string message) { return new ZooLockNotEmptyException(message); }
            public Exception SessionExpired(string message) { return new ZooLockSessionExpiredException(message); }
            public Exception NotHeld(string message) { return new ZooLockNotHeldException(message); }
            public Exception Tls(string message) { return new ZooLockTlsException(ZooLockStatus.Tls, message); }
            public Exception NoChildrenForEphemerals(string message) { return new ZooLockNoChildrenForEphemeralsException(message); }
            public Exception InvalidAcl(string message) { return new ZooLockInvalidAclException(message); }
            public Exception BadArguments(string message) { return new ZooLockBadArgumentsException(message); }
            // The native library's runtime is its own and lives as long as the process: its loss is internal.
            public Exception RuntimeGone(string message) { return new ZooLockInternalException(ZooLockStatus.RuntimeGone, message); }
            // What .NET throws for data in a format it cannot read.
            public Exception BadData(string message) { return new System.IO.InvalidDataException(message); }
            public Exception Panic(string message) { return new ZooLockInternalException(ZooLockStatus.Panic, message); }
        }
    }
}
