using System.Collections.Generic;

namespace ZooLock
{
    /// <summary>
    /// A node's ACL and the stat read with it (kazoo's <c>get_acls</c>
    /// pair), from <see cref="ZooKeeperSession.GetAccessControlAsync"/>.
    /// </summary>
    public sealed class ZooKeeperAccessControlRead
    {
        internal ZooKeeperAccessControlRead(IList<ZooKeeperAccessControl> acl, ZooKeeperStat stat)
        {
            Acl = acl;
            Stat = stat;
        }

        /// <summary>The ACL's entries.</summary>
        public IList<ZooKeeperAccessControl> Acl { get; private set; }

        /// <summary>The node's stat: its <c>Aversion</c> is the ACL's version.</summary>
        public ZooKeeperStat Stat { get; private set; }
    }
}
