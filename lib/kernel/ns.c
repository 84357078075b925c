/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns.h"
#include "page-store.h"
#include "time-util.h"
#include "util.h"

static int memfd_new(size_t size) {
        /* MFD_EXEC (6.3): the image is mapped executable; older kernels
         * do not know the flag and need none. */
        int fd = memfd_create(TNS_NS_FILE_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | 0x0010U);

        if (fd < 0 && errno == EINVAL)
                fd = memfd_create(TNS_NS_FILE_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return negative_errno();
        /* As the store's files: no write bits for anyone who reopens it
         * (its holder's own description stays writable). */
        if (ftruncate(fd, (off_t) size) < 0 || fchmod(fd, 0444) < 0) {
                int r = negative_errno();

                safe_close(fd);
                return r;
        }
        return fd;
}

static int memfd_fill(int fd, const struct tns_image *image, bool memfd) {
        struct tns_vdso_params params = {.magic = TNS_PARAMS_MAGIC, .version = TNS_PARAMS_VERSION};

        if (pwrite(fd, &params, sizeof(params), 0) != sizeof(params))
                return -EIO;
        if (image && pwrite(fd, image->data, image->size, TNS_MEMFD_IMAGE) != (ssize_t) image->size)
                return -EIO;
        /* Members may map it, never resize it under us nor seal it against
         * our writes (F_SEAL_FUTURE_WRITE): F_SEAL_SEAL closes the list.
         * Write-sealing it ourselves would stop a restarted supervisor from
         * mapping it writable again. */
        if (memfd && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return negative_errno();
        return 0;
}

static int page_new(uint64_t id, const struct tns_image *image, const struct tns_page_store *store, struct tns_ns *ns) {
        _cleanup_close_ int fd = -EBADF;
        size_t size = TNS_MEMFD_IMAGE + (image ? image->size : 0);
        struct tns_offsets_page *p;
        struct stat st;
        int r;

        /* On the store's tmpfs where there is one (members can then never
         * write it, lib/kernel/page-store.h), a memfd otherwise (an unprivileged
         * supervisor: its members are its own user's). */
        if (!tns_page_store_usable(store))
                store = NULL;
        fd = store ? tns_page_store_create(store, id, size) : memfd_new(size);
        if (fd < 0)
                return fd;
        r = memfd_fill(fd, image, !store);
        if (r < 0)
                goto fail;
        p = mmap(NULL, TNS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, TNS_MEMFD_OFFSETS_PAGE);
        if (p == MAP_FAILED) {
                r = negative_errno();
                goto fail;
        }
        p->magic = TNS_PAGE_MAGIC;
        p->version = TNS_PAGE_VERSION;
        p->ns_id = id;
        p->flags = TNS_PAGE_F_ACTIVE;
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                munmap(p, TNS_PAGE_SIZE);
                goto fail;
        }
        ns->page_dev = st.st_dev;
        ns->page_ino = st.st_ino;
        ns->page_fd = TAKE_FD(fd);
        ns->memfd_size = size;
        ns->page = p;
        ns->store = store;
        return 0;
fail:
        if (store)
                tns_page_store_remove(store, id);
        return r;
}

static int effective(const struct tns_ns *ns, enum tns_clock_class c, int64_t *ret) {
        int64_t sum = 0;

        for (; ns; ns = ns->parent)
                if (tns_ns_add(sum, ns->delta[c], &sum) < 0)
                        return -ERANGE;
        *ret = sum;
        return 0;
}

const struct tns_ns *tns_ns_root(const struct tns_ns *ns) {
        while (ns->parent)
                ns = ns->parent;
        return ns;
}

bool tns_ns_rated(const struct tns_ns *ns) {
        return tns_ns_root(ns)->rated;
}

bool tns_ns_rate_capable(const struct tns_ns *ns) {
        return tns_ns_root(ns)->rate_capable;
}

int64_t tns_ns_base(const struct tns_ns *ns, enum tns_clock_class c, int64_t host) {
        const struct tns_ns *root = tns_ns_root(ns);

        return root->rated ? tns_rate_map_apply(&root->rate[c], host) : host;
}

void tns_ns_rate_map(const struct tns_ns *ns, enum tns_clock_class c, struct tns_rate_map *ret) {
        const struct tns_ns *root = tns_ns_root(ns);

        if (!root->rated) {
                *ret = (struct tns_rate_map){.mult = TNS_RATE_ONE, .anchor_host = 0, .anchor_ns = ns->offset[c]};
                return;
        }
        *ret = root->rate[c];
        /* Offsets are kept in range by tns_offset_check(); saturate anyway. */
        if (tns_ns_add(ret->anchor_ns, ns->offset[c], &ret->anchor_ns) < 0)
                ret->anchor_ns = ns->offset[c] < 0 ? INT64_MIN : INT64_MAX;
}

int tns_ns_now(const struct tns_ns *ns, enum tns_clock_class c, const struct timespec *host, struct timespec *ret) {
        struct tns_rate_map m;
        int64_t h;

        if (!tns_ns_rated(ns))
                return tns_ts_add_ns(host, ns->offset[c], ret);
        if (tns_ts_to_ns(host, &h) < 0)
                return -EOVERFLOW;
        tns_ns_rate_map(ns, c, &m);
        *ret = tns_ns_to_ts(tns_rate_map_apply(&m, h));
        return 0;
}

uint64_t tns_ns_mult(const struct tns_ns *ns, enum tns_clock_class c) {
        const struct tns_ns *root = tns_ns_root(ns);

        return root->rated ? root->rate[c].mult : TNS_RATE_ONE;
}

uint64_t tns_ns_run_mult(const struct tns_ns *ns, enum tns_clock_class c) {
        const struct tns_ns *root = tns_ns_root(ns);

        return root->rated && root->run_mult[c] ? root->run_mult[c] : TNS_RATE_ONE;
}

/* rates[c] prepared for the vDSO (tns_rate_fast_prepare), under the
 * caller's write of the page's sequence, stamped with the sequence that
 * write leaves (seq, even): field by field, as readers load them. */
static void publish_fast(struct tns_rate_fast *f, const struct tns_rate_map *m, uint32_t seq) {
        struct tns_rate_fast v;
        bool ok = tns_rate_fast_prepare(m->mult, m->anchor_host, m->anchor_ns, &v);

        __atomic_store_n(&f->stamp, ok ? TNS_RATE_FAST_STAMP | seq : 0, __ATOMIC_RELAXED);
        __atomic_store_n(&f->sec0, v.sec0, __ATOMIC_RELAXED);
        __atomic_store_n(&f->d_max, v.d_max, __ATOMIC_RELAXED);
        __atomic_store_n(&f->mult, v.mult, __ATOMIC_RELAXED);
        __atomic_store_n(&f->bs, v.bs, __ATOMIC_RELAXED);
        __atomic_store_n(&f->bn, v.bn, __ATOMIC_RELAXED);
        __atomic_store_n(&f->cl, v.cl, __ATOMIC_RELAXED);
}

static void publish(struct tns_ns *ns) {
        int64_t v[TNS_CLASS_MAX];
        const struct tns_ns *root = tns_ns_root(ns);
        uint64_t flags = TNS_PAGE_F_ACTIVE | (root->rated ? TNS_PAGE_F_RATED : 0) |
                         (root->rate_capable ? TNS_PAGE_F_RATE_CAPABLE : 0);

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (effective(ns, c, &v[c]) < 0)
                        v[c] = tns_ns_offset(ns, c); /* checked by the caller; keep the old */
        tns_page_write_begin(ns->page, &ns->seq);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct timespec split = tns_ns_to_ts(v[c]);
                struct tns_rate_map m;

                ns->offset[c] = v[c];

                __atomic_store_n(&ns->page->clocks[c].offset_ns, v[c], __ATOMIC_RELAXED);
                __atomic_store_n(&ns->page->clocks[c].offset_sec, (int64_t) split.tv_sec, __ATOMIC_RELAXED);
                __atomic_store_n(&ns->page->clocks[c].offset_nsec, (int64_t) split.tv_nsec, __ATOMIC_RELAXED);
                tns_ns_rate_map(ns, c, &m);
                __atomic_store_n(&ns->page->rates[c].mult, m.mult, __ATOMIC_RELAXED);
                __atomic_store_n(&ns->page->rates[c].anchor_host, m.anchor_host, __ATOMIC_RELAXED);
                __atomic_store_n(&ns->page->rates[c].anchor_ns, m.anchor_ns, __ATOMIC_RELAXED);
                __atomic_store_n(&ns->page->rates[c].run_mult, root->rated ? root->run_mult[c] : 0, __ATOMIC_RELAXED);
                publish_fast(&ns->page->fast[c], &m, ns->seq + 1);
        }
        __atomic_store_n(&ns->page->flags, flags, __ATOMIC_RELAXED);
        tns_page_write_end(ns->page, &ns->seq);
        for (struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                publish(k);
}

int tns_ns_new(uint64_t id, const char *name, struct tns_ns *parent, const int64_t offsets[TNS_CLASS_MAX],
               const struct tns_image *image, const struct tns_page_store *store, struct tns_ns **ret) {
        _cleanup_free_ struct tns_ns *ns = NULL;
        int r;

        ns = calloc(1, sizeof(*ns));
        if (!ns)
                return -ENOMEM;
        ns->id = id;
        ns->owner = geteuid();
        ns->n_refs = 1;
        ns->page_ro_fd = -EBADF;
        ns->kns_fd = -EBADF;
        if (name && !(ns->name = strdup(name)))
                return -ENOMEM;
        r = page_new(id, image, store, ns);
        if (r < 0) {
                free(ns->name);
                return r;
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                ns->delta[c] = offsets ? offsets[c] : 0;
        if (parent) {
                ns->parent = tns_ns_ref(parent);
                ns->next_sibling = parent->first_child;
                parent->first_child = ns;
        }
        publish(ns);
        *ret = TAKE_PTR(ns);
        return 0;
}

static bool image_matches(int fd, size_t size, const struct tns_image *image) {
        _cleanup_free_ char *buf = NULL;

        if (!image || size != TNS_MEMFD_IMAGE + image->size || !(buf = malloc(image->size)))
                return false;
        return pread(fd, buf, image->size, TNS_MEMFD_IMAGE) == (ssize_t) image->size &&
               memcmp(buf, image->data, image->size) == 0;
}

/* A memfd of ours: anything else that is not a file of the store could be
 * a file of another store, whose reopen through /proc would be writable. */
static bool is_our_memfd(int fd) {
        char path[64], target[64] = "";

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        return readlink(path, target, sizeof(target) - 1) > 0 &&
               strncmp(target, TNS_NS_MEMFD_LINK, strlen(TNS_NS_MEMFD_LINK)) == 0;
}

/* How often a restarted supervisor tries to read a page it adopts before
 * it takes it as torn: a page left mid-write by a predecessor killed in
 * publish() shows an odd sequence forever. */
#define ADOPT_READ_TRIES 1000

/* A root's rates as its page has them: the page's anchors include the
 * offsets, which R does not. A rate-1 class of a rated page is taken as
 * it is (publish() folds only on a change). */
static void adopt_rates(struct tns_ns *ns, const struct tns_offsets_page *p) {
        uint64_t flags = __atomic_load_n(&p->flags, __ATOMIC_RELAXED);

        ns->rate_capable = flags & TNS_PAGE_F_RATE_CAPABLE;
        ns->rated = flags & TNS_PAGE_F_RATED;
        if (!ns->rated)
                return;
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                ns->rate[c].mult = __atomic_load_n(&p->rates[c].mult, __ATOMIC_RELAXED);
                ns->rate[c].anchor_host = __atomic_load_n(&p->rates[c].anchor_host, __ATOMIC_RELAXED);
                ns->rate[c].anchor_ns = __atomic_load_n(&p->rates[c].anchor_ns, __ATOMIC_RELAXED) - ns->offset[c];
                ns->run_mult[c] = __atomic_load_n(&p->rates[c].run_mult, __ATOMIC_RELAXED);
                if (ns->rate[c].mult > TNS_RATE_MULT_MAX)
                        ns->rate[c].mult = TNS_RATE_ONE; /* not one we wrote */
                if (ns->run_mult[c] > TNS_RATE_MULT_MAX || ns->run_mult[c] < TNS_RATE_MULT_MIN)
                        ns->run_mult[c] = TNS_RATE_ONE;
        }
}

int tns_ns_adopt(uint64_t id, const char *name, struct tns_ns *parent, int fd, const struct tns_image *image,
                 const struct tns_page_store *store, struct tns_ns **ret) {
        _cleanup_close_ int owned = fd;
        _cleanup_free_ struct tns_ns *ns = NULL;
        int64_t offsets[TNS_CLASS_MAX];
        struct tns_offsets_page *p;
        struct stat st;
        bool stored, torn;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || (size_t) st.st_size < TNS_MEMFD_IMAGE || st.st_size % TNS_PAGE_SIZE != 0)
                return -EBADMSG;
        /* A file of our store must be the one of this id; a memfd (an
         * unprivileged predecessor, or one from before the store) is taken
         * as it is. */
        stored = tns_page_store_usable(store) && st.st_dev == store->dev;
        if (stored ? !tns_page_store_owns(store, fd, id) : !is_our_memfd(fd))
                return -EBADMSG;
        ns = calloc(1, sizeof(*ns));
        if (!ns)
                return -ENOMEM;
        p = mmap(NULL, TNS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, TNS_MEMFD_OFFSETS_PAGE);
        if (p == MAP_FAILED)
                return negative_errno();
        if (p->magic != TNS_PAGE_MAGIC || p->version != TNS_PAGE_VERSION || p->ns_id != id) {
                munmap(p, TNS_PAGE_SIZE);
                return -EBADMSG;
        }
        /* A sequence that stays odd is a predecessor killed inside
         * publish() (only a supervisor writes the page): each offset_ns
         * is one atomic store, old or new, and publishing them again
         * below makes the page whole. */
        torn = tns_page_offsets_read(p, offsets, ADOPT_READ_TRIES) < 0;
        if (torn)
                for (int c = 0; c < TNS_CLASS_MAX; c++)
                        offsets[c] = __atomic_load_n(&p->clocks[c].offset_ns, __ATOMIC_RELAXED);
        if (name && !(ns->name = strdup(name))) {
                munmap(p, TNS_PAGE_SIZE);
                return -ENOMEM;
        }
        ns->id = id;
        ns->n_refs = 1;
        ns->page_ro_fd = -EBADF;
        ns->kns_fd = -EBADF;
        ns->page = p;
        ns->seq = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
        ns->page_dev = st.st_dev;
        ns->page_ino = st.st_ino;
        ns->memfd_size = (size_t) st.st_size;
        ns->image_stale = ns->memfd_size > TNS_MEMFD_IMAGE && !image_matches(fd, ns->memfd_size, image);
        ns->page_fd = TAKE_FD(owned);
        if (stored)
                ns->store = store;
        /* The page is what every member reads: its offsets stand, read
         * once (bounded) into our own copy, and deltas are what make them
         * again. */
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                int64_t parent_eff = parent ? tns_ns_offset(parent, c) : 0;

                ns->offset[c] = offsets[c];
                if (__builtin_sub_overflow(offsets[c], parent_eff, &ns->delta[c]))
                        ns->delta[c] = 0;
        }
        if (parent) {
                ns->parent = tns_ns_ref(parent);
                ns->next_sibling = parent->first_child;
                parent->first_child = ns;
        } else
                adopt_rates(ns, p);
        if (torn)
                publish(ns);
        *ret = TAKE_PTR(ns);
        return 0;
}

bool tns_ns_has_image(const struct tns_ns *ns) {
        return ns->memfd_size > TNS_MEMFD_IMAGE && !ns->image_stale;
}

struct tns_ns *tns_ns_ref(struct tns_ns *ns) {
        ns->n_refs++;
        return ns;
}

static void unlink_from_parent(struct tns_ns *ns) {
        for (struct tns_ns **k = &ns->parent->first_child; *k; k = &(*k)->next_sibling)
                if (*k == ns) {
                        *k = ns->next_sibling;
                        break;
                }
}

bool tns_ns_unref(struct tns_ns *ns) {
        if (!ns || --ns->n_refs > 0)
                return false;
        if (ns->on_free)
                ns->on_free(ns, ns->on_free_userdata);
        if (ns->pprev) {
                *ns->pprev = ns->next;
                if (ns->next)
                        ns->next->pprev = ns->pprev;
        }
        if (ns->parent) {
                unlink_from_parent(ns);
                tns_ns_unref(ns->parent);
        }
        munmap(ns->page, TNS_PAGE_SIZE);
        if (ns->store)
                tns_page_store_remove(ns->store, ns->id);
        safe_close(ns->page_fd);
        safe_close(ns->page_ro_fd);
        safe_close(ns->kns_fd);
        free(ns->name);
        free(ns);
        return true;
}

/* Our own copy, never the page: the page is mapped by members, and a
 * supervisor does not take what it acts on from memory others map. */
int64_t tns_ns_offset(const struct tns_ns *ns, enum tns_clock_class c) {
        return ns->offset[c];
}

static int check_subtree(const struct tns_ns *ns, enum tns_clock_class c) {
        int64_t v;

        if (effective(ns, c, &v) < 0)
                return -ERANGE;
        for (const struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                if (check_subtree(k, c) < 0)
                        return -ERANGE;
        return 0;
}

int tns_ns_set_offset(struct tns_ns *ns, enum tns_clock_class c, int64_t value) {
        int64_t parent = 0, old = ns->delta[c], delta;
        int r;

        if (ns->parent && effective(ns->parent, c, &parent) < 0)
                return -ERANGE;
        if (__builtin_sub_overflow(value, parent, &delta))
                return -ERANGE;
        ns->delta[c] = delta;
        r = check_subtree(ns, c);
        if (r < 0) {
                ns->delta[c] = old;
                return r;
        }
        publish(ns);
        return 0;
}

/* Several classes in one publication: a reader of the offsets page (our
 * vDSO) sees them change together or not at all. */
int tns_ns_set_offsets(struct tns_ns *ns, unsigned mask, const int64_t value[TNS_CLASS_MAX]) {
        int64_t old[TNS_CLASS_MAX];

        memcpy(old, ns->delta, sizeof(old));
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                int64_t parent = 0;

                if (!(mask & (1U << c)))
                        continue;
                if ((ns->parent && effective(ns->parent, c, &parent) < 0) ||
                    __builtin_sub_overflow(value[c], parent, &ns->delta[c]) || check_subtree(ns, c) < 0) {
                        memcpy(ns->delta, old, sizeof(old));
                        return -ERANGE;
                }
        }
        publish(ns);
        return 0;
}

void tns_ns_set_rate_capable(struct tns_ns *ns, bool capable) {
        ns->rate_capable = capable;
        publish(ns);
}

static int64_t host_now(enum tns_clock_class c) {
        struct timespec now;
        int64_t v = 0;

        (void) clock_gettime(tns_class_clock(c), &now);
        (void) tns_ts_to_ns(&now, &v);
        return v;
}

/* A class back at rate 1 and running: R folds into the root's offset
 * (its delta), so that R is the identity again and, once every class is,
 * the page goes back to the offsets alone. */
static void fold(struct tns_ns *ns, enum tns_clock_class c) {
        int64_t shift = ns->rate[c].anchor_ns - ns->rate[c].anchor_host;

        if (tns_ns_add(ns->delta[c], shift, &ns->delta[c]) < 0)
                return; /* keep R: the clocks still read right */
        ns->rate[c] = (struct tns_rate_map){.mult = TNS_RATE_ONE};
        ns->run_mult[c] = TNS_RATE_ONE;
}

static bool identity(const struct tns_rate_map *m) {
        return m->mult == TNS_RATE_ONE && m->anchor_host == m->anchor_ns;
}

/* Marks every page of the tree as being written (odd sequence): a reader
 * of our vDSO that has not finished a read with the old map now waits for
 * the new one, so that none finishes with the old map after the host
 * time of the change is taken. publish() ends the writes. */
static void hold_pages(struct tns_ns *ns) {
        tns_page_write_begin(ns->page, &ns->seq);
        for (struct tns_ns *k = ns->first_child; k; k = k->next_sibling)
                hold_pages(k);
}

/* How far back a faster rate is anchored: a reader that took its host
 * reading before the change but applies the new map after it (preempted
 * in between, which a loaded machine does for milliseconds) reads a value
 * no lower than before for a delay up to this. The clock runs at the new
 * rate that much early: it jumps ahead by (new - old) x 10 ms at the
 * change. A slower rate needs no margin. */
#define RATE_ANCHOR_MARGIN_NS INT64_C(10000000)

/* The host's MONOTONIC and BOOTTIME at one instant, for anchors: BOOTTIME
 * is MONOTONIC plus the time suspended (S), which no call reads alone.
 * Read as MONOTONIC, BOOTTIME, MONOTONIC (the tightest of a few tries), S
 * lies between the two differences: the lower bound when the clocks speed
 * up, the upper when they slow down, so that a change can only widen
 * BOOTTIME's lead over MONOTONIC (by rate x tens of ns), never make it
 * fall behind (at x1000000, 30 ns read apart put it 30 ms behind). */
static void host_mono_boot(bool faster, int64_t *ret_mono, int64_t *ret_boot) {
        int64_t best = INT64_MAX;

        for (int i = 0; i < 4; i++) {
                int64_t m1 = host_now(TNS_CLASS_MONOTONIC), b = host_now(TNS_CLASS_BOOTTIME),
                        m2 = host_now(TNS_CLASS_MONOTONIC);

                if (m2 - m1 < best) {
                        best = m2 - m1;
                        *ret_mono = m2;
                        *ret_boot = m2 + (faster ? b - m2 : b - m1);
                }
        }
}

/* The rate class c runs at once mult and freeze apply (as
 * tns_ns_set_rates() takes them), and in *ret_run the one it runs at
 * when not frozen. */
static uint64_t rate_after(const struct tns_ns *ns, int c, uint64_t mult, int freeze, uint64_t *ret_run) {
        uint64_t run = mult ? mult : ns->run_mult[c] ? ns->run_mult[c] : TNS_RATE_ONE;

        *ret_run = run;
        return freeze > 0 ? 0 : freeze == 0 ? run : ns->rate[c].mult == 0 ? 0 : run;
}

int tns_ns_set_rates(struct tns_ns *ns, const uint64_t mult[TNS_CLASS_MAX], const int freeze[TNS_CLASS_MAX]) {
        int64_t hosts[TNS_CLASS_MAX] = {};
        bool rated = false, faster;
        const int mono = TNS_CLASS_MONOTONIC;
        uint64_t run;

        if (ns->parent)
                return -EOPNOTSUPP;
        hold_pages(ns);
        /* A first rate: every class starts as the identity, at rate 1. */
        if (!ns->rated)
                for (int c = 0; c < TNS_CLASS_MAX; c++) {
                        ns->rate[c] = (struct tns_rate_map){.mult = TNS_RATE_ONE};
                        ns->run_mult[c] = TNS_RATE_ONE;
                }
        /* Whether MONOTONIC speeds up (BOOTTIME, at its rate, with it):
         * its two hosts are then read a margin early. */
        faster = (mult[mono] || freeze[mono] >= 0) &&
                 rate_after(ns, mono, mult[mono], freeze[mono], &run) > ns->rate[mono].mult;
        host_mono_boot(faster, &hosts[TNS_CLASS_MONOTONIC], &hosts[TNS_CLASS_BOOTTIME]);
        hosts[TNS_CLASS_REALTIME] = host_now(TNS_CLASS_REALTIME);
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                struct tns_rate_map *m = &ns->rate[c];
                uint64_t now_mult;
                int64_t host;

                if (!mult[c] && freeze[c] < 0)
                        continue; /* untouched */
                now_mult = rate_after(ns, c, mult[c], freeze[c], &run);
                host = hosts[c];
                if (now_mult > m->mult)
                        host -= RATE_ANCHOR_MARGIN_NS;
                tns_rate_map_reanchor(m, host, now_mult);
                ns->run_mult[c] = run;
        }
        for (int c = 0; c < TNS_CLASS_MAX; c++) {
                if (ns->rate[c].mult == TNS_RATE_ONE && !identity(&ns->rate[c]))
                        fold(ns, c);
                if (!identity(&ns->rate[c]))
                        rated = true;
        }
        ns->rated = rated;
        publish(ns);
        return 0;
}

int tns_ns_set_rate(struct tns_ns *ns, unsigned mask, uint64_t mult, int freeze) {
        uint64_t mults[TNS_CLASS_MAX] = {};
        int freezes[TNS_CLASS_MAX] = {-1, -1, -1};

        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (mask & (1U << c)) {
                        mults[c] = mult;
                        freezes[c] = freeze;
                }
        return tns_ns_set_rates(ns, mults, freezes);
}

int tns_ns_ro_fd(struct tns_ns *ns) {
        char path[64];

        if (ns->page_ro_fd >= 0)
                return ns->page_ro_fd;
        if (ns->store)
                /* Through the read-only mount: no reopen of it, by anyone,
                 * is ever writable (EROFS). */
                ns->page_ro_fd = tns_page_store_open_ro(ns->store, ns->id);
        else {
                /* A memfd: a reopen through /proc gives a new, read-only
                 * description (which its holder can reopen read-write:
                 * only an unprivileged supervisor, whose members are its
                 * own user's processes, has no store). */
                snprintf(path, sizeof(path), "/proc/self/fd/%d", ns->page_fd);
                ns->page_ro_fd = open(path, O_RDONLY | O_CLOEXEC);
                if (ns->page_ro_fd < 0)
                        ns->page_ro_fd = negative_errno();
        }
        return ns->page_ro_fd;
}

bool tns_ns_tz(const struct tns_ns *ns, struct timezone *ret) {
        for (; ns; ns = ns->parent)
                if (ns->tz_set) {
                        *ret = ns->tz;
                        return true;
                }
        return false;
}

clockid_t tns_class_clock(enum tns_clock_class c) {
        return c == TNS_CLASS_MONOTONIC ? CLOCK_MONOTONIC : c == TNS_CLASS_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_REALTIME;
}

int tns_offset_check(enum tns_clock_class c, int64_t offset, const struct timespec *host_now) {
        struct timespec t;

        if (tns_ts_add_ns(host_now, offset, &t) < 0 || t.tv_sec < 0)
                return -ERANGE;
        if (c == TNS_CLASS_REALTIME ? t.tv_sec >= TNS_KTIME_SEC_MAX : t.tv_sec > TNS_MONO_SEC_MAX)
                return -ERANGE;
        return 0;
}
