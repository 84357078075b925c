/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-c with _cleanup_: every layer that reads or writes JSON (the wire
 * protocol, the OCI code, restart records) frees a json_object this way. */
#pragma once

#include <json-c/json.h>

#include "util.h"

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)
