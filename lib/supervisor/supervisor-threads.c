/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Receive threads: a thread per listener blocks in the kernel's RECV.
 *
 * Why: a caller woken through epoll loses the kernel's synchronous
 * wake-up (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP wakes a RECV sleeper on the
 * caller's CPU; an epoll waiter is woken like any other), and the loop's
 * own dispatch adds to every call: a trapped clock_gettime served by the
 * loop cost ~1 us more than one served by a thread blocked in RECV
 * (tests/bench/run.sh takes it apart).
 *
 * What a thread serves itself (supervisor.c, supervisor_off_loop()): the
 * plain clock reads, and the two calls every exec makes after its
 * injection (the marker, a program's first arch_prctl), none of which
 * needs ptrace (a tracee is the tracing thread's alone) or an event source
 * (sd-event is not thread-safe). The engine's state is read under the
 * engine's lock, which the loop's thread holds whenever it is not waiting
 * for events, so that the state needs no other lock. A plain read holds
 * it for the state and the clock read only (no syscall where the
 * clocksource has a vDSO mode): the write into the caller and the answer
 * run after the lock goes (supervisor_read_begin/end()). A thread
 * preempted with the lock held keeps every other thread's call waiting
 * until it runs again, and the answer itself preempts it: it wakes the
 * caller on this CPU (SYNC_WAKE_UP). With the answer under the lock, 1000
 * namespaces x 2 processes at 5 calls/s had a p50 of 5.2 ms, 35x that of
 * bare supervisors on the same machine; without it 51 us, below theirs
 * (tests/bench/scale.sh). The marker and arch_prctl are still answered
 * under it (once per exec each; their answer outside it would need their
 * work safe to run twice after a restart). Every other call is handed to
 * the loop (a queue and an eventfd), which serves it as it always did.
 *
 * Stopping a thread: it is blocked in RECV, which only a signal
 * interrupts (-EINTR, never restarted). TNS_WAKE_SIGNAL has a handler
 * that does nothing; the loop's thread sends it until the thread is gone
 * (one send may land before the thread enters RECV). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "supervisor-internal.h"
#include "time-util.h"
#include "util.h"

/* Blocked in every thread but the receive threads. */
#define TNS_WAKE_SIGNAL (SIGRTMIN + 6)
/* Enough for serve(): its deepest path reads /proc files into buffers of
 * a few KiB; only what is touched is memory. */
#define TNS_RECV_THREAD_STACK (256 * 1024)

/* A call a thread received that the loop must serve. */
struct deferred {
        struct listener *l;
        struct deferred *next;
        /* The slot the kernel wrote the call into (supervisor.h, struct
         * tns_inflight_recvs), kept until the call is answered: a
         * successor serves it from there. NULL: every slot was taken, a
         * successor sends it back through the filter. */
        struct tns_inflight_recv *copy;
        struct seccomp_notif req;
};

static void recv_slot_take(struct listener *l);

static void slot_free(struct tns_inflight_recv *slot) {
        /* The name last: a successor never finds a listener's name on
         * the half-cleared call of another. */
        __atomic_store_n(&slot->req.id, 0, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        memset(&slot->req, 0, sizeof(slot->req));
        __atomic_store_n(&slot->listener_plus1, 0, __ATOMIC_RELEASE);
}

static void on_wake_signal(int sig) {
        /* Only interrupts RECV. */
}

/* Queues req for the loop. The in-flight page's last_id stays below it
 * until it is served (supervisor.c): a successor sends it back through
 * the filter if we die first. */
static void defer(struct listener *l, const struct seccomp_notif *req) {
        struct tns_supervisor *s = l->s;
        struct deferred *d = malloc(sizeof(*d));

        if (!d) {
                /* Out of memory: the caller is told so (one reply, every
                 * call), the loop goes on. */
                struct seccomp_notif_resp resp = {.id = req->id, .error = -ENOMEM};

                (void) seccomp_notify_respond(l->fd, &resp);
                return;
        }
        d->l = l;
        d->next = NULL;
        memcpy(&d->req, req, sizeof(d->req));
        /* The call stays in the slot it was received into, and the
         * thread receives into another from now on: a call a thread of
         * a debugger's program makes (a clock_settime, an absolute wait,
         * an execve), lost at our death, would reach it as errno 513
         * (-ERESTARTNOINTR: a thread we cannot seize is not kicked into
         * restarting it). */
        d->copy = l->recv_slot;
        recv_slot_take(l);
        if (!l->recv_slot) {
                /* None free: the thread keeps its own (or, with none
                 * before either, tries again at its next hand-over). */
                l->recv_slot = d->copy;
                d->copy = NULL;
        }
        *s->deferred_tail = d;
        s->deferred_tail = &d->next;
        if (l->n_deferred++ == 0)
                l->oldest_deferred = req->id;
        supervisor_note_received(l, req->id);
        (void) eventfd_write(s->deferred_fd, 1);
}

/* Takes d out of the queue (prev: its predecessor, or NULL). */
static void unqueue(struct tns_supervisor *s, struct deferred *prev, struct deferred *d) {
        struct listener *l = d->l;

        if (prev)
                prev->next = d->next;
        else
                s->deferred = d->next;
        if (s->deferred_tail == &d->next)
                s->deferred_tail = prev ? &prev->next : &s->deferred;
        if (--l->n_deferred > 0)
                for (struct deferred *e = d->next; e; e = e->next)
                        if (e->l == l) {
                                l->oldest_deferred = e->req.id;
                                break;
                        }
}

/* Drops the calls handed over by l's thread (NULL: every thread's),
 * unanswered; their copies too, unless kept for a successor. */
static void drop_deferred(struct tns_supervisor *s, const struct listener *l, bool keep_copies) {
        for (struct deferred *prev = NULL, *d = s->deferred; d;) {
                struct deferred *next = d->next;

                if (!l || d->l == l) {
                        unqueue(s, prev, d);
                        if (d->copy && !keep_copies)
                                slot_free(d->copy);
                        free(d);
                } else
                        prev = d;
                d = next;
        }
}

/* Serves the calls the threads handed over, oldest first. */
static void serve_deferred(struct tns_supervisor *s) {
        while (s->deferred) {
                struct deferred *d = s->deferred;
                struct listener *l = d->l;

                unqueue(s, NULL, d);
                memcpy(s->req, &d->req, sizeof(d->req));
                supervisor_serve_received(l);
                /* Answered: a successor that found the copy would see
                 * its id no longer valid, and skip it. */
                if (d->copy)
                        slot_free(d->copy);
                free(d);
        }
}

static int on_deferred(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        struct tns_supervisor *s = userdata;
        eventfd_t n;

        (void) eventfd_read(fd, &n);
        serve_deferred(s);
        return 0;
}

/* A mutex is not fair: busy threads could keep the loop from it. A
 * thread that finds the loop waiting for the lock gives way once (a
 * spin would burn the CPU the holder needs: with a hundred busy
 * listeners it took most of one). */
void supervisor_lock_as_thread(struct tns_supervisor *s) {
        if (__atomic_load_n(&s->loop_waiting, __ATOMIC_ACQUIRE))
                sched_yield();
        __atomic_add_fetch(&s->threads_waiting, 1, __ATOMIC_ACQ_REL);
        pthread_mutex_lock(&s->lock);
        __atomic_sub_fetch(&s->threads_waiting, 1, __ATOMIC_ACQ_REL);
        __atomic_add_fetch(&s->thread_turns, 1, __ATOMIC_ACQ_REL);
}

bool supervisor_lock_as_thread_within(struct tns_supervisor *s, unsigned ms) {
        struct timespec until;
        int r;

        if (__atomic_load_n(&s->loop_waiting, __ATOMIC_ACQUIRE))
                sched_yield();
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long) (ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
        }
        __atomic_add_fetch(&s->threads_waiting, 1, __ATOMIC_ACQ_REL);
        r = pthread_mutex_timedlock(&s->lock, &until);
        __atomic_sub_fetch(&s->threads_waiting, 1, __ATOMIC_ACQ_REL);
        if (r != 0)
                return false;
        __atomic_add_fetch(&s->thread_turns, 1, __ATOMIC_ACQ_REL);
        return true;
}

static void lock_as_loop(struct tns_supervisor *s) {
        __atomic_store_n(&s->loop_waiting, true, __ATOMIC_RELEASE);
        pthread_mutex_lock(&s->lock);
        __atomic_store_n(&s->loop_waiting, false, __ATOMIC_RELEASE);
}

/* The other way round: a loop with a burst of events to dispatch (a
 * thousand namespaces ending) would hold the lock from one to the next,
 * and the clock reads its threads hold would wait for the whole burst
 * (50-160 ms with 300 namespaces). Between two dispatches, the threads
 * that wait go first: the loop lets the lock go until as many turns as
 * threads waited were taken, for at most LOOP_YIELD_NS, so that a steady
 * stream of reads still lets the loop on. */
#define LOOP_YIELD_NS (2 * 1000 * 1000)

static void loop_let_threads_in(struct tns_supervisor *s) {
        unsigned waiting = __atomic_load_n(&s->threads_waiting, __ATOMIC_ACQUIRE);
        uint64_t until, turns;

        if (waiting == 0)
                return;
        turns = __atomic_load_n(&s->thread_turns, __ATOMIC_ACQUIRE) + waiting;
        until = supervisor_now_ns() + LOOP_YIELD_NS;
        pthread_mutex_unlock(&s->lock);
        for (;;) {
                /* The woken thread needs a CPU: often this one. */
                sched_yield();
                if ((int64_t) (__atomic_load_n(&s->thread_turns, __ATOMIC_ACQUIRE) - turns) >= 0 ||
                    __atomic_load_n(&s->threads_waiting, __ATOMIC_ACQUIRE) == 0)
                        break;
                if (supervisor_now_ns() >= until)
                        break;
        }
        lock_as_loop(s);
}

static void *receive_thread(void *userdata) {
        struct listener *l = userdata;
        struct tns_supervisor *s = l->s;
        struct seccomp_notif *req = l->thread_req;
        bool logged = false;

        while (!__atomic_load_n(&l->stop, __ATOMIC_SEQ_CST)) {
                /* Received into the thread's slot where there is one
                 * (supervisor.h, struct tns_inflight_recv): a successor
                 * finds the call there until the next RECV replaces it. */
                int r = supervisor_receive_into(l, l->recv_slot, req);

                if (r == -EINTR)
                        continue; /* woken to stop */
                if (r == -ENOENT) {
                        /* A caller gone before we took its call; or no
                         * task carries the filter any more, and RECV says
                         * so at once, every time (a loop of it took a CPU
                         * until the loop freed the listener): the thread
                         * is done, the loop's EPOLLHUP frees the rest. */
                        struct pollfd p = {.fd = l->fd, .events = POLLIN};

                        if (poll(&p, 1, 0) > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN))
                                break;
                        continue;
                }
                supervisor_lock_as_thread(s);
                if (r < 0) {
                        if (!logged)
                                tns_log_errno(&s->log, LOG_ERR, r,
                                              "Failed to receive a seccomp notification, trying again: %m");
                        logged = true;
                        pthread_mutex_unlock(&s->lock);
                        (void) nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
                        continue;
                }
                /* Once a call waits for the loop, the next ones do too:
                 * the calls that wait are then one run of ids from the
                 * in-flight page's last id on, which a successor finds. */
                if (l->n_deferred == 0 && supervisor_plain_read(req) && supervisor_off_loop(l, req)) {
                        /* The state and the clock under the lock, the syscalls after it. */
                        struct tns_read rd;

                        supervisor_read_begin(l, req, &rd);
                        /* No stop signal meanwhile (join()). */
                        __atomic_store_n(&l->answering, true, __ATOMIC_SEQ_CST);
                        pthread_mutex_unlock(&s->lock);
                        supervisor_answer_read(l, l->thread_resp, req, supervisor_read_end(l, req, &rd));
                        /* Sequentially consistent with join()'s stop and
                         * answering: either it sends the signal, or we see
                         * stop at the top of the loop. */
                        __atomic_store_n(&l->answering, false, __ATOMIC_SEQ_CST);
                        continue;
                }
                if (l->n_deferred == 0 && supervisor_off_loop(l, req)) {
                        memcpy(s->req, req, sizeof(*req));
                        s->serving_on_thread = true;
                        supervisor_serve_received(l);
                        s->serving_on_thread = false;
                } else
                        defer(l, req);
                pthread_mutex_unlock(&s->lock);
        }
        return NULL;
}

/* A free slot (supervisor.h, struct tns_inflight_recvs) for l's thread
 * to receive into, until it stops or hands the call in it to the loop;
 * none without the slots (no successor) or with every slot taken: it
 * then receives into its own memory. Under the engine's lock: a thread
 * starts, stops and hands calls over with it held. The search starts
 * where the last one ended, so that a hand-over does not walk past every
 * slot taken. */
static void recv_slot_take(struct listener *l) {
        struct tns_supervisor *s = l->s;
        struct tns_inflight_recvs *rv = s->recvs;
        const size_t n = ELEMENTSOF(rv->slot) - 1; /* the last is the loop's */

        l->recv_slot = NULL;
        if (!rv)
                return;
        for (size_t k = 0; k < n; k++) {
                size_t i = (s->recv_slot_next + k) % n;

                if (__atomic_load_n(&rv->slot[i].listener_plus1, __ATOMIC_RELAXED) == 0) {
                        memset(&rv->slot[i].req, 0, sizeof(rv->slot[i].req));
                        __atomic_store_n(&rv->slot[i].listener_plus1, l->serial + 1, __ATOMIC_RELEASE);
                        l->recv_slot = &rv->slot[i];
                        s->recv_slot_next = (i + 1) % n;
                        return;
                }
        }
}

static void recv_slot_release(struct listener *l) {
        if (!l->recv_slot)
                return;
        slot_free(l->recv_slot);
        l->recv_slot = NULL;
}

int supervisor_thread_start(struct listener *l) {
        struct tns_supervisor *s = l->s;
        pthread_attr_t attr;
        sigset_t mask;
        int r;

        if (l->threaded)
                return 0;
        if (!s->running || s->threads_off || s->deferred_fd < 0 || s->n_threads >= TNS_MAX_RECV_THREADS)
                return -EOPNOTSUPP;
        r = seccomp_notify_alloc(&l->thread_req, &l->thread_resp);
        if (r < 0)
                return r;
        recv_slot_take(l);
        /* Signals stay the loop's (its signalfd sources need them blocked
         * everywhere), but for the one that interrupts RECV. */
        sigfillset(&mask);
        sigdelset(&mask, TNS_WAKE_SIGNAL);
        r = -pthread_attr_init(&attr);
        if (r == 0)
                r = -pthread_attr_setstacksize(&attr, TNS_RECV_THREAD_STACK);
        if (r == 0)
                r = -pthread_attr_setsigmask_np(&attr, &mask);
        if (r == 0)
                r = -pthread_create(&l->thread, &attr, receive_thread, l);
        (void) pthread_attr_destroy(&attr);
        if (r < 0) {
                recv_slot_release(l);
                seccomp_notify_free(TAKE_PTR(l->thread_req), TAKE_PTR(l->thread_resp));
                return r;
        }
        (void) pthread_setname_np(l->thread, "timens-recv");
        l->threaded = true;
        s->n_threads++;
        /* The loop still hears EPOLLHUP (no task carries the filter any
         * more): epoll reports it whatever the events asked. */
        (void) sd_event_source_set_io_events(l->src, 0);
        return 0;
}

/* Interrupts l's RECV until its thread is gone: called without the lock,
 * which the thread may need to finish the call it serves. The signal
 * never lands in a call being served (the kernel's SEND and ID_VALID
 * would fail with EINTR, and the caller be told its call failed): it is
 * sent with the lock held, and not while the thread ends a plain read
 * without it (l->answering); only in RECV, the wait for the lock, or the
 * thread's pause after an error. A thread that answers sees l->stop
 * before its next RECV. */
static void join(struct listener *l) {
        struct tns_supervisor *s = l->s;

        for (;;) {
                struct timespec now, deadline;

                lock_as_loop(s);
                if (!__atomic_load_n(&l->answering, __ATOMIC_SEQ_CST))
                        (void) pthread_kill(l->thread, TNS_WAKE_SIGNAL);
                pthread_mutex_unlock(&s->lock);
                (void) clock_gettime(CLOCK_MONOTONIC, &now);
                (void) tns_ts_add_ns(&now, 1000 * 1000, &deadline);
                if (pthread_clockjoin_np(l->thread, NULL, CLOCK_MONOTONIC, &deadline) == 0)
                        return;
        }
}

static void stopped(struct listener *l) {
        struct tns_supervisor *s = l->s;

        /* The loop receives for it from now on. */
        (void) sd_event_source_set_io_events(l->src, EPOLLIN);
        l->threaded = false;
        __atomic_store_n(&l->stop, false, __ATOMIC_RELEASE);
        s->n_threads--;
        recv_slot_release(l);
        seccomp_notify_free(TAKE_PTR(l->thread_req), TAKE_PTR(l->thread_resp));
}

void supervisor_thread_stop(struct listener *l) {
        struct tns_supervisor *s = l->s;

        if (l->threaded) {
                __atomic_store_n(&l->stop, true, __ATOMIC_SEQ_CST);
                pthread_mutex_unlock(&s->lock);
                join(l);
                lock_as_loop(s);
                stopped(l);
        }
        /* l goes: its calls not served yet go with it. */
        drop_deferred(s, l, false);
}

/* All at once: one signal round for every thread, then the joins. */
void supervisor_threads_stop_all(struct tns_supervisor *s) {
        if (s->n_threads == 0)
                return;
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->threaded)
                        __atomic_store_n(&l->stop, true, __ATOMIC_SEQ_CST);
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->threaded && !__atomic_load_n(&l->answering, __ATOMIC_SEQ_CST))
                        (void) pthread_kill(l->thread, TNS_WAKE_SIGNAL);
        pthread_mutex_unlock(&s->lock);
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->threaded)
                        join(l);
        lock_as_loop(s);
        for (struct listener *l = s->listeners; l; l = l->next)
                if (l->threaded)
                        stopped(l);
}

int supervisor_threads_init(struct tns_supervisor *s) {
        struct sigaction sa = {.sa_handler = on_wake_signal}; /* no SA_RESTART: RECV returns */
        const char *e = secure_getenv("TIMENS_RECV_THREADS");
        sigset_t wake;
        int r;

        s->deferred_tail = &s->deferred;
        s->deferred_fd = -EBADF;
        r = -pthread_mutex_init(&s->lock, NULL);
        if (r < 0)
                return r;
        pthread_mutex_lock(&s->lock);
        s->threads_off = e && strcmp(e, "0") == 0;
        if (s->threads_off)
                return 0;
        /* A process-wide disposition, but of a signal only our threads
         * unblock and only we send: blocked here, in the loop's thread
         * (with no SA_RESTART, it would interrupt its calls). */
        sigemptyset(&wake);
        sigaddset(&wake, TNS_WAKE_SIGNAL);
        if (pthread_sigmask(SIG_BLOCK, &wake, NULL) != 0 || sigaction(TNS_WAKE_SIGNAL, &sa, NULL) < 0)
                goto off;
        s->deferred_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->deferred_fd < 0)
                goto off;
        r = sd_event_add_io(s->event, &s->deferred_src, s->deferred_fd, EPOLLIN, on_deferred, s);
        if (r < 0) {
                s->deferred_fd = safe_close(s->deferred_fd);
                goto off;
        }
        (void) sd_event_source_set_description(s->deferred_src, "timens-deferred");
        return 0;
off:
        /* The loop receives for every listener, as it can. */
        tns_log(&s->log, LOG_DEBUG, "No receive threads, the event loop receives every call");
        return 0;
}

void supervisor_threads_sleep(struct tns_supervisor *s, const struct timespec *t) {
        if (s->n_threads == 0 || s->serving) {
                (void) nanosleep(t, NULL);
                return;
        }
        pthread_mutex_unlock(&s->lock);
        (void) nanosleep(t, NULL);
        lock_as_loop(s);
}

/* Before a hand-over, with the loop alive: the threads stop, and what
 * they handed over is served, as the loop served what it received before
 * it went. */
void tns_supervisor_stop_threads(struct tns_supervisor *s) {
        supervisor_threads_stop_all(s);
        /* The FUSE thread too: a request it read and could not answer
         * before a hand-over's exit would leave its reader waiting for
         * good, on a connection the successor serves (helper-47). */
        supervisor_procfs_server_done(s);
        serve_deferred(s);
}

void tns_supervisor_start_threads(struct tns_supervisor *s) {
        supervisor_procfs_server_resume(s);
        for (struct listener *l = s->listeners; l; l = l->next)
                (void) supervisor_thread_start(l);
}

/* At the end (the loop finished: an exec or a wait served now could not
 * be followed), the calls handed over are left unanswered: a successor
 * serves them from their copies, or (none) finds them from the in-flight
 * page's last id, just below them, and sends them back through the
 * filter; with no successor, they fail as every call does when the
 * listener closes. */
void supervisor_threads_done(struct tns_supervisor *s) {
        supervisor_threads_stop_all(s);
        drop_deferred(s, NULL, true);
        s->deferred_src = sd_event_source_disable_unref(s->deferred_src);
        s->deferred_fd = safe_close(s->deferred_fd);
}

int tns_supervisor_run(struct tns_supervisor *s) {
        sd_event *e = s->event;
        int r, code;

        /* Not before: what a successor does first (restore, resume the
         * predecessor's calls) sees only calls no one received yet. */
        s->running = true;
        /* A predecessor's slots are served by now (or had nothing to
         * serve: no record restored): ours from here. */
        if (s->recvs)
                for (size_t i = 0; i < ELEMENTSOF(s->recvs->slot); i++)
                        s->recvs->slot[i] = (struct tns_inflight_recv){};
        for (struct listener *l = s->listeners; l; l = l->next)
                (void) supervisor_thread_start(l);
        for (;;) {
                r = sd_event_get_state(e);
                if (r < 0)
                        goto finish;
                if (r == SD_EVENT_FINISHED)
                        break;
                /* sd_event_run(), with the lock let go for the wait only:
                 * sd-event's own state is this thread's alone. */
                r = sd_event_prepare(e);
                if (r == 0) {
                        pthread_mutex_unlock(&s->lock);
                        r = sd_event_wait(e, UINT64_MAX);
                        lock_as_loop(s);
                }
                if (r > 0)
                        r = sd_event_dispatch(e);
                if (r < 0)
                        goto finish;
                loop_let_threads_in(s);
        }
        r = sd_event_get_exit_code(e, &code);
        if (r >= 0)
                r = code;
finish:
        /* On every way out: what the caller frees next (the in-flight
         * page) is no thread's any more, and no FUSE request is read that
         * a successor (handed the fds) would not answer. */
        s->running = false;
        supervisor_threads_stop_all(s);
        supervisor_procfs_server_done(s);
        return r;
}
