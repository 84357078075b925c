#!/usr/bin/env bats
# timensd serves the FUSE covers of /proc/uptime and /proc/stat itself. A
# member that points timensd at its own cover (helper-43, F1: a private
# mapping of it as a wait's deadline, an fd of it for setns or
# timerfd_settime, an fd of it sent to the control socket) made timensd
# wait for a FUSE request only timensd could answer: every namespace
# stood still, for good. Now such a call gets an error, and everyone else
# is served (tests/helpers/cover-attack.c; docs/SECURITY.md).

# $DAEMON_DIR and $SOCK come from daemon-helpers.bash.
# shellcheck disable=SC2154

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers cover-attack fuse-stall clockprobe
}

setup() {
        requires_root
        requires_helper cover-attack
        [ -c /dev/fuse ] || skip "no /dev/fuse: no /proc covers to attack"
        setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$HELPERS/cover-attack" ||
                skip "user nobody cannot reach $HELPERS (the checkout's directory is closed to other users)"
        start_daemon
}

teardown() {
        daemon_teardown
}

# The victim's reads so far: one line each.
victim_reads() {
        wc -l <"$BATS_TEST_TMPDIR/victim.log"
}

# Another namespace whose program reads its clock ten times a second.
start_victim() {
        bg "$TIMENSCTL" run --name victim --realtime +3d -- sh -c \
                "while :; do '$HELPERS/clockprobe' --ns realtime; sleep 0.1; done" >"$BATS_TEST_TMPDIR/victim.log"
        for ((i = 0; i < 100; i++)); do
                (($(victim_reads) > 2)) && break
                sleep 0.1
        done
}

@test "a member that points timensd at its own /proc cover gets an error, and every namespace is served on" {
        local mode before
        start_victim
        for mode in mmap setns timerfd send; do
                # A namespace of its own each: FUSE asks for FLUSH once per
                # connection, at its first close.
                run timeout 20 "$TIMENSCTL" run --realtime +1d -- setpriv --reuid=65534 --regid=65534 --clear-groups \
                        "$HELPERS/cover-attack" "$mode" /proc/uptime "$SOCK"
                [ "$status" -eq 0 ] || fail "$mode: the attacker did not come back ($status): $output"
                [[ $output == "$mode result="* ]] || fail "$mode: $output"
                before=$(victim_reads)
                sleep 1
                (($(victim_reads) > before)) || fail "$mode: the victim stopped reading its clock"
                run -0 timeout 10 "$TIMENSCTL" list --names
                [[ $output == *victim* ]] || fail "$mode: list: $output"
        done
        # The mapping's deadline: text, not a timespec (timensd cannot
        # read it, the kernel can, and finds its nanoseconds invalid).
        run -0 timeout 20 "$TIMENSCTL" run --realtime +1d -- "$HELPERS/cover-attack" mmap /proc/uptime
        [[ $output == "mmap result=-1 errno=22" || $output == "mmap result=-1 errno=14" ]] || fail "$output"
        grep -q "Failed to answer a read of /proc" "$DAEMON_DIR/log" && fail "$(cat "$DAEMON_DIR/log")"
        true
}

# F2: a member that runs a FUSE server of its own (container root with
# /dev/fuse) and never answers FLUSH. timensd took its fd (setns,
# timerfd_settime) or was sent it (the control socket) and closed it on
# the loop: every namespace stood still for as long as the server lived.
@test "a member's own FUSE file that never answers a close: setns, timerfd and the control socket hold no one" {
        requires_helper fuse-stall
        local mode before
        start_victim
        for mode in setns timerfd send; do
                # The server lives 4 s after the call: the victim must go on
                # meanwhile, and timensd must answer.
                before=$(victim_reads)
                "$TIMENSCTL" run --realtime +1d -- "$HELPERS/fuse-stall" 4 "$HELPERS/cover-attack" "$mode" @FILE \
                        "$SOCK" >"$BATS_TEST_TMPDIR/attack.log" 2>&1 &
                sleep 2
                run -0 timeout 2 "$TIMENSCTL" list --names
                (($(victim_reads) > before + 5)) ||
                        fail "$mode: the victim read its clock $(($(victim_reads) - before)) times in 2 s"
                wait $! || fail "$mode: $(cat "$BATS_TEST_TMPDIR/attack.log")"
                grep -q "^$mode result=" "$BATS_TEST_TMPDIR/attack.log" || fail "$(cat "$BATS_TEST_TMPDIR/attack.log")"
        done
}
