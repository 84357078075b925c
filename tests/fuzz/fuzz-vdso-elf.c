/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for lib/core/vdso-elf.c, the reader of foreign vDSO images.
 * The input is an image. Whatever it holds, parsing, every lookup through
 * either hash table, every accessor and hiding a symbol must neither crash
 * nor read outside the input (an exact-size copy, so ASan sees one byte
 * too far), must return only the documented errors, and what they return
 * must point inside the image. The seeds (tests/fuzz/corpus/fuzz-vdso-elf)
 * are our own image built with both hash tables, with only one of each,
 * and cut short.
 *
 * Self-contained: it does not link the embedded image (vdso-image.o is
 * not among the fuzz rule's sources). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vdso-elf.h"
#include "fuzz-check.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
        "__vdso_clock_gettime",
        "clock_gettime",
        "__vdso_gettimeofday",
        "gettimeofday",
        "__vdso_time",
        "time",
        "__vdso_getcpu",
        "__vdso_getrandom",
        "getrandom",
        "LINUX_2.6",
        "",
};

static bool lookup_ok(int r) {
        return r == 0 || r == -ENOENT || r == -ENOEXEC || r == -EOPNOTSUPP;
}

static void check_lookups(const struct tns_vdso_elf *e) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                for (int t = TNS_VDSO_HASH_ANY; t <= TNS_VDSO_HASH_GNU; t++) {
                        uint64_t off = UINT64_MAX;
                        int r;

                        r = tns_vdso_elf_lookup_in(e, t, names[i], TNS_VDSO_VERSION, &off);
                        CHECK(lookup_ok(r));
                        CHECK(r != 0 || off < e->size);
                        CHECK(r == 0 || off == UINT64_MAX);
                        r = tns_vdso_elf_lookup_in(e, t, names[i], NULL, &off);
                        CHECK(lookup_ok(r));
                        CHECK(r != 0 || (off >= e->load_offset && off - e->load_offset < e->load_filesz));
                }
}

static void check_accessors(const struct tns_vdso_elf *e) {
        struct tns_vdso_sym s;
        const char *name;
        Elf64_Phdr p;
        Elf64_Shdr sh;
        Elf64_Dyn d;

        for (unsigned i = 0; i < e->phnum; i++)
                CHECK(tns_vdso_elf_phdr(e, i, &p) == 0);
        CHECK(tns_vdso_elf_phdr(e, e->phnum, &p) == -EINVAL);
        for (unsigned i = 0; i < e->n_dyn; i++)
                CHECK(tns_vdso_elf_dyn(e, i, &d) == 0 && d.d_tag != DT_NULL);
        for (unsigned i = 0; i < e->shnum; i++)
                if (tns_vdso_elf_section(e, i, &sh, &name) == 0 && name)
                        CHECK(strlen(name) < e->size);
        for (uint32_t i = 0; i < e->n_syms; i++) {
                int r = tns_vdso_elf_symbol(e, i, &s);

                CHECK(r == 0 || r == -ENOEXEC);
                if (r < 0)
                        continue;
                CHECK(strlen(s.name) < e->size);
                CHECK(!s.version || strlen(s.version) < e->size);
                CHECK(s.offset == UINT64_MAX || s.offset < e->size);
        }
}

/* Hiding a name leaves no symbol of that name to find. */
static void check_hide(const uint8_t *image, size_t size) {
        uint8_t *copy = malloc(size ? size : 1);
        struct tns_vdso_elf e;
        uint64_t off;
        int r;

        CHECK(copy);
        memcpy(copy, image, size);
        r = tns_vdso_elf_hide(copy, size, "clock_gettime");
        CHECK(r > 0 || r == -ENOENT || r == -ENOEXEC);
        if (r > 0) {
                CHECK(tns_vdso_elf_parse(copy, size, &e) == 0);
                for (int t = TNS_VDSO_HASH_ANY; t <= TNS_VDSO_HASH_GNU; t++)
                        CHECK(tns_vdso_elf_lookup_in(&e, t, "clock_gettime", NULL, &off) != 0);
                /* Nothing but symbol entries changed. */
                for (size_t i = 0; i < size; i++)
                        if (copy[i] != image[i])
                                CHECK(i >= e.symtab && i - e.symtab < (uint64_t) e.n_syms * sizeof(Elf64_Sym));
        }
        free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *image = malloc(size ? size : 1);
        struct tns_vdso_elf e;
        int r;

        if (!image)
                return 0;
        if (size > 0)
                memcpy(image, data, size);
        r = tns_vdso_elf_parse(image, size, &e);
        CHECK(r == 0 || r == -ENOEXEC);
        if (r == 0) {
                CHECK(e.image == image && e.size == size);
                CHECK(e.load_offset + e.load_filesz <= size);
                CHECK(e.symtab && e.strtab && (e.hash || e.gnu_hash));
                check_lookups(&e);
                check_accessors(&e);
                check_hide(image, size);
        }
        free(image);
        return 0;
}
