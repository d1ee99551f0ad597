using System;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A shared whole number kept as one node's data in kazoo's format
    /// (kazoo's <c>Counter</c>: the value as text; or Curator's
    /// <c>SharedCount</c>, 4 bytes, with <c>curatorFormat</c>), so Python and
    /// Java clients count on the same node. A change reads the value, writes
    /// the sum conditional on the version read, and reads again when another
    /// client changed it in between. A change whose reply was lost is never
    /// made twice: if it cannot tell whether it was made, it throws
    /// <see cref="ZooLockConnectionException"/>. Dispose frees the native handle.
    /// </summary>
    public sealed unsafe class ZooKeeperCounter : IDisposable
    {
        readonly Handle native = new Handle();

        /// <summary>A counter on <paramref name="path"/> whose empty node reads as <paramref name="defaultValue"/>.</summary>
        /// <exception cref="ArgumentException">A bad path, or a Curator-format default beyond 32 bits.</exception>
        public ZooKeeperCounter(string path, ZooKeeperSession session, long defaultValue = 0, bool curatorFormat = false)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            Path = path;
            var p = Interop.Bytes(path);
            session.With(s =>
            {
                var initial = new ZlCounterValue { is_float = 0, int_value = defaultValue };
                ZlCounter* created;
                fixed (byte* bytes = p)
                {
                    Interop.Check(NativeMethods.zl_counter_new((ZlSession*)s, bytes, (uint)p.Length, &initial,
                        curatorFormat ? NativeMethods.ZL_COUNTER_CURATOR : NativeMethods.ZL_COUNTER_KAZOO, &created));
                }
                native.Set((IntPtr)created);
                return 0;
            });
        }

        /// <summary>The counter's node.</summary>
        public string Path { get; private set; }

        /// <summary>The value now; creates the node (empty: the default) if missing.</summary>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a whole number.</exception>
        public long GetValue(CancellationToken cancellationToken = default(CancellationToken))
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pointer = native.Enter();
            try
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    ZlCounterValue value;
                    int status = NativeMethods.zl_counter_value((ZlCounter*)pointer, cancel.Pointer, &value);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    return value.int_value;
                }
            }
            finally { native.Exit(); }
        }

        /// <summary>Adds <paramref name="delta"/>; the values before and after (kazoo's <c>pre_value</c>, <c>post_value</c>).</summary>
        /// <exception cref="ArgumentException">The sum is out of the counter's range.</exception>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a whole number.</exception>
        public ZooKeeperCounterChange Add(long delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pointer = native.Enter();
            try
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    var by = new ZlCounterValue { is_float = 0, int_value = delta };
                    ZlCounterValue pre, post;
                    int status = NativeMethods.zl_counter_add((ZlCounter*)pointer, &by, cancel.Pointer, &pre, &post);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    return new ZooKeeperCounterChange(pre.int_value, post.int_value);
                }
            }
            finally { native.Exit(); }
        }

        /// <summary>Subtracts <paramref name="delta"/>, as <see cref="Add"/>.</summary>
        public ZooKeeperCounterChange Subtract(long delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (delta == long.MinValue) throw new ArgumentOutOfRangeException("delta", delta, "cannot be negated");
            return Add(-delta, cancellationToken);
        }

        /// <summary>Frees the native handle. Harmless when repeated.</summary>
        public void Dispose() { native.Dispose(); }

        sealed class Handle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_counter_free((ZlCounter*)handle);
                return true;
            }
        }
    }
}
