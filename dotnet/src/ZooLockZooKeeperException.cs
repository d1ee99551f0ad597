using System;

namespace ZooLock
{
    /// <summary>
    /// Another failure of a ZooKeeper request, one with no status of its own (a quota, …): the message says which.
    /// </summary>
    [Serializable]
    public class ZooLockZooKeeperException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockZooKeeperException(string message) : base(ZooLockStatus.ZooKeeper, message) { }
    }
}
