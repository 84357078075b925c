/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bundle's config.json, read and written whole: the one file of lib/oci
 * that touches the file system, shared by `timensctl oci-config` and
 * timens-runtime. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci.h"

_printf_(3, 4) static int fail(char *err, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, TNS_OCI_ERR_MAX, fmt, ap);
        va_end(ap);
        return r;
}

int tns_oci_bundle_read(const char *bundle, json_object **ret, char *err) {
        _cleanup_free_ char *path = NULL;
        json_object *config;

        if (asprintf(&path, "%s/config.json", bundle) < 0)
                return -ENOMEM;
        if (access(path, R_OK) < 0)
                return fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
        config = json_object_from_file(path);
        if (!config)
                return fail(err, -EINVAL, "%s is not JSON: %s", path, json_util_get_last_err() ?: "empty");
        if (!json_object_is_type(config, json_type_object)) {
                json_object_put(config);
                return fail(err, -EINVAL, "%s is not a JSON object", path);
        }
        *ret = config;
        return 0;
}

int tns_oci_bundle_write(const char *bundle, json_object *config, char *err) {
        _cleanup_free_ char *path = NULL, *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *text = json_object_to_json_string_ext(config, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
        struct stat st;
        size_t len = text ? strlen(text) : 0;
        int r;

        if (!text || asprintf(&path, "%s/config.json", bundle) < 0 || asprintf(&tmp, "%s.timens.XXXXXX", path) < 0)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return fail(err, -errno, "cannot stat %s: %s", path, strerror(errno));
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return fail(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
        errno = 0; /* a short write sets none */
        if (write(fd, text, len) != (ssize_t) len || write(fd, "\n", 1) != 1 || fchmod(fd, st.st_mode & 07777) < 0 ||
            fsync(fd) < 0 || rename(tmp, path) < 0) {
                r = -(errno ?: EIO);
                (void) unlink(tmp);
                return fail(err, r, "cannot write %s: %s", path, strerror(-r));
        }
        return 0;
}
