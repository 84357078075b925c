/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bounds-checked vDSO ELF reader; see vdso-elf.h. Every read goes through
 * read_image() (anywhere in the buffer: headers) or read_seg() (inside the
 * first PT_LOAD: everything the dynamic table points at), which check
 * offset and length without overflow and copy, so that an unaligned or
 * truncated image is never dereferenced in place. Loops over chains that
 * the image controls are bounded by its own sizes. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "vdso-elf.h"

/* Far above any real vDSO (the kernel's has 4 program headers, ~15 dynamic
 * entries and 2 version definitions), low enough to bound a walk. */
#define MAX_PHNUM 64
#define MAX_DYN 512
#define MAX_VERDEF 256

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* [off, off + len) inside [start, end)? As CRIU's __ptr_struct_oob, with
 * no addition that can wrap. */
static bool oob(uint64_t off, uint64_t len, uint64_t start, uint64_t end) {
        return start > end || off < start || off > end || len > end - off;
}

static int read_image(const struct tns_vdso_elf *e, uint64_t off, void *ret, size_t len) {
        if (oob(off, len, 0, e->size))
                return -ENOEXEC;
        memcpy(ret, e->image + off, len);
        return 0;
}

static uint64_t seg_end(const struct tns_vdso_elf *e) {
        return e->load_offset + e->load_filesz; /* checked against size by parse */
}

static int read_seg(const struct tns_vdso_elf *e, uint64_t off, void *ret, size_t len) {
        if (oob(off, len, e->load_offset, seg_end(e)))
                return -ENOEXEC;
        memcpy(ret, e->image + off, len);
        return 0;
}

/* Element i of an array of `len`-byte entries at off, inside the segment. */
static int read_seg_elem(const struct tns_vdso_elf *e, uint64_t off, uint64_t i, void *ret, size_t len) {
        if (i > (UINT64_MAX - off) / len)
                return -ENOEXEC;
        return read_seg(e, off + i * len, ret, len);
}

static int read_u32(const struct tns_vdso_elf *e, uint64_t off, uint64_t i, uint32_t *ret) {
        return read_seg_elem(e, off, i, ret, sizeof(*ret));
}

/* A virtual address of the image -> its offset, if [vaddr, vaddr + len)
 * lies in the loaded part of the first PT_LOAD. */
static int vaddr_to_offset(const struct tns_vdso_elf *e, uint64_t vaddr, uint64_t len, uint64_t *ret) {
        if (oob(vaddr, len, e->load_vaddr, e->load_vaddr + e->load_filesz))
                return -ENOEXEC;
        *ret = vaddr - e->load_vaddr + e->load_offset;
        return 0;
}

/* A NUL-terminated string at `index` of a string table, or NULL. */
static const char *string_at(const struct tns_vdso_elf *e, uint64_t table, uint64_t table_size, uint64_t index) {
        const char *s;

        if (index >= table_size)
                return NULL;
        s = (const char *) e->image + table + index;
        return memchr(s, 0, table_size - index) ? s : NULL;
}

static const char *dynstr(const struct tns_vdso_elf *e, uint64_t index) {
        return string_at(e, e->strtab, e->strsz, index);
}

uint32_t tns_vdso_elf_sysv_hash(const char *name) {
        uint32_t h = 0, g;

        for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
                h = (h << 4) + *p;
                g = h & 0xf0000000u;
                if (g)
                        h ^= g >> 24;
                h &= ~g;
        }
        return h;
}

uint32_t tns_vdso_elf_gnu_hash(const char *name) {
        uint32_t h = 5381;

        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                h = h * 33 + *p;
        return h;
}

static int parse_ehdr(struct tns_vdso_elf *e) {
        Elf64_Ehdr h;

        if (read_image(e, 0, &h, sizeof(h)) < 0)
                return -ENOEXEC;
        if (memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 ||
            h.e_ident[EI_DATA] != ELFDATA2LSB || h.e_ident[EI_VERSION] != EV_CURRENT || h.e_type != ET_DYN ||
            h.e_machine != EM_X86_64 || h.e_version != EV_CURRENT || h.e_ehsize != sizeof(Elf64_Ehdr))
                return -ENOEXEC;
        if (h.e_phentsize != sizeof(Elf64_Phdr) || h.e_phnum == 0 || h.e_phnum > MAX_PHNUM ||
            oob(h.e_phoff, (uint64_t) h.e_phnum * sizeof(Elf64_Phdr), 0, e->size))
                return -ENOEXEC;
        e->machine = h.e_machine;
        e->phoff = h.e_phoff;
        e->phnum = h.e_phnum;
        /* Optional: kept only if they are whole and sane. */
        if (h.e_shnum > 0 && h.e_shentsize == sizeof(Elf64_Shdr) && h.e_shstrndx < h.e_shnum &&
            !oob(h.e_shoff, (uint64_t) h.e_shnum * sizeof(Elf64_Shdr), 0, e->size)) {
                e->shoff = h.e_shoff;
                e->shnum = h.e_shnum;
                e->shstrndx = h.e_shstrndx;
        }
        return 0;
}

int tns_vdso_elf_phdr(const struct tns_vdso_elf *e, unsigned i, Elf64_Phdr *ret) {
        if (!e || !ret || i >= e->phnum)
                return -EINVAL;
        return read_image(e, e->phoff + (uint64_t) i * sizeof(*ret), ret, sizeof(*ret));
}

/* The first PT_LOAD gives the translation; the loaders ignore the others. */
static int parse_load(struct tns_vdso_elf *e) {
        bool found = false;
        Elf64_Phdr p;

        for (unsigned i = 0; i < e->phnum; i++) {
                if (tns_vdso_elf_phdr(e, i, &p) < 0)
                        return -ENOEXEC;
                if (p.p_type != PT_LOAD)
                        continue;
                e->n_load++;
                if (found)
                        continue;
                if (p.p_filesz > p.p_memsz || p.p_memsz > UINT64_MAX - p.p_vaddr ||
                    oob(p.p_offset, p.p_filesz, 0, e->size))
                        return -ENOEXEC;
                e->load_vaddr = p.p_vaddr;
                e->load_offset = p.p_offset;
                e->load_filesz = p.p_filesz;
                e->load_memsz = p.p_memsz;
                e->load_flags = p.p_flags;
                found = true;
        }
        return found ? 0 : -ENOEXEC;
}

/* PT_DYNAMIC must lie in the load segment at the same place whether found
 * by address (glibc) or by file offset (Go): a disagreement would let two
 * loaders see two different tables. */
static int parse_dynamic_segment(struct tns_vdso_elf *e) {
        bool found = false;
        uint64_t off;
        Elf64_Phdr p;

        for (unsigned i = 0; i < e->phnum; i++) {
                if (tns_vdso_elf_phdr(e, i, &p) < 0)
                        return -ENOEXEC;
                if (p.p_type != PT_DYNAMIC)
                        continue;
                if (found || p.p_filesz < sizeof(Elf64_Dyn) || vaddr_to_offset(e, p.p_vaddr, p.p_filesz, &off) < 0 ||
                    off != p.p_offset || off % 8 != 0)
                        return -ENOEXEC;
                e->dynamic = off;
                e->dynamic_flags = p.p_flags;
                e->n_dyn = (unsigned) min_u64(p.p_filesz / sizeof(Elf64_Dyn), MAX_DYN);
                found = true;
        }
        return found ? 0 : -ENOEXEC;
}

int tns_vdso_elf_dyn(const struct tns_vdso_elf *e, unsigned i, Elf64_Dyn *ret) {
        if (!e || !ret || i >= e->n_dyn)
                return -EINVAL;
        return read_seg_elem(e, e->dynamic, i, ret, sizeof(*ret));
}

/* A d_ptr -> image offset, with at least `len` bytes there. */
static int dyn_ptr(const struct tns_vdso_elf *e, const Elf64_Dyn *d, uint64_t len, uint64_t *ret) {
        if (vaddr_to_offset(e, d->d_un.d_ptr, len, ret) < 0 || *ret == 0)
                return -ENOEXEC;
        return 0;
}

/* The entries we use; like the loaders, the last of a repeated tag wins.
 * Stops at DT_NULL, which must be there. */
static int parse_dynamic(struct tns_vdso_elf *e) {
        bool have_strsz = false, terminated = false;
        unsigned n = e->n_dyn;
        Elf64_Dyn d;

        for (unsigned i = 0; i < n; i++) {
                if (tns_vdso_elf_dyn(e, i, &d) < 0)
                        return -ENOEXEC;
                if (d.d_tag == DT_NULL) {
                        e->n_dyn = i;
                        terminated = true;
                        break;
                }
                switch (d.d_tag) {
                case DT_SYMTAB:
                        if (dyn_ptr(e, &d, sizeof(Elf64_Sym), &e->symtab) < 0)
                                return -ENOEXEC;
                        break;
                case DT_STRTAB:
                        if (dyn_ptr(e, &d, 1, &e->strtab) < 0)
                                return -ENOEXEC;
                        break;
                case DT_STRSZ:
                        e->strsz = d.d_un.d_val;
                        have_strsz = true;
                        break;
                case DT_SYMENT:
                        if (d.d_un.d_val != sizeof(Elf64_Sym))
                                return -ENOEXEC;
                        break;
                case DT_HASH:
                        if (dyn_ptr(e, &d, 8, &e->hash) < 0)
                                return -ENOEXEC;
                        break;
                case DT_GNU_HASH:
                        if (dyn_ptr(e, &d, 16, &e->gnu_hash) < 0)
                                return -ENOEXEC;
                        break;
                case DT_VERSYM:
                        if (dyn_ptr(e, &d, sizeof(Elf64_Half), &e->versym) < 0)
                                return -ENOEXEC;
                        break;
                case DT_VERDEF:
                        if (dyn_ptr(e, &d, sizeof(Elf64_Verdef), &e->verdef) < 0)
                                return -ENOEXEC;
                        break;
                case DT_VERDEFNUM:
                        e->verdefnum = (uint32_t) min_u64(d.d_un.d_val, MAX_VERDEF);
                        break;
                default:
                        break;
                }
        }
        if (!terminated || !e->symtab || !e->strtab || (!e->hash && !e->gnu_hash))
                return -ENOEXEC;
        if (!have_strsz)
                e->strsz = seg_end(e) - e->strtab;
        else if (oob(e->strtab, e->strsz, e->load_offset, seg_end(e)))
                return -ENOEXEC;
        return 0;
}

static int parse_sysv_hash(struct tns_vdso_elf *e) {
        uint32_t h[2];

        if (read_seg(e, e->hash, h, sizeof(h)) < 0 || h[0] == 0)
                return -ENOEXEC;
        /* Both arrays, whole: nbucket + nchain words after the header. */
        if (oob(e->hash + 8, ((uint64_t) h[0] + h[1]) * 4, e->load_offset, seg_end(e)))
                return -ENOEXEC;
        e->sysv_nbucket = h[0];
        e->sysv_nchain = h[1];
        return 0;
}

static uint64_t gnu_buckets(const struct tns_vdso_elf *e) {
        return e->gnu_hash + 16 + (uint64_t) e->gnu_bloom_size * 8;
}

static uint64_t gnu_chain(const struct tns_vdso_elf *e) {
        return gnu_buckets(e) + (uint64_t) e->gnu_nbuckets * 4;
}

static int parse_gnu_hash(struct tns_vdso_elf *e) {
        uint32_t h[4];

        if (read_seg(e, e->gnu_hash, h, sizeof(h)) < 0)
                return -ENOEXEC;
        /* glibc masks the bloom index with bloom_size - 1 and shifts a
         * 64-bit hash by bloom_shift (elf/dl-lookup.c). */
        if (h[0] == 0 || h[2] == 0 || (h[2] & (h[2] - 1)) != 0 || h[3] >= 64)
                return -ENOEXEC;
        e->gnu_nbuckets = h[0];
        e->gnu_symoffset = h[1];
        e->gnu_bloom_size = h[2];
        e->gnu_bloom_shift = h[3];
        if (oob(e->gnu_hash + 16, (uint64_t) h[2] * 8 + (uint64_t) h[0] * 4, e->load_offset, seg_end(e)))
                return -ENOEXEC;
        return 0;
}

/* The number of symbols a GNU hash table covers, as musl's count_syms_gnu
 * finds it: the chain that starts at the highest bucket ends at the last
 * symbol. Linear in the image, whatever it holds. */
static int gnu_count(const struct tns_vdso_elf *e, uint32_t *ret) {
        uint32_t max = 0, b, c;
        uint64_t i;

        for (uint32_t k = 0; k < e->gnu_nbuckets; k++) {
                if (read_u32(e, gnu_buckets(e), k, &b) < 0)
                        return -ENOEXEC;
                if (b > max)
                        max = b;
        }
        if (max == 0) {
                *ret = e->gnu_symoffset;
                return 0;
        }
        if (max < e->gnu_symoffset)
                return -ENOEXEC;
        for (i = max;; i++) {
                if (read_u32(e, gnu_chain(e), i - e->gnu_symoffset, &c) < 0 || i >= UINT32_MAX)
                        return -ENOEXEC;
                if (c & 1)
                        break;
        }
        *ret = (uint32_t) i + 1;
        return 0;
}

/* The symbol count bounds every index into DT_SYMTAB and DT_VERSYM; as Go
 * does, DT_HASH's nchain is it when there is a DT_HASH. */
static int parse_symbols(struct tns_vdso_elf *e) {
        uint32_t n = 0;

        if (e->hash) {
                if (parse_sysv_hash(e) < 0)
                        return -ENOEXEC;
                n = e->sysv_nchain;
        }
        if (e->gnu_hash) {
                if (parse_gnu_hash(e) < 0)
                        return -ENOEXEC;
                if (!e->hash && gnu_count(e, &n) < 0)
                        return -ENOEXEC;
        }
        if (oob(e->symtab, (uint64_t) n * sizeof(Elf64_Sym), e->load_offset, seg_end(e)))
                return -ENOEXEC;
        if (e->versym && oob(e->versym, (uint64_t) n * sizeof(Elf64_Half), e->load_offset, seg_end(e)))
                return -ENOEXEC;
        e->n_syms = n;
        return 0;
}

int tns_vdso_elf_parse(const void *image, size_t size, struct tns_vdso_elf *ret) {
        struct tns_vdso_elf e = {.image = image, .size = size};

        if (!image || !ret)
                return -EINVAL;
        if (parse_ehdr(&e) < 0 || parse_load(&e) < 0 || parse_dynamic_segment(&e) < 0 || parse_dynamic(&e) < 0 ||
            parse_symbols(&e) < 0)
                return -ENOEXEC;
        *ret = e;
        return 0;
}

int tns_vdso_elf_section(const struct tns_vdso_elf *e, unsigned i, Elf64_Shdr *ret, const char **ret_name) {
        Elf64_Shdr strtab;

        if (!e || !ret || !ret_name || i >= e->shnum)
                return -EINVAL;
        if (read_image(e, e->shoff + (uint64_t) i * sizeof(*ret), ret, sizeof(*ret)) < 0 ||
            read_image(e, e->shoff + (uint64_t) e->shstrndx * sizeof(strtab), &strtab, sizeof(strtab)) < 0)
                return -ENOEXEC;
        *ret_name = NULL;
        if (strtab.sh_type == SHT_STRTAB && !oob(strtab.sh_offset, strtab.sh_size, 0, e->size))
                *ret_name = string_at(e, strtab.sh_offset, strtab.sh_size, ret->sh_name);
        return 0;
}

/* The DT_VERDEF entry of index ndx: its name and vd_hash. */
static int verdef_find(const struct tns_vdso_elf *e, uint16_t ndx, const char **ret_name, uint32_t *ret_hash) {
        unsigned limit = e->verdefnum ? e->verdefnum : MAX_VERDEF;
        uint64_t off = e->verdef;
        Elf64_Verdaux aux;
        Elf64_Verdef d;

        for (unsigned n = 0; n < limit; n++) {
                if (read_seg(e, off, &d, sizeof(d)) < 0 || d.vd_version != VER_DEF_CURRENT)
                        return -ENOEXEC;
                if ((d.vd_ndx & 0x7fff) == ndx) {
                        if (d.vd_cnt == 0 || d.vd_aux > UINT64_MAX - off ||
                            read_seg(e, off + d.vd_aux, &aux, sizeof(aux)) < 0)
                                return -ENOEXEC;
                        *ret_name = dynstr(e, aux.vda_name);
                        *ret_hash = d.vd_hash;
                        return *ret_name ? 0 : -ENOEXEC;
                }
                if (d.vd_next == 0)
                        break;
                off += d.vd_next; /* < 2^32 added to an offset inside the image: no wrap */
        }
        return -ENOENT;
}

/* Symbol i's version name; NULL (and 0) without versioning, as a loader
 * sees it: DT_VERSYM without DT_VERDEF is ignored (Go). */
static int symbol_version(const struct tns_vdso_elf *e, uint32_t i, const char **ret_name, uint32_t *ret_hash) {
        Elf64_Half v;
        int r;

        *ret_name = NULL;
        *ret_hash = 0;
        if (!e->versym || !e->verdef)
                return 0;
        if (read_seg_elem(e, e->versym, i, &v, sizeof(v)) < 0)
                return -ENOEXEC;
        if ((v & 0x7fff) == VER_NDX_LOCAL)
                return 0;
        r = verdef_find(e, v & 0x7fff, ret_name, ret_hash);
        return r == -ENOENT ? 0 : r;
}

int tns_vdso_elf_symbol(const struct tns_vdso_elf *e, uint32_t i, struct tns_vdso_sym *ret) {
        uint32_t vhash;
        uint64_t off;
        Elf64_Sym s;

        if (!e || !ret || i >= e->n_syms)
                return -EINVAL;
        if (read_seg_elem(e, e->symtab, i, &s, sizeof(s)) < 0)
                return -ENOEXEC;
        *ret = (struct tns_vdso_sym){
                .name = dynstr(e, s.st_name),
                .value = s.st_value,
                .size = s.st_size,
                .offset = vaddr_to_offset(e, s.st_value, 1, &off) < 0 ? UINT64_MAX : off,
                .shndx = s.st_shndx,
                .type = ELF64_ST_TYPE(s.st_info),
                .bind = ELF64_ST_BIND(s.st_info),
                .visibility = ELF64_ST_VISIBILITY(s.st_other),
        };
        if (!ret->name || symbol_version(e, i, &ret->version, &vhash) < 0)
                return -ENOEXEC;
        return 0;
}

/* Does symbol i answer for (name, version)? 1 yes, 0 no, < 0 malformed.
 * The version test is glibc's check_match and Go's vdsoFindVersion: name
 * and hash of the DT_VERDEF entry the symbol's DT_VERSYM index names. */
static int symbol_matches(const struct tns_vdso_elf *e, uint32_t i, const char *name, const char *version,
                          uint64_t *ret_offset) {
        struct tns_vdso_sym s;
        const char *vname;
        uint32_t vhash;
        int r;

        r = tns_vdso_elf_symbol(e, i, &s);
        if (r < 0)
                return r == -EINVAL ? -ENOEXEC : r;
        if (strcmp(s.name, name) != 0 || s.shndx == SHN_UNDEF || s.shndx == SHN_ABS || s.offset == UINT64_MAX)
                return 0;
        if (s.bind != STB_GLOBAL && s.bind != STB_WEAK)
                return 0;
        if (s.type != STT_FUNC && s.type != STT_OBJECT && s.type != STT_NOTYPE)
                return 0;
        if (version && e->versym && e->verdef) {
                if (symbol_version(e, i, &vname, &vhash) < 0)
                        return -ENOEXEC;
                if (!vname || strcmp(vname, version) != 0 || vhash != tns_vdso_elf_sysv_hash(version))
                        return 0;
        }
        *ret_offset = s.offset;
        return 1;
}

static int lookup_sysv(const struct tns_vdso_elf *e, const char *name, const char *version, uint64_t *ret) {
        uint32_t i, steps = 0;
        int r;

        if (!e->hash)
                return -EOPNOTSUPP;
        if (read_u32(e, e->hash + 8, tns_vdso_elf_sysv_hash(name) % e->sysv_nbucket, &i) < 0)
                return -ENOEXEC;
        while (i != STN_UNDEF) {
                /* A chain longer than the table has a loop. */
                if (i >= e->sysv_nchain || ++steps > e->sysv_nchain)
                        return -ENOEXEC;
                r = symbol_matches(e, i, name, version, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (read_u32(e, e->hash + 8 + (uint64_t) e->sysv_nbucket * 4, i, &i) < 0)
                        return -ENOEXEC;
        }
        return -ENOENT;
}

static int lookup_gnu(const struct tns_vdso_elf *e, const char *name, const char *version, uint64_t *ret) {
        uint64_t h, word, mask;
        uint32_t i, c;
        int r;

        if (!e->gnu_hash)
                return -EOPNOTSUPP;
        h = tns_vdso_elf_gnu_hash(name);
        /* The Bloom filter first, as glibc's do_lookup_x: a table that
         * forgot a symbol there hides it from glibc. */
        if (read_seg_elem(e, e->gnu_hash + 16, (h / 64) & (e->gnu_bloom_size - 1), &word, sizeof(word)) < 0)
                return -ENOEXEC;
        mask = (UINT64_C(1) << (h % 64)) | (UINT64_C(1) << ((h >> e->gnu_bloom_shift) % 64));
        if ((word & mask) != mask)
                return -ENOENT;
        if (read_u32(e, gnu_buckets(e), h % e->gnu_nbuckets, &i) < 0)
                return -ENOEXEC;
        if (i == 0)
                return -ENOENT;
        if (i < e->gnu_symoffset)
                return -ENOEXEC;
        for (;; i++) {
                if (i >= e->n_syms || read_u32(e, gnu_chain(e), i - e->gnu_symoffset, &c) < 0)
                        return -ENOEXEC;
                if ((c | 1) == (h | 1)) {
                        r = symbol_matches(e, i, name, version, ret);
                        if (r != 0)
                                return r < 0 ? r : 0;
                }
                if (c & 1)
                        return -ENOENT;
        }
}

int tns_vdso_elf_lookup_in(const struct tns_vdso_elf *e, enum tns_vdso_hash table, const char *name,
                           const char *version, uint64_t *ret_offset) {
        uint64_t off = 0;
        int r;

        if (!e || !name || !ret_offset)
                return -EINVAL;
        switch (table) {
        case TNS_VDSO_HASH_ANY:
                r = e->gnu_hash ? lookup_gnu(e, name, version, &off) : lookup_sysv(e, name, version, &off);
                break;
        case TNS_VDSO_HASH_SYSV:
                r = lookup_sysv(e, name, version, &off);
                break;
        case TNS_VDSO_HASH_GNU:
                r = lookup_gnu(e, name, version, &off);
                break;
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;
        *ret_offset = off;
        return 0;
}

int tns_vdso_elf_lookup(const struct tns_vdso_elf *e, const char *name, const char *version, uint64_t *ret_offset) {
        return tns_vdso_elf_lookup_in(e, TNS_VDSO_HASH_ANY, name, version, ret_offset);
}

/* Whether any table still finds name. */
static bool still_found(const struct tns_vdso_elf *e, const char *name) {
        uint64_t off;

        for (int t = TNS_VDSO_HASH_ANY; t <= TNS_VDSO_HASH_GNU; t++)
                if (tns_vdso_elf_lookup_in(e, (enum tns_vdso_hash) t, name, NULL, &off) == 0)
                        return true;
        return false;
}

int tns_vdso_elf_hide(void *image, size_t size, const char *name) {
        _cleanup_free_ uint8_t *orig = NULL;
        struct tns_vdso_elf e;
        int n = 0, r;

        if (!image || !name)
                return -EINVAL;
        r = tns_vdso_elf_parse(image, size, &e);
        if (r < 0)
                return r;
        /* Kept to undo: a symbol table that overlaps the image's other
         * structures (no real vDSO's does; found by fuzz-vdso-elf) could
         * be broken by the change, which then does not happen. */
        orig = malloc(size);
        if (!orig)
                return -ENOMEM;
        memcpy(orig, image, size);
        for (uint32_t i = 1; i < e.n_syms; i++) {
                struct tns_vdso_sym s;
                Elf64_Sym sym;

                r = tns_vdso_elf_symbol(&e, i, &s);
                if (r < 0)
                        return r;
                if (strcmp(s.name, name) != 0)
                        continue;
                /* Keep the name, so that tools still see what was hidden. */
                if (read_seg_elem(&e, e.symtab, i, &sym, sizeof(sym)) < 0)
                        return -ENOEXEC;
                sym = (Elf64_Sym){
                        .st_name = sym.st_name,
                        .st_info = ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE),
                        .st_shndx = SHN_UNDEF,
                };
                memcpy((uint8_t *) image + e.symtab + (uint64_t) i * sizeof(sym), &sym, sizeof(sym));
                n++;
        }
        if (n == 0)
                return -ENOENT;
        if (tns_vdso_elf_parse(image, size, &e) < 0 || still_found(&e, name)) {
                memcpy(image, orig, size);
                return -ENOEXEC;
        }
        return n;
}
