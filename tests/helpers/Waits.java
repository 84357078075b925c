// Waits: Java's timed waits — Thread.sleep, Object.wait, LockSupport.parkNanos
// and a ScheduledExecutorService — each for 300 ms, measured with
// System.nanoTime (CLOCK_MONOTONIC: under timens the namespace's, which
// runs at the host's rate). Exits 1 if one ended more than 50 ms away.
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

public class Waits {
    public static void main(String[] args) throws Exception {
        Object o = new Object();
        var ex = Executors.newSingleThreadScheduledExecutor();
        String[] names = {"sleep", "wait", "park", "scheduled"};
        int status = 0;
        for (int i = 0; i < names.length; i++) {
            long t = System.nanoTime();
            switch (i) {
                case 0 -> Thread.sleep(300);
                case 1 -> { synchronized (o) { o.wait(300); } }
                case 2 -> LockSupport.parkNanos(300_000_000L);
                default -> ex.schedule(() -> {}, 300, TimeUnit.MILLISECONDS).get();
            }
            double ms = (System.nanoTime() - t) / 1e6;
            System.out.printf("java %s elapsed=%.0f ms%n", names[i], ms);
            if (ms < 299 || ms > 350) status = 1;
        }
        ex.shutdown();
        System.exit(status);
    }
}
