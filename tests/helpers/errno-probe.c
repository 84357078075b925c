/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* errno-probe: runs the cases of a table (tests/data/errno-cases.tsv) as
 * raw syscalls and prints, one line per case,
 *
 *     CASE RET ERRNO BUF
 *
 * RET is the return value ("ok" for any success when the row's check
 * column says so: time() and adjtimex() return values that differ from
 * run to run), ERRNO its name or 0, BUF whether any buffer the case
 * passed was modified ("same", "changed", or "-" without buffers). The
 * same table run on the host and under timensctl must print the same
 * lines: the namespace must fail exactly where the kernel fails, with the
 * same errno, and must not scribble on memory when it fails.
 *
 * The table's columns (tab separated; '#' starts a comment line):
 *
 *     case  syscall  arg0  arg1  check  [timens]
 *
 * syscall: clock_gettime clock_getres gettimeofday time clock_settime
 *          settimeofday adjtimex clock_adjtime unshare
 * args:    -  NULL  BAD (address 1)  KPTR (a kernel address)
 *          VALID (a writable page)  RO (a read-only page)
 *          EDGE (8 bytes before an unmapped page)
 *          TS:SEC:NSEC  TV:SEC:USEC  TZ:MINWEST:DST
 *          TX:MODES[:FIELD=VALUE...] (FIELD: tick freq offset sec usec
 *              status constant maxerror esterror)
 *          RO:TS:..., RO:TV:..., RO:TX:... (the same on a read-only page)
 *          PROCCPU:PID  THREADCPU:TID (CPU-time clock ids)
 *          FDCLOCK:FD  FDCLOCK:/path (a dynamic clock id of an fd, or of
 *              a file opened for the case)
 *          numbers (decimal, 0x hex, negative) and symbols (CLOCK_*,
 *          CLONE_*, ADJ_*), or'ed with '|'
 * check:   exact | ok | tz | timex: tz and timex print, after a success,
 *          the struct the call wrote into its last buffer (timex: the
 *          fields that do not move from one call to the next), which must
 *          be the host's as well
 * timens:  read by the bats test, not here: the expected line's fields
 *          under timensctl where the namespace differs from the host by
 *          design (clock_settime on the monotonic clocks, RFC style).
 *
 * Buffers are filled with a pattern before the call (and made read-only
 * after that for RO) and compared afterwards.
 *
 * The probe refuses to run with CAP_SYS_TIME or CAP_SYS_ADMIN: the table
 * holds valid clock_settime and settimeofday calls, which must fail with
 * EPERM, never move the host's clock. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <unistd.h>

#define PATTERN 0xa5
#define MAX_BUFS 2
#define KERNEL_ADDRESS UINT64_C(0xffff800000000000)

struct buf {
        unsigned char *map; /* two pages: the buffer, then an unmapped guard */
        unsigned char snapshot[4096];
};

struct call {
        const char *name;
        long nr;
        uint64_t arg[2];
        enum { CHECK_EXACT, CHECK_OK, CHECK_TZ, CHECK_TIMEX } check;
        struct buf bufs[MAX_BUFS];
        unsigned n_bufs;
        int fds[2];
        unsigned n_fds;
};

static size_t page_size;
static unsigned line_no;

__attribute__((format(printf, 1, 2))) static _Noreturn void die(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "errno-probe: line %u: ", line_no);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(2);
}

struct symbol {
        const char *name;
        int64_t value;
};

static const struct symbol symbols[] = {
        {"CLOCK_REALTIME", 0},
        {"CLOCK_MONOTONIC", 1},
        {"CLOCK_PROCESS_CPUTIME_ID", 2},
        {"CLOCK_THREAD_CPUTIME_ID", 3},
        {"CLOCK_MONOTONIC_RAW", 4},
        {"CLOCK_REALTIME_COARSE", 5},
        {"CLOCK_MONOTONIC_COARSE", 6},
        {"CLOCK_BOOTTIME", 7},
        {"CLOCK_REALTIME_ALARM", 8},
        {"CLOCK_BOOTTIME_ALARM", 9},
        {"CLOCK_TAI", 11},
        {"CLONE_NEWTIME", 0x80},
        {"CLONE_NEWIPC", 0x08000000},
        {"CLONE_NEWUTS", 0x04000000},
        {"ADJ_OFFSET", 0x0001},
        {"ADJ_FREQUENCY", 0x0002},
        {"ADJ_MAXERROR", 0x0004},
        {"ADJ_ESTERROR", 0x0008},
        {"ADJ_STATUS", 0x0010},
        {"ADJ_TIMECONST", 0x0020},
        {"ADJ_TAI", 0x0080},
        {"ADJ_SETOFFSET", 0x0100},
        {"ADJ_MICRO", 0x1000},
        {"ADJ_NANO", 0x2000},
        {"ADJ_TICK", 0x4000},
        /* The kernel's names for the adjtime() compatibility bits. */
        {"ADJ_ADJTIME", 0x8000},
        {"ADJ_OFFSET_READONLY", 0x2000},
        {"ADJ_OFFSET_SINGLESHOT", 0x8001},
        {"ADJ_OFFSET_SS_READ", 0xa001},
};

struct sysdesc {
        const char *name;
        long nr;
};

static const struct sysdesc syscalls[] = {
        {"clock_gettime", SYS_clock_gettime},
        {"clock_getres", SYS_clock_getres},
        {"gettimeofday", SYS_gettimeofday},
        {"time", SYS_time},
        {"clock_settime", SYS_clock_settime},
        {"settimeofday", SYS_settimeofday},
        {"adjtimex", SYS_adjtimex},
        {"clock_adjtime", SYS_clock_adjtime},
        {"unshare", SYS_unshare},
};

/* One number: signed decimal, or unsigned for values past INT64_MAX
 * (clock ids with garbage in the upper half). */
static uint64_t parse_number(const char *s) {
        char *end;
        uint64_t v;

        errno = 0;
        v = *s == '-' ? (uint64_t) strtoll(s, &end, 0) : strtoull(s, &end, 0);
        if (errno != 0 || end == s || *end != '\0')
                die("bad number '%s'", s);
        return v;
}

static uint64_t parse_atom(const char *s) {
        for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
                if (strcmp(s, symbols[i].name) == 0)
                        return (uint64_t) symbols[i].value;
        return parse_number(s);
}

/* A|B|C, each a symbol or a number. */
static uint64_t parse_value(const char *s) {
        char copy[256], *p = copy, *atom;
        uint64_t v = 0;

        if (strlen(s) >= sizeof(copy))
                die("value too long: '%s'", s);
        strcpy(copy, s);
        while ((atom = strsep(&p, "|")))
                v |= parse_atom(atom);
        return v;
}

/* The kernel's clock ids for CPU-time and dynamic clocks
 * (include/linux/posix-timers_types.h: MAKE_PROCESS_CPUCLOCK, FD_TO_CLOCKID). */
static uint64_t cpu_clock(int64_t pid, bool thread) {
        return (uint64_t) (int64_t) (int32_t) ((~(uint32_t) pid << 3) | (thread ? 4 : 0) | 2);
}

static uint64_t fd_clock(struct call *c, const char *spec) {
        int fd;

        if (spec[0] == '/') {
                fd = open(spec, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        die("cannot open '%s'", spec);
                c->fds[c->n_fds++] = fd;
        } else
                fd = (int) parse_number(spec);
        return (uint64_t) (int64_t) (int32_t) ((~(uint32_t) fd << 3) | 3);
}

static struct buf *new_buf(struct call *c) {
        struct buf *b = &c->bufs[c->n_bufs++];

        b->map = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->map == MAP_FAILED)
                die("mmap: %s", strerror(errno));
        memset(b->map, PATTERN, page_size);
        if (mprotect(b->map + page_size, page_size, PROT_NONE) < 0)
                die("mprotect: %s", strerror(errno));
        return b;
}

struct k_pair {
        int64_t a, b; /* timespec and timeval as the x86-64 kernel has them */
};

static void fill_pair(struct buf *b, const char *spec) {
        char copy[128], *p = copy, *a, *v;

        if (strlen(spec) >= sizeof(copy))
                die("too long: '%s'", spec);
        strcpy(copy, spec);
        a = strsep(&p, ":");
        v = strsep(&p, ":");
        if (!a || !v || p)
                die("expected two fields: '%s'", spec);
        memcpy(b->map, &(struct k_pair){(int64_t) parse_number(a), (int64_t) parse_number(v)}, sizeof(struct k_pair));
}

static void fill_tz(struct buf *b, const char *spec) {
        char copy[128], *p = copy, *w, *d;
        struct timezone tz;

        if (strlen(spec) >= sizeof(copy))
                die("too long: '%s'", spec);
        strcpy(copy, spec);
        w = strsep(&p, ":");
        d = strsep(&p, ":");
        if (!w || !d || p)
                die("expected MINWEST:DST: '%s'", spec);
        tz = (struct timezone){(int) parse_number(w), (int) parse_number(d)};
        memcpy(b->map, &tz, sizeof(tz));
}

static void set_timex_field(struct timex *tx, const char *field) {
        const char *eq = strchr(field, '=');
        size_t n = eq ? (size_t) (eq - field) : 0;
        long v;

        if (!eq)
                die("expected FIELD=VALUE: '%s'", field);
        v = (long) parse_number(eq + 1);
#define FIELD(name, member)                                                                                            \
        if (n == strlen(name) && strncmp(field, name, n) == 0) {                                                       \
                tx->member = v;                                                                                        \
                return;                                                                                                \
        }
        FIELD("tick", tick);
        FIELD("freq", freq);
        FIELD("offset", offset);
        FIELD("sec", time.tv_sec);
        FIELD("usec", time.tv_usec);
        FIELD("status", status);
        FIELD("constant", constant);
        FIELD("maxerror", maxerror);
        FIELD("esterror", esterror);
#undef FIELD
        die("unknown timex field '%s'", field);
}

/* The rest of the timex is zero, as a program that memsets it has it. */
static void fill_timex(struct buf *b, const char *spec) {
        char copy[256], *p = copy, *f;
        struct timex tx = {};

        if (strlen(spec) >= sizeof(copy))
                die("too long: '%s'", spec);
        strcpy(copy, spec);
        tx.modes = (unsigned) parse_value(strsep(&p, ":"));
        while ((f = strsep(&p, ":")))
                set_timex_field(&tx, f);
        memcpy(b->map, &tx, sizeof(tx));
}

/* A buffer with contents, optionally read-only afterwards. */
static uint64_t content_buf(struct call *c, const char *spec, bool ro) {
        struct buf *b = new_buf(c);

        if (strncmp(spec, "TS:", 3) == 0 || strncmp(spec, "TV:", 3) == 0)
                fill_pair(b, spec + 3);
        else if (strncmp(spec, "TZ:", 3) == 0)
                fill_tz(b, spec + 3);
        else if (strncmp(spec, "TX:", 3) == 0)
                fill_timex(b, spec + 3);
        else if (strcmp(spec, "VALID") != 0 && strcmp(spec, "RO") != 0)
                die("unknown buffer '%s'", spec);
        if (ro && mprotect(b->map, page_size, PROT_READ) < 0)
                die("mprotect: %s", strerror(errno));
        return (uint64_t) (uintptr_t) b->map;
}

static bool is_buffer(const char *tok) {
        return strcmp(tok, "VALID") == 0 || strcmp(tok, "RO") == 0 || strncmp(tok, "RO:", 3) == 0 ||
               strncmp(tok, "TS:", 3) == 0 || strncmp(tok, "TV:", 3) == 0 || strncmp(tok, "TZ:", 3) == 0 ||
               strncmp(tok, "TX:", 3) == 0;
}

static uint64_t parse_arg(struct call *c, const char *tok) {
        if (strcmp(tok, "-") == 0 || strcmp(tok, "NULL") == 0)
                return 0;
        if (strcmp(tok, "BAD") == 0)
                return 1;
        if (strcmp(tok, "KPTR") == 0)
                return KERNEL_ADDRESS;
        if (strcmp(tok, "EDGE") == 0)
                return (uint64_t) (uintptr_t) (new_buf(c)->map + page_size - 8);
        if (strcmp(tok, "RO") == 0)
                return content_buf(c, tok, true);
        if (strncmp(tok, "RO:", 3) == 0)
                return content_buf(c, tok + 3, true);
        if (is_buffer(tok))
                return content_buf(c, tok, false);
        if (strncmp(tok, "PROCCPU:", 8) == 0)
                return cpu_clock((int64_t) parse_number(tok + 8), false);
        if (strncmp(tok, "THREADCPU:", 10) == 0)
                return cpu_clock((int64_t) parse_number(tok + 10), true);
        if (strncmp(tok, "FDCLOCK:", 8) == 0)
                return fd_clock(c, tok + 8);
        return parse_value(tok);
}

static long parse_syscall(const char *name) {
        for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
                if (strcmp(name, syscalls[i].name) == 0)
                        return syscalls[i].nr;
        die("unknown syscall '%s'", name);
}

static void release(struct call *c) {
        for (unsigned i = 0; i < c->n_bufs; i++)
                munmap(c->bufs[i].map, 2 * page_size);
        for (unsigned i = 0; i < c->n_fds; i++)
                close(c->fds[i]);
}

static const char *buffer_state(const struct call *c) {
        if (c->n_bufs == 0)
                return "-";
        for (unsigned i = 0; i < c->n_bufs; i++)
                if (memcmp(c->bufs[i].map, c->bufs[i].snapshot, page_size) != 0)
                        return "changed";
        return "same";
}

/* What a successful call wrote, for the checks that look at it. maxerror,
 * esterror and the time move between two calls, and so does offset while
 * an NTP daemon slews the clock; the rest is the host's NTP state, which a
 * namespace reports unchanged. */
static void print_contents(const struct call *c) {
        const unsigned char *last = c->n_bufs ? c->bufs[c->n_bufs - 1].map : NULL;
        struct timezone tz;
        struct timex tx;

        if (!last)
                die("check needs a buffer");
        if (c->check == CHECK_TZ) {
                memcpy(&tz, last, sizeof(tz));
                printf(" tz=%d,%d", tz.tz_minuteswest, tz.tz_dsttime);
                return;
        }
        memcpy(&tx, last, sizeof(tx));
        printf(" modes=%#x,freq=%ld,status=%#x,constant=%ld,precision=%ld,tolerance=%ld,tick=%ld,"
               "tai=%d,usec_valid=%d",
               tx.modes, tx.freq, (unsigned) tx.status, tx.constant, tx.precision, tx.tolerance, tx.tick, tx.tai,
               tx.time.tv_usec >= 0 && tx.time.tv_usec < ((tx.status & STA_NANO) ? 1000000000 : 1000000));
}

static void run_case(struct call *c) {
        long r;
        int e;

        for (unsigned i = 0; i < c->n_bufs; i++)
                memcpy(c->bufs[i].snapshot, c->bufs[i].map, page_size);
        errno = 0;
        r = syscall(c->nr, c->arg[0], c->arg[1], 0, 0, 0, 0);
        e = r < 0 ? errno : 0;
        if (r >= 0 && c->check != CHECK_EXACT)
                printf("%s ok 0 %s", c->name, buffer_state(c));
        else
                printf("%s %ld %s %s", c->name, r, e ? strerrorname_np(e) : "0", buffer_state(c));
        if (r >= 0 && (c->check == CHECK_TZ || c->check == CHECK_TIMEX))
                print_contents(c);
        putchar('\n');
        fflush(stdout);
}

/* Splits a table line into at least 5 tab-separated fields. */
static void run_line(char *line) {
        char *p = line, *f[5];
        struct call c = {};

        for (int i = 0; i < 5; i++) {
                f[i] = strsep(&p, "\t");
                if (!f[i] || !*f[i])
                        die("expected 5 tab-separated fields");
        }
        c.name = f[0];
        c.nr = parse_syscall(f[1]);
        c.arg[0] = parse_arg(&c, f[2]);
        c.arg[1] = parse_arg(&c, f[3]);
        if (strcmp(f[4], "exact") == 0)
                c.check = CHECK_EXACT;
        else if (strcmp(f[4], "ok") == 0)
                c.check = CHECK_OK;
        else if (strcmp(f[4], "tz") == 0)
                c.check = CHECK_TZ;
        else if (strcmp(f[4], "timex") == 0)
                c.check = CHECK_TIMEX;
        else
                die("check must be exact, ok, tz or timex, not '%s'", f[4]);
        run_case(&c);
        release(&c);
}

/* capget without libcap: version 3, two 32-bit words. */
static bool has_cap(int cap) {
        struct {
                uint32_t version;
                int pid;
        } hdr = {0x20080522, 0};
        struct {
                uint32_t effective, permitted, inheritable;
        } data[2] = {};

        if (syscall(SYS_capget, &hdr, data) < 0)
                return true; /* unknown: assume the worst */
        return data[cap / 32].effective & (1U << (cap % 32));
}

int main(int argc, char *argv[]) {
        char *line = NULL;
        size_t size = 0;
        ssize_t n;
        FILE *f;

        if (argc != 2) {
                fprintf(stderr, "Usage: errno-probe TABLE.tsv\n");
                return 2;
        }
        if (has_cap(25 /* CAP_SYS_TIME */) || has_cap(21 /* CAP_SYS_ADMIN */)) {
                fprintf(stderr, "errno-probe: refusing to run with CAP_SYS_TIME or CAP_SYS_ADMIN: the table's "
                                "valid settime calls must fail, not set a clock (use setpriv or unshare -U)\n");
                return 2;
        }
        page_size = (size_t) sysconf(_SC_PAGESIZE);
        if (page_size != sizeof(((struct buf *) NULL)->snapshot)) {
                fprintf(stderr, "errno-probe: expects 4 KiB pages\n");
                return 2;
        }
        f = fopen(argv[1], "re");
        if (!f) {
                fprintf(stderr, "errno-probe: %s: %s\n", argv[1], strerror(errno));
                return 2;
        }
        while ((n = getline(&line, &size, f)) >= 0) {
                line_no++;
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                if (n == 0 || line[0] == '#')
                        continue;
                run_line(line);
        }
        free(line);
        fclose(f);
        return 0;
}
