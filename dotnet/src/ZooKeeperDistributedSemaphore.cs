using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A counting semaphore on a ZooKeeper path (kazoo's <c>Semaphore</c>):
    /// at most <c>maxCount</c> holders at once. Every client of the path must
    /// use the same count. Made from a session of your own, or, as
    /// DistributedLock's, from a name (or path) and a connection string.
    /// </summary>
    [AcquireFamily(What = "a lease", Handle = "ZooKeeperDistributedSemaphoreHandle", Interface = "IDistributedSemaphore",
        Timeout = "No lease came free within the timeout.",
        More = "<exception cref=\"ZooLockConfigurationException\">The path was set up with another count.</exception>")]
    public sealed partial class ZooKeeperDistributedSemaphore : IDistributedSemaphore
    {
        static readonly Func<HolderPool, Hold, ZooKeeperDistributedSemaphoreHandle> Wrap = (pool, held) => new ZooKeeperDistributedSemaphoreHandle(pool, held);
        readonly HolderPool pool;

        /// <summary>A semaphore of <paramref name="maxCount"/> leases on <paramref name="path"/>.</summary>
        /// <exception cref="ArgumentException">A bad path, or <paramref name="maxCount"/> below 1.</exception>
        public ZooKeeperDistributedSemaphore(string path, int maxCount, ZooKeeperSession session, string identifier = null)
            : this(path, maxCount, new SessionSource.Given(session), identifier) { }

        /// <summary>
        /// DistributedLock's: a semaphore named <paramref name="name"/> at the root
        /// (its path made as <see cref="ZooKeeperDistributedLock"/>'s), through the
        /// session shared by every lock of <paramref name="connectionString"/>.
        /// </summary>
        public ZooKeeperDistributedSemaphore(string name, int maxCount, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(ZooKeeperPath.Root, name, maxCount, connectionString, options) { }

        /// <summary>DistributedLock's: a semaphore named <paramref name="name"/> under <paramref name="directoryPath"/>.</summary>
        public ZooKeeperDistributedSemaphore(ZooKeeperPath directoryPath, string name, int maxCount, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(directoryPath.Child(name, "directoryPath"), maxCount, ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options), null) { }

        /// <summary>DistributedLock's: a semaphore on <paramref name="path"/> through the session shared by every lock of <paramref name="connectionString"/>.</summary>
        public ZooKeeperDistributedSemaphore(ZooKeeperPath path, int maxCount, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path.Value("path"), maxCount, ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options), null) { }

        /// <summary>
        /// DistributedLock's, with its <paramref name="assumePathExists"/>:
        /// accepted for the port, and the same either way (zoolock creates a
        /// missing path, and never deletes one).
        /// </summary>
        public ZooKeeperDistributedSemaphore(ZooKeeperPath path, int maxCount, string connectionString, bool assumePathExists,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path, maxCount, connectionString, options) { }

        unsafe ZooKeeperDistributedSemaphore(string path, int maxCount, SessionSource source, string identifier)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (maxCount < 1) throw new ArgumentOutOfRangeException("maxCount", maxCount, "a semaphore needs at least one lease");
            source.DefaultNaming("a semaphore");
            MaxCount = maxCount;
            var pathBytes = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            pool = new HolderPool(source, path, session => Holder.New(session, path, (s, created) =>
            {
                fixed (byte* p = pathBytes, i = id)
                    return NativeMethods.zl_semaphore_new(s, p, (uint)pathBytes.Length, i, (uint)id.Length, (uint)maxCount, created);
            }));
        }

        /// <summary>The semaphore path.</summary>
        public string Path { get { return pool.Path; } }

        /// <summary>DistributedLock's: the lock's path, as <c>ZooKeeperPath.ToString()</c> gives it.</summary>
        public string Name { get { return Path; } }

        /// <summary>The number of leases.</summary>
        public int MaxCount { get; private set; }

        /// <summary>The identifiers of the current lease holders.</summary>
        public IList<string> GetLeaseHolders()
        {
            return pool.Query(holder => holder.Queue());
        }
    }
}
