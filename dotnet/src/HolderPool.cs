using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The native handles of one lock object (or one side of a read/write
    /// lock, or one semaphore): each acquisition takes its own, and a handle
    /// that was released cleanly is kept for the next acquisition. A
    /// reentrant lock's acquisitions all share one native handle instead,
    /// whose owners (threads) the core counts.
    /// </summary>
    internal sealed class HolderPool
    {
        /// <summary>Owners of async acquires: above every managed thread id (an int).</summary>
        static long asyncOwners = 1L << 32;

        readonly Func<NativeHolder> create;
        readonly bool shared;
        NativeHolder idle;

        internal HolderPool(Func<NativeHolder> create, bool shared = false)
        {
            this.create = create;
            this.shared = shared;
            // Creating one checks the arguments (the path) at once.
            idle = create();
            Path = idle.Path;
        }

        internal string Path { get; private set; }

        NativeHolder Take()
        {
            return shared ? idle : Interlocked.Exchange(ref idle, null) ?? create();
        }

        /// <summary>Keeps a handle that holds nothing for the next acquisition.</summary>
        internal void Return(NativeHolder holder)
        {
            if (shared) return;
            if (Interlocked.CompareExchange(ref idle, holder, null) != null) holder.Dispose();
        }

        /// <summary>Frees a handle whose acquire failed; the shared one stays.</summary>
        void Drop(NativeHolder holder)
        {
            if (!shared) holder.Dispose();
        }

        /// <summary>
        /// Who acquires a reentrant lock: the calling thread, as in Curator. An
        /// async acquire has no thread of its own (its continuations run on any),
        /// so each is an owner of its own and never re-enters.
        /// </summary>
        ulong NewOwner(bool async)
        {
            if (!shared) return 0;
            return async ? (ulong)Interlocked.Increment(ref asyncOwners) : (ulong)Environment.CurrentManagedThreadId;
        }

        /// <summary>What a held handle needs: its native handle, owner and hold.</summary>
        Hold Held(NativeHolder holder, ulong owner)
        {
            // A shared handle's holds follow one another: each is known by its fencing token.
            long key = shared ? holder.Token().GetValueOrDefault(-1) : 0;
            return new Hold(holder, owner, key);
        }

        /// <summary>The held handle, or null when the timeout ran out.</summary>
        internal Hold TryAcquire(long timeoutMs, CancellationToken token)
        {
            var holder = Take();
            var owner = NewOwner(false);
            bool acquired;
            try { acquired = holder.Acquire(timeoutMs, token, owner); }
            catch (Exception)
            {
                Drop(holder);
                throw;
            }
            if (acquired) return Held(holder, owner);
            Return(holder);
            return null;
        }

        /// <summary>Completes with the held handle, or null when the timeout ran out.</summary>
        internal async Task<Hold> TryAcquireAsync(long timeoutMs, CancellationToken token)
        {
            var holder = Take();
            var owner = NewOwner(true);
            bool acquired;
            try { acquired = await holder.AcquireAsync(timeoutMs, token, owner).ConfigureAwait(false); }
            catch (Exception)
            {
                Drop(holder);
                throw;
            }
            if (acquired) return Held(holder, owner);
            Return(holder);
            return null;
        }

        /// <summary>Releases one acquisition; never throws.</summary>
        internal void Release(Hold hold)
        {
            var holder = hold.Holder;
            if (shared)
            {
                // Only while its own hold lasts: after a loss, the same owner's release would count down a newer hold.
                try { if (holder.Holds(hold.Key)) holder.Release(hold.Owner); }
                catch (Exception) { /* released by the session's end */ }
                return;
            }
            holder.EndHold();
            bool released;
            try { released = holder.Release(hold.Owner); }
            catch (Exception) { released = false; }
            // A handle whose hold was lost is not reused: its loss may still be on its way.
            if (released) Return(holder);
            else holder.Dispose();
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
        /// the node (<see cref="LostReason"/> says which). Stop using the guarded resource.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The handle was disposed.</exception>
        public CancellationToken HandleLost
        {
            get
            {
                var current = Current();
                return current.Holder.WatchLoss(current.Key);
            }
        }

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
                var current = Volatile.Read(ref hold);
                return current != null && current.Holder.State == Native.NativeMethods.ZL_LOCK_SUSPENDED;
            }
        }

        /// <summary>Releases the hold. Harmless when repeated; never throws.</summary>
        public void Dispose()
        {
            var current = Interlocked.Exchange(ref hold, null);
            if (current != null) pool.Release(current);
        }

        internal NativeHolder Holder() { return Current().Holder; }

        Hold Current()
        {
            var current = Volatile.Read(ref hold);
            if (current == null) throw new ObjectDisposedException(GetType().Name);
            return current;
        }
    }

    /// <summary>One acquisition: its native handle, who acquired (for a reentrant lock) and which hold (on a shared handle).</summary>
    internal sealed class Hold
    {
        internal readonly NativeHolder Holder;
        internal readonly ulong Owner;
        internal readonly long Key;

        internal Hold(NativeHolder holder, ulong owner, long key)
        {
            Holder = holder;
            Owner = owner;
            Key = key;
        }
    }

    /// <summary>A held lock, read lock or write lock, with its fencing token.</summary>
    public sealed class ZooKeeperLockHandle : ZooKeeperHandle
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

    /// <summary>A held semaphore lease.</summary>
    public sealed class ZooKeeperSemaphoreHandle : ZooKeeperHandle
    {
        internal ZooKeeperSemaphoreHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
