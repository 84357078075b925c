/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/core/vdso-elf.c: parses our embedded image and this process's kernel vDSO,
 * finds what glibc finds (dlvsym), and survives every truncation and every
 * single-bit flip of the tables an image is read through — run it under
 * ASan (make ASAN=1): the copies are exact-size heap buffers, so a read
 * one byte too far is caught. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util.h"
#include "vdso-elf.h"
#include "vdso-image.h"

static const char *const exported[] = {
        "__vdso_clock_gettime", "clock_gettime", "__vdso_gettimeofday", "gettimeofday", "__vdso_time",      "time",
        "__vdso_clock_getres",  "clock_getres",  "__vdso_getcpu",       "getcpu",       "__vdso_getrandom", "getrandom",
};

/* The kernel's vDSO of this process: AT_SYSINFO_EHDR, sized by its
 * mapping in /proc/self/maps. False if there is none (vdso=0). */
static bool kernel_vdso(const uint8_t **ret_base, size_t *ret_size) {
        unsigned long base = getauxval(AT_SYSINFO_EHDR), start, end;
        char line[512];
        bool found = false;
        FILE *f;

        if (base == 0 || !(f = fopen("/proc/self/maps", "re")))
                return false;
        while (!found && fgets(line, sizeof(line), f))
                if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base) {
                        *ret_base = (const uint8_t *) base;
                        *ret_size = end - start;
                        found = true;
                }
        fclose(f);
        return found;
}

/* Everything a caller can ask of a parsed image, on an image that may be
 * corrupt: must not crash, and what it returns must be in bounds. */
static void exercise(const struct tns_vdso_elf *e, bool *failed) {
        struct tns_vdso_sym sym;
        const char *name;
        Elf64_Phdr p;
        Elf64_Shdr s;
        Elf64_Dyn d;
        uint64_t off;

        for (size_t i = 0; i < ELEMENTSOF(exported); i++)
                for (int t = TNS_VDSO_HASH_ANY; t <= TNS_VDSO_HASH_GNU; t++) {
                        int r = tns_vdso_elf_lookup_in(e, t, exported[i], TNS_VDSO_VERSION, &off);

                        if (r == 0 && off >= e->size) {
                                printf("#   %s: offset %#llx past the image\n", exported[i], (unsigned long long) off);
                                *failed = true;
                        }
                        if (r != 0 && r != -ENOENT && r != -ENOEXEC && r != -EOPNOTSUPP) {
                                printf("#   %s: unexpected error %d\n", exported[i], r);
                                *failed = true;
                        }
                        (void) tns_vdso_elf_lookup_in(e, t, exported[i], NULL, &off);
                }
        for (unsigned i = 0; i < e->phnum; i++)
                (void) tns_vdso_elf_phdr(e, i, &p);
        for (unsigned i = 0; i < e->n_dyn; i++)
                (void) tns_vdso_elf_dyn(e, i, &d);
        for (unsigned i = 0; i < e->shnum; i++)
                if (tns_vdso_elf_section(e, i, &s, &name) == 0 && name)
                        (void) strlen(name);
        for (uint32_t i = 0; i < e->n_syms; i++)
                if (tns_vdso_elf_symbol(e, i, &sym) == 0)
                        (void) (strlen(sym.name) + (sym.version ? strlen(sym.version) : 0));
}

/* Parses a copy of image[0, len) in an exact-size heap buffer. */
static int parse_copy(const uint8_t *image, size_t len, bool *failed) {
        _cleanup_free_ uint8_t *copy = malloc(len ? len : 1);
        struct tns_vdso_elf e;
        int r;

        if (!copy)
                abort();
        memcpy(copy, image, len);
        r = tns_vdso_elf_parse(copy, len, &e);
        if (r == 0)
                exercise(&e, failed);
        return r;
}

TEST(our_image_parses) {
        struct tns_vdso_elf e;
        uint64_t any, sysv, gnu;

        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &e), 0);
        EXPECT_EQ(e.n_load, 1);
        EXPECT_EQ(e.load_vaddr, 0);
        EXPECT_EQ(e.load_offset, 0);
        EXPECT_TRUE(e.hash && e.gnu_hash && e.versym && e.verdef);
        EXPECT_GT(e.shnum, 0);
        EXPECT_EQ(e.n_syms, 14); /* null, 12 functions, the version's own symbol */
        for (size_t i = 0; i < ELEMENTSOF(exported); i++) {
                ASSERT_EQ(tns_vdso_elf_lookup(&e, exported[i], TNS_VDSO_VERSION, &any), 0);
                ASSERT_EQ(tns_vdso_elf_lookup_in(&e, TNS_VDSO_HASH_SYSV, exported[i], TNS_VDSO_VERSION, &sysv), 0);
                ASSERT_EQ(tns_vdso_elf_lookup_in(&e, TNS_VDSO_HASH_GNU, exported[i], TNS_VDSO_VERSION, &gnu), 0);
                EXPECT_EQ(any, sysv);
                EXPECT_EQ(any, gnu);
                EXPECT_GT(any, 0);
                EXPECT_LT(any, tns_vdso_image_size);
        }
        /* Aliases are the same code. */
        ASSERT_EQ(tns_vdso_elf_lookup(&e, "time", NULL, &any), 0);
        ASSERT_EQ(tns_vdso_elf_lookup(&e, "__vdso_time", NULL, &gnu), 0);
        EXPECT_EQ(any, gnu);
}

TEST(lookup_misses) {
        struct tns_vdso_elf e;
        uint64_t off = 42;

        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &e), 0);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "__vdso_clock_gettime", "LINUX_2.5", &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "__vdso_clock_gettime", "linux-vdso.so.1", &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "__vdso_clock_settime", TNS_VDSO_VERSION, &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "", NULL, &off), -ENOENT);
        /* Internal and absolute symbols are not functions to call. */
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "tns_params_page", NULL, &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, TNS_VDSO_VERSION, NULL, &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "__vdso_sgx_enter_enclave", NULL, &off), -ENOENT);
        EXPECT_EQ(off, 42);
        EXPECT_EQ(tns_vdso_elf_lookup(NULL, "time", NULL, &off), -EINVAL);
        EXPECT_EQ(tns_vdso_elf_lookup_in(&e, 7, "time", NULL, &off), -EINVAL);
        EXPECT_EQ(tns_vdso_elf_parse(NULL, 0, &e), -EINVAL);
}

TEST(symbols_carry_their_version) {
        struct tns_vdso_sym s;
        struct tns_vdso_elf e;
        unsigned functions = 0;

        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &e), 0);
        for (uint32_t i = 1; i < e.n_syms; i++) {
                ASSERT_EQ(tns_vdso_elf_symbol(&e, i, &s), 0);
                EXPECT_NE(s.shndx, SHN_UNDEF);
                if (s.type != STT_FUNC)
                        continue;
                functions++;
                EXPECT_TRUE(s.version && strcmp(s.version, TNS_VDSO_VERSION) == 0);
                EXPECT_TRUE(s.bind == STB_GLOBAL ? strncmp(s.name, "__vdso_", 7) == 0 : s.bind == STB_WEAK);
                EXPECT_LT(s.offset, tns_vdso_image_size);
        }
        EXPECT_EQ(functions, ELEMENTSOF(exported));
        EXPECT_EQ(tns_vdso_elf_symbol(&e, e.n_syms, &s), -EINVAL);
}

TEST(kernel_vdso_parses) {
        const char *names[] = {"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres",
                               "__vdso_getcpu"};
        const uint8_t *base;
        struct tns_vdso_elf e;
        struct timespec ts;
        uint64_t off;
        size_t size;

        if (!kernel_vdso(&base, &size))
                SKIP("this process has no vDSO");
        ASSERT_EQ(tns_vdso_elf_parse(base, size, &e), 0);
        EXPECT_GE(e.n_load, 1);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                ASSERT_EQ(tns_vdso_elf_lookup(&e, names[i], TNS_VDSO_VERSION, &off), 0);
                EXPECT_LT(off, size);
        }
        /* And it is the function: call it. */
        ASSERT_EQ(tns_vdso_elf_lookup(&e, "__vdso_clock_gettime", TNS_VDSO_VERSION, &off), 0);
        EXPECT_EQ(((int (*)(clockid_t, struct timespec *))(base + off))(CLOCK_MONOTONIC, &ts), 0);
        EXPECT_GT(ts.tv_sec + ts.tv_nsec, 0);
}

/* glibc knows the kernel's vDSO as "linux-vdso.so.1": its dlvsym must
 * agree with us on every exported function. */
TEST(kernel_vdso_agrees_with_glibc) {
        const uint8_t *base;
        struct tns_vdso_elf e;
        unsigned checked = 0;
        size_t size;
        void *h;

        if (!kernel_vdso(&base, &size))
                SKIP("this process has no vDSO");
        h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!h)
                SKIP("glibc does not expose the vDSO to dlopen: %s", dlerror());
        ASSERT_EQ(tns_vdso_elf_parse(base, size, &e), 0);
        for (size_t i = 0; i < ELEMENTSOF(exported); i++) {
                void *sym = dlvsym(h, exported[i], TNS_VDSO_VERSION);
                uint64_t off;
                int r = tns_vdso_elf_lookup(&e, exported[i], TNS_VDSO_VERSION, &off);

                if (!sym) {
                        EXPECT_EQ(r, -ENOENT); /* e.g. getrandom before 6.11 */
                        continue;
                }
                ASSERT_EQ(r, 0);
                EXPECT_EQ((uintptr_t) sym, (uintptr_t) base + off);
                checked++;
        }
        EXPECT_GE(checked, 10);
        dlclose(h);
}

/* glibc's own loader accepts our image as a shared object and resolves
 * every versioned export to where we do. The file is a memfd, so nothing
 * is left behind. */
TEST(glibc_loads_our_image) {
        _cleanup_close_ int fd = -EBADF;
        struct tns_vdso_elf e;
        struct link_map *map;
        char path[64];
        void *h;

        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &e), 0);
        fd = memfd_create("timens-vdso-test", MFD_CLOEXEC);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(fd, tns_vdso_image, tns_vdso_image_size), (ssize_t) tns_vdso_image_size);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
                TEST_FAIL_(true, "dlopen: %s", dlerror());
        ASSERT_EQ(dlinfo(h, RTLD_DI_LINKMAP, &map), 0);
        for (size_t i = 0; i < ELEMENTSOF(exported); i++) {
                void *sym = dlvsym(h, exported[i], TNS_VDSO_VERSION);
                uint64_t off;

                ASSERT_EQ(tns_vdso_elf_lookup(&e, exported[i], TNS_VDSO_VERSION, &off), 0);
                EXPECT_EQ((uintptr_t) sym, map->l_addr + off);
        }
        EXPECT_TRUE(dlvsym(h, "__vdso_time", "LINUX_2.5") == NULL);
        dlclose(h);
}

TEST(hide_removes_one_name) {
        size_t len = (tns_vdso_image_size + 4095) / 4096 * 4096;
        _cleanup_free_ uint8_t *copy = malloc(len);
        struct tns_vdso_sym s;
        struct tns_vdso_elf e;
        uint64_t off;

        ASSERT_TRUE(copy);
        memcpy(copy, tns_vdso_image, len);
        EXPECT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "__vdso_getrandom"), 1);
        ASSERT_EQ(tns_vdso_elf_parse(copy, tns_vdso_image_size, &e), 0);
        for (int t = TNS_VDSO_HASH_ANY; t <= TNS_VDSO_HASH_GNU; t++)
                EXPECT_EQ(tns_vdso_elf_lookup_in(&e, t, "__vdso_getrandom", NULL, &off), -ENOENT);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "getrandom", TNS_VDSO_VERSION, &off), 0);
        EXPECT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "getrandom"), 1);
        ASSERT_EQ(tns_vdso_elf_parse(copy, tns_vdso_image_size, &e), 0);
        EXPECT_EQ(tns_vdso_elf_lookup(&e, "getrandom", NULL, &off), -ENOENT);
        for (size_t i = 0; i < ELEMENTSOF(exported) - 2; i++)
                EXPECT_EQ(tns_vdso_elf_lookup(&e, exported[i], TNS_VDSO_VERSION, &off), 0);
        /* What the loaders test: undefined, value 0, local. */
        for (uint32_t i = 1; i < e.n_syms; i++) {
                ASSERT_EQ(tns_vdso_elf_symbol(&e, i, &s), 0);
                if (strstr(s.name, "getrandom")) {
                        EXPECT_EQ(s.shndx, SHN_UNDEF);
                        EXPECT_EQ(s.value, 0);
                        EXPECT_EQ(s.bind, STB_LOCAL);
                }
        }
        EXPECT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "getrandom"), 1); /* still there by name */
        EXPECT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "no_such_symbol"), -ENOENT);
        memset(copy, 0, 64);
        EXPECT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "time"), -ENOEXEC);
}

/* A loader that dlopen()s a hidden copy does not find it either. */
TEST(hide_hides_from_glibc) {
        size_t len = (tns_vdso_image_size + 4095) / 4096 * 4096;
        _cleanup_free_ uint8_t *copy = malloc(len);
        _cleanup_close_ int fd = -EBADF;
        char path[64];
        void *h;

        ASSERT_TRUE(copy);
        memcpy(copy, tns_vdso_image, len);
        ASSERT_EQ(tns_vdso_elf_hide(copy, tns_vdso_image_size, "__vdso_getrandom"), 1);
        fd = memfd_create("timens-vdso-test", MFD_CLOEXEC);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(fd, copy, tns_vdso_image_size), (ssize_t) tns_vdso_image_size);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
                TEST_FAIL_(true, "dlopen: %s", dlerror());
        EXPECT_TRUE(dlvsym(h, "__vdso_getrandom", TNS_VDSO_VERSION) == NULL);
        EXPECT_TRUE(dlvsym(h, "__vdso_clock_gettime", TNS_VDSO_VERSION) != NULL);
        dlclose(h);
}

/* Every prefix: an error until the load segment is whole, then a parse
 * (the section headers after it are optional). */
static void check_prefixes(const uint8_t *image, size_t size, bool *_failed) {
        struct tns_vdso_elf full;
        uint64_t need;

        ASSERT_EQ(tns_vdso_elf_parse(image, size, &full), 0);
        need = full.load_offset + full.load_filesz;
        for (size_t len = 0; len <= size; len++) {
                int r = parse_copy(image, len, _failed);

                if (len < need)
                        EXPECT_EQ(r, -ENOEXEC);
                else
                        EXPECT_EQ(r, 0);
        }
}

TEST(every_prefix_of_our_image) {
        check_prefixes(tns_vdso_image, tns_vdso_image_size, _failed);
}

TEST(every_prefix_of_the_kernel_vdso) {
        const uint8_t *base;
        size_t size;

        if (!kernel_vdso(&base, &size))
                SKIP("this process has no vDSO");
        check_prefixes(base, size, _failed);
}

/* Every bit of the headers and of every table the dynamic section points
 * at (all of the load segment), flipped one at a time. */
static void check_bit_flips(const uint8_t *image, size_t size, bool *_failed) {
        _cleanup_free_ uint8_t *copy = malloc(size);
        struct tns_vdso_elf full, e;
        unsigned parsed = 0, refused = 0;

        ASSERT_TRUE(copy);
        ASSERT_EQ(tns_vdso_elf_parse(image, size, &full), 0);
        memcpy(copy, image, size);
        for (uint64_t i = 0; i < full.load_offset + full.load_filesz; i++)
                for (int bit = 0; bit < 8; bit++) {
                        copy[i] ^= (uint8_t) (1u << bit);
                        if (tns_vdso_elf_parse(copy, size, &e) == 0) {
                                exercise(&e, _failed);
                                parsed++;
                        } else
                                refused++;
                        copy[i] ^= (uint8_t) (1u << bit);
                }
        printf("# %u flips parsed, %u refused\n", parsed, refused);
        EXPECT_GT(refused, 0);
        EXPECT_EQ(memcmp(copy, image, size), 0);
}

TEST(bit_flips_in_our_image) {
        check_bit_flips(tns_vdso_image, tns_vdso_image_size, _failed);
}

TEST(bit_flips_in_the_kernel_vdso) {
        const uint8_t *base;
        size_t size;

        if (!kernel_vdso(&base, &size))
                SKIP("this process has no vDSO");
        check_bit_flips(base, size, _failed);
}

/* Header fields set to the values most likely to break arithmetic. */
TEST(hostile_header_values) {
        static const uint64_t values[] = {0, 1, 0x7f, 0xff, 0xffff, 0x7fffffff, 0xffffffff, UINT64_MAX, UINT64_MAX / 2};
        static const struct {
                size_t off, len;
        } fields[] = {
                {offsetof(Elf64_Ehdr, e_phoff), 8},       {offsetof(Elf64_Ehdr, e_shoff), 8},
                {offsetof(Elf64_Ehdr, e_phnum), 2},       {offsetof(Elf64_Ehdr, e_shnum), 2},
                {offsetof(Elf64_Ehdr, e_shstrndx), 2},    {offsetof(Elf64_Ehdr, e_phentsize), 2},
                {64 + offsetof(Elf64_Phdr, p_offset), 8}, {64 + offsetof(Elf64_Phdr, p_vaddr), 8},
                {64 + offsetof(Elf64_Phdr, p_filesz), 8}, {64 + offsetof(Elf64_Phdr, p_memsz), 8},
        };
        _cleanup_free_ uint8_t *copy = malloc(tns_vdso_image_size);
        struct tns_vdso_elf e;

        ASSERT_TRUE(copy);
        for (size_t f = 0; f < ELEMENTSOF(fields); f++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        memcpy(copy, tns_vdso_image, tns_vdso_image_size);
                        memcpy(copy + fields[f].off, &values[v], fields[f].len);
                        if (tns_vdso_elf_parse(copy, tns_vdso_image_size, &e) == 0)
                                exercise(&e, _failed);
                }
        /* Every dynamic entry's value, and every d_tag turned into another. */
        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &e), 0);
        for (unsigned i = 0; i <= e.n_dyn; i++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++)
                        for (size_t half = 0; half < 2; half++) {
                                memcpy(copy, tns_vdso_image, tns_vdso_image_size);
                                memcpy(copy + e.dynamic + i * sizeof(Elf64_Dyn) + half * 8, &values[v], 8);
                                struct tns_vdso_elf e2;
                                if (tns_vdso_elf_parse(copy, tns_vdso_image_size, &e2) == 0)
                                        exercise(&e2, _failed);
                        }
}

/* Cycles in the SysV chains and GNU chains that run off the table end in an
 * error, not a hang or a read out of bounds. */
TEST(hash_chain_loops) {
        _cleanup_free_ uint8_t *copy = malloc(tns_vdso_image_size);
        struct tns_vdso_elf e;
        uint32_t nbucket, nchain, one = 1, even = 2;
        uint64_t off;

        ASSERT_TRUE(copy);
        memcpy(copy, tns_vdso_image, tns_vdso_image_size);
        ASSERT_EQ(tns_vdso_elf_parse(copy, tns_vdso_image_size, &e), 0);
        nbucket = e.sysv_nbucket;
        nchain = e.sysv_nchain;
        /* Every bucket starts at 1, and 1 chains to itself. */
        for (uint32_t b = 0; b < nbucket; b++)
                memcpy(copy + e.hash + 8 + 4 * b, &one, 4);
        memcpy(copy + e.hash + 8 + 4 * nbucket + 4 * 1, &one, 4);
        ASSERT_EQ(tns_vdso_elf_parse(copy, tns_vdso_image_size, &e), 0);
        EXPECT_EQ(tns_vdso_elf_lookup_in(&e, TNS_VDSO_HASH_SYSV, "no_such", NULL, &off), -ENOEXEC);
        EXPECT_LT(nchain, 100);

        /* A GNU chain whose hashes never end (bit 0 clear to the end). */
        memcpy(copy, tns_vdso_image, tns_vdso_image_size);
        for (uint32_t i = 0; i < e.n_syms - e.gnu_symoffset; i++)
                memcpy(copy + e.gnu_hash + 16 + 8 * e.gnu_bloom_size + 4 * e.gnu_nbuckets + 4 * i, &even, 4);
        if (tns_vdso_elf_parse(copy, tns_vdso_image_size, &e) == 0)
                EXPECT_NE(tns_vdso_elf_lookup_in(&e, TNS_VDSO_HASH_GNU, "time", NULL, &off), 0);
}

/* The reader copies, it never dereferences in place: an image at an odd
 * address parses the same (UBSan would flag a misaligned load). */
TEST(unaligned_image) {
        _cleanup_free_ uint8_t *buf = malloc(tns_vdso_image_size + 1);
        struct tns_vdso_elf a, b;
        uint64_t x, y;

        ASSERT_TRUE(buf);
        memcpy(buf + 1, tns_vdso_image, tns_vdso_image_size);
        ASSERT_EQ(tns_vdso_elf_parse(buf + 1, tns_vdso_image_size, &a), 0);
        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &b), 0);
        for (size_t i = 0; i < ELEMENTSOF(exported); i++) {
                ASSERT_EQ(tns_vdso_elf_lookup(&a, exported[i], TNS_VDSO_VERSION, &x), 0);
                ASSERT_EQ(tns_vdso_elf_lookup(&b, exported[i], TNS_VDSO_VERSION, &y), 0);
                EXPECT_EQ(x, y);
        }
}

/* Random damage to the tables, reproducibly. */
TEST(random_corruption) {
        _cleanup_free_ uint8_t *copy = malloc(tns_vdso_image_size);
        struct tns_vdso_elf full, e;
        uint64_t state = 0x9e3779b97f4a7c15ull, tables;

        ASSERT_TRUE(copy);
        ASSERT_EQ(tns_vdso_elf_parse(tns_vdso_image, tns_vdso_image_size, &full), 0);
        tables = full.dynamic + full.n_dyn * sizeof(Elf64_Dyn) + 16; /* headers up to the end of .dynamic */
        for (int n = 0; n < 20000; n++) {
                memcpy(copy, tns_vdso_image, tns_vdso_image_size);
                for (int k = 0; k < 1 + n % 8; k++) {
                        state = state * 6364136223846793005ull + 1442695040888963407ull;
                        copy[(state >> 33) % tables] = (uint8_t) (state >> 17);
                }
                if (tns_vdso_elf_parse(copy, tns_vdso_image_size, &e) == 0)
                        exercise(&e, _failed);
        }
}

TEST(hash_functions) {
        /* Values from the ELF gABI's and binutils' definitions. */
        EXPECT_EQ(tns_vdso_elf_sysv_hash(""), 0);
        EXPECT_EQ(tns_vdso_elf_gnu_hash(""), 5381);
        EXPECT_EQ(tns_vdso_elf_sysv_hash("LINUX_2.6"), 0x3ae75f6);
        EXPECT_EQ(tns_vdso_elf_gnu_hash("printf"), 0x156b2bb8);
}
