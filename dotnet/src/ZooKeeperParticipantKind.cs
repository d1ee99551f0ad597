using ZooLock.Native;

namespace ZooLock
{
    /// <summary>What a <see cref="ZooKeeperParticipant"/> holds or waits for, as its node's name tells (the core's <c>ParticipantKind</c>).</summary>
    public enum ZooKeeperParticipantKind
    {
        /// <summary>An exclusive node: a mutex's, or a kazoo write lock's (kazoo names both alike).</summary>
        Lock = NativeMethods.ZL_PARTICIPANT_LOCK,
        /// <summary>A read lock's node.</summary>
        Read = NativeMethods.ZL_PARTICIPANT_READ,
        /// <summary>A Curator write lock's node (<c>__WRIT__</c>).</summary>
        Write = NativeMethods.ZL_PARTICIPANT_WRITE,
        /// <summary>A semaphore lease, or a wait for one.</summary>
        Lease = NativeMethods.ZL_PARTICIPANT_LEASE,
    }
}
