using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>Marshalling between C# and the C ABI: UTF-8 strings, status checks, buffers.</summary>
    internal static unsafe class Interop
    {
        internal static readonly UTF8Encoding Utf8 = new UTF8Encoding(false, true);

        [ThreadStatic] static bool adopted;

        /// <summary>
        /// At exit, cancels the acquires in progress and stops the native
        /// callback thread (<c>zl_shutdown</c>): Mono waits at exit for every
        /// thread that ever ran managed code, and would wait forever for a
        /// thread blocked in native code.
        /// </summary>
        static Interop()
        {
            AppDomain.CurrentDomain.ProcessExit += (sender, args) => Shutdown();
            if (!AppDomain.CurrentDomain.IsDefaultAppDomain())
                AppDomain.CurrentDomain.DomainUnload += (sender, args) => Shutdown();
        }

        /// <summary>
        /// Set when the process (or domain) exits: from then on calls complete
        /// their tasks on the callback thread (<see cref="PendingCall{T}"/>).
        /// </summary>
        internal static volatile bool Exiting;

        /// <summary>Stops log events first (a later one would start the callback thread again), then the rest.</summary>
        static void Shutdown()
        {
            Exiting = true;
            if (!NativeLoader.Loaded) return;
            NativeMethods.zl_set_log_callback(NativeMethods.ZL_LOG_OFF, null, null);
            NativeMethods.zl_shutdown();
        }

        /// <summary>
        /// Called first in every callback from native code (all on zoolock's
        /// callback thread): a runtime that adopts the thread as a foreground
        /// thread would wait for it at exit, so mark it background, once.
        /// </summary>
        internal static void EnterCallback()
        {
            if (adopted) return;
            Thread.CurrentThread.IsBackground = true;
            adopted = true;
        }

        internal static byte[] Bytes(string text)
        {
            return text == null ? new byte[0] : Utf8.GetBytes(text);
        }

        /// <summary>Throws the exception a failed status maps to (see <see cref="Errors"/>).</summary>
        internal static void Check(int status)
        {
            if (status != NativeMethods.ZL_OK) throw Errors.FromStatus(status, LastError(), CancellationToken.None);
        }

        /// <summary>The message of the calling thread's last failed native call.</summary>
        internal static string LastError()
        {
            byte* ptr;
            uint len;
            if (NativeMethods.zl_last_error(&ptr, &len) != NativeMethods.ZL_OK) return "(no message)";
            return Text(ptr, len);
        }

        internal static string Text(byte* ptr, uint len)
        {
            return len == 0 ? string.Empty : Encoding.UTF8.GetString(ptr, checked((int)len));
        }

        /// <summary>Reads a buffer handed out by zoolock as text, then frees it.</summary>
        internal static string TakeText(byte* ptr, uint len)
        {
            try { return Text(ptr, len); }
            finally { NativeMethods.zl_bytes_free(ptr, len); }
        }

        /// <summary>Decodes a list (each item a little-endian u32 length, then UTF-8), then frees it.</summary>
        internal static IList<string> TakeList(byte* ptr, uint len)
        {
            try { return List(ptr, len); }
            finally { NativeMethods.zl_bytes_free(ptr, len); }
        }

        /// <summary>Decodes a list (each item a little-endian u32 length, then UTF-8).</summary>
        internal static IList<string> List(byte* ptr, uint len)
        {
            var items = new List<string>();
            uint at = 0;
            while (at + 4 <= len)
            {
                uint size = (uint)(ptr[at] | ptr[at + 1] << 8 | ptr[at + 2] << 16 | ptr[at + 3] << 24);
                at += 4;
                items.Add(Text(ptr + at, size));
                at += size;
            }
            return items.AsReadOnly();
        }

        /// <summary>Encodes a list as <see cref="List"/> reads one.</summary>
        internal static byte[] EncodeList(IList<string> items)
        {
            var encoded = new List<byte[]>();
            foreach (var item in items) encoded.Add(Bytes(item));
            return EncodeList(encoded);
        }

        /// <summary>Encodes byte strings in <see cref="List"/>'s layout (each a little-endian u32 length, then its bytes).</summary>
        internal static byte[] EncodeList(IEnumerable<byte[]> items)
        {
            var buffer = new System.IO.MemoryStream();
            foreach (var bytes in items)
            {
                for (int shift = 0; shift < 32; shift += 8) buffer.WriteByte((byte)(bytes.Length >> shift));
                buffer.Write(bytes, 0, bytes.Length);
            }
            return buffer.ToArray();
        }

        /// <summary>
        /// A node's data as the C ABI passes it: null (ZooKeeper's null data)
        /// as length <c>ZL_NULL_DATA</c>, any other array (empty too) as itself.
        /// </summary>
        internal static uint DataLength(byte[] data)
        {
            return data == null ? NativeMethods.ZL_NULL_DATA : (uint)data.Length;
        }

        /// <summary>A copy of a node's native data: null for null data (length <c>ZL_NULL_DATA</c>).</summary>
        internal static byte[] Data(byte* ptr, uint len)
        {
            return len == NativeMethods.ZL_NULL_DATA ? null : Copy(ptr, len);
        }

        /// <summary>A copy of native bytes.</summary>
        internal static byte[] Copy(byte* ptr, uint len)
        {
            var data = new byte[len];
            if (len > 0) Marshal.Copy((IntPtr)ptr, data, 0, checked((int)len));
            return data;
        }

        /// <summary>
        /// A timeout as the C ABI takes it: -1 waits forever (null or
        /// <see cref="Timeout.InfiniteTimeSpan"/>), else whole milliseconds, rounded up.
        /// </summary>
        internal static long Millis(TimeSpan? timeout, string parameter)
        {
            if (!timeout.HasValue || timeout.Value == Timeout.InfiniteTimeSpan) return -1;
            var value = timeout.Value;
            if (value < TimeSpan.Zero)
                throw new ArgumentOutOfRangeException(parameter, value, "a timeout must not be negative (use null or Timeout.InfiniteTimeSpan to wait forever)");
            // Rounded up without overflow: TimeSpan.MaxValue is about 29,000 years, a wait without end.
            return value.Ticks / TimeSpan.TicksPerMillisecond + (value.Ticks % TimeSpan.TicksPerMillisecond != 0 ? 1 : 0);
        }

        internal static long Millis(int millisecondsTimeout, string parameter)
        {
            if (millisecondsTimeout == Timeout.Infinite) return -1;
            if (millisecondsTimeout < 0)
                throw new ArgumentOutOfRangeException(parameter, millisecondsTimeout, "a timeout must be Timeout.Infinite (-1) or at least 0 ms");
            return millisecondsTimeout;
        }
    }
}
