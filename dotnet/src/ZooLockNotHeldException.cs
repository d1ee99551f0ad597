using System;

namespace ZooLock
{
    /// <summary>
    /// A fenced write (<see cref="ZooKeeperHandle.Fenced"/>,
    /// <see cref="ZooKeeperLeadership.Fenced"/>) by a handle that no longer
    /// holds: released, lost, or its node deleted by someone else. Nothing of
    /// the write was made.
    /// </summary>
    [Serializable]
    public class ZooLockNotHeldException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNotHeldException(string message) : base(ZooLockStatus.NotHeld, message) { }
    }
}
