using System;

namespace ZooLock
{
    /// <summary>
    /// One holder or waiter on a lock or semaphore path, as
    /// <see cref="ZooKeeperSession.Inspect"/> lists them (the core's <c>Participant</c>).
    /// </summary>
    public sealed class ZooKeeperParticipant
    {
        internal ZooKeeperParticipant(string node, ZooKeeperParticipantKind kind, bool holds, string identifier, long sessionId,
            ZooKeeperNamingScheme scheme, DateTimeOffset created, long fencingToken)
        {
            Node = node;
            Kind = kind;
            Holds = holds;
            Identifier = identifier;
            SessionId = sessionId;
            Scheme = scheme;
            Created = created;
            FencingToken = fencingToken;
        }

        /// <summary>The node's full path.</summary>
        public string Node { get; private set; }

        /// <summary>What it holds or waits for.</summary>
        public ZooKeeperParticipantKind Kind { get; private set; }

        /// <summary>True for a holder, false for a waiter.</summary>
        public bool Holds { get; private set; }

        /// <summary>The node's data as text: kazoo's and zoolock's identifier (Curator's default is the client's IP).</summary>
        public string Identifier { get; private set; }

        /// <summary>The ZooKeeper session owning the node (its ephemeralOwner; 0 for a persistent node).</summary>
        public long SessionId { get; private set; }

        /// <summary>Whose naming the node follows.</summary>
        public ZooKeeperNamingScheme Scheme { get; private set; }

        /// <summary>When the node was created, by the server's clock (its ctime), in UTC.</summary>
        public DateTimeOffset Created { get; private set; }

        /// <summary>The zxid that created the node (its czxid): the holder's fencing token.</summary>
        public long FencingToken { get; private set; }

        /// <summary>One line: state, kind, node, identifier (quoted, so an empty one shows), session, token.</summary>
        public override string ToString()
        {
            return string.Format("{0} {1} {2} identifier=\"{3}\" session=0x{4:x} token={5}",
                Holds ? "holds" : "waits", Kind, Node, Identifier.Replace("\\", "\\\\").Replace("\"", "\\\""), SessionId, FencingToken);
        }
    }
}
