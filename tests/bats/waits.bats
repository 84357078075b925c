#!/usr/bin/env bats
# Absolute waits (lib/supervisor/supervisor-wait.c): clock_nanosleep(TIMER_ABSTIME),
# timerfd and POSIX timers armed with an absolute time, condition
# variables, semaphores, PI mutexes and futex_waitv with a deadline — the
# semantics of the kernel's tools/testing/selftests/timens/
# (clock_nanosleep.c, timerfd.c, timer.c, futex.c), ported. Each wait takes
# its deadline from the namespace's clock and is measured on the host's
# (tests/helpers/waitprobe: neither early nor later than 50 ms), under
# positive and negative offsets on every clock, and compared with the
# kernel's own time namespaces where they can do the same.

load helpers
load daemon-helpers

MS=200

setup_file() {
        build_helpers waitprobe clockprobe
        # A negative monotonic or boottime offset must leave the clock at
        # or above zero (the kernel's rule): an hour back, or half the
        # uptime of a machine up for less than two.
        local up
        up=$(($("$BUILDDIR/tests/helpers/clockprobe" --ns monotonic) / 1000000000))
        export BACK="-$((up / 2 < 3600 ? up / 2 : 3600))s"
        export GOCACHE="$BATS_FILE_TMPDIR/gocache" GOPATH="$BATS_FILE_TMPDIR/gopath" HOME="${HOME:-/root}"
        if command -v go >/dev/null; then
                (cd "$ROOT/tests/helpers" && timeout 300 go build -o "$BATS_FILE_TMPDIR/gosleep" gosleep.go) || true
        fi
}

setup() {
        requires_timensctl
        requires_helper waitprobe
        P="$HELPERS/waitprobe"
}

teardown() {
        stop_bg
        stop_daemon
        show_output_on_failure
}

# Every kind of wait on every clock it takes, one after the other in one
# namespace: the probe's lines, and the first failure's status.
all_waits() {
        local k c script=""
        for k in sleep timerfd timer threads; do
                for c in realtime monotonic boottime; do
                        script+="$P $k $c $MS || exit 1; "
                done
        done
        script+="$P sleep tai $MS || exit 1; "
        for c in realtime monotonic; do
                script+="$P cond $c $MS && $P waitv $c $MS || exit 1; "
        done
        script+="$P sem realtime $MS && $P lockpi realtime $MS && $P mq realtime $MS"
        tns run "$@" -- sh -c "$script"
}

@test "absolute waits wake on time under positive offsets on every clock" {
        run -0 all_waits --monotonic +10d --boottime +20d --realtime +3650d
        [ "${#lines[@]}" -eq 20 ]
}

@test "absolute waits wake on time under negative offsets on every clock" {
        local half=$(($(host_uptime_sec) / 2))
        run -0 all_waits --monotonic "-$half" --boottime "$BACK" --realtime -1d
        [ "${#lines[@]}" -eq 20 ]
}

@test "absolute waits wake on time with one clock shifted and the others not" {
        run -0 all_waits --boottime +1d
        run -0 all_waits --realtime 2030-01-01T00:00:00Z
}

@test "the kernel's time namespaces agree (reference: unshare -T)" {
        requires_kernel_timens
        local k c
        for k in sleep timerfd timer; do
                for c in monotonic boottime; do
                        run -0 unshare -T --monotonic 864000 --boottime 864000 "$P" "$k" "$c" "$MS"
                        run -0 tns run --monotonic +10d --boottime +10d -- "$P" "$k" "$c" "$MS"
                done
        done
        run -0 unshare -T --monotonic 864000 "$P" cond monotonic "$MS"
        run -0 tns run --monotonic +10d -- "$P" cond monotonic "$MS"
}

@test "timerfd_gettime, old_value and timer_gettime are relative: no conversion" {
        # The probe checks that each reads about MS ms left, whatever the
        # offset: the kernel reports the time left, not the deadline.
        run -0 tns run --monotonic +10d --realtime -1h -- "$P" timerfd monotonic 400
        run -0 tns run --monotonic +10d --realtime -1h -- "$P" timerfd realtime 400
        run -0 tns run --monotonic +10d --boottime "$BACK" -- "$P" timer boottime 400
}

# sig_result ARGS...: the probe's "result=..." field alone.
sig_result() {
        "$@" | sed -n 's/.* \(result=[A-Z0-9]*\) .*/\1/p'
}

@test "a handled signal interrupts an absolute sleep with EINTR, SA_RESTART or not, as the kernel does" {
        requires_kernel_timens
        local m ref ours
        for m in restart norestart; do
                ref=$(sig_result unshare -T --monotonic 864000 "$P" sig-sleep monotonic 800 200 "$m")
                [ "$ref" = result=EINTR ] || fail "kernel: $ref"
                run -0 tns run --monotonic +10d -- "$P" sig-sleep monotonic 800 200 "$m"
                ours=$(echo "$output" | sed -n 's/.* \(result=[A-Z0-9]*\) .*/\1/p')
                [ "$ours" = "$ref" ] || fail "$m: ours $ours, kernel's $ref"
                run -0 tns run --realtime -1d -- "$P" sig-sleep realtime 800 200 "$m"
        done
}

@test "a stopped and continued absolute sleep still ends at its deadline (ERESTARTNOHAND)" {
        requires_kernel_timens
        run -0 unshare -T --monotonic 864000 "$P" stop-sleep monotonic 800 200
        run -0 tns run --monotonic +10d -- "$P" stop-sleep monotonic 800 200
        run -0 tns run --boottime "$BACK" -- "$P" stop-sleep boottime 800 200
}

# sleep_across_handover KIND DELAY: waitprobe KIND (a 3 s absolute sleep,
# stopped and continued after 1.5 s) under +10 days monotonic, through
# timensd, handed over after DELAY: it must end at its deadline.
sleep_across_handover() {
        local rc=0
        start_daemon
        bg "$TIMENSCTL" run --monotonic +10d -- "$P" "$1" monotonic 3000 1500 >"$BATS_TEST_TMPDIR/out" 2>&1
        sleep "$2"
        handover_daemon
        wait "${BG_PIDS[0]}" || rc=$?
        [ "$rc" -eq 0 ] || fail "status $rc: $(cat "$BATS_TEST_TMPDIR/out")"
        grep -q "result=0" "$BATS_TEST_TMPDIR/out" || fail "$(cat "$BATS_TEST_TMPDIR/out")"
}

# A sleep held by one timensd points at a slot of its wait page; the next
# one (a hand-over) does not know that slot, and another thread's sleep it
# holds must not take it: a stop restarts the first sleep, which reads its
# slot again (ERESTARTNOHAND). A restored instance starts its slots a
# stride away from its predecessor's base, which the state record keeps
# (lowest-free, both took slot 1: the sleep of 3 s ended after 1.8).
@test "an absolute sleep held across a hand-over keeps its deadline when a stop restarts it after the next timensd held another" {
        sleep_across_handover late-stop-sleep 0.4
}

# A process may have more than one wait page (threads held at once before
# it had one map one each); a successor knows a slot in any of them for
# ours, not only in the first the maps list (helper-40: a restarted
# absolute sleep in another page was converted again and woke 2.2 s
# early). The second page here is the program's own, mapped low.
@test "a sleep restarted after a hand-over keeps its deadline when its slot is not in the first wait page of the maps" {
        sleep_across_handover decoy-stop-sleep 0.6
}

@test "python3: time.sleep(0.3) and threading.Event().wait(0.3) under +10 days monotonic" {
        command -v python3 >/dev/null || skip "no python3"
        # Both measured on the namespace's clock and bounded on the host's.
        local start end
        start=$(host_ns monotonic)
        run -0 tns run --monotonic +10d -- python3 -c '
import time, threading
t = time.monotonic(); time.sleep(0.3); a = time.monotonic() - t
t = time.monotonic(); threading.Event().wait(0.3); b = time.monotonic() - t
print("%.3f %.3f" % (a, b))
assert 0.299 <= a < 0.35 and 0.299 <= b < 0.35, (a, b)'
        end=$(host_ns monotonic)
        ((end - start < 3 * NSEC_PER_SEC)) || fail "took $(((end - start) / 1000000)) ms on the host"
}

@test "python3: Ctrl-C interrupts time.sleep under +10 days monotonic" {
        command -v python3 >/dev/null || skip "no python3"
        local dir=$BATS_TEST_TMPDIR pid child i
        "$TIMENSCTL" run --monotonic +10d -- python3 -c '
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler) # a background job starts with SIGINT ignored
open(sys.argv[1] + "/ready", "w").write("1")
try:
    time.sleep(30)
except KeyboardInterrupt:
    sys.exit(42)' "$dir" &
        pid=$!
        wait_for_file "$dir/ready" 10
        sleep 0.2 # into the sleep
        child=$(pgrep -P "$pid" python3)
        kill -INT "$child"
        # Our own child: a zombie once it is done, until waited for.
        for ((i = 0; i < 100; i++)); do
                [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo gone)" != S ] && break
                sleep 0.05
        done
        ((i < 100)) || fail "python3 still sleeps 5 s after SIGINT"
        local rc=0
        wait "$pid" || rc=$?
        [ "$rc" -eq 42 ] || fail "python3 exited with $rc"
}

@test "Go: time.Sleep, Timer, After and Ticker under shifted clocks" {
        [ -x "$BATS_FILE_TMPDIR/gosleep" ] || skip "go is not installed (Debian package golang-go)"
        run -0 tns run --monotonic +10d --boottime "$BACK" --realtime -1d -- "$BATS_FILE_TMPDIR/gosleep"
        [ "${#lines[@]}" -eq 4 ]
}

@test "RFC style: unshare(CLONE_NEWTIME) and clock_settime inside, then absolute waits" {
        requires_user_ns
        local c
        for c in monotonic boottime; do
                run -0 unshare -U -r "$TIMENSCTL" run -- "$P" rfc-sleep "$c" "$MS" 864000
                run -0 unshare -U -r "$TIMENSCTL" run -- "$P" rfc-sleep "$c" "$MS" -600
                run -0 unshare -U -r "$TIMENSCTL" run -- "$P" rfc-timer "$c" "$MS" 864000
        done
        run -0 unshare -U -r "$TIMENSCTL" run -- "$P" rfc-sleep realtime "$MS" 86400
        run -0 unshare -U -r "$TIMENSCTL" run --realtime +1d -- "$P" rfc-cond realtime "$MS" -7200
        run -0 unshare -U -r "$TIMENSCTL" run --monotonic +1d -- "$P" rfc-waitv monotonic "$MS" 3600
}

@test "--no-vdso: the wait page is mapped on first use" {
        run -0 tns run --no-vdso --monotonic "$BACK" --realtime +1d -- sh -c "$P threads monotonic $MS && $P cond realtime $MS"
}

@test "through timensd: absolute waits wake on time, relative ones never reach it" {
        requires_root
        requires_timensd
        start_daemon
        run -0 tns run --monotonic +10d -- sh -c "$P rel-sleep monotonic $MS && $P futex-wait monotonic $MS"
        run -0 tns stats
        echo "$output" | grep -Eq '^clock_nanosleep +0$' || fail "a relative sleep reached the daemon"
        echo "$output" | grep -Eq '^futex +0$' || fail "a relative futex wait reached the daemon"
        echo "$output" | grep -Eq 'Waits: 0 converted' || fail "no wait should have been converted"
        run -0 all_waits --monotonic +10d --boottime "$BACK" --realtime +1d
        [ "${#lines[@]}" -eq 20 ]
        run -0 tns stats
        echo "$output" | grep -Eq '^clock_nanosleep +[1-9]' || fail "the absolute sleep did not reach the daemon"
        echo "$output" | grep -Eq 'Waits: [1-9][0-9]+ converted, 0 unconverted' || fail "waits not converted"
        # Each probe's first held wait: its page mapped by the probe itself
        # (the wait tail), never by single steps where the tail fits.
        echo "$output" | grep -Eq '[1-9][0-9]* wait pages mapped by their program, 0 by single steps' ||
                fail "wait pages not mapped by the wait tail"
}

@test "the supervisor killed during a converted wait: the wait still ends on time" {
        # The worst a dead tracer may cause: the thread is detached with our
        # pointer in its register, its wait already converted (or it
        # restarts unconverted through a filter whose listener is gone:
        # ENOSYS). Never a wrong clock read, never a crash.
        local pid probe sup i
        "$TIMENSCTL" run --monotonic +10d -- "$P" sleep monotonic 1500 >"$BATS_TEST_TMPDIR/out" &
        pid=$!
        for ((i = 0; i < 100; i++)); do
                probe=$(pgrep -P "$pid" -x waitprobe || true)
                sup=0
                # In clock_nanosleep (230), not in the injection at exec.
                if [ -n "$probe" ] && [ "$(cut -d' ' -f1 "/proc/$probe/syscall" 2>/dev/null)" = 230 ]; then
                        sup=$(awk '/^TracerPid:/ { print $2 }' "/proc/$probe/status" 2>/dev/null || echo 0)
                        [ "${sup:-0}" -gt 1 ] && break
                fi
                sleep 0.02
        done
        [ "${sup:-0}" -gt 1 ] || fail "the sleeping probe was never held by the supervisor"
        kill -KILL "$sup"
        local rc=0
        wait "$pid" || rc=$?
        [ "$rc" -eq 0 ] || fail "status $rc: $(cat "$BATS_TEST_TMPDIR/out")"
}

@test "bad input to the wait syscalls gets the kernel's errno, in the kernel's order" {
        requires_setpriv
        local o
        run -0 "${NOBODY[@]}" "$P" errnos
        local host=$output
        [ "${#lines[@]}" -ge 30 ]
        for o in +10d "$BACK"; do
                run -0 tns run --monotonic "$o" --boottime "$o" --realtime "$o" -- "${NOBODY[@]}" "$P" errnos
                [ "$output" = "$host" ] || fail "$(diff <(echo "$host") <(echo "$output"))"
        done
}

@test "a thread traced by a debugger waits unconverted, and says so (limit)" {
        requires_root
        requires_timensd
        command -v strace >/dev/null || skip "no strace"
        start_daemon
        # -1 h: the unconverted deadline has passed, the sleep returns at once.
        run -1 tns run --realtime -1h -- strace -f -o /dev/null "$P" sleep realtime "$MS"
        [[ $output == *"elapsed="* ]]
        run -0 tns stats
        echo "$output" | grep -Eq 'Waits: 0 converted, 1 unconverted' || fail "not counted as unconverted"
        grep -q "Failed to hold an absolute wait" "$DAEMON_DIR/log" || fail "not logged"
}

@test "Java: Thread.sleep, Object.wait, parkNanos and a scheduled executor under shifted clocks" {
        command -v java >/dev/null || skip "java is not installed (Debian package openjdk-17-jre-headless)"
        cp "$ROOT/tests/helpers/Waits.java" "$BATS_TEST_TMPDIR/"
        run -0 tns run --monotonic +10d --boottime "$BACK" --realtime -1d -- java "$BATS_TEST_TMPDIR/Waits.java"
        [ "${#lines[@]}" -eq 4 ]
}

@test "a thread execs while the leader is held in a converted wait: the new program runs and waits on time" {
        run -0 tns run --monotonic +10d -- "$P" exec-thread monotonic "$MS"
        [[ $output == "sleep monotonic result=0 "* ]]
        run -0 tns run --realtime -1d -- "$P" exec-thread realtime "$MS"
}

@test "a clock set during a wait moves its deadline: clock_settime inside (RFC style)" {
        requires_user_ns
        local k c
        # Each waits for 2 x MS ahead; after MS/2 another thread moves the
        # clock on by MS: the wait ends after MS.
        for k in sleep cond waitv; do
                for c in realtime monotonic; do
                        run -0 unshare -U -r "$TIMENSCTL" run --monotonic +1d --realtime -1h -- "$P" "jump-$k" "$c" 400
                done
        done
        run -0 unshare -U -r "$TIMENSCTL" run --boottime +1d -- "$P" jump-sleep boottime 400
}

@test "through timensd: timensctl set during a wait moves its deadline" {
        requires_root
        requires_timensd
        start_daemon
        local pid rc=0
        # 1500 ms ahead; after ~300 ms the clock moves on by 1000 ms.
        "$TIMENSCTL" run --name waitset --realtime +1d -- "$P" sleep realtime 1500 >"$BATS_TEST_TMPDIR/out" &
        pid=$!
        sleep 0.3
        run -0 tns set waitset --realtime "+1d 1s"
        wait "$pid" || rc=$?
        cat "$BATS_TEST_TMPDIR/out"
        # The probe expected 1500 ms: it reports about 500.
        grep -Eq 'result=0 elapsed=(4[5-9][0-9]|5[0-9][0-9]|6[0-4][0-9]) ms' "$BATS_TEST_TMPDIR/out" ||
                fail "status $rc: $(cat "$BATS_TEST_TMPDIR/out")"
}
