using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The four ways to acquire, shared by every lock type: arguments are
    /// checked before anything starts; <c>Acquire</c> throws
    /// <see cref="TimeoutException"/> where <c>TryAcquire</c> returns null.
    /// </summary>
    internal static class Acquisition
    {
        internal static T Acquire<T>(HolderPool pool, TimeSpan? timeout, CancellationToken token, Func<HolderPool, Hold, T> wrap)
            where T : ZooKeeperHandle
        {
            long millis = Interop.Millis(timeout, "timeout");
            var handle = Wrap(pool, pool.TryAcquire(millis, token), wrap);
            if (handle == null) throw Errors.Timeout(pool.Path, millis);
            return handle;
        }

        internal static T TryAcquire<T>(HolderPool pool, TimeSpan timeout, CancellationToken token, Func<HolderPool, Hold, T> wrap)
            where T : ZooKeeperHandle
        {
            long millis = Interop.Millis(timeout, "timeout");
            return Wrap(pool, pool.TryAcquire(millis, token), wrap);
        }

        internal static Task<T> AcquireAsync<T>(HolderPool pool, TimeSpan? timeout, CancellationToken token, Func<HolderPool, Hold, T> wrap)
            where T : ZooKeeperHandle
        {
            long millis = Interop.Millis(timeout, "timeout");
            return Then(pool, pool.TryAcquireAsync(millis, token), wrap, millis, true);
        }

        internal static Task<T> TryAcquireAsync<T>(HolderPool pool, TimeSpan timeout, CancellationToken token, Func<HolderPool, Hold, T> wrap)
            where T : ZooKeeperHandle
        {
            long millis = Interop.Millis(timeout, "timeout");
            return Then(pool, pool.TryAcquireAsync(millis, token), wrap, millis, false);
        }

        static async Task<T> Then<T>(HolderPool pool, Task<Hold> acquiring, Func<HolderPool, Hold, T> wrap, long millis, bool throwOnTimeout)
            where T : ZooKeeperHandle
        {
            var handle = Wrap(pool, await acquiring.ConfigureAwait(false), wrap);
            if (handle == null && throwOnTimeout) throw Errors.Timeout(pool.Path, millis);
            return handle;
        }

        /// <summary>A handle's task as DistributedLock's interfaces return it.</summary>
        internal static async Task<IDistributedSynchronizationHandle> AsHandle<T>(Task<T> acquiring) where T : class, IDistributedSynchronizationHandle
        {
            return await acquiring.ConfigureAwait(false);
        }

        /// <summary>Wraps a hold in its public handle; releases it if wrapping fails.</summary>
        static T Wrap<T>(HolderPool pool, Hold held, Func<HolderPool, Hold, T> wrap) where T : class
        {
            if (held == null) return null;
            try { return wrap(pool, held); }
            catch (Exception)
            {
                pool.Release(held);
                throw;
            }
        }
    }
}
