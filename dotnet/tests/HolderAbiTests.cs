using System.Text;
using NUnit.Framework;
using ZooLock.Native;

namespace ZooLock.Tests
{
    /// <summary>
    /// The C ABI's one holder type (<c>ZlHolder</c>), made by <c>zl_lock_new</c> or
    /// <c>zl_semaphore_new</c>: the lock-only queries answer a lock holder and
    /// refuse a semaphore holder with <c>ZL_INVALID_ARGUMENT</c>, never a crash.
    /// </summary>
    [TestFixture]
    public unsafe class HolderAbiTests
    {
        [Test]
        public void LockOnlyQueriesRefuseASemaphoreHolder()
        {
            var lockPath = Encoding.ASCII.GetBytes(Fixture.Path("lock"));
            var poolPath = Encoding.ASCII.GetBytes(Fixture.Path("pool"));
            using (var session = Fixture.Session())
            {
                session.With(s =>
                {
                    ZlHolder* lockHolder;
                    ZlHolder* semaphoreHolder;
                    fixed (byte* p = lockPath, q = poolPath)
                    {
                        Interop.Check(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)lockPath.Length, (int)LockKind.Mutex, (int)ZooKeeperNamingScheme.Kazoo, null, 0, 0, &lockHolder));
                        Interop.Check(NativeMethods.zl_semaphore_new((ZlSession*)s, q, (uint)poolPath.Length, null, 0, 1, &semaphoreHolder));
                    }
                    try
                    {
                        long token;
                        byte held;
                        byte* text;
                        uint length;
                        Assert.That(NativeMethods.zl_lock_fencing_token(lockHolder, &token, &held), Is.EqualTo(NativeMethods.ZL_OK));
                        Assert.That(NativeMethods.zl_lock_node(lockHolder, &text, &length), Is.EqualTo(NativeMethods.ZL_OK));
                        NativeMethods.zl_bytes_free(text, length);

                        Assert.That(NativeMethods.zl_lock_fencing_token(semaphoreHolder, &token, &held), Is.EqualTo((int)ZooLockStatus.InvalidArgument));
                        StringAssert.Contains("not a lock of one path (a semaphore or a multi-lock)", Interop.LastError());
                        Assert.That(NativeMethods.zl_lock_node(semaphoreHolder, &text, &length), Is.EqualTo((int)ZooLockStatus.InvalidArgument));
                        StringAssert.Contains("not a lock of one path (a semaphore or a multi-lock)", Interop.LastError());
                    }
                    finally
                    {
                        NativeMethods.zl_holder_free(lockHolder);
                        NativeMethods.zl_holder_free(semaphoreHolder);
                    }
                    return 0;
                });
            }
        }

        /// <summary>
        /// <c>zl_lock_new</c>'s scheme from C: DistributedLock's names are for a
        /// mutex only, and <c>ZL_SCHEME_OTHER</c> (inspect's "neither") is no scheme
        /// to write; both are refused with <c>ZL_INVALID_ARGUMENT</c> and no holder.
        /// </summary>
        [Test]
        public void ZlLockNewRefusesASchemeItCannotWrite()
        {
            var path = Encoding.ASCII.GetBytes(Fixture.Path("scheme"));
            using (var session = Fixture.Session())
            {
                session.With(s =>
                {
                    fixed (byte* p = path)
                    {
                        ZlHolder* holder = null;
                        Assert.That(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Read,
                            (int)ZooKeeperNamingScheme.DistributedLock, null, 0, 0, &holder), Is.EqualTo((int)ZooLockStatus.InvalidArgument));
                        StringAssert.Contains("mutex nodes only", Interop.LastError());
                        Assert.That(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex,
                            NativeMethods.ZL_SCHEME_OTHER, null, 0, 0, &holder), Is.EqualTo((int)ZooLockStatus.InvalidArgument));
                        StringAssert.Contains("unknown naming scheme 2", Interop.LastError());
                        Assert.That((System.IntPtr)holder, Is.EqualTo(System.IntPtr.Zero));
                        Interop.Check(NativeMethods.zl_lock_new((ZlSession*)s, p, (uint)path.Length, (int)LockKind.Mutex,
                            (int)ZooKeeperNamingScheme.DistributedLock, null, 0, 0, &holder));
                        NativeMethods.zl_holder_free(holder);
                    }
                    return 0;
                });
            }
        }
    }
}
