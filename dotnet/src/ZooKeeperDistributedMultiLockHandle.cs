using System.Collections.Generic;
using System.Collections.ObjectModel;

namespace ZooLock
{
    /// <summary>
    /// A held <see cref="ZooKeeperDistributedMultiLock"/>: every path, with a
    /// fencing token each. Dispose releases them together;
    /// <see cref="ZooKeeperHandle.HandleLostToken"/> fires when any path's node is lost.
    /// </summary>
    public sealed class ZooKeeperDistributedMultiLockHandle : ZooKeeperHandle
    {
        internal ZooKeeperDistributedMultiLockHandle(HolderPool pool, Hold hold) : base(pool, hold)
        {
            var tokens = new Dictionary<string, long>();
            foreach (var token in hold.Holder.Tokens()) tokens[token.Key] = token.Value;
            FencingTokens = new ReadOnlyDictionary<string, long>(tokens);
        }

        /// <summary>
        /// Each path's fencing token: strictly increasing from one holder of
        /// that path to the next. Pass each to what its path guards.
        /// </summary>
        public IReadOnlyDictionary<string, long> FencingTokens { get; private set; }
    }
}
