using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// One native holder (the C ABI's <c>ZlHolder</c>: a lock of any kind, or
    /// a semaphore): one acquisition at a time. Acquires block or complete a
    /// task; a <see cref="CancellationToken"/> fires a native cancel token.
    /// Freed by Dispose or, if forgotten, by the finalizer: the native side
    /// then gives a held lock or lease back in the background.
    /// </summary>
    internal sealed unsafe class Holder : NativeHandle
    {
        static readonly NativeMethods.zl_holder_set_listener_callback_delegate OnState = DeliverState;
        static readonly NativeMethods.zl_holder_acquire_async_callback_delegate OnAcquired =
            (userData, status, acquired, message, length) => PendingCall<bool>.Deliver(userData, status, message, length, call => acquired != 0);

        readonly LossWatch loss = new LossWatch();
        GCHandle events;

        internal readonly string Path;
        /// <summary>The session it was made on.</summary>
        internal readonly ZooKeeperSession Session;

        Holder(ZooKeeperSession session, string path)
        {
            Session = session;
            Path = path;
        }

        /// <summary>
        /// A lock holder; a <paramref name="reentrant"/> one is shared by all acquisitions of its lock, whose owners the core counts.
        /// Without <paramref name="mirror"/> it waits by listing the children, as kazoo and Curator do.
        /// </summary>
        internal static Holder NewLock(ZooKeeperSession session, string path, int kind, string identifier, bool reentrant = false, bool mirror = true,
            ZooKeeperNamingScheme scheme = ZooKeeperNamingScheme.Kazoo)
        {
            var pathBytes = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            var holder = New(session, path, (s, created) =>
            {
                fixed (byte* p = pathBytes, i = id)
                    return NativeMethods.zl_lock_new(s, p, (uint)pathBytes.Length, kind, (int)scheme, i, (uint)id.Length,
                        (reentrant ? NativeMethods.ZL_LOCK_REENTRANT : 0) | (mirror ? 0 : NativeMethods.ZL_LOCK_LISTING), created);
            });
            if (reentrant) holder.loss.Holds = holder.Holds;
            return holder;
        }

        /// <summary>A recipe's native constructor (<c>zl_semaphore_new</c>, …) given the native session and where to put the holder.</summary>
        internal delegate int NativeNew(ZlSession* session, ZlHolder** created);

        /// <summary>A holder that <paramref name="make"/> creates: how each recipe's class makes its own.</summary>
        internal static Holder New(ZooKeeperSession session, string path, NativeNew make)
        {
            var holder = new Holder(session, path);
            session.With(s =>
            {
                ZlHolder* created;
                Interop.Check(make((ZlSession*)s, &created));
                holder.Set((IntPtr)created);
                return 0;
            });
            return holder;
        }

        /// <summary>Blocks until held (true) or the timeout ran out (false). <paramref name="owner"/>: who acquires a reentrant lock (0: the holder).</summary>
        internal bool Acquire(long timeoutMs, CancellationToken token, ulong owner = 0)
        {
            token.ThrowIfCancellationRequested();
            var pointer = Enter();
            try
            {
                using (var cancel = new NativeCancel(token))
                {
                    byte acquired;
                    int status = NativeMethods.zl_holder_acquire((ZlHolder*)pointer, timeoutMs, -1, owner, cancel.Pointer, &acquired);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), token);
                    return acquired != 0;
                }
            }
            finally { Exit(); }
        }

        /// <summary>Completes with true once held, false when the timeout ran out.</summary>
        internal Task<bool> AcquireAsync(long timeoutMs, CancellationToken token, ulong owner = 0)
        {
            return PendingCall<bool>.Start(this, token, (pointer, cancel, userData) =>
                NativeMethods.zl_holder_acquire_async((ZlHolder*)pointer, timeoutMs, -1, owner, cancel, OnAcquired, userData));
        }

        /// <summary>True if the holder held (it does not any more, unless a reentrant owner holds on).</summary>
        internal bool Release(ulong owner = 0)
        {
            var pointer = Enter();
            try
            {
                byte released;
                Interop.Check(NativeMethods.zl_holder_release((ZlHolder*)pointer, owner, &released));
                return released != 0;
            }
            finally { Exit(); }
        }

        /// <summary>A <c>ZL_LOCK_*</c> code (<see cref="LockState"/>).</summary>
        internal int State
        {
            get
            {
                var pointer = Enter();
                try
                {
                    int state;
                    Interop.Check(NativeMethods.zl_holder_state((ZlHolder*)pointer, &state));
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
                Interop.Check(NativeMethods.zl_lock_fencing_token((ZlHolder*)pointer, &fencing, &held));
                token = fencing;
                Interop.Check(NativeMethods.zl_lock_node((ZlHolder*)pointer, &text, &length));
                node = Interop.TakeText(text, length);
            }
            finally { Exit(); }
        }

        /// <summary>The fencing token of the lock's current hold, or null.</summary>
        internal long? Token()
        {
            var pointer = Enter();
            try
            {
                byte held;
                long token;
                Interop.Check(NativeMethods.zl_lock_fencing_token((ZlHolder*)pointer, &token, &held));
                return held != 0 ? token : (long?)null;
            }
            finally { Exit(); }
        }

        /// <summary>Each held path's fencing token, in the order taken (<c>zl_holder_fencing_tokens</c>).</summary>
        internal IList<KeyValuePair<string, long>> Tokens()
        {
            var pointer = Enter();
            try
            {
                byte* record;
                uint length;
                Interop.Check(NativeMethods.zl_holder_fencing_tokens((ZlHolder*)pointer, &record, &length));
                try
                {
                    var tokens = new List<KeyValuePair<string, long>>();
                    var reader = new RecordReader(record, length);
                    while (reader.More) tokens.Add(new KeyValuePair<string, long>(reader.Text(), reader.I64()));
                    return tokens;
                }
                finally { NativeMethods.zl_bytes_free(record, length); }
            }
            finally { Exit(); }
        }

        /// <summary>A transaction fenced by the current hold (<c>zl_holder_fenced</c>).</summary>
        internal ZooKeeperTransaction Fenced()
        {
            var pointer = Enter();
            try
            {
                ZlTransaction* created;
                Interop.Check(NativeMethods.zl_holder_fenced((ZlHolder*)pointer, &created));
                return new ZooKeeperTransaction((IntPtr)created);
            }
            finally { Exit(); }
        }

        /// <summary>Whether the hold of fencing token <paramref name="hold"/> is still this lock's.</summary>
        internal bool Holds(long hold)
        {
            try { return Token() == hold; }
            catch (ObjectDisposedException) { return false; }
        }

        /// <summary>The identifiers of a lock's contenders, or of a semaphore's lease holders.</summary>
        internal IList<string> Queue()
        {
            var pointer = Enter();
            try
            {
                byte* list;
                uint length;
                Interop.Check(NativeMethods.zl_holder_queue((ZlHolder*)pointer, &list, &length));
                return Interop.TakeList(list, length);
            }
            finally { Exit(); }
        }

        /// <summary>
        /// A token cancelled when the current hold is lost. The state callback
        /// is registered on first use, then the state is read, so a loss before
        /// that is not missed. On a shared (reentrant) holder, <paramref name="hold"/>
        /// is the fencing token of the hold asked about, which may have ended.
        /// </summary>
        internal CancellationToken WatchLoss(long hold = 0)
        {
            var source = loss.Begin(hold);
            // A later hold began, so this one ended while its holder lived: it was lost.
            if (source == null) return new CancellationToken(true);
            lock (loss)
            {
                if (!events.IsAllocated)
                {
                    var pointer = Enter();
                    try
                    {
                        events = GCHandle.Alloc(loss);
                        var data = (void*)GCHandle.ToIntPtr(events);
                        Interop.Check(NativeMethods.zl_holder_set_listener((ZlHolder*)pointer, OnState, data));
                    }
                    finally { Exit(); }
                }
            }
            loss.Observe(State);
            if (loss.Holds != null && !Holds(hold)) loss.Ended(hold);
            return source.Token;
        }

        /// <summary>Forgets the current hold's loss token (before the holder is reused).</summary>
        internal void EndHold() { loss.End(); }

        protected override bool ReleaseHandle()
        {
            NativeMethods.zl_holder_free((ZlHolder*)handle);
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

        /// <summary>
        /// The loss token of the current hold, cancelled on a <c>ZL_LOCK_LOST_*</c> state.
        /// A pooled holder's holds are all key 0: a holder whose hold was lost is not reused, and
        /// <see cref="End"/> forgets a released one. A shared (reentrant) holder's holds follow
        /// one another on it, keyed by their fencing tokens, which increase from hold to hold.
        /// </summary>
        sealed class LossWatch
        {
            readonly object gate = new object();
            CancellationTokenSource source;
            long key;

            /// <summary>Shared holders: whether the hold of a key is still the holder's.</summary>
            internal Func<long, bool> Holds;

            /// <summary>The source of hold <paramref name="hold"/>; null if a later hold has begun.</summary>
            internal CancellationTokenSource Begin(long hold)
            {
                lock (gate)
                {
                    if (hold < key) return null;
                    if (source == null || hold > key) source = new CancellationTokenSource();
                    key = hold;
                    return source;
                }
            }

            internal void End() { lock (gate) source = null; }

            internal void Observe(int state)
            {
                if (LockStates.LostReasonOf(state) == LostReason.None) return;
                lock (gate) Cancel(source, key);
            }

            /// <summary>Hold <paramref name="hold"/> is over, lost: its holder was not disposed.</summary>
            internal void Ended(long hold)
            {
                lock (gate)
                {
                    if (hold == key) Cancel(source, key);
                }
            }

            void Cancel(CancellationTokenSource current, long hold)
            {
                if (current == null || current.IsCancellationRequested) return;
                // The token's registrations are user code: run them on the thread pool, not on the
                // native callback thread (a registration waiting for an async acquire would wait forever).
                ThreadPool.QueueUserWorkItem(_ =>
                {
                    // On a shared holder, the report may be of an earlier hold's loss, late.
                    if (Holds != null && Holds(hold)) return;
                    try { current.Cancel(); }
                    catch (AggregateException) { /* a user registration failed; the token is cancelled */ }
                });
            }
        }
    }
}
