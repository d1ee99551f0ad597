using System;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A shared whole number kept as one node's data in kazoo's format
    /// (kazoo's <c>Counter</c>: the value as text; or Curator's
    /// <c>SharedCount</c>, 4 bytes, with <c>curatorFormat</c>), so Python and
    /// Java clients count on the same node. A change reads the value, writes
    /// the sum conditional on the version read, and reads again when another
    /// client changed it in between. A change whose reply was lost is never
    /// made twice: if it cannot tell whether it was made, it throws
    /// <see cref="ZooLockConnectionException"/>. Dispose frees the native handle.
    /// <see cref="ZooKeeperDoubleCounter"/> counts kazoo's floats.
    /// </summary>
    public sealed class ZooKeeperCounter : IDisposable
    {
        readonly CounterHandle native;

        /// <summary>A counter on <paramref name="path"/> whose empty node reads as <paramref name="defaultValue"/>.</summary>
        /// <exception cref="ArgumentException">A bad path, or a Curator-format default beyond 32 bits.</exception>
        public ZooKeeperCounter(string path, ZooKeeperSession session, long defaultValue = 0, bool curatorFormat = false)
        {
            native = new CounterHandle(path, session, new ZlCounterValue { is_float = 0, int_value = defaultValue },
                curatorFormat ? NativeMethods.ZL_COUNTER_CURATOR : NativeMethods.ZL_COUNTER_KAZOO);
            Path = path;
        }

        /// <summary>The counter's node.</summary>
        public string Path { get; private set; }

        /// <summary>The value now; creates the node (empty: the default) if missing.</summary>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a whole number.</exception>
        public long GetValue(CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.Value(cancellationToken).int_value;
        }

        /// <summary>Adds <paramref name="delta"/>; the values before and after (kazoo's <c>pre_value</c>, <c>post_value</c>).</summary>
        /// <exception cref="ArgumentException">The sum is out of the counter's range.</exception>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a whole number.</exception>
        public ZooKeeperCounterChange Add(long delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            ZlCounterValue pre, post;
            native.Add(new ZlCounterValue { is_float = 0, int_value = delta }, cancellationToken, out pre, out post);
            return new ZooKeeperCounterChange(pre.int_value, post.int_value);
        }

        /// <summary>Subtracts <paramref name="delta"/>, as <see cref="Add"/>.</summary>
        public ZooKeeperCounterChange Subtract(long delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (delta == long.MinValue) throw new ArgumentOutOfRangeException("delta", delta, "cannot be negated");
            return Add(-delta, cancellationToken);
        }

        /// <summary>
        /// Sets the value to <paramref name="value"/> if it is <paramref name="expected"/> now
        /// (Curator's <c>compareAndSet</c>): true if set, false (nothing changed) if it was another.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="value"/> is beyond Curator's 32 bits.</exception>
        public bool CompareAndSet(long expected, long value, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.CompareAndSet(new ZlCounterValue { is_float = 0, int_value = expected },
                new ZlCounterValue { is_float = 0, int_value = value }, cancellationToken);
        }

        /// <summary><see cref="CompareAndSet"/> without blocking a thread; cancelled after its write was sent, it may still have been made.</summary>
        public Task<bool> CompareAndSetAsync(long expected, long value, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.CompareAndSetAsync(new ZlCounterValue { is_float = 0, int_value = expected },
                new ZlCounterValue { is_float = 0, int_value = value }, cancellationToken);
        }

        /// <summary><see cref="GetValue"/> without blocking a thread.</summary>
        public Task<long> GetValueAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.ValueAsync(cancellationToken).Then(value => value.int_value);
        }

        /// <summary>
        /// <see cref="Add"/> without blocking a thread. A change cancelled after
        /// its write was sent may still have been made, as one whose reply was lost.
        /// </summary>
        public Task<ZooKeeperCounterChange> AddAsync(long delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.AddAsync(new ZlCounterValue { is_float = 0, int_value = delta }, cancellationToken)
                .Then(values => new ZooKeeperCounterChange(values[0].int_value, values[1].int_value));
        }

        /// <summary>Frees the native handle. Harmless when repeated.</summary>
        public void Dispose() { native.Dispose(); }
    }
}
