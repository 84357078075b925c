/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libfaketime's FAKETIME specifications, as timens takes them (timensctl
 * --faketime, the OCI annotation org.timens.faketime):
 *
 *   +2d  -3h  +0  -120    relative: the clocks move by it (offset-parse.h's
 *                         relative forms, with a mandatory sign)
 *   @2030-01-01 12:00:00  start at: CLOCK_REALTIME reads that date now and
 *                         runs on
 *   2030-01-01 12:00:00   frozen: CLOCK_REALTIME reads that date, always
 *   ... xR                a trailing rate for the two first forms: "+0 x10",
 *                         "-3h x2", "@2030-01-01 00:00:00 x0.5"
 *
 * The rate and the freeze apply to every clock (MONOTONIC and BOOTTIME
 * run and stand with REALTIME, as in libfaketime); the offset or date to
 * CLOCK_REALTIME only: MONOTONIC keeps its reading, since a date has no
 * meaning for it and a jump of it is what programs least expect.
 *
 * Refused, with the reason in *ret_why: libfaketime's increments ("i2.0":
 * each read of the clock advances it, per process; timens' clocks are one
 * per namespace, read by every member's vDSO without asking anyone, so
 * "each read" has no single meaning there), the file and "%" forms, a
 * rate on a frozen date, and whatever libfaketime itself refuses. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "offset-parse.h"

struct tns_faketime {
        bool has_realtime;
        struct tns_offset_spec realtime; /* relative, or a date (absolute) */
        uint64_t rate_mult; /* 0: none given */
        bool freeze;
};

/* 0 or -EINVAL/-ERANGE with a static reason in *ret_why. */
int tns_faketime_parse(const char *s, struct tns_faketime *ret, const char **ret_why);
