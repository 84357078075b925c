/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our x86-64 vDSO image (vdso-patch/), embedded at build time: the bytes of
 * build/vdso-patch/timens-vdso.so as vdso-patch/check-vdso checked them.
 * The image is linked at 0 and expects, just below wherever it is mapped,
 * the parameter page and the offsets page of lib/core/offsets-page.h.
 *
 * The array starts on a page and is zero-padded to a whole number of pages,
 * so copying or mapping ROUND_UP(tns_vdso_image_size, TNS_PAGE_SIZE) bytes
 * from it stays inside it. */
#pragma once

#include <stddef.h>

extern const unsigned char tns_vdso_image[] __attribute__((aligned(4096)));
extern const size_t tns_vdso_image_size; /* the ELF file's size, not padded */
