using System;

namespace ZooLock
{
    /// <summary>
    /// This process was forked after zoolock started in its parent, whose threads did not survive the fork:
    /// use zoolock only in processes started fresh.
    /// </summary>
    [Serializable]
    public class ZooLockForkedException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockForkedException(string message) : base(ZooLockStatus.Forked, message) { }
    }
}
