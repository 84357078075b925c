/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A vfork parent that does not get its memory back: the child sleeps
 * instead of exec'ing, and the parent sleeps in the kernel until it does,
 * where no ptrace stop reaches it (a PTRACE_INTERRUPT waits with it).
 * tests/bats/security-attach.bats attaches trees of these, to see the
 * attach bounded. The child exits on SIGTERM, and the parent after it. */
#include <signal.h>
#include <unistd.h>

int main(void) {
        /* In the child of vfork only _exit and exec are allowed: pause()
         * and the default action of SIGTERM end it without touching the
         * parent's memory. */
        if (vfork() == 0) {
                pause();
                _exit(0);
        }
        return 0;
}
