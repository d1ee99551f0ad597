using System;

namespace ZooLock
{
    /// <summary>ZooKeeper could not be reached: no server answered in time, or the connection stayed down.</summary>
    [Serializable]
    public class ZooLockConnectionException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockConnectionException(ZooLockStatus status, string message) : base(status, message) { }
    }
}
