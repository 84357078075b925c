/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where an engine looks for a runtime's error. containerd's runc shim
 * (and so docker, ctr and the CRI) passes --log FILE --log-format json and,
 * when create fails, reports the last entry of level "error" in FILE;
 * podman's conmon reads stderr. An error goes to both; anything else
 * to stderr only, which for create/run may be the container's own
 * output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json-util.h"
#include "timens-runtime.h"

static void time_text(char *buf, size_t size) {
        struct timespec ts;
        struct tm tm;

        buf[0] = '\0';
        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm))
                (void) strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One line as runc writes its own: logrus's JSON or text format. */
static void log_file(const struct runtime_log *rl, const char *msg) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        _cleanup_json_ json_object *o = NULL;
        char t[64];
        int n;

        fd = open(rl->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0)
                return;
        time_text(t, sizeof(t));
        if (rl->json) {
                o = json_object_new_object();
                if (!o || json_object_object_add(o, "level", json_object_new_string("error")) < 0 ||
                    json_object_object_add(o, "msg", json_object_new_string(msg)) < 0 ||
                    json_object_object_add(o, "time", json_object_new_string(t)) < 0)
                        return;
                n = asprintf(&line, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        } else {
                n = asprintf(&line, "time=\"%s\" level=error msg=\"%s\"\n", t, msg);
        }
        if (n > 0)
                (void) !write(fd, line, (size_t) n);
}

void runtime_log_fn(void *userdata, int level, int error, const struct tns_log_ctx *ctx, const char *fmt, va_list ap) {
        const struct runtime_log *rl = userdata;
        char buf[1024], msg[1100];

        errno = error;
        vsnprintf(buf, sizeof(buf), fmt, ap);
        snprintf(msg, sizeof(msg), "timens-runtime: %s", buf);
        fprintf(stderr, "%s\n", msg);
        if (level <= LOG_ERR && rl && rl->path)
                log_file(rl, msg);
}
