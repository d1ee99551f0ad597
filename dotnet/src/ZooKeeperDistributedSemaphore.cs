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
    /// use the same count.
    /// </summary>
    public sealed class ZooKeeperDistributedSemaphore
    {
        static readonly Func<HolderPool, Hold, ZooKeeperSemaphoreHandle> Wrap = (pool, held) => new ZooKeeperSemaphoreHandle(pool, held);
        readonly HolderPool pool;

        /// <summary>A semaphore of <paramref name="maxCount"/> leases on <paramref name="path"/>.</summary>
        /// <exception cref="ArgumentException">A bad path, or <paramref name="maxCount"/> below 1.</exception>
        public ZooKeeperDistributedSemaphore(string path, int maxCount, ZooKeeperSession session, string identifier = null)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            if (maxCount < 1) throw new ArgumentOutOfRangeException("maxCount", maxCount, "a semaphore needs at least one lease");
            MaxCount = maxCount;
            pool = new HolderPool(() => Holder.NewSemaphore(session, path, identifier, maxCount));
        }

        /// <summary>The semaphore path.</summary>
        public string Path { get { return pool.Path; } }

        /// <summary>The number of leases.</summary>
        public int MaxCount { get; private set; }

        /// <summary>Takes a lease, waiting up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">No lease came free within the timeout.</exception>
        /// <exception cref="ZooLockConfigurationException">The path was set up with another count.</exception>
        public ZooKeeperSemaphoreHandle Acquire(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.Acquire(pool, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes a lease if one is free within <paramref name="timeout"/>; null if not.</summary>
        public ZooKeeperSemaphoreHandle TryAcquire(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquire(pool, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes a lease without blocking a thread.</summary>
        public Task<ZooKeeperSemaphoreHandle> AcquireAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.AcquireAsync(pool, timeout, cancellationToken, Wrap);
        }

        /// <summary>Takes a lease without blocking a thread if one is free in time; null if not.</summary>
        public Task<ZooKeeperSemaphoreHandle> TryAcquireAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Acquisition.TryAcquireAsync(pool, timeout, cancellationToken, Wrap);
        }

        /// <summary>The identifiers of the current lease holders.</summary>
        public IList<string> GetLeaseHolders()
        {
            return pool.Query(holder => holder.Queue());
        }
    }
}
