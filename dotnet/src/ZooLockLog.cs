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
    /// zoolock's core log events for .NET: a session connected, changed state
    /// or ended; a contender waits behind others; a hold was won (with its
    /// fencing token), suspended, lost (with the reason) or released; an
    /// acquire gave up at its timeout; a request is retried; a node could not
    /// be deleted. Each goes to <see cref="TraceSource"/> (named "ZooLock",
    /// configurable in the application's config file like any other), to
    /// <see cref="Logged"/>, and to every delegate given to <see cref="Forward"/>
    /// (one line hands them to any logger). Events come on zoolock's callback
    /// thread, in order.
    /// </summary>
    public static unsafe class ZooLockLog
    {
        static readonly NativeMethods.zl_set_log_callback_callback_delegate OnEvent = Deliver;
        static readonly object Gate = new object();
        static volatile SourceLevels level;
        /// <summary><see cref="Level"/> as a <c>ZL_LOG_*</c> code, read without the gate by the callback.</summary>
        static int traced;
        static Forwarding[] forwards = new Forwarding[0];
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
        /// The most verbose events <see cref="TraceSource"/> and <see cref="Logged"/>
        /// get: <see cref="SourceLevels.Warning"/> by default (errors: a node
        /// that could not be deleted; warnings: a hold lost, a session that
        /// ended); <c>Information</c> adds session state changes and suspended
        /// holds; <c>Verbose</c> every step (waits, holds with their tokens,
        /// timeouts, releases, retries); <c>Off</c> none, at no cost.
        /// </summary>
        /// <exception cref="ZooLockNativeLibraryException">Set, while zoolock's native library cannot be loaded.</exception>
        public static SourceLevels Level
        {
            get { return level; }
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

        /// <summary>
        /// Hands every event up to <paramref name="minimum"/> to <paramref name="log"/>
        /// with its level, its category (the Rust module that logged it, e.g.
        /// <c>zoolock::holder</c>) and its message, until the returned object is
        /// disposed. <see cref="ZooLockLogLevel"/> is numbered as
        /// <c>Microsoft.Extensions.Logging.LogLevel</c>, so an <c>ILogger</c> takes
        /// it by a cast:
        /// <code>
        /// ZooLockLog.Forward((level, category, message) =>
        ///     loggerFactory.CreateLogger(category).Log(
        ///         (LogLevel)level, 0, message, null, (text, error) => text),
        ///     ZooLockLogLevel.Debug);
        /// </code>
        /// The delegate runs on zoolock's callback thread: it must return quickly
        /// and leave ZooLockLog's settings alone (a change waits for the callback
        /// to return); what it throws is dropped.
        /// </summary>
        /// <param name="log">Called with each event: level, category, message.</param>
        /// <param name="minimum">The least severe events it gets (<see cref="ZooLockLogLevel.Information"/> by default).</param>
        /// <exception cref="ZooLockNativeLibraryException">zoolock's native library cannot be loaded.</exception>
        public static IDisposable Forward(Action<ZooLockLogLevel, string, string> log, ZooLockLogLevel minimum = ZooLockLogLevel.Information)
        {
            if (log == null) throw new ArgumentNullException("log");
            if (minimum < ZooLockLogLevel.Trace || minimum > ZooLockLogLevel.Error)
                throw new ArgumentOutOfRangeException("minimum", minimum, "a ZooLockLogLevel from Trace to Error");
            NativeLoader.EnsureLoaded();
            var forwarding = new Forwarding(log, minimum);
            lock (Gate)
            {
                var more = new Forwarding[forwards.Length + 1];
                forwards.CopyTo(more, 0);
                more[forwards.Length] = forwarding;
                forwards = more;
                Apply();
            }
            return forwarding;
        }

        /// <summary>Registers the callback at the current level, once the native library is loaded: every session calls this first.</summary>
        internal static void Install()
        {
            lock (Gate)
            {
                if (!installed) Apply();
            }
        }

        /// <summary>
        /// Asks the core for the most verbose events any sink wants (under <see cref="Gate"/>);
        /// never inlined into a caller that loads the library first.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Apply()
        {
            Volatile.Write(ref traced, NativeLevel(level));
            int native = traced;
            foreach (var forwarding in forwards) native = Math.Max(native, NativeLevel(forwarding.Minimum));
            Interop.Check(NativeMethods.zl_set_log_callback(native, OnEvent, null));
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

        static int NativeLevel(ZooLockLogLevel minimum)
        {
            switch (minimum)
            {
                case ZooLockLogLevel.Trace: return NativeMethods.ZL_LOG_TRACE;
                case ZooLockLogLevel.Debug: return NativeMethods.ZL_LOG_DEBUG;
                case ZooLockLogLevel.Information: return NativeMethods.ZL_LOG_INFO;
                case ZooLockLogLevel.Warning: return NativeMethods.ZL_LOG_WARN;
                default: return NativeMethods.ZL_LOG_ERROR;
            }
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

        static ZooLockLogLevel LogLevel(int native)
        {
            switch (native)
            {
                case NativeMethods.ZL_LOG_ERROR: return ZooLockLogLevel.Error;
                case NativeMethods.ZL_LOG_WARN: return ZooLockLogLevel.Warning;
                case NativeMethods.ZL_LOG_INFO: return ZooLockLogLevel.Information;
                case NativeMethods.ZL_LOG_DEBUG: return ZooLockLogLevel.Debug;
                default: return ZooLockLogLevel.Trace;
            }
        }

        static void Deliver(void* userData, int native, byte* target, uint targetLen, byte* message, uint messageLen)
        {
            try
            {
                Interop.EnterCallback();
                string category = Interop.Text(target, targetLen), text = Interop.Text(message, messageLen);
                // Not Level: a setter holds the gate while it waits for this callback to return.
                if (Volatile.Read(ref traced) >= native)
                {
                    var args = new ZooLockLogEventArgs(EventType(native), category, text);
                    TraceSource.TraceEvent(args.Level, 0, args.Message + " [" + args.Target + "]");
                    var handlers = Logged;
                    if (handlers != null) handlers(null, args);
                }
                var levelOf = LogLevel(native);
                foreach (var forwarding in Volatile.Read(ref forwards)) forwarding.Deliver(levelOf, category, text);
            }
            catch (Exception)
            {
                // An exception must not unwind into native code; a failing handler only loses its own event.
            }
        }

        static void Remove(Forwarding forwarding)
        {
            lock (Gate)
            {
                forwards = Array.FindAll(forwards, f => f != forwarding);
                Apply();
            }
        }

        /// <summary>One <see cref="Forward"/>: its delegate and level, until disposed.</summary>
        sealed class Forwarding : IDisposable
        {
            readonly Action<ZooLockLogLevel, string, string> log;
            internal readonly ZooLockLogLevel Minimum;

            internal Forwarding(Action<ZooLockLogLevel, string, string> log, ZooLockLogLevel minimum)
            {
                this.log = log;
                Minimum = minimum;
            }

            internal void Deliver(ZooLockLogLevel level, string category, string message)
            {
                if (level < Minimum) return;
                try { log(level, category, message); }
                catch (Exception) { /* the logger's failure loses only this event */ }
            }

            public void Dispose() { Remove(this); }
        }
    }

    /// <summary>
    /// A log event's level for <see cref="ZooLockLog.Forward"/>, numbered as
    /// <c>Microsoft.Extensions.Logging.LogLevel</c> (cast one to the other).
    /// </summary>
    public enum ZooLockLogLevel
    {
        /// <summary>The finest detail.</summary>
        Trace = 0,
        /// <summary>Every step: waits, holds and their tokens, timeouts, releases, retries.</summary>
        Debug = 1,
        /// <summary>Sessions connected and their state changes; holds suspended and restored.</summary>
        Information = 2,
        /// <summary>A hold lost (with the reason), a session that ended, a persistent hold that outlived its session.</summary>
        Warning = 3,
        /// <summary>What zoolock could not recover from by itself: a node it could not delete.</summary>
        Error = 4,
    }
}
