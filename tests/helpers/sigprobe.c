/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sigprobe: waits for one of the given signals and says who sent it.
 *
 *     sigprobe DIR SIG...      (SIG: TERM, USR1, ...)
 *
 * Takes the signals over even where they were ignored on entry (a shell
 * starts background jobs with SIGINT and SIGQUIT ignored, and sh's trap
 * cannot undo that), writes DIR/ready once it listens, then on the first
 * signal writes DIR/got:
 *
 *     SIGNAME CODE from-parent|from-other
 *
 * (CODE: SI_USER, SI_QUEUE, SI_KERNEL or the number) and exits with
 * 64 + the signal number, so the status says which signal arrived. Files
 * appear whole (written, then renamed), so a test can wait on them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_file(const char *dir, const char *name, const char *text) {
        char tmp[4096], path[4096];
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(tmp, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
                perror(path);
                exit(2);
        }
}

static int parse_signal(const char *name) {
        for (int s = 1; s < NSIG; s++) {
                const char *abbrev = sigabbrev_np(s);

                if (abbrev && strcmp(abbrev, name) == 0)
                        return s;
        }
        fprintf(stderr, "sigprobe: unknown signal '%s'\n", name);
        exit(2);
}

static const char *code_name(int code, char buf[static 16]) {
        switch (code) {
        case SI_USER:
                return "SI_USER";
        case SI_QUEUE:
                return "SI_QUEUE";
        case SI_KERNEL:
                return "SI_KERNEL";
        default:
                snprintf(buf, 16, "%d", code);
                return buf;
        }
}

static void on_signal(int sig) {
        /* Never runs: the signals stay blocked and sigwaitinfo takes them. */
}

int main(int argc, char *argv[]) {
        struct sigaction sa = {.sa_handler = on_signal};
        char text[128], code[16];
        siginfo_t si;
        sigset_t set;
        pid_t parent = getppid();
        int sig;

        if (argc < 3) {
                fprintf(stderr, "Usage: sigprobe DIR SIG...\n");
                return 2;
        }
        sigemptyset(&set);
        for (int i = 2; i < argc; i++) {
                sig = parse_signal(argv[i]);
                sigaddset(&set, sig);
                sigaction(sig, &sa, NULL);
        }
        sigprocmask(SIG_BLOCK, &set, NULL);
        snprintf(text, sizeof(text), "%d\n", (int) getpid());
        write_file(argv[1], "ready", text);
        do
                sig = sigwaitinfo(&set, &si);
        while (sig < 0);
        snprintf(text, sizeof(text), "%s %s %s\n", sigabbrev_np(sig), code_name(si.si_code, code),
                 si.si_pid == parent ? "from-parent" : "from-other");
        write_file(argv[1], "got", text);
        return 64 + sig;
}
