using System;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    internal sealed unsafe partial class Holder
    {
        /// <summary>One asynchronous acquire in flight: keeps the holder, the cancel token and itself alive until the callback.</summary>
        sealed class PendingAcquire
        {
            readonly Holder holder;
            readonly CancellationToken token;
            readonly TaskCompletionSource<bool> completion =
                new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            IntPtr cancel;
            CancellationTokenRegistration registration;
            GCHandle self;

            internal PendingAcquire(Holder holder, CancellationToken token)
            {
                this.holder = holder;
                this.token = token;
            }

            internal Task<bool> Start(long timeoutMs, ulong owner)
            {
                IntPtr pointer;
                try { pointer = holder.Enter(); }
                catch (Exception error)
                {
                    completion.TrySetException(error);
                    return completion.Task;
                }
                try
                {
                    if (token.CanBeCanceled)
                    {
                        ZlCancel* created;
                        Interop.Check(NativeMethods.zl_cancel_new(&created));
                        cancel = (IntPtr)created;
                        registration = token.Register(FireCancel, cancel);
                    }
                    self = GCHandle.Alloc(this);
                    var data = (void*)GCHandle.ToIntPtr(self);
                    int status = NativeMethods.zl_holder_acquire_async((ZlHolder*)pointer, timeoutMs, -1, owner, (ZlCancel*)cancel, OnAcquired, data);
                    if (status != NativeMethods.ZL_OK) Finish(status, false, Interop.LastError());
                }
                catch (Exception error)
                {
                    Cleanup();
                    completion.TrySetException(error);
                }
                return completion.Task;
            }

            internal static void Deliver(void* userData, int status, byte acquired, byte* message, uint length)
            {
                try
                {
                    Interop.EnterCallback();
                    var pending = (PendingAcquire)GCHandle.FromIntPtr((IntPtr)userData).Target;
                    pending.Finish(status, acquired != 0, status == NativeMethods.ZL_OK ? null : Interop.Text(message, length));
                }
                catch (Exception) { /* nothing may unwind into native code */ }
            }

            void Finish(int status, bool acquired, string message)
            {
                Cleanup();
                if (status == NativeMethods.ZL_OK) completion.TrySetResult(acquired);
                else if (status == (int)ZooLockStatus.Cancelled) completion.TrySetCanceled(token);
                else completion.TrySetException(Errors.FromStatus(status, message, token));
            }

            void Cleanup()
            {
                if (self.IsAllocated) self.Free();
                registration.Dispose();
                if (cancel != IntPtr.Zero) NativeMethods.zl_cancel_free((ZlCancel*)cancel);
                cancel = IntPtr.Zero;
                holder.Exit();
            }
        }
    }
}
