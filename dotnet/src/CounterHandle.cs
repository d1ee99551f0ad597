using System;
using System.Threading;
using System.Threading.Tasks;
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
        static readonly NativeMethods.zl_counter_value_async_callback_delegate OnValue = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZlCounterValue[]>.Deliver(user, status, message, messageLength, call => Values(data, length));
        static readonly NativeMethods.zl_counter_add_async_callback_delegate OnAdd = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZlCounterValue[]>.Deliver(user, status, message, messageLength, call => Values(data, length));

        static readonly NativeMethods.zl_counter_compare_and_set_async_callback_delegate OnCompareAndSet = ResultCallbacks.YesNo;

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

        internal bool CompareAndSet(ZlCounterValue expected, ZlCounterValue value, CancellationToken cancellationToken)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pointer = Enter();
            try
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    byte set;
                    int status = NativeMethods.zl_counter_compare_and_set((ZlCounter*)pointer, &expected, &value, cancel.Pointer, &set);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    return set != 0;
                }
            }
            finally { Exit(); }
        }

        /// <summary>The value, without blocking a thread.</summary>
        internal Task<ZlCounterValue> ValueAsync(CancellationToken cancellationToken)
        {
            return PendingCall<ZlCounterValue[]>.Start(this, cancellationToken, (c, cancel, user) =>
                NativeMethods.zl_counter_value_async((ZlCounter*)c, cancel, OnValue, user)).Then(values => values[0]);
        }

        /// <summary>Adds <paramref name="by"/> without blocking a thread: the values before and after.</summary>
        internal Task<ZlCounterValue[]> AddAsync(ZlCounterValue by, CancellationToken cancellationToken)
        {
            return PendingCall<ZlCounterValue[]>.Start(this, cancellationToken, (c, cancel, user) =>
            {
                var delta = by;
                return NativeMethods.zl_counter_add_async((ZlCounter*)c, &delta, cancel, OnAdd, user);
            });
        }

        /// <summary><see cref="CompareAndSet"/> without blocking a thread.</summary>
        internal Task<bool> CompareAndSetAsync(ZlCounterValue expected, ZlCounterValue value, CancellationToken cancellationToken)
        {
            return PendingCall<bool>.Start(this, cancellationToken, (c, cancel, user) =>
            {
                ZlCounterValue from = expected, to = value;
                return NativeMethods.zl_counter_compare_and_set_async((ZlCounter*)c, &from, &to, cancel, OnCompareAndSet, user);
            });
        }

        /// <summary>The values of a callback's data: each is_float (u8), int_value (i64), float_value (f64).</summary>
        static ZlCounterValue[] Values(byte* data, uint length)
        {
            var reader = new RecordReader(data, length);
            var values = new System.Collections.Generic.List<ZlCounterValue>();
            while (reader.More)
                values.Add(new ZlCounterValue { is_float = reader.U8(), int_value = reader.I64(), float_value = reader.F64() });
            return values.ToArray();
        }

        protected override bool ReleaseHandle()
        {
            NativeMethods.zl_counter_free((ZlCounter*)handle);
            return true;
        }
    }
}
