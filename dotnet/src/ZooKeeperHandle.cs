using System;
using System.Threading;

namespace ZooLock
{
    /// <summary>
    /// A held lock, read lock, write lock or semaphore lease (DistributedLock's
    /// <c>IDistributedSynchronizationHandle</c>). Dispose releases it
    /// (repeating is harmless). A handle that is never disposed is released
    /// once the garbage collector finalizes it, or when its session ends.
    /// </summary>
    public abstract class ZooKeeperHandle : IDistributedSynchronizationHandle
    {
        readonly HolderPool pool;
        Hold hold;

        internal ZooKeeperHandle(HolderPool pool, Hold hold)
        {
            this.pool = pool;
            this.hold = hold;
        }

        /// <summary>The lock or semaphore path.</summary>
        public string Path { get { return pool.Path; } }

        /// <summary>
        /// Cancelled when the hold is lost without a release: the session
        /// expired or was closed, the lease ran out, or someone else deleted
        /// the node (<see cref="LostReason"/> says which). Stop using the
        /// guarded resource. DistributedLock's name.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public CancellationToken HandleLostToken
        {
            get
            {
                var current = Current();
                return current.Holder.WatchLoss(current.Key);
            }
        }

        /// <summary><see cref="HandleLostToken"/>, by its earlier name.</summary>
        [Obsolete("HandleLostToken, DistributedLock's name; HandleLost goes in the next release")]
        public CancellationToken HandleLost { get { return HandleLostToken; } }

        /// <summary>Why the hold was lost; <see cref="ZooLock.LostReason.None"/> while it is not.</summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public LostReason LostReason
        {
            get { return LockStates.LostReasonOf(Holder().State); }
        }

        /// <summary>
        /// True while the connection is down: the hold may survive (and come
        /// back), but until then the guarded resource must not be used.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public bool IsSuspended
        {
            get { return Holder().State == (int)LockState.Suspended; }
        }

        /// <summary>
        /// A transaction that commits only while this handle still holds: its
        /// first operation checks the hold's node, so a stale holder (its node
        /// deleted by someone else, its session expired) writes nothing.
        /// </summary>
        /// <exception cref="ZooLockNotHeldException">The handle holds nothing now (its hold was lost).</exception>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public ZooKeeperTransaction Fenced()
        {
            var current = Current();
            var transaction = current.Holder.Fenced();
            // A shared (reentrant) holder may hold a later hold than this handle's, which ended.
            if (current.Key != 0 && !current.Holder.Holds(current.Key))
            {
                transaction.Dispose();
                throw new ZooLockNotHeldException(Path + " is not held by this handle: its hold ended");
            }
            return transaction;
        }

        /// <summary>Releases the hold. Harmless when repeated; never throws.</summary>
        public void Dispose()
        {
            var current = Interlocked.Exchange(ref hold, null);
            if (current != null) pool.Release(current);
        }

        internal Holder Holder() { return Current().Holder; }

        Hold Current()
        {
            var current = Volatile.Read(ref hold);
            if (current == null) throw new ObjectDisposedException(GetType().Name);
            return current;
        }
    }
}
