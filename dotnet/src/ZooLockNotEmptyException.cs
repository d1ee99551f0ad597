using System;

namespace ZooLock
{
    /// <summary>A delete of a node that has children: delete or wait for the children first.</summary>
    [Serializable]
    public class ZooLockNotEmptyException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNotEmptyException(string message) : base(ZooLockStatus.NotEmpty, message) { }
    }
}
