#!/usr/bin/env bats
# The exec path at its hard instants: a program killed, stopped or
# continued at any instant of its exec, an exec with a full fd table. Each
# behaves as on the host: every child reaped (a child left traced by the
# supervisor is a zombie its parent cannot reap), no message on the
# user's terminal, where timensctl's embedded supervisor logs.

load helpers
load daemon-helpers

setup_file() {
        build_helpers exec-kill
}

setup() {
        requires_timensctl
}

teardown() {
        daemon_teardown
}

# Nothing of the supervisor's on the user's terminal: stderr is empty.
run_quiet() {
        local err="$BATS_TEST_TMPDIR/stderr"
        run tns run --monotonic +1d -- "$@" 2>"$err"
        [ ! -s "$err" ] || fail "on the terminal: $(head -5 "$err")"
}

@test "children killed with SIGKILL at every instant of their exec are all reaped, silently" {
        run_quiet "$HELPERS/exec-kill" kill 300 /bin/sleep 5
        [ "$status" -eq 0 ] || fail "$output"
        [[ "$output" == "exec-kill: 300 children reaped" ]] || fail "$output"
}

@test "the same as on the host (reference)" {
        run -0 timeout 120 "$HELPERS/exec-kill" kill 300 /bin/sleep 5
        [[ "$output" == "exec-kill: 300 children reaped" ]]
}

@test "children stopped and continued at every instant of their exec run to the end" {
        run_quiet "$HELPERS/exec-kill" stopcont 200 /bin/true
        [ "$status" -eq 0 ] || fail "$output"
        [[ "$output" == "exec-kill: 200 children reaped" ]] || fail "$output"
}

@test "an exec with a full fd table runs on the syscall path, shifted, with no message" {
        local lo hi
        lo=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$HELPERS/exec-kill" fullfds "$HELPERS/exec-kill" probe "$lo" 500
        # 12: no vDSO at all (the fd could not be handed), the clock shifted.
        [ "$status" -eq 12 ] || fail "probe status $status: $output"
        hi=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        ((hi >= lo))
}

@test "a loop of execs: every program starts with our vDSO and the shifted clock" {
        local min
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$HELPERS/exec-kill" loop 3 "$min"
        [ "$status" -eq 0 ] || fail "$output"
        [[ "$output" =~ ^execs\ ([0-9]+)\ host_vdso\ 0\ wrong\ 0\ syscall_path\ 0\ failed\ 0$ ]] || fail "$output"
        ((BASH_REMATCH[1] > 0))
}

# execs_missing: timensd's count of execs let through at once
# because their file is missing.
execs_missing() {
        "$TIMENSCTL" stats --json | json_get 'j["vdso"]["execs_missing"]'
}

# A PATH lookup (env, execvp, Python's subprocess) tries one directory
# after another. The execs of files that are not there are let through at
# once, not seized and held with an fd handed and taken back; the one
# found is served as ever. A file is told missing only where every user
# may search: in a directory only root may search, not even for root, so
# that the time an exec takes tells no other user what is in it.
@test "a PATH lookup: execs of missing files are let through at once, the program found starts with our vDSO; a directory the caller may not search tells nothing" {
        requires_timensd
        requires_io_uring
        local dir env before after min setpriv
        start_daemon
        # Under the daemon's directory, which other users may enter.
        dir=$DAEMON_DIR/path
        env=$(command -v env)
        mkdir -p "$dir/a" "$dir/b" "$dir/closed"
        chmod 755 "$dir" "$dir/a" "$dir/b"
        chmod 700 "$dir/closed"
        # Told from the dentry cache only: a miss is there once looked up
        # (by the first exec that missed, as a rule).
        [ ! -e "$dir/a/exec-kill" ] && [ ! -e "$dir/b/exec-kill" ] && [ ! -e "$dir/closed/exec-kill" ]
        before=$(execs_missing)
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$env" PATH="$dir/a:$dir/b:$dir/closed:$HELPERS" exec-kill probe "$min"
        [ "$status" -eq 0 ] || fail "probe status $status: $output"
        after=$(execs_missing)
        [ "$((after - before))" -eq 2 ] || fail "$((after - before)) execs let through at once, not 2"
        # A path through a regular file (ENOTDIR): the kernel's to say.
        run_quiet "$env" PATH="$HELPERS/exec-kill:$HELPERS" exec-kill probe "$min"
        [ "$status" -eq 0 ] || fail "probe status $status: $output"
        # Nothing found anywhere: the kernel's own error, as on the host.
        run -127 tns run --monotonic +1d -- "$env" PATH="$dir/a:$dir/b" exec-kill
        [[ $output == *"No such file or directory"* ]] || fail "$output"
        requires_setpriv
        "${NOBODY[@]}" test -x "$HELPERS/exec-kill" || skip "nobody cannot run the helpers in this checkout"
        setpriv=$(command -v setpriv)
        after=$(execs_missing)
        run_quiet "$setpriv" "${NOBODY[@]:1}" "$env" PATH="$dir/closed:$dir/a:$HELPERS" exec-kill probe "$min"
        [ "$status" -eq 0 ] || fail "probe status $status as nobody: $output"
        [ "$(($(execs_missing) - after))" -eq 1 ] || fail "$(($(execs_missing) - after)) let through for nobody, not 1 (the closed directory told?)"
}

# The path is read from the caller before the kernel reads it: another
# process sharing the memory may rewrite it in between. Here it flips
# between this program and a missing file; an exec we let through as
# missing that found the program after all starts without our image, and
# its first arch_prctl puts it on the syscall path: never the host's vDSO
# or clock.
@test "an exec whose path another process flips between a program and a missing file: never the host's vDSO or clock" {
        requires_io_uring
        local min
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$HELPERS/exec-kill" race 200 "$min"
        [ "$status" -eq 0 ] || fail "$output"
        [[ "$output" =~ ^execs\ 200\ host_vdso\ 0\ wrong\ 0\ syscall_path\ ([0-9]+)\ failed\ 0$ ]] || fail "$output"
        # About one in two here: the race was run.
        ((BASH_REMATCH[1] > 0)) || fail "no exec let through found the program: the test proved nothing"
}

# A path that means another file to timensd than to the caller
# (/proc/self/fd/N), exec'd by a second thread while the leader sets its
# thread pointer over and over: the lookup follows no symlink, and a
# caller with another thread is never let through (that thread's
# arch_prctl would make timensd take the new program for the old one).
# Before both: 99 of 100 programs read the host's clock.
@test "an exec of /proc/self/fd/N from a second thread while the leader calls arch_prctl: every program starts with our vDSO" {
        local min
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$HELPERS/exec-kill" fdexec 100 "$min"
        [ "$status" -eq 0 ] || fail "$output"
        [ "$output" = "execs 100 host_vdso 0 wrong 0 syscall_path 0 failed 0" ] || fail "$output"
}

# What timensd remembers of a process's image must not outlive its exec:
# a member's control connections make timensd ask who the peer is (its
# maps, then the old program's), and with a long argv the kernel copies
# it for tens of milliseconds after our answer. An exec let through that
# found its program after all then looked like a program with our image at
# its first arch_prctl, which is not stubbed: 1-3 of 30-60 programs read
# the host's clock before that call read the maps afresh.
@test "an exec let through while its control connections are looked at: its first arch_prctl reads the maps afresh, never the host's clock" {
        requires_timensd
        local min
        start_daemon
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 86400))
        run_quiet "$HELPERS/exec-kill" poison 60 "$min" 40
        [ "$status" -eq 0 ] || fail "$output"
        [[ "$output" =~ ^execs\ 60\ host_vdso\ 0\ wrong\ 0\ syscall_path\ [0-9]+\ failed\ 0$ ]] || fail "$output"
}
