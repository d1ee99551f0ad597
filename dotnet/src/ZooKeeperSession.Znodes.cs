using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// The znode API on the session (the core's <c>Session</c> operations,
    /// kazoo's <c>get</c>, <c>set</c>, <c>create</c>…): paths are absolute,
    /// below the connect string's chroot; versions are -1 for any. Each call
    /// waits at most the session timeout (then <see cref="ZooLockConnectionException"/>).
    /// The async forms hold no thread while they wait (a native callback
    /// completes them); their token ends the wait at any time, with an
    /// <see cref="OperationCanceledException"/>: a write already sent may
    /// still be made, as one whose reply was lost.
    /// Node data is a byte array, or null for ZooKeeper's null data (kazoo's
    /// <c>None</c>), which the server keeps apart from an empty array: what a
    /// write sends, a read returns.
    /// </summary>
    public sealed unsafe partial class ZooKeeperSession
    {
        static readonly NativeMethods.zl_session_exists_async_callback_delegate OnExists = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZooKeeperStat>.Deliver(user, status, message, messageLength, call => stat == null ? null : new ZooKeeperStat(*stat));
        static readonly NativeMethods.zl_session_get_async_callback_delegate OnGet = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<byte[]>.Deliver(user, status, message, messageLength, call => Interop.Data(data, length));
        static readonly NativeMethods.zl_session_set_async_callback_delegate OnSet = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZooKeeperStat>.Deliver(user, status, message, messageLength, call => new ZooKeeperStat(*stat));
        static readonly NativeMethods.zl_session_create_async_callback_delegate OnCreate = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<string>.Deliver(user, status, message, messageLength, call => Interop.Text(data, length));
        static readonly NativeMethods.zl_session_delete_async_callback_delegate OnDelete = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_session_add_auth_async_callback_delegate OnAddAuth = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<bool>.Deliver(user, status, message, messageLength, call => true);
        static readonly NativeMethods.zl_session_get_acls_async_callback_delegate OnGetAcls = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZooKeeperAccessControlRead>.Deliver(user, status, message, messageLength,
                call => new ZooKeeperAccessControlRead(ParseAcl(Interop.List(data, length)), new ZooKeeperStat(*stat)));
        static readonly NativeMethods.zl_session_set_acls_async_callback_delegate OnSetAcls = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<ZooKeeperStat>.Deliver(user, status, message, messageLength, call => new ZooKeeperStat(*stat));
        static readonly NativeMethods.zl_session_children_async_callback_delegate OnChildren = (user, status, data, length, stat, message, messageLength) =>
            PendingCall<IList<string>>.Deliver(user, status, message, messageLength, call => Interop.List(data, length));

        /// <summary>The node's stat, or null if there is no such node.</summary>
        /// <exception cref="ArgumentException">A path ZooKeeper would refuse.</exception>
        public ZooKeeperStat Exists(string path)
        {
            var p = PathBytes(path);
            return With(s =>
            {
                byte found;
                ZlStat stat;
                fixed (byte* bytes = p) Interop.Check(NativeMethods.zl_session_exists((ZlSession*)s, bytes, (uint)p.Length, &found, &stat));
                return found != 0 ? new ZooKeeperStat(stat) : null;
            });
        }

        /// <summary><see cref="Exists"/> without blocking a thread.</summary>
        public Task<ZooKeeperStat> ExistsAsync(string path, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<ZooKeeperStat>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_session_exists_async((ZlSession*)s, bytes, (uint)p.Length, cancel, OnExists, user);
            });
        }

        /// <summary>The node's data (null for null data).</summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        public byte[] GetData(string path)
        {
            ZooKeeperStat stat;
            return GetData(path, out stat);
        }

        /// <summary>The node's data (null for null data) and its stat.</summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        public byte[] GetData(string path, out ZooKeeperStat stat)
        {
            var p = PathBytes(path);
            ZooKeeperStat read = null;
            var data = With(s =>
            {
                byte* ptr;
                uint len;
                ZlStat native;
                fixed (byte* bytes = p) Interop.Check(NativeMethods.zl_session_get((ZlSession*)s, bytes, (uint)p.Length, &ptr, &len, &native));
                read = new ZooKeeperStat(native);
                return TakeData(ptr, len);
            });
            stat = read;
            return data;
        }

        /// <summary>
        /// Adds credentials to the running session (ZooKeeper's <c>addauth</c>,
        /// kazoo's <c>add_auth</c>): <c>("digest", "user:password")</c>. Accepted
        /// ones are sent again by the sessions opened after an expiry.
        /// </summary>
        /// <exception cref="ZooLockAuthException">The server refused them.</exception>
        public void AddAuthInfo(string scheme, byte[] auth)
        {
            var s = SchemeBytes(scheme, auth);
            With(session =>
            {
                fixed (byte* sp = s)
                fixed (byte* ap = auth)
                    Interop.Check(NativeMethods.zl_session_add_auth((ZlSession*)session, sp, (uint)s.Length, ap, (uint)auth.Length));
                return true;
            });
        }

        /// <summary>
        /// <see cref="AddAuthInfo"/> without blocking a thread. A cancelled
        /// call may still have added them, as one whose reply was lost.
        /// </summary>
        public Task AddAuthInfoAsync(string scheme, byte[] auth, CancellationToken cancellationToken = default(CancellationToken))
        {
            var s = SchemeBytes(scheme, auth);
            return Call<bool>(cancellationToken, (session, cancel, user) =>
            {
                fixed (byte* sp = s)
                fixed (byte* ap = auth)
                    return NativeMethods.zl_session_add_auth_async((ZlSession*)session, sp, (uint)s.Length, ap, (uint)auth.Length, cancel, OnAddAuth, user);
            });
        }

        static byte[] SchemeBytes(string scheme, byte[] auth)
        {
            if (scheme == null) throw new ArgumentNullException("scheme");
            if (auth == null) throw new ArgumentNullException("auth");
            return Interop.Bytes(scheme);
        }

        /// <summary>The node's ACL and its stat (kazoo's <c>get_acls</c>).</summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        public IList<ZooKeeperAccessControl> GetAccessControl(string path, out ZooKeeperStat stat)
        {
            var p = PathBytes(path);
            ZooKeeperStat read = null;
            var items = With(s =>
            {
                byte* ptr;
                uint len;
                ZlStat native;
                fixed (byte* bytes = p) Interop.Check(NativeMethods.zl_session_get_acls((ZlSession*)s, bytes, (uint)p.Length, &ptr, &len, &native));
                read = new ZooKeeperStat(native);
                return Interop.TakeList(ptr, len);
            });
            stat = read;
            return ParseAcl(items);
        }

        /// <summary>
        /// <see cref="GetAccessControl"/> without blocking a thread: the ACL
        /// and, in <see cref="ZooKeeperAccessControlRead.Stat"/>, the stat read
        /// with it (its <c>Aversion</c> is what a conditional
        /// <see cref="SetAccessControlAsync"/> names).
        /// </summary>
        public Task<ZooKeeperAccessControlRead> GetAccessControlAsync(string path, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<ZooKeeperAccessControlRead>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_session_get_acls_async((ZlSession*)s, bytes, (uint)p.Length, cancel, OnGetAcls, user);
            });
        }

        /// <summary>ACL entries from the C ABI's list: permissions, scheme, id for each.</summary>
        static IList<ZooKeeperAccessControl> ParseAcl(IList<string> items)
        {
            var acl = new List<ZooKeeperAccessControl>();
            for (int i = 0; i + 2 < items.Count; i += 3)
                acl.Add(new ZooKeeperAccessControl(items[i + 1], items[i + 2], int.Parse(items[i], System.Globalization.CultureInfo.InvariantCulture)));
            return acl;
        }

        /// <summary>ACL entries as the C ABI's list.</summary>
        static byte[] EncodeAcl(IList<ZooKeeperAccessControl> acl)
        {
            if (acl == null) throw new ArgumentNullException("acl");
            var items = new List<string>();
            foreach (var entry in acl)
            {
                if (entry == null) throw new ArgumentException("an ACL entry is null", "acl");
                items.Add(entry.Permissions.ToString(System.Globalization.CultureInfo.InvariantCulture));
                items.Add(entry.Scheme);
                items.Add(entry.Id);
            }
            return Interop.EncodeList(items);
        }

        /// <summary>
        /// Replaces the node's ACL if its ACL is at <paramref name="version"/>
        /// (the stat's <c>Aversion</c>; -1: any); its new stat (kazoo's <c>set_acls</c>).
        /// </summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        /// <exception cref="ZooLockBadVersionException">The ACL is at another version.</exception>
        /// <exception cref="ZooLockInvalidAclException">An empty list, or one the server refuses.</exception>
        public ZooKeeperStat SetAccessControl(string path, IList<ZooKeeperAccessControl> acl, int version = -1)
        {
            var list = EncodeAcl(acl);
            var p = PathBytes(path);
            return With(s =>
            {
                ZlStat native;
                fixed (byte* bytes = p)
                fixed (byte* a = list)
                    Interop.Check(NativeMethods.zl_session_set_acls((ZlSession*)s, bytes, (uint)p.Length, a, (uint)list.Length, version, &native));
                return new ZooKeeperStat(native);
            });
        }

        /// <summary><see cref="SetAccessControl"/> without blocking a thread.</summary>
        public Task<ZooKeeperStat> SetAccessControlAsync(string path, IList<ZooKeeperAccessControl> acl, int version = -1,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var list = EncodeAcl(acl);
            var p = PathBytes(path);
            return Call<ZooKeeperStat>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p)
                fixed (byte* a = list)
                    return NativeMethods.zl_session_set_acls_async((ZlSession*)s, bytes, (uint)p.Length, a, (uint)list.Length, version, cancel, OnSetAcls, user);
            });
        }

        /// <summary><see cref="GetData(string)"/> without blocking a thread.</summary>
        public Task<byte[]> GetDataAsync(string path, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<byte[]>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_session_get_async((ZlSession*)s, bytes, (uint)p.Length, cancel, OnGet, user);
            });
        }

        /// <summary>Replaces the node's data (null: null data) if it is at <paramref name="version"/> (-1: any); its new stat.</summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        /// <exception cref="ZooLockBadVersionException">The node is at another version.</exception>
        public ZooKeeperStat SetData(string path, byte[] data, int version = -1)
        {
            var p = PathBytes(path);
            return With(s =>
            {
                ZlStat stat;
                fixed (byte* bytes = p, value = data)
                {
                    Interop.Check(NativeMethods.zl_session_set((ZlSession*)s, bytes, (uint)p.Length, value, Interop.DataLength(data), version, &stat));
                }
                return new ZooKeeperStat(stat);
            });
        }

        /// <summary><see cref="SetData"/> without blocking a thread.</summary>
        public Task<ZooKeeperStat> SetDataAsync(string path, byte[] data, int version = -1, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<ZooKeeperStat>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p, value = data)
                {
                    return NativeMethods.zl_session_set_async((ZlSession*)s, bytes, (uint)p.Length, value, Interop.DataLength(data), version, cancel, OnSet, user);
                }
            });
        }

        /// <summary>
        /// Creates a node with empty data (as kazoo's <c>create(path)</c>) and
        /// the session's ACL; the path created (with its sequence number, if sequential).
        /// </summary>
        /// <exception cref="ZooLockNodeExistsException">The node exists.</exception>
        /// <exception cref="ZooLockNoNodeException">Its parent is missing, without <see cref="ZooKeeperCreateFlags.MakePath"/>.</exception>
        public string Create(string path, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None)
        {
            return Create(path, new byte[0], flags);
        }

        /// <summary>
        /// Creates a node with <paramref name="data"/>, null for ZooKeeper's
        /// null data; otherwise as <see cref="Create(string, ZooKeeperCreateFlags)"/>.
        /// </summary>
        /// <exception cref="ZooLockNodeExistsException">The node exists.</exception>
        /// <exception cref="ZooLockNoNodeException">Its parent is missing, without <see cref="ZooKeeperCreateFlags.MakePath"/>.</exception>
        public string Create(string path, byte[] data, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None)
        {
            var p = PathBytes(path);
            return With(s =>
            {
                byte* created;
                uint len;
                fixed (byte* bytes = p, value = data)
                {
                    Interop.Check(NativeMethods.zl_session_create((ZlSession*)s, bytes, (uint)p.Length, value, Interop.DataLength(data),
                        (uint)flags, &created, &len, null));
                }
                return Interop.TakeText(created, len);
            });
        }

        /// <summary><see cref="Create(string, ZooKeeperCreateFlags)"/> without blocking a thread.</summary>
        public Task<string> CreateAsync(string path, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            return CreateAsync(path, new byte[0], flags, cancellationToken);
        }

        /// <summary><see cref="Create(string, byte[], ZooKeeperCreateFlags)"/> without blocking a thread.</summary>
        public Task<string> CreateAsync(string path, byte[] data, ZooKeeperCreateFlags flags = ZooKeeperCreateFlags.None,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<string>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p, value = data)
                {
                    return NativeMethods.zl_session_create_async((ZlSession*)s, bytes, (uint)p.Length, value, Interop.DataLength(data), (uint)flags, cancel, OnCreate, user);
                }
            });
        }

        /// <summary>
        /// Deletes the node if it is at <paramref name="version"/> (-1: any).
        /// <paramref name="recursive"/> deletes its descendants first, as
        /// kazoo does: not atomically, and a node already gone is no error.
        /// </summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node (not recursive).</exception>
        /// <exception cref="ZooLockBadVersionException">The node is at another version.</exception>
        /// <exception cref="ZooLockNotEmptyException">The node has children (not recursive).</exception>
        public void Delete(string path, int version = -1, bool recursive = false)
        {
            var p = PathBytes(path);
            With(s =>
            {
                fixed (byte* bytes = p)
                {
                    Interop.Check(NativeMethods.zl_session_delete((ZlSession*)s, bytes, (uint)p.Length, version, (byte)(recursive ? 1 : 0)));
                }
                return 0;
            });
        }

        /// <summary><see cref="Delete"/> without blocking a thread.</summary>
        public Task DeleteAsync(string path, int version = -1, bool recursive = false, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<bool>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p)
                {
                    return NativeMethods.zl_session_delete_async((ZlSession*)s, bytes, (uint)p.Length, version, (byte)(recursive ? 1 : 0), cancel, OnDelete, user);
                }
            });
        }

        /// <summary>The names of the node's children, unsorted.</summary>
        /// <exception cref="ZooLockNoNodeException">There is no such node.</exception>
        public IList<string> GetChildren(string path)
        {
            var p = PathBytes(path);
            return With(s =>
            {
                byte* list;
                uint len;
                fixed (byte* bytes = p) Interop.Check(NativeMethods.zl_session_children((ZlSession*)s, bytes, (uint)p.Length, &list, &len, null));
                return Interop.TakeList(list, len);
            });
        }

        /// <summary><see cref="GetChildren"/> without blocking a thread.</summary>
        public Task<IList<string>> GetChildrenAsync(string path, CancellationToken cancellationToken = default(CancellationToken))
        {
            var p = PathBytes(path);
            return Call<IList<string>>(cancellationToken, (s, cancel, user) =>
            {
                fixed (byte* bytes = p) return NativeMethods.zl_session_children_async((ZlSession*)s, bytes, (uint)p.Length, cancel, OnChildren, user);
            });
        }

        /// <summary>A transaction on this session: writes committed together or not at all.</summary>
        public ZooKeeperTransaction Transaction()
        {
            return With(s =>
            {
                ZlTransaction* created;
                Interop.Check(NativeMethods.zl_transaction_new((ZlSession*)s, &created));
                return new ZooKeeperTransaction((IntPtr)created);
            });
        }

        /// <summary>A callback-completed call on the native session.</summary>
        Task<T> Call<T>(CancellationToken cancellationToken, PendingCall<T>.Starter start)
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().Name);
            return PendingCall<T>.Start(native, cancellationToken, start);
        }

        internal static byte[] PathBytes(string path)
        {
            if (path == null) throw new ArgumentNullException("path");
            return Interop.Bytes(path);
        }

        /// <summary><see cref="TakeBytes"/> for a node's data: null for null data.</summary>
        static byte[] TakeData(byte* ptr, uint len)
        {
            try { return Interop.Data(ptr, len); }
            finally { NativeMethods.zl_bytes_free(ptr, len); }
        }

        /// <summary>Copies a buffer handed out by zoolock, then frees it.</summary>
        static byte[] TakeBytes(byte* ptr, uint len)
        {
            try { return Interop.Copy(ptr, len); }
            finally { NativeMethods.zl_bytes_free(ptr, len); }
        }
    }
}
