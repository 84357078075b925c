/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the /proc/PID/maps line parser behind namespace
 * identity (lib/kernel/proc-util.c): any text parses or is refused, never read
 * past its end; what parses formats back to the same fields. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "proc-util.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t lo, off, ino, lo2, off2, ino2;
        dev_t dev, dev2;
        char *line, again[256];

        line = malloc(size + 1);
        if (!line)
                return 0;
        memcpy(line, data, size);
        line[size] = '\0';
        if (tns_proc_parse_maps_line(line, &lo, &off, &dev, &ino) == 0) {
                /* As show_map_vma() writes it, it reads back the same. */
                snprintf(again, sizeof(again), "%lx-%lx r--s %08lx %02x:%02x %lu /x\n", (unsigned long) lo,
                         (unsigned long) lo + 4096, (unsigned long) off, major(dev), minor(dev), (unsigned long) ino);
                CHECK(tns_proc_parse_maps_line(again, &lo2, &off2, &dev2, &ino2) == 0);
                CHECK(lo2 == lo && off2 == off && ino2 == ino);
                CHECK(major(dev2) == major(dev) && minor(dev2) == minor(dev));
        }
        free(line);
        return 0;
}
