/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hammer: keeps trapped clock syscalls going from PROCS processes x
 * THREADS threads for SECONDS, checking every result, while a test kills
 * and restarts timensd under it (tests/bats/systemd.bats).
 *
 *   hammer PROCS THREADS SECONDS EXPECTED_MONO_MINUS_BOOT_NS
 *
 * Each thread, in a loop: clock_gettime by raw syscall (MONOTONIC and
 * BOOTTIME: their difference must be EXPECTED within 50 ms, which holds
 * in the namespace only if both offsets are applied; minus the time
 * between the two reads), clock_settime with
 * tv_nsec = 1e9 (EINVAL from the emulation, EPERM or worse if the call
 * leaked to the kernel outside a user namespace — run it under
 * `unshare -U -r`), an absolute clock_nanosleep 1 ms ahead (0, and not
 * early), and now and then fork + exec /bin/true (exit status 0: an exec
 * that timensd's death caught mid-injection would die of SIGTRAP or
 * SIGSEGV). Prints one line per process and exits non-zero on any
 * failure or wrong value. The longest time one call took is the stall a
 * restart caused. With HAMMER_READS=1 in its environment, the clock reads
 * alone (a program whose every read is a trapped syscall: one traced by a
 * debugger, tests/bats/daemon-robust.bats); with HAMMER_READS=2, the
 * reads and the clock_settime (a call the supervisor's event loop
 * serves, not the thread that received it). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct counts {
        _Atomic uint64_t calls, failures, wrong, execs, stall_max_ns;
};

static int64_t deadline_sec;
static int64_t expected_ns;
static int reads_only; /* HAMMER_READS: 1 the reads, 2 and clock_settime */
static struct counts counts;

static int64_t ts_ns(const struct timespec *t) {
        return (int64_t) t->tv_sec * 1000000000 + t->tv_nsec;
}

static int raw_gettime(clockid_t c, struct timespec *t) {
        return (int) syscall(SYS_clock_gettime, c, t);
}

static void note_stall(int64_t ns) {
        uint64_t old = atomic_load(&counts.stall_max_ns);

        while ((uint64_t) ns > old && !atomic_compare_exchange_weak(&counts.stall_max_ns, &old, (uint64_t) ns))
                ;
}

static void failure(const char *what, int err) {
        /* Counted always, told the first times only. */
        if (atomic_fetch_add(&counts.failures, 1) < 20)
                fprintf(stderr, "hammer[%d]: %s: %s\n", (int) getpid(), what, strerror(err));
}

/* A wall-clock of the host that no offset moves: the thread's CPU time
 * does not help, so stalls are measured on CLOCK_MONOTONIC through the
 * vDSO (shifted by a constant: differences are exact). */
static int64_t now_ns(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return ts_ns(&t);
}

static void one_round(unsigned round) {
        struct timespec mono, boot, bad, wake;
        int64_t t0, t1, diff;
        int r;

        t0 = now_ns();
        if (raw_gettime(CLOCK_MONOTONIC, &mono) < 0 || raw_gettime(CLOCK_BOOTTIME, &boot) < 0)
                failure("clock_gettime", errno);
        else {
                /* The reads are not at one instant: what passed between
                 * them (a restart's stall) shows as skew, the rest is error. */
                int64_t between = now_ns() - t0;

                diff = ts_ns(&mono) - ts_ns(&boot) - expected_ns;
                if (diff > 5000000 || diff < -between - 5000000) {
                        atomic_fetch_add(&counts.wrong, 1);
                        fprintf(stderr, "hammer: monotonic - boottime off by %" PRId64 " ns (%" PRId64 " ns between)\n",
                                diff, between);
                }
        }
        if (reads_only != 1) {
                bad.tv_sec = time(NULL), bad.tv_nsec = 1000000000;
                r = (int) syscall(SYS_clock_settime, CLOCK_REALTIME, &bad);
                if (r == 0 || errno != EINVAL)
                        failure("clock_settime(tv_nsec=1e9) did not give EINVAL", r == 0 ? 0 : errno);
        }
        if (reads_only) {
                note_stall(now_ns() - t0);
                atomic_fetch_add(&counts.calls, reads_only == 1 ? 2 : 3);
                return;
        }
        clock_gettime(CLOCK_MONOTONIC, &wake);
        wake.tv_nsec += 1000000;
        if (wake.tv_nsec >= 1000000000)
                wake.tv_sec++, wake.tv_nsec -= 1000000000;
        r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
        if (r != 0)
                failure("clock_nanosleep(TIMER_ABSTIME)", r);
        else if (now_ns() < ts_ns(&wake)) {
                atomic_fetch_add(&counts.wrong, 1);
                fprintf(stderr, "hammer: woke early\n");
        }
        if (round % 8 == 0) {
                pid_t pid = fork();
                int status;

                if (pid == 0) {
                        execl("/bin/true", "true", (char *) NULL);
                        _exit(127);
                }
                if (pid < 0 || waitpid(pid, &status, 0) < 0)
                        failure("fork", errno);
                else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        atomic_fetch_add(&counts.failures, 1);
                        fprintf(stderr, "hammer: /bin/true ended with status 0x%x\n", (unsigned) status);
                } else
                        atomic_fetch_add(&counts.execs, 1);
        }
        t1 = now_ns();
        note_stall(t1 - t0);
        atomic_fetch_add(&counts.calls, 4);
}

static void *thread_main(void *arg) {
        (void) arg;
        for (unsigned round = 0; time(NULL) < deadline_sec; round++)
                one_round(round);
        return NULL;
}

static int run_process(unsigned threads) {
        pthread_t t[64];

        for (unsigned i = 0; i < threads; i++)
                if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
                        return 1;
        for (unsigned i = 0; i < threads; i++)
                pthread_join(t[i], NULL);
        printf("hammer: pid %d calls %" PRIu64 " execs %" PRIu64 " failures %" PRIu64 " wrong %" PRIu64
               " stall_max_us %" PRIu64 "\n",
               (int) getpid(), atomic_load(&counts.calls), atomic_load(&counts.execs), atomic_load(&counts.failures),
               atomic_load(&counts.wrong), atomic_load(&counts.stall_max_ns) / 1000);
        fflush(stdout);
        return atomic_load(&counts.failures) || atomic_load(&counts.wrong) ? 1 : 0;
}

int main(int argc, char *argv[]) {
        unsigned procs, threads;
        int status, rc = 0;

        if (argc != 5) {
                fprintf(stderr, "usage: hammer PROCS THREADS SECONDS EXPECTED_MONO_MINUS_BOOT_NS\n");
                return 2;
        }
        procs = (unsigned) atoi(argv[1]);
        threads = (unsigned) atoi(argv[2]);
        if (threads == 0 || threads > 64 || procs == 0 || procs > 64)
                return 2;
        deadline_sec = time(NULL) + atoi(argv[3]);
        expected_ns = strtoll(argv[4], NULL, 10);
        reads_only = getenv("HAMMER_READS") ? atoi(getenv("HAMMER_READS")) : 0;
        if (reads_only < 0 || reads_only > 2)
                return 2;
        for (unsigned i = 0; i < procs; i++)
                if (fork() == 0)
                        return run_process(threads);
        for (pid_t pid; (pid = wait(&status)) > 0;)
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        rc = 1;
                        if (WIFSIGNALED(status))
                                fprintf(stderr, "hammer: process %d killed by signal %d (%s)%s\n", (int) pid,
                                        WTERMSIG(status), strsignal(WTERMSIG(status)),
                                        WCOREDUMP(status) ? ", core dumped" : "");
                }
        return rc;
}
