using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A candidate in the leader election at a path (Curator's
    /// <c>LeaderLatch</c>, kazoo's <c>Election</c>, the core's <c>Election</c>):
    /// candidates queue in order and the first leads. Awaiting leadership
    /// returns the term won, a <see cref="ZooKeeperLeadership"/>; dispose it to
    /// resign. One term at a time per candidate: while a term lasts, another
    /// await on the same candidate waits for it to end. Its nodes are kazoo
    /// <c>Lock</c> nodes, so kazoo's <c>Election</c> on the path takes part.
    /// </summary>
    public sealed unsafe class ZooKeeperLeaderElection
    {
        // Once wrapped, the term is the wrapper's to free (by its finalizer if the task's continuation fails).
        static readonly NativeMethods.zl_election_lead_async_callback_delegate OnLed = (userData, status, leadership, message, length) =>
            PendingCall<ZooKeeperLeadership>.Deliver(userData, status, message, length,
                call => leadership == null ? null : new ZooKeeperLeadership((string)call.State, (IntPtr)leadership));

        readonly ElectionHandle native = new ElectionHandle();

        /// <summary>A candidate on <paramref name="path"/> through <paramref name="session"/>; nothing is sent before an await.</summary>
        /// <param name="path">An absolute ZooKeeper path, e.g. <c>/elections/scheduler</c>.</param>
        /// <param name="session">The session to take part through.</param>
        /// <param name="identifier">This candidate's node data, shown by <see cref="GetContenders"/>.</param>
        /// <exception cref="ArgumentException">The path is not a valid lock path.</exception>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public ZooKeeperLeaderElection(string path, ZooKeeperSession session, string identifier = null)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            var p = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            session.With(s =>
            {
                ZlElection* created;
                fixed (byte* bytes = p, i = id)
                {
                    Interop.Check(NativeMethods.zl_election_new((ZlSession*)s, bytes, (uint)p.Length, i, (uint)id.Length, &created));
                }
                native.Set((IntPtr)created);
                return 0;
            });
            Path = path;
        }

        /// <summary>The election path.</summary>
        public string Path { get; private set; }

        /// <summary>Waits until this candidate leads, up to <paramref name="timeout"/> (null: forever).</summary>
        /// <exception cref="TimeoutException">Others led for the whole timeout; the candidacy was withdrawn.</exception>
        /// <exception cref="OperationCanceledException">The token was cancelled; the candidacy was withdrawn.</exception>
        public ZooKeeperLeadership AwaitLeadership(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            long millis = Interop.Millis(timeout, "timeout");
            var term = Lead(millis, cancellationToken);
            if (term == null) throw Timeout(millis);
            return term;
        }

        /// <summary>Leads if possible within <paramref name="timeout"/> (zero: one try); null if others led the whole time.</summary>
        public ZooKeeperLeadership TryAwaitLeadership(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return Lead(Interop.Millis(timeout, "timeout"), cancellationToken);
        }

        /// <summary><see cref="AwaitLeadership"/> without blocking a thread.</summary>
        public Task<ZooKeeperLeadership> AwaitLeadershipAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return LeadAsync(Interop.Millis(timeout, "timeout"), cancellationToken, true);
        }

        /// <summary><see cref="TryAwaitLeadership"/> without blocking a thread.</summary>
        public Task<ZooKeeperLeadership> TryAwaitLeadershipAsync(TimeSpan timeout = default(TimeSpan), CancellationToken cancellationToken = default(CancellationToken))
        {
            return LeadAsync(Interop.Millis(timeout, "timeout"), cancellationToken, false);
        }

        /// <summary>The identifiers of the candidates, the leader first.</summary>
        public IList<string> GetContenders()
        {
            var pointer = native.Enter();
            try
            {
                byte* list;
                uint len;
                Interop.Check(NativeMethods.zl_election_contenders((ZlElection*)pointer, &list, &len));
                return Interop.TakeList(list, len);
            }
            finally { native.Exit(); }
        }

        TimeoutException Timeout(long millis)
        {
            return new TimeoutException(string.Format("did not lead {0} within {1} ms", Path, millis));
        }

        ZooKeeperLeadership Lead(long millis, CancellationToken token)
        {
            token.ThrowIfCancellationRequested();
            var pointer = native.Enter();
            try
            {
                using (var cancel = new NativeCancel(token))
                {
                    ZlLeadership* term;
                    int status = NativeMethods.zl_election_lead((ZlElection*)pointer, millis, cancel.Pointer, &term);
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), token);
                    return term == null ? null : new ZooKeeperLeadership(Path, (IntPtr)term);
                }
            }
            finally { native.Exit(); }
        }

        /// <summary>Completes with the term won; on timeout, null or a <see cref="TimeoutException"/>.</summary>
        Task<ZooKeeperLeadership> LeadAsync(long millis, CancellationToken token, bool throwOnTimeout)
        {
            var leading = PendingCall<ZooKeeperLeadership>.Start(native, token, (pointer, cancel, userData) =>
                NativeMethods.zl_election_lead_async((ZlElection*)pointer, millis, cancel, OnLed, userData), Path);
            if (!throwOnTimeout) return leading;
            return leading.Then(term =>
            {
                if (term == null) throw Timeout(millis);
                return term;
            });
        }

        sealed class ElectionHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_election_free((ZlElection*)handle);
                return true;
            }
        }
    }
}
