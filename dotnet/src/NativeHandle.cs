using System;
using System.Runtime.InteropServices;
using ZooLock.Native;

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

        /// <summary>A recipe's <c>_new</c> on a path, its handle written to <paramref name="created"/>.</summary>
        internal unsafe delegate int NewOnPath(ZlSession* session, byte* path, uint pathLength, void** created);

        /// <summary>Makes the native object on <paramref name="path"/> through <paramref name="session"/> and holds it.</summary>
        internal unsafe void Create(ZooKeeperSession session, string path, NewOnPath make)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            var p = Interop.Bytes(path);
            session.With(s =>
            {
                void* created;
                fixed (byte* bytes = p) Interop.Check(make((ZlSession*)s, bytes, (uint)p.Length, &created));
                Set((IntPtr)created);
                return 0;
            });
        }

        /// <summary>A count the native call <paramref name="count"/> writes, capped at <see cref="int.MaxValue"/>.</summary>
        internal unsafe delegate int CountCall(IntPtr target, uint* count);

        /// <summary>Runs <paramref name="call"/> on the pointer and returns the count it wrote.</summary>
        internal unsafe int Count(CountCall call)
        {
            var pointer = Enter();
            try
            {
                uint count;
                Interop.Check(call(pointer, &count));
                return (int)Math.Min(count, int.MaxValue);
            }
            finally { Exit(); }
        }
    }
}
