using System;
using System.Threading;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's handle on a held lock, read/write lock or semaphore:
    /// dispose it to release. Every ZooLock handle is one. (DistributedLock's
    /// is also <c>IAsyncDisposable</c>, which net462 and C# 7.2 lack: write
    /// <c>using (var handle = await …)</c> for <c>await using</c>.)
    /// </summary>
    public interface IDistributedSynchronizationHandle : IDisposable
    {
        /// <summary>Cancelled when the hold is lost (its node deleted, its session expired).</summary>
        CancellationToken HandleLostToken { get; }
    }
}
