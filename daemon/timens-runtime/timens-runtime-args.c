/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runc's command line, read without being changed: which command, which
 * bundle, which container, where the log goes. Options are Go's flag
 * syntax (one or two dashes, "--x=v" or "--x v"); the options that take a
 * value must be known to tell a value from the command. An unknown global
 * option is taken as a switch: at worst the command is not recognised and
 * everything passes through untouched. */
#include <errno.h>
#include <string.h>

#include "timens-runtime.h"

/* Global options of runc and crun that take a value. */
static const char *const global_values[] = {"root", "log",      "log-format",    "log-level",
                                            "criu", "rootless", "cgroup-manager"};
/* Options of create and run that take a value. */
static const char *const command_values[] = {"bundle", "b", "console-socket", "pid-file", "preserve-fds"};
/* Options of exec that take a value (runc's and crun's). */
static const char *const exec_values[] = {"console-socket",
                                          "cwd",
                                          "env",
                                          "e",
                                          "user",
                                          "u",
                                          "additional-gids",
                                          "g",
                                          "process",
                                          "p",
                                          "pid-file",
                                          "process-label",
                                          "apparmor",
                                          "cap",
                                          "c",
                                          "preserve-fds",
                                          "cgroup"};

/* The option's name (without dashes, up to '='), its length, and its
 * inline value or NULL. */
static const char *option_name(const char *arg, size_t *ret_len, const char **ret_value) {
        const char *name = arg + (arg[1] == '-' ? 2 : 1), *eq = strchr(name, '=');

        *ret_len = eq ? (size_t) (eq - name) : strlen(name);
        *ret_value = eq ? eq + 1 : NULL;
        return name;
}

static bool name_is(const char *name, size_t len, const char *want) {
        return strlen(want) == len && strncmp(name, want, len) == 0;
}

static bool in_list(const char *name, size_t len, const char *const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (name_is(name, len, list[i]))
                        return true;
        return false;
}

/* Ours, first on the line (docker's daemon.json "runtimeArgs" puts them
 * there): --timens-config FILE, --timens-runtime NAME|PATH, --timens-help.
 * Returns the index of the first argument that is not ours. */
static int our_options(int argc, char **argv, struct runtime_args *a, const struct tns_logger *log) {
        int i = 1;

        while (i < argc && strncmp(argv[i], "--timens-", 9) == 0) {
                const char *value;
                size_t len;
                const char *name = option_name(argv[i], &len, &value);
                const char **dest = name_is(name, len, "timens-config")    ? &a->config_path
                                    : name_is(name, len, "timens-runtime") ? &a->runtime
                                                                           : NULL;

                if (name_is(name, len, "timens-help")) {
                        a->help = true;
                        i++;
                        continue;
                }
                if (!dest)
                        return tns_log_errno(log, LOG_ERR, EINVAL,
                                             "Unknown option '%s' (--timens-config, --timens-runtime, --timens-help)",
                                             argv[i]);
                if (!value) {
                        if (i + 1 >= argc)
                                return tns_log_errno(log, LOG_ERR, EINVAL, "Option '%s' needs a value", argv[i]);
                        value = argv[++i];
                }
                *dest = value;
                i++;
        }
        return i;
}

/* A command's arguments after its name: options (those in `values` take
 * one), then the container id. create and run take the id last
 * (`first` false: the last argument that is not an option) and a bundle;
 * exec takes it first, the command to run follows (`first` true). */
static void command_args(int argc, char **argv, int start, const char *const *values, size_t n_values, bool first,
                         struct runtime_args *a) {
        for (int i = start; i < argc; i++) {
                const char *value;
                size_t len;
                const char *name;

                if (strcmp(argv[i], "--") == 0) {
                        if (i + 1 < argc)
                                a->id = argv[i + 1];
                        return;
                }
                if (argv[i][0] != '-' || argv[i][1] == '\0') {
                        a->id = argv[i];
                        if (first)
                                return;
                        continue;
                }
                name = option_name(argv[i], &len, &value);
                if (!in_list(name, len, values, n_values))
                        continue;
                if (!value && i + 1 < argc)
                        value = argv[++i];
                if (value && (name_is(name, len, "bundle") || name_is(name, len, "b")))
                        a->bundle = value;
        }
}

int runtime_args_parse(int argc, char **argv, struct runtime_args *ret, const struct tns_logger *log) {
        struct runtime_args a = {};
        int first, out = 1;

        first = our_options(argc, argv, &a, log);
        if (first < 0)
                return first;
        /* Our options out, the rest as it came. */
        a.argv = argv;
        for (int i = first; i < argc; i++)
                argv[out++] = argv[i];
        argv[out] = NULL;
        a.argc = out;
        for (int i = 1; i < a.argc; i++) {
                const char *value;
                size_t len;
                const char *name;

                if (argv[i][0] != '-' || argv[i][1] == '\0') {
                        a.command = argv[i];
                        a.command_at = i;
                        a.edit = strcmp(a.command, "create") == 0 || strcmp(a.command, "run") == 0;
                        if (a.edit) {
                                /* The bundle: runc's default, the working directory. */
                                a.bundle = ".";
                                command_args(a.argc, argv, i + 1, command_values, ELEMENTSOF(command_values), false,
                                             &a);
                        } else if (strcmp(a.command, "exec") == 0)
                                command_args(a.argc, argv, i + 1, exec_values, ELEMENTSOF(exec_values), true, &a);
                        break;
                }
                if (strcmp(argv[i], "--") == 0)
                        break;
                name = option_name(argv[i], &len, &value);
                if (!value && in_list(name, len, global_values, ELEMENTSOF(global_values)) && i + 1 < a.argc)
                        value = argv[++i];
                if (name_is(name, len, "log"))
                        a.log_path = value;
                else if (name_is(name, len, "log-format"))
                        a.log_json = value && strcmp(value, "json") == 0;
                else if ((name_is(name, len, "help") || name_is(name, len, "h")) && a.argc == 2)
                        a.help = true;
        }
        *ret = a;
        return 0;
}
