using System;

namespace ZooLock
{
    /// <summary>A create below an ephemeral node: ephemeral nodes cannot have children. Make the parent persistent.</summary>
    [Serializable]
    public class ZooLockNoChildrenForEphemeralsException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNoChildrenForEphemeralsException(string message) : base(ZooLockStatus.NoChildrenForEphemerals, message) { }
    }
}
