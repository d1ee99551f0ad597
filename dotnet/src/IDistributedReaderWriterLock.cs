using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's read/write lock, which <see cref="ZooKeeperDistributedReaderWriterLock"/>
    /// is (async forms as <see cref="IDistributedLock"/>'s).
    /// </summary>
    public interface IDistributedReaderWriterLock
    {
        /// <summary>The lock's name (its path when made from one).</summary>
        string Name { get; }

        /// <summary>A read hold, or null if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle TryAcquireReadLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>A read hold; <see cref="TimeoutException"/> if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle AcquireReadLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="TryAcquireReadLock"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> TryAcquireReadLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="AcquireReadLock"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> AcquireReadLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>A write hold, or null if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle TryAcquireWriteLock(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>A write hold; <see cref="TimeoutException"/> if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle AcquireWriteLock(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="TryAcquireWriteLock"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> TryAcquireWriteLockAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="AcquireWriteLock"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> AcquireWriteLockAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));
    }
}
