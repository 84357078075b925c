/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "proc-util.h"
#include "util.h"

ssize_t tns_read_text(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        while (n < size - 1) {
                ssize_t k = read(fd, buf + n, size - 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = 0;
        return (ssize_t) n;
}

/* A file of a process: gone (-ESRCH) once its directory is. */
static int read_file(const char *path, char *buf, size_t size) {
        ssize_t n = tns_read_text(path, buf, size);

        if (n == -ENOENT)
                return -ESRCH;
        return n < 0 ? (int) n : 0;
}

int tns_proc_status_parse(const char *text, struct tns_proc_status *ret) {
        struct tns_proc_status s = {.euid = (uid_t) -1, .egid = (gid_t) -1};
        unsigned found = 0;

        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                if (strncmp(l, "Tgid:", 5) == 0 && sscanf(l + 5, "%d", &s.tgid) == 1)
                        found |= 1;
                else if (strncmp(l, "PPid:", 5) == 0 && sscanf(l + 5, "%d", &s.ppid) == 1)
                        found |= 2;
                else if (strncmp(l, "CapEff:", 7) == 0 && sscanf(l + 7, "%" SCNx64, &s.cap_eff) == 1)
                        found |= 4;
                else if (strncmp(l, "Seccomp:", 8) == 0)
                        (void) sscanf(l + 8, "%d", &s.seccomp_mode);
                else if (strncmp(l, "Seccomp_filters:", 16) == 0)
                        (void) sscanf(l + 16, "%u", &s.seccomp_filters);
                else if (strncmp(l, "Threads:", 8) == 0)
                        (void) sscanf(l + 8, "%u", &s.threads);
                else if (strncmp(l, "Uid:", 4) == 0)
                        (void) sscanf(l + 4, "%*u %u", &s.euid);
                else if (strncmp(l, "Gid:", 4) == 0)
                        (void) sscanf(l + 4, "%*u %u", &s.egid);
        }
        if (found != 7)
                return -EBADMSG;
        *ret = s;
        return 0;
}

int tns_proc_status(pid_t pid, struct tns_proc_status *ret) {
        char path[64], buf[4096];
        int r;

        snprintf(path, sizeof(path), "/proc/%d/status", pid);
        r = read_file(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        return tns_proc_status_parse(buf, ret);
}

int tns_proc_auxv(pid_t pid, uint64_t type, uint64_t *ret) {
        /* One read (the kernel's auxv is a few hundred bytes; it has at
         * most AT_VECTOR_SIZE entries): on every exec's marker call, where
         * stdio's fstat and buffer were a tenth of our syscalls. */
        uint64_t kv[128];
        _cleanup_close_ int fd = -EBADF;
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        n = read(fd, kv, sizeof(kv));
        if (n < 0)
                return negative_errno();
        for (size_t i = 0; i + 1 < (size_t) n / sizeof(uint64_t) && kv[i] != 0 /* AT_NULL */; i += 2)
                if (kv[i] == type) {
                        *ret = kv[i + 1];
                        return 0;
                }
        return -ENOENT;
}

bool tns_proc_shares_vm(pid_t a, pid_t b) {
        return a > 0 && b > 0 && syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0) == 0;
}

int tns_proc_open_mem(pid_t pid) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/mem", pid);
        fd = open(path, O_RDWR | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

ssize_t tns_proc_read_string(pid_t pid, uint64_t addr, char *buf, size_t size) {
        size_t n = 0;

        /* Up to each page's end in turn: a read that crosses into a page
         * that is not mapped fails whole, though the string ended before. */
        while (n < size) {
                size_t chunk = 4096 - ((addr + n) & 4095);
                struct iovec local, remote;
                ssize_t k;
                char *nul;

                if (chunk > size - n)
                        chunk = size - n;
                local = (struct iovec){buf + n, chunk};
                remote = (struct iovec){(void *) (uintptr_t) (addr + n), chunk};
                k = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EFAULT;
                nul = memchr(buf + n, '\0', (size_t) k);
                if (nul)
                        return nul - buf;
                n += (size_t) k;
        }
        return -ENAMETOOLONG;
}

static int for_each_in_children_file(const char *path, int (*fn)(pid_t, void *), void *userdata) {
        char buf[4096];
        char *p, *end;
        int r;

        if (read_file(path, buf, sizeof(buf)) < 0)
                return 0; /* the thread is gone: it has no children to pin */
        for (p = buf;; p = end) {
                long v = strtol(p, &end, 10);

                if (end == p)
                        return 0;
                r = fn((pid_t) v, userdata);
                if (r < 0)
                        return r;
        }
}

int tns_proc_for_each_child(pid_t tgid, int (*fn)(pid_t child, void *userdata), void *userdata) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[96];
        struct dirent *de;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/task", tgid);
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ESRCH : negative_errno();
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", tgid, de->d_name);
                r = for_each_in_children_file(path, fn, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* /proc/PID/maps, for a read line by line: -ESRCH if PID is gone. */
static int open_maps(pid_t pid, FILE **ret) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/maps", pid);
        *ret = fopen(path, "re");
        if (!*ret)
                return errno == ENOENT ? -ESRCH : negative_errno();
        return 0;
}

int tns_proc_has_mapping(pid_t pid, const char *needle) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[512];
        int r;

        r = open_maps(pid, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, needle))
                        return 1;
        return 0;
}

int tns_proc_find_mappings(pid_t pid, const char *path_part, uint64_t offset, uint64_t *addrs, unsigned max) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[512];
        unsigned n = 0;
        int r;

        r = open_maps(pid, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi, off;

                if (strstr(line, path_part) && sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && off == offset) {
                        if (n < max)
                                addrs[n] = lo;
                        if (n < INT32_MAX)
                                n++;
                }
        }
        return (int) n;
}

int tns_proc_find_mapping(pid_t pid, const char *path_part, uint64_t offset, uint64_t *ret_addr, uint64_t *ret_ino) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[512];
        int r;

        r = open_maps(pid, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi, off, ino;

                if (strstr(line, path_part) && sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off, &ino) == 4 &&
                    off == offset) {
                        *ret_addr = lo;
                        if (ret_ino)
                                *ret_ino = ino;
                        return 0;
                }
        }
        return -ENOENT;
}

int tns_proc_special_mapping(pid_t pid, const char *name, unsigned max_lines, uint64_t *ret_start, uint64_t *ret_end) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[512];
        unsigned n = 0;
        bool whole = true;
        int r;

        r = open_maps(pid, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                bool starts = whole;
                int at = 0;

                /* The rest of a long line (a long path) is no line: it
                 * could hold the text of one. */
                whole = strchr(line, '\n') != NULL;
                if (!starts)
                        continue;
                if (max_lines && ++n > max_lines)
                        return -E2BIG;
                /* "lo-hi perms offset dev inode" then spaces and the path. */
                if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %*u %n", &lo, &hi, &at) < 2 || at == 0)
                        continue;
                line[strcspn(line, "\n")] = '\0';
                if (strcmp(line + at, name) == 0) {
                        *ret_start = lo;
                        if (ret_end)
                                *ret_end = hi;
                        return 0;
                }
        }
        return -ENOENT;
}

int tns_proc_parse_maps_line(const char *line, uint64_t *ret_start, uint64_t *ret_offset, dev_t *ret_dev,
                             uint64_t *ret_ino) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;

        /* "lo-hi perms offset MAJ:MIN inode [path]", as show_map_vma()
         * writes it: the device in hex, the inode in decimal. */
        if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min, &ino) != 6)
                return -EBADMSG;
        *ret_start = lo;
        *ret_offset = off;
        *ret_dev = makedev(maj, min);
        *ret_ino = ino;
        return 0;
}

int tns_proc_find_file_mapping(pid_t pid, uint64_t offset, unsigned max_lines,
                               void *(*match)(dev_t dev, uint64_t ino, void *userdata), void *userdata,
                               uint64_t *ret_addr, void **ret_match) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[512], field[32];
        unsigned n = 0;
        int r;
        bool whole = true;

        /* The offset as show_map_vma() prints it: a cheap filter before
         * the parse, which tells the field from a path holding its text
         * (a JVM has hundreds of lines, and this runs per trapped call of
         * a process that moved namespace). */
        snprintf(field, sizeof(field), " %08" PRIx64 " ", offset);
        r = open_maps(pid, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f)) {
                uint64_t lo, off, ino;
                bool starts = whole;
                void *m;
                dev_t dev;

                /* The rest of a long line (a long path) is no line. */
                whole = strchr(line, '\n') != NULL;
                if (starts && max_lines && ++n > max_lines)
                        return -E2BIG;
                if (!starts || !strstr(line, field) || tns_proc_parse_maps_line(line, &lo, &off, &dev, &ino) < 0 ||
                    off != offset || ino == 0)
                        continue;
                m = match(dev, ino, userdata);
                if (m) {
                        *ret_addr = lo;
                        if (ret_match)
                                *ret_match = m;
                        return 0;
                }
        }
        return -ENOENT;
}

int tns_proc_start_time(pid_t pid, uint64_t *ret) {
        char path[64], buf[1024];
        const char *p;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        r = read_file(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        /* The command name may hold spaces and parentheses: fields are
         * counted after its last ')'. Field 3 (state) comes first. */
        p = strrchr(buf, ')');
        if (!p)
                return -EBADMSG;
        p++;
        for (int field = 3; field < 22; field++) {
                p = strchr(p + 1, ' ');
                if (!p)
                        return -EBADMSG;
        }
        return sscanf(p, " %" SCNu64, ret) == 1 ? 0 : -EBADMSG;
}
