namespace ZooLock
{
#pragma warning disable 618 // the obsolete base goes in the next release; FencingToken and Node then move here
    /// <summary>
    /// A held read or write lock of a <see cref="ZooKeeperDistributedReaderWriterLock"/>
    /// (DistributedLock's name), with its fencing token. Dispose releases it.
    /// </summary>
    public sealed class ZooKeeperDistributedReaderWriterLockHandle : ZooKeeperLockHandle
#pragma warning restore 618
    {
        internal ZooKeeperDistributedReaderWriterLockHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
