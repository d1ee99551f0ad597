using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// Every status of the generated <see cref="ZooLockStatus"/> (the core's error kinds, and a
    /// caught panic) becomes the exception docs/errors.md's table names, never the base
    /// <see cref="ZooLockException"/>, with the core's message. A status the core adds fails
    /// here until it is listed below, as it fails to compile in Errors.cs until it is mapped.
    /// </summary>
    [TestFixture]
    public class ErrorsTests
    {
        /// <summary>The exception of each error status: the tests' one list (BadInputTests checks the catalogue against it too).</summary>
        internal static readonly Dictionary<ZooLockStatus, Type> Expected = new Dictionary<ZooLockStatus, Type>
        {
            { ZooLockStatus.InvalidPath, typeof(ArgumentException) },
            { ZooLockStatus.InvalidConnectString, typeof(ArgumentException) },
            { ZooLockStatus.InvalidArgument, typeof(ArgumentException) },
            { ZooLockStatus.ConnectTimeout, typeof(ZooLockConnectionException) },
            { ZooLockStatus.NoChroot, typeof(ZooLockConfigurationException) },
            { ZooLockStatus.ConnectionLoss, typeof(ZooLockConnectionException) },
            { ZooLockStatus.Cancelled, typeof(OperationCanceledException) },
            { ZooLockStatus.Closed, typeof(ObjectDisposedException) },
            { ZooLockStatus.Forked, typeof(ZooLockForkedException) },
            { ZooLockStatus.NoAuth, typeof(ZooLockAuthException) },
            { ZooLockStatus.AuthFailed, typeof(ZooLockAuthException) },
            { ZooLockStatus.InconsistentLeases, typeof(ZooLockConfigurationException) },
            { ZooLockStatus.ZooKeeper, typeof(ZooLockZooKeeperException) },
            { ZooLockStatus.Panic, typeof(ZooLockInternalException) },
            { ZooLockStatus.NotOwner, typeof(SynchronizationLockException) },
            { ZooLockStatus.NoNode, typeof(ZooLockNoNodeException) },
            { ZooLockStatus.NodeExists, typeof(ZooLockNodeExistsException) },
            { ZooLockStatus.BadVersion, typeof(ZooLockBadVersionException) },
            { ZooLockStatus.NotEmpty, typeof(ZooLockNotEmptyException) },
            { ZooLockStatus.SessionExpired, typeof(ZooLockSessionExpiredException) },
            { ZooLockStatus.NotHeld, typeof(ZooLockNotHeldException) },
            { ZooLockStatus.Tls, typeof(ZooLockTlsException) },
            { ZooLockStatus.NoChildrenForEphemerals, typeof(ZooLockNoChildrenForEphemeralsException) },
            { ZooLockStatus.InvalidAcl, typeof(ZooLockInvalidAclException) },
            { ZooLockStatus.RuntimeGone, typeof(ZooLockInternalException) },
            { ZooLockStatus.BadData, typeof(System.IO.InvalidDataException) },
            { ZooLockStatus.BadArguments, typeof(ZooLockBadArgumentsException) },
            { ZooLockStatus.MixedSchemes, typeof(ZooLockConfigurationException) },
            { ZooLockStatus.OutcomeUnknown, typeof(ZooLockConnectionException) },
        };

        public static IEnumerable<TestCaseData> Statuses()
        {
            return Enum.GetValues(typeof(ZooLockStatus)).Cast<ZooLockStatus>()
                .Where(status => status != ZooLockStatus.Ok)
                .Select(status => new TestCaseData(status).SetName(status.ToString()));
        }

        [TestCaseSource("Statuses")]
        public void EachStatusIsItsOwnExceptionWithTheCoresMessage(ZooLockStatus status)
        {
            const string message = "what the core said";
            Type expected;
            Assert.IsTrue(Expected.TryGetValue(status, out expected), "{0} is not listed in ErrorsTests.Expected", status);
            var error = Errors.FromStatus((int)status, message, CancellationToken.None);
            Assert.That(error.GetType(), Is.EqualTo(expected));
            Assert.That(error.GetType(), Is.Not.EqualTo(typeof(ZooLockException)));
            // .NET appends an ArgumentException's parameter name and an ObjectDisposedException's object name.
            StringAssert.StartsWith(message, error.Message);
            var zooLock = error as ZooLockException;
            if (zooLock != null) Assert.That(zooLock.Status, Is.EqualTo(status));
        }

        [Test]
        public void EveryListedStatusIsAnErrorStatus()
        {
            var statuses = new HashSet<ZooLockStatus>(Enum.GetValues(typeof(ZooLockStatus)).Cast<ZooLockStatus>());
            Assert.That(Expected.Keys.Where(status => !statuses.Contains(status) || status == ZooLockStatus.Ok), Is.Empty);
        }
    }
}
