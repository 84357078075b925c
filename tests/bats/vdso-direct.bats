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

# The proof runs on the event loop after timensd listens (its probes are
# programs it starts): wait for its verdict before reading it.
start_daemon_proven() {
        start_daemon
        wait_for_line "$DAEMON_DIR/log" "vDSO reads: " 30
}

@test "timensd proves the direct path at start; stats say which read path the image uses" {
        requires_root
        local reads cs
        start_daemon_proven
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

# A rated namespace (issue 18): the image reads the rate's map as timensd
# prepared it for readers (struct tns_rate_fast), and must agree with the
# syscalls, whose answer is the map itself (tns_rate_apply). The hammer
# times itself in CPU time: the namespace's clocks run at the rate here.
@test "at a rate (x2, 1/3, x1440, frozen), with sub-second offsets: every clock through the vDSO lies between two raw syscalls" {
        requires_root
        start_daemon
        hammer_at() {
                run -0 tns run "$@" -- "$HAMMER" 1 --cpu
                assert_hammer "$output"
        }
        hammer_at --rate 2
        hammer_at --rate 1/3 --realtime -0.999999999 --monotonic 0.5
        hammer_at --rate 1440 --boottime 86400.000000001
        hammer_at --freeze --realtime 2030-01-01T00:00:00.123456789Z
        hammer_at --faketime "@2031-02-03 04:05:06 x0.5"
}

@test "across live changes of rate, freeze and unfreeze, and clock_settime inside: 0 wrong values" {
        requires_root
        requires_user_ns
        local i sets=0 out before after
        start_daemon
        out="$DAEMON_DIR/hammer.out"
        before=$(host_ns realtime)
        # shellcheck disable=SC2016 # expanded by that sh, from its arguments
        bg sh -c '"$0" run --name rated --rate 2 --realtime +1d --monotonic 0.3 -- unshare -U -r "$1" 4 --settime --cpu >"$2" 2>&1' \
                "$TIMENSCTL" "$HAMMER" "$out"
        for ((i = 0; i < 100; i++)); do
                tns list 2>/dev/null | grep -q rated && break
                sleep 0.05
        done
        for ((i = 1; i <= 30; i++)); do
                case $((i % 5)) in
                0) tns set rated --freeze ;;
                1) tns set rated --unfreeze ;;
                2) tns set rated --rate "$i" ;;
                3) tns set rated --rate "1/$i" --monotonic "+${i}s ${i}ns" ;;
                4) tns set rated --rate 1 --realtime "+${i}h 999999999ns" ;;
                esac >/dev/null 2>&1 || break
                sets=$((sets + 1))
                sleep 0.02
        done
        ((sets >= 3)) || fail "only $sets changes while vdso-hammer ran"
        wait_for_exit "${BG_PIDS[0]}" 60
        after=$(host_ns realtime)
        run cat "$out"
        assert_hammer "$output"
        [[ $output =~ changes\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 0)) || fail "no change was seen during the run: $output"
        [[ $output =~ settimes\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 10)) || fail "clock_settime did not run: $output"
        ((after - before < 600 * NSEC_PER_SEC && after >= before)) || fail "the host clock moved"
}

# timensctl run gives each command a kernel time namespace of its own
# (selftests.bats): the image then passes by that namespace's page to the
# kernel's data, and adds that namespace's offsets, as the kernel's own
# vDSO does — proven by timensd at start in one of its own with offsets.
@test "a member under a kernel time namespace (its own, and unshare -T with offsets inside) reads directly, and agrees with the syscalls" {
        requires_root
        requires_kernel_timens
        start_daemon_proven
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
