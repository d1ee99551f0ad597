using System;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A native cancel token (<c>ZlCancel</c>) fired when a
    /// <see cref="CancellationToken"/> is cancelled; none (a null pointer)
    /// for a token that cannot be. Dispose unregisters, then frees it.
    /// </summary>
    internal sealed unsafe class NativeCancel : IDisposable
    {
        static readonly Action<object> Fire = state => NativeMethods.zl_cancel_fire((ZlCancel*)(IntPtr)state);

        readonly CancellationTokenRegistration registration;
        IntPtr pointer;

        internal NativeCancel(CancellationToken token)
        {
            if (!token.CanBeCanceled) return;
            ZlCancel* created;
            Interop.Check(NativeMethods.zl_cancel_new(&created));
            pointer = (IntPtr)created;
            registration = token.Register(Fire, pointer);
        }

        internal ZlCancel* Pointer { get { return (ZlCancel*)pointer; } }

        public void Dispose()
        {
            // Waits for a Fire in progress: the token is not freed under it.
            registration.Dispose();
            if (pointer != IntPtr.Zero) NativeMethods.zl_cancel_free((ZlCancel*)pointer);
            pointer = IntPtr.Zero;
        }
    }

    /// <summary>
    /// One callback-completed native call in flight (an <c>_async</c> entry
    /// point): keeps its target handle, its cancel token and itself alive
    /// until the native callback, which completes the task. Every async
    /// method of the library is one of these.
    /// </summary>
    internal sealed unsafe class PendingCall<T>
    {
        /// <summary>Starts the native call on <paramref name="target"/> with the cancel token and the user data its callback gets back.</summary>
        internal delegate int Starter(IntPtr target, ZlCancel* cancel, void* userData);

        readonly NativeHandle target;
        readonly CancellationToken token;
        // Completed on the thread pool (Finish), so continuations never run on the callback thread.
        readonly TaskCompletionSource<T> completion = new TaskCompletionSource<T>();
        NativeCancel cancel;
        GCHandle self;
        bool entered;

        PendingCall(NativeHandle target, CancellationToken token, object state)
        {
            this.target = target;
            this.token = token;
            State = state;
        }

        /// <summary>What the callback needs besides the native result (e.g. a path to name the result by).</summary>
        internal object State { get; private set; }

        /// <summary>
        /// Starts a call: its task completes when the native callback runs
        /// (<see cref="Deliver"/>), or at once if it cannot start. A null
        /// <paramref name="target"/>: a call on no handle (a connect).
        /// </summary>
        internal static Task<T> Start(NativeHandle target, CancellationToken token, Starter start, object state = null)
        {
            if (token.IsCancellationRequested) return Task.FromCanceled<T>(token);
            var call = new PendingCall<T>(target, token, state);
            try
            {
                var pointer = IntPtr.Zero;
                if (target != null)
                {
                    pointer = target.Enter();
                    call.entered = true;
                }
                call.cancel = new NativeCancel(token);
                call.self = GCHandle.Alloc(call);
                int status = start(pointer, call.cancel.Pointer, (void*)GCHandle.ToIntPtr(call.self));
                // Only a call that started calls back.
                if (status != NativeMethods.ZL_OK) call.Finish(status, Interop.LastError(), null, true);
            }
            catch (Exception error)
            {
                call.Cleanup();
                call.completion.TrySetException(error);
            }
            return call.completion.Task;
        }

        /// <summary>
        /// From a native callback: completes the call with <paramref name="status"/>;
        /// on <c>ZL_OK</c> with what <paramref name="result"/> reads (now, while the
        /// callback's arguments are valid), else with the exception the status maps to.
        /// </summary>
        internal static void Deliver(void* userData, int status, byte* message, uint length, Func<PendingCall<T>, T> result)
        {
            try
            {
                Interop.EnterCallback();
                var call = (PendingCall<T>)GCHandle.FromIntPtr((IntPtr)userData).Target;
                var text = status == NativeMethods.ZL_OK ? null : Interop.Text(message, length);
                call.Finish(status, text, result, Interop.Exiting);
            }
            catch (Exception) { /* nothing may unwind into native code */ }
        }

        /// <summary>
        /// Reads the outcome now (the callback's arguments are valid only
        /// during it), then completes the task: on the thread pool, or
        /// <paramref name="inline"/>. At exit always inline: Mono 6.8 may
        /// wait up to a minute for a pool thread started during its exit.
        /// </summary>
        void Finish(int status, string message, Func<PendingCall<T>, T> result, bool inline)
        {
            Cleanup();
            var value = default(T);
            Exception error = null;
            if (status == NativeMethods.ZL_OK)
            {
                try { value = result(this); }
                catch (Exception failure) { error = failure; }
            }
            else if (status != (int)ZooLockStatus.Cancelled) error = Errors.FromStatus(status, message, token);
            if (inline) Complete(status, value, error);
            else ThreadPool.UnsafeQueueUserWorkItem(_ => Complete(status, value, error), null);
        }

        void Complete(int status, T value, Exception error)
        {
            if (error != null) completion.TrySetException(error);
            else if (status == (int)ZooLockStatus.Cancelled) completion.TrySetCanceled(token);
            else completion.TrySetResult(value);
        }

        void Cleanup()
        {
            if (self.IsAllocated) self.Free();
            if (cancel != null) cancel.Dispose();
            cancel = null;
            if (entered) target.Exit();
            entered = false;
        }
    }

    /// <summary>Continuations for the calls' tasks, outside the unsafe classes (which may not await).</summary>
    internal static class Continuations
    {
        /// <summary>The task's result passed through <paramref name="next"/>.</summary>
        internal static async Task<TResult> Then<T, TResult>(this Task<T> task, Func<T, TResult> next)
        {
            return next(await task.ConfigureAwait(false));
        }
    }

    /// <summary>
    /// The <c>ZlResultCallback</c>s the recipes share, one per kind of data;
    /// each call's own delegate field is made from one of these.
    /// </summary>
    internal static unsafe class ResultCallbacks
    {
        /// <summary>A yes/no answer: one byte, 1 or 0.</summary>
        internal static void YesNo(void* user, int status, byte* data, uint length, ZlStat* stat, byte* message, uint messageLength)
        {
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => length == 1 && data[0] != 0);
        }

        /// <summary>A path (UTF-8), such as a queue entry's.</summary>
        internal static void Text(void* user, int status, byte* data, uint length, ZlStat* stat, byte* message, uint messageLength)
        {
            PendingCall<string>.Deliver(user, status, message, messageLength, call => Interop.Text(data, length));
        }

        /// <summary>A queue's taken value: data 1 + the value, or 0 (null).</summary>
        internal static void Taken(void* user, int status, byte* data, uint length, ZlStat* stat, byte* message, uint messageLength)
        {
            PendingCall<byte[]>.Deliver(user, status, message, messageLength, call => ZooKeeperQueue.Taken(data, length));
        }
    }
}
