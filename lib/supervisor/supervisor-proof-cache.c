/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The vDSO direct path's proof, carried across a restart.
 *
 * Why: the proof (lib/kernel/vdso-direct.c) reads every clock through
 * both paths for 30 ms in two children, and whatever fills a parameter
 * page waits for its answer. After a restart that was the first injection
 * of the new instance, an exec held at the death among them: 25-30 ms
 * more for every such exec, and two CPUs busy meanwhile. What the proof
 * proves holds for one kernel and one image: the key is the boot (one
 * kernel), a hash of our image as prepared for it, the clocksource and
 * our kernel time namespace. A successor with the same key takes the
 * answer from the in-flight page (memory only timensd maps) and ends its
 * own proof; any other key (an upgrade, another clocksource) proves
 * again. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-id128.h>
#include <unistd.h>

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

void supervisor_proof_key(struct tns_supervisor *s) {
        char cs[64] = "";
        sd_id128_t boot;
        struct stat st;
        uint64_t h;
        int fd;

        memset(s->proof_key, 0, sizeof(s->proof_key));
        if (!s->vdso || sd_id128_get_boot(&boot) < 0)
                return; /* no key: always proven */
        fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                (void) !read(fd, cs, sizeof(cs) - 1);
                close(fd);
        }
        h = fnv(FNV_START, cs, strlen(cs));
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
        if (!s->inflight || !s->vdso || s->vdso_probe || !have_key(s))
                return;
        s->inflight->proof.direct = s->vdso->direct;
        memcpy(s->inflight->proof.key, s->proof_key, sizeof(s->proof_key));
}

bool supervisor_proof_reuse(struct tns_supervisor *s) {
        const struct tns_inflight_proof *p = s->inflight ? &s->inflight->proof : NULL;

        if (!p || !s->vdso_probe || !have_key(s) || memcmp(p->key, s->proof_key, sizeof(s->proof_key)) != 0)
                return false;
        tns_vdso_direct_probe_abort(TAKE_PTR(s->vdso_probe));
        s->vdso->direct = p->direct;
        /* A string from memory: ends within its array whatever it held. */
        s->vdso->direct.why[sizeof(s->vdso->direct.why) - 1] = '\0';
        return true;
}
