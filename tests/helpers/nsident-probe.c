/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsident-probe: the identity of time namespaces and the kernel's 5.6
 * interface, for tests/bats/selftests.bats. Each check prints one line,
 * "NAME VALUE", with relations ("same", "differs") instead of inode
 * numbers, so that a run under timensctl and one under the kernel's own
 * time namespace (unshare -T) can be compared line by line.
 *
 *   identity     unshare(CLONE_NEWTIME): the caller's own namespace stays,
 *                time_for_children is a new one; a forked child is in it;
 *                readlink gives time:[INODE], stat the same inode; setns to
 *                the new one and back moves the caller (and its clocks:
 *                MONOTONIC shifted by 1000 s in the child namespace)
 *   offsets      /proc/self/timens_offsets: written and read back before
 *                a process entered; EACCES after; ERANGE, EINVAL for bad
 *                input (a realtime line, a bad nanosecond, a huge offset)
 *   errnos       setns with a closed fd, a mount namespace's fd, a pidfd
 *                (with CLONE_NEWTIME alone), nstype 0, from a second
 *                thread: "setns_CASE RESULT" (0 or the errno's name)
 *
 * Needs CAP_SYS_ADMIN over a time namespace it may make: run it under
 * unshare -U -r, never on the host's own namespaces. Exits 0 when it ran,
 * 1 when a check it can judge alone failed, 2 on a usage or setup error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const char *errname(int e) {
        static char buf[16];

        switch (e) {
        case 0:
                return "0";
        case EPERM:
                return "EPERM";
        case EBADF:
                return "EBADF";
        case EINVAL:
                return "EINVAL";
        case EACCES:
                return "EACCES";
        case ERANGE:
                return "ERANGE";
        case EUSERS:
                return "EUSERS";
        case ENOSYS:
                return "ENOSYS";
        default:
                snprintf(buf, sizeof(buf), "errno%d", e);
                return buf;
        }
}

static ino_t ino_of(const char *path) {
        struct stat st;

        return stat(path, &st) < 0 ? 0 : st.st_ino;
}

static const char *rel(ino_t a, ino_t b) {
        return a && b ? (a == b ? "same" : "differs") : "unknown";
}

static int64_t mono_sec(bool raw) {
        struct timespec ts;

        if (raw)
                syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        else
                clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec;
}

static int write_offsets(const char *text) {
        int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC), e = 0;

        if (fd < 0)
                return errno;
        if (write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                e = errno;
        close(fd);
        return e;
}

/* A child that only exists: its entry into the namespace is what closes
 * timens_offsets to writes. */
static pid_t sleeper(void) {
        pid_t pid = fork();

        if (pid == 0) {
                pause();
                _exit(0);
        }
        return pid;
}

static int cmd_identity(void) {
        ino_t own0 = ino_of("/proc/self/ns/time"), kids0 = ino_of("/proc/self/ns/time_for_children");
        ino_t own1, kids1, child_own = 0;
        char link[64] = "", want[64];
        int parent, child, p[2], bad = 0;
        int64_t before, in_child_vdso, in_child_raw, back;
        ssize_t n;
        pid_t pid;

        printf("before_own_vs_children %s\n", rel(own0, kids0));
        parent = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        if (parent < 0 || unshare(CLONE_NEWTIME) < 0) {
                printf("unshare %s\n", errname(errno));
                return 2;
        }
        own1 = ino_of("/proc/self/ns/time");
        kids1 = ino_of("/proc/self/ns/time_for_children");
        printf("after_own_vs_before %s\n", rel(own1, own0));
        printf("after_children_vs_before %s\n", rel(kids1, kids0));
        n = readlink("/proc/self/ns/time_for_children", link, sizeof(link) - 1);
        link[n > 0 ? n : 0] = '\0';
        snprintf(want, sizeof(want), "time:[%ju]", (uintmax_t) kids1);
        printf("readlink_is_stat %s\n", strcmp(link, want) == 0 ? "yes" : "no");
        if (write_offsets("monotonic 1000 0") != 0)
                return 2;
        before = mono_sec(true);
        if (pipe(p) < 0)
                return 2;
        pid = fork();
        if (pid == 0) {
                ino_t mine = ino_of("/proc/self/ns/time");
                int64_t v = mono_sec(false) - before;

                (void) !write(p[1], &mine, sizeof(mine));
                (void) !write(p[1], &v, sizeof(v));
                _exit(0);
        }
        if (read(p[0], &child_own, sizeof(child_own)) != sizeof(child_own) ||
            read(p[0], &in_child_vdso, sizeof(in_child_vdso)) != sizeof(in_child_vdso))
                return 2;
        (void) waitpid(pid, NULL, 0);
        printf("forked_child_vs_children %s\n", rel(child_own, kids1));
        printf("forked_child_shifted %s\n", in_child_vdso >= 995 && in_child_vdso <= 1100 ? "yes" : "no");
        printf("unsharer_shifted %s\n", mono_sec(false) - before >= 995 ? "yes" : "no");
        child = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (child < 0)
                return 2;
        printf("setns_child %s\n", errname(setns(child, CLONE_NEWTIME) < 0 ? errno : 0));
        printf("own_after_setns_vs_children %s\n", rel(ino_of("/proc/self/ns/time"), kids1));
        in_child_vdso = mono_sec(false) - before;
        in_child_raw = mono_sec(true) - before;
        printf("clocks_after_setns_child %s\n",
               in_child_vdso >= 995 && in_child_vdso <= 1100 && in_child_raw >= 995 && in_child_raw <= 1100
                       ? "shifted"
                       : "not shifted");
        printf("setns_parent %s\n", errname(setns(parent, CLONE_NEWTIME) < 0 ? errno : 0));
        printf("own_after_setns_back_vs_before %s\n", rel(ino_of("/proc/self/ns/time"), own0));
        back = mono_sec(true) - before;
        printf("clocks_after_setns_parent %s\n",
               back < 100 && mono_sec(false) - before < 100 ? "unshifted" : "shifted");
        bad |= strcmp(link, want) != 0;
        return bad;
}

static int cmd_offsets(void) {
        char buf[256];
        ssize_t n;
        pid_t pid;
        int fd;

        if (unshare(CLONE_NEWTIME) < 0) {
                printf("unshare %s\n", errname(errno));
                return 2;
        }
        printf("write_both %s\n", errname(write_offsets("monotonic 86400 0\nboottime -60 500000000")));
        printf("write_by_number %s\n", errname(write_offsets("1 86401 0")));
        printf("write_realtime %s\n", errname(write_offsets("0 10 0")));
        printf("write_bad_nsec %s\n", errname(write_offsets("monotonic 1 1000000000")));
        printf("write_huge %s\n", errname(write_offsets("monotonic 9223372036854775 0")));
        printf("write_garbage %s\n", errname(write_offsets("monotonic x")));
        fd = open("/proc/self/timens_offsets", O_RDONLY | O_CLOEXEC);
        n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        if (fd >= 0)
                close(fd);
        /* One line per clock, as the kernel formats it. */
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                char name[16];
                long long sec;
                long nsec;

                if (sscanf(line, "%15s %lld %ld", name, &sec, &nsec) == 3)
                        printf("read_%s %lld.%09ld\n", name, sec, nsec);
        }
        pid = sleeper();
        if (pid < 0)
                return 2;
        usleep(10000);
        printf("write_after_entered %s\n", errname(write_offsets("monotonic 5 0")));
        kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        return 0;
}

static void *idle_thread(void *arg) {
        pause();
        return arg;
}

static void setns_case(const char *name, int fd, int nstype) {
        printf("setns_%s %s\n", name, errname(setns(fd, nstype) < 0 ? errno : 0));
}

static int cmd_errnos(void) {
        int closed, mnt, own, pidfd;
        pthread_t th;

        /* A number no fd has: dup2 onto it, then close it. */
        closed = dup2(1, 900);
        close(closed);
        mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        own = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
        pidfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        if (mnt < 0 || own < 0)
                return 2;
        setns_case("closed_fd", closed, CLONE_NEWTIME);
        setns_case("mnt_fd", mnt, CLONE_NEWTIME);
        setns_case("time_fd_as_mnt", own, CLONE_NEWNS);
        setns_case("own_time_nstype0", own, 0);
        setns_case("own_time", own, CLONE_NEWTIME);
        if (pidfd >= 0)
                setns_case("pidfd_self", pidfd, CLONE_NEWTIME);
        setns_case("devnull", open("/dev/null", O_RDONLY | O_CLOEXEC), CLONE_NEWTIME);
        if (pthread_create(&th, NULL, idle_thread, NULL) != 0)
                return 2;
        setns_case("multithreaded", own, CLONE_NEWTIME);
        printf("unshare_multithreaded %s\n", errname(unshare(CLONE_NEWTIME) < 0 ? errno : 0));
        return 0;
}

int main(int argc, char *argv[]) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc != 2)
                return 2;
        if (strcmp(argv[1], "identity") == 0)
                return cmd_identity();
        if (strcmp(argv[1], "offsets") == 0)
                return cmd_offsets();
        if (strcmp(argv[1], "errnos") == 0)
                return cmd_errnos();
        return 2;
}
