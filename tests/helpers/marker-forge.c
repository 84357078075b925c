/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* marker-forge PROG [ARG...]: makes the exec tail's marker call itself
 * (sysinfo(NULL, TNS_EXEC_MARKER, ...), inject.h) over a page of its own
 * that carries the offsets page's magic, so that the supervisor takes it
 * for a program that got our image; then execs PROG. What PROG reads must
 * not depend on it (tests/bats/vdso.bats): a program is judged by its own
 * exec, never by what its predecessor under the same pid said. Exits 2 if
 * the marker call was refused or the exec failed. */
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inject.h"
#include "ns.h"
#include "offsets-page.h"

int main(int argc, char *argv[]) {
        uint64_t slot = 0;
        uint8_t *base;

        if (argc < 2) {
                fprintf(stderr, "usage: marker-forge PROG [ARG...]\n");
                return 2;
        }
        base = mmap(NULL, TNS_MEMFD_IMAGE + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
                return 2;
        *(uint64_t *) (base + TNS_MEMFD_OFFSETS_PAGE) = TNS_PAGE_MAGIC;
        if (syscall(SYS_sysinfo, 0, TNS_EXEC_MARKER, (uintptr_t) base, (uintptr_t) base, (uintptr_t) &slot,
                    getauxval(AT_SYSINFO_EHDR)) != 0) {
                perror("marker-forge: the marker call");
                return 2;
        }
        execv(argv[1], argv + 1);
        perror("marker-forge: exec");
        return 2;
}
