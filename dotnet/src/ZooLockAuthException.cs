using System;

namespace ZooLock
{
    /// <summary>ZooKeeper refused the session's credentials or the operation under them.</summary>
    [Serializable]
    public class ZooLockAuthException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockAuthException(ZooLockStatus status, string message) : base(status, message) { }
    }
}
