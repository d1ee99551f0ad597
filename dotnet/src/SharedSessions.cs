using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// Where a lock object's session comes from: the one it was given, or the
    /// session shared by every lock of a connection string (and options).
    /// Each acquisition leases it until its hold ends.
    /// </summary>
    internal abstract class SessionSource
    {
        /// <summary>The node names the locks made from these options write (not the session's: it is shared across schemes).</summary>
        internal ZooKeeperNamingScheme Naming = ZooKeeperNamingScheme.Kazoo;

        /// <summary>Refuses <see cref="Naming"/> for a recipe other than the mutex, which alone takes it.</summary>
        internal SessionSource DefaultNaming(string recipe)
        {
            if (Naming != ZooKeeperNamingScheme.Kazoo)
                throw new ArgumentException(recipe + " names its nodes one way: NamingScheme is for ZooKeeperDistributedLock", "options");
            return this;
        }

        /// <summary>A lease on the session, connecting if need be (blocking).</summary>
        internal Lease Take() { return Take(Timeout.Infinite, CancellationToken.None); }

        /// <summary>
        /// A lease on the session, connecting if need be (blocking): null when
        /// the session is not connected within <paramref name="timeoutMs"/>
        /// (an acquire's limit counts its connect, but never less than a
        /// healthy connect's second: the core's <c>HEALTHY_CONNECT</c>); the
        /// token ends the wait.
        /// </summary>
        internal abstract Lease Take(long timeoutMs, CancellationToken token);

        /// <summary><see cref="Take(long, CancellationToken)"/>, awaited.</summary>
        internal abstract Task<Lease> TakeAsync(long timeoutMs, CancellationToken token);

        /// <summary>How long a connect may take for an acquire of <paramref name="timeoutMs"/> (-1: for ever).</summary>
        internal static int ConnectWithin(long timeoutMs)
        {
            if (timeoutMs < 0 || timeoutMs > int.MaxValue) return Timeout.Infinite;
            return (int)Math.Max(timeoutMs, NativeMethods.ZL_HEALTHY_CONNECT_MS);
        }

        /// <summary>The session of a lock made from a <see cref="ZooKeeperSession"/>: leased for ever.</summary>
        internal sealed class Given : SessionSource
        {
            readonly Lease lease;

            internal Given(ZooKeeperSession session)
            {
                if (session == null) throw new ArgumentNullException("session");
                lease = new Lease(session, null);
                Session = session;
            }

            internal ZooKeeperSession Session { get; private set; }

            internal override Lease Take(long timeoutMs, CancellationToken token) { return lease; }

            internal override Task<Lease> TakeAsync(long timeoutMs, CancellationToken token) { return Task.FromResult(lease); }
        }
    }

    /// <summary>
    /// One user of a session: an acquisition, then its hold. Disposing it
    /// (or, if forgotten, finalizing it) lets a shared session close once it
    /// has no user left.
    /// </summary>
    internal sealed class Lease : IDisposable
    {
        Action release;

        internal Lease(ZooKeeperSession session, Action release)
        {
            Session = session;
            this.release = release;
            if (release == null) GC.SuppressFinalize(this);
        }

        internal ZooKeeperSession Session { get; private set; }

        public void Dispose()
        {
            var ending = Interlocked.Exchange(ref release, null);
            if (ending == null) return;
            GC.SuppressFinalize(this);
            ending();
        }

        /// <summary>A hold nobody disposed: its session's close may block, so not on the finalizer thread.</summary>
        ~Lease()
        {
            var ending = Interlocked.Exchange(ref release, null);
            if (ending != null) ThreadPool.QueueUserWorkItem(_ => ending());
        }
    }

    /// <summary>
    /// The sessions of DistributedLock-style locks (made from a connection
    /// string), one per connection string and options, as DistributedLock
    /// pools its connections: opened by the first acquisition, closed when the
    /// last hold on it ends (the server then deletes what it held).
    /// </summary>
    internal static class SharedSessions
    {
        static readonly Dictionary<string, Shared> All = new Dictionary<string, Shared>();

        /// <summary>The session of one key, while it has users.</summary>
        sealed class Shared
        {
            internal Task<ZooKeeperSession> Connecting;
            internal int Users;
        }

        /// <summary>A connection string and options: the key of their session.</summary>
        internal sealed class Source : SessionSource
        {
            readonly string key;
            readonly string connectionString;
            readonly ZooKeeperSessionOptions options;

            internal Source(string key, string connectionString, ZooKeeperSessionOptions options)
            {
                this.key = key;
                this.connectionString = connectionString;
                this.options = options;
            }

            internal override Lease Take(long timeoutMs, CancellationToken token)
            {
                var shared = Join(key, connectionString, options);
                try
                {
                    // Another lock may share this connect: the limit and the token end only this wait.
                    if (!shared.Connecting.Wait(ConnectWithin(timeoutMs), token))
                    {
                        Leave(key, shared);
                        return null;
                    }
                    return new Lease(shared.Connecting.Result, () => Leave(key, shared));
                }
                catch (AggregateException e)
                {
                    Leave(key, shared);
                    System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(e.InnerException).Throw();
                    throw;
                }
                catch (Exception)
                {
                    Leave(key, shared);
                    throw;
                }
            }

            internal override async Task<Lease> TakeAsync(long timeoutMs, CancellationToken token)
            {
                var shared = Join(key, connectionString, options);
                try
                {
                    // Another lock may share this connect: the limit and the token end only this wait.
                    var ended = new TaskCompletionSource<ZooKeeperSession>();
                    using (var limit = new CancellationTokenSource(ConnectWithin(timeoutMs)))
                    using (token.Register(() => ended.TrySetCanceled(token)))
                    using (limit.Token.Register(() => ended.TrySetResult(null)))
                    {
                        var session = await (await Task.WhenAny(shared.Connecting, ended.Task).ConfigureAwait(false)).ConfigureAwait(false);
                        if (session == null)
                        {
                            Leave(key, shared);
                            return null;
                        }
                        return new Lease(session, () => Leave(key, shared));
                    }
                }
                catch (Exception)
                {
                    Leave(key, shared);
                    throw;
                }
            }
        }

        static Shared Join(string key, string connectionString, ZooKeeperSessionOptions options)
        {
            lock (All)
            {
                Shared shared;
                if (!All.TryGetValue(key, out shared) || shared.Connecting.IsFaulted || shared.Connecting.IsCanceled)
                {
                    shared = new Shared { Connecting = ZooKeeperSession.ConnectAsync(connectionString, options) };
                    All[key] = shared;
                }
                shared.Users++;
                return shared;
            }
        }

        /// <summary>One user less; the last closes the session (once connected).</summary>
        static void Leave(string key, Shared shared)
        {
            lock (All)
            {
                if (--shared.Users > 0) return;
                Shared current;
                if (All.TryGetValue(key, out current) && current == shared) All.Remove(key);
            }
            if (shared.Connecting.IsCompleted) Close(shared.Connecting);
            else shared.Connecting.ContinueWith(Close, TaskContinuationOptions.ExecuteSynchronously);
        }

        static void Close(Task<ZooKeeperSession> connecting)
        {
            if (connecting.Status == TaskStatus.RanToCompletion) connecting.Result.Dispose();
        }

        /// <summary>How many shared sessions are open or opening (for tests).</summary>
        internal static int Count
        {
            get { lock (All) return All.Count; }
        }
    }
}
