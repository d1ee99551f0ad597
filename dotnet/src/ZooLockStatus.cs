using System;
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
        /// <summary>A fenced write by a handle or leadership that no longer holds: nothing of it was made.</summary>
        NotHeld = NativeMethods.ZL_NOT_HELD,
        /// <summary>A TLS connect failed (<see cref="ZooLockTlsException"/>): the message says why.</summary>
        Tls = NativeMethods.ZL_TLS,
        /// <summary>A create below an ephemeral node: ephemeral nodes cannot have children.</summary>
        NoChildrenForEphemerals = NativeMethods.ZL_NO_CHILDREN_FOR_EPHEMERALS,
        /// <summary>ZooKeeper refused an ACL (empty, an unknown scheme, a malformed id).</summary>
        InvalidAcl = NativeMethods.ZL_INVALID_ACL,
        /// <summary>
        /// Not a status of the C ABI, which never ran: its library could not be found or loaded
        /// (<see cref="ZooLockNativeLibraryException"/>).
        /// </summary>
        NativeLibraryUnavailable = -1,
    }
}
