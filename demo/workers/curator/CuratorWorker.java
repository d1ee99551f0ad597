// One worker of zoolock's main job, on Apache Curator (the Java peer).
//
// It speaks the demo's worker protocol (see demo/src/worker.rs): acquire an
// InterProcessMutex, write once to the resource with a fencing token while
// holding, release; print `session <id>`, `told <name> <state> <ns>` and
// `connected <name> <ns>` lines;
// without --count, run until `stop` on stdin, print `idle`, and keep the
// session open until stdin ends.
//
//   CuratorWorker --connect HOSTS --path P --resource HOST:PORT --name NAME
//                 [--count K] [--session-timeout SECS] [--hold-ms MS]
//
// The lock node is Curator's own: `P/_c_<uuid>-lock-<seq>`, with NAME as its
// data. The fencing token is the czxid of that node. Built and launched by
// scripts/lib/build-worker.sh curator demo (target/demo/curator/run).

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public final class CuratorWorker {
    private static final PrintStream OUT =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    static final class Args {
        String connect, path, resource, name;
        Integer count;
        double sessionTimeout = 10.0;
        long holdMs = 0;
    }

    /** InterProcessMutex whose node carries the worker's name (not the host's IP). */
    static final class NamedMutex extends InterProcessMutex {
        private final byte[] data;

        NamedMutex(CuratorFramework client, String path, byte[] data) {
            super(client, path);
            this.data = data;
        }

        @Override
        protected byte[] getLockNodeBytes() {
            return data;
        }

        /** The full path of the node this thread holds, or null. */
        String heldNode() {
            return getLockPath();
        }
    }

    private static void usage(String why) {
        System.err.println("curator worker: " + why);
        System.err.println("usage: CuratorWorker --connect HOSTS --path P --resource HOST:PORT --name NAME"
                + " [--count K] [--session-timeout SECS] [--hold-ms MS]");
        System.exit(2);
    }

    static Args parse(String[] argv) {
        Args a = new Args();
        for (int i = 0; i < argv.length; i += 2) {
            String flag = argv[i];
            if (i + 1 >= argv.length) usage("missing value for " + flag);
            String value = argv[i + 1];
            try {
                switch (flag) {
                    case "--connect": a.connect = value; break;
                    case "--path": a.path = value; break;
                    case "--resource": a.resource = value; break;
                    case "--name": a.name = value; break;
                    case "--count": a.count = Integer.parseInt(value); break;
                    case "--session-timeout": a.sessionTimeout = Double.parseDouble(value); break;
                    case "--hold-ms": a.holdMs = Long.parseLong(value); break;
                    default: usage("unknown flag " + flag);
                }
            } catch (NumberFormatException e) {
                usage("bad value for " + flag + ": " + value);
            }
        }
        if (a.connect == null || a.path == null || a.resource == null || a.name == null) {
            usage("--connect, --path, --resource and --name are required");
        }
        return a;
    }

    static synchronized void say(String line) {
        OUT.print(line);
        OUT.print('\n');
        OUT.flush();
    }

    static long nowNs() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static long lastSession = 0;

    /** Prints `session <id>` unless that id was the last one printed. */
    static synchronized void reportSession(CuratorFramework client) {
        long id;
        try {
            id = client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return;
        }
        if (id != 0 && id != lastSession) {
            lastSession = id;
            say("session " + id);
        }
    }

    public static void main(String[] argv) {
        Args args = parse(argv);
        try {
            System.exit(run(args));
        } catch (Throwable e) {
            System.err.println("worker " + args.name + ": " + e);
            System.exit(1);
        }
    }

    static int run(Args args) throws Exception {
        int sessionMs = (int) Math.round(args.sessionTimeout * 1000);
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args.connect)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(Math.min(sessionMs, 15_000))
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        // Latest state Curator reported: SUSPENDED/LOST tell a holder to keep off the resource.
        AtomicBoolean told = new AtomicBoolean(false);
        String me = args.name;
        client.getConnectionStateListenable().addListener((c, state) -> {
            switch (state) {
                case CONNECTED:
                case RECONNECTED:
                    told.set(false);
                    reportSession(c);
                    say("connected " + me + " " + nowNs());
                    break;
                case SUSPENDED:
                case LOST:
                    told.set(true);
                    say("told " + me + " " + state.name() + " " + nowNs());
                    break;
                default:
                    break;
            }
        });
        client.start();
        long connectWaitMs = Math.max(2L * sessionMs, 10_000L);
        if (!client.blockUntilConnected((int) connectWaitMs, TimeUnit.MILLISECONDS)) {
            System.err.println("worker " + me + ": cannot connect to ZooKeeper at " + args.connect);
            client.close();
            return 1;
        }
        reportSession(client);
        byte[] nameBytes = me.getBytes(StandardCharsets.UTF_8);
        NamedMutex lock = new NamedMutex(client, args.path, nameBytes);

        AtomicBoolean stop = new AtomicBoolean(false);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (args.count == null) {
            Thread watcher = new Thread(() -> {
                try {
                    String line;
                    while ((line = stdin.readLine()) != null) {
                        if (line.trim().equals("stop")) break;
                    }
                } catch (IOException e) {
                    // end of input
                }
                stop.set(true);
            }, "stdin");
            watcher.setDaemon(true);
            watcher.start();
        }

        Socket socket = new Socket();
        BufferedReader replies;
        OutputStream out;
        try {
            int colon = args.resource.lastIndexOf(':');
            if (colon < 0) throw new IOException("resource must be HOST:PORT");
            String host = args.resource.substring(0, colon);
            int port = Integer.parseInt(args.resource.substring(colon + 1));
            socket.connect(new InetSocketAddress(host, port), 10_000);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            replies = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        } catch (IOException | NumberFormatException e) {
            System.err.println("worker " + me + ": cannot reach the resource at " + args.resource + ": " + e);
            client.close();
            return 1;
        }

        int done = 0;
        while (!stop.get() && (args.count == null || done < args.count)) {
            long asked = System.nanoTime();
            boolean held;
            try {
                held = lock.acquire(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("worker " + me + ": acquire: " + e);
                if (client.getState() != org.apache.curator.framework.imps.CuratorFrameworkState.STARTED) break;
                continue;
            }
            if (!held) continue;
            long start = nowNs();
            long waitUs = (System.nanoTime() - asked) / 1_000;
            try {
                if (!told.get()) {
                    long token = fencingToken(client, lock, nameBytes);
                    if (token != Long.MIN_VALUE && !told.get()) {
                        String line = "write " + me + " curator " + token + " " + waitUs + " " + start + "\n";
                        out.write(line.getBytes(StandardCharsets.UTF_8));
                        out.flush();
                        if (replies.readLine() == null) throw new IOException("the resource closed the connection");
                        done++;
                        if (args.holdMs > 0) Thread.sleep(args.holdMs);
                    }
                }
            } catch (IOException e) {
                System.err.println("worker " + me + ": resource: " + e);
                releaseQuietly(lock, me);
                client.close();
                return 1;
            } catch (Exception e) {
                System.err.println("worker " + me + ": fencing token: " + e);
            }
            releaseQuietly(lock, me);
        }
        if (args.count == null) {
            ensureReleased(client, args.path, nameBytes, sessionMs);
            say("idle");
            // Hold the session open until the driver has counted the nodes left.
            try {
                while (stdin.readLine() != null) { }
            } catch (IOException e) {
                // end of input
            }
        }
        try { socket.close(); } catch (IOException e) { }
        client.close();
        return 0;
    }

    /** The czxid of our lock node, after checking the node carries our name; Long.MIN_VALUE if not. */
    static long fencingToken(CuratorFramework client, NamedMutex lock, byte[] name) throws Exception {
        String node = lock.heldNode();
        if (node == null) {
            // Fallback: when we hold, the first participant is ours.
            node = lock.getParticipantNodes().stream().findFirst().orElse(null);
        }
        if (node == null) {
            System.err.println("worker " + new String(name, StandardCharsets.UTF_8) + ": no lock node while holding");
            return Long.MIN_VALUE;
        }
        Stat stat = new Stat();
        byte[] data = client.getData().storingStatIn(stat).forPath(node);
        if (!java.util.Arrays.equals(data, name)) {
            System.err.println("worker " + new String(name, StandardCharsets.UTF_8) + ": lock node " + node
                    + " is not ours (data " + (data == null ? "null" : new String(data, StandardCharsets.UTF_8)) + ")");
            return Long.MIN_VALUE;
        }
        return stat.getCzxid();
    }

    /**
     * release() always forgets the hold locally; if its delete failed (connection
     * loss), Curator's guaranteed delete retries it in the background. Before
     * saying `idle`, wait (up to one session timeout) until no child of the lock
     * path carries our name, deleting any such leftover ourselves.
     */
    static void ensureReleased(CuratorFramework client, String path, byte[] name, long sessionMs) {
        String me = new String(name, StandardCharsets.UTF_8);
        long deadline = System.nanoTime() + sessionMs * 1_000_000L;
        while (true) {
            boolean clean = true;
            try {
                java.util.List<String> children;
                try {
                    children = client.getChildren().forPath(path);
                } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                    return;
                }
                for (String child : children) {
                    String node = org.apache.curator.utils.ZKPaths.makePath(path, child);
                    byte[] data;
                    try {
                        data = client.getData().forPath(node);
                    } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                        continue;
                    }
                    if (java.util.Arrays.equals(data, name)) {
                        clean = false;
                        System.err.println("worker " + me + ": deleting leftover lock node " + node);
                        try {
                            client.delete().forPath(node);
                        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                            // gone meanwhile
                        }
                    }
                }
            } catch (Exception e) {
                clean = false;
                System.err.println("worker " + me + ": checking for leftover nodes: " + e);
            }
            if (clean || System.nanoTime() > deadline) return;
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void releaseQuietly(InterProcessMutex lock, String me) {
        try {
            lock.release();
        } catch (Exception e) {
            System.err.println("worker " + me + ": release: " + e);
        }
    }
}
