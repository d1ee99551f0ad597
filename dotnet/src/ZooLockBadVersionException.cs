using System;

namespace ZooLock
{
    /// <summary>A write conditional on a node's version found another version: read the node again and decide again.</summary>
    [Serializable]
    public class ZooLockBadVersionException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockBadVersionException(string message) : base(ZooLockStatus.BadVersion, message) { }
    }
}
