/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vDSO injection at exec. For an execve/execveat notification of a member,
 * the supervisor seizes the caller (PTRACE_SEIZE with TRACEEXEC), adds the
 * namespace's memfd to it (SECCOMP_IOCTL_NOTIF_ADDFD, so it survives the
 * exec), interrupts it (so that a failed exec, which has no exec event,
 * still stops) and lets the call go on. At the exec stop, before the new
 * program runs an instruction of its own, it maps the memfd (parameter
 * page, offsets page, image), fills the parameter page, points
 * AT_SYSINFO_EHDR at our image and detaches: TracerPid is 0 again, and
 * debuggers work inside. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "offsets-page.h"

struct tns_vdso_host;

/* Where the pointer arrays at the top of a new program's stack put the
 * auxiliary vector: parsed from the words read at its stack pointer.
 * Returns 0 and the byte offset (from the stack pointer) of the
 * AT_SYSINFO_EHDR value with that value, -ENOENT if the vector has none
 * (vdso=0), -EAGAIN if more words are needed (n too small), -EBADMSG if it
 * is malformed. Pure, for unit tests and the fuzzer. */
int tns_auxv_find_sysinfo(const uint64_t *words, size_t n, size_t *ret_offset, uint64_t *ret_value);

/* The parameter page for a process whose kernel vDSO is at kernel_base. */
void tns_vdso_params_fill(const struct tns_vdso_host *h, uint64_t kernel_base, struct tns_vdso_params *ret);

/* The injected code (inject-blob.c): the blob, run under ptrace up to its
 * int3, and the tail, run with no tracer (what a new program gets where
 * its kernel vDSO has room for it: a supervisor killed meanwhile cannot
 * leave it stopped at a breakpoint no one will handle). */
extern const unsigned char tns_inject_blob[], tns_inject_blob_end[];
extern const unsigned char tns_inject_tail[], tns_inject_tail_end[];
/* The tail's call: sysinfo(NULL, TNS_EXEC_MARKER, base, second mapping,
 * address of the AT_SYSINFO_EHDR value, kernel vDSO base). */
#define TNS_EXEC_MARKER UINT64_C(0x544e5345584543) /* "TNSEXEC" */
/* Room the tail needs at the end of the kernel vDSO. */
#define TNS_INJECT_TAIL_MAX 160
