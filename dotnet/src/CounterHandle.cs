using System;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// The native counter behind <see cref="ZooKeeperCounter"/> and
    /// <see cref="ZooKeeperDoubleCounter"/>: values as the C ABI's
    /// <c>ZlCounterValue</c>, whole or floating as the default made it.
    /// </summary>
    internal sealed unsafe class CounterHandle : NativeHandle
    {
        internal CounterHandle(string path, ZooKeeperSession session, ZlCounterValue initial, int format)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            var p = Interop.Bytes(path);
            session.With(s =>
            {
                var value = initial;
                ZlCounter* created;
                fixed (byte* bytes = p) Interop.Check(NativeMethods.zl_counter_new((ZlSession*)s, bytes, (uint)p.Length, &value, format, &created));
                Set((IntPtr)created);
                return 0;
            });
        }

        internal ZlCounterValue Value(CancellationToken cancellationToken)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pointer = Enter();
            try
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    ZlCounterValue value;
                    int status = NativeMethods.zl_counter_value((ZlCounter*)pointer, cancel.Pointer, &value);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    return value;
                }
            }
            finally { Exit(); }
        }

        internal void Add(ZlCounterValue by, CancellationToken cancellationToken, out ZlCounterValue pre, out ZlCounterValue post)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pointer = Enter();
            try
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    ZlCounterValue before, after;
                    int status = NativeMethods.zl_counter_add((ZlCounter*)pointer, &by, cancel.Pointer, &before, &after);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    pre = before;
                    post = after;
                }
            }
            finally { Exit(); }
        }

        protected override bool ReleaseHandle()
        {
            NativeMethods.zl_counter_free((ZlCounter*)handle);
            return true;
        }
    }
}
