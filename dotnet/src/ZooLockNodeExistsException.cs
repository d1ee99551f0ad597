using System;

namespace ZooLock
{
    /// <summary>A node zoolock meant to create exists already: another client made it.</summary>
    [Serializable]
    public class ZooLockNodeExistsException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNodeExistsException(string message) : base(ZooLockStatus.NodeExists, message) { }
    }
}
