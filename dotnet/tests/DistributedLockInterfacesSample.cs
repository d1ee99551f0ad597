using System;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using ZooLock;

namespace DistributedLockInterfacesSample
{
    /// <summary>
    /// A service written against DistributedLock's abstractions, as its docs
    /// show for dependency injection: it gets the providers and never names
    /// ZooKeeper. The same file is DistributedLockInterfacesSample.Medallion.txt
    /// for DistributedLock itself, but for its using line (DistributedLockTests
    /// checks it, then runs this one on zoolock's provider).
    /// </summary>
    public class Service
    {
        readonly IDistributedLockProvider locks;
        readonly IDistributedReaderWriterLockProvider readerWriterLocks;
        readonly IDistributedSemaphoreProvider semaphores;

        public Service(IDistributedLockProvider locks, IDistributedReaderWriterLockProvider readerWriterLocks, IDistributedSemaphoreProvider semaphores)
        {
            this.locks = locks;
            this.readerWriterLocks = readerWriterLocks;
            this.semaphores = semaphores;
        }

        public async Task<string> RunAsync(CancellationToken cancellationToken)
        {
            var log = new StringBuilder();
            IDistributedLock @lock = locks.CreateLock("interfaces-lock");
            using (IDistributedSynchronizationHandle handle = await @lock.AcquireAsync(cancellationToken: cancellationToken))
            {
                log.AppendLine("holds " + @lock.Name + (handle.HandleLostToken.CanBeCanceled ? ", told of a loss" : ""));
                using (var again = locks.TryAcquireLock("interfaces-lock"))
                {
                    log.AppendLine(again == null ? "the provider's try does not get it" : "two holders!");
                }
            }
            using (var handle = await locks.AcquireLockAsync("interfaces-lock", TimeSpan.FromSeconds(10)))
            {
                log.AppendLine("the provider acquires it");
            }

            using (readerWriterLocks.AcquireReadLock("interfaces-rw"))
            using (await readerWriterLocks.AcquireReadLockAsync("interfaces-rw"))
            {
                log.AppendLine(readerWriterLocks.TryAcquireWriteLock("interfaces-rw") == null ? "readers keep the writer out" : "a writer among readers!");
            }

            IDistributedSemaphore semaphore = semaphores.CreateSemaphore("interfaces-semaphore", 2);
            using (semaphore.Acquire())
            using (await semaphores.AcquireSemaphoreAsync("interfaces-semaphore", 2))
            {
                log.AppendLine(semaphore.TryAcquire() == null ? semaphore.MaxCount + " tickets taken" : "a third ticket!");
            }
            return log.ToString();
        }
    }
}
