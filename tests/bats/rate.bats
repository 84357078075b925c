#!/usr/bin/env bats
# Clock rates and freeze (issue 18): a namespace's clocks run at a rate
# through the vDSO and the syscalls, in C (dynamic and static), Go and
# Java programs; its waits end when its clock says; a frozen namespace
# reads the same value; a live change of rate never moves MONOTONIC back;
# libfaketime's FAKETIME forms; bad input is refused naming it.
#
# Rates are measured against the host's clock as the programs see it
# without any filter (a file's mtime: tests/helpers/rateprobe.c), over a
# few host seconds. Waits: generous bounds, the machine is loaded.

# $DAEMON_DIR comes from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers rateprobe clockprobe waitprobe
        build_optional_helpers rateprobe-static
        if command -v go >/dev/null; then
                (cd "$ROOT/tests/helpers" && GOFLAGS=-mod=mod timeout 300 go build -o "$BATS_FILE_TMPDIR/gorate" gorate.go) ||
                        true
                (cd "$ROOT/tests/helpers" && GOFLAGS=-mod=mod timeout 300 go build -o "$BATS_FILE_TMPDIR/gosleep" gosleep.go) ||
                        true
        fi
}

setup() {
        requires_root
        start_daemon
}

teardown() {
        daemon_teardown
}

# assert_rate LABEL NS HOST RATE: NS advanced RATE times HOST within 1 %.
assert_rate() {
        local label=$1 ns=$2 host=$3 rate=$4
        python3 - "$label" "$ns" "$host" "$rate" <<'PY' || return 1
import sys
label, ns, host, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), eval(sys.argv[4])
got = ns / host
if abs(got - rate) > rate * 0.01:
    sys.exit(f"{label}: ran at {got:.4f}, want {rate} +- 1% ({ns} ns in {host} host ns)")
PY
}

# field NAME LINE: the value of NAME=V in LINE.
field() {
        sed -nE "s/.*(^| )$1=(-?[0-9]+).*/\\2/p" <<<"$2"
}

# check_read_rate RATE PROGRAM...: PROGRAM prints "vdso_mono= sys_mono=
# vdso_real= sys_real= host=" or "wall= mono= host=".
check_read_rate() {
        local rate=$1 k v
        shift
        run -0 --separate-stderr tns run --rate "$rate" -- "$@"
        for k in vdso_mono sys_mono vdso_real sys_real wall mono; do
                v=$(field "$k" "$output")
                [ -n "$v" ] || continue
                assert_rate "x$rate $k" "$v" "$(field host "$output")" "$rate"
        done
}

@test "x2 and x0.5: MONOTONIC and REALTIME advance rate x host time within 1 %, vDSO and syscalls" {
        check_read_rate 2 "$HELPERS/rateprobe" read 2
        check_read_rate 0.5 "$HELPERS/rateprobe" read 2
        check_read_rate 1/60 "$HELPERS/rateprobe" read 2
}

@test "x2 and x0.5 in a static program" {
        requires_helper rateprobe-static
        check_read_rate 2 "$HELPERS/rateprobe-static" read 2
        check_read_rate 0.5 "$HELPERS/rateprobe-static" read 2
}

@test "x2 and x0.5 in a Go program (the runtime's own vDSO reads)" {
        [ -x "$BATS_FILE_TMPDIR/gorate" ] || skip "go is not installed (Debian package golang-go)"
        check_read_rate 2 "$BATS_FILE_TMPDIR/gorate" 2
        check_read_rate 0.5 "$BATS_FILE_TMPDIR/gorate" 2
}

@test "x2 and x0.5 in a Java program" {
        command -v java >/dev/null || skip "java is not installed (Debian package openjdk-17-jre-headless)"
        cp "$ROOT/tests/helpers/Rate.java" "$BATS_TEST_TMPDIR/"
        check_read_rate 2 java "$BATS_TEST_TMPDIR/Rate.java" 3
        check_read_rate 0.5 java "$BATS_TEST_TMPDIR/Rate.java" 3
}

@test "sleep 1 at x2 ends after 0.5 s of host time, for every kind of wait" {
        local k e
        for k in nanosleep clock_nanosleep realtime_sleep abs_sleep poll ppoll select pselect epoll futex \
                sigtimedwait timerfd timer itimer alarm; do
                run -0 --separate-stderr tns run --rate 2 -- "$HELPERS/rateprobe" wait "$k" 1000
                e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
                ((e >= 450 && e <= 650)) || fail "$k: $e ms of host time for 1 s at x2 ($output)"
        done
        # x0.5: twice as long; coreutils sleep as well.
        run -0 --separate-stderr tns run --rate 0.5 -- "$HELPERS/rateprobe" wait nanosleep 500
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 900 && e <= 1300)) || fail "x0.5: $e ms for 0.5 s ($output)"
        local t0 t1
        t0=$(date +%s%N)
        run -0 tns run --rate 4 -- sleep 2
        t1=$(date +%s%N)
        (((t1 - t0) / 1000000 < 1500)) || fail "sleep 2 at x4 took $(((t1 - t0) / 1000000)) ms"
}

# alarm at a rate runs as setitimer(ITIMER_REAL) to the microsecond (its
# own whole seconds made alarm(1) at x2 last a host second), and returns
# the previous alarm's time left in the namespace's seconds (helper-39:
# alarm(10) then alarm(0) returned 5 at x2, 20 at x0.5).
@test "alarm at x2, x0.5 and x4: alarm(0) tells the namespace's seconds left" {
        local e
        local r
        for r in 2 0.5 4; do
                run -0 --separate-stderr tns run --rate "$r" -- "$HELPERS/rateprobe" alarm-left 10
                [ "$output" = "first=0 left=10" ] || fail "x$r: $output"
        done
        run -0 --separate-stderr tns run --rate 2 -- "$HELPERS/rateprobe" wait alarm 3000
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 1400 && e <= 1700)) || fail "alarm(3) at x2: $e ms of host time"
}

# The old value setitimer, timer_settime and timerfd_settime return is a
# duration of the namespace's (helper-39: 10 s armed read back 5 at x2),
# and so is what timerfd_gettime, getitimer and timer_gettime read.
@test "the old value of setitimer, timer_settime and timerfd_settime, and timerfd_gettime, getitimer and timer_gettime, are the namespace's at x2 and x0.5" {
        local r k v i
        for r in 2 0.5; do
                for k in itimer timer timerfd timerfd-get itimer-get timer-get; do
                        run -0 --separate-stderr tns run --rate "$r" -- "$HELPERS/rateprobe" old "$k"
                        v=$(field value "$output")
                        i=$(field interval "$output")
                        ((v >= 9850 && v <= 9950)) || fail "x$r $k: value $v ms left of 10 s after 100 ms ($output)"
                        ((i >= 2990 && i <= 3000)) || fail "x$r $k: interval $i ms, want 3 s ($output)"
                done
        done
}

# The time left that select writes back and nanosleep's rem are the
# namespace's durations, as on the host: a loop that waits for what is
# left ends (before, select's was never written: a loop on it waited on).
@test "select's time left and nanosleep's rem are the namespace's at x2 and x0.5" {
        local r k l
        for r in 2 0.5; do
                for k in select nanosleep; do
                        run -0 --separate-stderr tns run --rate "$r" -- "$HELPERS/rateprobe" left "$k" 2000 500
                        l=$(sed -nE 's/.*left=([0-9]+) ms/\1/p' <<<"$output")
                        ((l >= 1400 && l <= 1510)) || fail "x$r $k: $l ms left of 2000 after 500 ($output)"
                done
        done
}

# A rated wait in progress across a hand-over ends as it would have:
# the converted call was let run (its mark classifies as nothing, yet it
# is ours), so the hand-over does not take it back with an interrupt,
# which made epoll_wait return EINTR with no signal at all.
@test "epoll_wait, poll and select at x2 in progress across a hand-over end with their timeout, not EINTR" {
        local k e
        for k in epoll poll select; do
                bg "$TIMENSCTL" run --rate 2 -- "$HELPERS/rateprobe" wait "$k" 3000 >"$BATS_TEST_TMPDIR/$k" 2>&1
        done
        sleep 0.6
        handover_daemon
        for k in 0 1 2; do
                wait_for_exit "${BG_PIDS[k]}" 20
        done
        for k in epoll poll select; do
                grep -q "result=0 " "$BATS_TEST_TMPDIR/$k" || fail "$k: $(cat "$BATS_TEST_TMPDIR/$k")"
                e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' "$BATS_TEST_TMPDIR/$k")
                ((e >= 1400 && e <= 2200)) || fail "$k: $e ms of host time for 3 s at x2"
        done
}

# An interrupted select restarts as the kernel restarts it (a stop and a
# continue: no handler), waiting for what is left: the kernel, which
# cannot write the time left into our read-only copy, had made it EINTR.
@test "a select at x2 stopped and continued restarts and ends with its timeout, as on the host" {
        local p e
        bg "$TIMENSCTL" run --rate 2 -- "$HELPERS/rateprobe" wait select 3000 >"$BATS_TEST_TMPDIR/out" 2>&1
        for ((e = 0; e < 50; e++)); do
                p=$(pgrep -x rateprobe | tail -1) && [ -n "$p" ] && break
                sleep 0.1
        done
        sleep 0.5
        kill -STOP "$p"
        sleep 0.2
        kill -CONT "$p"
        wait_for_exit "${BG_PIDS[0]}" 20
        grep -q "result=0 " "$BATS_TEST_TMPDIR/out" || fail "$(cat "$BATS_TEST_TMPDIR/out")"
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' "$BATS_TEST_TMPDIR/out")
        ((e >= 1400 && e <= 2400)) || fail "$e ms of host time for 3 s at x2"
}

# A timeout converted in its register (poll, epoll, alarm) by a timensd
# killed before the call ran reaches the next one as it was left: marked
# (TNS_WAIT_REG_MARK, a half the kernel does not read), it is run as it
# is, not converted again (rateprobe poll-converted makes one by hand).
@test "a poll timeout a killed timensd converted is not converted again" {
        local e
        run -0 --separate-stderr tns run --rate 2 -- "$HELPERS/rateprobe" wait poll-converted 600
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 550 && e <= 800)) || fail "$e ms of host time for 600 host ms already converted ($output)"
        run -0 --separate-stderr tns run --rate 2 -- "$HELPERS/rateprobe" wait poll 600
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 270 && e <= 450)) || fail "$e ms of host time for 600 ms at x2 ($output)"
}

# Every relative sleep of a rated namespace is held under ptrace: a thread
# the exec of another kills (de_thread) dies traced, and the exec waits
# until timensd reaps it; timensd must never seize a thread of a program in
# its exec (the kernel holds the program's cred_guard_mutex, which
# PTRACE_SEIZE waits for). Either slip hung the exec and timensd for good
# (runc's Go init in a rated container, 1 start in 3).
@test "execs of a program whose other threads are held in rated waits finish, 40 in a row" {
        local r
        for r in "--rate 2" "--rate 0.5" --freeze; do
                # shellcheck disable=SC2086 # the option and its value
                run -0 --separate-stderr tns run $r -- "$HELPERS/waitprobe" exec-busy monotonic 40
                [ "$output" = "exec-busy monotonic result=0" ] || fail "$r: $output $stderr"
        done
        run -0 tns list
}

@test "a zero timeout stays zero, an infinite poll is not trapped into a timeout" {
        run -0 --separate-stderr tns run --rate 0.001 -- "$HELPERS/rateprobe" wait poll 0
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e < 200)) || fail "poll(0) took $e ms"
        run -0 --separate-stderr tns run --rate 0.001 -- "$HELPERS/rateprobe" wait nanosleep 0
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e < 200)) || fail "nanosleep(0) took $e ms"
}

@test "frozen: every read returns the same value; --realtime DATE --freeze reads DATE; relative sleeps pass in host time" {
        run -0 --separate-stderr tns run --realtime 2030-01-01T00:00:00Z --freeze -- sh -c \
                "'$HELPERS/clockprobe' --ns realtime; '$HELPERS/clockprobe' --vdso --ns realtime; sleep 0.3;
                 '$HELPERS/clockprobe' --vdso --ns realtime; '$HELPERS/clockprobe' --ns monotonic;
                 sleep 0.2; '$HELPERS/clockprobe' --vdso --ns monotonic"
        mapfile -t v <<<"$output"
        [ "${v[0]}" = "${v[1]}" ] && [ "${v[1]}" = "${v[2]}" ] || fail "realtime moved while frozen: ${v[*]}"
        [ "${v[3]}" = "${v[4]}" ] || fail "monotonic moved while frozen: ${v[*]}"
        # Exactly the date: frozen where the date was made, not the
        # moments later the namespace froze (off by 40-130 us before).
        [ "${v[0]}" = $((1893456000 * NSEC_PER_SEC)) ] || fail "frozen at ${v[0]}, not at the date"
        # A relative sleep in a frozen namespace passes in host time.
        run -0 --separate-stderr tns run --freeze -- "$HELPERS/rateprobe" wait nanosleep 300
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 280 && e <= 800)) || fail "a 300 ms sleep took $e ms when frozen"
}

# With a rate of REALTIME's own, what a timer has left is at the rate of
# the class it runs on: a relative timer on CLOCK_MONOTONIC's (as the
# kernel runs it), an absolute one on its clock's (helper-47: 19.6 s of
# 10 read back, and 4.8).
@test "per class: a CLOCK_REALTIME timerfd's time left, set relative or absolute, at realtime x2" {
        local v
        run -0 --separate-stderr tns run --rate realtime=2 -- "$HELPERS/rateprobe" old timerfd-rt-get
        v=$(field value "$output")
        ((v >= 9850 && v <= 9950)) || fail "relative: $v ms left of 10 s after 100 ms ($output)"
        run -0 --separate-stderr tns run --rate realtime=2 -- "$HELPERS/rateprobe" old timerfd-rtabs-get
        v=$(field value "$output")
        ((v >= 9700 && v <= 9850)) || fail "absolute: $v ms left of 10 s after 100 ms at x2 ($output)"
}

# Per class (the issue: "per clock class"): the date stands while
# MONOTONIC runs, so the runtimes that wait until MONOTONIC reaches a
# deadline (Go's timers, Java's sleeps, Python's timed queue waits: for
# ever under a whole freeze) end their waits on time.
@test "--freeze=realtime: the date stands, MONOTONIC runs, and Go, Java and Python timed waits end" {
        run -0 --separate-stderr timeout 30 "$TIMENSCTL" run --realtime 2030-01-01T00:00:00Z --freeze=realtime -- sh -c \
                "'$HELPERS/clockprobe' --ns realtime; '$HELPERS/clockprobe' --ns monotonic; sleep 0.3;
                 '$HELPERS/clockprobe' --vdso --ns realtime; '$HELPERS/clockprobe' --vdso --ns monotonic"
        mapfile -t v <<<"$output"
        [ "${v[0]}" = $((1893456000 * NSEC_PER_SEC)) ] && [ "${v[2]}" = "${v[0]}" ] ||
                fail "realtime not frozen at the date: ${v[*]}"
        (((v[3] - v[1]) / 1000000 >= 250)) || fail "monotonic stood: ${v[*]}"
        # Python: a timed queue wait and a condition's wait_for.
        run -0 --separate-stderr timeout 20 "$TIMENSCTL" run --realtime 2030-01-01 --freeze=realtime -- python3 -c '
import queue, threading, time
t = time.monotonic()
try:
    queue.Queue().get(timeout=0.3)
except queue.Empty:
    pass
c = threading.Condition()
with c:
    c.wait_for(lambda: False, timeout=0.3)
print("python", round(time.monotonic() - t, 2), time.strftime("%Y", time.gmtime()))'
        [[ $output == "python 0.6"*" 2030" ]] || fail "$output"
        if [ -x "$BATS_FILE_TMPDIR/gosleep" ]; then
                run -0 --separate-stderr timeout 20 "$TIMENSCTL" run --realtime 2030-01-01 --freeze=realtime -- \
                        "$BATS_FILE_TMPDIR/gosleep"
        fi
        if command -v java >/dev/null; then
                cp "$ROOT/tests/helpers/Waits.java" "$BATS_TEST_TMPDIR/"
                run -0 --separate-stderr timeout 60 "$TIMENSCTL" run --realtime 2030-01-01 --freeze=realtime -- \
                        java "$BATS_TEST_TMPDIR/Waits.java"
        fi
}

@test "per class rates: REALTIME x2 while MONOTONIC runs x0.5, vDSO and syscalls, and waits follow MONOTONIC" {
        local k v host
        run -0 --separate-stderr tns run --rate realtime=2,monotonic=0.5 -- "$HELPERS/rateprobe" read 2
        host=$(field host "$output")
        for k in vdso_real sys_real; do
                assert_rate "$k" "$(field "$k" "$output")" "$host" 2
        done
        for k in vdso_mono sys_mono; do
                assert_rate "$k" "$(field "$k" "$output")" "$host" 0.5
        done
        # A relative sleep runs on MONOTONIC's rate: 0.3 s at x0.5 is 0.6 s.
        run -0 --separate-stderr tns run --rate realtime=4 --rate monotonic=0.5 -- "$HELPERS/rateprobe" wait nanosleep 300
        e=$(sed -nE 's/.*elapsed=([0-9]+) ms/\1/p' <<<"$output")
        ((e >= 550 && e <= 900)) || fail "a 300 ms sleep at monotonic x0.5 took $e ms"
}

@test "per class: set, show, list, export and import; a class left out keeps its rate; bad classes are refused" {
        run -0 tns create pc --rate 1 --realtime 2030-01-01T00:00:00Z
        run -0 tns set pc --freeze=realtime
        run -0 tns set pc --rate monotonic=3
        run -0 --separate-stderr tns show pc --json
        [ "$(json_get 'j["namespace"]["clocks"]["realtime"]["frozen"]' <<<"$output")" = True ] || fail "$output"
        [ "$(json_get 'j["namespace"]["clocks"]["realtime"]["rate"]' <<<"$output")" = 1 ] || fail "$output"
        [ "$(json_get 'j["namespace"]["clocks"]["monotonic"]["rate"]' <<<"$output")" = 3 ] || fail "$output"
        [ "$(json_get 'j["namespace"]["clocks"]["boottime"]["rate"]' <<<"$output")" = 3 ] || fail "$output"
        [ "$(json_get 'j["namespace"]["clocks"]["monotonic"]["frozen"]' <<<"$output")" = False ] || fail "$output"
        run -0 --separate-stderr tns show pc
        [[ $output == *"Rate: realtime 1 (frozen), monotonic 3"* ]] || fail "$output"
        run -0 --separate-stderr tns list
        grep -E '^ +[0-9]+ pc .* rt:1/frozen,mono:3 ' <<<"$output" || fail "$output"
        run -0 --separate-stderr tns export pc
        echo "$output" >"$BATS_TEST_TMPDIR/pc.json"
        run -0 tns import --name pc2 "$BATS_TEST_TMPDIR/pc.json"
        run -0 --separate-stderr tns show pc2
        [[ $output == *"Rate: realtime 1 (frozen), monotonic 3"* ]] || fail "$output"
        # Unfrozen alone: MONOTONIC keeps x3.
        run -0 tns set pc --unfreeze=realtime
        run -0 --separate-stderr tns show pc
        [[ $output == *"Rate: realtime 1, monotonic 3"* ]] || fail "$output"
        # Through the API, per class; and what is refused, naming it.
        run -0 api '{"version":1,"id":1,"op":"set","params":{"name":"pc","rate":{"realtime":"2"},"freeze":{"monotonic":true}}}'
        [[ $output == *'"result"'* ]] || fail "$output"
        run -0 --separate-stderr tns show pc
        [[ $output == *"Rate: realtime 2, monotonic 3 (frozen)"* ]] || fail "$output"
        run -0 api '{"version":1,"id":1,"op":"set","params":{"name":"pc","rate":{"boottime":"2"}}}'
        [[ $output == *invalid-params* && $output == *boottime* ]] || fail "$output"
        run -0 api '{"version":1,"id":1,"op":"set","params":{"name":"pc","rate":{"realtime":"0"}}}'
        [[ $output == *invalid-params* && $output == *params.rate.realtime* ]] || fail "$output"
        run -125 --separate-stderr tns run --rate boottime=2 -- true
        [[ $stderr == *"'boottime' is not a clock class"* ]] || fail "$stderr"
        run -125 --separate-stderr tns run --freeze=days -- true
        [[ $stderr == *"'days'"* ]] || fail "$stderr"
        run -125 --separate-stderr tns run --rate realtime=2 --rate realtime=3 -- true
        [[ $stderr == *twice* ]] || fail "$stderr"
        run -1 --separate-stderr tns set pc --freeze=realtime --unfreeze=realtime
        [[ $stderr == *exclude* ]] || fail "$stderr"
        run -125 --separate-stderr tns run --rate realtime=x2 -- true
        [[ $stderr == *"'x2'"* ]] || fail "$stderr"
}

@test "a live change of rate, a freeze and an unfreeze never move MONOTONIC back, vDSO and trapped reads in turn" {
        local out="$BATS_TEST_TMPDIR/loop" r
        run -0 tns create live --rate 1
        bg "$TIMENSCTL" run --join live -- sh -c "'$HELPERS/rateprobe' mono-loop 4000 >'$out'"
        sleep 0.5
        for r in 4 0.25 1000 1/7; do
                run -0 tns set live --rate "$r"
                sleep 0.3
        done
        run -0 tns set live --freeze
        sleep 0.3
        run -0 tns set live --unfreeze
        run -0 tns set live --rate 1
        wait_for_file "$out" 20
        [ "$(cat "$out")" = "backwards=0" ] || fail "MONOTONIC went back: $(cat "$out")"
        run -0 --separate-stderr tns show live --json
        [ "$(json_get 'j["namespace"]["rate"]' <<<"$output")" = 1 ]
}

# BOOTTIME is MONOTONIC plus the time suspended: the kernel's BOOTTIME never
# reads below MONOTONIC. Both classes run at one rate; their anchors are
# taken at one instant, so that a change at an extreme rate cannot put
# BOOTTIME behind (read 30 ns apart, x1000000 made it 0.67 s behind, and
# it stayed behind at x1; test-ns checks the anchors against bounds of the
# suspended time, this the programs' view).
@test "BOOTTIME never falls behind MONOTONIC across rate changes, up to x1000000" {
        local r d
        local probe='import time; b = time.clock_gettime_ns(time.CLOCK_BOOTTIME); m = time.clock_gettime_ns(time.CLOCK_MONOTONIC); print(b - m)'
        run -0 tns create mb --rate 1
        for r in 1000000 1 1440 0.5 1000000 1; do
                run -0 tns set mb --rate "$r"
        done
        # At x1, BOOTTIME read first: behind only by the reads' distance.
        run -0 --separate-stderr tns run --join mb -- python3 -c "$probe"
        d=$output
        ((d > -1000000)) || fail "BOOTTIME $d ns behind MONOTONIC after rate changes"
        run -0 --separate-stderr tns run --rate 1000000 -- python3 -c \
                'import time; m = time.clock_gettime_ns(time.CLOCK_MONOTONIC); b = time.clock_gettime_ns(time.CLOCK_BOOTTIME); print(b - m)'
        ((output >= 0)) || fail "BOOTTIME $output ns behind MONOTONIC read after it at x1000000"
}

# ns_minus_host NAME: the namespace's REALTIME less the host's, in ms.
ns_minus_host() {
        local t h
        t=$("$TIMENSCTL" run --join "$1" -- "$HELPERS/clockprobe" --ns realtime)
        h=$("$HELPERS/clockprobe" --ns realtime)
        echo $(((t - h) / 1000000))
}

# near_ms LABEL GOT WANT SLACK: |GOT - WANT| <= SLACK.
near_ms() {
        local d=$(($2 - $3))
        ((d >= -$4 && d <= $4)) || fail "$1: $2 ms, want $3 +- $4"
}

@test "set with an offset in a rated namespace: the clock becomes the host's plus it, however far the rate took it" {
        local d
        run -0 tns create far --rate 10
        sleep 1
        d=$(ns_minus_host far)
        ((d > 5000)) || fail "x10 for a second put REALTIME $d ms ahead"
        # The probe's own start runs at x10 too: a few hundred ms at most.
        run -0 tns set far --realtime +0
        near_ms "--realtime +0 at x10" "$(ns_minus_host far)" 0 500
        run -0 tns set far --faketime '+0 x3'
        near_ms "'+0 x3'" "$(ns_minus_host far)" 0 300
        run -0 tns set far --faketime '-1h x2'
        near_ms "'-1h x2'" "$(ns_minus_host far)" -3600000 300
        run -0 tns set far --realtime +1d
        near_ms "--realtime +1d at x2" "$(ns_minus_host far)" 86400000 300
        # A rate alone moves nothing: re-anchored where the clock is.
        run -0 tns set far --rate 1
        near_ms "--rate 1 after" "$(ns_minus_host far)" 86400000 300
        # An offset with a return to rate 1, in one set, after a drift
        # (helper-42: '+0' read the host's less the drift).
        run -0 tns set far --rate 10
        sleep 1
        run -0 tns set far --faketime '+0'
        near_ms "'+0' from x10" "$(ns_minus_host far)" 0 100
        run -0 tns set far --rate 10
        sleep 0.5
        run -0 tns set far --realtime -1h --rate 1
        near_ms "--realtime -1h --rate 1 from x10" "$(ns_minus_host far)" -3600000 100
}

@test "set --rate: a plain namespace with processes is refused (create it with --rate 1), an empty one is made rate-capable" {
        run -0 tns create plain
        bg "$TIMENSCTL" run --join plain -- sleep 30
        local i
        for ((i = 0; i < 100; i++)); do
                tns show plain --json | json_get 'j["namespace"]["live"]' | grep -q True && break
                sleep 0.1
        done
        run -1 --separate-stderr tns set plain --rate 2
        [[ $stderr == *"--rate 1"* ]] || fail "no hint: $stderr"
        run -0 tns create empty
        run -0 tns set empty --rate 3
        run -0 --separate-stderr tns show empty --json
        [ "$(json_get 'j["namespace"]["rate"]' <<<"$output")" = 3 ]
        [ "$(json_get 'j["namespace"]["rate_capable"]' <<<"$output")" = True ]
}

# Only timensd serves rates: a root `run --rate` with nothing on the
# socket starts it, as attach does, rather than refusing; any other user
# is told what to do, before anything runs.
@test "run --rate as root starts timensd when nothing answers; another user is told what to do" {
        local dir started
        dir=$(mktemp -d "$DAEMON_DIR/own.XXXXXX")
        TIMENS_SOCKET="$dir/timensd.sock" TIMENSD="$TIMENSD" run -0 --separate-stderr \
                tns run --rate 2 -- "$HELPERS/rateprobe" read 1
        assert_rate "started x2" "$(field vdso_mono "$output")" "$(field host "$output")" 2
        started=$(pgrep -f -x "timensd --socket $dir/timensd.sock" || true)
        [ -n "$started" ] || fail "no timensd on $dir/timensd.sock"
        kill -TERM "$started"
        wait_for_exit "$started"
        requires_setpriv
        "${NOBODY[@]}" test -x "$TIMENSCTL" || skip "nobody cannot run timensctl in this checkout"
        chmod 755 "$dir"
        TIMENS_SOCKET="$dir/timensd.sock" run -125 --separate-stderr \
                "${NOBODY[@]}" "$TIMENSCTL" run --rate 2 -- touch "$dir/ran"
        [[ $stderr == *"need timensd at $dir/timensd.sock"*"as root"* ]] || fail "$stderr"
        [ ! -e "$dir/ran" ] || fail "the command ran unserved"
}

@test "bad rates and FAKETIME specs are refused, naming the input" {
        local bad
        for bad in 0 -1 nan NaN 1e30 inf "" 2x 1/0; do
                run -125 --separate-stderr tns run --rate "$bad" -- true
                [[ $stderr == *"'$bad'"* ]] || fail "--rate '$bad': $stderr"
        done
        for bad in "i2.0" "+1d i2.0" "2030-01-01 12:00:00 x2" "+2d x0" "tomorrow" "86400"; do
                run -125 --separate-stderr tns run --faketime "$bad" -- true
                [[ $stderr == *"'$bad'"* ]] || fail "--faketime '$bad': $stderr"
        done
        run -1 --separate-stderr tns create x --rate 0
        [[ $stderr == *"--freeze"* ]] || fail "no hint at --freeze: $stderr"
        # The API names it too.
        run -0 api '{"version":1,"id":1,"op":"create","params":{"name":"y","rate":"1e30"}}'
        [[ $output == *"1e30"* && $output == *invalid-params* ]] || fail "$output"
}

@test "--faketime: start at a date and run, frozen at a date, an offset with a rate" {
        local v
        run -0 --separate-stderr env TZ=UTC "$TIMENSCTL" run --faketime '@2030-01-01 12:00:00 x2' -- \
                "$HELPERS/rateprobe" read 1
        assert_rate "faketime x2" "$(field vdso_real "$output")" "$(field host "$output")" 2
        run -0 --separate-stderr env TZ=UTC "$TIMENSCTL" run --faketime '@2030-01-01 12:00:00' -- \
                "$HELPERS/clockprobe" --sec realtime
        v=$output
        ((v >= 1893499200 && v <= 1893499205)) || fail "starts at 2030-01-01 12:00:00: $v"
        run -0 --separate-stderr env TZ=UTC "$TIMENSCTL" run --faketime '2030-01-01 12:00:00' -- sh -c \
                "'$HELPERS/clockprobe' --ns realtime; sleep 0.2; '$HELPERS/clockprobe' --vdso --ns realtime"
        mapfile -t vs <<<"$output"
        [ "${vs[0]}" = "${vs[1]}" ] || fail "not frozen: ${vs[*]}"
        [ "${vs[0]}" = $((1893499200 * NSEC_PER_SEC)) ] || fail "frozen at ${vs[0]}, not at 2030-01-01 12:00:00"
        run -0 --separate-stderr "$TIMENSCTL" run --faketime '-3h x2' -- "$HELPERS/clockprobe" --sec realtime
        v=$((output - $(date +%s) + 3 * 3600))
        ((v >= -5 && v <= 5)) || fail "-3h: off by $v s"
}

@test "clock_settime inside a rated namespace sets the point and keeps the rate" {
        requires_user_ns
        local before after
        before=$(date +%s)
        run -0 --separate-stderr tns run --rate 2 -- unshare -U -r sh -c \
                "date -s @2208988800 >/dev/null && '$HELPERS/clockprobe' --sec realtime && '$HELPERS/rateprobe' read 1"
        after=$(date +%s)
        ((after - before < 600 && after >= before)) || fail "the host's clock moved: $before -> $after"
        mapfile -t v <<<"$output"
        ((v[0] >= 2208988800 && v[0] <= 2208988805)) || fail "not set: ${v[0]}"
        assert_rate "after settime" "$(field sys_real "${v[1]}")" "$(field host "${v[1]}")" 2
        assert_rate "after settime, vDSO" "$(field vdso_real "${v[1]}")" "$(field host "${v[1]}")" 2
}

@test "list, show, export and import carry the rate" {
        run -0 tns create r2 --rate 2
        run -0 tns create fz --freeze
        run -0 --separate-stderr tns list
        [[ $output == *RATE* ]] || fail "$output"
        grep -E '^ +[0-9]+ r2 .* 2 ' <<<"$output" || fail "$output"
        grep -E '^ +[0-9]+ fz .* 1/frozen ' <<<"$output" || fail "$output"
        run -0 --separate-stderr tns export r2
        echo "$output" >"$BATS_TEST_TMPDIR/state.json"
        run -0 tns import --name r2copy "$BATS_TEST_TMPDIR/state.json"
        local h t0 t1
        t0=$(date +%s%N)
        run -0 --separate-stderr tns show r2copy --json
        t1=$(date +%s%N)
        [ "$(json_get 'j["namespace"]["rate"]' <<<"$output")" = 2 ]
        # Its anchor: now_ns = anchor_ns + 2 x (host - anchor_host_ns).
        h=$(json_get 'j["namespace"]["clocks"]["realtime"]["anchor_host_ns"]' <<<"$output")
        a=$(json_get 'j["namespace"]["clocks"]["realtime"]["anchor_ns"]' <<<"$output")
        b=$(json_get 'j["namespace"]["clocks"]["realtime"]["now_ns"]' <<<"$output")
        ((h > 0 && b >= a)) || fail "no anchor in show --json: $output"
        assert_within "now from the anchor" "$b" $((a + 2 * (t0 - h))) $((a + 2 * (t1 - h)))
        [ "$(json_get 'j["namespace"]["rate_capable"]' <<<"$output")" = True ]
        run -0 --separate-stderr tns export fz
        echo "$output" >"$BATS_TEST_TMPDIR/fz.json"
        run -0 tns import --name fzcopy "$BATS_TEST_TMPDIR/fz.json"
        run -0 --separate-stderr tns show fzcopy --json
        [ "$(json_get 'j["namespace"]["frozen"]' <<<"$output")" = True ]
        # Its clocks stand at the exported values exactly (35 us past
        # them before: frozen again after the offsets were made).
        local c
        for c in monotonic boottime realtime; do
                run -0 --separate-stderr tns show fz --json
                a=$(json_get "j['namespace']['clocks']['$c']['now_ns']" <<<"$output")
                run -0 --separate-stderr tns show fzcopy --json
                b=$(json_get "j['namespace']['clocks']['$c']['now_ns']" <<<"$output")
                [ "$a" = "$b" ] || fail "frozen $c imported at $b, exported at $a"
        done
        # A spec that runs unfreezes, as it says.
        run -0 tns set fz --faketime '+1d x2'
        run -0 --separate-stderr tns show fz --json
        [ "$(json_get 'j["namespace"]["frozen"]' <<<"$output")" = False ] || fail "still frozen: $output"
        [ "$(json_get 'j["namespace"]["rate"]' <<<"$output")" = 2 ]
}

@test "a namespace without a rate traps nothing more: relative waits stay in the kernel" {
        run -0 tns create plainwait
        run -0 tns run --join plainwait -- "$HELPERS/rateprobe" wait nanosleep 100
        run -0 tns run --join plainwait -- "$HELPERS/rateprobe" wait poll 100
        run -0 --separate-stderr tns stats --json
        [ "$(json_get 'j["syscalls"]["nanosleep"]["calls"]' <<<"$output")" = 0 ]
        [ "$(json_get 'j["syscalls"]["poll"]["calls"]' <<<"$output")" = 0 ]
}

@test "a handover to a new timensd (SIGUSR2) keeps rates, freezes and rate-capability" {
        local i
        run -0 tns create keep --rate 2
        run -0 tns create cold --freeze
        bg "$TIMENSCTL" run --join keep -- sleep 60
        for ((i = 0; i < 100; i++)); do
                tns show keep --json | json_get 'j["namespace"]["live"]' | grep -q True && break
                sleep 0.1
        done
        run -0 --separate-stderr tns show cold --json
        a=$(json_get 'j["namespace"]["clocks"]["realtime"]["now_ns"]' <<<"$output")
        handover_daemon
        run -0 --separate-stderr tns show keep --json
        [ "$(json_get 'j["namespace"]["rate"]' <<<"$output")" = 2 ]
        [ "$(json_get 'j["namespace"]["rate_capable"]' <<<"$output")" = True ]
        run -0 --separate-stderr tns show cold --json
        [ "$(json_get 'j["namespace"]["frozen"]' <<<"$output")" = True ]
        b=$(json_get 'j["namespace"]["clocks"]["realtime"]["now_ns"]' <<<"$output")
        [ "$a" = "$b" ] || fail "frozen realtime moved across the handover: $a -> $b"
        run -0 --separate-stderr tns run --join keep -- "$HELPERS/rateprobe" read 1
        assert_rate "after the handover" "$(field vdso_mono "$output")" "$(field host "$output")" 2
        # Still rate-capable with its process: the rate changes live.
        run -0 tns set keep --rate 0.5
}
