using System;

namespace ZooLock
{
    /// <summary>
    /// Reads a record buffer the C ABI hands out (<c>zl_session_metrics</c>,
    /// <c>zl_inspect</c>): texts as a little-endian u32 length then UTF-8,
    /// numbers little-endian. The caller frees the buffer.
    /// </summary>
    internal unsafe struct RecordReader
    {
        readonly byte* ptr;
        readonly uint len;
        uint at;

        internal RecordReader(byte* ptr, uint len)
        {
            this.ptr = ptr;
            this.len = len;
            at = 0;
        }

        internal bool More { get { return at < len; } }

        byte* Take(uint size)
        {
            if (len - at < size) throw new ZooLockInternalException(ZooLockStatus.Panic, "a record buffer from zoolock ended early");
            var start = ptr + at;
            at += size;
            return start;
        }

        internal byte U8() { return *Take(1); }

        internal int I32()
        {
            var p = Take(4);
            return p[0] | p[1] << 8 | p[2] << 16 | p[3] << 24;
        }

        internal long I64()
        {
            var p = Take(8);
            return (long)((uint)(p[0] | p[1] << 8 | p[2] << 16 | p[3] << 24) | (ulong)(uint)(p[4] | p[5] << 8 | p[6] << 16 | p[7] << 24) << 32);
        }

        internal double F64() { return BitConverter.Int64BitsToDouble(I64()); }

        internal string Text()
        {
            uint size = (uint)I32();
            return Interop.Text(Take(size), size);
        }
    }
}
