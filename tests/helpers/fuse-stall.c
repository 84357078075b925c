/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A member that runs a FUSE server of its own which never answers FLUSH,
 * and has timensd handed an fd of its file (tests/bats/security-fuse.bats;
 * helper-43, F2): a close of that fd by timensd waits until the server
 * answers or dies.
 *
 *   fuse-stall SECONDS PROGRAM ARGS...
 *       Mounts the file in a mount namespace of its own, runs PROGRAM
 *       with ARGS, "@FILE" among them replaced by the file's path (e.g.
 *       cover-attack setns @FILE: tests/helpers/cover-attack.c), lets the
 *       server live SECONDS, then kills it (its connection aborts, and a
 *       FLUSH still waiting with it: PROGRAM's own at its exit too).
 *       Prints "flushes=N" (the FLUSH requests the server saw), and exits
 *       with PROGRAM's status.
 *
 * Needs root (a mount namespace of its own, /dev/fuse). */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void reply(int fuse, uint64_t unique, int error, const void *data, size_t len) {
        struct fuse_out_header h = {.len = (uint32_t) (sizeof(h) + len), .error = error, .unique = unique};
        struct iovec iov[2] = {{&h, sizeof(h)}, {(void *) data, len}};

        if (writev(fuse, iov, len ? 2 : 1) < 0 && errno != ENOENT)
                _exit(1);
}

/* Answers everything a file needs but FLUSH; counts those in *flushes. */
static _Noreturn void serve(int fuse, volatile int *flushes) {
        static char buf[FUSE_MIN_READ_BUFFER + 65536];

        for (;;) {
                struct fuse_in_header *h = (void *) buf;
                ssize_t n = read(fuse, buf, sizeof(buf));

                if (n < 0 && (errno == EINTR || errno == ENOENT))
                        continue;
                if (n < (ssize_t) sizeof(*h))
                        _exit(0);
                switch (h->opcode) {
                case FUSE_INIT: {
                        struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
                                                  .minor = FUSE_KERNEL_MINOR_VERSION,
                                                  .max_write = 4096,
                                                  .max_readahead = 4096};

                        reply(fuse, h->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_GETATTR: {
                        struct fuse_attr_out o = {.attr = {.ino = FUSE_ROOT_ID, .mode = S_IFREG | 0444, .nlink = 1}};

                        reply(fuse, h->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_OPEN: {
                        struct fuse_open_out o = {0};

                        reply(fuse, h->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_FLUSH:
                        __atomic_add_fetch(flushes, 1, __ATOMIC_SEQ_CST); /* and never answered */
                        break;
                case FUSE_FORGET:
                case FUSE_BATCH_FORGET:
                case FUSE_INTERRUPT:
                        break;
                default:
                        reply(fuse, h->unique, h->opcode == FUSE_RELEASE ? 0 : -ENOSYS, NULL, 0);
                }
        }
}

static int fsconfig_str(int fs, const char *key, const char *value) {
        return (int) syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, key, value, 0);
}

int main(int argc, char *argv[]) {
        char file[] = "/tmp/fuse-stall.XXXXXX", num[16];
        volatile int *flushes;
        int fuse, fs, mnt, fd, status = 0;
        unsigned seconds;
        pid_t server, child;

        if (argc < 3)
                return 2;
        seconds = (unsigned) atoi(argv[1]);
        flushes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        fd = mkstemp(file);
        if (fd < 0 || flushes == MAP_FAILED)
                return 2;
        close(fd);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                perror("mount namespace");
                return 2;
        }
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        fs = (int) syscall(SYS_fsopen, "fuse", FSOPEN_CLOEXEC);
        snprintf(num, sizeof(num), "%d", fuse);
        if (fuse < 0 || fs < 0 || fsconfig_str(fs, "fd", num) < 0 || fsconfig_str(fs, "rootmode", "0100000") < 0 ||
            fsconfig_str(fs, "user_id", "0") < 0 || fsconfig_str(fs, "group_id", "0") < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                perror("fuse");
                return 2;
        }
        server = fork();
        if (server == 0)
                serve(fuse, flushes);
        mnt = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
        if (mnt < 0 || syscall(SYS_move_mount, mnt, "", AT_FDCWD, file, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                perror("mount");
                kill(server, SIGKILL);
                return 2;
        }
        close(fuse);
        child = fork();
        if (child == 0) {
                for (int a = 3; a < argc; a++)
                        if (strcmp(argv[a], "@FILE") == 0)
                                argv[a] = file;
                execv(argv[2], argv + 2);
                _exit(127);
        }
        /* PROGRAM's own close of the file at its exit waits on the
         * server too: it is reaped once the server is gone. */
        sleep(seconds);
        printf("flushes=%d\n", __atomic_load_n(flushes, __ATOMIC_SEQ_CST));
        fflush(stdout);
        kill(server, SIGKILL);
        waitpid(server, NULL, 0);
        if (child < 0 || waitpid(child, &status, 0) < 0)
                status = 2 << 8;
        unlink(file);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
