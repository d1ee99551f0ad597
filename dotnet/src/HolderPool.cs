using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The holders of one lock object (or one side of a read/write lock, or
    /// one semaphore): each acquisition takes its own, and a holder that was
    /// released cleanly is kept for the next acquisition. A reentrant lock's
    /// acquisitions all share one holder instead, whose owners (threads) the
    /// core counts.
    /// </summary>
    internal sealed class HolderPool
    {
        /// <summary>Owners of async acquires: above every managed thread id (an int).</summary>
        static long asyncOwners = 1L << 32;

        readonly Func<Holder> create;
        readonly bool shared;
        Holder idle;

        internal HolderPool(Func<Holder> create, bool shared = false)
        {
            this.create = create;
            this.shared = shared;
            // Creating one checks the arguments (the path) at once.
            idle = create();
            Path = idle.Path;
        }

        internal string Path { get; private set; }

        Holder Take()
        {
            return shared ? idle : Interlocked.Exchange(ref idle, null) ?? create();
        }

        /// <summary>Keeps a holder that holds nothing for the next acquisition.</summary>
        internal void Return(Holder holder)
        {
            if (shared) return;
            if (Interlocked.CompareExchange(ref idle, holder, null) != null) holder.Dispose();
        }

        /// <summary>Frees a holder whose acquire failed; the shared one stays.</summary>
        void Drop(Holder holder)
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

        /// <summary>What a public handle needs: its holder, owner and hold.</summary>
        Hold Held(Holder holder, ulong owner)
        {
            // A shared holder's holds follow one another: each is known by its fencing token.
            long key = shared ? holder.Token().GetValueOrDefault(-1) : 0;
            return new Hold(holder, owner, key);
        }

        /// <summary>The hold, or null when the timeout ran out.</summary>
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

        /// <summary>Completes with the hold, or null when the timeout ran out.</summary>
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
            // A holder whose hold was lost is not reused: its loss may still be on its way.
            if (released) Return(holder);
            else holder.Dispose();
        }

        /// <summary>Runs a query on an idle holder.</summary>
        internal T Query<T>(Func<Holder, T> query)
        {
            var holder = Take();
            try { return query(holder); }
            finally { Return(holder); }
        }
    }
}
