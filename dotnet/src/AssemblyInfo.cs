using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyTitle("ZooLock")]
[assembly: AssemblyDescription("One correct ZooKeeper lock for .NET, shared with Rust and Python services: locks, read/write locks, semaphores, fencing tokens")]
[assembly: AssemblyVersion("0.1.0.0")]
[assembly: AssemblyInformationalVersion("0.1.0")]
[assembly: InternalsVisibleTo("ZooLock.Tests")]
