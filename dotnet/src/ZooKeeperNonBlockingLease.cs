using System;
using System.Net;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// kazoo's <c>NonBlockingLease</c> and <c>MultiNonBlockingLease</c>: one
    /// try at a lease on a path until a wall-clock time, shared with kazoo
    /// clients (the same <c>lease_holder</c> record and lock). Obtained when
    /// nobody holds it, its holder's end has passed, or the holder is the same
    /// identifier (a renewal). Clients whose clocks disagree may both hold it:
    /// use it for "run this job about once an hour", a lock for exclusion.
    /// </summary>
    public static unsafe class ZooKeeperNonBlockingLease
    {
        /// <summary>One try at the lease on <paramref name="path"/> for <paramref name="duration"/> from <paramref name="utcNow"/> (default: now).</summary>
        /// <returns>True if obtained or renewed.</returns>
        public static bool TryObtain(ZooKeeperSession session, string path, TimeSpan duration, string identifier = null,
            DateTime? utcNow = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Try(session, 0, path, duration, identifier, utcNow, cancellationToken);
        }

        /// <summary>kazoo's <c>MultiNonBlockingLease</c>: one try at any of <paramref name="count"/> leases under <paramref name="path"/>.</summary>
        public static bool TryObtainOneOf(ZooKeeperSession session, int count, string path, TimeSpan duration, string identifier = null,
            DateTime? utcNow = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (count < 1) throw new ArgumentOutOfRangeException("count", count, "at least one lease");
            return Try(session, (uint)count, path, duration, identifier, utcNow, cancellationToken);
        }

        static bool Try(ZooKeeperSession session, uint count, string path, TimeSpan duration, string identifier,
            DateTime? utcNow, CancellationToken cancellationToken)
        {
            if (session == null) throw new ArgumentNullException("session");
            if (path == null) throw new ArgumentNullException("path");
            cancellationToken.ThrowIfCancellationRequested();
            // kazoo's default: the host's name, so every process of a host renews one lease.
            var id = Interop.Bytes(identifier ?? Dns.GetHostName());
            var p = Interop.Bytes(path);
            var clock = utcNow ?? DateTime.UtcNow;
            if (clock.Kind == DateTimeKind.Local) clock = clock.ToUniversalTime();
            var now = (long)(clock - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).TotalMilliseconds;
            var ms = (long)duration.TotalMilliseconds;
            return session.With(s =>
            {
                using (var cancel = new NativeCancel(cancellationToken))
                {
                    byte obtained;
                    int status;
                    fixed (byte* pb = p, ib = id)
                    {
                        status = NativeMethods.zl_lease_try((ZlSession*)s, pb, (uint)p.Length, ib, (uint)id.Length, ms, now, count, cancel.Pointer, &obtained);
                    }
                    if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, Interop.LastError(), cancellationToken);
                    return obtained != 0;
                }
            });
        }
    }
}
