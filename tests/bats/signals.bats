#!/usr/bin/env bats
# Signals sent to timensctl (kill, a runtime) reach the command; the exit
# status follows the command; what the command leaves running in the
# background keeps its clocks after timensctl has gone.
#
# Every wait here is on an event (a file appearing, a process leaving),
# with a bound.

load helpers

setup_file() {
        requires_timensctl
        build_helpers sigprobe clockprobe
}

setup() {
        tns_pid=
}

teardown() {
        show_output_on_failure
        # Never leave a timensctl of ours behind, whatever failed.
        if [ -n "$tns_pid" ] && kill -0 "$tns_pid" 2>/dev/null; then
                kill -KILL "$tns_pid" 2>/dev/null || true
        fi
        if [ -s "$BATS_TEST_TMPDIR/ready" ]; then
                kill -KILL "$(cat "$BATS_TEST_TMPDIR/ready")" 2>/dev/null || true
        fi
}

# Starts timensctl run ARGS in the background (bats needs fd 3 closed for
# that) and sets tns_pid.
start_tns() {
        "$TIMENSCTL" run "$@" </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
        tns_pid=$!
}

# Waits (bounded) for timensctl to exit and sets tns_status.
finish_tns() {
        if ! wait_for_exit "$tns_pid" 20; then
                kill -KILL "$tns_pid"
                fail "timensctl did not exit"
        fi
        tns_status=0
        wait "$tns_pid" || tns_status=$?
        tns_pid=
}

# forward SIG: timensctl passes SIG on to sigprobe, which exits 64+SIG.
forward() {
        local sig=$1 num
        num=$(kill -l "$sig")
        rm -f "$BATS_TEST_TMPDIR/ready" "$BATS_TEST_TMPDIR/got"
        start_tns -- "$HELPERS/sigprobe" "$BATS_TEST_TMPDIR" HUP INT QUIT TERM USR1 USR2 ALRM WINCH
        wait_for_file "$BATS_TEST_TMPDIR/ready"
        kill "-$sig" "$tns_pid"
        wait_for_file "$BATS_TEST_TMPDIR/got"
        finish_tns
        output=$(cat "$BATS_TEST_TMPDIR/got")
        [ "$output" = "$sig SI_USER from-parent" ] || fail "SIG$sig: the command got '$output'"
        ((tns_status == 64 + num)) || fail "SIG$sig: timensctl exited $tns_status, want $((64 + num))"
}

@test "kill -TERM to timensctl reaches the command; the exit status is the command's" {
        forward TERM
}

@test "kill -USR1 to timensctl reaches the command" {
        forward USR1
}

@test "every forwarded signal reaches the command: HUP INT QUIT USR2 ALRM WINCH" {
        local sig
        for sig in HUP INT QUIT USR2 ALRM WINCH; do
                forward "$sig"
        done
}

@test "a shell's trap sees a forwarded TERM" {
        local ready="$BATS_TEST_TMPDIR/ready-sh" got="$BATS_TEST_TMPDIR/got-sh"
        # A loop of short sleeps: dash runs a trap only between commands.
        # shellcheck disable=SC2016 # expanded by the inner shell
        start_tns -- sh -c 'trap "echo TERM >\"\$2\"; exit 7" TERM
                echo $$ >"$1"
                i=0
                while [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
                exit 99' sh "$ready" "$got"
        wait_for_file "$ready"
        kill -TERM "$tns_pid"
        wait_for_file "$got"
        finish_tns
        [ "$(cat "$got")" = TERM ] || fail "the trap wrote '$(cat "$got")'"
        ((tns_status == 7)) || fail "timensctl exited $tns_status, want the trap's 7"
}

@test "a command killed by a forwarded signal: timensctl exits 128+N" {
        start_tns -- "$HELPERS/sigprobe" "$BATS_TEST_TMPDIR" USR2
        wait_for_file "$BATS_TEST_TMPDIR/ready"
        # sigprobe waits for USR2 only: TERM kills it.
        kill -TERM "$tns_pid"
        finish_tns
        ((tns_status == 143)) || fail "timensctl exited $tns_status, want 143"
        [ ! -e "$BATS_TEST_TMPDIR/got" ] || fail "sigprobe saw $(cat "$BATS_TEST_TMPDIR/got")"
}

# The processes whose command line holds a word, unique to one test.
count_procs_with() {
        pgrep -c -f -- "$1" || true
}

@test "background processes keep their clocks after timensctl exited; then the supervisor leaves" {
        local go="$BATS_TEST_TMPDIR/go" out="$BATS_TEST_TMPDIR/bg" lo hi i
        # The background process waits for go (bounded), then reads.
        # shellcheck disable=SC2016 # expanded by the inner shell
        run -0 --separate-stderr tns run --realtime +1d -- sh -c '
                (i=0
                 while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
                 "$2" --ns realtime >"$3.tmp" && mv "$3.tmp" "$3") </dev/null >/dev/null 2>&1 &' \
                sh "$go" "$HELPERS/clockprobe" "$out"
        # timensctl returned while its command's child still runs.
        [ ! -e "$out" ] || fail "timensctl waited for the background process"
        (($(count_procs_with "$go") >= 1)) || fail "the background process is gone already"
        lo=$(host_ns realtime)
        touch "$go"
        wait_for_file "$out" 40
        hi=$(host_ns realtime)
        assert_within "background realtime less a day" $(($(cat "$out") - 86400 * NSEC_PER_SEC)) "$lo" "$hi"
        # The supervisor (a fork of timensctl, so its command line holds
        # $go too) goes once the last process under the filter is gone.
        for ((i = 0; i < 200; i++)); do
                (($(count_procs_with "$go") == 0)) && return 0
                sleep 0.05
        done
        fail "still running after 10 s: $(pgrep -a -f -- "$go")"
}
