# shellcheck shell=bash
# For tests/bats/daemon-*.bats (after `load helpers`): a timensd of the
# test's own — its child, on a socket in a fresh directory — and the
# processes a test starts, all stopped by their pid in teardown.

TIMENSD="$BUILDDIR/timensd"
BG_PIDS=()

requires_timensd() {
        [ -x "$TIMENSD" ] || fail "$TIMENSD is missing: run make"
}

# The pid and VmRSS (KiB) of timensd, and how many fds it has open.
daemon_fds() {
        find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 | wc -l
}

daemon_rss_kib() {
        awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"
}

# Polls until the socket answers (bounded): the event is the daemon's
# first answer, and it may also have died trying.
wait_daemon_ready() {
        local i
        for ((i = 0; i < 200; i++)); do
                "$TIMENSCTL" list >/dev/null 2>&1 && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || fail "timensd exited: $(cat "$DAEMON_DIR/log")"
                sleep 0.05
        done
        fail "timensd did not answer on $SOCK within 10 s"
}

# start_daemon [TIMENSD ARGS...]: in a directory others may enter (the
# authorisation tests connect as another user), logging to $DAEMON_DIR/log.
start_daemon() {
        DAEMON_DIR=$(mktemp -d /tmp/timensd-test.XXXXXX)
        chmod 755 "$DAEMON_DIR"
        SOCK="$DAEMON_DIR/timensd.sock"
        export TIMENS_SOCKET="$SOCK"
        "$TIMENSD" --foreground --log-target stderr --log-level debug --socket "$SOCK" "$@" 2>>"$DAEMON_DIR/log" &
        DAEMON_PID=$!
        wait_daemon_ready
}

# handover_daemon: SIGUSR2 to $DAEMON_PID, and DAEMON_PID becomes the new
# image, the pid its predecessor names in the log (the new image is not
# our child; a pgrep of its command line may find a short-lived child of
# it, forked with the same command line), checked alive.
handover_daemon() {
        local old=$DAEMON_PID line
        kill -USR2 "$old"
        wait_for_exit "$old"
        wait_for_line "$DAEMON_DIR/log" "Handed over to a new timensd (pid "
        line=$(grep -o "Handed over to a new timensd (pid [0-9]*)" "$DAEMON_DIR/log" | tail -1)
        DAEMON_PID=${line##*pid }
        DAEMON_PID=${DAEMON_PID%)}
        if [ -z "$DAEMON_PID" ] || [ "$DAEMON_PID" = "$old" ] || ! kill -0 "$DAEMON_PID"; then
                fail "no new timensd after SIGUSR2: $(cat "$DAEMON_DIR/log")"
        fi
        wait_daemon_ready
}

stop_daemon() {
        [ -n "${DAEMON_PID:-}" ] || return 0
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        wait_for_exit "$DAEMON_PID" 10 || kill -KILL "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
        DAEMON_PID=
}

# bg CMD...: starts CMD (a program, not a function) in the background, in
# a session of its own so that stop_bg reaches whatever it started, and
# remembers its pid.
bg() {
        setsid "$@" &
        BG_PIDS+=($!)
}

# Stops what bg started, by process group: SIGTERM (timensctl run passes
# it on to its command), then SIGKILL for what is left.
stop_bg() {
        local pid
        for pid in "${BG_PIDS[@]}"; do
                kill -TERM -- "-$pid" 2>/dev/null || true
        done
        for pid in "${BG_PIDS[@]}"; do
                wait_for_exit "$pid" 5 2>/dev/null || true
                kill -KILL -- "-$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
        done
        BG_PIDS=()
}

daemon_teardown() {
        show_output_on_failure
        if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${DAEMON_DIR:-}" ] && [ -f "$DAEMON_DIR/log" ]; then
                echo "# timensd's log:"
                sed 's/^/#   /' "$DAEMON_DIR/log"
        fi
        stop_bg
        stop_daemon
        [ -n "${DAEMON_DIR:-}" ] && rm -rf "$DAEMON_DIR"
        DAEMON_DIR=
}

# api LINE...: sends raw request lines over one connection, prints each
# reply line (10 s bound each).
api() {
        python3 - "$SOCK" "$@" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rwb")
for line in sys.argv[2:]:
    f.write(line.encode() + b"\n")
    f.flush()
    sys.stdout.write(f.readline().decode())
PY
}

# json_get EXPR: evaluates a Python expression over the JSON on stdin (j).
json_get() {
        python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"
}

# Starts `timensctl run ARGS -- clock-loop.py` with its stdin and stdout on
# fifos: clock_read CLOCK then asks that one running process for a raw
# clock_gettime reading (ns). Returns once the loop answers, i.e. once
# timensd serves its namespace (the program's exec waits for that). Sets
# LOOP_PID.
start_clock_loop() {
        local dir
        dir=$(mktemp -d "$DAEMON_DIR/loop.XXXXXX")
        mkfifo "$dir/in" "$dir/out"
        # Redirected in the background job itself: opening a fifo blocks
        # until its other end is opened, which we do next.
        setsid "$TIMENSCTL" run "$@" -- python3 "$BATS_TEST_DIRNAME/clock-loop.py" <"$dir/in" >"$dir/out" &
        LOOP_PID=$!
        BG_PIDS+=("$LOOP_PID")
        exec {LOOP_IN}>"$dir/in" {LOOP_OUT}<"$dir/out"
        clock_read realtime >/dev/null
}

clock_read() {
        local v
        echo "$1" >&"$LOOP_IN"
        read -r -t 10 v <&"$LOOP_OUT" || fail "the clock loop did not answer"
        echo "$v"
}

stop_clock_loop() {
        exec {LOOP_IN}>&- {LOOP_OUT}<&-
}
