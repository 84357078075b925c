#!/usr/bin/env bats
# The image's direct read path (issue 19): timensd proves at start that our
# image reads this kernel's time data as the kernel's vDSO does, and says
# which path it uses; every clock read through the vDSO then stays between
# two raw syscalls (answered by the supervisor) while the namespace's clocks
# move: clock_settime inside, `timensctl set` from outside, whole and
# sub-second offsets; a member under a kernel time namespace too; under a
# supervisor inside one the image calls the kernel's vDSO instead, and
# agrees too (tests/helpers/vdso-hammer.c).

# $DAEMON_DIR comes from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe vdso-hammer
}

setup() {
        HAMMER="$HELPERS/vdso-hammer"
}

teardown() {
        daemon_teardown
}

# assert_hammer OUTPUT: no wrong value, and something checked.
assert_hammer() {
        [[ $1 =~ checked\ ([0-9]+)\ .*wrong\ ([0-9]+) ]] || fail "no summary from vdso-hammer: $1"
        ((BASH_REMATCH[2] == 0)) || fail "wrong values through the vDSO: $1"
        ((BASH_REMATCH[1] > 100)) || fail "too few reads checked: $1"
}

@test "timensd proves the direct path at start; stats say which read path the image uses" {
        requires_root
        local reads cs
        start_daemon
        run -0 tns stats --json
        reads=$(json_get 'j["vdso"].get("reads", "")' <<<"$output")
        [[ $reads =~ ^(tsc|pvclock|call-through)$ ]] || fail "vdso.reads is '$reads'"
        run -0 tns stats
        [[ $output == *"reads $reads"* ]] || fail "timensctl stats does not say the read path: $output"
        if [ "$reads" = call-through ]; then
                # Why, in the log: an unknown kernel, a clocksource without
                # a vDSO mode, a kernel time namespace, or a failed proof.
                grep -q "vDSO reads: call-through, " "$DAEMON_DIR/log" || fail "no reason logged: $(cat "$DAEMON_DIR/log")"
                skip "the image calls through on this host: $(grep -o 'vDSO reads: .*' "$DAEMON_DIR/log")"
        fi
        cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
        case $cs in
        tsc) [ "$reads" = tsc ] || fail "clocksource tsc, reads $reads" ;;
        kvm-clock) [ "$reads" = pvclock ] || fail "clocksource kvm-clock, reads $reads" ;;
        esac
}

@test "every clock through the vDSO lies between two raw syscalls, whole-second offsets" {
        run -0 tns run --realtime +1d --monotonic 2d --boottime 3d -- "$HAMMER" 2
        assert_hammer "$output"
}

@test "every clock through the vDSO lies between two raw syscalls, sub-second and negative offsets" {
        run -0 tns run --realtime -0.999999999 --monotonic 0.5 --boottime 86400.000000001 -- "$HAMMER" 2
        assert_hammer "$output"
        run -0 tns run --realtime 2030-01-01T00:00:00.123456789Z --monotonic 1.000000007 -- "$HAMMER" 1
        assert_hammer "$output"
}

@test "across clock_settime inside (unshare -U -r): 0 wrong values" {
        requires_user_ns
        local before after
        before=$(host_ns realtime)
        run -0 tns run --realtime +1d --monotonic 2d -- unshare -U -r "$HAMMER" 3 --settime
        after=$(host_ns realtime)
        assert_hammer "$output"
        [[ $output =~ settimes\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 10)) || fail "clock_settime did not run: $output"
        # The host's clock never moved (an hour either way would show).
        ((after - before < 600 * NSEC_PER_SEC && after >= before)) || fail "the host clock moved"
}

@test "across live timensctl set: 0 wrong values" {
        requires_root
        local i sets=0 out
        start_daemon
        out="$DAEMON_DIR/hammer.out"
        # shellcheck disable=SC2016 # expanded by that sh, from its arguments
        bg sh -c '"$0" run --name live --realtime +1d --monotonic 1d -- "$1" 8 >"$2" 2>&1' "$TIMENSCTL" "$HAMMER" "$out"
        for ((i = 0; i < 100; i++)); do
                tns list 2>/dev/null | grep -q live && break
                sleep 0.05
        done
        # Whole and sub-second parts, every clock, while it runs.
        for ((i = 1; i <= 40; i++)); do
                tns set live --realtime "+${i}h ${i}ms 7ns" --monotonic "+1d ${i}s ${i}us 3ns" \
                        --boottime "+${i}s 999999999ns" >/dev/null 2>&1 || break
                sets=$((sets + 1))
        done
        ((sets >= 3)) || fail "only $sets sets while vdso-hammer ran"
        wait_for_exit "${BG_PIDS[0]}" 30
        run cat "$out"
        assert_hammer "$output"
        [[ $output =~ changes\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 0)) || fail "no set was seen during the run: $output"
}

# timensctl run gives each command a kernel time namespace of its own
# (selftests.bats): the image then passes by that namespace's page to the
# kernel's data, and adds that namespace's offsets, as the kernel's own
# vDSO does — proven by timensd at start in one of its own with offsets.
@test "a member under a kernel time namespace (its own, and unshare -T with offsets inside) reads directly, and agrees with the syscalls" {
        requires_root
        requires_kernel_timens
        start_daemon
        if grep -q "vDSO reads: call-through" "$DAEMON_DIR/log"; then
                skip "the image calls through on this host: $(grep -o 'vDSO reads: .*' "$DAEMON_DIR/log")"
        fi
        grep -q "vDSO reads: \(tsc\|pvclock\)" "$DAEMON_DIR/log" || fail "no read path logged: $(cat "$DAEMON_DIR/log")"
        ! grep -q "unproven there" "$DAEMON_DIR/log" || fail "not proven under a kernel time namespace: $(cat "$DAEMON_DIR/log")"
        run -0 tns run --realtime +1d --monotonic 2d --boottime 3d -- "$HAMMER" 2
        assert_hammer "$output"
        run -0 tns run --realtime -1h --monotonic 0.5 -- unshare -T --monotonic 100 --boottime -7 "$HAMMER" 2
        assert_hammer "$output"
}

@test "a supervisor inside a kernel time namespace: the image calls through, and agrees with the syscalls" {
        requires_kernel_timens
        # The embedded supervisor (no timensd on this socket) runs inside
        # the kernel's time namespace too: its proof sees the TIMENS page.
        TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" run -0 unshare -T --monotonic 86400 --boottime 86400 \
                "$TIMENSCTL" run --monotonic 3600 --realtime +1d -- "$HAMMER" 3
        assert_hammer "$output"
}
