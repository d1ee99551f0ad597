using System;

namespace ZooLock
{
    /// <summary>A failure inside zoolock's native code (a caught panic, its runtime gone); the process is unharmed.</summary>
    [Serializable]
    public class ZooLockInternalException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockInternalException(ZooLockStatus status, string message) : base(status, message) { }
    }
}
