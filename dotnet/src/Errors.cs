using System;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>The status codes of zoolock's C ABI, as carried by <see cref="ZooLockException.Status"/>.</summary>
    public enum ZooLockStatus
    {
        /// <summary>Success.</summary>
        Ok = NativeMethods.ZL_OK,
        /// <summary>A path ZooKeeper would refuse.</summary>
        InvalidPath = NativeMethods.ZL_INVALID_PATH,
        /// <summary>A connect string with no host, a bad port or a bad chroot.</summary>
        InvalidConnectString = NativeMethods.ZL_INVALID_CONNECT_STRING,
        /// <summary>Another bad argument.</summary>
        InvalidArgument = NativeMethods.ZL_INVALID_ARGUMENT,
        /// <summary>No server answered within the connect timeout.</summary>
        ConnectTimeout = NativeMethods.ZL_CONNECT_TIMEOUT,
        /// <summary>The chroot of the connect string does not exist.</summary>
        NoChroot = NativeMethods.ZL_NO_CHROOT,
        /// <summary>The connection stayed down longer than a request may wait.</summary>
        ConnectionLoss = NativeMethods.ZL_CONNECTION_LOSS,
        /// <summary>The acquire was cancelled.</summary>
        Cancelled = NativeMethods.ZL_CANCELLED,
        /// <summary>The session was closed.</summary>
        Closed = NativeMethods.ZL_CLOSED,
        /// <summary>The process was forked after zoolock started in its parent.</summary>
        Forked = NativeMethods.ZL_FORKED,
        /// <summary>The session's credentials do not allow the operation.</summary>
        NoAuth = NativeMethods.ZL_NO_AUTH,
        /// <summary>ZooKeeper refused the session's credentials.</summary>
        AuthFailed = NativeMethods.ZL_AUTH_FAILED,
        /// <summary>The semaphore was set up for another number of leases.</summary>
        InconsistentLeases = NativeMethods.ZL_INCONSISTENT_LEASES,
        /// <summary>Another failure of a ZooKeeper request, with no status of its own: the message says which.</summary>
        ZooKeeper = NativeMethods.ZL_ZOOKEEPER,
        /// <summary>zoolock's native code panicked; the panic was caught and the process is unharmed.</summary>
        Panic = NativeMethods.ZL_PANIC,
        /// <summary>A release of a reentrant lock by another owner (thread) than the one holding it.</summary>
        NotOwner = NativeMethods.ZL_NOT_OWNER,
        /// <summary>A node a request needed is not there.</summary>
        NoNode = NativeMethods.ZL_NO_NODE,
        /// <summary>A node zoolock meant to create exists already.</summary>
        NodeExists = NativeMethods.ZL_NODE_EXISTS,
        /// <summary>A write conditional on a node's version found another version.</summary>
        BadVersion = NativeMethods.ZL_BAD_VERSION,
        /// <summary>A delete of a node that has children.</summary>
        NotEmpty = NativeMethods.ZL_NOT_EMPTY,
        /// <summary>The session expired before the request was answered.</summary>
        SessionExpired = NativeMethods.ZL_SESSION_EXPIRED,
    }

    /// <summary>An error from ZooKeeper or zoolock that is not an argument, timeout or cancellation error.</summary>
    [Serializable]
    public class ZooLockException : Exception
    {
        /// <summary>The native status code behind the error.</summary>
        public ZooLockStatus Status { get; private set; }

        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockException(ZooLockStatus status, string message) : base(message) { Status = status; }
    }

    /// <summary>ZooKeeper could not be reached: no server answered in time, or the connection stayed down.</summary>
    [Serializable]
    public class ZooLockConnectionException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockConnectionException(ZooLockStatus status, string message) : base(status, message) { }
    }

    /// <summary>ZooKeeper refused the session's credentials or the operation under them.</summary>
    [Serializable]
    public class ZooLockAuthException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockAuthException(ZooLockStatus status, string message) : base(status, message) { }
    }

    /// <summary>What is on the server does not fit the arguments: a missing chroot, a semaphore of another size.</summary>
    [Serializable]
    public class ZooLockConfigurationException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockConfigurationException(ZooLockStatus status, string message) : base(status, message) { }
    }

    /// <summary>A failure inside zoolock's native code (a caught panic); the process is unharmed.</summary>
    [Serializable]
    public class ZooLockInternalException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockInternalException(ZooLockStatus status, string message) : base(status, message) { }
    }

    /// <summary>
    /// A node a request needed is not there: typically a lock path's ancestor or the session's chroot,
    /// deleted after the session connected. Create it again, or change the path.
    /// </summary>
    [Serializable]
    public class ZooLockNoNodeException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNoNodeException(string message) : base(ZooLockStatus.NoNode, message) { }
    }

    /// <summary>A node zoolock meant to create exists already: another client made it.</summary>
    [Serializable]
    public class ZooLockNodeExistsException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNodeExistsException(string message) : base(ZooLockStatus.NodeExists, message) { }
    }

    /// <summary>A write conditional on a node's version found another version: read the node again and decide again.</summary>
    [Serializable]
    public class ZooLockBadVersionException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockBadVersionException(string message) : base(ZooLockStatus.BadVersion, message) { }
    }

    /// <summary>A delete of a node that has children: delete or wait for the children first.</summary>
    [Serializable]
    public class ZooLockNotEmptyException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNotEmptyException(string message) : base(ZooLockStatus.NotEmpty, message) { }
    }

    /// <summary>
    /// The session expired before the request was answered: its holds are lost. The session connects a new
    /// one by itself: call again.
    /// </summary>
    [Serializable]
    public class ZooLockSessionExpiredException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockSessionExpiredException(string message) : base(ZooLockStatus.SessionExpired, message) { }
    }

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
