namespace ZooLock
{
    /// <summary>Why a hold ended without a release (the core's <c>LostReason</c>).</summary>
    public enum LostReason
    {
        /// <summary>The hold is not lost.</summary>
        None = 0,
        /// <summary>The session expired: its ephemeral nodes are gone.</summary>
        SessionExpired,
        /// <summary>The session was closed.</summary>
        SessionClosed,
        /// <summary>The lease given at acquire ran out.</summary>
        LeaseExpired,
        /// <summary>Someone else deleted the holder's node (an operator breaking the lock).</summary>
        NodeDeleted,
    }
}
