using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// Writes committed together or not at all (ZooKeeper's <c>multi</c>, the
    /// core's <c>Transaction</c>), from <see cref="ZooKeeperSession.Transaction"/>;
    /// a fenced one (<see cref="ZooKeeperHandle.Fenced"/>,
    /// <see cref="ZooKeeperLeadership.Fenced"/>) commits only while its holder
    /// still holds. Each method adds an operation and returns the transaction;
    /// a bad operation fails the commit, which then sends nothing. Committed
    /// once (then every method but Dispose throws <see cref="InvalidOperationException"/>);
    /// Dispose frees it (an uncommitted one sends nothing).
    /// </summary>
    public sealed unsafe class ZooKeeperTransaction : IDisposable
    {
        static readonly NativeMethods.zl_transaction_commit_async_callback_delegate OnCommitted = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<IList<string>>.Deliver(user, status, message, messageLength, call => Interop.List(data, length));

        readonly TransactionHandle native = new TransactionHandle();
        int committed;

        internal ZooKeeperTransaction(IntPtr pointer)
        {
            native.Set(pointer);
        }

        /// <summary>The commit fails unless the node is at <paramref name="version"/> (-1: exists).</summary>
        public ZooKeeperTransaction Check(string path, int version = -1)
        {
            var p = ZooKeeperSession.PathBytes(path);
            return Add(t =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_transaction_check((ZlTransaction*)t, bytes, (uint)p.Length, version);
            });
        }

        /// <summary>Creates a node with empty data (<see cref="ZooKeeperCreateFlags.MakePath"/> is refused: parents would be made outside the transaction).</summary>
        public ZooKeeperTransaction Create(string path, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None)
        {
            return Create(path, new byte[0], flags);
        }

        /// <summary>Creates a node with <paramref name="data"/>, null for ZooKeeper's null data (see <see cref="Create(string, ZooKeeperCreateFlags)"/>).</summary>
        public ZooKeeperTransaction Create(string path, byte[] data, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None)
        {
            var p = ZooKeeperSession.PathBytes(path);
            return Add(t =>
            {
                fixed (byte* bytes = p, value = data) return NativeMethods.zl_transaction_create((ZlTransaction*)t, bytes, (uint)p.Length, value, Interop.DataLength(data), (uint)flags);
            });
        }

        /// <summary>Sets the node's data (null: ZooKeeper's null data), if at <paramref name="version"/> (-1: any).</summary>
        public ZooKeeperTransaction SetData(string path, byte[] data, int version = -1)
        {
            var p = ZooKeeperSession.PathBytes(path);
            return Add(t =>
            {
                fixed (byte* bytes = p, value = data) return NativeMethods.zl_transaction_set((ZlTransaction*)t, bytes, (uint)p.Length, value, Interop.DataLength(data), version);
            });
        }

        /// <summary>Deletes the node, if at <paramref name="version"/> (-1: any).</summary>
        public ZooKeeperTransaction Delete(string path, int version = -1)
        {
            var p = ZooKeeperSession.PathBytes(path);
            return Add(t =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_transaction_delete((ZlTransaction*)t, bytes, (uint)p.Length, version);
            });
        }

        /// <summary>
        /// Sends the operations as one request. One path per operation, in the
        /// order added: the path created for a create (with its sequence
        /// number), the operation's own otherwise.
        /// </summary>
        /// <exception cref="ZooLockNotHeldException">A fenced transaction's holder no longer holds: nothing was written.</exception>
        /// <exception cref="ZooLockException">The first failing operation's error (<see cref="ZooLockNoNodeException"/>, <see cref="ZooLockBadVersionException"/>, …): nothing was written.</exception>
        /// <exception cref="ArgumentException">A bad operation.</exception>
        /// <exception cref="InvalidOperationException">The transaction was committed already.</exception>
        public IList<string> Commit()
        {
            var pointer = Spend();
            try
            {
                byte* list;
                uint len;
                Interop.Check(NativeMethods.zl_transaction_commit((ZlTransaction*)pointer, &list, &len));
                return Interop.TakeList(list, len);
            }
            finally { native.Exit(); }
        }

        /// <summary>
        /// <see cref="Commit"/> without blocking a thread. The token ends the wait at any
        /// time (<see cref="OperationCanceledException"/>); a commit already sent may still
        /// be made, all of it or none. The transaction is spent either way.
        /// </summary>
        /// <exception cref="InvalidOperationException">The transaction was committed already.</exception>
        public Task<IList<string>> CommitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            Spend();
            native.Exit();
            return PendingCall<IList<string>>.Start(native, cancellationToken, (t, cancel, user) =>
                NativeMethods.zl_transaction_commit_async((ZlTransaction*)t, cancel, OnCommitted, user));
        }

        /// <summary>Frees the transaction. Harmless when repeated.</summary>
        public void Dispose()
        {
            native.Dispose();
        }

        ZooKeeperTransaction Add(Func<IntPtr, int> add)
        {
            var pointer = Enter();
            try { Interop.Check(add(pointer)); }
            finally { native.Exit(); }
            return this;
        }

        IntPtr Enter()
        {
            if (native.IsClosed) throw new ObjectDisposedException(GetType().Name);
            if (Volatile.Read(ref committed) != 0) throw Spent();
            return native.Enter();
        }

        /// <summary>Enters for the one commit: a second is an invalid operation.</summary>
        IntPtr Spend()
        {
            var pointer = Enter();
            if (Interlocked.Exchange(ref committed, 1) != 0)
            {
                native.Exit();
                throw Spent();
            }
            return pointer;
        }

        static InvalidOperationException Spent()
        {
            return new InvalidOperationException("the transaction was committed already: make a new one");
        }

        sealed class TransactionHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_transaction_free((ZlTransaction*)handle);
                return true;
            }
        }
    }
}
