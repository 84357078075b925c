/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "procfs-text.h"
#include "test.h"
#include "util.h"

#define TS(s, n) ((struct timespec){.tv_sec = (s), .tv_nsec = (n)})

TEST(uptime_format) {
        char buf[TNS_UPTIME_MAX];

        /* Hundredths truncated, as fs/proc/uptime.c divides. */
        EXPECT_EQ(tns_procfs_uptime(&TS(14393, 219999999), "13393.21 22013.04\n", buf, sizeof(buf)), 18);
        EXPECT_STREQ(buf, "14393.21 22013.04\n");
        EXPECT_EQ(tns_procfs_uptime(&TS(0, 9999999), "1.00 0.00\n", buf, sizeof(buf)), 10);
        EXPECT_STREQ(buf, "0.00 0.00\n");
        EXPECT_EQ(tns_procfs_uptime(&TS(5, 0), "1.00 123456789.99", buf, sizeof(buf)), 18);
        EXPECT_STREQ(buf, "5.00 123456789.99\n");
        EXPECT_GT(tns_procfs_uptime(&TS(INT64_MAX, 999999999), "1.00 2.00\n", buf, sizeof(buf)), 0);
        EXPECT_STREQ(buf, "9223372036854775807.99 2.00\n");
}

TEST(uptime_errors) {
        char buf[TNS_UPTIME_MAX];

        EXPECT_EQ(tns_procfs_uptime(&TS(-1, 0), "1.00 2.00\n", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 1000000000), "1.00 2.00\n", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00 x\n", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00 2\n", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00 2.00 3\n", buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00 2.00\n", buf, 10), -ENOBUFS);
        EXPECT_EQ(tns_procfs_uptime(&TS(1, 0), "1.00 2.00\n", buf, 11), 10);
}

TEST(btime) {
        int64_t b = 42;

        /* Host: realtime - boottime. */
        EXPECT_EQ(tns_procfs_btime(&TS(1796295646, 500000000), &TS(13393, 210000000), &b), 0);
        EXPECT_EQ(b, 1796282253);
        /* Floor, not truncation, when the nanoseconds borrow. */
        EXPECT_EQ(tns_procfs_btime(&TS(1796295646, 100000000), &TS(13393, 210000000), &b), 0);
        EXPECT_EQ(b, 1796282252);
        /* A boottime offset of +1000 s: the boot was 1000 s earlier, as
         * `unshare -T --boottime 1000` shows it. */
        EXPECT_EQ(tns_procfs_btime(&TS(1796295646, 500000000), &TS(14393, 210000000), &b), 0);
        EXPECT_EQ(b, 1796281253);
        /* A realtime offset moves the wall-clock boot with it. */
        EXPECT_EQ(tns_procfs_btime(&TS(1796295646 + 86400, 500000000), &TS(13393, 210000000), &b), 0);
        EXPECT_EQ(b, 1796282253 + 86400);
        b = 42;
        EXPECT_EQ(tns_procfs_btime(&TS(INT64_MAX, 0), &TS(-1, 0), &b), -ERANGE);
        EXPECT_EQ(b, 42);
}

static const char host_stat[] = "cpu  1 2 3 4\n"
                                "intr 1 2 3\n"
                                "ctxt 99\n"
                                "btime 1796282253\n"
                                "processes 7\n";

TEST(stat_rewrite) {
        char buf[256];
        ssize_t n;

        n = tns_procfs_stat(host_stat, strlen(host_stat), 1796281253, buf, sizeof(buf));
        EXPECT_EQ(n, (ssize_t) strlen(host_stat));
        EXPECT_STREQ(buf, "cpu  1 2 3 4\nintr 1 2 3\nctxt 99\nbtime 1796281253\nprocesses 7\n");
        n = tns_procfs_stat(host_stat, strlen(host_stat), 5, buf, sizeof(buf));
        EXPECT_EQ(n, (ssize_t) strlen(host_stat) - 9);
        EXPECT_STREQ(buf, "cpu  1 2 3 4\nintr 1 2 3\nctxt 99\nbtime 5\nprocesses 7\n");
        /* Exactly the room it needs, and one byte less. */
        EXPECT_EQ(tns_procfs_stat(host_stat, strlen(host_stat), 5, buf, strlen(host_stat) - 9), -ENOBUFS);
        EXPECT_EQ(tns_procfs_stat(host_stat, strlen(host_stat), 5, buf, strlen(host_stat) - 8),
                  (ssize_t) strlen(host_stat) - 9);
        /* The last line without its newline, the first line. */
        EXPECT_EQ(tns_procfs_stat("btime 12", 8, 34, buf, sizeof(buf)), 8);
        EXPECT_STREQ(buf, "btime 34");
}

TEST(stat_errors) {
        char buf[256];

        EXPECT_EQ(tns_procfs_stat("", 0, 1, buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_stat("cpu 1\n", 6, 1, buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_stat("xbtime 12\n", 10, 1, buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_stat("btime \n", 7, 1, buf, sizeof(buf)), -EINVAL);
        EXPECT_EQ(tns_procfs_stat("btime 12x\n", 10, 1, buf, sizeof(buf)), -EINVAL);
        /* len, not the NUL, ends the text. */
        EXPECT_EQ(tns_procfs_stat("btime 12\n", 4, 1, buf, sizeof(buf)), -EINVAL);
}

TEST(sysinfo_uptime) {
        /* Rounded up, as do_sysinfo() does. */
        EXPECT_EQ(tns_sysinfo_uptime(&TS(100, 0)), 100);
        EXPECT_EQ(tns_sysinfo_uptime(&TS(100, 1)), 101);
        EXPECT_EQ(tns_sysinfo_uptime(&TS(0, 999999999)), 1);
}

TEST(mountinfo_proc_dirs) {
        char dirs[8][4096];
        const char *mi = "21 1 0:20 / /proc rw,nosuid shared:12 - proc proc rw\n"
                         "30 29 0:20 / /run/c/rootfs/proc rw,nosuid master:12 - proc proc rw\n"
                         "31 29 0:5 / /run/c/rootfs/dev rw - tmpfs tmpfs rw\n"
                         "32 29 0:21 / /run/c/root\\040fs/proc rw - proc proc rw\n"
                         "33 29 0:21 / /run/c/rootfs/proc rw - proc proc rw\n"
                         "garbage\n"
                         "34 29 0:22 / /x rw - proc\n"
                         "35 29 0:22 / /y rw shared:3 master:2\n"
                         "36 29 0:23 / /z rw - proc proc rw\n"
                         /* runc's read-only binds of parts of the container's proc */
                         "37 36 0:23 /sys /z/sys ro - proc proc rw\n"
                         "38 36 0:23 /sysrq-trigger /z/sysrq-trigger ro - proc proc rw\n"
                         /* a bind of /proc/sys/kernel, and one of /proc/sys where
                 * a /proc could be: its root, not its place, tells */
                         "39 29 0:23 /sys/kernel /k ro - proc proc rw\n"
                         "40 29 0:23 /sys /w/proc ro - proc proc rw";

        /* Room for more than the four /procs: the binds are left out, not
         * cut off by max. */
        EXPECT_EQ(tns_mountinfo_proc_dirs(mi, dirs, 8), 4U);
        EXPECT_STREQ(dirs[0], "/run/c/rootfs/proc"); /* the shared /proc is left out */
        EXPECT_STREQ(dirs[1], "/run/c/root fs/proc");
        EXPECT_STREQ(dirs[2], "/x");
        EXPECT_STREQ(dirs[3], "/z");
        EXPECT_EQ(tns_mountinfo_proc_dirs(mi, dirs, 1), 1U);
        EXPECT_EQ(tns_mountinfo_proc_dirs("", dirs, 4), 0U);
}

TEST(timens_offsets_parse) {
        int64_t o[3] = {1, 1, 1};
        /* As fs/proc/base.c shows it: "%-10s %10lld %9ld\n". */
        const char *k = "monotonic       86400         0\nboottime        -3600 500000000\n";

        EXPECT_EQ(tns_timens_offsets_parse(k, strlen(k), o), 0);
        EXPECT_EQ(o[0], INT64_C(86400000000000));
        EXPECT_EQ(o[1], INT64_C(-3600000000000) + 500000000);
        EXPECT_EQ(o[2], 0);
        /* Numbers as a writer gives them; a missing clock is 0; no final newline. */
        EXPECT_EQ(tns_timens_offsets_parse("7 10 0", 6, o), 0);
        EXPECT_EQ(o[0], 0);
        EXPECT_EQ(o[1], INT64_C(10000000000));
        EXPECT_EQ(tns_timens_offsets_parse("", 0, o), 0);
        EXPECT_EQ(o[1], 0);
        /* Only len bytes are read. */
        EXPECT_EQ(tns_timens_offsets_parse("1 5 0\n7 x", 6, o), 0);
        EXPECT_EQ(o[0], INT64_C(5000000000));
        /* Bad input. */
        EXPECT_EQ(tns_timens_offsets_parse("realtime 1 0\n", 13, o), -EINVAL);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 1\n", 12, o), -EINVAL);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 1 1000000000\n", 23, o), -EINVAL);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 1 -1\n", 15, o), -EINVAL);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 1 0 9\n", 16, o), -EINVAL);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 99999999999999999999 0\n", 33, o), -ERANGE);
        EXPECT_EQ(tns_timens_offsets_parse("monotonic 9223372037 0\n", 23, o), -ERANGE);
}
