/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one version of timens: timensd's hello reply and --version,
 * timensctl --version and timens-oci-hook --version say it (the man
 * pages' headers carry it too). */
#pragma once

#define TNS_VERSION "0.1.0"
