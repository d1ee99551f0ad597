using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// One ZooKeeper session, shared by every lock, read/write lock and
    /// semaphore made from it. It reopens itself after expiry. Disposing it
    /// closes the session: the server deletes its nodes at once, releasing
    /// everything taken through it.
    /// </summary>
    public sealed unsafe partial class ZooKeeperSession : IDisposable
    {
        static readonly NativeMethods.zl_session_set_listener_callback_delegate OnState = Deliver;
        static readonly NativeMethods.zl_session_connect_async_callback_delegate OnConnected = (user, status, session, message, length) =>
            PendingCall<ZooKeeperSession>.Deliver(user, status, message, length, call => new ZooKeeperSession((string)call.State, (IntPtr)session));

        readonly SessionHandle native = new SessionHandle();
        int disposed;

        /// <summary>Connects with the default timeouts (10 s session, 15 s connect).</summary>
        /// <param name="connectString"><c>host:port[,host:port…][/chroot]</c>.</param>
        public ZooKeeperSession(string connectString) : this(connectString, TimeSpan.Zero, TimeSpan.Zero) { }

        /// <summary>Connects, blocking until the session is up.</summary>
        /// <param name="connectString"><c>host:port[,host:port…][/chroot]</c>.</param>
        /// <param name="sessionTimeout">Asked of the server; <see cref="TimeSpan.Zero"/> for the default. Waiters wait up to this long after a holder's process dies.</param>
        /// <param name="connectTimeout">How long to try before <see cref="ZooLockConnectionException"/>; <see cref="TimeSpan.Zero"/> for the default.</param>
        /// <exception cref="ArgumentException">A malformed connect string or a negative timeout.</exception>
        /// <exception cref="ZooLockConnectionException">No server answered in time.</exception>
        public ZooKeeperSession(string connectString, TimeSpan sessionTimeout, TimeSpan connectTimeout)
            : this(connectString, new ZooKeeperSessionOptions { SessionTimeout = sessionTimeout, ConnectTimeout = connectTimeout }) { }

        /// <summary>Connects with <paramref name="options"/> (timeouts, credentials, ACL, TLS, SASL), blocking until the session is up.</summary>
        /// <param name="connectString"><c>host:port[,host:port…][/chroot]</c>; with TLS, the servers' <c>secureClientPort</c>s.</param>
        /// <param name="options">Read once, here: changing it later does not change this session.</param>
        /// <exception cref="ArgumentException">A malformed connect string, a negative timeout, TLS options without <see cref="ZooKeeperSessionOptions.UseTls"/>, an unknown SASL mechanism.</exception>
        /// <exception cref="ZooLockConnectionException">No server answered in time.</exception>
        /// <exception cref="ZooLockTlsException">TLS failed: the message says why.</exception>
        /// <exception cref="ZooLockAuthException">The servers refused the SASL credentials.</exception>
        /// <exception cref="ZooLockNativeLibraryException">zoolock's native library cannot be found or loaded on this platform.</exception>
        public ZooKeeperSession(string connectString, ZooKeeperSessionOptions options)
            : this(connectString, options, NativeLoader.Ready()) { }

        // The body apart from the public constructor, which loads the native
        // library first: Mono binds a method's DllImports when it compiles the
        // method, so no method that calls native code may be compiled before
        // the library is loaded.
        [MethodImpl(MethodImplOptions.NoInlining)]
        ZooKeeperSession(string connectString, ZooKeeperSessionOptions options, bool loaded)
            : this(connectString, (IntPtr)Connect(connectString, options)) { }

        /// <summary>Wraps a connected native session (freed by the finalizer if this fails).</summary>
        ZooKeeperSession(string connectString, IntPtr pointer)
        {
            native.Set(pointer);
            ConnectString = connectString;
            native.Events = GCHandle.Alloc(new Sink(new WeakReference(this)));
            Interop.Check(NativeMethods.zl_session_set_listener((ZlSession*)pointer, OnState, (void*)GCHandle.ToIntPtr(native.Events)));
        }

        static ZlSession* Connect(string connectString, ZooKeeperSessionOptions options)
        {
            if (connectString == null) throw new ArgumentNullException("connectString");
            if (options == null) throw new ArgumentNullException("options");
            return options.Connect(connectString);
        }

        /// <summary>
        /// Connects without blocking a thread: completes with the session once it
        /// is up, or with the exception the constructor would throw. The token ends
        /// the wait at any time (<see cref="OperationCanceledException"/>); a session
        /// that comes up after that is closed at once.
        /// </summary>
        /// <param name="connectString"><c>host:port[,host:port…][/chroot]</c>; with TLS, the servers' <c>secureClientPort</c>s.</param>
        /// <param name="options">Timeouts, credentials, ACL, TLS, SASL (null: the defaults); read once, here.</param>
        /// <param name="cancellationToken">Ends the wait.</param>
        /// <exception cref="ZooLockNativeLibraryException">zoolock's native library cannot be found or loaded on this platform.</exception>
        public static Task<ZooKeeperSession> ConnectAsync(string connectString, ZooKeeperSessionOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            if (connectString == null) throw new ArgumentNullException("connectString");
            NativeLoader.EnsureLoaded();
            return StartConnect(connectString, options ?? new ZooKeeperSessionOptions(), cancellationToken);
        }

        /// <summary><see cref="ConnectAsync"/> once the native library is loaded (see the constructors).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static Task<ZooKeeperSession> StartConnect(string connectString, ZooKeeperSessionOptions options, CancellationToken cancellationToken)
        {
            var native = options.Build(connectString);
            try
            {
                // The native library loads (Build called it): log events from here on, the connect's too.
                ZooLockLog.Install();
                return PendingCall<ZooKeeperSession>.Start(null, cancellationToken, (none, cancel, user) =>
                    NativeMethods.zl_session_connect_async(native, cancel, OnConnected, user), connectString);
            }
            finally { NativeMethods.zl_session_options_free(native); }
        }

        /// <summary>The connect string the session was opened with.</summary>
        public string ConnectString { get; private set; }

        /// <summary>
        /// Raised with each state change, in order, on zoolock's callback
        /// thread: handlers should return quickly, and must not wait there for
        /// an asynchronous acquire (its completion comes on the same thread).
        /// </summary>
        public event EventHandler<ZooKeeperSessionStateChangedEventArgs> StateChanged;

        /// <summary>The session's current state.</summary>
        public ZooKeeperSessionState State
        {
            get
            {
                int state;
                Status(&state, null, null);
                return (ZooKeeperSessionState)state;
            }
        }

        /// <summary>The current ZooKeeper session id (it changes when an expired session is replaced).</summary>
        public long SessionId
        {
            get
            {
                long id;
                Status(null, &id, null);
                return id;
            }
        }

        /// <summary>
        /// The id and password of the ZooKeeper session open now (kazoo's
        /// <c>client_id</c>), for another client to resume it with
        /// <see cref="ZooKeeperSessionOptions.Resume"/>; null while there is none
        /// (lost and not yet replaced). It changes when an expired session is replaced.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public ZooKeeperClientId ClientId
        {
            get
            {
                return With(pointer =>
                {
                    long id;
                    byte* ptr;
                    uint len;
                    Interop.Check(NativeMethods.zl_session_client_id((ZlSession*)pointer, &id, &ptr, &len));
                    try
                    {
                        if (id == 0) return null;
                        var password = new byte[len];
                        Marshal.Copy((IntPtr)ptr, password, 0, (int)len);
                        return new ZooKeeperClientId(id, password);
                    }
                    finally { NativeMethods.zl_bytes_free(ptr, len); }
                });
            }
        }

        /// <summary>1 for the first session, one more each time an expired session was replaced.</summary>
        public long Generation
        {
            get
            {
                ulong generation;
                Status(null, null, &generation);
                return (long)generation;
            }
        }

        /// <summary>
        /// The session's metrics, named as in Prometheus' text format:
        /// <c>zoolock_acquire_wait_seconds_count</c> and <c>_sum</c>,
        /// <c>zoolock_hold_seconds_count</c> and <c>_sum</c>,
        /// <c>zoolock_handoffs_total</c>, <c>zoolock_acquire_timeouts_total</c>,
        /// <c>zoolock_suspensions_total</c>,
        /// <c>zoolock_losses_total{reason="..."}</c>,
        /// <c>zoolock_cleanup_retries_total</c> and
        /// <c>zoolock_session_state_changes_total{state="..."}</c>. A snapshot:
        /// it does not change afterwards.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public IReadOnlyDictionary<string, double> GetMetrics()
        {
            return With(pointer =>
            {
                byte* ptr;
                uint len;
                Interop.Check(NativeMethods.zl_session_metrics((ZlSession*)pointer, &ptr, &len));
                try
                {
                    var metrics = new Dictionary<string, double>();
                    var record = new RecordReader(ptr, len);
                    while (record.More) metrics[record.Text()] = record.F64();
                    return new ReadOnlyDictionary<string, double>(metrics);
                }
                finally { NativeMethods.zl_bytes_free(ptr, len); }
            });
        }

        /// <summary>
        /// The holders, then the waiters, of the lock or semaphore at
        /// <paramref name="path"/> (zoolock's, kazoo's or Curator's nodes), in
        /// queue order; empty if nothing is there. Needs no lock object.
        /// </summary>
        /// <exception cref="ArgumentException">The path is not a valid lock path.</exception>
        /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
        public IReadOnlyList<ZooKeeperParticipant> Inspect(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            var bytes = Interop.Bytes(path);
            return With(pointer =>
            {
                byte* ptr;
                uint len;
                fixed (byte* text = bytes)
                {
                    Interop.Check(NativeMethods.zl_inspect((ZlSession*)pointer, text, (uint)bytes.Length, &ptr, &len));
                }
                try
                {
                    var participants = new List<ZooKeeperParticipant>();
                    var record = new RecordReader(ptr, len);
                    while (record.More)
                    {
                        participants.Add(new ZooKeeperParticipant(record.Text(), (ZooKeeperParticipantKind)record.I32(), record.U8() != 0,
                            record.Text(), record.I64(), (ZooKeeperNamingScheme)record.I32(), DateTimeOffset.FromUnixTimeMilliseconds(record.I64()), record.I64()));
                    }
                    return (IReadOnlyList<ZooKeeperParticipant>)participants.AsReadOnly();
                }
                finally { NativeMethods.zl_bytes_free(ptr, len); }
            });
        }

        /// <summary>Closes the session, releasing every lock and lease taken through it. Harmless when repeated.</summary>
        public void Dispose()
        {
            if (System.Threading.Interlocked.Exchange(ref disposed, 1) != 0) return;
            var pointer = native.Enter();
            try { Interop.Check(NativeMethods.zl_session_close((ZlSession*)pointer)); }
            finally { native.Exit(); }
            native.Dispose();
        }

        internal bool IsDisposed { get { return disposed != 0; } }

        /// <summary>Runs <paramref name="call"/> with the native session, kept alive meanwhile.</summary>
        internal T With<T>(Func<IntPtr, T> call)
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().Name);
            var pointer = native.Enter();
            try { return call(pointer); }
            finally { native.Exit(); }
        }

        void Status(int* state, long* id, ulong* generation)
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().Name);
            var pointer = native.Enter();
            try { Interop.Check(NativeMethods.zl_session_status((ZlSession*)pointer, state, id, generation)); }
            finally { native.Exit(); }
        }

        internal static uint ToMillis(TimeSpan timeout, string parameter)
        {
            if (timeout < TimeSpan.Zero || timeout.TotalMilliseconds > uint.MaxValue)
                throw new ArgumentOutOfRangeException(parameter, timeout, "must be zero (the default) or positive");
            return (uint)Math.Ceiling(timeout.TotalMilliseconds);
        }

        static void Deliver(void* userData, int state)
        {
            try
            {
                Interop.EnterCallback();
                var sink = (Sink)GCHandle.FromIntPtr((IntPtr)userData).Target;
                var session = sink.Owner.Target as ZooKeeperSession;
                if (session == null) return;
                var handlers = session.StateChanged;
                if (handlers != null) handlers(session, new ZooKeeperSessionStateChangedEventArgs((ZooKeeperSessionState)state));
            }
            catch (Exception)
            {
                // An exception must not unwind into native code; a failing handler only loses its own event.
            }
        }

        /// <summary>What the native listener holds: no strong reference, so an undisposed session can be finalized.</summary>
        sealed class Sink
        {
            internal readonly WeakReference Owner;
            internal Sink(WeakReference owner) { Owner = owner; }
        }

        sealed class SessionHandle : NativeHandle
        {
            internal GCHandle Events;

            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_session_free((ZlSession*)handle);
                if (Events.IsAllocated) Events.Free();
                return true;
            }
        }
    }
}
