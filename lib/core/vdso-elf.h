/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bounds-checked reader of x86-64 vDSO images: the kernel's, which the
 * injector looks into for the addresses of its functions, and ours, which
 * the build checks and the injector may edit. The image is a buffer (base,
 * size) holding the mapping from its ELF header on; it is foreign and
 * treated as hostile: every access is checked against the buffer and,
 * for what the dynamic table points at, against the first PT_LOAD, as
 * CRIU's criu/pie/util-vdso.c does with __ptr_oob. Nothing is written
 * except by tns_vdso_elf_hide(), and nothing is allocated but its copy
 * for an undo.
 *
 * Addresses follow the dynamic loaders that will read the image (glibc's
 * setup_vdso and dl_vdso_vsym, Go's runtime/vdso_linux.go, musl's
 * src/internal/vdso.c): a virtual address v is at image offset
 * v - p_vaddr + p_offset of the first PT_LOAD, and a symbol's "offset" is
 * its st_value translated the same way — base + offset is the function.
 *
 * Errors: -ENOEXEC for anything malformed, -ENOENT for a symbol that is
 * not there, -EOPNOTSUPP for a hash table the image lacks, -EINVAL for bad
 * arguments. */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* The version every x86-64 vDSO symbol carries (arch/x86/entry/vdso/vdso.lds.S). */
#define TNS_VDSO_VERSION "LINUX_2.6"

/* Which hash table a lookup goes through. ANY is what the loaders do:
 * DT_GNU_HASH if present (glibc, Go), else DT_HASH (musl's only choice). */
enum tns_vdso_hash {
        TNS_VDSO_HASH_ANY,
        TNS_VDSO_HASH_SYSV,
        TNS_VDSO_HASH_GNU,
};

/* A parsed image. Offsets are into the image; 0 means absent (offset 0 is
 * the ELF header, never a table). Valid as long as the image is. */
struct tns_vdso_elf {
        const uint8_t *image;
        size_t size;

        uint16_t machine;
        uint64_t phoff;
        uint16_t phnum;
        /* Section headers are not needed to use an image (the kernel's
         * are partly fake): shnum is 0 if they are absent or do not fit. */
        uint64_t shoff;
        uint16_t shnum, shstrndx;

        /* The first PT_LOAD, which every address is translated through;
         * [load_offset, load_offset + load_filesz) lies inside the buffer. */
        uint64_t load_vaddr, load_offset, load_filesz, load_memsz;
        uint32_t load_flags;
        unsigned n_load;

        /* PT_DYNAMIC: n_dyn entries before DT_NULL. */
        uint64_t dynamic;
        uint32_t dynamic_flags;
        unsigned n_dyn;

        uint64_t symtab, strtab, strsz;
        uint64_t versym, verdef;
        uint32_t verdefnum;
        uint32_t n_syms;

        uint64_t hash; /* DT_HASH */
        uint32_t sysv_nbucket, sysv_nchain;

        uint64_t gnu_hash; /* DT_GNU_HASH */
        uint32_t gnu_nbuckets, gnu_symoffset, gnu_bloom_size, gnu_bloom_shift;
};

struct tns_vdso_sym {
        const char *name; /* in the image, NUL-terminated inside the string table */
        const char *version; /* its version's name, NULL if unversioned */
        uint64_t value, size;
        uint64_t offset; /* the value as an image offset, UINT64_MAX if outside the load segment */
        uint16_t shndx;
        uint8_t type, bind, visibility;
};

/* Validates the headers, the load and dynamic segments and the tables the
 * dynamic table points at. */
int tns_vdso_elf_parse(const void *image, size_t size, struct tns_vdso_elf *ret);

/* The image offset of a defined global or weak symbol `name` of version
 * `version` (NULL: any version). Versions are matched as glibc and Go do:
 * by the symbol's DT_VERSYM index, the DT_VERDEF entry with that index,
 * its name and its vd_hash; an image without DT_VERSYM/DT_VERDEF matches
 * any version. A symbol that lies outside the load segment, is undefined
 * or absolute is not found. */
int tns_vdso_elf_lookup(const struct tns_vdso_elf *e, const char *name, const char *version, uint64_t *ret_offset);
int tns_vdso_elf_lookup_in(const struct tns_vdso_elf *e, enum tns_vdso_hash table, const char *name,
                           const char *version, uint64_t *ret_offset);

/* Raw access for checkers and tests, each entry bounds-checked. */
int tns_vdso_elf_phdr(const struct tns_vdso_elf *e, unsigned i, Elf64_Phdr *ret);
int tns_vdso_elf_dyn(const struct tns_vdso_elf *e, unsigned i, Elf64_Dyn *ret);
/* *ret_name is NULL if the section's name cannot be read. */
int tns_vdso_elf_section(const struct tns_vdso_elf *e, unsigned i, Elf64_Shdr *ret, const char **ret_name);
/* Dynamic symbol i, 0 <= i < n_syms. */
int tns_vdso_elf_symbol(const struct tns_vdso_elf *e, uint32_t i, struct tns_vdso_sym *ret);

/* Makes every dynamic symbol called `name` in a writable image invisible to
 * the loaders: undefined, local, no type, value 0 — glibc's check_match
 * skips a symbol of value 0, Go and musl one with st_shndx == SHN_UNDEF,
 * musl a local one too. Aliases are separate symbols: hide "getrandom" and
 * "__vdso_getrandom" both. Returns the number of symbols hidden, -ENOENT if
 * none, -ENOEXEC (the image unchanged) if the change would leave an image
 * that does not parse or still finds the name (a symbol table overlapping
 * the other structures: never a real vDSO). */
int tns_vdso_elf_hide(void *image, size_t size, const char *name);

/* The ELF (SysV) and GNU hash functions of the two tables. */
uint32_t tns_vdso_elf_sysv_hash(const char *name);
uint32_t tns_vdso_elf_gnu_hash(const char *name);
