#!/usr/bin/env bats
# The exec path at its hard instants: a program killed, stopped or
# continued at any instant of its exec, an exec with a full fd table. Each
# behaves as on the host: every child reaped (a child left traced by the
# supervisor is a zombie its parent cannot reap), no message on the
# user's terminal, where timensctl's embedded supervisor logs.

load helpers

setup_file() {
        build_helpers exec-kill
}

setup() {
        requires_timensctl
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
