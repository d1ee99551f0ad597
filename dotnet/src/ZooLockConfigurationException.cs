using System;

namespace ZooLock
{
    /// <summary>What is on the server does not fit the arguments: a missing chroot, a semaphore of another size.</summary>
    [Serializable]
    public class ZooLockConfigurationException : ZooLockException
    {
        /// <summary>Creates the exception for a native status.</summary>
        public ZooLockConfigurationException(ZooLockStatus status, string message) : base(status, message) { }
    }
}
