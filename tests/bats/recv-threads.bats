#!/usr/bin/env bats
# Receive threads (lib/supervisor/supervisor-threads.c): a thread per
# listener blocks in the kernel's RECV and answers plain clock reads; every
# other call goes to the event loop. The threads come and go with their
# listeners, a mixed load gets every answer right through both, and
# TIMENS_RECV_THREADS=0 makes the loop receive everything, with the same
# answers.

# $DAEMON_DIR and $DAEMON_PID come from daemon-helpers.bash.
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers hammer clockprobe
}

setup() {
        requires_root
}

teardown() {
        daemon_teardown
}

# recv_threads PID: how many receive threads the process has.
recv_threads() {
        grep -lx timens-recv /proc/"$1"/task/*/comm 2>/dev/null | wc -l
}

all_recv_threads() {
        grep -lx timens-recv /proc/[0-9]*/task/*/comm 2>/dev/null | wc -l
}

# wait_recv_threads PID N: until PID has N receive threads (10 s bound).
wait_recv_threads() {
        local i
        for ((i = 0; i < 200; i++)); do
                [ "$(recv_threads "$1")" -eq "$2" ] && return 0
                sleep 0.05
        done
        fail "$1 has $(recv_threads "$1") receive threads, expected $2"
}

# The hammer's expectation: monotonic - boottime in a namespace with
# --monotonic +1000s --boottime +500s.
expected_mono_minus_boot() {
        local d
        d=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - time.clock_gettime_ns(time.CLOCK_BOOTTIME))')
        echo $((d + 500 * NSEC_PER_SEC))
}

@test "timensd: one receive thread per listener, gone with its last process; none left after 20 short programs" {
        start_daemon
        [ "$(recv_threads "$DAEMON_PID")" -eq 0 ]
        for i in 1 2 3; do
                bg "$TIMENSCTL" run --realtime +${i}d -- sleep 30
        done
        wait_recv_threads "$DAEMON_PID" 3
        # Served by them: a raw clock_gettime (no vDSO) in a fourth.
        run -0 tns run --realtime +1d -- "$HELPERS/clockprobe" --sec realtime
        host=$(date +%s)
        ((output - host >= 86400 - 5 && output - host <= 86400 + 5)) || fail "realtime $output, host $host"
        for ((i = 0; i < 20; i++)); do
                tns run --monotonic +1h -- "$HELPERS/clockprobe" --sec monotonic >/dev/null
        done
        stop_bg
        wait_recv_threads "$DAEMON_PID" 0
        grep -q "Failed to receive" "$DAEMON_DIR/log" && fail "$(grep "Failed to receive" "$DAEMON_DIR/log")"
        true
}

@test "a mixed load (raw reads on the threads; settime, absolute sleeps, fork+exec on the loop) from 3 x 4 threads: every result right" {
        start_daemon
        expected=$(expected_mono_minus_boot)
        host_before=$(date +%s)
        # clock_settime runs in a user namespace: never the host's clock.
        run -0 timeout 60 "$TIMENSCTL" run --monotonic +1000s --boottime +500s -- \
                unshare -U -r "$HELPERS/hammer" 3 4 6 "$expected"
        printf '# %s\n' "${lines[@]}" >&3
        host_after=$(date +%s)
        ((host_after - host_before >= 0 && host_after - host_before < 70)) || fail "host clock moved"
        # The reads went through a thread, the rest through the loop.
        [ "$(recv_threads "$DAEMON_PID")" -eq 0 ]
}

@test "SIGUSR2 hand-over under the same load: the old image's threads stop, the new one's serve, no call lost" {
        start_daemon
        expected=$(expected_mono_minus_boot)
        "$TIMENSCTL" run --monotonic +1000s --boottime +500s -- \
                unshare -U -r "$HELPERS/hammer" 2 4 8 "$expected" >"$BATS_TEST_TMPDIR/hammer" 2>&1 &
        hammer=$!
        wait_recv_threads "$DAEMON_PID" 1
        for i in 1 2; do
                sleep 1
                handover_daemon
                wait_recv_threads "$DAEMON_PID" 1
        done
        rc=0
        wait "$hammer" || rc=$?
        sed 's/^/# /' "$BATS_TEST_TMPDIR/hammer" >&3
        [ "$rc" -eq 0 ] || fail "hammer: $(cat "$BATS_TEST_TMPDIR/hammer")"
}

@test "TIMENS_RECV_THREADS=0: the loop receives every call (timensd and timensctl run), same answers" {
        TIMENS_RECV_THREADS=0 start_daemon
        bg "$TIMENSCTL" run --realtime +2d -- sleep 30
        sleep 0.5
        [ "$(recv_threads "$DAEMON_PID")" -eq 0 ]
        run -0 tns run --realtime +2d -- "$HELPERS/clockprobe" --sec realtime
        host=$(date +%s)
        ((output - host >= 2 * 86400 - 5 && output - host <= 2 * 86400 + 5)) || fail "realtime $output, host $host"
        expected=$(expected_mono_minus_boot)
        run -0 timeout 60 "$TIMENSCTL" run --monotonic +1000s --boottime +500s -- \
                unshare -U -r "$HELPERS/hammer" 2 2 3 "$expected"
        stop_bg
        stop_daemon
        # The embedded supervisor (no timensd): no receive thread either
        # (counted on the whole host, before and inside), the same answer.
        export TIMENS_SOCKET=$BATS_TEST_TMPDIR/none.sock
        base=$(all_recv_threads)
        run -0 env TIMENS_RECV_THREADS=0 "$TIMENSCTL" run --realtime +2d -- sh -c \
                "grep -lx timens-recv /proc/[0-9]*/task/*/comm 2>/dev/null | wc -l; $HELPERS/clockprobe --sec realtime"
        [ "${lines[0]}" -eq "$base" ] || fail "receive threads: $base before, ${lines[0]} inside"
        ((lines[1] - host >= 2 * 86400 - 5 && lines[1] - host <= 2 * 86400 + 10)) || fail "$output"
        run -0 "$TIMENSCTL" run --realtime +2d -- sh -c \
                "grep -lx timens-recv /proc/[0-9]*/task/*/comm 2>/dev/null | wc -l"
        [ "$output" -eq $((base + 1)) ] || fail "receive threads: $base before, $output inside (expected one more)"
}
