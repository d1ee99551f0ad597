namespace ZooLock
{
#pragma warning disable 618 // the obsolete base goes in the next release; FencingToken and Node then move here
    /// <summary>
    /// A held <see cref="ZooKeeperDistributedLock"/> (DistributedLock's name),
    /// with its fencing token. Dispose releases it.
    /// </summary>
    public sealed class ZooKeeperDistributedLockHandle : ZooKeeperLockHandle
#pragma warning restore 618
    {
        internal ZooKeeperDistributedLockHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
