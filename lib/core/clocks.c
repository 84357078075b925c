/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "clocks.h"
#include "util.h"

const clockid_t tns_virtual_clocks[] = {
        CLOCK_REALTIME,        CLOCK_MONOTONIC,        CLOCK_MONOTONIC_RAW,
        CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
        CLOCK_REALTIME_ALARM,  CLOCK_BOOTTIME_ALARM,   CLOCK_TAI,
};
const unsigned tns_n_virtual_clocks = ELEMENTSOF(tns_virtual_clocks);

int tns_clock_class(clockid_t id) {
        switch (id) {
        case CLOCK_MONOTONIC:
        case CLOCK_MONOTONIC_RAW:
        case CLOCK_MONOTONIC_COARSE:
                return TNS_CLASS_MONOTONIC;
        case CLOCK_BOOTTIME:
        case CLOCK_BOOTTIME_ALARM:
                return TNS_CLASS_BOOTTIME;
        case CLOCK_REALTIME:
        case CLOCK_REALTIME_COARSE:
        case CLOCK_REALTIME_ALARM:
        case CLOCK_TAI:
                return TNS_CLASS_REALTIME;
        default:
                return -EINVAL;
        }
}

bool tns_clock_settable(clockid_t id) {
        return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
               id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

const char *tns_clock_name(clockid_t id) {
        static const char *const names[] = {
                [CLOCK_REALTIME] = "CLOCK_REALTIME",
                [CLOCK_MONOTONIC] = "CLOCK_MONOTONIC",
                [CLOCK_PROCESS_CPUTIME_ID] = "CLOCK_PROCESS_CPUTIME_ID",
                [CLOCK_THREAD_CPUTIME_ID] = "CLOCK_THREAD_CPUTIME_ID",
                [CLOCK_MONOTONIC_RAW] = "CLOCK_MONOTONIC_RAW",
                [CLOCK_REALTIME_COARSE] = "CLOCK_REALTIME_COARSE",
                [CLOCK_MONOTONIC_COARSE] = "CLOCK_MONOTONIC_COARSE",
                [CLOCK_BOOTTIME] = "CLOCK_BOOTTIME",
                [CLOCK_REALTIME_ALARM] = "CLOCK_REALTIME_ALARM",
                [CLOCK_BOOTTIME_ALARM] = "CLOCK_BOOTTIME_ALARM",
                [CLOCK_TAI] = "CLOCK_TAI",
        };

        if (id < 0 || (unsigned) id >= ELEMENTSOF(names))
                return NULL;
        return names[id];
}

const char *tns_class_name(enum tns_clock_class c) {
        static const char *const names[TNS_CLASS_MAX] = {
                [TNS_CLASS_MONOTONIC] = "monotonic",
                [TNS_CLASS_BOOTTIME] = "boottime",
                [TNS_CLASS_REALTIME] = "realtime",
        };

        return (unsigned) c < TNS_CLASS_MAX ? names[c] : NULL;
}
