using System;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// Curator's <c>LeaderLatch</c> (the core's): a candidate that stays in
    /// the election at <see cref="Path"/> from <see cref="Start"/> to
    /// <see cref="Close"/> or <see cref="Dispose"/>, campaigning again after a
    /// term lost to a session expiry or a deletion of its node.
    /// <see cref="HasLeadership"/> says whether it leads now (not while the
    /// connection is suspended). Its node is a kazoo <c>Election</c> candidate's.
    /// </summary>
    public sealed unsafe class ZooKeeperLeaderLatch : IDisposable
    {
        static readonly NativeMethods.zl_leader_latch_wait_async_callback_delegate OnWait = ResultCallbacks.YesNo;
        static readonly NativeMethods.zl_leader_latch_close_async_callback_delegate OnClose = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);

        /// <summary>How long <see cref="Dispose"/> waits for the delete while the server is away, as a lock handle's does.</summary>
        static readonly TimeSpan DisposeWait = TimeSpan.FromSeconds(2);

        readonly LatchHandle native = new LatchHandle();

        /// <summary>A candidate at <paramref name="path"/> whose node holds <paramref name="identifier"/>; nothing is sent before <see cref="Start"/>.</summary>
        /// <exception cref="ArgumentException">The path is not a valid ZooKeeper path.</exception>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public ZooKeeperLeaderLatch(string path, ZooKeeperSession session, string identifier = null)
        {
            var id = Encoding.UTF8.GetBytes(identifier ?? "");
            native.Create(session, path, (s, bytes, length, created) =>
            {
                fixed (byte* value = id)
                    return NativeMethods.zl_leader_latch_new(s, bytes, length, value, (uint)id.Length, (ZlLeaderLatch**)created);
            });
            Path = path;
        }

        /// <summary>The election path.</summary>
        public string Path { get; private set; }

        /// <summary>Joins the election and returns; from now until <see cref="Close"/> it leads whenever it can.</summary>
        /// <exception cref="ArgumentException">Started already.</exception>
        /// <exception cref="ObjectDisposedException">Closed or disposed.</exception>
        public void Start()
        {
            var pointer = native.Enter();
            try { Interop.Check(NativeMethods.zl_leader_latch_start((ZlLeaderLatch*)pointer)); }
            finally { native.Exit(); }
        }

        /// <summary>Whether this candidate leads now.</summary>
        public bool HasLeadership
        {
            get { return FencingToken.HasValue; }
        }

        /// <summary>The fencing token of the term it leads; null when it does not lead.</summary>
        public long? FencingToken
        {
            get
            {
                var pointer = native.Enter();
                try
                {
                    byte leads;
                    long token;
                    Interop.Check(NativeMethods.zl_leader_latch_leads((ZlLeaderLatch*)pointer, &leads, &token));
                    return leads != 0 ? token : (long?)null;
                }
                finally { native.Exit(); }
            }
        }

        /// <summary>Waits until this candidate leads (Curator's <c>await</c>): true; false if <paramref name="timeout"/> (null: forever) ran out first.</summary>
        /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
        /// <exception cref="ObjectDisposedException">The latch is closed, before or during the wait.</exception>
        public bool WaitForLeadership(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return WaitForLeadershipAsync(timeout, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="WaitForLeadership"/> without blocking a thread.</summary>
        public Task<bool> WaitForLeadershipAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            long millis = Interop.Millis(timeout, "timeout");
            return PendingCall<bool>.Start(native, cancellationToken, (l, cancel, user) =>
                NativeMethods.zl_leader_latch_wait_async((ZlLeaderLatch*)l, millis, cancel, OnWait, user));
        }

        /// <summary>Leaves the election: its term or candidacy ends, and this returns once its node is deleted.</summary>
        public void Close(CancellationToken cancellationToken = default(CancellationToken))
        {
            CloseAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Close"/> without blocking a thread.</summary>
        public Task CloseAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (l, cancel, user) =>
                NativeMethods.zl_leader_latch_close_async((ZlLeaderLatch*)l, cancel, OnClose, user));
        }

        /// <summary>
        /// Closes (waiting at most 2 s while the server is away; the node then
        /// goes in the background) and frees the handle. Harmless when repeated.
        /// </summary>
        public void Dispose()
        {
            if (native.IsClosed) return;
            try { CloseAsync().Wait(DisposeWait); }
            catch (AggregateException) { }
            catch (ObjectDisposedException) { }
            native.Dispose();
        }

        sealed class LatchHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_leader_latch_free((ZlLeaderLatch*)handle);
                return true;
            }
        }
    }
}
