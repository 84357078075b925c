/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The vDSO direct path's proof, carried across a restart.
 *
 * Why: the proof (lib/kernel/vdso-direct.c) reads every clock through
 * both paths for 30 ms in two children, and whatever fills a parameter
 * page waits for its answer. After a restart that was the first injection
 * of the new instance, an exec held at the death among them: 25-30 ms
 * more for every such exec, and two CPUs busy meanwhile. What the proof
 * proves holds for one kernel, one image and one build of the code that
 * reads the kernel's layout: the key is the boot (one kernel), our build
 * id (the proof's code and the answer's layout), a hash of our image as
 * prepared for this kernel, the clocksource and our kernel time
 * namespace. A successor with the same key takes the answer from the
 * in-flight page (memory only timensd maps) and ends its own proof; any
 * other key (an upgrade, another clocksource) proves again. Only a
 * direct path is kept: a call-through may come of a proof that could not
 * run (no fork under a pids limit, a loaded machine past the deadline),
 * which the next instance tries again. */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-id128.h>

#include "proc-util.h"
#include "supervisor-internal.h"
#include "util.h"

/* FNV-1a, 64 bits: a change detector, not a defence (the page is ours). */
static uint64_t fnv(uint64_t h, const void *data, size_t len) {
        const unsigned char *p = data;

        for (size_t i = 0; i < len; i++)
                h = (h ^ p[i]) * UINT64_C(0x100000001b3);
        return h;
}

#define FNV_START UINT64_C(0xcbf29ce484222325)

/* The GNU build id of our program (the first object dl_iterate_phdr()
 * gives), hashed into *h; 0 if it has none. */
static int build_id(struct dl_phdr_info *info, size_t size, void *userdata) {
        uint64_t *h = userdata;

        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                const char *p = (const char *) (info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

                if (ph->p_type != PT_NOTE)
                        continue;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *) p;
                        const char *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3) & ~3u);

                        if (desc > end || n->n_descsz > (size_t) (end - desc))
                                break;
                        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                                *h = fnv(FNV_START, desc, n->n_descsz);
                                return 1;
                        }
                        p = desc + ((n->n_descsz + 3) & ~3u);
                }
        }
        return 1; /* the program only */
}

void supervisor_proof_key(struct tns_supervisor *s) {
        char cs[64] = "";
        uint64_t build = 0, h;
        sd_id128_t boot;
        struct stat st;

        memset(s->proof_key, 0, sizeof(s->proof_key));
        (void) dl_iterate_phdr(build_id, &build);
        if (!s->vdso)
                return;
        if (!build || sd_id128_get_boot(&boot) < 0) {
                tns_log(&s->log, LOG_DEBUG, "No build id or boot id: the vDSO proof is not carried to a successor");
                return; /* no key: always proven */
        }
        (void) tns_read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs));
        h = fnv(build, cs, strlen(cs));
        if (stat("/proc/self/ns/time", &st) >= 0)
                h = fnv(h, &st.st_ino, sizeof(st.st_ino));
        memcpy(s->proof_key, boot.bytes, sizeof(boot.bytes));
        s->proof_key[2] = fnv(FNV_START, s->vdso->image.data, s->vdso->image.size);
        s->proof_key[3] = h;
}

static bool have_key(const struct tns_supervisor *s) {
        return s->proof_key[0] || s->proof_key[1];
}

void supervisor_proof_save(struct tns_supervisor *s) {
        struct tns_inflight_proof *p = s->inflight ? &s->inflight->proof : NULL;

        if (!p || !s->vdso || s->vdso_probe || !have_key(s) || !tns_vdso_direct_valid(&s->vdso->direct))
                return;
        /* There already (taken from it): left alone, key and all. */
        if (memcmp(p->key, s->proof_key, sizeof(s->proof_key)) == 0 &&
            memcmp(&p->direct, &s->vdso->direct, sizeof(p->direct)) == 0)
                return;
        /* The key last: a death half-way leaves no key, never another
         * answer under ours. */
        memset(p->key, 0, sizeof(p->key));
        __atomic_thread_fence(__ATOMIC_RELEASE);
        p->direct = s->vdso->direct;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        memcpy(p->key, s->proof_key, sizeof(s->proof_key));
}

bool supervisor_proof_cached(struct tns_supervisor *s, struct tns_vdso_direct *ret) {
        const struct tns_inflight_proof *p = s->inflight ? &s->inflight->proof : NULL;

        if (!p || !s->vdso_probe || !have_key(s) || memcmp(p->key, s->proof_key, sizeof(s->proof_key)) != 0)
                return false;
        *ret = p->direct;
        return tns_vdso_direct_valid(ret);
}
