using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's exclusive lock, which <see cref="ZooKeeperDistributedLock"/>
    /// is: code written against it ports by its <c>using</c> line. The async
    /// forms return <see cref="Task{TResult}"/> where DistributedLock's return
    /// <c>ValueTask</c> (net462 has none): <c>await</c> reads the same.
    /// </summary>
    public interface IDistributedLock
    {
        /// <summary>The lock's name (its path when made from one).</summary>
        string Name { get; }

        /// <summary>The handle, or null if not acquired within <paramref name="timeout"/>.</summary>
        IDistributedSynchronizationHandle TryAcquire(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary>The handle; <see cref="TimeoutException"/> if not acquired within <paramref name="timeout"/> (null: no limit).</summary>
        IDistributedSynchronizationHandle Acquire(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="TryAcquire"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> TryAcquireAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken));

        /// <summary><see cref="Acquire"/>, asynchronously.</summary>
        Task<IDistributedSynchronizationHandle> AcquireAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken));
    }
}
