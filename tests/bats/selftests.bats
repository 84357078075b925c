#!/usr/bin/env bats
# Ports (semantics, not code) of the kernel's exec.c and vfork_exec.c
# selftests (tools/testing/selftests/timens/): a program exec'd in the
# namespace — after fork, after vfork (posix_spawn), from a second thread
# — reads the namespace's MONOTONIC and BOOTTIME through the vDSO and the
# raw syscall, with positive and negative offsets, and each value is the
# kernel's own time namespace's (unshare -T) with the same offsets. The
# other selftests are ported elsewhere: docs/ARCHITECTURE.md, "Tests".

load helpers

setup_file() {
        build_helpers clockprobe
}

setup() {
        requires_timensctl
        requires_kernel_timens
}

# spawn_py HOW PROBE-ARGS...: a python3 that runs the probe by HOW: fork
# (fork + exec), vfork (os.posix_spawn: glibc's clone(CLONE_VFORK)), or
# thread (fork + exec from a second thread of a multithreaded process).
SPAWN_PY='
import os, sys, threading
how, argv = sys.argv[1], sys.argv[2:]
def run():
    if how == "vfork":
        pid = os.posix_spawn(argv[0], argv, os.environ)
    else:
        pid = os.fork()
        if pid == 0:
            os.execv(argv[0], argv)
    os.waitpid(pid, 0)
if how == "thread":
    t = threading.Thread(target=run); t.start(); t.join()
else:
    run()
'

# compare OFF_MONO OFF_BOOT HOW
compare() {
        local mono=$1 boot=$2 how=$3 clock path kernel ours
        for clock in monotonic boottime; do
                for path in --vdso ""; do
                        # shellcheck disable=SC2086 # path is one flag or none
                        kernel=$(unshare -T --monotonic "$mono" --boottime "$boot" \
                                python3 -c "$SPAWN_PY" "$how" "$HELPERS/clockprobe" $path --ns "$clock")
                        # shellcheck disable=SC2086
                        ours=$(tns run --monotonic "$mono" --boottime "$boot" -- \
                                python3 -c "$SPAWN_PY" "$how" "$HELPERS/clockprobe" $path --ns "$clock")
                        assert_near "$how $clock ${path:-syscall} ($mono, $boot)" "$ours" "$kernel"
                done
        done
}

@test "exec.c: a program exec'd after fork reads the namespace's clocks, positive offsets" {
        compare 86400 172800 fork
}

# Negative offsets within the host's uptime, as the kernel requires of its
# own namespaces (a fresh CI machine may be up for minutes only).
neg() {
        echo $((-$(host_uptime_sec) / $1))
}

@test "exec.c: negative offsets" {
        compare "$(neg 2)" "$(neg 3)" fork
}

@test "vfork_exec.c: a program exec'd after vfork (posix_spawn) reads the namespace's clocks" {
        compare 86400 172800 vfork
        compare "$(neg 2)" "$(neg 3)" vfork
}

@test "vfork_exec.c: exec from a second thread of a multithreaded process" {
        compare 86400 172800 thread
        compare "$(neg 2)" "$(neg 3)" thread
}

@test "exec.c, RFC style: after unshare and clock_settime inside, exec'd programs read the child namespace; the parent's is unchanged" {
        requires_user_ns
        run -0 tns run --monotonic 1000 -- unshare -U -r python3 -c '
import ctypes, os, sys, time
probe = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def child_reads():
    r, w = os.pipe()
    pid = os.posix_spawn(probe, [probe, "--ns", "monotonic"], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)])
    os.close(w); os.waitpid(pid, 0)
    return int(os.read(r, 64))
r, w = os.pipe()
outer = os.fork()
if outer == 0:  # stays in the parent namespace
    os.read(r, 1)
    print("outer", child_reads(), flush=True)
    os._exit(0)
assert libc.unshare(0x80) == 0, ctypes.get_errno()
time.clock_settime(time.CLOCK_MONOTONIC, 5000000.0)
print("inner", child_reads(), flush=True)
os.write(w, b"x")
os.waitpid(outer, 0)
' "$HELPERS/clockprobe"
        inner=$(awk '$1 == "inner" { print $2 }' <<<"$output")
        outer=$(awk '$1 == "outer" { print $2 }' <<<"$output")
        assert_near "inner" "$inner" $((5000000 * NSEC_PER_SEC)) $((2 * NSEC_PER_SEC))
        assert_near "outer" "$outer" $(($(host_ns monotonic) + 1000 * NSEC_PER_SEC))
}
