using System;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>A node's metadata (ZooKeeper's <c>Stat</c>).</summary>
    public sealed class ZooKeeperStat
    {
        internal ZooKeeperStat(ZlStat stat)
        {
            Czxid = stat.czxid;
            Mzxid = stat.mzxid;
            Pzxid = stat.pzxid;
            Ctime = DateTimeOffset.FromUnixTimeMilliseconds(stat.ctime);
            Mtime = DateTimeOffset.FromUnixTimeMilliseconds(stat.mtime);
            EphemeralOwner = stat.ephemeral_owner;
            Version = stat.version;
            Cversion = stat.cversion;
            Aversion = stat.aversion;
            DataLength = stat.data_length;
            NumChildren = stat.num_children;
        }

        /// <summary>The zxid of the transaction that created the node.</summary>
        public long Czxid { get; private set; }
        /// <summary>The zxid of the transaction that last changed its data.</summary>
        public long Mzxid { get; private set; }
        /// <summary>The zxid of the transaction that last changed its children.</summary>
        public long Pzxid { get; private set; }
        /// <summary>Creation time, by the server's clock, in UTC (to the millisecond).</summary>
        public DateTimeOffset Ctime { get; private set; }
        /// <summary>Last data change, by the server's clock, in UTC (to the millisecond).</summary>
        public DateTimeOffset Mtime { get; private set; }
        /// <summary>The session owning an ephemeral node; 0 for a persistent one.</summary>
        public long EphemeralOwner { get; private set; }
        /// <summary>Changes to its data: the version a conditional SetData or Delete names.</summary>
        public int Version { get; private set; }
        /// <summary>Changes to its children.</summary>
        public int Cversion { get; private set; }
        /// <summary>Changes to its ACL.</summary>
        public int Aversion { get; private set; }
        /// <summary>The length of its data.</summary>
        public int DataLength { get; private set; }
        /// <summary>How many children it has.</summary>
        public int NumChildren { get; private set; }
    }
}
