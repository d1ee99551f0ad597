using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>DistributedLock's one-call acquires on a provider: <c>provider.AcquireLock(name)</c>.</summary>
    public static class DistributedLockProviderExtensions
    {
        /// <summary><see cref="IDistributedLock.TryAcquire"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle TryAcquireLock(this IDistributedLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateLock(name).TryAcquire(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedLock.Acquire"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle AcquireLock(this IDistributedLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateLock(name).Acquire(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedLock.TryAcquireAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> TryAcquireLockAsync(this IDistributedLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateLock(name).TryAcquireAsync(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedLock.AcquireAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> AcquireLockAsync(this IDistributedLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateLock(name).AcquireAsync(timeout, cancellationToken);
        }
    }

    /// <summary>DistributedLock's one-call acquires on a read/write lock provider.</summary>
    public static class DistributedReaderWriterLockProviderExtensions
    {
        /// <summary><see cref="IDistributedReaderWriterLock.TryAcquireReadLock"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle TryAcquireReadLock(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).TryAcquireReadLock(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.AcquireReadLock"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle AcquireReadLock(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).AcquireReadLock(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.TryAcquireReadLockAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> TryAcquireReadLockAsync(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).TryAcquireReadLockAsync(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.AcquireReadLockAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> AcquireReadLockAsync(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).AcquireReadLockAsync(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.TryAcquireWriteLock"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle TryAcquireWriteLock(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).TryAcquireWriteLock(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.AcquireWriteLock"/> on the lock named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle AcquireWriteLock(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).AcquireWriteLock(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.TryAcquireWriteLockAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> TryAcquireWriteLockAsync(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).TryAcquireWriteLockAsync(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedReaderWriterLock.AcquireWriteLockAsync"/> on the lock named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> AcquireWriteLockAsync(this IDistributedReaderWriterLockProvider provider, string name,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateReaderWriterLock(name).AcquireWriteLockAsync(timeout, cancellationToken);
        }
    }

    /// <summary>DistributedLock's one-call acquires on a semaphore provider.</summary>
    public static class DistributedSemaphoreProviderExtensions
    {
        /// <summary><see cref="IDistributedSemaphore.TryAcquire"/> on the semaphore named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle TryAcquireSemaphore(this IDistributedSemaphoreProvider provider, string name, int maxCount,
            TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateSemaphore(name, maxCount).TryAcquire(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedSemaphore.Acquire"/> on the semaphore named <paramref name="name"/>.</summary>
        public static IDistributedSynchronizationHandle AcquireSemaphore(this IDistributedSemaphoreProvider provider, string name, int maxCount,
            TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateSemaphore(name, maxCount).Acquire(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedSemaphore.TryAcquireAsync"/> on the semaphore named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> TryAcquireSemaphoreAsync(this IDistributedSemaphoreProvider provider, string name,
            int maxCount, TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateSemaphore(name, maxCount).TryAcquireAsync(timeout, cancellationToken);
        }

        /// <summary><see cref="IDistributedSemaphore.AcquireAsync"/> on the semaphore named <paramref name="name"/>.</summary>
        public static Task<IDistributedSynchronizationHandle> AcquireSemaphoreAsync(this IDistributedSemaphoreProvider provider, string name,
            int maxCount, TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Provider.Checked(provider).CreateSemaphore(name, maxCount).AcquireAsync(timeout, cancellationToken);
        }
    }

    /// <summary>The one argument check of the provider extensions.</summary>
    static class Provider
    {
        internal static T Checked<T>(T provider) where T : class
        {
            if (provider == null) throw new ArgumentNullException("provider");
            return provider;
        }
    }
}
