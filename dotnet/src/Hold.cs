namespace ZooLock
{
    /// <summary>One acquisition: its holder, who acquired (for a reentrant lock) and which hold (on a shared holder).</summary>
    internal sealed class Hold
    {
        internal readonly Holder Holder;
        internal readonly ulong Owner;
        internal readonly long Key;

        internal Hold(Holder holder, ulong owner, long key)
        {
            Holder = holder;
            Owner = owner;
            Key = key;
        }
    }
}
