/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Namespace names (ns-model.h). */
#include <string.h>

#include "ns-model.h"

static bool name_char(char c, bool first) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                return true;
        return !first && c != '\0' && strchr("_.:@+-", c);
}

bool tns_ns_name_valid(const char *name) {
        bool digits = true;
        size_t n;

        if (!name)
                return false;
        for (n = 0; name[n]; n++) {
                if (n >= TNS_NS_NAME_MAX || !name_char(name[n], n == 0))
                        return false;
                if (name[n] < '0' || name[n] > '9')
                        digits = false;
        }
        return n > 0 && !digits;
}
