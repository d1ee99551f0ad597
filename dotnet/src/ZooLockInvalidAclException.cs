using System;

namespace ZooLock
{
    /// <summary>
    /// ZooKeeper refused an ACL: an empty list, an unknown scheme, or an id
    /// its scheme cannot parse. Fix the ACL; sending it again cannot help.
    /// </summary>
    [Serializable]
    public class ZooLockInvalidAclException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockInvalidAclException(string message) : base(ZooLockStatus.InvalidAcl, message) { }
    }
}
