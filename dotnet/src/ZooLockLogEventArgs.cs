using System;
using System.Diagnostics;

namespace ZooLock
{
    /// <summary>One log event of zoolock's core, as <see cref="ZooLockLog.Logged"/> reports it.</summary>
    public sealed class ZooLockLogEventArgs : EventArgs
    {
        internal ZooLockLogEventArgs(TraceEventType level, string target, string message)
        {
            Level = level;
            Target = target;
            Message = message;
        }

        /// <summary><see cref="TraceEventType.Error"/>, <c>Warning</c>, <c>Information</c> or <c>Verbose</c> (debug and trace).</summary>
        public TraceEventType Level { get; private set; }

        /// <summary>Where in zoolock it was logged: the Rust module, e.g. <c>zoolock::session</c>.</summary>
        public string Target { get; private set; }

        /// <summary>The message, with its fields (e.g. <c>node=/locks/a/…</c>).</summary>
        public string Message { get; private set; }
    }
}
