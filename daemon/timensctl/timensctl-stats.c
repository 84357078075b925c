/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timensctl stats: what timensd has served, and how fast. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "syscall-table.h"
#include "timensctl.h"
#include "timens-proto.h"

static void help(void) {
        printf("Usage: timensctl stats [--json]\n"
               "\n"
               "Show timensd's counters: notifications served, failures, callers gone, vDSO\n"
               "injections, connections, and per syscall the calls and a latency histogram\n"
               "(from notification to reply; bucket 0 is < 1 us, bucket i is [2^(i-1), 2^i) us).\n");
}

/* The upper bound (us) of the bucket holding the q-th quantile. */
static uint64_t quantile_us(const uint64_t b[TNS_LATENCY_BUCKETS], uint64_t total, double q) {
        uint64_t seen = 0;

        for (int i = 0; i < TNS_LATENCY_BUCKETS; i++) {
                seen += b[i];
                if (seen > 0 && (double) seen >= q * (double) total)
                        return UINT64_C(1) << i;
        }
        return UINT64_C(1) << (TNS_LATENCY_BUCKETS - 1);
}

static void print_syscalls(const struct tns_supervisor_stats *s) {
        printf("\n%-16s %12s %10s %10s   histogram (us: count)\n", "SYSCALL", "CALLS", "p50 <=us", "p99 <=us");
        for (int i = 0; i < _TNS_SYS_MAX; i++) {
                uint64_t total = 0;

                for (int b = 0; b < TNS_LATENCY_BUCKETS; b++)
                        total += s->latency[i][b];
                printf("%-16s %12" PRIu64, tns_syscalls[i].name, s->per_syscall[i]);
                if (total == 0) {
                        printf("\n");
                        continue;
                }
                printf(" %10" PRIu64 " %10" PRIu64 "  ", quantile_us(s->latency[i], total, 0.5),
                       quantile_us(s->latency[i], total, 0.99));
                for (int b = 0; b < TNS_LATENCY_BUCKETS; b++)
                        if (s->latency[i][b])
                                printf(" <%" PRIu64 ":%" PRIu64, UINT64_C(1) << b, s->latency[i][b]);
                printf("\n");
        }
}

static void print_stats(const struct tns_stats_view *st) {
        const struct tns_supervisor_stats *s = &st->sup;

        printf("Notifications: %" PRIu64 " (replied %" PRIu64 ", callers gone %" PRIu64 ", failed %" PRIu64 ")\n",
               s->notifications, s->replied, s->vanished, s->failures);
        printf("   Namespaces: %u, listeners %u, sync wake-up %s\n", s->namespaces, s->listeners,
               s->sync_wakeup ? "yes" : "no");
        printf("         vDSO: %" PRIu64 " injected, %" PRIu64 " failed, %" PRIu64 " fallback calls, reads %s\n",
               s->vdso_injected, s->vdso_failed, s->vdso_fallbacks, s->vdso_reads[0] ? s->vdso_reads : "none");
        printf("               %" PRIu64 " started without it (traced by a debugger, or its path changed\n"
               "               after we read it): syscall path\n",
               s->vdso_syscall_path);
        printf("               %" PRIu64 " execs of a missing file (a PATH lookup) let through at once\n",
               s->execs_missing);
        printf("        Waits: %" PRIu64 " converted, %" PRIu64 " unconverted (held by a debugger)\n",
               s->waits_converted, s->waits_unconverted);
        printf("               %" PRIu64 " wait pages mapped by their program, %" PRIu64 " by single steps\n",
               s->wait_pages_tail, s->wait_pages_stepped);
        printf("   File times: %" PRIu64 " set to the namespace's now, %" PRIu64
               " to the host's (not the owner, or held by a debugger)\n",
               s->file_times_ns, s->file_times_host);
        printf("  Connections: %" PRIu64 " (%" PRIu64 " now, %" PRIu64 " refused at the cap), %" PRIu64
               " requests, %" PRIu64 " errors\n",
               st->server.connections, st->server.connections_now, st->server.rejected, st->server.requests,
               st->server.errors);
        printf("       Uptime: %" PRIu64 " s\n", st->server.uptime_ns / 1000000000);
        print_syscalls(s);
}

int verb_stats(int argc, char *argv[], struct ctl_options *o) {
        struct tns_request req = {.op = TNS_OP_STATS};
        _cleanup_json_ json_object *res = NULL;
        struct tns_stats_view st;
        int r;

        r = ctl_parse_common_only(argc, argv, o, "stats", help);
        if (r <= 0)
                return ctl_exit(r);
        if (optind != argc)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EINVAL, "stats takes no arguments"));
        r = ctl_request(o, &req, &res);
        if (r < 0)
                return ctl_exit(r);
        if (o->json) {
                ctl_print_json(res);
                return 0;
        }
        if (tns_stats_from_json(res, &st) < 0)
                return ctl_exit(tns_log_errno(&timensctl_log, LOG_ERR, EBADMSG, "timensd sent stats we cannot read"));
        print_stats(&st);
        return 0;
}
