using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// A read/write lock on a ZooKeeper path (kazoo's <c>ReadLock</c> and
    /// <c>WriteLock</c>): readers share it, a writer excludes everyone, and
    /// all queue in order.
    /// </summary>
    public sealed class ZooKeeperDistributedReaderWriterLock
    {
        static readonly Func<HolderPool, Hold, ZooKeeperLockHandle> Wrap = (pool, held) => new ZooKeeperLockHandle(pool, held);
        readonly HolderPool readers;
        readonly HolderPool writers;

        /// <summary>A read/write lock on <paramref name="path"/> through <paramref name="session"/>.</summary>
        /// <param name="path">An absolute ZooKeeper path, e.g. <c>/locks/ledger</c>.</param>
        /// <param name="session">The session to lock through.</param>
        /// <param name="identifier">Stored in this client's nodes.</param>
        /// <param name="mirror">As <see cref="ZooKeeperDistributedLock"/>'s: false waits by listing.</param>
        /// <exception cref="ArgumentException">The path is null, empty or not a valid lock path.</exception>
        public ZooKeeperDistributedReaderWriterLock(string path, ZooKeeperSession session, string identifier = null, bool mirror = true)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            readers = new HolderPool(() => Holder.NewLock(session, path, (int)LockKind.Read, identifier, mirror: mirror));
            writers = new HolderPool(() => Holder.NewLock(session, path, (int)LockKind.Write, identifier, mirror: mirror));
        }

        /// <summary>The lock path.</summary>
        public string Path { get { return readers.Path; } }

        /// <summary>Takes the read lock, waiting up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">A writer held or queued before for the whole timeout.</exception>
        public ZooKeeperLockHandle AcquireReadLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.Acquire(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock if possible within <paramref name="timeout"/>; null if not.</summary>
        public ZooKeeperLockHandle TryAcquireReadLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquire(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock without blocking a thread.</summary>
        public Task<ZooKeeperLockHandle> AcquireReadLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.AcquireAsync(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock without blocking a thread if possible; null if not.</summary>
        public Task<ZooKeeperLockHandle> TryAcquireReadLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquireAsync(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock, waiting up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">Readers or a writer held it for the whole timeout.</exception>
        public ZooKeeperLockHandle AcquireWriteLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.Acquire(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock if possible within <paramref name="timeout"/>; null if not.</summary>
        public ZooKeeperLockHandle TryAcquireWriteLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquire(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock without blocking a thread.</summary>
        public Task<ZooKeeperLockHandle> AcquireWriteLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.AcquireAsync(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock without blocking a thread if possible; null if not.</summary>
        public Task<ZooKeeperLockHandle> TryAcquireWriteLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquireAsync(writers, timeout, cancellationToken, Wrap);
        }
    }
}
