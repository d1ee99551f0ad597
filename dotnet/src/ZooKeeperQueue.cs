using System;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// kazoo's <c>Queue</c> (the core's): entries are persistent sequential
    /// <c>entry-&lt;priority&gt;-&lt;sequence&gt;</c> nodes, taken by priority
    /// (0 to 999, lower first), then in order, and removed as they are taken
    /// (at most once). kazoo's <c>Queue</c> on the same path takes part.
    /// </summary>
    public sealed unsafe class ZooKeeperQueue
    {
        /// <summary>kazoo's default priority.</summary>
        public const int DefaultPriority = 100;

        static readonly NativeMethods.zl_queue_put_async_callback_delegate OnPut = ResultCallbacks.Text;
        static readonly NativeMethods.zl_queue_get_async_callback_delegate OnGet = ResultCallbacks.Taken;

        readonly QueueHandle native = new QueueHandle();

        /// <summary>The queue at <paramref name="path"/> through <paramref name="session"/>; nothing is sent before a call.</summary>
        /// <exception cref="ArgumentException">The path is not a valid ZooKeeper path.</exception>
        public ZooKeeperQueue(string path, ZooKeeperSession session)
        {
            native.Create(session, path, (s, bytes, length, created) => NativeMethods.zl_queue_new(s, bytes, length, (ZlQueue**)created));
            Path = path;
        }

        /// <summary>The queue's path.</summary>
        public string Path { get; private set; }

        /// <summary>How many entries there are.</summary>
        public int Count
        {
            get { return native.Count((q, count) => NativeMethods.zl_queue_len((ZlQueue*)q, count)); }
        }

        /// <summary>Adds <paramref name="value"/>; returns the entry's path.</summary>
        /// <exception cref="ArgumentException">A priority outside 0 to 999.</exception>
        public string Put(byte[] value, int priority = DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            return PutAsync(value, priority, cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Put"/> without blocking a thread.</summary>
        public Task<string> PutAsync(byte[] value, int priority = DefaultPriority, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (value == null) throw new ArgumentNullException("value");
            uint p = Priority(priority);
            return PendingCall<string>.Start(native, cancellationToken, (q, cancel, user) =>
            {
                fixed (byte* bytes = value) return NativeMethods.zl_queue_put_async((ZlQueue*)q, bytes, (uint)value.Length, p, cancel, OnPut, user);
            });
        }

        /// <summary>Takes the first entry's value, removing it; null if the queue is empty (it does not wait).</summary>
        public byte[] Get(CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync(cancellationToken).GetAwaiter().GetResult();
        }

        /// <summary><see cref="Get"/> without blocking a thread.</summary>
        public Task<byte[]> GetAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return PendingCall<byte[]>.Start(native, cancellationToken, (q, cancel, user) =>
                NativeMethods.zl_queue_get_async((ZlQueue*)q, cancel, OnGet, user));
        }

        /// <summary>kazoo's priorities: 0 to 999.</summary>
        internal static uint Priority(int priority)
        {
            if (priority < 0 || priority > 999) throw new ArgumentOutOfRangeException("priority", priority, "priority must be between 0 and 999");
            return (uint)priority;
        }

        /// <summary>A taken value (data 1 + value), or null (data 0).</summary>
        internal static byte[] Taken(byte* data, uint length)
        {
            if (length == 0 || data[0] == 0) return null;
            return Interop.Copy(data + 1, length - 1);
        }

        sealed class QueueHandle : NativeHandle
        {
            protected override bool ReleaseHandle()
            {
                NativeMethods.zl_queue_free((ZlQueue*)handle);
                return true;
            }
        }
    }
}
