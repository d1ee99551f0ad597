using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// A read/write lock on a ZooKeeper path (kazoo's <c>ReadLock</c> and
    /// <c>WriteLock</c>): readers share it, a writer excludes everyone, and
    /// all queue in order. Made from a session of your own, or, as
    /// DistributedLock's, from a lock name (or path) and a connection string.
    /// </summary>
    public sealed class ZooKeeperDistributedReaderWriterLock : IDistributedReaderWriterLock
    {
        static readonly Func<HolderPool, Hold, ZooKeeperDistributedReaderWriterLockHandle> Wrap = (pool, held) => new ZooKeeperDistributedReaderWriterLockHandle(pool, held);
        readonly HolderPool readers;
        readonly HolderPool writers;

        /// <summary>A read/write lock on <paramref name="path"/> through <paramref name="session"/>.</summary>
        /// <param name="path">An absolute ZooKeeper path, e.g. <c>/locks/ledger</c>.</param>
        /// <param name="session">The session to lock through.</param>
        /// <param name="identifier">Stored in this client's nodes.</param>
        /// <param name="mirror">As <see cref="ZooKeeperDistributedLock"/>'s: false waits by listing.</param>
        /// <exception cref="ArgumentException">The path is null, empty or not a valid lock path.</exception>
        public ZooKeeperDistributedReaderWriterLock(string path, ZooKeeperSession session, string identifier = null, bool mirror = true)
            : this(path, new SessionSource.Given(session), identifier, mirror) { }

        /// <summary>
        /// DistributedLock's: a read/write lock named <paramref name="name"/> at
        /// the root (its path made as <see cref="ZooKeeperDistributedLock"/>'s),
        /// through the session shared by every lock of <paramref name="connectionString"/>.
        /// </summary>
        public ZooKeeperDistributedReaderWriterLock(string name, string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(ZooKeeperPath.Root, name, connectionString, options) { }

        /// <summary>DistributedLock's: a read/write lock named <paramref name="name"/> under <paramref name="directoryPath"/>.</summary>
        public ZooKeeperDistributedReaderWriterLock(ZooKeeperPath directoryPath, string name, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(directoryPath.Child(name, "directoryPath"), ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options), null, false) { }

        /// <summary>DistributedLock's: a read/write lock on <paramref name="path"/> through the session shared by every lock of <paramref name="connectionString"/>.</summary>
        public ZooKeeperDistributedReaderWriterLock(ZooKeeperPath path, string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path.Value("path"), ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options), null, false) { }

        /// <summary>
        /// DistributedLock's, with its <paramref name="assumePathExists"/>:
        /// accepted for the port, and the same either way (zoolock creates a
        /// missing path, and never deletes one).
        /// </summary>
        public ZooKeeperDistributedReaderWriterLock(ZooKeeperPath path, string connectionString, bool assumePathExists,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path, connectionString, options) { }

        ZooKeeperDistributedReaderWriterLock(string path, SessionSource source, string identifier, bool mirror)
        {
            if (path == null) throw new ArgumentNullException("path");
            source.DefaultNaming("a reader-writer lock");
            readers = new HolderPool(source, path, s => Holder.NewLock(s, path, (int)LockKind.Read, identifier, mirror: mirror));
            writers = new HolderPool(source, path, s => Holder.NewLock(s, path, (int)LockKind.Write, identifier, mirror: mirror));
        }

        /// <summary>The lock path.</summary>
        public string Path { get { return readers.Path; } }

        /// <summary>DistributedLock's: the lock's path, as <c>ZooKeeperPath.ToString()</c> gives it.</summary>
        public string Name { get { return Path; } }

        IDistributedSynchronizationHandle IDistributedReaderWriterLock.TryAcquireReadLock(TimeSpan timeout, CancellationToken cancellationToken) { return TryAcquireReadLock(timeout, cancellationToken); }
        IDistributedSynchronizationHandle IDistributedReaderWriterLock.AcquireReadLock(TimeSpan? timeout, CancellationToken cancellationToken) { return AcquireReadLock(timeout, cancellationToken); }
        Task<IDistributedSynchronizationHandle> IDistributedReaderWriterLock.TryAcquireReadLockAsync(TimeSpan timeout, CancellationToken cancellationToken) { return Acquisition.AsHandle(TryAcquireReadLockAsync(timeout, cancellationToken)); }
        Task<IDistributedSynchronizationHandle> IDistributedReaderWriterLock.AcquireReadLockAsync(TimeSpan? timeout, CancellationToken cancellationToken) { return Acquisition.AsHandle(AcquireReadLockAsync(timeout, cancellationToken)); }
        IDistributedSynchronizationHandle IDistributedReaderWriterLock.TryAcquireWriteLock(TimeSpan timeout, CancellationToken cancellationToken) { return TryAcquireWriteLock(timeout, cancellationToken); }
        IDistributedSynchronizationHandle IDistributedReaderWriterLock.AcquireWriteLock(TimeSpan? timeout, CancellationToken cancellationToken) { return AcquireWriteLock(timeout, cancellationToken); }
        Task<IDistributedSynchronizationHandle> IDistributedReaderWriterLock.TryAcquireWriteLockAsync(TimeSpan timeout, CancellationToken cancellationToken) { return Acquisition.AsHandle(TryAcquireWriteLockAsync(timeout, cancellationToken)); }
        Task<IDistributedSynchronizationHandle> IDistributedReaderWriterLock.AcquireWriteLockAsync(TimeSpan? timeout, CancellationToken cancellationToken) { return Acquisition.AsHandle(AcquireWriteLockAsync(timeout, cancellationToken)); }

        /// <summary>Takes the read lock, waiting up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">A writer held or queued before for the whole timeout.</exception>
        public ZooKeeperDistributedReaderWriterLockHandle AcquireReadLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.Acquire(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock if possible within <paramref name="timeout"/>; null if not.</summary>
        public ZooKeeperDistributedReaderWriterLockHandle TryAcquireReadLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquire(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock without blocking a thread.</summary>
        public Task<ZooKeeperDistributedReaderWriterLockHandle> AcquireReadLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.AcquireAsync(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the read lock without blocking a thread if possible; null if not.</summary>
        public Task<ZooKeeperDistributedReaderWriterLockHandle> TryAcquireReadLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquireAsync(readers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock, waiting up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">Readers or a writer held it for the whole timeout.</exception>
        public ZooKeeperDistributedReaderWriterLockHandle AcquireWriteLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.Acquire(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock if possible within <paramref name="timeout"/>; null if not.</summary>
        public ZooKeeperDistributedReaderWriterLockHandle TryAcquireWriteLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquire(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock without blocking a thread.</summary>
        public Task<ZooKeeperDistributedReaderWriterLockHandle> AcquireWriteLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.AcquireAsync(writers, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes the write lock without blocking a thread if possible; null if not.</summary>
        public Task<ZooKeeperDistributedReaderWriterLockHandle> TryAcquireWriteLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquireAsync(writers, timeout, cancellationToken, Wrap);
        }
    }
}
