using ZooLock.Native;

namespace ZooLock
{
    /// <summary>The state of a <see cref="ZooKeeperSession"/>.</summary>
    public enum ZooKeeperSessionState
    {
        /// <summary>Connected to a server.</summary>
        Connected = NativeMethods.ZL_SESSION_CONNECTED,
        /// <summary>The connection dropped; the session and its locks may still live. Stop touching guarded resources until <see cref="Connected"/>.</summary>
        Suspended = NativeMethods.ZL_SESSION_SUSPENDED,
        /// <summary>The session expired and its locks are gone; a new session is being opened by itself.</summary>
        Lost = NativeMethods.ZL_SESSION_LOST,
        /// <summary>The session was closed (disposed).</summary>
        Closed = NativeMethods.ZL_SESSION_CLOSED,
    }
}
