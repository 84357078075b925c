/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A member of a namespace whose grant is "none" sheds what places it in
 * the namespace — its namespace file's mappings (munmap) and its place in
 * the tree (a double fork: init adopts it) — and then asks on timensd's
 * control socket, hoping for its user's full access. It keeps its seccomp
 * filter, which no process can shed (tests/bats/security-sockets.bats).
 *
 *   grant-escape SOCKET REQUEST-JSON
 *
 * Prints "ppid N reply: REPLY" (N is 1, or a subreaper's pid, once the
 * escape took place). It reads no clock: its vDSO is gone with the
 * mappings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_MAPS 64

static void unmap_ours(void) {
        unsigned long lo[MAX_MAPS], hi[MAX_MAPS];
        char line[512];
        int n = 0;
        FILE *f = fopen("/proc/self/maps", "re");

        while (f && n < MAX_MAPS && fgets(line, sizeof(line), f))
                if (strstr(line, "timens-vdso") && sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
                        n++;
        if (f)
                fclose(f);
        for (int i = 0; i < n; i++)
                munmap((void *) lo[i], hi[i] - lo[i]);
}

static int ask(const char *path, const char *request, int out) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char buf[4096];
        ssize_t n;
        int s;

        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                dprintf(out, "connect: %s\n", strerror(errno));
                return 1;
        }
        dprintf(s, "%s\n", request);
        n = read(s, buf, sizeof(buf) - 1);
        if (n <= 0) {
                dprintf(out, "no reply\n");
                return 1;
        }
        buf[n] = '\0';
        dprintf(out, "ppid %d reply: %s", (int) getppid(), buf);
        return 0;
}

int main(int argc, char *argv[]) {
        char buf[4096];
        int pipefd[2];
        ssize_t n;
        pid_t child;

        if (argc != 3) {
                fprintf(stderr, "usage: grant-escape SOCKET REQUEST-JSON\n");
                return 2;
        }
        if (pipe(pipefd) < 0)
                return 2;
        child = fork();
        if (child < 0)
                return 2;
        if (child == 0) {
                const pid_t mid = getpid();

                close(pipefd[0]);
                if (fork() != 0)
                        _exit(0);
                /* The grandchild: adopted once its parent is gone. */
                for (int i = 0; i < 200 && getppid() == mid; i++)
                        usleep(10000);
                setsid();
                unmap_ours();
                _exit(ask(argv[1], argv[2], pipefd[1]));
        }
        close(pipefd[1]);
        (void) waitpid(child, NULL, 0);
        /* Until the grandchild closes its end: it has answered. */
        while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
                fwrite(buf, 1, (size_t) n, stdout);
        return 0;
}
