namespace ZooLock
{
    /// <summary>DistributedLock's factory of locks by name, for dependency injection.</summary>
    public interface IDistributedLockProvider
    {
        /// <summary>The lock named <paramref name="name"/>.</summary>
        IDistributedLock CreateLock(string name);
    }

    /// <summary>DistributedLock's factory of read/write locks by name.</summary>
    public interface IDistributedReaderWriterLockProvider
    {
        /// <summary>The read/write lock named <paramref name="name"/>.</summary>
        IDistributedReaderWriterLock CreateReaderWriterLock(string name);
    }

    /// <summary>DistributedLock's factory of semaphores by name.</summary>
    public interface IDistributedSemaphoreProvider
    {
        /// <summary>The semaphore named <paramref name="name"/>, of <paramref name="maxCount"/> leases.</summary>
        IDistributedSemaphore CreateSemaphore(string name, int maxCount);
    }
}
