using System;

namespace ZooLock
{
    /// <summary>
    /// DistributedLock's factory of locks, read/write locks and semaphores by
    /// name, in one directory and through the session shared by every lock of
    /// one connection string and options.
    /// </summary>
    public sealed class ZooKeeperDistributedSynchronizationProvider
        : IDistributedLockProvider, IDistributedReaderWriterLockProvider, IDistributedSemaphoreProvider
    {
        readonly ZooKeeperPath directoryPath;
        readonly string connectionString;
        readonly Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options;

        /// <summary>Makes its locks at the root.</summary>
        public ZooKeeperDistributedSynchronizationProvider(string connectionString, Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(ZooKeeperPath.Root, connectionString, options) { }

        /// <summary>Makes its locks under <paramref name="directoryPath"/>.</summary>
        public ZooKeeperDistributedSynchronizationProvider(ZooKeeperPath directoryPath, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
        {
            directoryPath.Value("directoryPath");
            if (connectionString == null) throw new ArgumentNullException("connectionString");
            this.directoryPath = directoryPath;
            this.connectionString = connectionString;
            this.options = options;
        }

        /// <summary>The lock named <paramref name="name"/>.</summary>
        public ZooKeeperDistributedLock CreateLock(string name)
        {
            return new ZooKeeperDistributedLock(directoryPath, name, connectionString, options);
        }

        /// <summary>The read/write lock named <paramref name="name"/>.</summary>
        public ZooKeeperDistributedReaderWriterLock CreateReaderWriterLock(string name)
        {
            return new ZooKeeperDistributedReaderWriterLock(directoryPath, name, connectionString, options);
        }

        /// <summary>The semaphore named <paramref name="name"/>, of <paramref name="maxCount"/> leases.</summary>
        public ZooKeeperDistributedSemaphore CreateSemaphore(string name, int maxCount)
        {
            return new ZooKeeperDistributedSemaphore(directoryPath, name, maxCount, connectionString, options);
        }

        IDistributedLock IDistributedLockProvider.CreateLock(string name) { return CreateLock(name); }

        IDistributedReaderWriterLock IDistributedReaderWriterLockProvider.CreateReaderWriterLock(string name) { return CreateReaderWriterLock(name); }

        IDistributedSemaphore IDistributedSemaphoreProvider.CreateSemaphore(string name, int maxCount) { return CreateSemaphore(name, maxCount); }
    }
}
