// SPDX-License-Identifier: GPL-2.0-only
/* timensd's watch on execs (see timensd(8), "ENTRANTS"): a process that
 * enters a supervised container's pid namespace from outside (runc exec,
 * crun exec, nsenter) is not under the container's seccomp filter. At its
 * exec — sched_process_exec fires once the new program is loaded, before
 * the task returns to user space — it is stopped with SIGSTOP, which it
 * takes on that return, before its first instruction; timensd, told
 * through the ring buffer, seizes it, gives it the filter and swallows the
 * SIGSTOP.
 *
 * GPL: the kernel lets only GPL-compatible programs use tracing helpers,
 * and LGPL is not a license string it knows (include/linux/license.h). */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define SIGSTOP 19
#define PT_PTRACED 0x1

/* Filled by timensd: pid namespace inode -> timens namespace id. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 4096);
        __type(key, __u32);
        __type(value, __u64);
} supervised_pidns SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 64 * 1024);
} entrants SEC(".maps");

/* The event: keep in step with struct tns_entrant_event (timensd-entrants.c). */
struct entrant_event {
        __u32 pid;
        __u32 pidns;
        __u64 ns_id;
};

/* timensd's tgid, set before load: an exec it traces already (a member of
 * a namespace, held at its exec by the supervisor) is its business. */
const volatile __u32 tracer_tgid = 0;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) {
        struct entrant_event *e;
        __u32 pidns;
        __u64 *ns_id;

        /* The namespace its children are born in: after setns(CLONE_NEWPID)
         * and fork, the entrant's own. */
        pidns = BPF_CORE_READ(p, nsproxy, pid_ns_for_children, ns.inum);
        ns_id = bpf_map_lookup_elem(&supervised_pidns, &pidns);
        if (!ns_id)
                return 0;
        if ((BPF_CORE_READ(p, ptrace) & PT_PTRACED) && BPF_CORE_READ(p, parent, tgid) == tracer_tgid)
                return 0;
        /* The task is current here: the signal is its own, delivered on its
         * way back to user space. */
        if (bpf_send_signal(SIGSTOP) < 0)
                return 0;
        e = bpf_ringbuf_reserve(&entrants, sizeof(*e), 0);
        if (!e)
                return 0; /* timensd is behind: the task stays stopped until it looks (it polls) */
        e->pid = BPF_CORE_READ(p, tgid);
        e->pidns = pidns;
        e->ns_id = *ns_id;
        bpf_ringbuf_submit(e, 0);
        return 0;
}

char LICENSE[] SEC("license") = "GPL";
