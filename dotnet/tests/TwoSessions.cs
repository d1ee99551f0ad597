using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>A fixture's two sessions, fresh for each test: ours, and another client's.</summary>
    public abstract class TwoSessions
    {
        /// <summary>The session under test.</summary>
        protected ZooKeeperSession session;
        /// <summary>Another client's session.</summary>
        protected ZooKeeperSession other;

        [SetUp]
        public void Connect()
        {
            session = Fixture.Session();
            other = Fixture.Session();
        }

        [TearDown]
        public void Close()
        {
            session.Dispose();
            other.Dispose();
        }
    }
}
