using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace ZooLock
{
    /// <summary>
    /// The classic ZooKeeper lock sample's shape on zoolock: <c>CreateLock</c>
    /// names a contender, <c>Lock</c>/<c>LockAsync</c> wait for its turn,
    /// <c>Release</c> gives it back (the name may lock again), <c>Dispose</c>
    /// releases everything and closes the session. Unlike the sample, the
    /// contender's node is created when <c>Lock</c> is called (so a name that
    /// never locks leaves nothing on the server), a timeout removes it, and
    /// lost connections are handled. A name is the locker's until it is
    /// disposed: a long-lived locker should reuse its names.
    /// </summary>
    public class ZookeeperLocker : IDisposable
    {
        readonly ZooKeeperSession session;
        /// <summary>The names created, each with its holder while it may hold (null once released).</summary>
        readonly Dictionary<string, Holder> contenders = new Dictionary<string, Holder>();
        int disposed;

        /// <summary>Connects to ZooKeeper to lock <paramref name="lockerPath"/>.</summary>
        /// <param name="lockerPath">The lock path, e.g. <c>/locks/ledger</c>.</param>
        /// <param name="address">ZooKeeper servers, each <c>host:port</c>.</param>
        /// <exception cref="ArgumentException">A bad path or address.</exception>
        /// <exception cref="ZooLockConnectionException">No server answered.</exception>
        public ZookeeperLocker(string lockerPath, params string[] address) : this(lockerPath, 0, address) { }

        /// <summary>Connects to ZooKeeper to lock <paramref name="lockerPath"/>.</summary>
        /// <param name="lockerPath">The lock path, e.g. <c>/locks/ledger</c>.</param>
        /// <param name="sessionTimeout">Session timeout in milliseconds; 0 for the default (10 s).</param>
        /// <param name="address">ZooKeeper servers, each <c>host:port</c>.</param>
        public ZookeeperLocker(string lockerPath, int sessionTimeout, params string[] address)
        {
            if (lockerPath == null) throw new ArgumentNullException("lockerPath");
            if (address == null) throw new ArgumentNullException("address");
            if (address.Length == 0) throw new ArgumentException("at least one ZooKeeper address is needed", "address");
            if (sessionTimeout < 0) throw new ArgumentOutOfRangeException("sessionTimeout", sessionTimeout, "must be 0 (the default) or positive");
            foreach (var host in address)
            {
                if (string.IsNullOrWhiteSpace(host)) throw new ArgumentException("an address is empty", "address");
            }
            LockerPath = lockerPath;
            session = new ZooKeeperSession(string.Join(",", address), TimeSpan.FromMilliseconds(sessionTimeout), TimeSpan.Zero);
            try { Holder.NewLock(session, lockerPath, (int)LockKind.Mutex, null).Dispose(); }
            catch (Exception)
            {
                session.Dispose();
                throw;
            }
        }

        /// <summary>The lock path.</summary>
        public string LockerPath { get; private set; }

        /// <summary>The session this locker holds its locks through.</summary>
        public ZooKeeperSession Session { get { return session; } }

        /// <summary>Names a new contender with a fresh unique name.</summary>
        /// <returns>The name to pass to <c>Lock</c> and <c>Release</c>.</returns>
        public string CreateLock()
        {
            return CreateLock(Guid.NewGuid().ToString("N"));
        }

        /// <summary>Names a new contender <paramref name="name"/> (stored in its node as the identifier).</summary>
        /// <exception cref="ArgumentException">The name is empty, has a '/', or is in use in this locker.</exception>
        public string CreateLock(string name)
        {
            if (name == null) throw new ArgumentNullException("name");
            if (name.Length == 0 || name.Contains("/")) throw new ArgumentException("a lock name must be non-empty, without '/'", "name");
            var holder = Holder.NewLock(Live(), LockerPath, (int)LockKind.Mutex, name);
            lock (contenders)
            {
                if (!contenders.ContainsKey(name))
                {
                    contenders.Add(name, holder);
                    return name;
                }
            }
            holder.Dispose();
            throw new ArgumentException("a lock named " + name + " already exists in this locker", "name");
        }

        /// <summary>Waits until the contender holds the lock; true then.</summary>
        public bool Lock(string path)
        {
            return Lock(path, Timeout.Infinite);
        }

        /// <summary>
        /// Waits up to <paramref name="millisecondsTimeout"/> (-1: forever); false if the lock stayed taken.
        /// A name that holds already waits for its own release, so it is false once the timeout runs out
        /// (kazoo's <c>Lock</c>; not reentrant).
        /// </summary>
        public bool Lock(string path, int millisecondsTimeout)
        {
            long millis = Interop.Millis(millisecondsTimeout, "millisecondsTimeout");
            return Find(path).Acquire(millis, CancellationToken.None);
        }

        /// <summary>Waits without blocking a thread until the contender holds the lock.</summary>
        public Task<bool> LockAsync(string path)
        {
            return LockAsync(path, Timeout.Infinite);
        }

        /// <summary>Waits without blocking a thread, up to <paramref name="millisecondsTimeout"/> (-1: forever).</summary>
        public Task<bool> LockAsync(string path, int millisecondsTimeout)
        {
            long millis = Interop.Millis(millisecondsTimeout, "millisecondsTimeout");
            return Find(path).AcquireAsync(millis, CancellationToken.None);
        }

        /// <summary>Releases the contender's hold; true if it held the lock. The name may lock again.</summary>
        /// <exception cref="ObjectDisposedException">The locker was disposed (which released everything).</exception>
        public bool Release(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            Live();
            Holder holder;
            lock (contenders)
            {
                if (!contenders.TryGetValue(path, out holder) || holder == null) return false;
                contenders[path] = null;
            }
            try { return holder.Release(); }
            finally { holder.Dispose(); }
        }

        /// <summary>Releases every lock this locker holds and closes its session. Harmless when repeated.</summary>
        public void Dispose()
        {
            Dispose(true);
            GC.SuppressFinalize(this);
        }

        /// <summary>Releases the locks and the session.</summary>
        protected virtual void Dispose(bool disposing)
        {
            if (!disposing || Interlocked.Exchange(ref disposed, 1) != 0) return;
            List<Holder> all;
            lock (contenders)
            {
                all = new List<Holder>(contenders.Values);
                contenders.Clear();
            }
            foreach (var holder in all)
            {
                if (holder == null) continue;
                try { holder.Release(); }
                catch (Exception) { /* the session's close below removes the node anyway */ }
                holder.Dispose();
            }
            session.Dispose();
        }

        ZooKeeperSession Live()
        {
            if (disposed != 0) throw new ObjectDisposedException(GetType().Name);
            return session;
        }

        /// <summary>The name's holder, a new one if the name was released.</summary>
        Holder Find(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            var session = Live();
            lock (contenders)
            {
                Holder holder;
                if (!contenders.TryGetValue(path, out holder))
                    throw new ArgumentException("no lock named " + path + " was created by this locker (CreateLock)", "path");
                if (holder == null) contenders[path] = holder = Holder.NewLock(session, LockerPath, (int)LockKind.Mutex, path);
                return holder;
            }
        }
    }
}
