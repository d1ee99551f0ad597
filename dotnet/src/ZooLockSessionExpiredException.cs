using System;

namespace ZooLock
{
    /// <summary>
    /// The session expired before the request was answered: its holds are lost. The session connects a new
    /// one by itself: call again.
    /// </summary>
    [Serializable]
    public class ZooLockSessionExpiredException : ZooLockException
    {
        /// <summary>Creates the exception for its native status.</summary>
        public ZooLockSessionExpiredException(string message) : base(ZooLockStatus.SessionExpired, message) { }
    }
}
