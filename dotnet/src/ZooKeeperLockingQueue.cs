using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A consumer of kazoo's <c>LockingQueue</c> (the core's):
    /// <see cref="Get"/> locks the first free entry for this consumer (an
    /// ephemeral node under <c>taken/</c>), <see cref="Consume"/> removes it,
    /// <see cref="Release"/> gives it back. If this consumer's session ends
    /// the entry is free again (at least once), and <see cref="HoldsLock"/>
    /// and <see cref="Consume"/> say false. kazoo's <c>LockingQueue</c> on the
    /// same path takes part.
    /// </summary>
    public sealed unsafe class ZooKeeperLockingQueue
    {
        static readonly NativeMethods.zl_locking_queue_put_async_callback_delegate OnPut = ResultCallbacks.Text;
        static readonly NativeMethods.zl_locking_queue_put_all_async_callback_delegate OnPutAll = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_locking_queue_get_async_callback_delegate OnGet = ResultCallbacks.Taken;
        static readonly NativeMethods.zl_locking_queue_consume_async_callback_delegate OnConsume = ResultCallbacks.YesNo;
        static readonly NativeMethods.zl_locking_queue_release_async_callback_delegate OnRelease = ResultCallbacks.YesNo;
        static readonly NativeMethods.zl_locking_queue_holds_lock_async_callback_delegate OnHoldsLock = ResultCallbacks.YesNo;

        readonly LockingQueueHandle native = new LockingQueueHandle();

        /// <summary>A consumer of the queue at <paramref name="path"/> through <paramref name="session"/>; nothing is sent before a call.</summary>
        /// <exception cref="ArgumentException">The path is not a valid ZooKeeper path.</exception>
        public ZooKeeperLockingQueue(string path, ZooKeeperSession session)
        {
            native.Create(session, path, (s, bytes, length, created) => NativeMethods.zl_locking_queue_new(s, bytes, length, (ZlLockingQueue**)created));
            Path = path;
        }

        /// <summary>The queue's path.</summary>
        public string Path { get; private set; }

        /// <summary>How many entries there are, locked ones included.</summary>
        public int Count
        {
            get { return native.Count((q, count) => NativeMethods.zl_locking_queue_len((ZlLockingQueue*)q, count)); }
        }

        /// <summary>Adds <paramref name="value"/>; returns the entry's path.</summary>
        /// <exception cref="ArgumentException">A priority outside 0 to 999.</exception>
        public string Put(byte[] value, int priority = ZooKeeperQueue.DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            return PutAsync(value, priority, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Put"/> without blocking a thread.</summary>
        public Task<string> PutAsync(byte[] value, int priority = ZooKeeperQueue.DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (value == null) throw new ArgumentNullException("value");
            uint p = ZooKeeperQueue.Priority(priority);
            return PendingCall<string>.Start(native, cancellationToken, (q, cancel, user) =>
            {
                fixed (byte* bytes = value) return NativeMethods.zl_locking_queue_put_async((ZlLockingQueue*)q, bytes, (uint)value.Length, p, cancel, OnPut, user);
            });
        }

        /// <summary>
        /// Adds every value of <paramref name="values"/> with
        /// <paramref name="priority"/>, all or none, in one transaction
        /// (kazoo's <c>put_all</c>).
        /// </summary>
        /// <exception cref="ArgumentException">A priority outside 0 to 999.</exception>
        public void PutAll(IEnumerable<byte[]> values, int priority = ZooKeeperQueue.DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            PutAllAsync(values, priority, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="PutAll"/> without blocking a thread.</summary>
        public Task PutAllAsync(IEnumerable<byte[]> values, int priority = ZooKeeperQueue.DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (values == null) throw new ArgumentNullException("values");
            var list = values.ToList();
            if (list.Contains(null)) throw new ArgumentException("a value is null", "values");
            var encoded = Interop.EncodeList(list);
            uint p = ZooKeeperQueue.Priority(priority);
            return PendingCall<bool>.Start(native, cancellationToken, (q, cancel, user) =>
            {
                fixed (byte* bytes = encoded) return NativeMethods.zl_locking_queue_put_all_async((ZlLockingQueue*)q, bytes, (uint)encoded.Length, p, cancel, OnPutAll, user);
            });
        }

        /// <summary>
        /// Locks the first free entry and returns its value, waiting up to
        /// <paramref name="timeout"/> (null: until one comes); null if none
        /// came. The entry got and neither consumed nor released comes again.
        /// </summary>
        /// <exception cref="OperationCanceledException">The token was cancelled; no lock is left behind.</exception>
        public byte[] Get(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync(timeout, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Get"/> without blocking a thread.</summary>
        public Task<byte[]> GetAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            long millis = Interop.Millis(timeout, "timeout");
            return PendingCall<byte[]>.Start(native, cancellationToken, (q, cancel, user) =>
                NativeMethods.zl_locking_queue_get_async((ZlLockingQueue*)q, millis, cancel, OnGet, user));
        }

        /// <summary>Removes the entry got, with its lock: false if this consumer holds none (or lost its lock).</summary>
        public bool Consume(CancellationToken cancellationToken = default(CancellationToken))
        {
            return ConsumeAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Consume"/> without blocking a thread.</summary>
        public Task<bool> ConsumeAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (q, cancel, user) =>
                NativeMethods.zl_locking_queue_consume_async((ZlLockingQueue*)q, cancel, OnConsume, user));
        }

        /// <summary>Gives the entry got back to the queue: false if this consumer holds none.</summary>
        public bool Release(CancellationToken cancellationToken = default(CancellationToken))
        {
            return ReleaseAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Release"/> without blocking a thread.</summary>
        public Task<bool> ReleaseAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (q, cancel, user) =>
                NativeMethods.zl_locking_queue_release_async((ZlLockingQueue*)q, cancel, OnRelease, user));
        }

        /// <summary>Whether this consumer still holds the lock of the entry it got.</summary>
        public bool HoldsLock(CancellationToken cancellationToken = default(CancellationToken))
        {
            return HoldsLockAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="HoldsLock"/> without blocking a thread.</summary>
        public Task<bool> HoldsLockAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (q, cancel, user) =>
                NativeMethods.zl_locking_queue_holds_lock_async((ZlLockingQueue*)q, cancel, OnHoldsLock, user));
        }

        sealed class LockingQueueHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_locking_queue_free((ZlLockingQueue*)handle);
                return true;
            }
        }
    }
}
