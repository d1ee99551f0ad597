using System;

namespace ZooLock
{
    /// <summary>A held semaphore lease: the base of <see cref="ZooKeeperDistributedSemaphoreHandle"/>, by its earlier name.</summary>
    [Obsolete("ZooKeeperDistributedSemaphoreHandle, DistributedLock's name; ZooKeeperSemaphoreHandle goes in the next release")]
    public abstract class ZooKeeperSemaphoreHandle : ZooKeeperHandle
    {
        internal ZooKeeperSemaphoreHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
