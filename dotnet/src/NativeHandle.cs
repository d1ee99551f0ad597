using System;
using System.Runtime.InteropServices;

namespace ZooLock
{
    /// <summary>
    /// A native handle: freed once, never while a call on it is in flight
    /// (calls hold a reference through <see cref="Enter"/>/<see cref="Exit"/>),
    /// and by the finalizer if nobody disposed it.
    /// </summary>
    internal abstract class NativeHandle : SafeHandle
    {
        protected NativeHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        internal void Set(IntPtr pointer) { SetHandle(pointer); }

        /// <summary>The pointer, kept alive until <see cref="Exit"/>; ObjectDisposedException once disposed.</summary>
        internal IntPtr Enter()
        {
            bool added = false;
            DangerousAddRef(ref added);
            return handle;
        }

        internal void Exit() { DangerousRelease(); }
    }
}
