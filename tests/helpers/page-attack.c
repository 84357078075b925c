/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A namespace member attacking what timensd maps into it (issue 14, items
 * 1 and 4), for tests/bats/security-memory.bats. Each mode prints one line
 * of counts that the test asserts on; it exits 0 when it could run its
 * attack at all (what it achieved is in the line).
 *
 *   page-attack sibling PROGRAM [ARG...]
 *       clone(CLONE_FILES) a sibling sharing our fd table, then exec
 *       PROGRAM (an exec timensd injects, handing us an fd in that table).
 *       The sibling watches the table; after the exec it holds whatever
 *       fds of ours are left there, and tries to make each writable:
 *       reopen /proc/self/fd/N O_RDWR and O_WRONLY, mmap MAP_SHARED with
 *       PROT_WRITE, pwrite, ftruncate. Prints "seen N writable N".
 *   page-attack self
 *       In this process (a member with our vDSO): every mapping of a
 *       timens-vdso file, made writable by mprotect, opened through
 *       /proc/self/map_files O_RDWR, written through /proc/self/mem.
 *       Prints "mappings N writable N".
 *   page-attack forge DIR INO
 *       Forges a namespace's identity: a file on a tmpfs we mount at DIR
 *       (in a mount namespace of our own) with inode number INO, mapped
 *       at the offsets page's offset where our real page was, after an
 *       unshare(CLONE_NEWTIME) (so that timensd names our namespace by
 *       our mapping); then clock_settime(CLOCK_REALTIME, now + 999 days).
 *       Prints "forged INO settime R".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_FDS 1024

static int is_ours(int fd) {
        char path[64], target[256];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
                return 0;
        target[n] = '\0';
        return strstr(target, "timens-vdso") != NULL;
}

/* Every way we know to write through fd: 1 if one worked. */
static int try_write_fd(int fd) {
        char path[64];
        int w, ok = 0;
        void *p;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        for (int i = 0; i < 2; i++) {
                w = open(path, i == 0 ? O_RDWR : O_WRONLY);
                if (w >= 0) {
                        fprintf(stderr, "page-attack: reopened fd %d %s\n", fd, i == 0 ? "O_RDWR" : "O_WRONLY");
                        ok = 1;
                        close(w);
                }
        }
        p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PAGE);
        if (p != MAP_FAILED) {
                fprintf(stderr, "page-attack: mapped fd %d writable\n", fd);
                ok = 1;
                munmap(p, PAGE);
        }
        if (pwrite(fd, "x", 1, PAGE) == 1 || ftruncate(fd, 0) == 0) {
                fprintf(stderr, "page-attack: wrote fd %d\n", fd);
                ok = 1;
        }
        return ok;
}

struct sibling_shared {
        volatile int stop;
};

static int sibling_main(void *arg) {
        struct sibling_shared *sh = arg;
        int seen[MAX_FDS] = {0}, n_seen = 0, n_writable = 0;

        /* Watch the shared table while the exec goes on; what was handed
         * to the exec'ing task is there until it is closed. */
        while (!sh->stop)
                for (int fd = 3; fd < MAX_FDS; fd++)
                        if (!seen[fd] && fcntl(fd, F_GETFD) >= 0 && is_ours(fd)) {
                                seen[fd] = 1;
                                n_seen++;
                                n_writable += try_write_fd(fd);
                        }
        /* And what is still there after it. */
        for (int fd = 3; fd < MAX_FDS; fd++)
                if (!seen[fd] && fcntl(fd, F_GETFD) >= 0 && is_ours(fd)) {
                        n_seen++;
                        n_writable += try_write_fd(fd);
                }
        printf("seen %d writable %d\n", n_seen, n_writable);
        fflush(stdout);
        return 0;
}

static int mode_sibling(char **argv) {
        struct sibling_shared *sh;
        char *stack;
        pid_t sib, child;
        int status;

        sh = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        stack = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (sh == MAP_FAILED || stack == MAP_FAILED)
                return 2;
        /* The exec'ing task is a child too, so that we outlive its exec
         * and report. */
        child = fork();
        if (child < 0)
                return 2;
        if (child == 0) {
                sib = clone(sibling_main, stack + (1 << 20), CLONE_FILES | SIGCHLD, sh);
                if (sib < 0)
                        _exit(2);
                usleep(100 * 1000);
                execvp(argv[0], argv);
                _exit(127);
        }
        /* The exec'd program ran and exited: tell the sibling (the
         * grandchild, re-parented to us or to init) to finish. */
        if (waitpid(child, &status, 0) < 0)
                return 2;
        usleep(200 * 1000);
        sh->stop = 1;
        /* The sibling prints; give it time to. */
        for (int i = 0; i < 50; i++)
                usleep(100 * 1000);
        return 0;
}

static int mode_self(void) {
        char line[512];
        int n_maps = 0, n_writable = 0;
        FILE *f = fopen("/proc/self/maps", "re");

        if (!f)
                return 2;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                char mf[128];
                int w, mem;

                if (!strstr(line, "timens-vdso") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
                        continue;
                n_maps++;
                if (mprotect((void *) lo, hi - lo, PROT_READ | PROT_WRITE) == 0) {
                        /* A private mapping is ours to write: only a shared
                         * one reaching the file counts. */
                        if (strstr(line, " r--s ") || strstr(line, " r-xs ")) {
                                fprintf(stderr, "page-attack: mprotect made %lx writable\n", lo);
                                n_writable++;
                        }
                        (void) mprotect((void *) lo, hi - lo, PROT_READ);
                }
                snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", lo, hi);
                w = open(mf, O_RDWR);
                if (w >= 0) {
                        fprintf(stderr, "page-attack: opened %s O_RDWR\n", mf);
                        n_writable++;
                        close(w);
                }
                /* /proc/self/mem writes reach a shared mapping's file only
                 * if it may be written: check the file changed. */
                mem = open("/proc/self/mem", O_RDWR);
                if (mem >= 0 && (strstr(line, " r--s ") || strstr(line, " r-xs "))) {
                        unsigned char before, after, x;

                        memcpy(&before, (void *) (lo + 64), 1);
                        x = (unsigned char) (before ^ 0xff);
                        if (pwrite(mem, &x, 1, (off_t) (lo + 64)) == 1) {
                                memcpy(&after, (void *) (lo + 64), 1);
                                if (after != before) {
                                        fprintf(stderr, "page-attack: /proc/self/mem wrote %lx\n", lo);
                                        n_writable++;
                                        (void) !pwrite(mem, &before, 1, (off_t) (lo + 64));
                                }
                        }
                }
                if (mem >= 0)
                        close(mem);
        }
        fclose(f);
        printf("mappings %d writable %d\n", n_maps, n_writable);
        return 0;
}

static int offsets_page_of_self(unsigned long *ret) {
        char line[512];
        FILE *f = fopen("/proc/self/maps", "re");
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (r < 0 && fgets(line, sizeof(line), f)) {
                unsigned long lo, off;

                if (strstr(line, "timens-vdso") && sscanf(line, "%lx-%*x %*s %lx", &lo, &off) == 2 && off == PAGE) {
                        *ret = lo;
                        r = 0;
                }
        }
        fclose(f);
        return r;
}

static int mode_forge(const char *dir, unsigned long ino) {
        struct timespec now;
        unsigned long page = 0;
        char path[4096];
        struct stat st;
        void *p;
        long r;
        int fd = -1;

        /* Become a namespace of our own first: timensd now names our
         * namespace by the offsets page we map. */
        if (syscall(SYS_unshare, CLONE_NEWTIME) < 0) {
                fprintf(stderr, "page-attack: unshare(CLONE_NEWTIME): %m\n");
                return 2;
        }
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("forge", dir, "tmpfs", 0, NULL) < 0) {
                fprintf(stderr, "page-attack: a tmpfs of our own at %s: %m\n", dir);
                return 2;
        }
        /* tmpfs numbers its inodes in order: make files until one has the
         * victim's number. */
        for (unsigned i = 0; i < 100000; i++) {
                snprintf(path, sizeof(path), "%s/memfd:timens-vdso.%u", dir, i);
                fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
                if (fd < 0 || fstat(fd, &st) < 0)
                        return 2;
                if (st.st_ino == ino)
                        break;
                close(fd);
                fd = -1;
                if (st.st_ino > ino)
                        break;
        }
        if (fd < 0) {
                fprintf(stderr, "page-attack: no file with inode %lu\n", ino);
                return 2;
        }
        if (ftruncate(fd, 4 * PAGE) < 0)
                return 2;
        /* Our real page goes (where it was), the forged one comes. */
        if (offsets_page_of_self(&page) == 0)
                p = mmap((void *) page, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, PAGE);
        else
                p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
        if (p == MAP_FAILED)
                return 2;
        /* The raw call: our vDSO's page is gone. */
        syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
        now.tv_sec += 999L * 86400;
        r = syscall(SYS_clock_settime, CLOCK_REALTIME, &now);
        printf("forged %lu settime %ld\n", ino, r < 0 ? -(long) errno : r);
        return 0;
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc >= 3 && strcmp(argv[1], "sibling") == 0)
                return mode_sibling(argv + 2);
        if (argc == 2 && strcmp(argv[1], "self") == 0)
                return mode_self();
        if (argc == 4 && strcmp(argv[1], "forge") == 0)
                return mode_forge(argv[2], strtoul(argv[3], NULL, 10));
        fprintf(stderr, "usage: page-attack sibling PROGRAM [ARG...] | self | forge DIR INO\n");
        return 2;
}
