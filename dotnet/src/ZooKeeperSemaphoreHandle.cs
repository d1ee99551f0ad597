namespace ZooLock
{
    /// <summary>A held semaphore lease.</summary>
    public sealed class ZooKeeperSemaphoreHandle : ZooKeeperHandle
    {
        internal ZooKeeperSemaphoreHandle(HolderPool pool, Hold hold) : base(pool, hold) { }
    }
}
