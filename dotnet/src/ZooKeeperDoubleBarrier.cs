using System;
using System.Diagnostics;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A member of kazoo's <c>DoubleBarrier</c> (the core's):
    /// <see cref="Enter"/> returns once <see cref="NumClients"/> members
    /// entered, <see cref="Leave"/> once every member left. Each member is an
    /// ephemeral node holding its identifier, so kazoo's <c>DoubleBarrier</c>
    /// on the same path takes part. Both go on across a lost connection and a
    /// session expiry; a cancelled or failed enter leaves no node behind.
    /// </summary>
    public sealed unsafe class ZooKeeperDoubleBarrier
    {
        static readonly NativeMethods.zl_double_barrier_enter_async_callback_delegate OnEnter = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_double_barrier_leave_async_callback_delegate OnLeave = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);

        readonly DoubleBarrierHandle native = new DoubleBarrierHandle();

        /// <summary>A member of the double barrier at <paramref name="path"/> waiting for <paramref name="numClients"/> members.</summary>
        /// <param name="path">An absolute ZooKeeper path.</param>
        /// <param name="session">The session to take part through.</param>
        /// <param name="numClients">How many members <see cref="Enter"/> waits for, at least 1.</param>
        /// <param name="identifier">This member's node data; kazoo's default, <c>host-pid</c>, if null.</param>
        /// <exception cref="ArgumentException">A bad path, identifier or member count.</exception>
        public ZooKeeperDoubleBarrier(string path, ZooKeeperSession session, int numClients, string identifier = null)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            if (numClients < 1) throw new ArgumentOutOfRangeException("numClients", numClients, "at least 1 member");
            identifier = identifier ?? Dns.GetHostName() + "-" + Process.GetCurrentProcess().Id;
            var p = Interop.Bytes(path);
            var id = Interop.Bytes(identifier);
            session.With(s =>
            {
                ZlDoubleBarrier* created;
                fixed (byte* bytes = p, i = id)
                {
                    Interop.Check(NativeMethods.zl_double_barrier_new((ZlSession*)s, bytes, (uint)p.Length, (uint)numClients, i, (uint)id.Length, &created));
                }
                native.Set((IntPtr)created);
                return 0;
            });
            Path = path;
            NumClients = numClients;
            Identifier = identifier;
        }

        /// <summary>The barrier's path.</summary>
        public string Path { get; private set; }

        /// <summary>How many members <see cref="Enter"/> waits for.</summary>
        public int NumClients { get; private set; }

        /// <summary>This member's node data.</summary>
        public string Identifier { get; private set; }

        /// <summary>This member's node (kazoo's <c>create_path</c>).</summary>
        public string Node
        {
            get
            {
                var pointer = native.Enter();
                try
                {
                    byte* text;
                    uint len;
                    Interop.Check(NativeMethods.zl_double_barrier_node((ZlDoubleBarrier*)pointer, &text, &len));
                    return Interop.TakeText(text, len);
                }
                finally { native.Exit(); }
            }
        }

        /// <summary>Whether this member entered and has not left.</summary>
        public bool IsParticipating
        {
            get
            {
                var pointer = native.Enter();
                try
                {
                    byte participating;
                    Interop.Check(NativeMethods.zl_double_barrier_participating((ZlDoubleBarrier*)pointer, &participating));
                    return participating != 0;
                }
                finally { native.Exit(); }
            }
        }

        /// <summary>Enters; returns once <see cref="NumClients"/> members are in.</summary>
        /// <exception cref="OperationCanceledException">The token was cancelled; this member's node is gone.</exception>
        public void Enter(CancellationToken cancellationToken = default(CancellationToken))
        {
            EnterAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Enter"/> without blocking a thread.</summary>
        public Task EnterAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (b, cancel, user) =>
                NativeMethods.zl_double_barrier_enter_async((ZlDoubleBarrier*)b, cancel, OnEnter, user));
        }

        /// <summary>Leaves; returns once every member left. This member's node goes even if the wait is cancelled.</summary>
        public void Leave(CancellationToken cancellationToken = default(CancellationToken))
        {
            LeaveAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Leave"/> without blocking a thread.</summary>
        public Task LeaveAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (b, cancel, user) =>
                NativeMethods.zl_double_barrier_leave_async((ZlDoubleBarrier*)b, cancel, OnLeave, user));
        }

        sealed class DoubleBarrierHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_double_barrier_free((ZlDoubleBarrier*)handle);
                return true;
            }
        }
    }
}
