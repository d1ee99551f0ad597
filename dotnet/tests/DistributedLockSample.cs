using System;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using ZooLock;

namespace DistributedLockSample
{
    /// <summary>
    /// A program in DistributedLock.ZooKeeper's documented style: locks by
    /// name from a connection string, awaited handles in using blocks,
    /// HandleLostToken, options through the builder, a provider. The same
    /// program is in DistributedLockSample.cs, built against zoolock, and in
    /// DistributedLockSample.Medallion.txt, for DistributedLock itself: the
    /// two differ only in their using lines (DistributedLockTests checks it).
    /// </summary>
    public static class Worker
    {
        public static async Task<string> RunAsync(string connectionString)
        {
            var log = new StringBuilder();

            var @lock = new ZooKeeperDistributedLock("MyLockName", connectionString);
            using (var handle = await @lock.AcquireAsync())
            {
                // Stop the work if the lock is lost (the session expired, the node was deleted).
                using (handle.HandleLostToken.Register(() => log.AppendLine("lock lost")))
                {
                    log.AppendLine("I have the lock");
                    using (var second = await @lock.TryAcquireAsync())
                    {
                        log.AppendLine(second == null ? "a second acquire does not get it" : "two holders!");
                    }
                }
            }

            var rwLock = new ZooKeeperDistributedReaderWriterLock("MyReaderWriterLock", connectionString);
            using (await rwLock.AcquireReadLockAsync())
            using (await rwLock.AcquireReadLockAsync())
            {
                log.AppendLine("two readers");
                using (var writer = await rwLock.TryAcquireWriteLockAsync(TimeSpan.FromMilliseconds(100)))
                {
                    log.AppendLine(writer == null ? "the writer waits for the readers" : "a writer among readers!");
                }
            }
            using (await rwLock.AcquireWriteLockAsync(TimeSpan.FromSeconds(10)))
            {
                log.AppendLine("the writer alone");
            }

            var semaphore = new ZooKeeperDistributedSemaphore("MySemaphoreName", 2, connectionString,
                options => options.SessionTimeout(TimeSpan.FromSeconds(10)).ConnectTimeout(TimeSpan.FromSeconds(10)));
            using (await semaphore.AcquireAsync())
            using (await semaphore.AcquireAsync())
            using (var third = await semaphore.TryAcquireAsync())
            {
                log.AppendLine(third == null ? "two tickets taken" : "three tickets!");
            }

            var provider = new ZooKeeperDistributedSynchronizationProvider(connectionString);
            using (var cancellation = new CancellationTokenSource())
            using (await provider.CreateLock("MyProvidedLock").AcquireAsync(TimeSpan.FromSeconds(10), cancellation.Token))
            {
                log.AppendLine("a provider's lock");
            }

            return log.ToString();
        }
    }
}
