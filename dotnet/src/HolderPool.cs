using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The holders of one lock object (or one side of a read/write lock, or
    /// one semaphore): each acquisition leases the session from the lock's
    /// <see cref="SessionSource"/> and takes a holder of its own; on a session
    /// that was given, a holder released cleanly is kept for the next
    /// acquisition. A reentrant lock's acquisitions all share one holder
    /// instead, whose owners (threads) the core counts.
    /// </summary>
    internal sealed class HolderPool
    {
        /// <summary>Owners of async acquires: above every managed thread id (an int).</summary>
        static long asyncOwners = 1L << 32;

        readonly SessionSource source;
        readonly Func<ZooKeeperSession, Holder> create;
        readonly bool shared;
        /// <summary>Kept only on a given session: a shared one may close under it.</summary>
        Holder idle;

        /// <param name="source">Where the session comes from.</param>
        /// <param name="path">The lock path, checked here as a lock path.</param>
        /// <param name="create">Makes a holder on a session.</param>
        /// <param name="shared">One holder for every acquisition (a reentrant lock; a given session only).</param>
        internal HolderPool(SessionSource source, string path, Func<ZooKeeperSession, Holder> create, bool shared = false)
        {
            this.source = source;
            this.create = create;
            this.shared = shared;
            Path = path;
            var given = source as SessionSource.Given;
            // Creating one checks the arguments at once, and that the session is not disposed.
            if (given != null) idle = create(given.Session);
            else ZooKeeperPath.Check(path, true);
        }

        internal string Path { get; private set; }

        Holder Take(Lease lease)
        {
            if (idle == null || idle.Session != lease.Session) return create(lease.Session);
            return shared ? idle : Interlocked.Exchange(ref idle, null) ?? create(lease.Session);
        }

        /// <summary>Keeps a holder that holds nothing for the next acquisition on a given session.</summary>
        void Return(Holder holder)
        {
            if (shared && holder == idle) return;
            if (!(source is SessionSource.Given) || Interlocked.CompareExchange(ref idle, holder, null) != null) holder.Dispose();
        }

        /// <summary>Frees a holder whose acquire failed, and the lease; the shared holder stays.</summary>
        void Drop(Holder holder, Lease lease)
        {
            if (!shared) holder.Dispose();
            lease.Dispose();
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

        /// <summary>What a public handle needs: its holder, owner, hold and lease.</summary>
        Hold Held(Holder holder, ulong owner, Lease lease)
        {
            // A shared holder's holds follow one another: each is known by its fencing token.
            long key = shared ? holder.Token().GetValueOrDefault(-1) : 0;
            return new Hold(holder, owner, key, lease);
        }

        /// <summary>The hold, or null when the timeout ran out.</summary>
        internal Hold TryAcquire(long timeoutMs, CancellationToken token)
        {
            token.ThrowIfCancellationRequested();
            var started = Environment.TickCount;
            var lease = source.Take(timeoutMs, token);
            if (lease == null) return null;
            timeoutMs = Left(timeoutMs, started);
            Holder holder;
            try { holder = Take(lease); }
            catch (Exception)
            {
                lease.Dispose();
                throw;
            }
            var owner = NewOwner(false);
            bool acquired;
            try { acquired = holder.Acquire(timeoutMs, token, owner); }
            catch (Exception)
            {
                Drop(holder, lease);
                throw;
            }
            if (acquired) return Held(holder, owner, lease);
            Return(holder);
            lease.Dispose();
            return null;
        }

        /// <summary>Completes with the hold, or null when the timeout ran out.</summary>
        internal async Task<Hold> TryAcquireAsync(long timeoutMs, CancellationToken token)
        {
            token.ThrowIfCancellationRequested();
            var started = Environment.TickCount;
            var lease = await source.TakeAsync(timeoutMs, token).ConfigureAwait(false);
            if (lease == null) return null;
            timeoutMs = Left(timeoutMs, started);
            Holder holder;
            try { holder = Take(lease); }
            catch (Exception)
            {
                lease.Dispose();
                throw;
            }
            var owner = NewOwner(true);
            bool acquired;
            try { acquired = await holder.AcquireAsync(timeoutMs, token, owner).ConfigureAwait(false); }
            catch (Exception)
            {
                Drop(holder, lease);
                throw;
            }
            if (acquired) return Held(holder, owner, lease);
            Return(holder);
            lease.Dispose();
            return null;
        }

        /// <summary>What is left of an acquire's limit after its connect (-1: for ever).</summary>
        static long Left(long timeoutMs, int started)
        {
            if (timeoutMs < 0) return timeoutMs;
            return Math.Max(0, timeoutMs - unchecked(Environment.TickCount - started));
        }

        /// <summary>Releases one acquisition, then its lease; never throws.</summary>
        internal void Release(Hold hold)
        {
            try { Let(hold); }
            finally { hold.Lease.Dispose(); }
        }

        void Let(Hold hold)
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

        /// <summary>Runs a query on an idle holder (on a shared session, a holder of a lease of its own).</summary>
        internal T Query<T>(Func<Holder, T> query)
        {
            using (var lease = source.Take())
            {
                var holder = Take(lease);
                try { return query(holder); }
                finally { Return(holder); }
            }
        }
    }
}
