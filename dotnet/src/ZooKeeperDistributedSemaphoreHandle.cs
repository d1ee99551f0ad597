namespace ZooLock
{
#pragma warning disable 618 // the obsolete base goes in the next release
    /// <summary>A held lease of a <see cref="ZooKeeperDistributedSemaphore"/> (DistributedLock's name). Dispose releases it.</summary>
    public sealed class ZooKeeperDistributedSemaphoreHandle : ZooKeeperSemaphoreHandle
#pragma warning restore 618
    {
        internal ZooKeeperDistributedSemaphoreHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
