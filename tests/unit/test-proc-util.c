/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc-util.h"
#include "test.h"

TEST(parse_status_text) {
        struct tns_proc_status st;

        ASSERT_EQ(tns_proc_status_parse("Name:\tx\nTgid:\t42\nPid:\t43\nPPid:\t1\nCapEff:\t0000000002000000\n", &st),
                  0);
        EXPECT_EQ(st.tgid, 42);
        EXPECT_EQ(st.ppid, 1);
        EXPECT_EQ(st.cap_eff, 1ULL << 25);
        EXPECT_EQ(st.threads, 0U);
        ASSERT_EQ(tns_proc_status_parse("Tgid:\t42\nPPid:\t1\nCapEff:\t0\nThreads:\t7\n", &st), 0);
        EXPECT_EQ(st.threads, 7U);
        EXPECT_EQ(tns_proc_status_parse("Tgid:\t42\nPPid:\t1\n", &st), -EBADMSG);
        EXPECT_EQ(tns_proc_status_parse("", &st), -EBADMSG);
        EXPECT_EQ(tns_proc_status_parse("Tgid:x\nPPid:\t1\nCapEff:\t0\n", &st), -EBADMSG);
}

TEST(status_of_self_and_gone) {
        struct tns_proc_status st;

        ASSERT_EQ(tns_proc_status(getpid(), &st), 0);
        EXPECT_EQ(st.tgid, getpid());
        EXPECT_EQ(st.ppid, getppid());
        EXPECT_EQ(tns_proc_status(0x3fffffff, &st), -ESRCH);
}

TEST(auxv_of_self) {
        uint64_t v;

        ASSERT_EQ(tns_proc_auxv(getpid(), AT_PAGESZ, &v), 0);
        EXPECT_EQ(v, (uint64_t) getauxval(AT_PAGESZ));
        ASSERT_EQ(tns_proc_auxv(getpid(), AT_ENTRY, &v), 0);
        EXPECT_EQ(v, (uint64_t) getauxval(AT_ENTRY));
        EXPECT_EQ(tns_proc_auxv(getpid(), 0x7fff, &v), -ENOENT);
        EXPECT_EQ(tns_proc_auxv(0x3fffffff, AT_PAGESZ, &v), -ENOENT);
}

TEST(special_mapping_is_the_kernels) {
        uint64_t at, end;
        void *p;

        ASSERT_EQ(tns_proc_special_mapping(getpid(), "[vdso]", 0, &at, &end), 0);
        EXPECT_EQ(at, (uint64_t) getauxval(AT_SYSINFO_EHDR));
        EXPECT_GT(end, at);
        EXPECT_EQ((end - at) % 4096, 0U);
        EXPECT_EQ(tns_proc_special_mapping(getpid(), "[no such]", 0, &at, NULL), -ENOENT);
        EXPECT_EQ(tns_proc_special_mapping(0x3fffffff, "[vdso]", 0, &at, NULL), -ESRCH);
        /* Bounded: the vDSO is among the last lines, never the first. */
        EXPECT_EQ(tns_proc_special_mapping(getpid(), "[vdso]", 1, &at, NULL), -E2BIG);
        EXPECT_EQ(tns_proc_special_mapping(getpid(), "[vdso]", 100000, &at, NULL), 0);
        /* An anonymous mapping named "[vdso]" by its process shows as
         * "[anon:[vdso]]": never taken for the kernel's. */
        p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_TRUE(p != MAP_FAILED);
        if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long) p, 4096, (unsigned long) "[vdso]") == 0) {
                ASSERT_EQ(tns_proc_special_mapping(getpid(), "[vdso]", 0, &at, NULL), 0);
                EXPECT_EQ(at, (uint64_t) getauxval(AT_SYSINFO_EHDR));
                EXPECT_EQ(tns_proc_special_mapping(getpid(), "[anon:[vdso]]", 0, &at, NULL), 0);
                EXPECT_EQ(at, (uint64_t) (uintptr_t) p);
        }
        munmap(p, 4096);
}

static int count(pid_t child, void *userdata) {
        (*(int *) userdata)++;
        return 0;
}

TEST(children_of_self) {
        int n = 0, fds[2];
        pid_t pid;

        ASSERT_EQ(pipe(fds), 0);
        pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
                char c;
                close(fds[1]);
                (void) !read(fds[0], &c, 1);
                _exit(0);
        }
        close(fds[0]);
        EXPECT_EQ(tns_proc_for_each_child(getpid(), count, &n), 0);
        EXPECT_EQ(n, 1);
        close(fds[1]);
        EXPECT_EQ(tns_proc_for_each_child(0x3fffffff, count, &n), -ESRCH);
}

TEST(start_time_of_self) {
        uint64_t t, ticks;
        FILE *f = fopen("/proc/self/stat", "re");
        char buf[1024], *p;

        ASSERT_TRUE(f != NULL);
        ASSERT_TRUE(fgets(buf, sizeof(buf), f) != NULL);
        fclose(f);
        p = strrchr(buf, ')');
        for (int i = 0; i < 20; i++)
                p = strchr(p + 1, ' ');
        ticks = strtoull(p + 1, NULL, 10);
        ASSERT_EQ(tns_proc_start_time(getpid(), &t), 0);
        EXPECT_EQ(t, ticks);
        EXPECT_EQ(tns_proc_start_time(1 << 30, &t), -ESRCH);
}

TEST(parse_maps_line_fields) {
        uint64_t lo, off, ino;
        dev_t dev;

        ASSERT_EQ(tns_proc_parse_maps_line("7fd43305c000-7fd43305e000 r-xs 00001000 00:27 2        /timens-vdso.1\n",
                                           &lo, &off, &dev, &ino),
                  0);
        EXPECT_EQ(lo, 0x7fd43305c000ULL);
        EXPECT_EQ(off, 0x1000);
        EXPECT_EQ(major(dev), 0);
        EXPECT_EQ(minor(dev), 0x27);
        EXPECT_EQ(ino, 2);
        ASSERT_EQ(
                tns_proc_parse_maps_line("00400000-00452000 r-xp 00000000 fd:01 1234567 /bin/x", &lo, &off, &dev, &ino),
                0);
        EXPECT_EQ(major(dev), 0xfd);
        EXPECT_EQ(minor(dev), 1);
        EXPECT_EQ(ino, 1234567);
        /* A path is no line: the fields come first or not at all. */
        EXPECT_EQ(tns_proc_parse_maps_line("/memfd:timens-vdso (deleted)", &lo, &off, &dev, &ino), -EBADMSG);
        EXPECT_EQ(tns_proc_parse_maps_line("", &lo, &off, &dev, &ino), -EBADMSG);
}

static void *match_file(dev_t dev, uint64_t ino, void *userdata) {
        struct stat *st = userdata;

        return dev == st->st_dev && ino == st->st_ino ? st : NULL;
}

/* A file named like ours is not ours: the kernel's device and inode are
 * what a mapping is matched by. */
TEST(file_mapping_by_device_and_inode) {
        char dir[] = "/tmp/test-proc-util.XXXXXX", a[64], b[64];
        struct stat st;
        uint64_t addr;
        void *p, *q, *m = NULL;
        int fd, fd2;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(a, sizeof(a), "%s/timens-vdso.1", dir);
        snprintf(b, sizeof(b), "%s/memfd:timens-vdso.1", dir);
        fd = open(a, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        fd2 = open(b, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_GE(fd2, 0);
        ASSERT_EQ(ftruncate(fd, 2 * 4096), 0);
        ASSERT_EQ(ftruncate(fd2, 2 * 4096), 0);
        ASSERT_EQ(fstat(fd, &st), 0);
        q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, 4096);
        ASSERT_TRUE(q != MAP_FAILED);
        EXPECT_EQ(tns_proc_find_file_mapping(getpid(), 4096, 0, match_file, &st, &addr, &m), -ENOENT);
        p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
        ASSERT_TRUE(p != MAP_FAILED);
        ASSERT_EQ(tns_proc_find_file_mapping(getpid(), 4096, 0, match_file, &st, &addr, &m), 0);
        /* Bounded: not past the first line (the program's own text). */
        EXPECT_EQ(tns_proc_find_file_mapping(getpid(), 4096, 1, match_file, &st, &addr, &m), -E2BIG);
        EXPECT_EQ(addr, (uint64_t) (uintptr_t) p);
        EXPECT_TRUE(m == &st);
        /* The same file at another offset is not the page. */
        EXPECT_EQ(tns_proc_find_file_mapping(getpid(), 0, 0, match_file, &st, &addr, &m), -ENOENT);
        munmap(p, 4096);
        munmap(q, 4096);
        close(fd);
        close(fd2);
        unlink(a);
        unlink(b);
        rmdir(dir);
}

/* A file longer than the buffer is cut at size - 1 (callers tell by the
 * length); a short one is read whole; a missing one is -ENOENT. */
TEST(read_text_whole_and_cut) {
        char dir[] = "/tmp/test-proc-util.XXXXXX", path[64], buf[8];
        FILE *f;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/text", dir);
        EXPECT_EQ(tns_read_text(path, buf, sizeof(buf)), -ENOENT);
        f = fopen(path, "we");
        ASSERT_TRUE(f != NULL);
        fputs("abc", f);
        fclose(f);
        EXPECT_EQ(tns_read_text(path, buf, sizeof(buf)), 3);
        EXPECT_STREQ(buf, "abc");
        f = fopen(path, "we");
        ASSERT_TRUE(f != NULL);
        fputs("0123456789", f);
        fclose(f);
        EXPECT_EQ(tns_read_text(path, buf, sizeof(buf)), (ssize_t) sizeof(buf) - 1);
        EXPECT_STREQ(buf, "0123456");
        unlink(path);
        rmdir(dir);
}
