// Measures how fast the JVM's clocks run against the host's: nanoTime
// (CLOCK_MONOTONIC) and currentTimeMillis (CLOCK_REALTIME), both through
// the vDSO. The host's clock is the mtime the kernel stamps on a file we
// write, polled for SEC seconds. Prints "wall=NS mono=NS host=NS".
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.TimeUnit;

public class Rate {
    static long hostNs(RandomAccessFile f, Path p) throws Exception {
        f.seek(0);
        f.write('x');
        FileTime t = Files.getLastModifiedTime(p);
        return t.to(TimeUnit.NANOSECONDS);
    }

    public static void main(String[] args) throws Exception {
        double sec = Double.parseDouble(args[0]);
        Path p = Files.createTempFile("rate", ".java");
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            long h0 = hostNs(f, p), m0 = System.nanoTime(), w0 = System.currentTimeMillis();
            while (hostNs(f, p) - h0 < (long) (sec * 1e9)) {
            }
            long m1 = System.nanoTime(), w1 = System.currentTimeMillis(), h1 = hostNs(f, p);
            System.out.printf("wall=%d mono=%d host=%d%n", (w1 - w0) * 1000000L, m1 - m0, h1 - h0);
        } finally {
            Files.delete(p);
        }
    }
}
