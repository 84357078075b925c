/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Execs at their hardest instants, for tests/bats/exec.bats:
 *
 *   exec-kill kill N PROG [ARG...]      N children exec PROG; each is sent
 *                                       SIGKILL at a different instant
 *                                       around its exec (before it, during
 *                                       it, right after it); every one must
 *                                       be reaped by its parent (a child
 *                                       left traced by a supervisor is a
 *                                       zombie nobody can reap: a hang)
 *   exec-kill stopcont N PROG [ARG...]  the same with SIGSTOP then SIGCONT:
 *                                       each child must exit 0
 *   exec-kill untraced N PROG [ARG...]  N children exec PROG, each waited
 *                                       for with WUNTRACED: none may be
 *                                       seen stopped, each must exit 0
 *   exec-kill contblocked N             N children exec `exec-kill pending`
 *                                       with SIGCONT blocked: each must exit 0
 *   exec-kill pending                   exits 13 if a signal is pending
 *                                       (a hold's SIGCONT or SIGSTOP left)
 *   exec-kill fullfds PROG [ARG...]     execs PROG with every fd of a small
 *                                       table (RLIMIT_NOFILE 64) open, each
 *                                       close-on-exec (full at the exec only)
 *   exec-kill loop SECONDS MIN_SEC      fork + exec of `exec-kill probe
 *                                       MIN_SEC` for SECONDS (or up to a
 *                                       SIGUSR1), then one line:
 *                                       "execs N host_vdso H wrong W
 *                                       syscall_path S failed F"
 *   exec-kill race N MIN_SEC            N children each exec `exec-kill
 *                                       probe MIN_SEC` through a path that
 *                                       a second process flips between this
 *                                       program's and a missing one, over
 *                                       and over (a supervisor that reads the
 *                                       path may see the other one), then
 *                                       one line: "execs N host_vdso H
 *                                       wrong W syscall_path S failed F"
 *   exec-kill poison N MIN_SEC K        the race mode with K connections
 *                                       to $TIMENS_SOCKET and a long argv
 *                                       (the kernel copies it for tens of
 *                                       milliseconds) before each exec
 *   exec-kill fdexec N MIN_SEC          N children each exec `exec-kill
 *                                       probe MIN_SEC` as /proc/self/fd/FD
 *                                       from a second thread while the
 *                                       leader loops arch_prctl(ARCH_SET_FS)
 *                                       (the call that catches a program
 *                                       started without our image), then
 *                                       the race mode's line
 *   exec-kill failing SECONDS THREADS [PATH]
 *                                       THREADS threads (the main one among
 *                                       them) exec PATH (default: a path that
 *                                       does not exist) over and over, for
 *                                       SECONDS; then one line: "failed N
 *                                       errors E fds A B" (every exec must
 *                                       fail with the error of the first, the
 *                                       fd count before and after must be
 *                                       equal); exits 0 if so
 *   exec-kill probe MIN_SEC [MS]        (after MS ms) exits 10 if this program runs with
 *                                       the kernel's vDSO (its stack's
 *                                       AT_SYSINFO_EHDR is the kernel's, its
 *                                       clock_gettime not a syscall stub), 11
 *                                       if its first monotonic read (libc,
 *                                       the vDSO when there is one) is below
 *                                       MIN_SEC, 12 if it has no vDSO or the
 *                                       kernel's as syscall stubs (the
 *                                       syscall path), else 0
 *
 * A hang fails after 120 s (alarm). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc-util.h"
#include "vdso-elf.h"
#include "vdso-stub.h"

static void on_alarm(int sig) {
        static const char msg[] = "exec-kill: hang: a child was never reaped\n";

        (void) sig;
        (void) !write(2, msg, sizeof(msg) - 1);
        _exit(1);
}

static unsigned long kernel_vdso(void) {
        unsigned long kv[2];
        FILE *f = fopen("/proc/self/auxv", "re");
        unsigned long r = 0;

        while (f && fread(kv, sizeof(kv), 1, f) == 1 && kv[0] != AT_NULL)
                if (kv[0] == AT_SYSINFO_EHDR)
                        r = kv[1];
        if (f)
                fclose(f);
        return r;
}

/* Whether the kernel's vDSO at base had its clock_gettime turned into a
 * syscall stub (supervisor-first-call.c): the syscall path, not the host's
 * clock. */
static bool stubbed(unsigned long base) {
        uint8_t want[TNS_VDSO_STUB_SIZE];
        struct tns_vdso_elf e;
        uint64_t at, size;

        if (tns_proc_special_mapping(getpid(), "[vdso]", 0, &at, &size) < 0 || at != base)
                return false;
        size -= at;
        if (tns_vdso_elf_parse((const void *) base, size, &e) < 0 ||
            tns_vdso_elf_lookup(&e, "__vdso_clock_gettime", NULL, &at) < 0 ||
            tns_vdso_stub_bytes(TNS_VDSO_CLOCK_GETTIME, want) < 0)
                return false;
        return memcmp((const void *) (base + at), want, sizeof(want)) == 0;
}

static int probe(long min_sec) {
        /* First: the read a program makes before anything else. */
        struct timespec ts;
        unsigned long mine;
        bool stub = false;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        mine = getauxval(AT_SYSINFO_EHDR);
        if (mine && mine == kernel_vdso()) {
                stub = stubbed(mine);
                if (!stub)
                        return 10;
        }
        if (ts.tv_sec < min_sec)
                return 11;
        return mine && !stub ? 0 : 12;
}

static void spin_us(long us) {
        struct timespec a, b;

        clock_gettime(CLOCK_MONOTONIC, &a);
        do
                clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* One child: fork, exec, and sig at instant i (0: as soon as the exec is
 * seen, through the close-on-exec pipe; then 0..199 us after the fork). */
static int one(int i, int sig, char **argv) {
        int p[2], status;
        char c;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                close(p[0]);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(p[1]);
        if (i % 2 == 0)
                (void) !read(p[0], &c, 1); /* EOF: the exec happened */
        else
                spin_us((i / 2) % 200);
        close(p[0]);
        kill(pid, sig);
        if (sig == SIGSTOP) {
                spin_us(i % 50);
                kill(pid, SIGCONT);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -1;
        if (sig == SIGKILL)
                return WIFSIGNALED(status) || WIFEXITED(status) ? 0 : -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "exec-kill: child %d: status 0x%x\n", i, status);
                return -1;
        }
        return 0;
}

static int untraced(int n, char **argv) {
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        execvp(argv[0], argv);
                        _exit(127);
                }
                while (waitpid(pid, &status, WUNTRACED) < 0)
                        if (errno != EINTR)
                                return 1;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        fprintf(stderr, "exec-kill: child %d: status 0x%x%s\n", i, status,
                                WIFSTOPPED(status) ? " (stopped)" : "");
                        kill(pid, SIGKILL);
                        return 1;
                }
        }
        printf("exec-kill: %d children reaped\n", n);
        return 0;
}

static volatile sig_atomic_t stop_loop;

static void on_usr1(int sig) {
        (void) sig;
        stop_loop = 1;
}

/* What the probes of the loop, race, poison and fdexec modes told: their
 * exit statuses (probe()), counted; anything else is a failure, named on
 * stderr. */
struct tally {
        unsigned long n, host, wrong, sys, failed;
};

static void tally_count(struct tally *t, int status) {
        t->n++;
        if (!WIFEXITED(status) || WEXITSTATUS(status) > 12 || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) < 10)) {
                fprintf(stderr, "exec-kill: exec %lu: status 0x%x\n", t->n, status);
                t->failed++;
        } else if (WEXITSTATUS(status) == 10)
                t->host++;
        else if (WEXITSTATUS(status) == 11)
                t->wrong++;
        else if (WEXITSTATUS(status) == 12)
                t->sys++;
}

static void tally_print(const struct tally *t) {
        printf("execs %lu host_vdso %lu wrong %lu syscall_path %lu failed %lu\n", t->n, t->host, t->wrong, t->sys,
               t->failed);
}

static int loop(char *self, int seconds, const char *min) {
        struct tally t = {};
        time_t end = time(NULL) + seconds;

        signal(SIGUSR1, on_usr1);
        alarm((unsigned) seconds + 120);
        while (time(NULL) < end && !stop_loop) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        sigset_t usr1;

                        /* The loop's stop signal, sent by name (pkill), is
                         * not for its children. */
                        sigemptyset(&usr1);
                        sigaddset(&usr1, SIGUSR1);
                        sigprocmask(SIG_BLOCK, &usr1, NULL);
                        execl(self, self, "probe", min, (char *) NULL);
                        _exit(127);
                }
                while (waitpid(pid, &status, 0) < 0)
                        if (errno != EINTR)
                                return 1;
                tally_count(&t, status);
        }
        tally_print(&t);
        return 0;
}

/* The "race" mode: the path of an exec flipped by another process (not
 * a thread: a caller with one thread is the one whose exec of a missing
 * file is let through at once), in memory both share. */
struct race {
        char path[PATH_MAX];
        size_t last; /* the byte flipped */
        char ok; /* its value in this program's path */
};

/* Connections to timensd's control socket ($TIMENS_SOCKET) that the
 * poison mode opens before its exec: timensd asks who each peer is (its
 * image, read from its maps), some while the exec copies its arguments. */
static void connect_control(int k) {
        const char *path = getenv("TIMENS_SOCKET");
        struct sockaddr_un sa = {.sun_family = AF_UNIX};

        if (!path || strlen(path) >= sizeof(sa.sun_path))
                return;
        strcpy(sa.sun_path, path);
        for (int i = 0; i < k; i++) {
                int fd = socket(AF_UNIX, SOCK_STREAM, 0); /* kept across the exec */

                if (fd >= 0)
                        (void) connect(fd, (struct sockaddr *) &sa, sizeof(sa));
        }
}

/* One child: execs until the exec succeeds (the probe's status), 126 if
 * none did in many tries. Its flipper is in its process group. With
 * `connections`, a long argv (its copy by the kernel takes tens of
 * milliseconds) and that many connections to timensd first. */
static int race_one(const char *self, const char *min, int connections) {
        struct race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        enum { LONG_ARGV = 500000 };
        static char *args[LONG_ARGV + 4];
        struct rlimit stack = {64 << 20, 64 << 20};
        pid_t flipper;

        if (r == MAP_FAILED || setpgid(0, 0) < 0)
                return 125;
        snprintf(r->path, sizeof(r->path), "%s", self);
        r->last = strlen(r->path) - 1;
        r->ok = r->path[r->last];
        flipper = fork();
        if (flipper < 0)
                return 125;
        if (flipper == 0) {
                volatile char *c = &r->path[r->last];

                for (;;)
                        *c = *c == r->ok ? '\x01' : r->ok;
        }
        args[0] = (char *) "exec-kill";
        args[1] = (char *) "probe";
        args[2] = (char *) min;
        if (connections > 0) {
                /* The kernel's limit on arguments is a quarter of the
                 * stack's (at most 6 MiB). */
                (void) setrlimit(RLIMIT_STACK, &stack);
                for (int i = 3; i < LONG_ARGV + 3; i++)
                        args[i] = (char *) "";
                connect_control(connections);
        }
        for (int i = 0; i < 100000; i++)
                execv(r->path, args);
        return 126;
}

/* The "fdexec" mode: a thread execs this program through /proc/self/fd
 * (a path that means another file to whoever else resolves it) while the
 * leader sets its thread pointer, over and over. */
struct fdexec {
        char path[64];
        const char *min;
};

static void *fdexec_thread(void *arg) {
        struct fdexec *f = arg;
        char probe_arg[] = "probe";
        char *args[] = {(char *) "exec-kill", probe_arg, (char *) f->min, NULL};

        execv(f->path, args);
        _exit(124);
}

static int fdexec_one(const char *self, const char *min) {
        static struct fdexec f;
        unsigned long fs;
        pthread_t t;
        /* A number timensd has no fd of: it would find nothing there. */
        int fd = dup2(open(self, O_RDONLY), 900);

        if (fd < 0 || syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) < 0)
                return 125;
        snprintf(f.path, sizeof(f.path), "/proc/self/fd/%d", fd);
        f.min = min;
        if (pthread_create(&t, NULL, fdexec_thread, &f) != 0)
                return 125;
        for (;;)
                (void) syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
}

static int race(const char *self, int n, const char *min, bool fd, int connections) {
        struct tally t = {};

        /* The flippers come to us when their child is gone: reaped here. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);

        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                int status;

                if (pid < 0)
                        return 1;
                if (pid == 0)
                        _exit(fd ? fdexec_one(self, min) : race_one(self, min, connections));
                while (waitpid(pid, &status, 0) < 0)
                        if (errno != EINTR)
                                return 1;
                /* Its flipper, in the group the child made, ours now. */
                (void) kill(-pid, SIGKILL);
                while (waitpid(-pid, NULL, 0) > 0 || errno == EINTR)
                        ;
                tally_count(&t, status);
        }
        tally_print(&t);
        return 0;
}

/* The "failing" mode: execs that fail, as a PATH lookup makes them. */
struct failing {
        double end;
        const char *path;
        int err; /* the first exec's errno: every other must be the same */
        long failed, errors;
};

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void *fail_execs(void *arg) {
        struct failing *f = arg;
        char *const args[] = {(char *) "missing", NULL};

        while (now_s() < f->end) {
                /* -1 and its errno: an execve that "returned 0" (a close
                 * of ours cut by a kill, once) is an error. */
                if (execv(f->path, args) == -1 && errno == f->err)
                        __atomic_add_fetch(&f->failed, 1, __ATOMIC_RELAXED);
                else
                        __atomic_add_fetch(&f->errors, 1, __ATOMIC_RELAXED);
        }
        return NULL;
}

static int count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        int n = 0;

        while (d && readdir(d))
                n++;
        if (d)
                closedir(d);
        return n;
}

static int failing(int seconds, int threads, const char *path) {
        char *const args[] = {(char *) "missing", NULL};
        struct failing f = {.end = now_s() + seconds, .path = path};
        pthread_t tids[16];
        int before = count_fds(), after, n = 0;

        execv(path, args);
        f.err = errno;

        for (int i = 1; i < threads && n < 16; i++)
                if (pthread_create(&tids[n], NULL, fail_execs, &f) == 0)
                        n++;
        fail_execs(&f);
        for (int i = 0; i < n; i++)
                pthread_join(tids[i], NULL);
        after = count_fds();
        printf("failed %ld errors %ld fds %d %d\n", f.failed, f.errors, before, after);
        return f.errors == 0 && f.failed > 0 && before == after ? 0 : 1;
}

int main(int argc, char *argv[]) {
        struct rlimit rl = {64, 64};
        int n;

        if (argc == 2 && strcmp(argv[1], "pending") == 0) {
                sigset_t set;

                sigpending(&set);
                return sigismember(&set, SIGCONT) || sigismember(&set, SIGSTOP) ? 13 : 0;
        }
        if (argc == 3 && strcmp(argv[1], "contblocked") == 0) {
                char pend[] = "pending";
                char *pending[] = {argv[0], pend, NULL};
                sigset_t cont;

                sigemptyset(&cont);
                sigaddset(&cont, SIGCONT);
                sigprocmask(SIG_BLOCK, &cont, NULL);
                return untraced(atoi(argv[2]), pending);
        }
        if (argc >= 3 && strcmp(argv[1], "probe") == 0) {
                int r = probe(atol(argv[2]));

                /* Time for a supervisor's message to reach the terminal. */
                if (argc >= 4)
                        usleep((useconds_t) atoi(argv[3]) * 1000);
                return r;
        }
        signal(SIGALRM, on_alarm);
        alarm(120);
        if ((argc == 4 || argc == 5) && strcmp(argv[1], "failing") == 0)
                return failing(atoi(argv[2]), atoi(argv[3]),
                               argc == 5 ? argv[4] : "/nonexistent/timens-exec-kill/missing");
        if (argc == 4 && strcmp(argv[1], "race") == 0)
                return race(argv[0], atoi(argv[2]), argv[3], false, 0);
        if (argc == 5 && strcmp(argv[1], "poison") == 0)
                return race(argv[0], atoi(argv[2]), argv[3], false, atoi(argv[4]));
        if (argc == 4 && strcmp(argv[1], "fdexec") == 0)
                return race(argv[0], atoi(argv[2]), argv[3], true, 0);
        if (argc >= 4 && strcmp(argv[1], "loop") == 0)
                return loop(argv[0], atoi(argv[2]), argv[3]);
        if (argc >= 3 && strcmp(argv[1], "fullfds") == 0) {
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return 2;
                /* Close-on-exec: full at the exec, free after it. */
                while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
                        ;
                if (errno != EMFILE)
                        return 2;
                execvp(argv[2], argv + 2);
                return 127;
        }
        if (argc < 4 || (n = atoi(argv[2])) <= 0) {
                fprintf(stderr, "usage: exec-kill kill|stopcont|untraced N PROG [ARG...] | fullfds PROG [ARG...] | "
                                "loop SEC MIN | race|fdexec N MIN | poison N MIN K | failing SEC THREADS [PATH]\n");
                return 2;
        }
        if (strcmp(argv[1], "untraced") == 0)
                return untraced(n, argv + 3);
        for (int i = 0; i < n; i++) {
                int sig = strcmp(argv[1], "kill") == 0 ? SIGKILL : SIGSTOP;

                if (one(i, sig, argv + 3) < 0) {
                        fprintf(stderr, "exec-kill: child %d failed\n", i);
                        return 1;
                }
        }
        printf("exec-kill: %d children reaped\n", n);
        return 0;
}
