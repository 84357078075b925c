/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "inject.h"
#include "proc-util.h"
#include "ptrace-util.h"
#include "tail-send.h"
#include "util.h"
#include "vdso-host.h"

int tns_tail_send(const struct tns_vdso_host *h, pid_t tid, size_t offset, const unsigned char *code, size_t n,
                  const struct user_regs_struct *regs, struct user_regs_struct *set) {
        _cleanup_close_ int mem = -EBADF;
        uint64_t base = 0;
        int r;

        if (!h->tail || offset + n > TNS_INJECT_TAIL_MAX || regs->rip < 2 || regs->cs != 0x33 ||
            !tns_ptrace_syscall_insn_at(tid, regs->rip - 2))
                return -ENOENT;
        r = tns_proc_special_mapping(tid, "[vdso]", 0, &base, NULL);
        if (r < 0)
                return r;
        mem = tns_proc_open_mem(tid);
        if (mem < 0)
                return mem;
        /* The host's vDSO, with the padding where the code goes. */
        if (tns_vdso_host_at(h, mem, base) < 0)
                return -ENOENT;
        if (pwrite(mem, code, n, (off_t) (base + h->tail + offset)) != (ssize_t) n)
                return -EIO;
        set->rip = base + h->tail + offset;
        return ptrace(PTRACE_SETREGS, tid, 0, set) < 0 ? negative_errno() : 0;
}
