/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "vvar-layout.h"

/* "MAJOR.MINOR" at the start of the release, with nothing but digits in
 * both; a distribution's suffix after them is ignored. */
static int parse_version(const char *s, unsigned long *major, unsigned long *minor) {
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -1;
        *major = strtoul(s, &end, 10);
        if (*end != '.' || end[1] < '0' || end[1] > '9')
                return -1;
        *minor = strtoul(end + 1, &end, 10);
        if (*end != '\0' && *end != '.' && *end != '-' && *end != '+' && *end != '_')
                return -1;
        return 0;
}

enum tns_vvar_layout tns_vvar_layout_for_release(const char *release) {
        unsigned long major, minor;

        if (parse_version(release, &major, &minor) < 0 || major > 1000 || minor > 1000)
                return TNS_VVAR_UNKNOWN;
        /* 6.13 moved x86 to the generic data store and the vclock pages to
         * their own mapping; nothing after it changed clock_data[] on
         * x86-64 (6.15 renamed it, 6.17 appended the AUX clocks after it).
         * A newer kernel is tried too: the proof decides, not the number. */
        if (major > 6 || (major == 6 && minor >= 13))
                return TNS_VVAR_DATASTORE;
        return TNS_VVAR_UNKNOWN;
}
