using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;

namespace ZooLock
{
    /// <summary>
    /// zoolock's native library (the lock's Rust core) could not be found or
    /// loaded for this process's platform: the message names the library,
    /// the runtime identifier, each place tried with the loader's answer, and
    /// what to do. No ZooKeeper call was made, and no native call ran:
    /// <see cref="ZooLockException.Status"/> is <see cref="NoStatus"/> (-1), a
    /// value no native call returns.
    /// </summary>
    [Serializable]
    public class ZooLockNativeLibraryException : ZooLockException
    {
        /// <summary>Creates the exception; <paramref name="tried"/> lists each place tried, with the loader's answer.</summary>
        public ZooLockNativeLibraryException(string library, string runtimeIdentifier, IList<string> tried, string message)
            : base(NoStatus, message)
        {
            Library = library;
            RuntimeIdentifier = runtimeIdentifier;
            Tried = new ReadOnlyCollection<string>(new List<string>(tried ?? new string[0]));
        }

        /// <summary>The <see cref="ZooLockException.Status"/> of this exception: -1, no status of the C ABI, which never ran.</summary>
        public const ZooLockStatus NoStatus = (ZooLockStatus)(-1);

        /// <summary>The native library's file name on this platform, e.g. <c>libzoolock_ffi.so</c>.</summary>
        public string Library { get; private set; }

        /// <summary>This process's runtime identifier, e.g. <c>linux-x64</c> or <c>linux-arm64</c>: the <c>runtimes/</c> folder of the package it needs.</summary>
        public string RuntimeIdentifier { get; private set; }

        /// <summary>Each place tried, with the loader's answer.</summary>
        public IList<string> Tried { get; private set; }
    }
}
