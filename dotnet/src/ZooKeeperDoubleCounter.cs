using System;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A shared floating-point number in kazoo's format (kazoo's
    /// <c>Counter(path, default=0.0)</c>: the value as Python's <c>repr</c>
    /// text, <c>"2.5"</c>), so Python clients count on the same node; changed
    /// as <see cref="ZooKeeperCounter"/> changes its whole numbers, never
    /// twice for a lost reply. Dispose frees the native handle.
    /// </summary>
    public sealed class ZooKeeperDoubleCounter : IDisposable
    {
        readonly CounterHandle native;

        /// <summary>A counter on <paramref name="path"/> whose empty node reads as <paramref name="defaultValue"/>.</summary>
        /// <exception cref="ArgumentException">A bad path.</exception>
        public ZooKeeperDoubleCounter(string path, ZooKeeperSession session, double defaultValue = 0.0)
        {
            native = new CounterHandle(path, session, new ZlCounterValue { is_float = 1, float_value = defaultValue }, NativeMethods.ZL_COUNTER_KAZOO);
            Path = path;
        }

        /// <summary>The counter's node.</summary>
        public string Path { get; private set; }

        /// <summary>The value now; creates the node (empty: the default) if missing.</summary>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a number.</exception>
        public double GetValue(CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.Value(cancellationToken).float_value;
        }

        /// <summary>Adds <paramref name="delta"/>; the values before and after (kazoo's <c>pre_value</c>, <c>post_value</c>).</summary>
        /// <exception cref="System.IO.InvalidDataException">The node holds something that is not a number.</exception>
        public ZooKeeperDoubleCounterChange Add(double delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            ZlCounterValue pre, post;
            native.Add(new ZlCounterValue { is_float = 1, float_value = delta }, cancellationToken, out pre, out post);
            return new ZooKeeperDoubleCounterChange(pre.float_value, post.float_value);
        }

        /// <summary>Subtracts <paramref name="delta"/>, as <see cref="Add"/>.</summary>
        public ZooKeeperDoubleCounterChange Subtract(double delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Add(-delta, cancellationToken);
        }

        /// <summary>
        /// Sets the value to <paramref name="value"/> if it is <paramref name="expected"/> now
        /// (Curator's <c>compareAndSet</c>): true if set, false (nothing changed) if it was another.
        /// </summary>
        public bool CompareAndSet(double expected, double value, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.CompareAndSet(new ZlCounterValue { is_float = 1, float_value = expected },
                new ZlCounterValue { is_float = 1, float_value = value }, cancellationToken);
        }

        /// <summary><see cref="CompareAndSet"/> without blocking a thread; cancelled after its write was sent, it may still have been made.</summary>
        public Task<bool> CompareAndSetAsync(double expected, double value, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.CompareAndSetAsync(new ZlCounterValue { is_float = 1, float_value = expected },
                new ZlCounterValue { is_float = 1, float_value = value }, cancellationToken);
        }

        /// <summary><see cref="GetValue"/> without blocking a thread.</summary>
        public Task<double> GetValueAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.ValueAsync(cancellationToken).Then(value => value.float_value);
        }

        /// <summary>
        /// <see cref="Add"/> without blocking a thread. A change cancelled after
        /// its write was sent may still have been made, as one whose reply was lost.
        /// </summary>
        public Task<ZooKeeperDoubleCounterChange> AddAsync(double delta, CancellationToken cancellationToken = default(CancellationToken))
        {
            return native.AddAsync(new ZlCounterValue { is_float = 1, float_value = delta }, cancellationToken)
                .Then(values => new ZooKeeperDoubleCounterChange(values[0].float_value, values[1].float_value));
        }

        /// <summary>Frees the native handle. Harmless when repeated.</summary>
        public void Dispose() { native.Dispose(); }
    }
}
