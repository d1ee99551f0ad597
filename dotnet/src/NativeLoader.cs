using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.IO;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// Finds and loads zoolock's native library before its first call, and
    /// turns every way that can fail into one <see cref="ZooLockNativeLibraryException"/>
    /// (a bare DllImport says only <c>DllNotFoundException: zoolock_ffi</c>,
    /// or <c>TypeInitializationException</c> from a static constructor).
    /// A library file found beside ZooLock.dll (where MSBuild and
    /// build/ZooLock.targets put it), or in the package's own
    /// <c>runtimes/RID/native</c> when ZooLock.dll is used in place from
    /// <c>lib/net462</c> (a program built with mcs), is loaded by its full
    /// path: the DllImports then bind to it by its soname,
    /// <c>libzoolock_ffi.so</c> (ffi/build.rs sets it), or on Windows by its
    /// module name, <c>zoolock_ffi.dll</c>, which the loader finds loaded.
    /// Otherwise the runtime's own search runs (LD_LIBRARY_PATH or PATH,
    /// Mono's dllmap, .NET's deps.json). Every rule is a function of the
    /// operating system and architecture it is given, so that the Linux
    /// tests check Windows' too (LoaderTests).
    /// </summary>
    internal static unsafe class NativeLoader
    {
        /// <summary>The runtime identifiers the package ships a native library for (scripts/package.sh builds them).</summary>
        internal static readonly string[] Shipped = { "linux-x64", "linux-arm64", "win-x64" };

        static readonly object Gate = new object();
        static volatile bool loaded;

        /// <summary>True once a native call has gone through.</summary>
        internal static bool Loaded { get { return loaded; } }

        /// <summary>
        /// Loads the library once; throws <see cref="ZooLockNativeLibraryException"/> (each time) while it cannot.
        /// Call it from a method that calls no native function itself: Mono binds a
        /// method's DllImports when it compiles the method, and a DllImport that
        /// failed to bind then stays failed.
        /// </summary>
        internal static void EnsureLoaded()
        {
            if (loaded) return;
            lock (Gate)
            {
                if (loaded) return;
                Load();
                loaded = true;
            }
        }

        /// <summary><see cref="EnsureLoaded"/> in a constructor's chain (<c>: this(…, NativeLoader.Ready())</c>).</summary>
        internal static bool Ready()
        {
            EnsureLoaded();
            return true;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Load()
        {
            string os = Os(), architecture = Architecture();
            string rid = RuntimeIdentifier(os, architecture, os == "linux" && IsMusl());
            string file = FileName(os);
            string here = Path.GetDirectoryName(typeof(NativeLoader).Assembly.Location);
            var tried = new List<string>();
            bool foundOne = false;
            if (!string.IsNullOrEmpty(here))
            {
                var places = new List<string>(Candidates(here, rid, file));
                // A shadow-copied assembly's Location is the copy; its CodeBase is where the package put it.
                string original = OriginalDirectory();
                if (original != null && original != here) places.AddRange(Candidates(original, rid, file));
                foreach (var path in places)
                {
                    if (!File.Exists(path)) { tried.Add(path + ": not there"); continue; }
                    foundOne = true;
                    string error = Open(path, os, architecture);
                    if (error == null) { tried.Add(path + ": loaded"); break; }
                    tried.Add(path + ": " + error);
                }
            }
            string failure = Bind();
            if (failure == null) return;
            tried.Add("the runtime's own search for \"zoolock_ffi\" (" + (os == "win" ? "PATH, the system's folders" : "LD_LIBRARY_PATH, the system's library folders") + "): " + failure);
            throw new ZooLockNativeLibraryException(file, rid, tried, Message(file, rid, here, tried, foundOne));
        }

        /// <summary>Where the package puts the library, relative to ZooLock.dll: beside it, or the package's runtimes folder.</summary>
        internal static string[] Candidates(string here, string rid, string file)
        {
            return new[]
            {
                Path.Combine(here, file),
                Path.GetFullPath(Path.Combine(here, "..", "..", "runtimes", rid, "native", file)),
                Path.Combine(here, "runtimes", rid, "native", file),
            };
        }

        static string OriginalDirectory()
        {
            try
            {
#pragma warning disable 618 // CodeBase: obsolete in .NET 5+, and the only way to see past a shadow copy.
                var uri = new Uri(typeof(NativeLoader).Assembly.CodeBase);
#pragma warning restore 618
                return uri.IsFile ? Path.GetDirectoryName(uri.LocalPath) : null;
            }
            catch (Exception) { return null; }
        }

        /// <summary>The first DllImport call, compiled only after the library was looked for: null if it bound, else what went wrong.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static string Bind()
        {
            try
            {
                byte* text;
                uint length;
                NativeMethods.zl_version(&text, &length);
                return null;
            }
            catch (DllNotFoundException e) { return "not found (" + e.Message + ")"; }
            catch (BadImageFormatException e) { return e.Message; }
            catch (EntryPointNotFoundException e) { return "a library of that name without zoolock's functions: " + e.Message; }
        }

        internal static string Message(string file, string rid, string here, IList<string> tried, bool foundOne)
        {
            string advice;
            if (Array.IndexOf(Shipped, rid) < 0)
                advice = string.Format("The ZooLock package ships its native library for {0} only: {1} is not supported.",
                    string.Join(" and ", Shipped), rid);
            else if (foundOne)
                advice = string.Format("The library is there but cannot be loaded: the answer above says why. It needs a {0} process on {2}; a library of another version or platform must be replaced by the package's runtimes/{0}/native/{1}.",
                    rid, file, rid.StartsWith("win-", StringComparison.Ordinal) ? "Windows 10 or newer" : "glibc 2.17 or newer");
            else
                advice = string.Format("Reference the package from an MSBuild project (it copies the library next to your program), "
                    + "or copy runtimes/{0}/native/{1} from the package next to ZooLock.dll, "
                    + "or load ZooLock.dll from the package's lib/net462 folder, where it finds the library by itself "
                    + "(e.g. with <probing privatePath=\"...\"/> in your program's .config file).", rid, file);
            return string.Format("zoolock's native library {0} could not be loaded for runtime {1} (ZooLock.dll in {2}). Tried: {3}. {4}",
                file, rid, string.IsNullOrEmpty(here) ? "memory" : here, string.Join("; ", tried), advice);
        }

        /// <summary>The library's file name on <paramref name="os"/> (win, osx, linux).</summary>
        internal static string FileName(string os)
        {
            switch (os)
            {
                case "win": return "zoolock_ffi.dll";
                case "osx": return "libzoolock_ffi.dylib";
                default: return "libzoolock_ffi.so";
            }
        }

        /// <summary>A runtime identifier as NuGet names runtimes/ folders: linux-x64, linux-arm64, linux-musl-x64, osx-arm64, win-x64…</summary>
        internal static string RuntimeIdentifier(string os, string architecture, bool musl)
        {
            return (musl ? os + "-musl" : os) + "-" + architecture;
        }

        static string Os()
        {
            try { return DetectedOs(); }
            catch (TypeLoadException) { return Environment.OSVersion.Platform == PlatformID.Win32NT ? "win" : "linux"; }
        }

        static string Architecture()
        {
            try { return DetectedArchitecture(); }
            catch (TypeLoadException) { return IntPtr.Size == 8 ? "x64" : "x86"; }
        }

        // RuntimeInformation is in mscorlib from .NET Framework 4.7.1 and in
        // Mono and .NET: separate methods, so that its absence on an older
        // .NET Framework is a TypeLoadException the callers catch.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static string DetectedOs()
        {
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows)) return "win";
            if (RuntimeInformation.IsOSPlatform(OSPlatform.OSX)) return "osx";
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) return "linux";
            return RuntimeInformation.OSDescription.Split(' ')[0].ToLowerInvariant();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static string DetectedArchitecture()
        {
            switch (RuntimeInformation.ProcessArchitecture)
            {
                case System.Runtime.InteropServices.Architecture.X64: return "x64";
                case System.Runtime.InteropServices.Architecture.X86: return "x86";
                case System.Runtime.InteropServices.Architecture.Arm64: return "arm64";
                case System.Runtime.InteropServices.Architecture.Arm: return "arm";
                default: return RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant();
            }
        }

        /// <summary>musl's dynamic loader, and no glibc one: Alpine and the like (RID linux-musl-*).</summary>
        static bool IsMusl()
        {
            try
            {
                return Directory.GetFiles("/lib", "ld-musl-*.so.1").Length > 0
                    && !File.Exists("/lib64/ld-linux-x86-64.so.2") && !File.Exists("/lib/ld-linux-aarch64.so.1");
            }
            catch (Exception) { return false; }
        }

        /// <summary>Loads the file by its full path: null, or the loader's error.</summary>
        static string Open(string path, string os, string architecture)
        {
            // glibc says "cannot open shared object file" of a library built for another machine, Windows "%1 is not a valid Win32 application".
            string mismatch = Mismatch(Header(path), os, architecture);
            if (mismatch != null) return mismatch;
            try
            {
                switch (os)
                {
                    case "win":
                        if (LoadLibraryW(path) != IntPtr.Zero) return null;
                        return new Win32Exception(Marshal.GetLastWin32Error()).Message;
                    case "osx":
                        if (MacOpen(path, RtldNow) != IntPtr.Zero) return null;
                        return Marshal.PtrToStringAnsi(MacError());
                    default:
                        if (LinuxOpen(path, RtldNow) != IntPtr.Zero) return null;
                        return Marshal.PtrToStringAnsi(LinuxError());
                }
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                return "the system's loader could not be called: " + e.Message;
            }
        }

        /// <summary>The file's first bytes (enough for an ELF header and a PE header's machine), or null if it cannot be read.</summary>
        static byte[] Header(string path)
        {
            try
            {
                var header = new byte[1024];
                int length;
                using (var stream = File.OpenRead(path)) length = stream.Read(header, 0, header.Length);
                Array.Resize(ref header, length);
                return header;
            }
            catch (Exception) { return null; }
        }

        /// <summary>
        /// Why a library with this header cannot load in an <paramref name="os"/> process of
        /// <paramref name="architecture"/> (another format, another machine), or null when it
        /// could or the header says nothing sure.
        /// </summary>
        internal static string Mismatch(byte[] header, string os, string architecture)
        {
            string format, machine;
            if (!Machine(header, out format, out machine)) return null;
            string wanted = os == "win" ? "Windows" : os == "osx" ? null : "ELF";
            if (wanted != null && format != wanted)
                return string.Format("a {0} library, not one for this {1} process", format == "ELF" ? "Linux (ELF)" : "Windows (PE)", os);
            string expected = MachineName(architecture);
            if (expected != null && machine != expected)
                return string.Format("built for {0}, not for this {1} process", machine, expected);
            return null;
        }

        /// <summary>The format (ELF or Windows' PE) and machine a library's header names.</summary>
        static bool Machine(byte[] header, out string format, out string machine)
        {
            format = machine = null;
            if (header == null || header.Length < 20) return false;
            int code;
            if (header[0] == 0x7f && header[1] == (byte)'E' && header[2] == (byte)'L' && header[3] == (byte)'F')
            {
                format = "ELF";
                code = header[5] == 2 ? header[18] << 8 | header[19] : header[18] | header[19] << 8;
                switch (code)
                {
                    case 3: machine = "x86"; break;
                    case 40: machine = "arm"; break;
                    case 62: machine = "x86-64"; break;
                    case 183: machine = "arm64"; break;
                    default: machine = "ELF machine " + code; break;
                }
                return true;
            }
            if (header.Length < 64 || header[0] != (byte)'M' || header[1] != (byte)'Z') return false;
            int pe = BitConverter.ToInt32(header, 0x3c);
            if (pe < 0 || pe + 6 > header.Length || header[pe] != (byte)'P' || header[pe + 1] != (byte)'E' || header[pe + 2] != 0 || header[pe + 3] != 0)
                return false;
            format = "Windows";
            code = header[pe + 4] | header[pe + 5] << 8;
            switch (code)
            {
                case 0x14c: machine = "x86"; break;
                case 0x1c4: machine = "arm"; break;
                case 0x8664: machine = "x86-64"; break;
                case 0xaa64: machine = "arm64"; break;
                default: machine = "PE machine 0x" + code.ToString("x4"); break;
            }
            return true;
        }

        static string MachineName(string architecture)
        {
            switch (architecture)
            {
                case "x64": return "x86-64";
                case "x86": return "x86";
                case "arm64": return "arm64";
                case "arm": return "arm";
                default: return null;
            }
        }

        const int RtldNow = 2;

        [DllImport("libdl.so.2", EntryPoint = "dlopen")]
        static extern IntPtr LinuxOpen(string file, int mode);

        [DllImport("libdl.so.2", EntryPoint = "dlerror")]
        static extern IntPtr LinuxError();

        [DllImport("/usr/lib/libSystem.B.dylib", EntryPoint = "dlopen")]
        static extern IntPtr MacOpen(string file, int mode);

        [DllImport("/usr/lib/libSystem.B.dylib", EntryPoint = "dlerror")]
        static extern IntPtr MacError();

        [DllImport("kernel32", SetLastError = true, CharSet = CharSet.Unicode)]
        static extern IntPtr LoadLibraryW(string path);
    }
}
