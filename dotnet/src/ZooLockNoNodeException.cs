using System;

namespace ZooLock
{
    /// <summary>
    /// A node a request needed is not there: typically a lock path's ancestor or the session's chroot,
    /// deleted after the session connected. Create it again, or change the path.
    /// </summary>
    [Serializable]
    public class ZooLockNoNodeException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockNoNodeException(string message) : base(ZooLockStatus.NoNode, message) { }
    }
}
