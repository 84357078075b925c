/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runtime.conf: which runtime to exec and how timens is switched on.
 *
 *   # /etc/timens/runtime.conf
 *   runtime = runc             # crun, or an absolute path
 *   mode = hook                # or agent (linux.seccomp.listenerPath)
 *   hook = /usr/local/libexec/timens/timens-oci-hook
 *   socket = /run/timens/timensd.sock
 *   timensd = /usr/local/sbin/timensd
 *   agent-socket = /run/timens/seccomp-agent.sock
 *
 * A misspelt key is an error: a setting that is silently ignored would
 * run containers in a way nobody asked for. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "oci.h"
#include "paths.h" /* TNS_OCI_HOOK_PATH: generated from the Makefile's LIBEXECDIR */
#include "timens-runtime.h"

void runtime_conf_defaults(struct runtime_conf *ret) {
        *ret = (struct runtime_conf){.mode = RUNTIME_MODE_HOOK};
        snprintf(ret->runtime, sizeof(ret->runtime), "runc");
        snprintf(ret->hook, sizeof(ret->hook), "%s", TNS_OCI_HOOK_PATH);
        snprintf(ret->agent_socket, sizeof(ret->agent_socket), "%s", TNS_OCI_DEFAULT_AGENT_SOCKET);
}

static char *strip(char *s) {
        char *end;

        while (isspace((unsigned char) *s))
                s++;
        end = s + strlen(s);
        while (end > s && isspace((unsigned char) end[-1]))
                *--end = '\0';
        return s;
}

static int set_path(char *dest, size_t size, const char *key, const char *value, bool name_ok, char *err,
                    size_t err_size) {
        if (value[0] != '/' && !(name_ok && value[0] && !strchr(value, '/'))) {
                snprintf(err, err_size, "%s: '%s' is not an absolute path%s", key, value,
                         name_ok ? " nor a program name" : "");
                return -EINVAL;
        }
        if (strlen(value) >= size) {
                snprintf(err, err_size, "%s: the path is too long", key);
                return -EINVAL;
        }
        snprintf(dest, size, "%s", value);
        return 0;
}

int runtime_conf_line(const char *line, struct runtime_conf *c, char *err, size_t err_size) {
        _cleanup_free_ char *copy = strdup(line);
        char *s, *eq, *hash, *key, *value;

        if (!copy)
                return -ENOMEM;
        hash = strchr(copy, '#');
        if (hash)
                *hash = '\0';
        s = strip(copy);
        if (!*s)
                return 0;
        eq = strchr(s, '=');
        if (!eq) {
                snprintf(err, err_size, "'%s' is not KEY = VALUE", s);
                return -EINVAL;
        }
        *eq = '\0';
        key = strip(s);
        value = strip(eq + 1);
        if (strcmp(key, "runtime") == 0)
                return set_path(c->runtime, sizeof(c->runtime), key, value, true, err, err_size);
        if (strcmp(key, "hook") == 0)
                return set_path(c->hook, sizeof(c->hook), key, value, false, err, err_size);
        if (strcmp(key, "socket") == 0)
                return set_path(c->socket, sizeof(c->socket), key, value, false, err, err_size);
        if (strcmp(key, "timensd") == 0)
                return set_path(c->timensd, sizeof(c->timensd), key, value, false, err, err_size);
        if (strcmp(key, "agent-socket") == 0)
                return set_path(c->agent_socket, sizeof(c->agent_socket), key, value, false, err, err_size);
        if (strcmp(key, "mode") == 0) {
                if (strcmp(value, "hook") == 0)
                        c->mode = RUNTIME_MODE_HOOK;
                else if (strcmp(value, "agent") == 0)
                        c->mode = RUNTIME_MODE_AGENT;
                else {
                        snprintf(err, err_size, "mode: '%s' is neither hook nor agent", value);
                        return -EINVAL;
                }
                return 0;
        }
        snprintf(err, err_size, "unknown key '%s' (runtime, mode, hook, socket, timensd, agent-socket)", key);
        return -EINVAL;
}

int runtime_conf_load(const char *path, bool must_exist, struct runtime_conf *c, const struct tns_logger *log) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        char err[256];
        unsigned n = 0;
        int r;

        if (!f && errno == ENOENT && !must_exist)
                return 0;
        if (!f)
                return tns_log_errno(log, LOG_ERR, errno, "Failed to open %s: %m", path);
        while (getline(&line, &size, f) >= 0) {
                n++;
                r = runtime_conf_line(line, c, err, sizeof(err));
                if (r < 0)
                        return tns_log_errno(log, LOG_ERR, r, "%s:%u: %s", path, n, err);
        }
        return 0;
}
