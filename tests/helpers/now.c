/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints CLOCK_REALTIME's seconds as libc reads it (through the vDSO).
 * Plain C with nothing glibc-only: it is also built static with musl. */
#include <stdio.h>
#include <time.h>

int main(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
                return 1;
        printf("%lld\n", (long long) ts.tv_sec);
        return 0;
}
