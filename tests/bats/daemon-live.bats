#!/usr/bin/env bats
# Live changes: `timensctl set` while programs run, seen by a running
# program at its next raw clock_gettime (tests/bats/clock-loop.py, one
# process for the whole test), in that namespace only; what an offset
# means; and MONOTONIC/BOOTTIME never moved backwards unless asked.

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

DAY=$((86400 * NSEC_PER_SEC))

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe
}

setup() {
        requires_root
        start_daemon
}

teardown() {
        [ -n "${LOOP_IN:-}" ] && stop_clock_loop
        LOOP_IN=
        daemon_teardown
}

# The realtime offset seen by the running loop now, in whole hours.
loop_offset_hours() {
        local before v after h=$((3600 * NSEC_PER_SEC))
        before=$(host_ns realtime)
        v=$(clock_read realtime)
        after=$(host_ns realtime)
        # Rounded to the nearest hour, shifted by 1000 h to stay positive:
        # bash division truncates toward zero.
        echo $(((v - (before + after) / 2 + 1000 * h + h / 2) / h - 1000))
}

@test "set while it runs: the running program sees the new offset at its next read" {
        start_clock_loop --name live --realtime +1d
        run -0 loop_offset_hours
        [ "$output" = 24 ]
        run -0 tns set live --realtime +2d
        run -0 loop_offset_hours
        [ "$output" = 48 ]
        run -0 tns set live --realtime -12h
        run -0 loop_offset_hours
        [ "$output" = -12 ]
        run -0 tns show live
        [[ $output == *"Sets: 2"* ]]
}

@test "set while it runs: the vDSO path (libc's clock_gettime) sees it too" {
        local h=$((3600 * NSEC_PER_SEC)) d
        start_clock_loop --name vdso --realtime +1d
        d=$(($(clock_read vdso-realtime) - $(host_ns realtime)))
        ((d > 23 * h)) || skip "the vDSO is not shifted here (no vDSO injection): $(fmt_ns "$d")"
        run -0 tns set vdso --realtime +2d
        d=$(($(clock_read vdso-realtime) - $(host_ns realtime)))
        assert_near "vDSO realtime offset after set +2d" "$d" "$((48 * h))" "$NSEC_PER_SEC"
        run -0 tns set vdso --realtime -3h --monotonic +1h
        d=$(($(clock_read vdso-realtime) - $(host_ns realtime)))
        assert_near "vDSO realtime offset after set -3h" "$d" "$((-3 * h))" "$NSEC_PER_SEC"
        d=$(($(clock_read vdso-monotonic) - $(host_ns monotonic)))
        assert_near "vDSO monotonic offset after set +1h" "$d" "$h" "$NSEC_PER_SEC"
}

@test "two namespaces: a set on one is seen there only" {
        local a_in a_out
        start_clock_loop --name one
        a_in=$LOOP_IN a_out=$LOOP_OUT
        start_clock_loop --name two
        run -0 tns list
        [[ $output == *" one "* && $output == *" two "* ]]
        run -0 tns set two --realtime +1d
        run -0 loop_offset_hours
        [ "$output" = 24 ]
        LOOP_IN=$a_in LOOP_OUT=$a_out
        run -0 loop_offset_hours
        [ "$output" = 0 ]
        exec {a_in}>&- {a_out}<&-
}

@test "an offset means host + offset: +3d after +1d moves the clock by two days" {
        start_clock_loop --name meaning --realtime +1d --monotonic +1d
        run -0 tns set meaning --realtime +3d --monotonic +3d
        run -0 loop_offset_hours
        [ "$output" = 72 ]
        assert_near monotonic "$(clock_read monotonic)" "$(($(host_ns monotonic) + 3 * DAY))" "$NSEC_PER_SEC"
}

@test "a date makes CLOCK_REALTIME read that date now" {
        local want=1893456000 got
        start_clock_loop --name dated
        run -0 tns set dated --realtime "@$want"
        got=$(clock_read realtime)
        assert_near "realtime after set @$want" "$got" "$((want * NSEC_PER_SEC))" "$NSEC_PER_SEC"
        run -0 tns set dated --realtime 2030-01-01T00:00:00Z
        got=$(clock_read realtime)
        assert_near "realtime after set 2030-01-01" "$got" "$((want * NSEC_PER_SEC))" "$NSEC_PER_SEC"
}

@test "MONOTONIC and BOOTTIME do not go backwards while processes run, unless --allow-backwards" {
        local before after
        start_clock_loop --name steady --monotonic +2d --boottime +2d
        before=$(clock_read monotonic)
        run -1 --separate-stderr tns set steady --monotonic +1d
        [[ $stderr == *"backwards (offset +2d to +1d)"*"allow_backwards"*"(backwards)"* ]]
        run -1 --separate-stderr tns set steady --boottime 0 --realtime +5d
        [[ $stderr == *"boottime clock"*"backwards"* ]]
        # Refused as a whole: realtime did not move either.
        run -0 loop_offset_hours
        [ "$output" = 0 ]
        after=$(clock_read monotonic)
        ((after > before))
        # Forward is fine, realtime may go anywhere.
        run -0 tns set steady --monotonic +3d --realtime -1d
        run -0 tns set steady --monotonic +1d --allow-backwards
        assert_near monotonic "$(clock_read monotonic)" "$(($(host_ns monotonic) + DAY))" "$NSEC_PER_SEC"
}

@test "a namespace without processes may be set anywhere; out-of-range offsets are refused" {
        run -0 tns create idle --monotonic +2d
        run -0 tns set idle --monotonic 0
        run -1 --separate-stderr tns set idle --monotonic -200y
        [[ $stderr == *"would put CLOCK_MONOTONIC below zero"* ]]
        run -1 --separate-stderr tns set idle
        [[ $stderr == *"at least one of"* ]]
        run -0 api '{"version":1,"id":1,"op":"set","params":{"name":"idle","offsets":{"realtime":"+300y"}}}'
        echo "$output" | json_get 'j["error"]["code"] == "out-of-range" or sys.exit(1)'
}
