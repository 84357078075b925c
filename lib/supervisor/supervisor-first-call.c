/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A program that starts without our image, and still must never read the
 * host's clock: its exec could not be seized (strace, gdb or any other
 * debugger traces it), or the timensd that held it died before its exec
 * stop. Such a program has the kernel's vDSO, which reads the host's
 * clocks without a syscall.
 *
 * Its first arch_prctl(ARCH_SET_FS) (glibc, musl and Go set their thread
 * pointer before any clock read) is trapped: the program is then
 * single-threaded and stopped in a call of ours, so its memory can be
 * changed under it without a ptrace stop its debugger would see. Its
 * kernel vDSO's clock functions become syscall stubs
 * (lib/kernel/vdso-syscall-path.h): every read is then an emulated
 * syscall, as with `timensctl run --no-vdso`. Slower, never wrong. A
 * program with our image (the usual case: its marker call came first)
 * goes on at once. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "proc-util.h"
#include "supervisor-internal.h"
#include "util.h"
#include "vdso-syscall-path.h"

/* The program's own, its interpreter's and every library's segments
 * (four or five each), its stack, heap, vvar and vDSO: a program that
 * needs hundreds of libraries still has room. */
#define FIRST_CALL_MAX_MAPS 2048

void supervisor_first_call_injected(struct tns_supervisor *s, pid_t tid) {
        s->injected[s->injected_next++ % TNS_RECENT_INJECTED] = tid;
}

/* A program's entry goes with its exec (whatever pid it has next): an
 * entry that outlived its program, or that a program made for itself with
 * a marker call of its own, must not spare the next program there. */
void supervisor_first_call_exec(struct tns_supervisor *s, pid_t tid, pid_t tgid) {
        for (unsigned i = 0; i < TNS_RECENT_INJECTED; i++)
                if (s->injected[i] == tid || s->injected[i] == tgid)
                        s->injected[i] = 0;
}

static bool injected_lately(const struct tns_supervisor *s, pid_t tid) {
        for (unsigned i = 0; i < TNS_RECENT_INJECTED; i++)
                if (s->injected[i] == tid)
                        return true;
        return false;
}

/* A thread that is not its group's leader has a sibling (a runtime that
 * sets each new thread's pointer this way), so nothing is changed under
 * it; pidfd_open() says so in a microsecond. */
static bool group_leader(pid_t tid) {
        _cleanup_close_ int fd = (int) syscall(SYS_pidfd_open, tid, 0);

        return fd >= 0;
}

int64_t supervisor_first_call(struct listener *l, const struct seccomp_notif *req) {
        struct tns_supervisor *s = l->s;
        const struct tns_vdso_host *h = s->vdso;
        const struct tns_log_ctx ctx = {.pid = req->pid, .syscall = "arch_prctl"};
        _cleanup_close_ int mem = -EBADF;
        struct tns_proc_status st;
        uint64_t base;
        bool image = false;
        int r;

        /* Looked at once per program (and exec): a program calling it
         * in a loop costs a lookup in a table. A program at its start has
         * a few dozen mappings; one with more than FIRST_CALL_MAX_MAPS is
         * not at its start, and is not read to the end on the loop that
         * serves every namespace (nor is a new child of it, each time). */
        if (!h || !h->stubbable || !group_leader(req->pid) || injected_lately(s, req->pid) ||
            !supervisor_image_first_call(s, req->pid, FIRST_CALL_MAX_MAPS, &image) || image)
                return TNS_REPLY_CONTINUE;
        /* Its kernel vDSO: the mapping the kernel names so (the auxv, even
         * the kernel's copy, is the program's to change: PR_SET_MM_MAP). */
        if (tns_proc_special_mapping(req->pid, "[vdso]", FIRST_CALL_MAX_MAPS, &base, NULL) < 0)
                return TNS_REPLY_CONTINUE;
        /* Another thread could be in the vDSO's code as it changes: only a
         * program whose one thread is the caller (always so at its start),
         * sharing its memory with no other process (a CLONE_VM child is
         * not counted in Threads: its parent is the usual sharer). */
        if (tns_proc_status(req->pid, &st) < 0 || st.threads != 1 || tns_proc_shares_vm(req->pid, st.ppid)) {
                tns_log_full(&s->log, LOG_DEBUG, 0, &ctx,
                             "A program with threads, or sharing its memory, and without our vDSO keeps the kernel's");
                return TNS_REPLY_CONTINUE;
        }
        mem = tns_proc_open_mem(req->pid);
        if (mem < 0)
                return TNS_REPLY_CONTINUE;
        /* Opened before the check: mem is the caller's memory for good,
         * whatever its pid is by now. */
        if (supervisor_id_valid(l->fd, req->id) < 0)
                return TNS_REPLY_CONTINUE;
        r = tns_vdso_syscall_path(h, mem, base);
        if (r > 0) {
                s->stats.vdso_syscall_path++;
                tns_log_full(&s->log, LOG_DEBUG, 0, &ctx,
                             "A program started without our vDSO (traced by a debugger?): its clock reads now "
                             "take the syscall path");
        } else if (r < 0 && supervisor_id_valid(l->fd, req->id) >= 0)
                /* What the program did to its own memory (a vDSO unmapped,
                 * or not this host's): debug level, it cannot flood the
                 * log with its calls. */
                tns_log_full(&s->log, LOG_DEBUG, r, &ctx,
                             "Failed to turn the kernel vDSO of a program without ours into syscalls, its vDSO "
                             "reads are the host's: %m");
        return TNS_REPLY_CONTINUE;
}
