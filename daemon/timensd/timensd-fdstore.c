/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restarts (timensd(8), RESTARTS). Every fd that a container's clocks
 * depend on — each seccomp listener, each namespace's memfd, each /proc
 * FUSE connection — is kept in systemd's fd store (FDSTORE=1, named as
 * lib/core/state.h says) from the moment it exists, and the state record that
 * ties them together is a memfd in the store too, rewritten at every
 * change. Whatever ends this process (a crash, kill -9, the OOM killer,
 * the watchdog, `systemctl restart`), systemd holds the fds: the kernel
 * keeps the listeners' queued notifications, the containers' calls wait,
 * and the next timensd gets everything back in LISTEN_FDS and serves on.
 *
 * Without systemd there is no store: SIGUSR2 hands the same fds to a new
 * timensd image (an upgrade) the same way, in LISTEN_FDS. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "state.h"
#include "timensd.h"

/* The state memfd: a header, then copies of the record; the header names
 * the valid copy. A new copy is written where it overwrites nothing the
 * header names, then the header (one small write, which a SIGKILL cannot
 * cut in half) — so a daemon killed mid-update leaves the last record
 * whole. */
#define STATE_MAGIC "TNSSTAT1"
#define STATE_DATA 4096

/* Saves of the record are at most one per STATE_FLUSH_USEC. The record
 * is the whole state, so a burst of changes (a thousand namespaces
 * starting or ending at once: several changes each) saved one by one
 * costs the square of its size; a lone change is saved at once. Within a
 * burst, a change waits for the next save, and so do the fds to keep
 * (the store must never hold an fd the record does not name): at most
 * STATE_FLUSH_USEC, and never past an answer to a client or to a program
 * (fdstore_flush()). A successor that finds a record a little behind
 * drops, as gone meanwhile, what it names and the store no longer has. */
#define STATE_FLUSH_USEC 10000
/* And at least STATE_GAP_FACTOR times as long as the last save took: a
 * save of a thousand namespaces takes 2 ms here (more with listeners and
 * members), with the engine's lock held (the record is the engine's
 * state), so saves back to back every 10 ms kept the receive threads
 * from it a fifth of a burst and more as it grows; now at most
 * 1 / STATE_GAP_FACTOR of it, whatever the size. A change still waits
 * for at most one gap, and never past an answer. */
#define STATE_GAP_FACTOR 5
#define STATE_GAP_MAX_USEC (1000 * 1000)

static uint64_t state_gap(const struct manager *m) {
        return m->state_gap_usec > STATE_FLUSH_USEC ? m->state_gap_usec : STATE_FLUSH_USEC;
}

struct state_header {
        char magic[8];
        uint64_t off, len, seq;
};

static void strv_free_names(char **names) {
        if (!names)
                return;
        for (char **p = names; *p; p++)
                free(*p);
        free(names);
}

static bool fdstore_usable(struct manager *m) {
        return m->fdstore_notify;
}

static void store_fd(struct manager *m, const char *name, int fd) {
        char msg[128];
        int r;

        if (!fdstore_usable(m))
                return;
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, false, msg, &fd, 1);
        if (r <= 0 && !m->fdstore_warned) {
                m->fdstore_warned = true;
                tns_log_errno(
                        &m->log, LOG_WARNING, r < 0 ? r : EOPNOTSUPP,
                        "Failed to keep %s in the service manager's fd store (FileDescriptorStoreMax=?): a restart "
                        "of timensd will cut off the processes it serves: %m",
                        name);
        }
}

static void unstore_fd(struct manager *m, const char *name) {
        char msg[128];

        if (!fdstore_usable(m))
                return;
        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        (void) sd_notify(false, msg);
}

static int state_memfd(struct manager *m) {
        int fd;

        if (m->state_fd >= 0)
                return m->state_fd;
        fd = memfd_create("timensd-state", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        m->state_fd = fd;
        m->state_off = m->state_len = 0;
        store_fd(m, "state", fd);
        return fd;
}

static void update_status(struct manager *m) {
        const struct tns_supervisor_stats *st = tns_supervisor_get_stats(m->supervisor);

        (void) sd_notifyf(false, "STATUS=Serving %u namespace%s, %u listener%s; %" PRIu64 " calls", st->namespaces,
                          st->namespaces == 1 ? "" : "s", st->listeners, st->listeners == 1 ? "" : "s",
                          st->notifications);
}

static void pending_fd_done(struct pending_fd *p) {
        safe_close(p->fd);
        free(p->name);
}

static int save_record(struct manager *m) {
        _cleanup_(tns_state_done) struct tns_state st = {};
        _cleanup_free_ char *text = NULL;
        struct state_header h = {.magic = STATE_MAGIC};
        uint64_t len, off, end;
        uint64_t start = manager_now_usec(), took;
        int fd, r;

        fd = state_memfd(m);
        if (fd < 0)
                return tns_log_errno(&m->log, LOG_ERR, fd, "Failed to make the state memfd: %m");
        r = tns_registry_save_state(m->registry, &st);
        if (r >= 0)
                r = tns_state_format(&st, &text);
        if (r < 0)
                return tns_log_errno(&m->log, LOG_ERR, r, "Failed to save the state for a restart: %m");
        len = strlen(text);
        end = m->state_off + m->state_len;
        /* At the start if the valid copy is past it, else after that copy. */
        off = m->state_off >= STATE_DATA + len ? STATE_DATA : ((end > STATE_DATA ? end : STATE_DATA) + 4095) & ~4095ULL;
        if (pwrite(fd, text, len, (off_t) off) != (ssize_t) len)
                return tns_log_errno(&m->log, LOG_ERR, errno ?: EIO, "Failed to write the state memfd: %m");
        h.off = off, h.len = len, h.seq = ++m->state_seq;
        if (pwrite(fd, &h, sizeof(h), 0) != sizeof(h))
                return tns_log_errno(&m->log, LOG_ERR, errno ?: EIO, "Failed to write the state memfd: %m");
        m->state_off = off, m->state_len = len;
        m->state_stale = false;
        /* The gap: the record's own cost (the fds pushed below cost the
         * same however saves batch them), from now, not from the loop's
         * wake-up, which a long dispatch leaves far behind. */
        m->state_saved_usec = manager_now_usec();
        took = m->state_saved_usec - start;
        m->state_gap_usec = took < STATE_GAP_MAX_USEC / STATE_GAP_FACTOR ? took * STATE_GAP_FACTOR : STATE_GAP_MAX_USEC;
        /* What lies past the valid copy is no one's any more. */
        (void) !ftruncate(fd, (off_t) ((off + len + 4095) & ~4095ULL));
        /* The record names them now. */
        for (size_t i = 0; i < m->n_pending_fds; i++) {
                store_fd(m, m->pending_fds[i].name, m->pending_fds[i].fd);
                pending_fd_done(&m->pending_fds[i]);
        }
        m->n_pending_fds = 0;
        update_status(m);
        return 0;
}

static int arm_flush(struct manager *m, uint64_t at);

int fdstore_save(struct manager *m) {
        int r = save_record(m);

        if (r < 0) {
                /* Failed (logged): tried again in a gap, not at every
                 * change; the replies go all the same, the error is
                 * ours. */
                m->state_saved_usec = manager_now_usec();
                m->state_stale = true;
                (void) arm_flush(m, m->state_saved_usec + state_gap(m));
        }
        server_state_saved(m);
        return r;
}

int fdstore_flush(struct manager *m) {
        return m->state_stale ? fdstore_save(m) : 0;
}

static int on_state_flush(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) fdstore_flush(userdata);
        return 0;
}

/* The save at (CLOCK_MONOTONIC usec). */
static int arm_flush(struct manager *m, uint64_t at) {
        int r;

        if (!m->state_flush) {
                r = sd_event_add_time(m->event, &m->state_flush, CLOCK_MONOTONIC, at, STATE_FLUSH_USEC / 10,
                                      on_state_flush, m);
                if (r >= 0)
                        (void) sd_event_source_set_description(m->state_flush, "timensd-state-flush");
                return r;
        }
        r = sd_event_source_set_time(m->state_flush, at);
        return r < 0 ? r : sd_event_source_set_enabled(m->state_flush, SD_EVENT_ONESHOT);
}

/* The record is behind: saved now if the last save is older than a gap
 * (state_gap()), else when it is. */
void fdstore_save_soon(struct manager *m) {
        uint64_t now = 0, at;

        m->state_stale = true;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        at = m->state_saved_usec + state_gap(m);
        if (now >= at || arm_flush(m, at) < 0)
                (void) fdstore_save(m); /* due, or no timer: at once */
}

/* An fd to keep once the record names it: a dup, since its owner may
 * close it before the save. */
static int pend_fd(struct manager *m, const char *name, int fd) {
        struct pending_fd *p;
        int copy;

        if (m->n_pending_fds == m->size_pending_fds) {
                size_t n = m->size_pending_fds ? m->size_pending_fds * 2 : 16;

                p = reallocarray(m->pending_fds, n, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                m->pending_fds = p;
                m->size_pending_fds = n;
        }
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return negative_errno();
        p = &m->pending_fds[m->n_pending_fds];
        p->name = strdup(name);
        if (!p->name) {
                safe_close(copy);
                return -ENOMEM;
        }
        p->fd = copy;
        m->n_pending_fds++;
        return 0;
}

/* Whether name was waiting to be kept (then it is not any more). */
static bool unpend_fd(struct manager *m, const char *name) {
        for (size_t i = 0; i < m->n_pending_fds; i++)
                if (strcmp(m->pending_fds[i].name, name) == 0) {
                        pending_fd_done(&m->pending_fds[i]);
                        m->pending_fds[i] = m->pending_fds[--m->n_pending_fds];
                        return true;
                }
        return false;
}

/* The supervisor's change callback. */
static void on_change(struct tns_supervisor *s, const char *name, int fd, void *userdata) {
        struct manager *m = userdata;

        if (name && fd >= 0 && fdstore_usable(m) && pend_fd(m, name, fd) < 0) {
                /* No room to wait: the record, then the fd, at once. */
                m->state_stale = true;
                (void) fdstore_save(m);
                store_fd(m, name, fd);
                return;
        }
        if (name && fd < 0 && !unpend_fd(m, name))
                unstore_fd(m, name);
        fdstore_save_soon(m);
}

/* The supervisor is about to answer a call that changed the record. */
static void on_flush(struct tns_supervisor *s, void *userdata) {
        (void) fdstore_flush(userdata);
}

/* A memfd of `size` bytes kept in the store as `name`, mapped shared, so
 * that what we write there outlives us: the one handed back, or a new
 * one (*ret_fresh) if there is none or it has another size (an older
 * timensd's layout). */
static int kept_memfd(struct manager *m, const char *name, size_t size, int *ret_fd, void **ret_map, bool *ret_fresh) {
        int fd = fdstore_take(m, name);
        bool fresh = fd < 0;
        struct stat st;
        void *p;

        if (!fresh && (fstat(fd, &st) < 0 || (size_t) st.st_size != size)) {
                unstore_fd(m, name);
                fd = safe_close(fd);
                fresh = true;
        }
        if (fresh) {
                fd = memfd_create(name, MFD_CLOEXEC);
                if (fd < 0 || ftruncate(fd, (off_t) size) < 0) {
                        int r = negative_errno();

                        safe_close(fd);
                        return r;
                }
        }
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
                int r = negative_errno();

                safe_close(fd);
                return r;
        }
        if (fresh)
                store_fd(m, name, fd);
        *ret_fd = fd;
        *ret_map = p;
        *ret_fresh = fresh;
        return 0;
}

/* The in-flight slot (lib/supervisor/supervisor.h), and the receive
 * threads' slots in a memfd of their own: an older timensd, which knows
 * neither the name nor the layout, drops that one and keeps the slot. */
static int inflight_setup(struct manager *m) {
        void *p;
        bool fresh;
        int r;

        r = kept_memfd(m, "inflight", TNS_INFLIGHT_SIZE, &m->inflight_fd, &p, &fresh);
        if (r < 0)
                return r;
        m->inflight = p;
        if (fresh || m->inflight->magic != TNS_INFLIGHT_MAGIC)
                *m->inflight = (struct tns_inflight){.magic = TNS_INFLIGHT_MAGIC};
        tns_supervisor_set_inflight(m->supervisor, m->inflight);
        r = kept_memfd(m, "inflight-recvs", TNS_INFLIGHT_RECVS_SIZE, &m->recvs_fd, &p, &fresh);
        if (r < 0) {
                tns_log_errno(&m->log, LOG_WARNING, r,
                              "Failed to set up the receive threads' slots: a call a thread has taken when timensd "
                              "dies is sent back through the filter: %m");
                return 0;
        }
        m->recvs = p;
        if (fresh || m->recvs->magic != TNS_INFLIGHT_RECVS_MAGIC)
                *m->recvs = (struct tns_inflight_recvs){.magic = TNS_INFLIGHT_RECVS_MAGIC};
        tns_supervisor_set_inflight_recvs(m->supervisor, m->recvs);
        return 0;
}

/* ------------------------------------------------------------- adoption */

int fdstore_collect(struct manager *m) {
        char **names = NULL;
        int n;

        m->fdstore_notify = getenv("NOTIFY_SOCKET") != NULL;
        n = sd_listen_fds_with_names(true, &names);
        if (n <= 0) {
                strv_free_names(names);
                return n < 0 ? tns_log_errno(&m->log, LOG_ERR, n, "Failed to read LISTEN_FDS: %m") : 0;
        }
        m->passed = calloc((size_t) n, sizeof(*m->passed));
        if (!m->passed) {
                strv_free_names(names);
                return -ENOMEM;
        }
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;

                /* Ours alone: nothing we start may inherit them. */
                (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
                m->passed[i] = (struct tns_named_fd){names ? names[i] : NULL, fd};
        }
        m->passed_names = names;
        m->n_passed = (size_t) n;
        return n;
}

int fdstore_take(struct manager *m, const char *name) {
        for (size_t i = 0; i < m->n_passed; i++)
                if (m->passed[i].fd >= 0 && m->passed[i].name && strcmp(m->passed[i].name, name) == 0)
                        return TAKE_FD(m->passed[i].fd);
        return -ENOENT;
}

static int read_state(int fd, char **ret, size_t *ret_len) {
        struct state_header h;
        _cleanup_free_ char *text = NULL;

        if (pread(fd, &h, sizeof(h), 0) != sizeof(h) || memcmp(h.magic, STATE_MAGIC, 8) != 0 || h.off < STATE_DATA ||
            h.len > TNS_STATE_MAX_TEXT)
                return -EBADMSG;
        text = malloc(h.len + 1);
        if (!text)
                return -ENOMEM;
        if (pread(fd, text, h.len, (off_t) h.off) != (ssize_t) h.len)
                return -EBADMSG;
        text[h.len] = '\0';
        *ret = TAKE_PTR(text);
        *ret_len = h.len;
        return 0;
}

int fdstore_restore(struct manager *m) {
        _cleanup_(tns_state_done) struct tns_state st = {};
        struct tns_restore_report rep = {};
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int fd, r;

        tns_supervisor_set_change_callback(m->supervisor, on_change, on_flush, m);
        /* Sockets we bound ourselves (no socket unit): kept too, so that a
         * successor listens on them with no moment of ECONNREFUSED. */
        if (m->control.owned)
                store_fd(m, "control-bound", m->control.fd);
        if (m->agent.owned)
                store_fd(m, "agent-bound", m->agent.fd);
        /* Without a store there is no successor to serve its copy: no
         * slot, and then no exec hold either (supervisor-exec.c: a program
         * held for a successor that never comes would stay stopped). */
        r = fdstore_usable(m) ? inflight_setup(m) : 0;
        if (r < 0)
                tns_log_errno(
                        &m->log, LOG_WARNING, r,
                        "Failed to set up the in-flight slot: a call being served when timensd dies will hang: %m");
        fd = fdstore_take(m, "state");
        if (fd >= 0) {
                struct state_header h;

                m->state_fd = fd;
                r = read_state(fd, &text, &len);
                if (r >= 0)
                        r = tns_state_parse(text, len, &st);
                if (r < 0)
                        tns_log_errno(&m->log, LOG_ERR, r,
                                      "The state record handed back is unreadable, the fds with it are dropped: %m");
                else {
                        (void) !pread(fd, &h, sizeof(h), 0);
                        m->state_off = h.off, m->state_len = h.len, m->state_seq = h.seq;
                        r = tns_registry_restore_state(m->registry, &st, m->passed, m->n_passed, &rep);
                        if (r < 0)
                                tns_log_errno(&m->log, LOG_ERR, r, "Failed to restore the state: %m");
                        else {
                                tns_log(&m->log, LOG_INFO,
                                        "Restored %u namespaces, %u listeners, %u members, %u /proc connections "
                                        "(%u entries gone meanwhile)",
                                        rep.namespaces, rep.listeners, rep.members, rep.procfs, rep.dropped);
                                if (tns_supervisor_resume_inflight(m->supervisor) > 0)
                                        tns_log(&m->log, LOG_INFO,
                                                "Answered the calls that were being served at the "
                                                "predecessor's end");
                        }
                }
        }
        /* What nothing took: fds of things gone while no one watched. */
        for (size_t i = 0; i < m->n_passed; i++) {
                if (m->passed[i].fd < 0)
                        continue;
                if (m->passed[i].name)
                        unstore_fd(m, m->passed[i].name);
                m->passed[i].fd = safe_close(m->passed[i].fd);
        }
        return fdstore_save(m);
}

void fdstore_done(struct manager *m) {
        /* Nothing is removed from the store: whoever stops us for good
         * (systemctl stop) empties it; a restart must find it full, and
         * its record up to date. */
        (void) fdstore_flush(m);
        m->state_flush = sd_event_source_disable_unref(m->state_flush);
        /* Left only by a save that failed. */
        for (size_t i = 0; i < m->n_pending_fds; i++)
                pending_fd_done(&m->pending_fds[i]);
        m->n_pending_fds = 0;
        free(m->pending_fds);
        m->pending_fds = NULL;
        m->size_pending_fds = 0;
        tns_supervisor_set_change_callback(m->supervisor, NULL, NULL, NULL);
        for (size_t i = 0; i < m->n_passed; i++)
                safe_close(m->passed[i].fd);
        free(m->passed);
        m->passed = NULL;
        m->n_passed = 0;
        strv_free_names(m->passed_names);
        m->passed_names = NULL;
        m->state_fd = safe_close(m->state_fd);
        tns_supervisor_set_inflight(m->supervisor, NULL);
        tns_supervisor_set_inflight_recvs(m->supervisor, NULL);
        if (m->inflight)
                munmap(m->inflight, TNS_INFLIGHT_SIZE);
        m->inflight = NULL;
        m->inflight_fd = safe_close(m->inflight_fd);
        if (m->recvs)
                munmap(m->recvs, TNS_INFLIGHT_RECVS_SIZE);
        m->recvs = NULL;
        m->recvs_fd = safe_close(m->recvs_fd);
}

/* -------------------------------------------------------------- hand-off */

struct fdlist {
        const char *names[TNS_MAX_LISTENERS * 4 + TNS_MAX_NAMESPACES + 8];
        char *owned[TNS_MAX_LISTENERS * 4 + TNS_MAX_NAMESPACES + 8];
        int fds[TNS_MAX_LISTENERS * 4 + TNS_MAX_NAMESPACES + 8];
        size_t n;
        bool overflow;
};

static void add_fd(const char *name, int fd, void *userdata) {
        struct fdlist *f = userdata;

        if (fd < 0)
                return;
        if (f->n >= ELEMENTSOF(f->fds)) {
                f->overflow = true;
                return;
        }
        f->owned[f->n] = strdup(name);
        f->names[f->n] = f->owned[f->n];
        f->fds[f->n++] = fd;
}

/* In the child, before exec: the fds at 3, 4, ... in list order, without
 * O_CLOEXEC, and LISTEN_* naming them for the new image. Shared with the
 * keeper (timensd-keeper.c). */
_Noreturn void fdstore_exec_with_fds(const char *exe, char *const argv[], const char *const names[], const int fds[],
                                     size_t n, int report) {
        size_t names_len = 1;
        char *joined, *p, num[32];
        int err, *high = NULL;

        for (size_t i = 0; i < n; i++)
                names_len += strlen(names[i]) + 1;
        joined = malloc(names_len);
        high = calloc(n + 1, sizeof(int));
        if (!joined || !high)
                goto fail;
        p = joined;
        *p = '\0';
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s%s", i ? ":" : "", names[i]);
        /* Copies above the target range first, so that no move clobbers
         * an fd still to be moved. */
        for (size_t i = 0; i < n; i++) {
                high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, (int) (SD_LISTEN_FDS_START + n + 8));
                if (high[i] < 0)
                        goto fail;
        }
        for (size_t i = 0; i < n; i++)
                if (dup2(high[i], SD_LISTEN_FDS_START + (int) i) < 0)
                        goto fail;
        if (n > 0) {
                snprintf(num, sizeof(num), "%zu", n);
                setenv("LISTEN_FDS", num, 1);
                setenv("LISTEN_FDNAMES", joined, 1);
                snprintf(num, sizeof(num), "%d", (int) getpid());
                setenv("LISTEN_PID", num, 1);
        } else {
                unsetenv("LISTEN_FDS");
                unsetenv("LISTEN_FDNAMES");
                unsetenv("LISTEN_PID");
        }
        execv(exe, argv);
fail:
        err = errno;
        if (report >= 0)
                (void) !write(report, &err, sizeof(err));
        _exit(127);
}

int fdstore_handoff(struct manager *m) {
        _cleanup_free_ struct fdlist *f = calloc(1, sizeof(*f));
        int p[2], err = 0, r = 0;
        ssize_t n;
        pid_t pid;

        if (!f)
                return -ENOMEM;
        if (!m->exe)
                return -ENOENT;
        r = fdstore_save(m);
        if (r < 0)
                return r;
        add_fd(m->control.owned ? "control-bound" : "control", m->control.fd, f);
        add_fd(m->agent.owned ? "agent-bound" : "agent", m->agent.fd, f);
        add_fd("state", m->state_fd, f);
        add_fd("inflight", m->inflight_fd, f);
        add_fd("inflight-recvs", m->recvs_fd, f);
        tns_supervisor_foreach_fd(m->supervisor, add_fd, f);
        if (f->overflow)
                r = -E2BIG;
        else if (pipe2(p, O_CLOEXEC) < 0)
                r = negative_errno();
        else if ((pid = fork()) < 0) {
                r = negative_errno();
                close(p[0]), close(p[1]);
        } else if (pid == 0) {
                close(p[0]);
                (void) setsid();
                fdstore_exec_with_fds(m->exe, m->argv, f->names, f->fds, f->n, p[1]);
        } else {
                close(p[1]);
                /* EOF: the exec worked (the pipe was O_CLOEXEC). */
                n = read(p[0], &err, sizeof(err));
                close(p[0]);
                if (n == sizeof(err)) {
                        (void) waitpid(pid, NULL, 0);
                        r = -err;
                } else {
                        /* systemd follows the new image as the service's
                         * main process instead of seeing it exit. */
                        (void) sd_notifyf(false, "MAINPID=%d", (int) pid);
                        tns_log(&m->log, LOG_INFO, "Handed over to a new timensd (pid %d)", (int) pid);
                }
        }
        for (size_t i = 0; i < f->n; i++)
                free(f->owned[i]);
        return r < 0 ? tns_log_errno(&m->log, LOG_ERR, r, "Failed to hand over to a new timensd (%s), serving on: %m",
                                     m->exe)
                     : 0;
}
