using System;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// kazoo's <c>Barrier</c> (the core's): the barrier is up while the node
    /// at its path exists. <see cref="Create"/> puts it up,
    /// <see cref="Remove"/> takes it down, <see cref="Wait"/> waits until it
    /// is down, across a lost connection and a session expiry. kazoo's
    /// <c>Barrier</c> on the same path takes part.
    /// </summary>
    public sealed unsafe class ZooKeeperBarrier
    {
        static readonly NativeMethods.zl_barrier_create_async_callback_delegate OnCreate = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_barrier_remove_async_callback_delegate OnRemove = ResultCallbacks.YesNo;
        static readonly NativeMethods.zl_barrier_wait_async_callback_delegate OnWait = ResultCallbacks.YesNo;

        readonly BarrierHandle native = new BarrierHandle();

        /// <summary>The barrier at <paramref name="path"/> through <paramref name="session"/>; nothing is sent before a call.</summary>
        /// <exception cref="ArgumentException">The path is not a valid ZooKeeper path.</exception>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public ZooKeeperBarrier(string path, ZooKeeperSession session)
        {
            native.Create(session, path, (s, bytes, length, created) => NativeMethods.zl_barrier_new(s, bytes, length, (ZlBarrier**)created));
            Path = path;
        }

        /// <summary>The barrier's node.</summary>
        public string Path { get; private set; }

        /// <summary>Puts the barrier up (creates its node if missing).</summary>
        public void Create(CancellationToken cancellationToken = default(CancellationToken))
        {
            CreateAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Create"/> without blocking a thread.</summary>
        public Task CreateAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (b, cancel, user) =>
                NativeMethods.zl_barrier_create_async((ZlBarrier*)b, cancel, OnCreate, user));
        }

        /// <summary>Takes the barrier down: true if its node was there.</summary>
        public bool Remove(CancellationToken cancellationToken = default(CancellationToken))
        {
            return RemoveAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Remove"/> without blocking a thread.</summary>
        public Task<bool> RemoveAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (b, cancel, user) =>
                NativeMethods.zl_barrier_remove_async((ZlBarrier*)b, cancel, OnRemove, user));
        }

        /// <summary>Waits until the barrier is down: true; false if <paramref name="timeout"/> (null: forever) ran out first.</summary>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        public bool Wait(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return WaitAsync(timeout, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Wait"/> without blocking a thread.</summary>
        public Task<bool> WaitAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            long millis = Interop.Millis(timeout, "timeout");
            return PendingCall<bool>.Start(native, cancellationToken, (b, cancel, user) =>
                NativeMethods.zl_barrier_wait_async((ZlBarrier*)b, millis, cancel, OnWait, user));
        }

        sealed class BarrierHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_barrier_free((ZlBarrier*)handle);
                return true;
            }
        }
    }
}
