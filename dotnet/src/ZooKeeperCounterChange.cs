namespace ZooLock
{
    /// <summary>What one change of a <see cref="ZooKeeperCounter"/> did.</summary>
    public struct ZooKeeperCounterChange
    {
        internal ZooKeeperCounterChange(long preValue, long postValue)
        {
            PreValue = preValue;
            PostValue = postValue;
        }

        /// <summary>The value the change read.</summary>
        public long PreValue { get; private set; }

        /// <summary>The value the change wrote.</summary>
        public long PostValue { get; private set; }
    }
}
