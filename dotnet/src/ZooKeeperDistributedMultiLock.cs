using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// All of several locks or none (Curator's <c>InterProcessMultiLock</c>;
    /// DistributedLock's issue #236). Each path is a kazoo <c>Lock</c>, so a
    /// <see cref="ZooKeeperDistributedLock"/> (or a kazoo or Curator client)
    /// on one of the paths excludes it and is excluded. The paths are taken in
    /// one order, sorted, whatever order they were given in, so two multi-locks
    /// never deadlock; the handle releases them together and is lost when any
    /// path's node is, with a fencing token per path.
    /// </summary>
    [AcquireFamily(What = "every path", Handle = "ZooKeeperDistributedMultiLockHandle",
        Timeout = "Some path stayed taken for the timeout; no path is held.")]
    public sealed partial class ZooKeeperDistributedMultiLock
    {
        static readonly Func<HolderPool, Hold, ZooKeeperDistributedMultiLockHandle> Wrap = (pool, held) => new ZooKeeperDistributedMultiLockHandle(pool, held);
        readonly HolderPool pool;

        /// <summary>A multi-lock over <paramref name="paths"/> through <paramref name="session"/>; its nodes hold <paramref name="identifier"/>.</summary>
        /// <exception cref="ArgumentException">No path, or a bad one.</exception>
        public ZooKeeperDistributedMultiLock(IEnumerable<string> paths, ZooKeeperSession session, string identifier = null)
            : this(paths, new SessionSource.Given(session), identifier) { }

        /// <summary>DistributedLock's: a multi-lock over <paramref name="paths"/> through the session shared by every lock of <paramref name="connectionString"/>.</summary>
        public ZooKeeperDistributedMultiLock(IEnumerable<ZooKeeperPath> paths, string connectionString,
            Action<ZooKeeperDistributedSynchronizationOptionsBuilder> options = null)
            : this(Values(paths), ZooKeeperDistributedSynchronizationOptionsBuilder.Source(connectionString, options), null) { }

        unsafe ZooKeeperDistributedMultiLock(IEnumerable<string> paths, SessionSource source, string identifier)
        {
            if (paths == null) throw new ArgumentNullException("paths");
            source.DefaultNaming("a multi-lock");
            var sorted = paths.Select(p => p ?? throw new ArgumentNullException("paths", "a path is null"))
                .Distinct(StringComparer.Ordinal).ToList();
            // Refused here, not as a failed comparison inside Sort.
            foreach (var path in sorted) ZooKeeperPath.Check(path, true);
            // The core's order: by UTF-8 bytes, which ordinal order of UTF-16 matches outside the surrogate range.
            sorted.Sort((a, b) => CompareUtf8(a, b));
            if (sorted.Count == 0) throw new ArgumentException("a multi-lock needs at least one path", "paths");
            Paths = sorted.AsReadOnly();
            var name = "[" + string.Join(", ", sorted) + "]";
            var list = Interop.EncodeList(Paths);
            var id = Interop.Bytes(identifier);
            pool = new HolderPool(source, name, session => Holder.New(session, name, (s, created) =>
            {
                fixed (byte* p = list, i = id)
                    return NativeMethods.zl_multi_lock_new(s, p, (uint)list.Length, i, (uint)id.Length, created);
            }));
        }

        /// <summary>The paths, in the order they are taken (sorted, each once).</summary>
        public IList<string> Paths { get; private set; }

        static IEnumerable<string> Values(IEnumerable<ZooKeeperPath> paths)
        {
            if (paths == null) throw new ArgumentNullException("paths");
            return paths.Select(p => p.Value("paths")).ToList();
        }

        static int CompareUtf8(string a, string b)
        {
            var x = Interop.Bytes(a);
            var y = Interop.Bytes(b);
            for (int i = 0; i < Math.Min(x.Length, y.Length); i++)
            {
                if (x[i] != y[i]) return x[i].CompareTo(y[i]);
            }
            return x.Length.CompareTo(y.Length);
        }
    }
}
