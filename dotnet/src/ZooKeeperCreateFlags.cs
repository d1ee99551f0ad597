using System;

namespace ZooLock
{
    /// <summary>How <see cref="ZooKeeperSession.Create(string, byte[], ZooKeeperCreateFlags)"/> makes a node (the core's <c>Create</c>); combine with <c>|</c>.</summary>
    [Flags]
    public enum ZooKeeperCreateFlags
    {
        /// <summary>A persistent node whose parent exists.</summary>
        None = 0,
        /// <summary>Deleted by the server when the session that created it ends.</summary>
        Ephemeral = (int)Native.NativeMethods.ZL_CREATE_EPHEMERAL,
        /// <summary>The server appends a 10-digit sequence number to the name.</summary>
        Sequence = (int)Native.NativeMethods.ZL_CREATE_SEQUENCE,
        /// <summary>Missing parents are created first, empty and persistent (not in a transaction).</summary>
        MakePath = (int)Native.NativeMethods.ZL_CREATE_MAKEPATH,
    }
}
