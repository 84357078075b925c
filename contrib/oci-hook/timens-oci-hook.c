/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timens-oci-hook: the OCI hook of timens (see timens-oci-hook(8)).
 *
 *   createRuntime (default)  the container's init is created, its
 *       namespaces exist, its program has not started. Reads the state
 *       (stdin) and the bundle's config.json, makes the container's time
 *       namespace in timensd (starting timensd if its socket does not
 *       answer) and has timensd attach the init: filter and vDSO are in
 *       place when this returns. Any failure exits 1 with a message naming
 *       it: the runtime then refuses to start the container, which never
 *       runs with the host's clocks by accident.
 *   poststop                 nothing: the namespace goes with its last
 *       process (a shared org.timens.name: with the last container's).
 *
 * Options (in the hook's "args"): --socket PATH, --timensd PATH; and
 * --help, --version for a human. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "clocks.h"
#include "log.h"
#include "oci.h"
#include "paths.h" /* TNS_TIMENSD_PATH: generated from the Makefile's SBINDIR */
#include "rate.h"
#include "time-util.h"
#include "version.h"
#define HOOK_CONNECT_TRIES 100 /* x 50 ms */
#define HOOK_JOIN_TRIES 3 /* a namespace of the name gone between create and join */

static void hook_log_fn(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
                        va_list ap);
static const struct tns_logger hook_log = {hook_log_fn, (void *) "timens-oci-hook", LOG_INFO};

static bool is_dev_null(int fd) {
        struct stat st, null;

        return fstat(fd, &st) == 0 && stat("/dev/null", &null) == 0 && S_ISCHR(st.st_mode) &&
               st.st_rdev == null.st_rdev;
}

/* runc shows a failed hook's stderr; crun sends it to /dev/null unless
 * the annotation run.oci.hooks.stderr names a file. Then the message also
 * goes to crun's own stderr (O_APPEND: a file there is not overwritten),
 * so that the user sees why the container did not start. */
static void hook_log_fn(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt,
                        va_list ap) {
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        va_list copy;

        va_copy(copy, ap);
        tns_log_stderr(userdata, level, error, ctx, fmt, ap);
        if (level <= LOG_ERR && is_dev_null(STDERR_FILENO)) {
                snprintf(path, sizeof(path), "/proc/%d/fd/2", (int) getppid());
                fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0 && !is_dev_null(fd) && dup2(fd, STDERR_FILENO) >= 0)
                        tns_log_stderr(userdata, level, error, ctx, fmt, copy);
        }
        va_end(copy);
}

struct hook {
        const char *socket;
        const char *timensd;
        bool poststop;
        struct tns_oci_state st;
        struct tns_oci_request req;
};

static int read_all(int fd, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = malloc(TNS_OCI_MAX_STATE + 1);
        size_t len = 0;
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        while ((n = read(fd, buf + len, TNS_OCI_MAX_STATE + 1 - len)) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                len += (size_t) n;
                if (len > TNS_OCI_MAX_STATE)
                        return -EMSGSIZE;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* The kernel's own time namespace of the container, if the runtime made
 * one (a runtime newer than this machine's honours linux.timeOffsets, or
 * `time` in linux.namespaces): 1 and its offsets if the container's
 * program will run in a time namespace other than ours, 0 if not. That is
 * the init's time_for_children: a runtime may unshare(CLONE_NEWTIME) and
 * write the offsets in the init itself, which enters that namespace only
 * at the exec of the program (exec_task_namespaces(), timens_on_fork());
 * and timens_offsets shows that same namespace's offsets
 * (proc_timens_show_offsets() reads time_ns_for_children). Where the init
 * is in it already, its time and time_for_children are one. */
static int kernel_timens(pid_t pid, int64_t got[TNS_CLASS_MAX]) {
        char path[64], line[128];
        struct stat self, target;
        _cleanup_(fclosep) FILE *f = NULL;

        memset(got, 0, sizeof(int64_t) * TNS_CLASS_MAX);
        snprintf(path, sizeof(path), "/proc/%d/ns/time_for_children", (int) pid);
        if (stat("/proc/self/ns/time", &self) < 0 || stat(path, &target) < 0 || self.st_ino == target.st_ino)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int) pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f)) {
                char name[32];
                long long sec, nsec;

                if (sscanf(line, "%31s %lld %lld", name, &sec, &nsec) != 3)
                        continue;
                if (strcmp(name, "monotonic") == 0)
                        got[TNS_CLASS_MONOTONIC] = sec * 1000000000LL + nsec;
                else if (strcmp(name, "boottime") == 0)
                        got[TNS_CLASS_BOOTTIME] = sec * 1000000000LL + nsec;
        }
        return 1;
}

/* What differs between the kernel time namespace's offsets (got) and the
 * request, as "monotonic +8m20s there, 0 asked; realtime asked, ..." in
 * buf; "" if nothing does. Monotonic and boottime requests are always
 * relative (tns_offset_parse without dates); a realtime offset of 0 asks
 * for nothing. */
static void kernel_timens_diff(const struct tns_oci_request *req, const int64_t got[TNS_CLASS_MAX], char *buf,
                               size_t size) {
        const struct tns_clock_arg *rt = &req->clocks[TNS_CLASS_REALTIME];
        size_t n = 0;

        buf[0] = '\0';
        for (int c = TNS_CLASS_MONOTONIC; c <= TNS_CLASS_BOOTTIME && n < size; c++) {
                int64_t want = req->clocks[c].set ? req->clocks[c].spec.ns : 0;
                char g[64], w[64];

                if (want == got[c])
                        continue;
                (void) tns_offset_format(got[c], g, sizeof(g));
                (void) tns_offset_format(want, w, sizeof(w));
                n += (size_t) snprintf(buf + n, size - n, "%s%s %s there, %s asked", n ? "; " : "",
                                       tns_class_name((enum tns_clock_class) c), g, w);
        }
        if (rt->set && (rt->spec.kind != TNS_OFFSET_RELATIVE || rt->spec.ns != 0) && n < size)
                snprintf(buf + n, size - n, "%srealtime asked, which a kernel time namespace does not shift",
                         n ? "; " : "");
}

/* Where the runtime already put the container in a kernel time namespace
 * with offsets: nothing is applied twice. 1 (nothing to do) if its
 * offsets are exactly what is asked and nothing else is (no realtime);
 * an error naming what differs otherwise, as timens cannot stack on it
 * (the container's vDSO reads would carry the kernel's offsets, the
 * emulated calls not). A kernel time namespace without offsets changes
 * nothing. */
static int check_kernel_timens(const struct hook *h) {
        int64_t got[TNS_CLASS_MAX];
        char diff[512];

        if (!kernel_timens(h->st.pid, got) || (got[TNS_CLASS_MONOTONIC] == 0 && got[TNS_CLASS_BOOTTIME] == 0))
                return 0;
        kernel_timens_diff(&h->req, got, diff, sizeof(diff));
        if (!diff[0]) {
                tns_log(&hook_log, LOG_INFO,
                        "Container %s is in a kernel time namespace with the asked offsets already: nothing to do",
                        h->st.id);
                return 1;
        }
        return tns_log_errno(&hook_log, LOG_ERR, EEXIST,
                             "Container %s is in a kernel time namespace whose offsets are not what is asked (%s): "
                             "timens cannot add to a kernel time namespace with offsets; drop the runtime's time "
                             "namespace or the org.timens.* annotations",
                             h->st.id, diff);
}

/* linux.timeOffsets first, the annotations over them. */
static int read_request(struct hook *h) {
        _cleanup_free_ char *path = NULL;
        _cleanup_json_ json_object *config = NULL;
        char err[TNS_OCI_ERR_MAX] = "";
        int64_t to[TNS_CLASS_MAX];
        unsigned mask;
        int r;

        tns_oci_default_name(h->st.id, h->req.name);
        if (!h->st.bundle)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL, "The container state has no \"bundle\"");
        if (asprintf(&path, "%s/config.json", h->st.bundle) < 0)
                return -ENOMEM;
        config = json_object_from_file(path);
        if (!config)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL, "Failed to read %s: %s", path,
                                     json_util_get_last_err() ?: "not JSON");
        r = tns_oci_time_offsets(config, to, &mask, err);
        if (r < 0)
                return tns_log_errno(&hook_log, LOG_ERR, r, "%s: %s", path, err);
        for (int c = 0; c < TNS_CLASS_MAX; c++)
                if (mask & (1U << c))
                        h->req.clocks[c] = (struct tns_clock_arg){.set = true, .spec = {TNS_OFFSET_RELATIVE, to[c]}};
        r = tns_oci_annotations_parse(h->st.annotations, &h->req, err);
        if (r < 0)
                return tns_log_errno(&hook_log, LOG_ERR, r, "Container %s: %s", h->st.id, err);
        if (!h->req.name[0])
                return tns_log_errno(
                        &hook_log, LOG_ERR, EINVAL,
                        "Container id '%s' is not a namespace name: set annotation " TNS_OCI_ANNOTATION_NAME, h->st.id);
        return check_kernel_timens(h);
}

/* timensd, detached: its own session, stdio away from the runtime's pipes
 * (a runtime waits for EOF on the hook's stdout and stderr, which a
 * daemon holding them would never give), its log beside its socket. */
static int start_timensd(const struct hook *h) {
        _cleanup_free_ char *copy = strdup(h->socket), *log = NULL;
        int status;
        pid_t pid;

        if (!copy || asprintf(&log, "%s/timensd.log", dirname(copy)) < 0)
                return -ENOMEM;
        (void) mkdir(dirname(copy), 0755);
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR), out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

                (void) setsid();
                (void) dup2(null, STDIN_FILENO);
                (void) dup2(null, STDOUT_FILENO);
                (void) dup2(out >= 0 ? out : null, STDERR_FILENO);
                /* Without --foreground timensd returns once it listens. */
                execl(h->timensd, "timensd", "--socket", h->socket, "--log-target", "auto", (char *) NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return negative_errno();
        /* Another hook may have started one meanwhile: its socket wins. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
                return tns_log_errno(&hook_log, LOG_ERR, ENOEXEC, "Failed to start %s (see %s)", h->timensd, log);
        return 0;
}

static int connect_daemon(const struct hook *h, struct tns_client **ret) {
        bool started = false;
        int r;

        for (int i = 0; i < HOOK_CONNECT_TRIES; i++) {
                r = tns_client_connect(h->socket, ret);
                if (r >= 0 || (r != -ENOENT && r != -ECONNREFUSED && r != -EAGAIN))
                        break;
                if (!started && !h->poststop) {
                        r = start_timensd(h);
                        if (r < 0)
                                return r;
                        started = true;
                        continue;
                }
                if (h->poststop)
                        break;
                (void) poll(NULL, 0, 50);
        }
        if (r < 0 && !h->poststop)
                return tns_log_errno(&hook_log, LOG_ERR, r, "Failed to reach timensd at %s: %m", h->socket);
        return r;
}

static int call(struct tns_client *c, struct tns_request *req, struct tns_proto_error *e) {
        _cleanup_json_ json_object *res = NULL;
        int r;

        r = tns_client_call(c, req, NULL, 0, &res, e);
        if (r < 0)
                return tns_log_errno(&hook_log, LOG_ERR, r, "Failed to talk to timensd (%s): %m", tns_op_name(req->op));
        return r == 1 ? 0 : -EPROTO;
}

/* The request's clocks and rate, as ATTACH makes a namespace with them. */
static void request_clocks(const struct hook *h, struct tns_request *req) {
        memcpy(req->clocks, h->req.clocks, sizeof(req->clocks));
        if (h->req.rated) {
                /* org.timens.faketime: rate-capable even at x1. */
                uint64_t mult[TNS_CLASS_MAX];
                int freeze[TNS_CLASS_MAX];

                tns_oci_request_rates(&h->req, mult, freeze);
                for (int c = 0; c < TNS_CLASS_MAX; c++) {
                        tns_request_set_rate(req, 1U << c, mult[c]);
                        tns_request_set_freeze(req, 1U << c, freeze[c] > 0 ? TNS_FREEZE_ON : TNS_FREEZE_KEEP);
                }
        }
}

/* A namespace of that name is there (containers sharing org.timens.name,
 * or one made with `timensctl create`): joined only if it has the clocks
 * this container asks for (tns_oci_join_check), so that no container
 * takes another's clocks by taking its name first. */
static int join_check(struct hook *h, struct tns_client *c, uint64_t *ret_id) {
        struct tns_request req = {.op = TNS_OP_SHOW, .name = h->req.name};
        _cleanup_free_ struct tns_ns_view *v = malloc(sizeof(struct tns_ns_view));
        _cleanup_json_ json_object *res = NULL;
        struct tns_oci_existing ex = {};
        struct tns_proto_error e = {};
        char err[TNS_OCI_ERR_MAX];
        struct timespec now;
        json_object *ns;
        int r;

        if (!v)
                return -ENOMEM;
        r = tns_client_call(c, &req, NULL, 0, &res, &e);
        if (r < 0)
                return tns_log_errno(&hook_log, LOG_ERR, r, "Failed to talk to timensd (show): %m");
        if (r == 0 && e.code == TNS_ERR_NOT_FOUND)
                return -ENOENT; /* gone meanwhile: made anew */
        if (r == 0 || !json_object_object_get_ex(res, "namespace", &ns) || tns_ns_view_from_json(ns, v) < 0)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL,
                                     "timensd did not show namespace '%s' of container %s: %s", h->req.name, h->st.id,
                                     r == 0 ? e.message : "a malformed reply");
        memcpy(ex.offset_ns, v->offset_ns, sizeof(ex.offset_ns));
        ex.realtime_now_ns = v->now_ns[TNS_CLASS_REALTIME];
        ex.created_host_ns = v->created_realtime_ns;
        ex.rate_capable = v->rate_capable;
        memcpy(ex.rate_mult, v->rate_mult, sizeof(ex.rate_mult));
        memcpy(ex.run_mult, v->run_mult, sizeof(ex.run_mult));
        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                return tns_log_errno(&hook_log, LOG_ERR, errno, "Failed to read the clock: %m");
        r = tns_oci_join_check(&h->req, &ex, (int64_t) now.tv_sec * TNS_NSEC_PER_SEC + now.tv_nsec, err);
        if (r < 0)
                return tns_log_errno(&hook_log, LOG_ERR, r, "Container %s cannot join namespace '%s': %s", h->st.id,
                                     h->req.name, err);
        *ret_id = v->id;
        return 0;
}

static int create_runtime(struct hook *h) {
        _cleanup_client_ struct tns_client *c = NULL;
        struct tns_request req;
        struct tns_proto_error e = {};
        int r;

        if (h->st.pid <= 0)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL, "The container state of %s has no \"pid\"", h->st.id);
        r = read_request(h);
        if (r != 0)
                return r < 0 ? r : 0;
        r = connect_daemon(h, &c);
        if (r < 0)
                return r;
        /* Attaching seizes the init and injects filter and vDSO. */
        tns_client_set_timeout(c, 30000);
        /* A new namespace made with the attach: it goes with its last
         * process (the container's, and those of containers that joined
         * it), and an attach that fails takes it away again. One of that
         * name is joined by the id the check saw: not one made under the
         * name since (its last process gone meanwhile); then again. */
        for (unsigned try = 0;; try++) {
                uint64_t id = 0;

                req = (struct tns_request){.op = TNS_OP_ATTACH, .name = h->req.name, .pid = h->st.pid};
                request_clocks(h, &req);
                e = (struct tns_proto_error){};
                r = call(c, &req, &e);
                if (!(r == -EPROTO && e.code == TNS_ERR_EXISTS))
                        break;
                r = join_check(h, c, &id);
                if (r == -ENOENT && try < HOOK_JOIN_TRIES)
                        continue;
                if (r == -ENOENT)
                        return tns_log_errno(&hook_log, LOG_ERR, EAGAIN,
                                             "Namespace '%s' of container %s went away each time it was joined",
                                             h->req.name, h->st.id);
                if (r < 0)
                        return r;
                req = (struct tns_request){.op = TNS_OP_ATTACH, .ns_id = id, .join = true, .pid = h->st.pid};
                e = (struct tns_proto_error){};
                r = call(c, &req, &e);
                if (!(r == -EPROTO && e.code == TNS_ERR_NOT_FOUND) || try >= HOOK_JOIN_TRIES)
                        break;
        }
        if (r == -EPROTO)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL,
                                     "timensd could not attach the init (pid %d) of container %s to namespace '%s': %s",
                                     (int) h->st.pid, h->st.id, h->req.name, e.message);
        return r;
}

/* Nothing is left to do: the container's namespace went with its last
 * process. It destroyed it once, by name, which let a container's
 * poststop (a failed create runs it too) destroy a namespace that was not
 * its own (`timensctl create`'s, another user's): kept, as a no-op, for
 * the configurations that name it. */
static int poststop(struct hook *h) {
        (void) h;
        return 0;
}

static void help(void) {
        printf("Usage: timens-oci-hook [--socket PATH] [--timensd PATH] [createRuntime|poststop]\n"
               "\n"
               "The OCI hook of timens: the runtime (runc, crun, podman's hooks.d) runs it with\n"
               "the container's state on stdin. createRuntime (default) puts the container's\n"
               "init into a time namespace of timensd; poststop removes it.\n"
               "\n"
               "Options:\n"
               "  --socket PATH   timensd's socket (default $TIMENS_SOCKET or /run/timens/timensd.sock)\n"
               "  --timensd PATH  the daemon to start if none answers (default $TIMENSD or\n"
               "                  " TNS_TIMENSD_PATH ")\n"
               "  -h --help       show this help\n"
               "  --version       show the version\n"
               "\n"
               "Exit status: 0 on success, 1 on failure (the runtime then refuses to start the\n"
               "container). See timens-oci-hook(8).\n");
}

/* 1 to go on, 0 after --help or --version, or -errno. */
static int parse_args(int argc, char *argv[], struct hook *h) {
        static const struct option options[] = {
                {"socket", required_argument, NULL, 'S'},
                {"timensd", required_argument, NULL, 'D'},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, 'V'},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (c == 'S')
                        h->socket = optarg;
                else if (c == 'D')
                        h->timensd = optarg;
                else if (c == 'h')
                        return help(), 0;
                else if (c == 'V')
                        return puts("timens-oci-hook " TNS_VERSION), 0;
                else
                        return -EINVAL;
        }
        if (optind < argc && strcmp(argv[optind], "poststop") == 0)
                h->poststop = true;
        else if (optind < argc && strcmp(argv[optind], "createRuntime") != 0)
                return tns_log_errno(&hook_log, LOG_ERR, EINVAL, "Unknown stage '%s' (createRuntime, poststop)",
                                     argv[optind]);
        return 1;
}

int main(int argc, char *argv[]) {
        struct hook h = {.timensd = getenv("TIMENSD") ?: TNS_TIMENSD_PATH};
        _cleanup_free_ char *text = NULL;
        char err[TNS_OCI_ERR_MAX] = "";
        size_t len;
        int r;

        h.socket = tns_client_default_socket();
        r = parse_args(argc, argv, &h);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        r = read_all(STDIN_FILENO, &text, &len);
        if (r < 0) {
                tns_log_errno(&hook_log, LOG_ERR, r, "Failed to read the container state on stdin: %m");
                return EXIT_FAILURE;
        }
        r = tns_oci_state_parse(text, len, &h.st, err);
        if (r < 0) {
                tns_log_errno(&hook_log, LOG_ERR, r, "%s", err);
                tns_oci_state_done(&h.st);
                return EXIT_FAILURE;
        }
        r = h.poststop ? poststop(&h) : create_runtime(&h);
        tns_oci_state_done(&h.st);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
