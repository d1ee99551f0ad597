using System;
using System.Runtime.InteropServices;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// One term of leadership won by a <see cref="ZooKeeperLeaderElection"/>
    /// (the core's <c>Leadership</c>). It lasts until disposed (which
    /// resigns: the next candidate leads) or lost: while
    /// <see cref="IsSuspended"/> the connection is down and the leader must
    /// not act until it is back; <see cref="HandleLostToken"/> is cancelled when
    /// the term is over without a resign (session expired or closed, node
    /// deleted), and another candidate may lead already.
    /// </summary>
    public sealed unsafe class ZooKeeperLeadership : IDisposable
    {
        static readonly NativeMethods.zl_leadership_set_listener_callback_delegate OnState = Deliver;

        readonly LeadershipHandle native = new LeadershipHandle();
        readonly CancellationTokenSource lost = new CancellationTokenSource();
        int disposed;

        internal ZooKeeperLeadership(string path, IntPtr pointer)
        {
            native.Set(pointer);
            Path = path;
            long token;
            byte* node;
            uint len;
            Interop.Check(NativeMethods.zl_leadership_fencing_token((ZlLeadership*)pointer, &token));
            FencingToken = token;
            Interop.Check(NativeMethods.zl_leadership_node((ZlLeadership*)pointer, &node, &len));
            Node = Interop.TakeText(node, len);
            // The callback first, then the state: a loss before the callback is not missed.
            native.Events = GCHandle.Alloc(lost);
            Interop.Check(NativeMethods.zl_leadership_set_listener((ZlLeadership*)pointer, OnState, (void*)GCHandle.ToIntPtr(native.Events)));
            Observe(lost, State);
        }

        /// <summary>The election path.</summary>
        public string Path { get; private set; }

        /// <summary>
        /// The term's fencing token: strictly greater than every earlier
        /// term's on the path. Pass it to what the leader writes to, which
        /// refuses tokens lower than the highest it has seen.
        /// </summary>
        public long FencingToken { get; private set; }

        /// <summary>The full path of the leader's node.</summary>
        public string Node { get; private set; }

        /// <summary>True while this term lasts: held, not suspended, lost or resigned.</summary>
        public bool IsLeader { get { return State == (int)LockState.Held; } }

        /// <summary>True while the connection is down: the term may survive, but until then the leader must not act.</summary>
        public bool IsSuspended { get { return State == (int)LockState.Suspended; } }

        /// <summary>Cancelled when the term is lost without a resign: the session expired or was closed, or someone deleted the node.</summary>
        /// <exception cref="ObjectDisposedException">The leadership was disposed (resigned).</exception>
        public CancellationToken HandleLostToken
        {
            get
            {
                if (disposed != 0) throw new ObjectDisposedException(GetType().Name);
                return lost.Token;
            }
        }

        /// <summary><see cref="HandleLostToken"/>, by its earlier name.</summary>
        [Obsolete("HandleLostToken, DistributedLock's name; HandleLost goes in the next release")]
        public CancellationToken HandleLost { get { return HandleLostToken; } }

        /// <summary>A transaction that commits only while this term lasts: a deposed leader writes nothing.</summary>
        /// <exception cref="ZooLockNotHeldException">The term is over.</exception>
        /// <exception cref="ObjectDisposedException">The leadership was disposed (resigned).</exception>
        public ZooKeeperTransaction Fenced()
        {
            var pointer = Enter();
            try
            {
                ZlTransaction* created;
                Interop.Check(NativeMethods.zl_leadership_fenced((ZlLeadership*)pointer, &created));
                return new ZooKeeperTransaction((IntPtr)created);
            }
            finally { native.Exit(); }
        }

        /// <summary>Resigns: the next candidate leads. Harmless when repeated; never throws (a term the session's end took is over anyway).</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref disposed, 1) != 0) return;
            try
            {
                var pointer = native.Enter();
                try { NativeMethods.zl_leadership_resign((ZlLeadership*)pointer, null); }
                finally { native.Exit(); }
            }
            catch (Exception) { /* freeing resigns in the background too */ }
            native.Dispose();
        }

        int State
        {
            get
            {
                var pointer = Enter();
                try
                {
                    int state;
                    Interop.Check(NativeMethods.zl_leadership_state((ZlLeadership*)pointer, &state));
                    return state;
                }
                finally { native.Exit(); }
            }
        }

        IntPtr Enter()
        {
            if (disposed != 0) throw new ObjectDisposedException(GetType().Name);
            return native.Enter();
        }

        static void Deliver(void* userData, int state)
        {
            try
            {
                Interop.EnterCallback();
                Observe((CancellationTokenSource)GCHandle.FromIntPtr((IntPtr)userData).Target, state);
            }
            catch (Exception) { /* nothing may unwind into native code */ }
        }

        static void Observe(CancellationTokenSource lost, int state)
        {
            if (LockStates.LostReasonOf(state) == LostReason.None || lost.IsCancellationRequested) return;
            // The token's registrations are user code: on the thread pool, not the native callback thread.
            ThreadPool.QueueUserWorkItem(_ =>
            {
                try { lost.Cancel(); }
                catch (AggregateException) { /* a user registration failed; the token is cancelled */ }
                catch (ObjectDisposedException) { }
            });
        }

        sealed class LeadershipHandle : NativeHandle
        {
            internal GCHandle Events;

            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_leadership_free((ZlLeadership*)handle);
                // The native free returned: the state callback will not run again.
                if (Events.IsAllocated) Events.Free();
                return true;
            }
        }
    }
}
