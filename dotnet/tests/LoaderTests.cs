using System;
using System.IO;
using NUnit.Framework;

namespace ZooLock.Tests
{
    /// <summary>
    /// The native loader's rules for every platform the package ships, checked on Linux:
    /// each rule takes the operating system and architecture as arguments.
    /// </summary>
    [TestFixture]
    public class LoaderTests
    {
        [Test]
        public void WindowsX64IsShippedAndNamedAsWindowsNamesLibraries()
        {
            CollectionAssert.AreEquivalent(new[] { "linux-x64", "linux-arm64", "win-x64" }, NativeLoader.Shipped);
            Assert.AreEqual("win-x64", NativeLoader.RuntimeIdentifier("win", "x64", false));
            Assert.AreEqual("zoolock_ffi.dll", NativeLoader.FileName("win"));
            Assert.AreEqual("libzoolock_ffi.so", NativeLoader.FileName("linux"));
            Assert.AreEqual("linux-musl-x64", NativeLoader.RuntimeIdentifier("linux", "x64", true));
        }

        [Test]
        public void TheLibraryIsLookedForBesideTheAssemblyThenInThePackagesRuntimesFolder()
        {
            string lib = Path.Combine("pkg", "ZooLock.0.1.0", "lib", "net462");
            string[] places = NativeLoader.Candidates(lib, "win-x64", "zoolock_ffi.dll");
            Assert.AreEqual(Path.Combine(lib, "zoolock_ffi.dll"), places[0]);
            Assert.AreEqual(Path.GetFullPath(Path.Combine("pkg", "ZooLock.0.1.0", "runtimes", "win-x64", "native", "zoolock_ffi.dll")), places[1]);
            Assert.AreEqual(Path.Combine(lib, "runtimes", "win-x64", "native", "zoolock_ffi.dll"), places[2]);
        }

        [Test]
        public void ALibraryOfAnotherFormatOrMachineIsNamedBeforeTheSystemsLoaderTries()
        {
            byte[] windowsX64 = Pe(0x8664), windowsArm64 = Pe(0xaa64), linuxX64 = Elf(62), linuxArm64 = Elf(183);
            Assert.IsNull(NativeLoader.Mismatch(windowsX64, "win", "x64"));
            Assert.AreEqual("built for arm64, not for this x86-64 process", NativeLoader.Mismatch(windowsArm64, "win", "x64"));
            Assert.AreEqual("a Linux (ELF) library, not one for this win process", NativeLoader.Mismatch(linuxX64, "win", "x64"));
            Assert.AreEqual("a Windows (PE) library, not one for this linux process", NativeLoader.Mismatch(windowsX64, "linux", "x64"));
            Assert.IsNull(NativeLoader.Mismatch(linuxX64, "linux", "x64"));
            Assert.AreEqual("built for x86-64, not for this arm64 process", NativeLoader.Mismatch(linuxX64, "linux", "arm64"));
            Assert.AreEqual("built for arm64, not for this x86-64 process", NativeLoader.Mismatch(linuxArm64, "linux", "x64"));
            Assert.IsNull(NativeLoader.Mismatch(new byte[] { (byte)'M', (byte)'Z' }, "win", "x64"), "too short to tell");
            Assert.IsNull(NativeLoader.Mismatch(null, "win", "x64"), "unreadable");
        }

        [Test]
        public void AWindowsProcessIsToldWhatWindowsTheLibraryNeeds()
        {
            string message = NativeLoader.Message("zoolock_ffi.dll", "win-x64", "C:\\app", new[] { "C:\\app\\zoolock_ffi.dll: denied" }, true);
            StringAssert.Contains("win-x64 process on Windows 10 or newer", message);
            StringAssert.Contains("runtimes/win-x64/native/zoolock_ffi.dll", message);
            StringAssert.Contains("not supported", NativeLoader.Message("zoolock_ffi.dll", "win-arm64", "C:\\app", new string[0], false));
        }

        /// <summary>A PE file's first bytes: "MZ", the PE header's offset at 0x3c, "PE\0\0", the machine.</summary>
        static byte[] Pe(int machine)
        {
            var header = new byte[0x100];
            header[0] = (byte)'M';
            header[1] = (byte)'Z';
            header[0x3c] = 0x80;
            header[0x80] = (byte)'P';
            header[0x81] = (byte)'E';
            header[0x84] = (byte)(machine & 0xff);
            header[0x85] = (byte)(machine >> 8);
            return header;
        }

        /// <summary>A little-endian 64-bit ELF file's first bytes with its e_machine.</summary>
        static byte[] Elf(int machine)
        {
            var header = new byte[64];
            header[0] = 0x7f;
            header[1] = (byte)'E';
            header[2] = (byte)'L';
            header[3] = (byte)'F';
            header[4] = 2;
            header[5] = 1;
            header[18] = (byte)machine;
            return header;
        }
    }
}
