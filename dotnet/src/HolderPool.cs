using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The native handles of one lock object (or one side of a read/write
    /// lock, or one semaphore): each acquisition takes its own, and a handle
    /// that was released cleanly is kept for the next acquisition.
    /// </summary>
    internal sealed class HolderPool
    {
        readonly Func<NativeHolder> create;
        NativeHolder idle;

        internal HolderPool(Func<NativeHolder> create)
        {
            this.create = create;
            // Creating one checks the arguments (the path) at once.
            idle = create();
            Path = idle.Path;
        }

        internal string Path { get; private set; }

        NativeHolder Take()
        {
            return Interlocked.Exchange(ref idle, null) ?? create();
        }

        /// <summary>Keeps a handle that holds nothing for the next acquisition.</summary>
        internal void Return(NativeHolder holder)
        {
            if (Interlocked.CompareExchange(ref idle, holder, null) != null) holder.Dispose();
        }

        /// <summary>The held handle, or null when the timeout ran out.</summary>
        internal NativeHolder TryAcquire(long timeoutMs, CancellationToken token)
        {
            var holder = Take();
            bool acquired;
            try { acquired = holder.Acquire(timeoutMs, token); }
            catch (Exception)
            {
                holder.Dispose();
                throw;
            }
            if (acquired) return holder;
            Return(holder);
            return null;
        }

        /// <summary>Completes with the held handle, or null when the timeout ran out.</summary>
        internal async Task<NativeHolder> TryAcquireAsync(long timeoutMs, CancellationToken token)
        {
            var holder = Take();
            bool acquired;
            try { acquired = await holder.AcquireAsync(timeoutMs, token).ConfigureAwait(false); }
            catch (Exception)
            {
                holder.Dispose();
                throw;
            }
            if (acquired) return holder;
            Return(holder);
            return null;
        }

        /// <summary>Runs a query on an idle handle.</summary>
        internal T Query<T>(Func<NativeHolder, T> query)
        {
            var holder = Take();
            try { return query(holder); }
            finally { Return(holder); }
        }
    }

    /// <summary>Why a hold ended without a release (the core's <c>LostReason</c>).</summary>
    public enum LostReason
    {
        /// <summary>The hold is not lost.</summary>
        None = 0,
        /// <summary>The session expired: its ephemeral nodes are gone.</summary>
        SessionExpired,
        /// <summary>The session was closed.</summary>
        SessionClosed,
        /// <summary>The lease given at acquire ran out.</summary>
        LeaseExpired,
        /// <summary>Someone else deleted the holder's node (an operator breaking the lock).</summary>
        NodeDeleted,
    }

    /// <summary>
    /// A held lock, read lock, write lock or semaphore lease. Dispose
    /// releases it (repeating is harmless). A handle that is never disposed is
    /// released once the garbage collector finalizes it, or when its session ends.
    /// </summary>
    public abstract class ZooKeeperHandle : IDisposable
    {
        readonly HolderPool pool;
        NativeHolder holder;

        internal ZooKeeperHandle(HolderPool pool, NativeHolder holder)
        {
            this.pool = pool;
            this.holder = holder;
        }

        /// <summary>The lock or semaphore path.</summary>
        public string Path { get { return pool.Path; } }

        /// <summary>
        /// Cancelled when the hold is lost without a release: the session
        /// expired or was closed, the lease ran out, or someone else deleted
        /// the node (<see cref="LostReason"/> says which). Stop using the guarded resource.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public CancellationToken HandleLost { get { return Holder().WatchLoss(); } }

        /// <summary>Why the hold was lost; <see cref="ZooLock.LostReason.None"/> while it is not.</summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public LostReason LostReason
        {
            get
            {
                switch (Holder().State)
                {
                    case Native.NativeMethods.ZL_LOCK_LOST_SESSION_EXPIRED: return LostReason.SessionExpired;
                    case Native.NativeMethods.ZL_LOCK_LOST_SESSION_CLOSED: return LostReason.SessionClosed;
                    case Native.NativeMethods.ZL_LOCK_LOST_LEASE_EXPIRED: return LostReason.LeaseExpired;
                    case Native.NativeMethods.ZL_LOCK_LOST_NODE_DELETED: return LostReason.NodeDeleted;
                    default: return LostReason.None;
                }
            }
        }

        /// <summary>
        /// True while the connection is down: the hold may survive (and come
        /// back), but until then the guarded resource must not be used.
        /// </summary>
        public bool IsSuspended
        {
            get
            {
                var current = Volatile.Read(ref holder);
                return current != null && current.State == Native.NativeMethods.ZL_LOCK_SUSPENDED;
            }
        }

        /// <summary>Releases the hold. Harmless when repeated; never throws.</summary>
        public void Dispose()
        {
            var current = Interlocked.Exchange(ref holder, null);
            if (current == null) return;
            current.EndHold();
            bool released;
            try { released = current.Release(); }
            catch (Exception) { released = false; }
            // A handle whose hold was lost is not reused: its loss may still be on its way.
            if (released) pool.Return(current);
            else current.Dispose();
        }

        internal NativeHolder Holder()
        {
            var current = Volatile.Read(ref holder);
            if (current == null) throw new ObjectDisposedException(GetType().Name);
            return current;
        }
    }

    /// <summary>A held lock, read lock or write lock, with its fencing token.</summary>
    public sealed class ZooKeeperLockHandle : ZooKeeperHandle
    {
        internal ZooKeeperLockHandle(HolderPool pool, NativeHolder holder) : base(pool, holder)
        {
            long token;
            string node;
            holder.Describe(out token, out node);
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

    /// <summary>A held semaphore lease.</summary>
    public sealed class ZooKeeperSemaphoreHandle : ZooKeeperHandle
    {
        internal ZooKeeperSemaphoreHandle(HolderPool pool, NativeHolder holder) : base(pool, holder) { }
    }
}
