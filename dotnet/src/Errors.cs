using System;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>Maps native status codes to exceptions: the one place that does.</summary>
    internal static class Errors
    {
        internal static Exception FromStatus(int code, string message, CancellationToken token)
        {
            var status = (ZooLockStatus)code;
            switch (status)
            {
                case ZooLockStatus.InvalidPath:
                    return new ArgumentException(message, "path");
                case ZooLockStatus.InvalidConnectString:
                    return new ArgumentException(message, "connectString");
                case ZooLockStatus.InvalidArgument:
                    return new ArgumentException(message);
                case ZooLockStatus.Cancelled:
                    return new OperationCanceledException(message, token);
                case ZooLockStatus.Closed:
                    return new ObjectDisposedException(typeof(ZooKeeperSession).Name, message);
                case ZooLockStatus.ConnectTimeout:
                case ZooLockStatus.ConnectionLoss:
                    return new ZooLockConnectionException(status, message);
                case ZooLockStatus.NoAuth:
                case ZooLockStatus.AuthFailed:
                    return new ZooLockAuthException(status, message);
                case ZooLockStatus.NoChroot:
                case ZooLockStatus.InconsistentLeases:
                    return new ZooLockConfigurationException(status, message);
                case ZooLockStatus.Panic:
                    return new ZooLockInternalException(status, message);
                case ZooLockStatus.NotOwner:
                    // What Monitor.Exit throws on a thread that does not hold the monitor.
                    return new SynchronizationLockException(message);
                case ZooLockStatus.NoNode:
                    return new ZooLockNoNodeException(message);
                case ZooLockStatus.NodeExists:
                    return new ZooLockNodeExistsException(message);
                case ZooLockStatus.BadVersion:
                    return new ZooLockBadVersionException(message);
                case ZooLockStatus.NotEmpty:
                    return new ZooLockNotEmptyException(message);
                case ZooLockStatus.SessionExpired:
                    return new ZooLockSessionExpiredException(message);
                case ZooLockStatus.NotHeld:
                    return new ZooLockNotHeldException(message);
                case ZooLockStatus.Tls:
                    return new ZooLockTlsException(status, message);
                case ZooLockStatus.NoChildrenForEphemerals:
                    return new ZooLockNoChildrenForEphemeralsException(message);
                case ZooLockStatus.InvalidAcl:
                    return new ZooLockInvalidAclException(message);
                default:
                    return new ZooLockException(status, message);
            }
        }

        /// <summary>The exception an acquire that timed out throws.</summary>
        internal static TimeoutException Timeout(string path, long millis)
        {
            return new TimeoutException(string.Format("could not acquire {0} within {1} ms", path, millis));
        }
    }
}
