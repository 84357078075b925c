/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lookup of an exec's file before it runs: where the kernel starts it
 * (fs/exec.c do_execveat_common()), the caller's path read from its
 * memory, and the lookup itself against real files, from the root, the
 * working directory and an fd: from the dentry cache only, no symlink, a
 * caller with one thread, and a directory not every user may search tells
 * nothing. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-lookup.h"
#include "exec-missing.h"
#include "proc-util.h"
#include "test.h"

TEST(plan_execve) {
        const uint64_t args[6] = {0};
        struct tns_exec_lookup p;

        tns_exec_lookup_plan(false, args, "/usr/local/bin/x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_ROOT);
        EXPECT_STREQ(p.rest, "usr/local/bin/x");
        EXPECT_FALSE(p.nofollow);
        tns_exec_lookup_plan(false, args, "///", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_ROOT);
        EXPECT_STREQ(p.rest, ".");
        tns_exec_lookup_plan(false, args, "bin/x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_CWD);
        EXPECT_STREQ(p.rest, "bin/x");
        tns_exec_lookup_plan(false, args, "", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        /* No "..", anywhere; names that only start with dots are names. */
        tns_exec_lookup_plan(false, args, "/usr/../x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        tns_exec_lookup_plan(false, args, "../x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        tns_exec_lookup_plan(false, args, "/x/..", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        tns_exec_lookup_plan(false, args, "/x/..y/...", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_ROOT);
        EXPECT_STREQ(p.rest, "x/..y/...");
}

TEST(plan_execveat) {
        uint64_t args[6] = {(uint32_t) AT_FDCWD, 0, 0, 0, 0, 0};
        struct tns_exec_lookup p;

        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_CWD);
        args[0] = 7;
        args[4] = AT_SYMLINK_NOFOLLOW;
        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_DIRFD);
        EXPECT_EQ(p.dirfd, 7);
        EXPECT_TRUE(p.nofollow);
        /* An absolute path ignores dirfd, as the kernel does. */
        tns_exec_lookup_plan(true, args, "/x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_ROOT);
        /* Only the low 32 bits are the int the kernel sees. */
        args[0] = 0xffffffff00000007ULL;
        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.dirfd, 7);
        /* AT_EMPTY_PATH, unknown flags, a bad fd: not told here. */
        args[4] = AT_EMPTY_PATH;
        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        args[4] = 0x8000;
        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        args[4] = 0;
        args[0] = (uint32_t) -5;
        tns_exec_lookup_plan(true, args, "x", &p);
        EXPECT_EQ(p.base, TNS_EXEC_BASE_UNKNOWN);
        EXPECT_EQ(tns_exec_path_arg(true, (const uint64_t[6]){1, 2}), 2U);
        EXPECT_EQ(tns_exec_path_arg(false, (const uint64_t[6]){1, 2}), 1U);
}

TEST(read_string_across_pages) {
        char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char buf[64];

        ASSERT_TRUE(m != MAP_FAILED);
        /* A string ending right before an unmapped page. */
        ASSERT_EQ(munmap(m + 4096, 4096), 0);
        memcpy(m + 4096 - 4, "abc", 4);
        EXPECT_EQ(tns_proc_read_string(getpid(), (uint64_t) (uintptr_t) (m + 4092), buf, sizeof(buf)), 3);
        EXPECT_STREQ(buf, "abc");
        /* No NUL before the unmapped page: EFAULT, as the kernel's. */
        memset(m + 4090, 'x', 6);
        EXPECT_EQ(tns_proc_read_string(getpid(), (uint64_t) (uintptr_t) (m + 4090), buf, sizeof(buf)), -EFAULT);
        /* No NUL within the size. */
        memset(m, 'y', 100);
        EXPECT_EQ(tns_proc_read_string(getpid(), (uint64_t) (uintptr_t) m, buf, sizeof(buf)), -ENAMETOOLONG);
        munmap(m, 4096);
}

static char dir[] = "/tmp/timens-exec-lookup.XXXXXX";

/* The ring of lookups as anyone, made at the first lookup, as the
 * supervisor makes it at its start. */
static struct tns_anyone *anyone;

static bool have_ring(void) {
        return anyone || tns_anyone_new(&anyone) >= 0;
}

static int missing(pid_t pid, enum tns_exec_base base, int dirfd, const char *rest, bool nofollow) {
        struct tns_exec_lookup p = {.base = base, .dirfd = dirfd, .rest = rest, .nofollow = nofollow};

        if (!anyone && tns_anyone_new(&anyone) < 0)
                return -1;
        /* As the supervisor asks: alone first. */
        return tns_exec_caller_alone(pid) && tns_exec_file_missing(anyone, pid, &p);
}

/* The lookup answers from the dentry cache alone: a name looked up once
 * (and not found) is there as a negative dentry. */
static void warm(const char *rest) {
        struct stat st;
        char path[512];

        snprintf(path, sizeof(path), "/%s", rest);
        (void) stat(path, &st);
}

static void make_tree(void) {
        char path[256];

        strcpy(dir, "/tmp/timens-exec-lookup.XXXXXX");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                abort();
        snprintf(path, sizeof(path), "%s/there", dir);
        if (close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0755)) < 0)
                abort();
        /* Another user's, closed: root searches it with its capabilities
         * only. */
        snprintf(path, sizeof(path), "%s/closed", dir);
        if (mkdir(path, 0700) < 0 || chown(path, 65534, 65534) < 0)
                abort();
        snprintf(path, sizeof(path), "%s/link", dir);
        if (symlink("there", path) < 0)
                abort();
        snprintf(path, sizeof(path), "%s/dangling", dir);
        if (symlink("/nonexistent-timens/x", path) < 0)
                abort();
}

static void remove_tree(void) {
        const char *names[] = {"there", "link", "dangling"};
        char path[256];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                (void) unlink(path);
        }
        snprintf(path, sizeof(path), "%s/closed", dir);
        (void) rmdir(path);
        (void) rmdir(dir);
}

TEST(missing_files_of_self) {
        const pid_t self = getpid();
        char rest[256];
        int cwd, d;

        if (geteuid() != 0)
                SKIP("not root: nothing is told");
        if (!have_ring())
                SKIP("no io_uring here (kernel.io_uring_disabled, or a seccomp profile): nothing is told");
        make_tree();
        cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(cwd, 0);
        ASSERT_EQ(chdir(dir), 0);
        /* From the root. */
        snprintf(rest, sizeof(rest), "%s/there", dir + 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        snprintf(rest, sizeof(rest), "%s/nope", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        /* Not in the dentry cache: not told (never a call into a
         * filesystem, which a member's FUSE server could hold). */
        snprintf(rest, sizeof(rest), "%s/never-looked-up", dir + 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        /* Through a file (ENOTDIR): the cached walk leaves that to the
         * kernel's (EAGAIN), not told. */
        snprintf(rest, sizeof(rest), "%s/there/x", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        /* No symlink is followed: /proc/self, /dev/fd or an absolute
         * target would resolve for us, not for the caller. */
        snprintf(rest, sizeof(rest), "%s/dangling", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, true), 0);
        warm("proc/self/fd/987");
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, "proc/self/fd/987", false), 0);
        /* From the working directory: no symlink, nothing above it. */
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_CWD, 0, "there", false), 0);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_CWD, 0, "nope", false), 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_CWD, 0, "link", false), 0);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_CWD, 0, "../nope", false), 0);
        /* From an fd: a directory's, not a file's. */
        d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(d, 0);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_DIRFD, d, "nope", false), 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_DIRFD, d, "there", false), 0);
        close(d);
        d = open("there", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(d, 0);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_DIRFD, d, "nope", false), 0);
        close(d);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_UNKNOWN, 0, "nope", false), 0);
        EXPECT_EQ(missing(0x3fffffff, TNS_EXEC_BASE_CWD, 0, "nope", false), 0);
        EXPECT_EQ(fchdir(cwd), 0);
        close(cwd);
        remove_tree();
}

static void *sleeper(void *arg) {
        (void) arg;
        pause();
        return NULL;
}

/* A caller with another thread is not told: that thread could make
 * timensd take a program let through (that found its file after all)
 * for the old one. */
TEST(not_told_with_more_threads) {
        char rest[256];
        pthread_t t;

        if (geteuid() != 0)
                SKIP("not root: nothing is told");
        if (!have_ring())
                SKIP("no io_uring here (kernel.io_uring_disabled, or a seccomp profile): nothing is told");
        make_tree();
        snprintf(rest, sizeof(rest), "%s/nope", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        ASSERT_EQ(pthread_create(&t, NULL, sleeper, NULL), 0);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        pthread_cancel(t);
        pthread_join(t, NULL);
        remove_tree();
}

/* Root finds nothing in a directory only its capabilities let it search;
 * another user would get EACCES there: not missing, so that neither the
 * answer nor its time tells a member what is in it. In one every user may
 * search, missing. Afterwards our credentials, capabilities, groups,
 * dumpable flag and parent-death signal are as they were. */
TEST(missing_only_where_every_user_may_search) {
        gid_t before[64], after[64];
        int n_before, n_after, pdeath = 0, fd;
        char rest[256], path[256];

        if (geteuid() != 0)
                SKIP("not root: nothing is told");
        if (!have_ring())
                SKIP("no io_uring here (kernel.io_uring_disabled, or a seccomp profile): nothing is told");
        make_tree();
        ASSERT_EQ(prctl(PR_SET_PDEATHSIG, SIGUSR2), 0);
        n_before = getgroups(64, before);
        snprintf(rest, sizeof(rest), "%s/closed/nope", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        snprintf(rest, sizeof(rest), "%s/nope", dir + 1);
        warm(rest);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        EXPECT_EQ(setfsuid(-1), 0);
        EXPECT_EQ(setfsgid(-1), (int) getegid());
        n_after = getgroups(64, after);
        ASSERT_EQ(n_after, n_before);
        EXPECT_EQ(memcmp(before, after, (size_t) n_after * sizeof(gid_t)), 0);
        EXPECT_EQ(prctl(PR_GET_DUMPABLE), 1);
        EXPECT_EQ(prctl(PR_GET_PDEATHSIG, &pdeath), 0);
        EXPECT_EQ(pdeath, SIGUSR2);
        (void) prctl(PR_SET_PDEATHSIG, 0);
        /* Root's capabilities are back: another user's closed directory
         * opens. */
        snprintf(path, sizeof(path), "%s/closed", dir);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        EXPECT_GE(fd, 0);
        if (fd >= 0)
                close(fd);
        remove_tree();
}
