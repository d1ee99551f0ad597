using System;

namespace ZooLock
{
    /// <summary>
    /// ZooKeeper refused a request's arguments: a reconfiguration spec it
    /// cannot parse, or the like. Fix the request; sending it again cannot help.
    /// </summary>
    [Serializable]
    public class ZooLockBadArgumentsException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockBadArgumentsException(string message) : base(ZooLockStatus.BadArguments, message) { }
    }
}
