#!/usr/bin/env bats
# Entrants: a process that enters a supervised pid namespace from outside
# (nsenter here; runc exec and crun exec do the same) is stopped by
# timensd's BPF program at its exec and attached before its first
# instruction: its very first clock read is the namespace's.

# $DAEMON_DIR, $DAEMON_PID from daemon-helpers.bash.
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

DAY=86400
OTHER=43210

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe
        if command -v go >/dev/null; then
                (cd "$ROOT/tests/helpers" && timeout 300 go build -o "$BATS_FILE_TMPDIR/gotime" gotime.go) || true
        fi
}

setup() {
        requires_root
        command -v nsenter >/dev/null || skip "nsenter is not installed (util-linux)"
        if [[ $BATS_TEST_DESCRIPTION == *"proc connector"* ]]; then
                start_daemon --entrants proc
                return
        fi
        # A group of the system's own (no user or group is made): uid
        # $OTHER with it as a supplementary group is a member.
        if [[ $BATS_TEST_DESCRIPTION == *"another uid"* ]]; then
                start_daemon --group "$(getent group 65534 | cut -d: -f1)"
        else
                start_daemon
        fi
        # The watch starts once timensd serves (an idle-time source):
        # its line, or the reason it has none, comes after it is ready.
        wait_for_line "$DAEMON_DIR/log" "Watching execs for entrants\|entrants are not attached"
        grep -q "Watching execs for entrants with BPF" "$DAEMON_DIR/log" ||
                skip "timensd could not load its BPF program here: $(grep -i bpf "$DAEMON_DIR/log")"
}

teardown() {
        daemon_teardown
}

# first_child PID: its first child's pid, once it has one (10 s at most).
first_child() {
        local i c
        for ((i = 0; i < 200; i++)); do
                c=$(pgrep -P "$1" || true)
                [ -n "$c" ] && break
                sleep 0.05
        done
        echo "$c"
}

# A "container": a process tree in a pid namespace of its own, attached to
# a namespace with realtime +10d. Sets INIT (its first process, host pid).
start_container() {
        local d=$DAEMON_DIR
        bg unshare -p -f --mount-proc sh -c "
                while [ ! -e '$d/member' ]; do sleep 0.02; done
                '$HELPERS/clockprobe' --vdso --sec realtime >'$d/member.out'
                exec sleep 1000"
        local unshare=${BG_PIDS[-1]}
        INIT=$(first_child "$unshare")
        [ -n "$INIT" ] || fail "the container's first process did not start"
        run -0 tns attach "$unshare" --realtime +10d --name ctr
}

host_plus_10d() {
        echo $(($("$HELPERS/clockprobe" --sec realtime) + 10 * DAY))
}

near() {
        local d=$(($2 - $3))
        ((d >= -1 && d <= 1)) || fail "$1: got $2, want $3"
}

@test "nsenter into a supervised pid namespace: the entrant's first clock read is shifted, vDSO and syscall" {
        start_container
        local p="$HELPERS/clockprobe" i
        for ((i = 0; i < 3; i++)); do
                run -0 timeout 10 nsenter -t "$INIT" -p -m "$p" --vdso --sec realtime
                near "first read through the vDSO" "$output" "$(host_plus_10d)"
                run -0 timeout 10 nsenter -t "$INIT" -p -m "$p" --sec realtime
                near "first read by the syscall" "$output" "$(host_plus_10d)"
        done
        grep -q "Entrant attached to namespace" "$DAEMON_DIR/log"
}

@test "nsenter of a Go program (its runtime reads the vDSO at start)" {
        [ -x "$BATS_FILE_TMPDIR/gotime" ] || skip "go is not installed (Debian package golang-go)"
        start_container
        run -0 timeout 10 nsenter -t "$INIT" -p -m "$BATS_FILE_TMPDIR/gotime"
        near "time.Now" "$output" "$(host_plus_10d)"
}

@test "the container's own execs are not taken for entrants" {
        start_container
        touch "$DAEMON_DIR/member"
        wait_for_file "$DAEMON_DIR/member.out"
        near "a member's exec" "$(cat "$DAEMON_DIR/member.out")" "$(host_plus_10d)"
        run ! grep -q "Entrant attached" "$DAEMON_DIR/log"
}

@test "root entering the pid namespace of another uid's namespace is not put under its clocks" {
        requires_user_ns
        getent group 65534 >/dev/null || skip "no group 65534 on this system"
        setpriv --reuid=$OTHER --regid=$OTHER --groups=65534 test -x "$TIMENSCTL" ||
                skip "uid $OTHER cannot reach $TIMENSCTL (the checkout's directory is closed to other users)"
        # The group member's "container": its own user, mount and pid
        # namespaces, attached by that member to a namespace of its own.
        bg setpriv --reuid=$OTHER --regid=$OTHER --groups=65534 unshare -U -r -m -p -f --mount-proc sleep 1000
        local unshare=${BG_PIDS[-1]} init
        init=$(first_child "$unshare")
        [ -n "$init" ] || fail "the container's first process did not start"
        run -0 setpriv --reuid=$OTHER --regid=$OTHER --groups=65534 "$TIMENSCTL" attach "$unshare" \
                --realtime +10d --name theirs
        run -0 tns show theirs
        [[ $output == *"Owner: uid $OTHER"* || $output == *"$OTHER"* ]] || fail "not the member's: $output"
        # Root's nsenter into it: root's process, not the member's to have.
        run -0 timeout 10 nsenter -t "$init" -p -m "$HELPERS/clockprobe" --sec realtime
        near "root's entrant reads the host's clock" "$output" "$("$HELPERS/clockprobe" --sec realtime)"
        wait_for_line "$DAEMON_DIR/log" "not attached: namespace [0-9]* belongs to uid $OTHER"
}

@test "an entrant of a pid namespace nobody serves runs untouched" {
        bg unshare -p -f --mount-proc sleep 1000
        local unshare=${BG_PIDS[-1]} init
        init=$(first_child "$unshare")
        run -0 timeout 10 nsenter -t "$init" -p -m "$HELPERS/clockprobe" --sec realtime
        near "host clock" "$output" "$("$HELPERS/clockprobe" --sec realtime)"
}

@test "without BPF, the proc connector: the entrant is attached after its exec (its first reads may be the host's)" {
        wait_for_line "$DAEMON_DIR/log" "Watching execs for entrants\|entrants are not attached"
        grep -q "Watching execs for entrants with the proc connector" "$DAEMON_DIR/log" ||
                fail "timensd --entrants proc did not start its watch: $(cat "$DAEMON_DIR/log")"
        start_container
        local out=$DAEMON_DIR/loop i
        bg sh -c "exec timeout 30 nsenter -t '$INIT' -p -m '$HELPERS/clockloop' --interval-ms 10 >'$out'"
        for ((i = 0; i < 200; i++)); do
                grep -q "Entrant attached to namespace 1 after its exec" "$DAEMON_DIR/log" && break
                sleep 0.05
        done
        grep -q "Entrant attached to namespace 1 after its exec" "$DAEMON_DIR/log" || fail "the entrant was not attached"
        local n want
        n=$(wc -l <"$out")
        for ((i = 0; i < 200; i++)); do
                (($(wc -l <"$out") >= n + 2)) && break
                sleep 0.05
        done
        want=$(host_plus_10d)
        near "a read after the attach" "$(tail -n 1 "$out" | cut -d' ' -f2)" "$want"
        near "a read after the attach (syscall)" "$(tail -n 1 "$out" | cut -d' ' -f3)" "$want"
}
