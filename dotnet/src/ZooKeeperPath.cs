using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Text;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// A ZooKeeper node path, checked when made (DistributedLock's
    /// <c>ZooKeeperPath</c>): what the DistributedLock-style constructors take
    /// to tell a path from a lock name. <see cref="ToString"/> gives the path.
    /// </summary>
    public readonly struct ZooKeeperPath : IEquatable<ZooKeeperPath>
    {
        /// <summary>The root, "/": where a lock made from a bare name lives.</summary>
        public static readonly ZooKeeperPath Root = new ZooKeeperPath("/", false);

        readonly string path;

        /// <summary>The path <paramref name="path"/>, checked as ZooKeeper would.</summary>
        /// <exception cref="ArgumentException">Not a valid node path (relative, empty segments, a trailing '/', refused characters).</exception>
        /// <exception cref="ZooLockNativeLibraryException">zoolock's native library (which checks it) cannot be loaded.</exception>
        public ZooKeeperPath(string path) : this(path, true) { }

        ZooKeeperPath(string path, bool check)
        {
            if (path == null) throw new ArgumentNullException("path");
            if (check) Check(path, false);
            this.path = path;
        }

        /// <summary>The path as text.</summary>
        public override string ToString() { return path; }

        /// <summary>The same path.</summary>
        public bool Equals(ZooKeeperPath other) { return path == other.path; }

        /// <summary>The same path.</summary>
        public override bool Equals(object obj) { return obj is ZooKeeperPath && Equals((ZooKeeperPath)obj); }

        /// <summary>The path's hash.</summary>
        public override int GetHashCode() { return path == null ? 0 : path.GetHashCode(); }

        /// <summary>The same path.</summary>
        public static bool operator ==(ZooKeeperPath left, ZooKeeperPath right) { return left.Equals(right); }

        /// <summary>Not the same path.</summary>
        public static bool operator !=(ZooKeeperPath left, ZooKeeperPath right) { return !left.Equals(right); }

        /// <summary>The path, or an exception for <c>default(ZooKeeperPath)</c>.</summary>
        internal string Value(string parameter)
        {
            if (path == null) throw new ArgumentNullException(parameter);
            return path;
        }

        /// <summary>
        /// The lock path for <paramref name="name"/> under this directory, as
        /// DistributedLock maps it: a name that is a valid node name is used as
        /// it is; any other gets its invalid characters replaced by '_' and the
        /// Base64 SHA-512 of the name appended ('/' in it replaced by '_'), so
        /// distinct names stay distinct.
        /// </summary>
        internal string Child(string name, string parameter)
        {
            if (name == null) throw new ArgumentNullException("name");
            var directory = Value(parameter);
            bool isRoot = directory == "/";
            var valid = ValidName(name, isRoot);
            string safe = name;
            if (valid != name)
            {
                byte[] hash;
                using (var sha = SHA512.Create()) hash = sha.ComputeHash(Encoding.UTF8.GetBytes(name));
                safe = (valid + Convert.ToBase64String(hash)).Replace('/', '_');
            }
            return (isRoot ? directory : directory + "/") + safe;
        }

        /// <summary>DistributedLock's rule: the name itself when "/name" is a valid path, else a repaired one.</summary>
        static string ValidName(string name, bool isRoot)
        {
            if (name.Length == 0) return "EMPTY";
            if (name == "." || name == ".." || (isRoot && name == "zookeeper")) return name + "_";
            var repaired = name.ToCharArray();
            for (int i = 0; i < repaired.Length; i++)
            {
                if (repaired[i] == '/' || repaired[i] == '\0' || Refused(repaired[i])) repaired[i] = '_';
            }
            return new string(repaired);
        }

        /// <summary>The characters ZooKeeper refuses in a path besides NUL, by UTF-16 unit (surrogates included).</summary>
        static bool Refused(char c)
        {
            return (c > '\u0000' && c <= '\u001f') || (c >= '\u007f' && c <= '\u009f')
                || (c >= '\ud800' && c <= '\uf8ff') || (c >= '\ufff0' && c <= '\uffff');
        }

        /// <summary>The core's check of a node path or, with <paramref name="lockPath"/>, a lock path: ArgumentException if refused.</summary>
        /// <exception cref="ZooLockNativeLibraryException">zoolock's native library cannot be loaded.</exception>
        internal static void Check(string path, bool lockPath)
        {
            NativeLoader.EnsureLoaded();
            CheckLoaded(path, lockPath);
        }

        /// <summary>The check itself, never compiled before the library is loaded (see <see cref="NativeLoader"/>).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe void CheckLoaded(string path, bool lockPath)
        {
            var bytes = Interop.Bytes(path);
            fixed (byte* p = bytes) Interop.Check(NativeMethods.zl_path_check(p, (uint)bytes.Length, (byte)(lockPath ? 1 : 0)));
        }
    }
}
