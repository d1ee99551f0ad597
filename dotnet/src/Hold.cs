namespace ZooLock
{
    /// <summary>One acquisition: its holder, who acquired (for a reentrant lock), which hold (on a shared holder), and its lease on the session.</summary>
    internal sealed class Hold
    {
        internal readonly Holder Holder;
        internal readonly ulong Owner;
        internal readonly long Key;
        internal readonly Lease Lease;

        internal Hold(Holder holder, ulong owner, long key, Lease lease)
        {
            Holder = holder;
            Owner = owner;
            Key = key;
            Lease = lease;
        }
    }
}
