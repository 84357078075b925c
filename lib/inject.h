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

/* The injected code (inject-blob.c). */
extern const unsigned char tns_inject_blob[], tns_inject_blob_end[];
