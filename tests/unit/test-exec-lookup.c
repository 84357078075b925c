/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lookup of an exec's file before it runs: where the kernel starts it
 * (fs/exec.c do_execveat_common()), the caller's path read from its
 * memory, and the lookup itself against real files, from the root, the
 * working directory and an fd; a directory not every user may search
 * tells nothing. */
#include <errno.h>
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

static int missing(pid_t pid, enum tns_exec_base base, int dirfd, const char *rest, bool nofollow) {
        struct tns_exec_lookup p = {.base = base, .dirfd = dirfd, .rest = rest, .nofollow = nofollow};

        return tns_exec_file_missing(pid, &p);
}

static void make_tree(void) {
        char path[256];

        strcpy(dir, "/tmp/timens-exec-lookup.XXXXXX");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                abort();
        snprintf(path, sizeof(path), "%s/there", dir);
        if (close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0755)) < 0)
                abort();
        snprintf(path, sizeof(path), "%s/closed", dir);
        if (mkdir(path, 0700) < 0)
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

        make_tree();
        cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(cwd, 0);
        ASSERT_EQ(chdir(dir), 0);
        /* From the root. */
        snprintf(rest, sizeof(rest), "%s/there", dir + 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        snprintf(rest, sizeof(rest), "%s/nope", dir + 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        snprintf(rest, sizeof(rest), "%s/there/x", dir + 1); /* ENOTDIR */
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        /* A symlink is followed inside the root; not with NOFOLLOW. */
        snprintf(rest, sizeof(rest), "%s/dangling", dir + 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        EXPECT_EQ(missing(self, TNS_EXEC_BASE_ROOT, 0, rest, true), 0);
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
        EXPECT_EQ(missing(0x3fffffff, TNS_EXEC_BASE_CWD, 0, "nope", false), -ESRCH);
        EXPECT_EQ(fchdir(cwd), 0);
        close(cwd);
        remove_tree();
}

/* Root finds nothing in a directory that only root may search; another
 * user would get EACCES there: not missing, for root's threads too, so
 * that the time an exec takes tells no member what is in it. In one
 * every user may search, missing for every thread. Our own credentials
 * are as they were after each lookup. */
TEST(missing_only_where_every_user_may_search) {
        char rest[256];
        int pipefd[2];
        pid_t child;

        if (geteuid() != 0)
                SKIP("not root: no other user's credentials to take");
        make_tree();
        ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
        child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                close(pipefd[0]);
                if (write(pipefd[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(pipefd[1]);
        ASSERT_EQ(read(pipefd[0], rest, 1), 1);
        close(pipefd[0]);
        snprintf(rest, sizeof(rest), "%s/closed/nope", dir + 1);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        EXPECT_EQ(missing(child, TNS_EXEC_BASE_ROOT, 0, rest, false), 0);
        snprintf(rest, sizeof(rest), "%s/nope", dir + 1);
        EXPECT_EQ(missing(child, TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        EXPECT_EQ(missing(getpid(), TNS_EXEC_BASE_ROOT, 0, rest, false), 1);
        EXPECT_EQ(setfsuid(-1), 0);
        EXPECT_EQ(setfsgid(-1), 0);
        /* Root's powers are back: the closed directory is searched. */
        snprintf(rest, sizeof(rest), "%s/closed", dir);
        EXPECT_EQ(access(rest, X_OK), 0);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        remove_tree();
}

