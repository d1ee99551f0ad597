using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's semaphore, which <see cref="ZooKeeperDistributedSemaphore"/>
    /// is (async forms as <see cref="IDistributedLock"/>'s).
    /// </summary>
    public interface IDistributedSemaphore
    {
        /// <summary>The semaphore's name (its path when made from one).</summary>
        string Name { get; }

        /// <summary>How many may hold at once.</summary>
        int MaxCount { get; }

        /// <summary>A lease, or null if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle TryAcquire(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>A lease; <see cref="TimeoutException"/> if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle Acquire(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="TryAcquire"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> TryAcquireAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="Acquire"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> AcquireAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));
    }
}
