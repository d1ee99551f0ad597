using System;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// Curator's <c>PersistentNode</c> in its ephemeral mode (the core's): an
    /// ephemeral node at <see cref="Path"/> holding data, kept while started —
    /// made again after a session expiry and after anyone deletes it — and
    /// deleted by <see cref="Close"/> or <see cref="Dispose"/>. What a service
    /// registers itself with. A node at the path that another session owns
    /// (an earlier run's, not yet expired) is waited out, never changed or deleted.
    /// </summary>
    public sealed unsafe class ZooKeeperPersistentNode : IDisposable
    {
        static readonly NativeMethods.zl_persistent_node_start_async_callback_delegate OnStart = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_persistent_node_set_data_async_callback_delegate OnSetData = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_persistent_node_close_async_callback_delegate OnClose = ResultCallbacks.YesNo;

        /// <summary>How long <see cref="Dispose"/> waits for the delete while the server is away, as a lock handle's does.</summary>
        static readonly TimeSpan DisposeWait = TimeSpan.FromSeconds(2);

        readonly NodeHandle native = new NodeHandle();

        /// <summary>The node at <paramref name="path"/> holding <paramref name="data"/>; nothing is sent before <see cref="Start"/>.</summary>
        /// <exception cref="ArgumentException">A bad path, or data too large for a znode.</exception>
        public ZooKeeperPersistentNode(string path, ZooKeeperSession session, byte[] data = null)
        {
            var d = data ?? new byte[0];
            native.Create(session, path, (s, bytes, length, created) =>
            {
                fixed (byte* value = d)
                    return NativeMethods.zl_persistent_node_new(s, bytes, length, value, (uint)d.Length, (ZlPersistentNode**)created);
            });
            Path = path;
        }

        /// <summary>The node's path.</summary>
        public string Path { get; private set; }

        /// <summary>Whether it is started and not closed.</summary>
        public bool IsStarted
        {
            get
            {
                var pointer = native.Enter();
                try
                {
                    byte started;
                    Interop.Check(NativeMethods.zl_persistent_node_started((ZlPersistentNode*)pointer, &started));
                    return started != 0;
                }
                finally { native.Exit(); }
            }
        }

        /// <summary>Makes the node and keeps it; returns once it is this session's. Starting again changes nothing.</summary>
        public void Start(CancellationToken cancellationToken = default(CancellationToken))
        {
            StartAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Start"/> without blocking a thread.</summary>
        public Task StartAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (n, cancel, user) =>
                NativeMethods.zl_persistent_node_start_async((ZlPersistentNode*)n, cancel, OnStart, user));
        }

        /// <summary>Changes the node's data, and what it is made with from now on.</summary>
        public void SetData(byte[] data, CancellationToken cancellationToken = default(CancellationToken))
        {
            SetDataAsync(data, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="SetData"/> without blocking a thread.</summary>
        public Task SetDataAsync(byte[] data, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (data == null) throw new ArgumentNullException("data");
            return PendingCall<bool>.Start(native, cancellationToken, (n, cancel, user) =>
            {
                fixed (byte* value = data)
                    return NativeMethods.zl_persistent_node_set_data_async((ZlPersistentNode*)n, value, (uint)data.Length, cancel, OnSetData, user);
            });
        }

        /// <summary>Stops keeping the node and deletes it: true if it was this session's.</summary>
        public bool Close(CancellationToken cancellationToken = default(CancellationToken))
        {
            return CloseAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Close"/> without blocking a thread.</summary>
        public Task<bool> CloseAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<bool>.Start(native, cancellationToken, (n, cancel, user) =>
                NativeMethods.zl_persistent_node_close_async((ZlPersistentNode*)n, cancel, OnClose, user));
        }

        /// <summary>
        /// Closes (waiting at most 2 s while the server is away; the node
        /// then goes with its session) and frees the handle. Harmless when repeated.
        /// </summary>
        public void Dispose()
        {
            if (native.IsClosed) return;
            try { CloseAsync().Wait(DisposeWait); }
            catch (AggregateException) { }
            catch (ObjectDisposedException) { }
            native.Dispose();
        }

        sealed class NodeHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_persistent_node_free((ZlPersistentNode*)handle);
                return true;
            }
        }
    }
}
