using System;

namespace ZooLock
{
    /// <summary>An error from ZooKeeper or zoolock that is not an argument, timeout or cancellation error.</summary>
    [Serializable]
    public class ZooLockException : Exception
    {
        /// <summary>The native status code behind the error.</summary>
        public ZooLockStatus Status { get; private set; }

        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockException(ZooLockStatus status, string message) : base(message) { Status = status; }
    }
}
