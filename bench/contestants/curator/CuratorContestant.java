// The bench's Curator contestant: Apache Curator's InterProcessMutex.
//
// It speaks the protocol of bench/contestants/PROTOCOL.md:
//
//   CuratorContestant --connect HOSTS --path /bench/<run>/<scenario> --scenario a|b|c|scale
//                     [--sessions N] [--locks N] [--waiters N] [--seconds S] [--warmup S]
//
// connects, warms up, prints `ready`, waits for `go` on stdin, runs for S
// seconds and prints one JSON line; logs go to stderr.
//
// - a: one CuratorFramework, one InterProcessMutex, acquire -> release in a
//   loop; samples = cycle times.
// - b: --sessions N CuratorFrameworks, one thread each, on one lock;
//   samples = waits (acquire call to holding).
// - c: one CuratorFramework, --locks N mutexes `<path>/lock-<i>`, one thread
//   each (Curator's mutex is blocking and owned by a thread); samples =
//   cycle times.
// - scale: unsupported (see UNSUPPORTED_SCALE).
//
// Warm-up: --warmup seconds (default 2) of the scenario's own cycles before
// `ready`, so that the window measures JIT-compiled code, not the
// interpreter. Sessions of 10 s and ExponentialBackoffRetry(100 ms, 10), as
// in the demo's Curator worker. Built and launched by
// scripts/lib/build-worker.sh curator bench (target/bench/curator/run).

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorContestant {
    private static final PrintStream OUT =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    static final int SESSION_MS = 10_000;
    /** No acquire should take this long: a stuck run fails. */
    static final long STUCK_AFTER_MS = 60_000;
    static final String UNSUPPORTED_SCALE =
            "Curator's InterProcessMutex has no asynchronous acquire: 10,000 waiters would be 10,000 threads,"
            + " each listing every child of the lock path when it queues and when woken";

    static final class Args {
        String connect, path, scenario;
        int sessions = 1, locks = 64, waiters = 10_000;
        double seconds = 3.0, warmup = 2.0;
    }

    /** A growable long[]: one store per op, no boxing. */
    static final class Samples {
        long[] values = new long[1 << 14];
        int size;

        void add(long value) {
            if (size == values.length) values = java.util.Arrays.copyOf(values, size * 2);
            values[size++] = value;
        }
    }

    interface Loop {
        /** Runs acquire -> release until `end` (System.nanoTime), recording into `samples`; returns when the last op ended. */
        long run(InterProcessMutex lock, long end, Samples samples) throws Exception;
    }

    /** a, c: each cycle's time, acquire call to release return. */
    static long cycles(InterProcessMutex lock, long end, Samples samples) throws Exception {
        long t = System.nanoTime();
        while (t - end < 0) {
            lock.acquire();
            lock.release();
            long t2 = System.nanoTime();
            samples.add(t2 - t);
            t = t2;
        }
        return t;
    }

    /** b: each acquisition's wait, acquire call to holding. */
    static long waits(InterProcessMutex lock, long end, Samples samples) throws Exception {
        while (true) {
            long t = System.nanoTime();
            if (t - end >= 0) return t;
            lock.acquire();
            samples.add(System.nanoTime() - t);
            lock.release();
        }
    }

    static void warmUp(InterProcessMutex lock, Loop loop, double seconds) throws Exception {
        lock.acquire();
        lock.release();
        loop.run(lock, System.nanoTime() + (long) (seconds * 1e9), new Samples());
    }

    static void log(String message) {
        System.err.println("curator contestant: " + message);
    }

    static void say(String line) {
        OUT.print(line);
        OUT.print('\n');
        OUT.flush();
    }

    static void usage(String why) {
        log(why);
        System.err.println("usage: CuratorContestant --connect HOSTS --path P --scenario a|b|c|scale"
                + " [--sessions N] [--locks N] [--waiters N] [--seconds S] [--warmup S]");
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
                    case "--scenario": a.scenario = value; break;
                    case "--sessions": a.sessions = Integer.parseInt(value); break;
                    case "--locks": a.locks = Integer.parseInt(value); break;
                    case "--waiters": a.waiters = Integer.parseInt(value); break;
                    case "--seconds": a.seconds = Double.parseDouble(value); break;
                    case "--warmup": a.warmup = Double.parseDouble(value); break;
                    default: usage("unknown flag " + flag);
                }
            } catch (NumberFormatException e) {
                usage("bad value for " + flag + ": " + value);
            }
        }
        if (a.connect == null || a.path == null || a.scenario == null) {
            usage("--connect, --path and --scenario are required");
        }
        if (!List.of("a", "b", "c", "scale").contains(a.scenario)) usage("unknown scenario " + a.scenario);
        if (a.sessions < 1 || a.locks < 1 || a.waiters < 1 || a.seconds <= 0 || a.warmup < 0) {
            usage("--sessions, --locks, --waiters and --seconds must be positive");
        }
        return a;
    }

    static CuratorFramework connect(String hosts) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(SESSION_MS)
                .connectionTimeoutMs(SESSION_MS)
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        client.start();
        if (!client.blockUntilConnected(2 * SESSION_MS, TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IOException("cannot connect to ZooKeeper at " + hosts);
        }
        return client;
    }

    static void waitGo() throws IOException {
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.trim().equals("go")) return;
        }
        throw new IOException("stdin ended before `go`");
    }

    static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    static String report(List<Samples> all, long elapsedNs, long cpuNs) {
        int ops = 0;
        for (Samples s : all) ops += s.size;
        if (ops > 0 && cpuNs >= 0) log(String.format("client CPU in the window: %d µs/op", cpuNs / 1000 / ops));
        StringBuilder json = new StringBuilder(32 + ops * 6);
        json.append("{\"ops\":").append(ops).append(",\"seconds\":").append(elapsedNs / 1e9).append(",\"samples_us\":[");
        boolean first = true;
        for (Samples s : all) {
            for (int i = 0; i < s.size; i++) {
                if (!first) json.append(',');
                first = false;
                json.append(s.values[i] / 1000);
            }
        }
        return json.append("]}").toString();
    }

    static String scenarioA(Args args) throws Exception {
        CuratorFramework client = connect(args.connect);
        try {
            InterProcessMutex lock = new InterProcessMutex(client, args.path);
            warmUp(lock, CuratorContestant::cycles, args.warmup);
            say("ready");
            waitGo();
            Samples samples = new Samples();
            long cpu = cpuNanos();
            long start = System.nanoTime();
            long last = cycles(lock, start + (long) (args.seconds * 1e9), samples);
            cpu = cpuNanos() - cpu;
            return report(List.of(samples), last - start, cpu);
        } finally {
            client.close();
        }
    }

    /** One thread per lock: warm up, `ready`, `go`, the window. */
    static String runThreads(List<InterProcessMutex> locks, Loop loop, Args args) throws Exception {
        int n = locks.size();
        CyclicBarrier warmed = new CyclicBarrier(n + 1);
        CountDownLatch go = new CountDownLatch(1);
        long[] window = new long[1];
        Samples[] samples = new Samples[n];
        long[] lasts = new long[n];
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int me = i;
            Thread thread = new Thread(() -> {
                InterProcessMutex lock = locks.get(me);
                try {
                    warmUp(lock, loop, args.warmup);
                    warmed.await();
                    go.await();
                    Samples mine = new Samples();
                    lasts[me] = loop.run(lock, window[0], mine);
                    samples[me] = mine;
                } catch (Throwable e) {
                    errors.add("thread " + me + ": " + e);
                    warmed.reset(); // breaks the barrier for everyone waiting on it
                }
            }, "lock-" + i);
            thread.setDaemon(true);
            threads.add(thread);
        }
        for (Thread thread : threads) thread.start();
        try {
            warmed.await(STUCK_AFTER_MS + (long) (args.warmup * 1000), TimeUnit.MILLISECONDS);
        } catch (BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("warm-up failed: " + (errors.isEmpty() ? "stuck" : String.join("; ", errors)));
        }
        say("ready");
        waitGo();
        long cpu = cpuNanos();
        long start = System.nanoTime();
        window[0] = start + (long) (args.seconds * 1e9);
        go.countDown(); // publishes window[0] to the threads
        long deadline = System.nanoTime() + (long) (args.seconds * 1e9) + STUCK_AFTER_MS * 1_000_000L;
        for (Thread thread : threads) {
            thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        cpu = cpuNanos() - cpu;
        if (!errors.isEmpty()) throw new IllegalStateException(String.join("; ", errors));
        for (Thread thread : threads) {
            if (thread.isAlive()) throw new IllegalStateException("a thread is stuck " + STUCK_AFTER_MS / 1000 + " s after the window");
        }
        long last = start;
        int min = Integer.MAX_VALUE, max = 0;
        for (int i = 0; i < n; i++) {
            last = Math.max(last, lasts[i]);
            min = Math.min(min, samples[i].size);
            max = Math.max(max, samples[i].size);
        }
        if (n > 1) log("ops per thread: min " + min + ", max " + max);
        return report(List.of(samples), last - start, cpu);
    }

    static String scenarioB(Args args) throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            List<InterProcessMutex> locks = new ArrayList<>();
            for (int i = 0; i < args.sessions; i++) {
                CuratorFramework client = connect(args.connect);
                clients.add(client);
                locks.add(new InterProcessMutex(client, args.path));
            }
            return runThreads(locks, CuratorContestant::waits, args);
        } finally {
            for (CuratorFramework client : clients) client.close();
        }
    }

    static String scenarioC(Args args) throws Exception {
        CuratorFramework client = connect(args.connect);
        try {
            List<InterProcessMutex> locks = new ArrayList<>();
            for (int i = 0; i < args.locks; i++) locks.add(new InterProcessMutex(client, args.path + "/lock-" + i));
            return runThreads(locks, CuratorContestant::cycles, args);
        } finally {
            client.close();
        }
    }

    public static void main(String[] argv) {
        Args args = parse(argv);
        if (args.scenario.equals("scale")) {
            say("{\"unsupported\":\"" + UNSUPPORTED_SCALE + "\"}");
            System.exit(0);
        }
        String result;
        try {
            switch (args.scenario) {
                case "a": result = scenarioA(args); break;
                case "b": result = scenarioB(args); break;
                default: result = scenarioC(args); break;
            }
        } catch (Throwable e) {
            log("scenario " + args.scenario + ": " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        say(result);
        System.exit(0);
    }
}
