using System;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>The native library's version, and a deliberate native panic for the tests of the boundary.</summary>
    internal static unsafe class SelfTest
    {
        static readonly NativeMethods.zl_selftest_panic_callback_delegate OnDone = Done;

        /// <summary>The version of the loaded native library.</summary>
        internal static string NativeVersion()
        {
            byte* text;
            uint length;
            Interop.Check(NativeMethods.zl_version(&text, &length));
            return Interop.Text(text, length);
        }

        /// <summary>Panics inside the native library, in this call: throws what the panic maps to.</summary>
        internal static void Panic()
        {
            Interop.Check(NativeMethods.zl_selftest_panic(0, OnDone, null));
        }

        /// <summary>Panics inside a native task: the task faults with what the panic maps to.</summary>
        internal static Task PanicInTask()
        {
            var completion = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            var self = GCHandle.Alloc(completion);
            int status = NativeMethods.zl_selftest_panic(1, OnDone, (void*)GCHandle.ToIntPtr(self));
            if (status != NativeMethods.ZL_OK)
            {
                self.Free();
                completion.SetException(Errors.FromStatus(status, Interop.LastError(), default(System.Threading.CancellationToken)));
            }
            return completion.Task;
        }

        static void Done(void* userData, int status, byte acquired, byte* message, uint length)
        {
            try
            {
                Interop.EnterCallback();
                var self = GCHandle.FromIntPtr((IntPtr)userData);
                var completion = (TaskCompletionSource<bool>)self.Target;
                self.Free();
                if (status == NativeMethods.ZL_OK) completion.SetResult(true);
                else completion.SetException(Errors.FromStatus(status, Interop.Text(message, length), default(System.Threading.CancellationToken)));
            }
            catch (Exception) { /* nothing may unwind into native code */ }
        }
    }
}
