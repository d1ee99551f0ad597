using System;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>A C# holder and a Rust contender (another process) on one path exclude each other.</summary>
    [TestFixture]
    public class CrossLanguageTests
    {
        [Test]
        public void CSharpAndRustExcludeEachOtherAndTokensKeepIncreasing()
        {
            var path = Fixture.Path("cross");
            using (var session = Fixture.Session())
            {
                var mutex = new ZooKeeperDistributedLock(path, session, "csharp");
                var mine = mutex.Acquire();
                using (var rust = new Peer("hold", Setup.Zk.Connect, path, "rust"))
                {
                    Fixture.Eventually(() => mutex.GetContenders().Count == 2, "the Rust waiter is queued");
                    Assert.That(mutex.GetContenders(), Is.EqualTo(new[] { "csharp", "rust" }));
                    Assert.IsNull(rust.Printed(), "the Rust waiter does not hold while C# does");
                    long csharpToken = mine.FencingToken;
                    mine.Dispose();

                    var held = rust.ReadLine(Fixture.Patience);
                    Assert.IsNotNull(held, "the Rust waiter took the lock");
                    StringAssert.StartsWith("held ", held);
                    long rustToken = long.Parse(held.Substring(5));
                    Assert.That(rustToken, Is.GreaterThan(csharpToken));
                    Assert.IsNull(mutex.TryAcquire(), "the Rust holder excludes C#");

                    var waiting = mutex.AcquireAsync();
                    Fixture.Eventually(() => mutex.GetContenders().Count == 2, "C# is queued behind Rust");
                    Assert.IsFalse(waiting.IsCompleted);
                    rust.Send("release");
                    Assert.That(rust.ReadLine(Fixture.Patience), Is.EqualTo("released"));
                    using (var again = Fixture.Await(waiting, "C# after the Rust release"))
                    {
                        Assert.That(again.FencingToken, Is.GreaterThan(rustToken));
                    }
                }
            }
        }
    }
}
