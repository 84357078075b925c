/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* check-vdso: the build-time gate of our vDSO image, in the spirit of the
 * kernel's vdso2c (arch/x86/entry/vdso/vdso2c.h) and lib/vdso/Makefile's
 * check for dynamic relocations: it refuses an image that a loader or the
 * injector could not use as it is, then (with -o) writes the C file that
 * embeds it.
 *
 *   check-vdso [-o OUT.c] IMAGE.so
 *
 * Prints one line per violation ("check-vdso: IMAGE: ...") and exits 1 if
 * there is any; OUT.c is written only for an image that passes. The image
 * is read with lib/core/vdso-elf.c, the same bounds-checked reader the injector
 * uses, so that what is checked here is what will be used there. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "vdso-elf.h"

#define PAGE_SIZE 4096
#define MAX_IMAGE_SIZE (1024 * 1024)
#define SONAME "linux-vdso.so.1"

#ifndef PT_GNU_PROPERTY
#define PT_GNU_PROPERTY 0x6474e553
#endif
#ifndef DT_RELR
#define DT_RELR 36
#endif

/* What the kernel's arch/x86/entry/vdso/vdso.lds.S exports, minus
 * __vdso_sgx_enter_enclave (vdso-patch/README.md): nothing more, nothing
 * less, each in both hash tables with version LINUX_2.6. */
static const char *const required[] = {
        "__vdso_clock_gettime", "clock_gettime", "__vdso_gettimeofday", "gettimeofday", "__vdso_time",      "time",
        "__vdso_clock_getres",  "clock_getres",  "__vdso_getcpu",       "getcpu",       "__vdso_getrandom", "getrandom",
};

struct checker {
        const char *path;
        const struct tns_vdso_elf *e;
        unsigned violations;
};

_printf_(2, 3) static void violation(struct checker *c, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "check-vdso: %s: ", c->path);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        c->violations++;
}

static void check_segments(struct checker *c) {
        bool first_load = true;
        Elf64_Phdr p;

        if (c->e->n_load != 1)
                violation(c, "%u PT_LOAD segments, want exactly one", c->e->n_load);
        for (unsigned i = 0; i < c->e->phnum; i++) {
                if (tns_vdso_elf_phdr(c->e, i, &p) < 0) {
                        violation(c, "program header %u unreadable", i);
                        continue;
                }
                switch (p.p_type) {
                case PT_LOAD:
                        if (!first_load)
                                break;
                        first_load = false;
                        if (p.p_vaddr != 0 || p.p_offset != 0)
                                violation(c, "first PT_LOAD at vaddr %#llx offset %#llx, want 0 and 0",
                                          (unsigned long long) p.p_vaddr, (unsigned long long) p.p_offset);
                        if (p.p_flags & PF_W)
                                violation(c, "PT_LOAD is writable");
                        if ((p.p_flags & (PF_R | PF_X)) != (PF_R | PF_X))
                                violation(c, "PT_LOAD is not R+X");
                        if (p.p_filesz != p.p_memsz)
                                violation(c, "PT_LOAD has memsz != filesz (a .bss the injector would not clear)");
                        break;
                case PT_DYNAMIC:
                        if (p.p_flags & PF_W)
                                violation(c, "PT_DYNAMIC is writable (glibc would relocate it in place)");
                        break;
                case PT_INTERP:
                        violation(c, "PT_INTERP present");
                        break;
                case PT_TLS:
                        violation(c, "PT_TLS present");
                        break;
                case PT_GNU_PROPERTY:
                        violation(c, "PT_GNU_PROPERTY present");
                        break;
                case PT_GNU_RELRO:
                        violation(c, "PT_GNU_RELRO present (nothing may be relocated)");
                        break;
                default:
                        break;
                }
        }
}

static bool is_relocation_tag(Elf64_Sxword tag) {
        switch (tag) {
        case DT_REL:
        case DT_RELSZ:
        case DT_RELENT:
        case DT_RELA:
        case DT_RELASZ:
        case DT_RELAENT:
        case DT_JMPREL:
        case DT_PLTREL:
        case DT_PLTRELSZ:
        case DT_PLTGOT:
        case DT_TEXTREL:
        case DT_RELR:
        case DT_RELCOUNT:
        case DT_RELACOUNT:
                return true;
        default:
                return false;
        }
}

static bool soname_is(const struct tns_vdso_elf *e, uint64_t index, const char *want) {
        const char *s;

        if (index >= e->strsz)
                return false;
        s = (const char *) e->image + e->strtab + index;
        return memchr(s, 0, e->strsz - index) && strcmp(s, want) == 0;
}

static void check_dynamic(struct checker *c) {
        const struct tns_vdso_elf *e = c->e;
        uint64_t soname = UINT64_MAX;
        Elf64_Dyn d;

        for (unsigned i = 0; i < e->n_dyn; i++) {
                if (tns_vdso_elf_dyn(e, i, &d) < 0) {
                        violation(c, "dynamic entry %u unreadable", i);
                        continue;
                }
                if (is_relocation_tag(d.d_tag))
                        violation(c, "relocation tag %#llx in the dynamic table", (unsigned long long) d.d_tag);
                else if (d.d_tag == DT_FLAGS && (d.d_un.d_val & DF_TEXTREL))
                        violation(c, "DF_TEXTREL set");
                else if (d.d_tag == DT_NEEDED)
                        violation(c, "DT_NEEDED present: a vDSO can depend on nothing");
                else if (d.d_tag == DT_INIT || d.d_tag == DT_FINI || d.d_tag == DT_INIT_ARRAY ||
                         d.d_tag == DT_FINI_ARRAY || d.d_tag == DT_PREINIT_ARRAY)
                        violation(c, "constructor or destructor tag %#llx: nobody would run it",
                                  (unsigned long long) d.d_tag);
                else if (d.d_tag == DT_SONAME)
                        soname = d.d_un.d_val;
        }
        if (!e->hash)
                violation(c, "no DT_HASH (musl's vDSO reader needs it)");
        if (!e->gnu_hash)
                violation(c, "no DT_GNU_HASH");
        if (!e->versym)
                violation(c, "no DT_VERSYM");
        if (!e->verdef)
                violation(c, "no DT_VERDEF");
        if (soname == UINT64_MAX)
                violation(c, "no DT_SONAME");
        else if (!soname_is(e, soname, SONAME))
                violation(c, "DT_SONAME is not " SONAME);
}

static bool has_prefix(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void check_sections(struct checker *c) {
        const char *name;
        Elf64_Shdr s;

        if (c->e->shnum == 0) {
                violation(c, "no usable section headers");
                return;
        }
        for (unsigned i = 0; i < c->e->shnum; i++) {
                if (tns_vdso_elf_section(c->e, i, &s, &name) < 0 || !name) {
                        violation(c, "section %u unreadable", i);
                        continue;
                }
                if (s.sh_type == SHT_REL || s.sh_type == SHT_RELA || has_prefix(name, ".rel"))
                        violation(c, "relocation section %s", name);
                if (strcmp(name, ".note.gnu.property") == 0)
                        violation(c, "section .note.gnu.property present");
                if ((s.sh_flags & SHF_ALLOC) && (s.sh_flags & SHF_WRITE))
                        violation(c, "section %s is writable", name);
                if ((s.sh_flags & SHF_ALLOC) && (s.sh_type == SHT_NOBITS || has_prefix(name, ".got") ||
                                                 has_prefix(name, ".plt") || has_prefix(name, ".data")))
                        violation(c, "section %s: no data, bss, GOT or PLT in a vDSO", name);
                if (s.sh_flags & SHF_TLS)
                        violation(c, "TLS section %s", name);
        }
}

/* Is image offset off inside an executable section? */
static bool in_text(const struct tns_vdso_elf *e, uint64_t off) {
        const char *name;
        Elf64_Shdr s;

        for (unsigned i = 0; i < e->shnum; i++)
                if (tns_vdso_elf_section(e, i, &s, &name) >= 0 && (s.sh_flags & SHF_EXECINSTR) && off >= s.sh_offset &&
                    off - s.sh_offset < s.sh_size)
                        return true;
        return false;
}

static void check_required(struct checker *c, const char *name) {
        uint64_t sysv = 0, gnu = 0;
        int r;

        r = tns_vdso_elf_lookup_in(c->e, TNS_VDSO_HASH_SYSV, name, TNS_VDSO_VERSION, &sysv);
        if (r < 0)
                violation(c, "%s@%s not found through DT_HASH: %s", name, TNS_VDSO_VERSION, strerror(-r));
        r = tns_vdso_elf_lookup_in(c->e, TNS_VDSO_HASH_GNU, name, TNS_VDSO_VERSION, &gnu);
        if (r < 0)
                violation(c, "%s@%s not found through DT_GNU_HASH: %s", name, TNS_VDSO_VERSION, strerror(-r));
        else if (sysv != 0 && sysv != gnu)
                violation(c, "%s: DT_HASH and DT_GNU_HASH disagree (%#llx vs %#llx)", name, (unsigned long long) sysv,
                          (unsigned long long) gnu);
        else if (!in_text(c->e, gnu))
                violation(c, "%s is not in an executable section", name);
}

static bool is_required(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (strcmp(name, required[i]) == 0)
                        return true;
        return false;
}

static void check_symbols(struct checker *c) {
        struct tns_vdso_sym s;

        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                check_required(c, required[i]);
        /* Index 0 is the null symbol every table starts with. */
        for (uint32_t i = 1; i < c->e->n_syms; i++) {
                if (tns_vdso_elf_symbol(c->e, i, &s) < 0) {
                        violation(c, "dynamic symbol %u unreadable", i);
                        continue;
                }
                if (s.shndx == SHN_UNDEF)
                        violation(c, "undefined symbol %s (a libgcc or libc call?)", s.name);
                else if (s.shndx == SHN_ABS && strcmp(s.name, TNS_VDSO_VERSION) == 0)
                        continue; /* the version's own symbol, as in the kernel's image */
                else if (s.bind != STB_LOCAL && !is_required(s.name))
                        violation(c, "unexpected export %s", s.name);
                else if (s.type != STT_FUNC && s.bind != STB_LOCAL)
                        violation(c, "export %s is not a function", s.name);
                if (s.bind != STB_LOCAL && (!s.version || strcmp(s.version, TNS_VDSO_VERSION) != 0))
                        violation(c, "export %s has version %s, want " TNS_VDSO_VERSION, s.name, s.version ?: "(none)");
        }
}

static int read_file(const char *path, uint8_t **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t done = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size <= 0 || st.st_size > MAX_IMAGE_SIZE)
                return -EFBIG;
        buf = malloc((size_t) st.st_size);
        if (!buf)
                return -ENOMEM;
        while (done < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + done, (size_t) st.st_size - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                done += (size_t) n;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = done;
        return 0;
}

/* The image as a C array, zero-padded to whole pages (lib/kernel/vdso-image.h). */
static int emit_c(const char *out, const char *src, const uint8_t *image, size_t size) {
        _cleanup_free_ char *tmp = NULL;
        size_t padded = (size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
        FILE *f;

        if (asprintf(&tmp, "%s.tmp", out) < 0)
                return -ENOMEM;
        f = fopen(tmp, "we");
        if (!f)
                return negative_errno();
        fprintf(f, "/* Generated by vdso-patch/check-vdso from %s: do not edit. */\n", src);
        fprintf(f, "#include \"vdso-image.h\"\n\n");
        fprintf(f, "const unsigned char tns_vdso_image[%zu] __attribute__((aligned(4096))) = {", padded);
        for (size_t i = 0; i < size; i++)
                fprintf(f, "%s0x%02x,", i % 12 == 0 ? "\n\t" : " ", image[i]);
        fprintf(f, "\n};\n\nconst size_t tns_vdso_image_size = %zu;\n", size);
        if (fclose(f) != 0 || rename(tmp, out) < 0) {
                int r = negative_errno();

                (void) unlink(tmp);
                return r;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_free_ uint8_t *image = NULL;
        const char *out = NULL, *path;
        struct tns_vdso_elf e;
        struct checker c;
        size_t size = 0;
        int r, opt;

        while ((opt = getopt(argc, argv, "o:")) >= 0) {
                if (opt != 'o') {
                        fprintf(stderr, "Usage: %s [-o OUT.c] IMAGE.so\n", argv[0]);
                        return 2;
                }
                out = optarg;
        }
        if (optind != argc - 1) {
                fprintf(stderr, "Usage: %s [-o OUT.c] IMAGE.so\n", argv[0]);
                return 2;
        }
        path = argv[optind];
        r = read_file(path, &image, &size);
        if (r < 0) {
                fprintf(stderr, "check-vdso: %s: cannot read: %s\n", path, strerror(-r));
                return 1;
        }
        r = tns_vdso_elf_parse(image, size, &e);
        if (r < 0) {
                fprintf(stderr, "check-vdso: %s: not a usable x86-64 ELF64 ET_DYN vDSO image: %s\n", path,
                        strerror(-r));
                return 1;
        }
        c = (struct checker){.path = path, .e = &e};
        check_segments(&c);
        check_dynamic(&c);
        check_sections(&c);
        check_symbols(&c);
        if (c.violations > 0) {
                fprintf(stderr, "check-vdso: %s: %u violation(s)\n", path, c.violations);
                return 1;
        }
        if (out) {
                r = emit_c(out, path, image, size);
                if (r < 0) {
                        fprintf(stderr, "check-vdso: %s: %s\n", out, strerror(-r));
                        return 1;
                }
        }
        return 0;
}
