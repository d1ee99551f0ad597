using System;

namespace ZooLock
{
    /// <summary>
    /// A held lock, read lock or write lock, with its fencing token: the base
    /// of <see cref="ZooKeeperDistributedLockHandle"/> and
    /// <see cref="ZooKeeperDistributedReaderWriterLockHandle"/>, by its earlier name.
    /// </summary>
    [Obsolete("ZooKeeperDistributedLockHandle or ZooKeeperDistributedReaderWriterLockHandle, DistributedLock's names; ZooKeeperLockHandle goes in the next release")]
    public abstract class ZooKeeperLockHandle : ZooKeeperHandle
    {
        internal ZooKeeperLockHandle(HolderPool pool, Hold hold) : base(pool, hold)
        {
            long token;
            string node;
            hold.Holder.Describe(out token, out node);
            FencingToken = token;
            Node = node;
        }

        /// <summary>
        /// Strictly increases from one holder of the path to the next (the
        /// zxid that created the holder's node): pass it to the guarded
        /// resource, which refuses tokens lower than the highest it has seen.
        /// </summary>
        public long FencingToken { get; private set; }

        /// <summary>The full path of the ZooKeeper node that holds the lock.</summary>
        public string Node { get; private set; }
    }
}
