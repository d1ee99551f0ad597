import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * Curator's InterProcessMutex as a peer for core/tests/interop.rs:
 * `CuratorMutex CONNECT PATH` takes the lock (waiting up to a minute),
 * prints `held`, holds it until stdin closes, then releases it and prints
 * `released`.
 */
public class CuratorMutex {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 5000, new RetryOneTime(100));
        client.start();
        InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
        if (!mutex.acquire(60, TimeUnit.SECONDS)) {
            System.out.println("not acquired");
            System.exit(1);
        }
        System.out.println("held");
        System.out.flush();
        while (System.in.read() != -1) {
            // until stdin closes
        }
        mutex.release();
        System.out.println("released");
        System.out.flush();
        client.close();
    }
}
