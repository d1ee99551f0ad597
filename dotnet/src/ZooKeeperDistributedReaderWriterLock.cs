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
    [AcquireFamily(What = "the read lock", Handle = "ZooKeeperDistributedReaderWriterLockHandle", Suffix = "ReadLock", Pool = "readers", Interface = "IDistributedReaderWriterLock",
        Timeout = "A writer held or queued before for the whole timeout.")]
    [AcquireFamily(What = "the write lock", Handle = "ZooKeeperDistributedReaderWriterLockHandle", Suffix = "WriteLock", Pool = "writers", Interface = "IDistributedReaderWriterLock",
        Timeout = "Readers or a writer held it for the whole timeout.")]
    public sealed partial class ZooKeeperDistributedReaderWriterLock : IDistributedReaderWriterLock
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
    }
}
