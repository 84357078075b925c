#!/usr/bin/env bats
# timensctl attach: running programs (one thread, many, Go, a process
# tree) moved into a namespace by timensd, through the vDSO patched in
# place and the raw syscalls; the errors that refuse an attach.

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash.
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

DAY=86400

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockloop clockprobe
        if command -v go >/dev/null; then
                (cd "$ROOT/tests/helpers" && timeout 300 go build -o "$BATS_FILE_TMPDIR/goloop" goloop.go) || true
        fi
}

setup() {
        requires_root
        start_daemon
}

teardown() {
        daemon_teardown
}

# loop FILE CMD...: starts a program that prints a line of readings every
# 20 ms into FILE, and waits for its first line. Sets LOOP.
loop() {
        local out=$1
        shift
        bg "$@" >"$out"
        LOOP=${BG_PIDS[-1]}
        wait_for_file "$out"
}

# fresh_line FILE: a line printed wholly after now (the second one from
# now: the next one may have been half read before), bounded.
fresh_line() {
        local n i
        n=$(wc -l <"$1")
        for ((i = 0; i < 200; i++)); do
                (($(wc -l <"$1") >= n + 2)) && break
                sleep 0.05
        done
        (($(wc -l <"$1") >= n + 2)) || fail "no new line in $1 within 10 s"
        tail -n 1 "$1"
}

# near LABEL GOT WANT: whole seconds, one second apart at most (two reads
# a few ms apart may straddle a second).
near() {
        local d=$(($2 - $3))
        ((d >= -1 && d <= 1)) || fail "$1: got $2, want $3"
}

# check_clockloop LINE REALTIME_OFF MONOTONIC_OFF BOOTTIME_OFF (seconds):
# every field of a clockloop line against the host now.
check_clockloop() {
        local -a f
        read -r -a f <<<"$1"
        local rt mono boot
        rt=$(($("$HELPERS/clockprobe" --sec realtime) + $2))
        mono=$(($("$HELPERS/clockprobe" --sec monotonic) + $3))
        boot=$(($("$HELPERS/clockprobe" --sec boottime) + $4))
        near "realtime (vDSO)" "${f[1]}" "$rt"
        near "realtime (syscall)" "${f[2]}" "$rt"
        near "monotonic (vDSO)" "${f[3]}" "$mono"
        near "monotonic (syscall)" "${f[4]}" "$mono"
        near "boottime (vDSO)" "${f[5]}" "$boot"
        near "boottime (syscall)" "${f[6]}" "$boot"
        near "gettimeofday (vDSO)" "${f[7]}" "$rt"
        near "gettimeofday (syscall)" "${f[8]}" "$rt"
        near "time (vDSO)" "${f[9]}" "$rt"
        near "time (syscall)" "${f[10]}" "$rt"
        [ -z "${f[11]:-}" ] || near "the worker threads" "${f[11]}" "$rt"
}

@test "a running program's clocks jump to the namespace's, vDSO and syscall" {
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" 0 0 0
        run -0 tns attach "$LOOP" --realtime +10d --monotonic +1d --boottime +2d --name loop
        [[ $output == *"loop (id "*"Attached 1 process."* ]]
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" $((10 * DAY)) $((DAY)) $((2 * DAY))
        # It runs on: still answering, not traced any more.
        kill -0 "$LOOP"
        grep -q '^TracerPid:[[:space:]]*0$' "/proc/$LOOP/status"
}

@test "attached monotonic and boottime read what the kernel's own time namespace reads" {
        requires_kernel_timens
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        run -0 tns attach "$LOOP" --monotonic +1d --boottime +2d
        local -a f
        read -r -a f <<<"$(fresh_line "$DAEMON_DIR/out")"
        near "monotonic" "${f[3]}" "$(unshare -T --monotonic $DAY --boottime $((2 * DAY)) "$HELPERS/clockprobe" --vdso --sec monotonic)"
        near "boottime" "${f[5]}" "$(unshare -T --monotonic $DAY --boottime $((2 * DAY)) "$HELPERS/clockprobe" --vdso --sec boottime)"
}

@test "every thread of a multi-threaded program is attached" {
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop" --threads 8 --interval-ms 10
        run -0 tns attach "$LOOP" --realtime +10d
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" $((10 * DAY)) 0 0
        [ "$(find "/proc/$LOOP/task" -mindepth 1 -maxdepth 1 | wc -l)" = 9 ]
}

@test "a running Go program (its runtime reads the vDSO itself, many threads)" {
        [ -x "$BATS_FILE_TMPDIR/goloop" ] || skip "go is not installed (Debian package golang-go)"
        loop "$DAEMON_DIR/out" "$BATS_FILE_TMPDIR/goloop"
        run -0 tns attach "$LOOP" --realtime +10d --monotonic +1d
        local -a f
        read -r -a f <<<"$(fresh_line "$DAEMON_DIR/out")"
        local rt mono
        rt=$(($("$HELPERS/clockprobe" --sec realtime) + 10 * DAY))
        mono=$(($("$HELPERS/clockprobe" --sec monotonic) + DAY))
        near "time.Now" "${f[1]}" "$rt"
        near "realtime (syscall)" "${f[2]}" "$rt"
        near "runtime.nanotime" "${f[3]}" "$mono"
        near "monotonic (syscall)" "${f[4]}" "$mono"
}

@test "a process tree: running children, and what is started after, by fork and exec" {
        local d=$DAEMON_DIR
        bg sh -c "'$HELPERS/clockloop' >'$d/c1' & '$HELPERS/clockloop' >'$d/c2' &
                  while [ ! -e '$d/go' ]; do sleep 0.02; done
                  '$HELPERS/clockprobe' --vdso --sec realtime >'$d/late'
                  '$HELPERS/clockprobe' --sec realtime >>'$d/late'
                  wait"
        local sh=${BG_PIDS[-1]}
        wait_for_file "$d/c1"
        wait_for_file "$d/c2"
        run -0 tns attach "$sh" --realtime +10d --name tree
        [[ $output == *"Attached "[3-9]" processes."* ]]
        check_clockloop "$(fresh_line "$d/c1")" $((10 * DAY)) 0 0
        check_clockloop "$(fresh_line "$d/c2")" $((10 * DAY)) 0 0
        touch "$d/go"
        wait_for_file "$d/late"
        local want
        want=$(($("$HELPERS/clockprobe" --sec realtime) + 10 * DAY))
        for ((i = 0; i < 100; i++)); do
                [ "$(wc -l <"$d/late")" = 2 ] && break
                sleep 0.05
        done
        near "exec'd after the attach (vDSO)" "$(sed -n 1p "$d/late")" "$want"
        near "exec'd after the attach (syscall)" "$(sed -n 2p "$d/late")" "$want"
        run -0 tns show tree
        [[ $output == *"Processes: "* ]]
        # Each once: an attached process is a listener's root and its
        # parent's child (helper-37 saw one twice).
        run -0 tns --json show tree
        echo "$output" | json_get 'len(set(j["namespace"]["processes"])) == len(j["namespace"]["processes"]) >= 3 or sys.exit(1)' ||
                fail "processes listed twice: $output"
}

# Only a process can enter a kernel time namespace; an attached one makes
# a new one for what it starts after (its children, its next program), so
# that the namespace has an identity of its own (show's Kernel ns).
@test "what an attached process starts after is in a kernel time namespace of the namespace's own" {
        requires_kernel_timens
        local d=$DAEMON_DIR host
        host=$(readlink /proc/self/ns/time)
        bg sh -c "while [ ! -e '$d/go' ]; do sleep 0.02; done
                  readlink /proc/self/ns/time >'$d/late'; exec sleep 60"
        local sh=${BG_PIDS[-1]}
        run -0 tns attach "$sh" --monotonic +1d --name ident
        touch "$d/go"
        wait_for_file "$d/late"
        local ns
        for ((i = 0; i < 100; i++)); do
                ns=$(cat "$d/late")
                [ -n "$ns" ] && break
                sleep 0.05
        done
        [[ "$ns" == time:\[*\] ]] || fail "$ns"
        [ "$ns" != "$host" ] || fail "a process started after the attach is in the host's time namespace"
        run -0 tns show ident
        [[ "$output" == *"Kernel ns: $ns"* ]] || fail "$output"
}

@test "--no-tree attaches the process alone" {
        local d=$DAEMON_DIR
        bg sh -c "'$HELPERS/clockloop' >'$d/child' & exec '$HELPERS/clockloop' >'$d/parent'"
        local p=${BG_PIDS[-1]}
        wait_for_file "$d/child"
        wait_for_file "$d/parent"
        run -0 tns attach "$p" --no-tree --realtime +10d
        [[ $output == *"Attached 1 process."* ]]
        check_clockloop "$(fresh_line "$d/parent")" $((10 * DAY)) 0 0
        check_clockloop "$(fresh_line "$d/child")" 0 0 0
}

@test "--join: an existing namespace, whose later changes the process sees" {
        run -0 tns create held --realtime +1d
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        run -0 tns attach "$LOOP" --join held
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" $((DAY)) 0 0
        run -0 tns set held --realtime +3d
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" $((3 * DAY)) 0 0
}

@test "a namespace made by attach goes with the last attached process" {
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        run -0 tns attach "$LOOP" --name short
        run -0 tns list
        [[ $output == *short* ]]
        stop_bg
        for ((i = 0; i < 100; i++)); do
                tns list | grep -q short || break
                sleep 0.05
        done
        run -0 tns list
        [[ $output != *short* ]]
}

@test "refusals name what failed: attached already, no such process, a thread, pid 1" {
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop" --threads 2
        run -0 tns attach "$LOOP" --name first
        run -1 --separate-stderr tns attach "$LOOP"
        [[ $stderr == *"process $LOOP is already in namespace 'first' (busy)"* ]]
        run -1 --separate-stderr tns attach 2147483647
        [[ $stderr == *"no process 2147483647"*"(not-found)"* ]]
        local tid
        tid=$(find "/proc/$LOOP/task" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -vx "$LOOP" | head -n 1)
        run -1 --separate-stderr tns attach "$tid"
        [[ $stderr == *"$tid is a thread, not a process"*"(invalid-params)"* ]]
        run -1 --separate-stderr tns attach 1
        [[ $stderr == *"process 1 is the init"*"(invalid-params)"* ]]
        run -1 --separate-stderr tns attach "$DAEMON_PID"
        [[ $stderr == *"is timensd itself"* ]]
        run -1 --separate-stderr tns attach nope
        [[ $stderr == *"Invalid PID 'nope'"* ]]
        # The namespaces those refusals would have made are not left over.
        run -0 tns list
        [[ $output == *"1 namespace listed."* ]]
        # And the attached program still reads its clocks.
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" 0 0 0
}

@test "a process traced by someone else is refused, and left as it was" {
        command -v gdb >/dev/null || skip "no tracer to hold the process (gdb is not installed)"
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        bg gdb -q -batch -p "$LOOP" -ex 'shell sleep 30'
        for ((i = 0; i < 200; i++)); do
                grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$LOOP/status" && break
                sleep 0.05
        done
        run -1 --separate-stderr tns attach "$LOOP"
        [[ $stderr == *"is traced by process"*"(busy)"* ]]
}

@test "attach starts timensd when nothing answers on the socket" {
        local dir
        dir=$(mktemp -d "$DAEMON_DIR/own.XXXXXX")
        loop "$DAEMON_DIR/out" "$HELPERS/clockloop"
        TIMENS_SOCKET="$dir/timensd.sock" TIMENSD="$TIMENSD" run -0 tns attach "$LOOP" --realtime +10d
        check_clockloop "$(fresh_line "$DAEMON_DIR/out")" $((10 * DAY)) 0 0
        local started
        started=$(pgrep -f -x "timensd --socket $dir/timensd.sock" || true)
        [ -n "$started" ] || fail "no timensd on $dir/timensd.sock"
        stop_bg
        kill -TERM "$started"
        wait_for_exit "$started"
}
