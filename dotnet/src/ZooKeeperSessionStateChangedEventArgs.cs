using System;

namespace ZooLock
{
    /// <summary>Tells of a session's new state.</summary>
    public sealed class ZooKeeperSessionStateChangedEventArgs : EventArgs
    {
        /// <summary>The state the session is in now.</summary>
        public ZooKeeperSessionState State { get; private set; }

        internal ZooKeeperSessionStateChangedEventArgs(ZooKeeperSessionState state) { State = state; }
    }
}
