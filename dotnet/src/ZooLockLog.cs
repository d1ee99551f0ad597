// TraceSource.TraceEvent is [Conditional("TRACE")]: without this, its calls are compiled away.
#define TRACE

using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using ZooLock.Native;

namespace ZooLock
{
    /// <summary>
    /// zoolock's core log events (sessions that end, nodes that could not be
    /// deleted, a persistent hold that outlived its session…) for .NET: each
    /// goes to <see cref="TraceSource"/> (named "ZooLock", configurable in the
    /// application's config file like any other) and to <see cref="Logged"/>.
    /// Events come on zoolock's callback thread, in order.
    /// </summary>
    public static unsafe class ZooLockLog
    {
        static readonly NativeMethods.zl_set_log_callback_callback_delegate OnEvent = Deliver;
        static readonly object Gate = new object();
        static SourceLevels level;
        static bool installed;

        /// <summary>The trace source every event is written to (its switch filters what its listeners see).</summary>
        public static readonly TraceSource TraceSource = new TraceSource("ZooLock");

        /// <summary>Raised with each event up to <see cref="Level"/>. A handler must return quickly and not throw.</summary>
        public static event EventHandler<ZooLockLogEventArgs> Logged;

        static ZooLockLog()
        {
            // At least warnings, more if the trace source's switch asks for more.
            // No native call here: a failure to load the library must not
            // become a TypeInitializationException; Install applies it.
            var configured = TraceSource.Switch.Level;
            level = (configured & ~SourceLevels.ActivityTracing) > SourceLevels.Warning ? configured : SourceLevels.Warning;
        }

        /// <summary>
        /// The most verbose events zoolock passes on: <see cref="SourceLevels.Warning"/>
        /// by default (errors and warnings); <c>Information</c> adds session
        /// state changes; <c>Verbose</c> every step; <c>Off</c> none, at no cost.
        /// </summary>
        /// <exception cref="ZooLockNativeLibraryException">Set, while zoolock's native library cannot be loaded.</exception>
        public static SourceLevels Level
        {
            get { lock (Gate) return level; }
            set
            {
                NativeLoader.EnsureLoaded();
                lock (Gate)
                {
                    level = value;
                    Apply();
                }
            }
        }

        /// <summary>Registers the callback at the current level, once the native library is loaded: every session calls this first.</summary>
        internal static void Install()
        {
            lock (Gate)
            {
                if (!installed) Apply();
            }
        }

        /// <summary>Hands the level and callback to the native library (under <see cref="Gate"/>); never inlined into the setter, which loads the library first.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Apply()
        {
            Interop.Check(NativeMethods.zl_set_log_callback(NativeLevel(level), OnEvent, null));
            installed = true;
        }

        static int NativeLevel(SourceLevels levels)
        {
            levels &= ~SourceLevels.ActivityTracing;
            if (levels >= SourceLevels.Verbose) return NativeMethods.ZL_LOG_DEBUG;
            if (levels >= SourceLevels.Information) return NativeMethods.ZL_LOG_INFO;
            if (levels >= SourceLevels.Warning) return NativeMethods.ZL_LOG_WARN;
            if (levels >= SourceLevels.Critical) return NativeMethods.ZL_LOG_ERROR;
            return NativeMethods.ZL_LOG_OFF;
        }

        static TraceEventType EventType(int native)
        {
            switch (native)
            {
                case NativeMethods.ZL_LOG_ERROR: return TraceEventType.Error;
                case NativeMethods.ZL_LOG_WARN: return TraceEventType.Warning;
                case NativeMethods.ZL_LOG_INFO: return TraceEventType.Information;
                default: return TraceEventType.Verbose;
            }
        }

        static void Deliver(void* userData, int native, byte* target, uint targetLen, byte* message, uint messageLen)
        {
            try
            {
                Interop.EnterCallback();
                var args = new ZooLockLogEventArgs(EventType(native), Interop.Text(target, targetLen), Interop.Text(message, messageLen));
                TraceSource.TraceEvent(args.Level, 0, args.Message + " [" + args.Target + "]");
                var handlers = Logged;
                if (handlers != null) handlers(null, args);
            }
            catch (Exception)
            {
                // An exception must not unwind into native code; a failing handler only loses its own event.
            }
        }
    }
}
