using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// An exclusive lock on a ZooKeeper path, shared with every zoolock
    /// client (Rust, Python, .NET) and with kazoo's <c>Lock</c> on the same
    /// path. Waiters queue in order (FIFO). Each acquisition returns a
    /// handle; dispose it to release. Safe to use from many threads: each
    /// concurrent acquisition is its own contender. Made from a session of
    /// your own, or, as DistributedLock's, from a lock name (or path) and a
    /// connection string. A <c>reentrant</c> lock is Curator's
    /// <c>InterProcessMutex</c> instead: see the first constructor.
    /// </summary>
    [AcquireFamily(What = "the lock", Handle = "ZooKeeperDistributedLockHandle", Interface = "IDistributedLock",
        Timeout = "The lock stayed taken for the whole timeout.",
        More = "<exception cref=\"OperationCanceledException\">The token was cancelled; the wait left no node.</exception>")]
    public sealed partial class ZooKeeperDistributedLock : IDistributedLock
    {
        static readonly Func<HolderPool, Hold, ZooKeeperDistributedLockHandle> Wrap = (pool, held) => new ZooKeeperDistributedLockHandle(pool, held);
        readonly HolderPool pool;

        /// <summary>A lock on <paramref name="path"/> through <paramref name="session"/>.</summary>
        /// <param name="path">An absolute ZooKeeper path, e.g. <c>/locks/ledger</c>.</param>
        /// <param name="session">The session to lock through.</param>
        /// <param name="identifier">Stored in this client's nodes, shown by <see cref="GetContenders"/>.</param>
        /// <param name="reentrant">
        /// Reentrant per thread, like Curator's <c>InterProcessMutex</c>: an
        /// <c>Acquire</c> or <c>TryAcquire</c> on the thread that holds the lock
        /// returns a handle at once, on the same node; each handle's Dispose
        /// counts down and the last deletes the node. Other threads wait for
        /// that (and time out). A loss ends the hold whatever the count. Async
        /// acquires have no thread of their own: each is an owner of its own and
        /// never re-enters.
        /// </param>
        /// <param name="mirror">
        /// Waits on the session's one recursive watch of the path while the queue is
        /// short (two requests per acquisition) and by listing while it is long (the
        /// default, adaptive: docs/benchmarks.md); false always waits by listing the
        /// children and watching the predecessor, as Curator does.
        /// </param>
        /// <param name="naming">
        /// Whose node names to write: kazoo's (the default, every zoolock language's),
        /// Curator's, or DistributedLock.ZooKeeper's while its services share the path
        /// (docs/interop.md).
        /// </param>
        /// <exception cref="ArgumentException">The path is null, empty or not a valid lock path.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="naming"/> is not a scheme zoolock writes.</exception>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public ZooKeeperDistributedLock(string path, ZooKeeperSession session, string identifier = null, bool reentrant = false, bool mirror = true,
            ZooKeeperNamingScheme naming = ZooKeeperNamingScheme.Kazoo)
        {
            if (path == null) throw new ArgumentNullException("path");
            ZooKeeperDistributedSynchronizationOptionsBuilder.Written(naming, "naming");
            pool = new HolderPool(new SessionSource.Given(session), path,
                s => Holder.NewLock(s, path, (int)LockKind.Mutex, identifier, reentrant, mirror, naming), reentrant);
        }

        /// <summary>
        /// DistributedLock's: a lock named <paramref name="name"/> at the root,
        /// its path made as DistributedLock makes it (the name itself when it is
        /// a valid node name; otherwise repaired, with a hash of the name
        /// appended), through the session shared by every lock of
        /// <paramref name="connectionString"/> and equal options.
        /// </summary>
        /// <param name="name">Any text.</param>
        /// <param name="connectionString"><c>host:port[,host:port…][/chroot]</c>.</param>
        /// <param name="options">Sets the shared session's timeouts and credentials and the nodes' ACL.</param>
        public ZooKeeperDistributedLock(string name, string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(ZooKeeperPath.Root, name, connectionString, options) { }

        /// <summary>DistributedLock's: a lock named <paramref name="name"/> under <paramref name="directoryPath"/>, as the constructor above.</summary>
        public ZooKeeperDistributedLock(ZooKeeperPath directoryPath, string name, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(directoryPath.Child(name, "directoryPath"), ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options)) { }

        /// <summary>DistributedLock's: a lock on <paramref name="path"/> through the session shared by every lock of <paramref name="connectionString"/>.</summary>
        /// <exception cref="ArgumentException">The root, or a path under <c>/zookeeper</c>.</exception>
        public ZooKeeperDistributedLock(ZooKeeperPath path, string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path.Value("path"), ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options)) { }

        /// <summary>
        /// DistributedLock's, with its <paramref name="assumePathExists"/>:
        /// accepted for the port, and the same either way (zoolock creates a
        /// missing path, and never deletes one).
        /// </summary>
        public ZooKeeperDistributedLock(ZooKeeperPath path, string connectionString, bool assumePathExists,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(path, connectionString, options) { }

        /// <summary>Waits by listing, as DistributedLock does: a shared session lives only while its locks are held.</summary>
        ZooKeeperDistributedLock(string path, SessionSource source)
        {
            pool = new HolderPool(source, path, s => Holder.NewLock(s, path, (int)LockKind.Mutex, null, mirror: false, scheme: source.Naming));
        }

        /// <summary>The lock path.</summary>
        public string Path { get { return pool.Path; } }

        /// <summary>DistributedLock's: the lock's path, as <c>ZooKeeperPath.ToString()</c> gives it.</summary>
        public string Name { get { return Path; } }

        /// <summary>The identifiers of everyone queued on the path, holder first.</summary>
        public IList<string> GetContenders()
        {
            return pool.Query(holder => holder.Queue());
        }
    }
}
