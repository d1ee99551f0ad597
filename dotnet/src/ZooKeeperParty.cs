using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A member of kazoo's <c>Party</c> or, made with <c>shallow: true</c>,
    /// <c>ShallowParty</c> (the core's): an ephemeral node per member, listed
    /// by <see cref="GetMembers"/>. A member whose session expires joins again
    /// on the next one until it leaves. kazoo's classes on the same path take part.
    /// </summary>
    public sealed unsafe class ZooKeeperParty
    {
        static readonly NativeMethods.zl_party_join_async_callback_delegate OnJoin = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_party_leave_async_callback_delegate OnLeave = ResultCallbacks.YesNo;
        static readonly NativeMethods.zl_party_members_async_callback_delegate OnMembers = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<IList<string>>.Deliver(user, status, message, messageLength, call => Interop.List(data, length));

        readonly PartyHandle native = new PartyHandle();

        /// <summary>A member of the party at <paramref name="path"/>; nothing is sent before <see cref="Join"/>.</summary>
        /// <param name="path">An absolute ZooKeeper path.</param>
        /// <param name="session">The session to take part through.</param>
        /// <param name="identifier">What <see cref="GetMembers"/> lists for this member (kazoo's default: empty).</param>
        /// <param name="shallow">kazoo's <c>ShallowParty</c>: the identifier is in the node's name (no '/').</param>
        /// <exception cref="ArgumentException">A bad path or identifier.</exception>
        public ZooKeeperParty(string path, ZooKeeperSession session, string identifier = null, bool shallow = false)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (session == null) throw new ArgumentNullException("session");
            var p = Interop.Bytes(path);
            var id = Interop.Bytes(identifier ?? "");
            session.With(s =>
            {
                ZlParty* created;
                fixed (byte* bytes = p, i = id)
                {
                    Interop.Check(NativeMethods.zl_party_new((ZlSession*)s, bytes, (uint)p.Length, i, (uint)id.Length, (byte)(shallow ? 1 : 0), &created));
                }
                native.Set((IntPtr)created);
                return 0;
            });
            Path = path;
            Identifier = identifier ?? "";
        }

        /// <summary>The party's path.</summary>
        public string Path { get; private set; }

        /// <summary>This member's identifier.</summary>
        public string Identifier { get; private set; }

        /// <summary>Whether this member joined and has not left.</summary>
        public bool IsParticipating
        {
            get
            {
                var pointer = native.Enter();
                try
                {
                    byte participating;
                    Interop.Check(NativeMethods.zl_party_participating((ZlParty*)pointer, &participating));
                    return participating != 0;
                }
                finally { native.Exit(); }
            }
        }

        /// <summary>Joins the party.</summary>
        public void Join(CancellationToken cancellationToken = default(CancellationToken))
        {
            JoinAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Join"/> without blocking a thread.</summary>
        public Task JoinAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (p, cancel, user) =>
                NativeMethods.zl_party_join_async((ZlParty*)p, cancel, OnJoin, user));
        }

        /// <summary>Leaves: true if this member's node was there.</summary>
        public bool Leave(CancellationToken cancellationToken = default(CancellationToken))
        {
            return LeaveAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Leave"/> without blocking a thread.</summary>
        public Task<bool> LeaveAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (p, cancel, user) =>
                NativeMethods.zl_party_leave_async((ZlParty*)p, cancel, OnLeave, user));
        }

        /// <summary>The members' identifiers.</summary>
        public IList<string> GetMembers(CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetMembersAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="GetMembers"/> without blocking a thread.</summary>
        public Task<IList<string>> GetMembersAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<IList<string>>.Start(native, cancellationToken, (p, cancel, user) =>
                NativeMethods.zl_party_members_async((ZlParty*)p, cancel, OnMembers, user));
        }

        sealed class PartyHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_party_free((ZlParty*)handle);
                return true;
            }
        }
    }
}
