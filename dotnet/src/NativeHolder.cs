using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// One native lock or semaphore handle: one acquisition at a time.
    /// Acquires block or complete a task; a <see cref="CancellationToken"/>
    /// fires a native cancel token. Freed by Dispose or, if forgotten, by the
    /// finalizer: the native side then gives a held lock back in the background.
    /// </summary>
    internal sealed unsafe partial class NativeHolder : NativeHandle
    {
        static readonly NativeMethods.zl_lock_set_listener_callback_delegate OnLockState = DeliverState;
        static readonly NativeMethods.zl_semaphore_set_listener_callback_delegate OnSemaphoreState = DeliverState;
        static readonly NativeMethods.zl_lock_acquire_async_callback_delegate OnLockAcquired = PendingAcquire.Deliver;
        static readonly NativeMethods.zl_semaphore_acquire_async_callback_delegate OnSemaphoreAcquired = PendingAcquire.Deliver;
        static readonly Action<object> FireCancel = state => NativeMethods.zl_cancel_fire((ZlCancel*)(IntPtr)state);

        readonly bool semaphore;
        readonly LossWatch loss = new LossWatch();
        GCHandle events;

        internal readonly string Path;

        NativeHolder(bool semaphore, string path)
        {
            this.semaphore = semaphore;
            Path = path;
        }

        internal static NativeHolder NewLock(ZooKeeperSession session, string path, int kind, string identifier)
        {
            var holder = new NativeHolder(false, path);
            var pathBytes = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            session.With(s =>
            {
                ZlLock* created;
                fixed (byte* p = pathBytes, i = id)
                {
                    Interop.Check(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)pathBytes.Length, kind,
                        NativeMethods.ZL_SCHEME_KAZOO, i, (uint)id.Length, &created));
                }
                holder.Set((IntPtr)created);
                return 0;
            });
            return holder;
        }

        internal static NativeHolder NewSemaphore(ZooKeeperSession session, string path, string identifier, int maxLeases)
        {
            var holder = new NativeHolder(true, path);
            var pathBytes = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            session.With(s =>
            {
                ZlSemaphore* created;
                fixed (byte* p = pathBytes, i = id)
                {
                    Interop.Check(NativeMethods.zl_semaphore_new((ZlSession*)s, p, (uint)pathBytes.Length, i,
                        (uint)id.Length, (uint)maxLeases, &created));
                }
                holder.Set((IntPtr)created);
                return 0;
            });
            return holder;
        }

        /// <summary>Blocks until held (true) or the timeout ran out (false).</summary>
        internal bool Acquire(long timeoutMs, CancellationToken token)
        {
            token.ThrowIfCancellationRequested();
            var pointer = Enter();
            ZlCancel* cancel = null;
            var registration = default(CancellationTokenRegistration);
            try
            {
                if (token.CanBeCanceled)
                {
                    Interop.Check(NativeMethods.zl_cancel_new(&cancel));
                    registration = token.Register(FireCancel, (IntPtr)cancel);
                }
                byte acquired;
                int status = semaphore
                    ? NativeMethods.zl_semaphore_acquire((ZlSemaphore*)pointer, timeoutMs, -1, cancel, &acquired)
                    : NativeMethods.zl_lock_acquire((ZlLock*)pointer, timeoutMs, -1, cancel, &acquired);
                if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), token);
                return acquired != 0;
            }
            finally
            {
                registration.Dispose();
                if (cancel != null) NativeMethods.zl_cancel_free(cancel);
                Exit();
            }
        }

        /// <summary>Completes with true once held, false when the timeout ran out.</summary>
        internal Task<bool> AcquireAsync(long timeoutMs, CancellationToken token)
        {
            if (token.IsCancellationRequested) return Task.FromCanceled<bool>(token);
            return new PendingAcquire(this, token).Start(timeoutMs);
        }

        /// <summary>True if the handle held the lock (it does not any more).</summary>
        internal bool Release()
        {
            var pointer = Enter();
            try
            {
                byte released;
                Interop.Check(semaphore
                    ? NativeMethods.zl_semaphore_release((ZlSemaphore*)pointer, &released)
                    : NativeMethods.zl_lock_release((ZlLock*)pointer, &released));
                return released != 0;
            }
            finally { Exit(); }
        }

        /// <summary>A <c>ZL_LOCK_*</c> code.</summary>
        internal int State
        {
            get
            {
                var pointer = Enter();
                try
                {
                    int state;
                    Interop.Check(semaphore
                        ? NativeMethods.zl_semaphore_state((ZlSemaphore*)pointer, &state)
                        : NativeMethods.zl_lock_state((ZlLock*)pointer, &state));
                    return state;
                }
                finally { Exit(); }
            }
        }

        /// <summary>The fencing token and node of a held lock (not a semaphore).</summary>
        internal void Describe(out long token, out string node)
        {
            var pointer = Enter();
            try
            {
                byte held;
                long fencing;
                byte* text;
                uint length;
                Interop.Check(NativeMethods.zl_lock_fencing_token((ZlLock*)pointer, &fencing, &held));
                token = fencing;
                Interop.Check(NativeMethods.zl_lock_node((ZlLock*)pointer, &text, &length));
                node = Interop.TakeText(text, length);
            }
            finally { Exit(); }
        }

        /// <summary>The identifiers of a lock's contenders, or of a semaphore's lease holders.</summary>
        internal IList<string> Queue()
        {
            var pointer = Enter();
            try
            {
                byte* list;
                uint length;
                Interop.Check(semaphore
                    ? NativeMethods.zl_semaphore_lease_holders((ZlSemaphore*)pointer, &list, &length)
                    : NativeMethods.zl_lock_contenders((ZlLock*)pointer, &list, &length));
                return Interop.TakeList(list, length);
            }
            finally { Exit(); }
        }

        /// <summary>
        /// A token cancelled when the current hold is lost. The state callback
        /// is registered on first use, then the state is read, so a loss before
        /// that is not missed.
        /// </summary>
        internal CancellationToken WatchLoss()
        {
            var source = loss.Begin();
            lock (loss)
            {
                if (!events.IsAllocated)
                {
                    var pointer = Enter();
                    try
                    {
                        events = GCHandle.Alloc(loss);
                        var data = (void*)GCHandle.ToIntPtr(events);
                        Interop.Check(semaphore
                            ? NativeMethods.zl_semaphore_set_listener((ZlSemaphore*)pointer, OnSemaphoreState, data)
                            : NativeMethods.zl_lock_set_listener((ZlLock*)pointer, OnLockState, data));
                    }
                    finally { Exit(); }
                }
            }
            loss.Observe(State);
            return source.Token;
        }

        /// <summary>Forgets the current hold's loss token (before the handle is reused).</summary>
        internal void EndHold() { loss.End(); }

        protected override bool ReleaseHandle()
        {
            if (semaphore) NativeMethods.zl_semaphore_free((ZlSemaphore*)handle);
            else NativeMethods.zl_lock_free((ZlLock*)handle);
            // The native free returned: the state callback will not run again.
            if (events.IsAllocated) events.Free();
            return true;
        }

        static void DeliverState(void* userData, int state)
        {
            try
            {
                Interop.EnterCallback();
                ((LossWatch)GCHandle.FromIntPtr((IntPtr)userData).Target).Observe(state);
            }
            catch (Exception) { /* nothing may unwind into native code */ }
        }

        /// <summary>The loss token of the current hold, cancelled on a <c>ZL_LOCK_LOST_*</c> state.</summary>
        sealed class LossWatch
        {
            CancellationTokenSource source;

            internal CancellationTokenSource Begin()
            {
                var fresh = new CancellationTokenSource();
                return Interlocked.CompareExchange(ref source, fresh, null) ?? fresh;
            }

            internal void End() { Volatile.Write(ref source, null); }

            internal void Observe(int state)
            {
                var current = Volatile.Read(ref source);
                if (current == null || state < NativeMethods.ZL_LOCK_LOST_SESSION_EXPIRED || current.IsCancellationRequested) return;
                // The token's registrations are user code: run them on the thread pool, not on the
                // native callback thread (a registration waiting for an async acquire would wait forever).
                ThreadPool.QueueUserWorkItem(Cancel, current);
            }

            static void Cancel(object source)
            {
                try { ((CancellationTokenSource)source).Cancel(); }
                catch (AggregateException) { /* a user registration failed; the token is cancelled */ }
            }
        }
    }
}
