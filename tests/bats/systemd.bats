#!/usr/bin/env bats
# timensd under a real systemd (tests/tools/systemd-ns: the machine's own
# systemd as PID 1 of private namespaces): socket activation, READY and
# STATUS, the fd store across kill -9, `systemctl restart` and the
# watchdog, calls pending at a death answered by the next instance, and
# the kill loop of issue 8 with a hammer checking every result.

load helpers
load systemd-helpers

setup_file() {
        build_helpers hammer clockprobe clockloop
}

setup() {
        requires_root
        requires_timensctl
        requires_systemd
        requires_user_ns
        HOST_RT_BEFORE=$(date +%s)
}

teardown() {
        show_output_on_failure
        [ -n "${BG:-}" ] && kill "$BG" 2>/dev/null
        stop_systemd
        # Nothing here may move the host's clock.
        local now
        now=$(date +%s)
        ((now >= HOST_RT_BEFORE && now <= HOST_RT_BEFORE + 600)) || echo "host clock moved: $HOST_RT_BEFORE -> $now" >&2
}

@test "socket activation: the first timensctl call starts timensd, READY and STATUS with counts" {
        boot_systemd
        [ "$(main_pid)" = 0 ]
        run sns_ctl create first --monotonic +100s
        [ "$status" -eq 0 ]
        [ "$(sns systemctl is-active timensd.service)" = active ]
        run sns systemctl show -p StatusText --value timensd.service
        [[ "$output" == "Serving 1 namespace, 0 listeners"* ]] || fail "status: $output"
        # Both sockets came from systemd, by name.
        run sns journalctl -u timensd --no-pager
        [[ "$output" == *"Listening on /run/timens/timensd.sock"* ]]
        [ -S "/proc/$SNS_PID/root/run/timens/seccomp-agent.sock" ]
}

@test "kill -9: a running program keeps its clocks, the namespace keeps its offsets" {
        boot_systemd
        sns_ctl create keep --monotonic +1000s --boottime +2000s --realtime 2030-01-01
        sns_ctl run --join keep -- "$HELPERS/clockloop" --interval-ms 50 >"$BATS_TEST_TMPDIR/loop" 2>&1 &
        BG=$!
        wait_for_file "$BATS_TEST_TMPDIR/loop"
        kill9_keeps_state
        # The lines written after the restart: realtime in 2030 by the
        # vDSO and the raw syscall, monotonic +1000 s, boottime +2000 s.
        assert_loop_live "$BATS_TEST_TMPDIR/loop" 1000 1893456000
        host_boot=$(($(host_ns boottime) / NSEC_PER_SEC))
        read -r _ _ _ _ _ boot_v boot_s _ < <(tail -1 "$BATS_TEST_TMPDIR/loop")
        for v in "$boot_v" "$boot_s"; do ((v >= host_boot + 2000 - 2 && v <= host_boot + 2000)) || fail "boottime $v vs host $host_boot"; done
        run sns journalctl -u timensd --no-pager
        [[ "$output" == *"Restored 1 namespaces, 1 listeners"* ]]
}

@test "a burst of changes, then kill -9 at once: every change a client was told about is restored" {
        boot_systemd
        local i
        # Saves of the record are shared in a burst (timensd-fdstore.c):
        # each reply still waits for the save that holds its change.
        for ((i = 0; i < 40; i++)); do
                sns_ctl create "burst-$i" --monotonic "+${i}s" &
        done
        for ((i = 0; i < 10; i++)); do
                sns_ctl run --name "run-$i" -- sleep 60 >/dev/null 2>&1 &
        done
        local end=$((SECONDS + 30)) n=0
        while ((SECONDS < end)); do
                n=$(sns_ctl list --names | grep -c -E '^(burst|run)-' || true)
                ((n >= 50)) && break
                sleep 0.2
        done
        ((n == 50)) || fail "$n of 50 namespaces made"
        sns_ctl set burst-7 --monotonic +777s
        kill9_keeps_state
        run -0 sns_ctl show burst-7 --json
        python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["namespace"]["clocks"]["monotonic"]["offset_ns"] != 777000000000)' <<<"$output" || fail "burst-7: $output"
        run sns journalctl -u timensd --no-pager
        [[ "$output" == *"Restored 50 namespaces, 10 listeners"* ]] || fail "$(grep Restored <<<"$output")"
}

@test "a call pending when timensd dies is answered by the next instance" {
        boot_systemd
        sns_ctl create pending --monotonic +500s
        old=$(main_pid)
        # Frozen: the call is queued on the listener, no one reads it.
        sns kill -STOP "$old"
        sns_ctl run --no-daemon --help >/dev/null # (timensctl itself needs no daemon)
        sns "$TIMENSCTL" run --join pending -- "$HELPERS/clockprobe" --ns monotonic >"$BATS_TEST_TMPDIR/out" 2>&1 &
        BG=$!
        sleep 0.5
        [ ! -s "$BATS_TEST_TMPDIR/out" ] || fail "answered by a frozen daemon? $(cat "$BATS_TEST_TMPDIR/out")"
        sns kill -9 "$old"
        wait_restarted "$old"
        wait "$BG"
        BG=
        got=$(cat "$BATS_TEST_TMPDIR/out")
        assert_near "monotonic" "$got" $(($(host_ns monotonic) + 500 * NSEC_PER_SEC)) $((2 * NSEC_PER_SEC))
}

# What a process's fds are (kinds, not numbers), sorted: for a diff.
fd_targets() {
        local f
        for f in /proc/"$1"/fd/*; do
                readlink "$f" 2>/dev/null | sed 's/[0-9]\+/N/g'
        done | sort | uniq -c
}

@test "kill loop: 20 x kill -9 and 20 x systemctl restart under 4 x 4 hammering threads, 0 failures" {
        boot_systemd
        sns_ctl create hammer --monotonic +1000s --boottime +500s --realtime 2030-01-01
        # monotonic - boottime in the namespace: the host's, +1000 - 500 s.
        d=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - time.clock_gettime_ns(time.CLOCK_BOOTTIME))')
        expected=$((d + 500 * NSEC_PER_SEC))
        # Time for 40 restarts; clock_settime runs in a user namespace.
        sns "$TIMENSCTL" run --join hammer -- unshare -U -r "$HELPERS/hammer" 4 4 45 "$expected" \
                >"$BATS_TEST_TMPDIR/hammer" 2>&1 &
        BG=$!
        sleep 2
        before=$(list_state)
        pid=$(host_pid_of_timensd)
        fds_before=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
        fd_list_before=$(fd_targets "$pid")
        for ((i = 0; i < 20; i++)); do
                kill9_timensd
                sleep 0.3
        done
        for ((i = 0; i < 20; i++)); do
                old=$(main_pid)
                sns systemctl restart timensd.service
                wait_restarted "$old"
                sleep 0.3
        done
        after=$(list_state)
        pid=$(host_pid_of_timensd)
        # A leak stays; an fd open for the call being served goes (a
        # kernel time namespace's, looked at for one call: CI saw one
        # more time:[N] once). Looked at again for up to 2 s.
        for ((i = 0; i < 10; i++)); do
                fds_after=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
                fd_list_after=$(fd_targets "$pid")
                ((fds_after <= fds_before)) && break
                sleep 0.2
        done
        hammer_rc=0
        wait "$BG" || hammer_rc=$?
        BG=
        grep '^hammer: pid' "$BATS_TEST_TMPDIR/hammer" | sed 's/^/# /' >&3
        [ "$hammer_rc" -eq 0 ] || fail "hammer: $(head -40 "$BATS_TEST_TMPDIR/hammer")"
        [ "$(grep -c 'failures 0 wrong 0' "$BATS_TEST_TMPDIR/hammer")" -eq 4 ] || fail "$(cat "$BATS_TEST_TMPDIR/hammer")"
        [ "$before" = "$after" ] || fail "namespaces before: $before / after: $after"
        ((fds_after <= fds_before)) || fail "timensd fds: $fds_before before, $fds_after after: $(diff <(echo "$fd_list_before") <(echo "$fd_list_after"))"
        echo "# fds $fds_before -> $fds_after; $(grep -o 'stall_max_us [0-9]*' "$BATS_TEST_TMPDIR/hammer" | sort -k2 -n | tail -1)" >&3
        # How often a death caught a call mid-way (answered from the
        # in-flight page, or lost in a receive and sent back).
        journal=$(sns journalctl -u timensd --no-pager)
        echo "# calls answered from the in-flight page: $(grep -c 'Answered the call' <<<"$journal"); lost in a receive and sent back: $(grep -c 'Sent calls lost' <<<"$journal")" >&3
}

@test "watchdog: a frozen timensd is killed and restarted by systemd, the workload does not notice" {
        boot_systemd "[Service]
WatchdogSec=1s"
        sns_ctl create dog --monotonic +300s
        sns_ctl run --join dog -- "$HELPERS/clockloop" --interval-ms 50 >"$BATS_TEST_TMPDIR/loop" 2>&1 &
        BG=$!
        wait_for_file "$BATS_TEST_TMPDIR/loop"
        old=$(main_pid)
        sns kill -STOP "$old"
        wait_restarted "$old"
        run sns journalctl -u timensd --no-pager
        [[ "$output" == *"Watchdog timeout"* ]] || fail "no watchdog timeout in the journal: $output"
        assert_loop_live "$BATS_TEST_TMPDIR/loop" 300
}

@test "SIGUSR2 under systemd: the new image is the main process, nothing is lost" {
        boot_systemd
        sns_ctl create hand --realtime +10d
        sns_ctl run --join hand -- "$HELPERS/clockloop" --interval-ms 50 >"$BATS_TEST_TMPDIR/loop" 2>&1 &
        BG=$!
        wait_for_file "$BATS_TEST_TMPDIR/loop"
        before=$(list_state)
        old=$(main_pid)
        sns kill -USR2 "$old"
        wait_restarted "$old"
        [ "$(sns systemctl is-active timensd.service)" = active ]
        [ "$(list_state)" = "$before" ]
        run sns journalctl -u timensd --no-pager
        [[ "$output" == *"Handed over to a new timensd"* ]]
        [[ "$output" != *"Main process exited"* ]] || fail "systemd saw the old image exit as a failure: $output"
}

@test "systemctl stop, then start: the store is emptied, a new timensd starts clean" {
        boot_systemd
        sns_ctl create gone --monotonic +1s
        sns systemctl stop timensd.service
        sns_ctl list >/dev/null # socket activation again
        run sns_ctl list
        [[ "$output" == "No namespaces." ]] || fail "$output"
}

@test "exec kill loop: programs exec'd while timensd gets kill -9 and restarts start shifted, none with the host's vDSO" {
        build_helpers exec-kill
        boot_systemd
        sns_ctl create execs --monotonic +1000000s
        min=$(($(host_ns monotonic) / NSEC_PER_SEC + 1000000))
        sns "$TIMENSCTL" run --join execs -- "$HELPERS/exec-kill" loop 600 "$min" >"$BATS_TEST_TMPDIR/loop" 2>&1 &
        BG=$!
        sleep 1
        # TIMENS_EXEC_LOOP_ROUNDS for a longer measure (with
        # TIMENS_TEST_TIMEOUT above its duration).
        rounds=${TIMENS_EXEC_LOOP_ROUNDS:-10}
        for ((i = 0; i < rounds; i++)); do
                kill9_timensd
                sleep 0.3
                old=$(main_pid)
                sns systemctl restart timensd.service
                wait_restarted "$old"
                sleep 0.3
        done
        sns pkill -USR1 -f "exec-kill loop" || true
        wait "$BG" || fail "loop: $(cat "$BATS_TEST_TMPDIR/loop")"
        BG=
        out=$(cat "$BATS_TEST_TMPDIR/loop")
        journal=$(sns journalctl -u timensd --no-pager)
        echo "# $((2 * rounds)) deaths: $out; held programs finished by the next instance: $(grep -c 'Finished the exec of a program held' <<<"$journal")" >&3
        # A program the dying instance let go before its hold (or held by
        # none) gets the syscall path at its first arch_prctl: never the
        # host's vDSO (docs/design/exec-path.md).
        [[ "$out" =~ execs\ ([0-9]+)\ host_vdso\ 0\ wrong\ 0\ syscall_path\ ([0-9]+)\ failed\ 0 ]] || fail "$out"
}

@test "under timensd's exec hold: execs killed, stopped or waited for with WUNTRACED behave as on the host; bash job control unchanged" {
        build_helpers exec-kill
        boot_systemd
        sns_ctl create hold --monotonic +1d
        run sns "$TIMENSCTL" run --join hold -- "$HELPERS/exec-kill" kill 200 /bin/sleep 5
        [ "$status" -eq 0 ] && [[ "$output" == *"200 children reaped" ]] || fail "kill: $output"
        run sns "$TIMENSCTL" run --join hold -- "$HELPERS/exec-kill" stopcont 200 /bin/true
        [ "$status" -eq 0 ] && [[ "$output" == *"200 children reaped" ]] || fail "stopcont: $output"
        # A parent's waitpid(WUNTRACED) never sees the hold's stop.
        run sns "$TIMENSCTL" run --join hold -- "$HELPERS/exec-kill" untraced 300 /bin/true
        [ "$status" -eq 0 ] && [[ "$output" == *"300 children reaped" ]] || fail "untraced: $output"
        # Exec'd with SIGCONT blocked: nothing of the hold is left pending.
        run sns "$TIMENSCTL" run --join hold -- "$HELPERS/exec-kill" contblocked 50
        [ "$status" -eq 0 ] && [[ "$output" == *"50 children reaped" ]] || fail "SIGCONT blocked: $output"
        # Failed execs first (a PATH lookup), then the one that works.
        run sns "$TIMENSCTL" run --join hold -- "$HELPERS/exec-kill" untraced 50 env PATH=/nope:/nope2:/usr/bin:/bin true
        [ "$status" -eq 0 ] && [[ "$output" == *"50 children reaped" ]] || fail "PATH lookups: $output"
        # Job control: a job in the background, brought back with fg.
        run sns "$TIMENSCTL" run --join hold -- bash -c 'set -m; sleep 0.3 & jobs; fg >/dev/null; echo "fg $?"; jobs | wc -l'
        [ "$status" -eq 0 ] || fail "bash: $output"
        [ "$output" = $'[1]+  Running                 sleep 0.3 &\nfg 0\n0' ] || fail "bash: $output"
        run bash -c 'set -m; sleep 0.3 & jobs; fg >/dev/null; echo "fg $?"; jobs | wc -l'
        [ "$output" = $'[1]+  Running                 sleep 0.3 &\nfg 0\n0' ] || fail "host bash: $output"
        # Nothing of it was logged above debug.
        run sns journalctl -u timensd --no-pager -p warning
        [[ "$output" != *execve* ]] || fail "$output"
}

@test "under the unit's hardening (MemoryDenyWriteExecute=) the image reads the clocks as a plain timensd's does" {
        local dir pid plain unit
        # A plain timensd of the test's own, outside the unit: its read path.
        dir=$(mktemp -d "$BATS_TEST_TMPDIR/plain.XXXXXX")
        "$BUILDDIR/timensd" --foreground --log-target stderr --socket "$dir/sock" 2>"$dir/log" &
        pid=$!
        for _ in $(seq 100); do
                TIMENS_SOCKET="$dir/sock" "$TIMENSCTL" list >/dev/null 2>&1 && break
                sleep 0.05
        done
        plain=$(TIMENS_SOCKET="$dir/sock" "$TIMENSCTL" stats --json |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["vdso"].get("reads", ""))')
        kill "$pid"
        wait "$pid" || true
        boot_systemd
        sns_ctl create first --monotonic +100s
        unit=$(sns_ctl stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["vdso"].get("reads", ""))')
        [ -n "$plain" ] && [ "$unit" = "$plain" ] || fail "under the unit: '$unit', plain: '$plain'"
}
