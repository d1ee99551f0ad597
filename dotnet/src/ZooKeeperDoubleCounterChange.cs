namespace ZooLock
{
    /// <summary>What one change of a <see cref="ZooKeeperDoubleCounter"/> did.</summary>
    public struct ZooKeeperDoubleCounterChange
    {
        internal ZooKeeperDoubleCounterChange(double preValue, double postValue)
        {
            PreValue = preValue;
            PostValue = postValue;
        }

        /// <summary>The value the change read.</summary>
        public double PreValue { get; private set; }

        /// <summary>The value the change wrote.</summary>
        public double PostValue { get; private set; }
    }
}
