// Prints the seconds since the epoch as the JVM reads them (clock_gettime
// through the vDSO, from a process with many threads).
public class Now {
    public static void main(String[] args) {
        System.out.println(System.currentTimeMillis() / 1000);
    }
}
