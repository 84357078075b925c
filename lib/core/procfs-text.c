/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "procfs-text.h"
#include "time-util.h"

/* The second field of the host's uptime line: digits '.' digits, then
 * '\n' or the end. Returns its start and length, or NULL. */
static const char *idle_field(const char *line, size_t *ret_len) {
        const char *p = strchr(line, ' '), *q;

        if (!p)
                return NULL;
        q = ++p;
        while (*q >= '0' && *q <= '9')
                q++;
        if (q == p || *q != '.')
                return NULL;
        q++;
        while (*q >= '0' && *q <= '9')
                q++;
        if (*q != '\0' && *q != '\n')
                return NULL;
        *ret_len = (size_t) (q - p);
        return *ret_len <= 24 ? p : NULL;
}

ssize_t tns_procfs_uptime(const struct timespec *boottime, const char *host_uptime, char *buf, size_t size) {
        const char *idle;
        size_t idle_len;
        int n;

        if (boottime->tv_sec < 0 || boottime->tv_nsec < 0 || boottime->tv_nsec >= TNS_NSEC_PER_SEC)
                return -EINVAL;
        idle = idle_field(host_uptime, &idle_len);
        if (!idle)
                return -EINVAL;
        n = snprintf(buf, size, "%" PRId64 ".%02ld %.*s\n", (int64_t) boottime->tv_sec,
                     (long) (boottime->tv_nsec / (TNS_NSEC_PER_SEC / 100)), (int) idle_len, idle);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return n;
}

int tns_procfs_btime(const struct timespec *realtime, const struct timespec *boottime, int64_t *ret) {
        int64_t d;
        int r;

        /* Both clocks are within [0, KTIME_MAX] ns in any namespace
         * (tns_offset_check), so this fits; -ERANGE guards the rest. */
        r = tns_ts_diff_ns(realtime, boottime, &d);
        if (r < 0)
                return r;
        *ret = tns_ns_to_ts(d).tv_sec;
        return 0;
}

/* The "btime " line of /proc/stat: at the start of the text or after a
 * newline, followed by digits and a newline. */
static const char *find_btime(const char *s, size_t len, size_t *ret_value_len) {
        static const char key[] = "btime ";
        const size_t klen = sizeof(key) - 1;

        for (size_t i = 0; i + klen <= len; i++) {
                size_t j;

                if ((i > 0 && s[i - 1] != '\n') || memcmp(s + i, key, klen) != 0)
                        continue;
                for (j = i + klen; j < len && s[j] >= '0' && s[j] <= '9'; j++)
                        ;
                if (j == i + klen || (j < len && s[j] != '\n'))
                        return NULL;
                *ret_value_len = j - (i + klen);
                return s + i + klen;
        }
        return NULL;
}

ssize_t tns_procfs_stat(const char *host_stat, size_t len, int64_t btime, char *buf, size_t size) {
        const char *value;
        size_t value_len, head, tail;
        char num[24];
        int n;

        value = find_btime(host_stat, len, &value_len);
        if (!value)
                return -EINVAL;
        /* The kernel prints it as an unsigned long long. */
        n = snprintf(num, sizeof(num), "%llu", (unsigned long long) btime);
        head = (size_t) (value - host_stat);
        tail = len - head - value_len;
        if (head + (size_t) n + tail + 1 > size)
                return -ENOBUFS;
        memcpy(buf, host_stat, head);
        memcpy(buf + head, num, (size_t) n);
        memcpy(buf + head + (size_t) n, value + value_len, tail);
        buf[head + (size_t) n + tail] = '\0';
        return (ssize_t) (head + (size_t) n + tail);
}

long tns_sysinfo_uptime(const struct timespec *boottime) {
        return (long) boottime->tv_sec + (boottime->tv_nsec ? 1 : 0);
}

/* One space-separated field of a mountinfo line into out (size bytes),
 * its \ooo escapes undone; *p moves past it. false if there is none. */
static bool mountinfo_field(const char **p, char *out, size_t size) {
        const char *s = *p;
        size_t n = 0;

        while (*s == ' ')
                s++;
        if (*s == '\0' || *s == '\n')
                return false;
        for (; *s && *s != ' ' && *s != '\n'; s++) {
                char c = *s;

                if (c == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        c = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                }
                if (n + 1 >= size)
                        return false;
                out[n++] = c;
        }
        out[n] = '\0';
        *p = s;
        return true;
}

size_t tns_mountinfo_proc_dirs(const char *mountinfo, char (*ret)[4096], size_t max) {
        size_t count = 0;

        for (const char *line = mountinfo, *next; line && *line; line = next) {
                char field[4096], point[4096], root[4096];
                const char *p = line;
                bool shared = false, ok = true, dup = false;

                next = strchr(line, '\n');
                next = next ? next + 1 : NULL;

                /* id, parent, major:minor, root, mount point */
                for (int i = 0; i < 5 && ok; i++)
                        ok = mountinfo_field(&p, i == 4 ? point : i == 3 ? root : field, sizeof(field));
                /* A bind of a part of proc (runc and crun make read-only
                 * ones of /proc/sys, /proc/irq...: root /sys, ...) is not a
                 * /proc: it has no uptime to cover. */
                if (!ok || strcmp(root, "/") != 0 || !mountinfo_field(&p, field, sizeof(field))) /* options */
                        continue;
                while ((ok = mountinfo_field(&p, field, sizeof(field))) && strcmp(field, "-") != 0)
                        if (strncmp(field, "shared:", 7) == 0)
                                shared = true;
                if (!ok || !mountinfo_field(&p, field, sizeof(field)) || strcmp(field, "proc") != 0 || shared)
                        continue;
                for (size_t i = 0; i < count; i++)
                        dup = dup || strcmp(ret[i], point) == 0;
                if (dup || count >= max)
                        continue;
                memcpy(ret[count++], point, strlen(point) + 1);
        }
        return count;
}

/* One field of a timens_offsets line: a decimal integer, optionally
 * negative, ended by a blank or the line's end. */
static int offsets_field(const char **p, const char *end, int64_t *ret) {
        const char *s = *p;
        bool neg = false;
        int64_t v = 0;

        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s < end && *s == '-')
                neg = true, s++;
        if (s == end || *s < '0' || *s > '9')
                return -EINVAL;
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
                if (v > (INT64_MAX - (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (*s - '0');
        }
        *ret = neg ? -v : v;
        *p = s;
        return 0;
}

int tns_timens_offsets_parse(const char *text, size_t len, int64_t ret[3]) {
        const char *p = text, *end = text + len;
        int64_t out[3] = {};

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end, *name = p;
                int64_t sec, nsec;
                size_t n;
                int c, r;

                while (name < eol && (*name == ' ' || *name == '\t'))
                        name++;
                if (name == eol) {
                        p = eol + 1;
                        continue;
                }
                for (n = 0; name + n < eol && name[n] != ' ' && name[n] != '\t'; n++)
                        ;
                /* The kernel writes names; a writer may give numbers. */
                if ((n == 9 && memcmp(name, "monotonic", 9) == 0) || (n == 1 && name[0] == '1'))
                        c = 0;
                else if ((n == 8 && memcmp(name, "boottime", 8) == 0) || (n == 1 && name[0] == '7'))
                        c = 1;
                else
                        return -EINVAL;
                p = name + n;
                r = offsets_field(&p, eol, &sec);
                if (r < 0)
                        return r;
                r = offsets_field(&p, eol, &nsec);
                if (r < 0)
                        return r;
                while (p < eol && (*p == ' ' || *p == '\t'))
                        p++;
                if (p != eol || nsec < 0 || nsec >= TNS_NSEC_PER_SEC)
                        return -EINVAL;
                if (sec > TNS_KTIME_SEC_MAX || sec < -TNS_KTIME_SEC_MAX)
                        return -ERANGE;
                r = tns_ts_to_ns(&(struct timespec){.tv_sec = (time_t) sec, .tv_nsec = (long) nsec}, &out[c]);
                if (r < 0)
                        return -ERANGE;
                p = eol + 1;
        }
        memcpy(ret, out, sizeof(out));
        return 0;
}
