#!/usr/bin/env bats
# File times set to "now" (touch, os.utime(path), futimens) take the
# namespace's realtime, every way a program can ask for them
# (tests/bats/file-times.py: utimensat with no times or UTIME_NOW, utimes,
# futimesat, utime); explicit times stay as given; bad input gets the
# host's errno; a caller allowed "now" but not explicit times (write
# access, not the owner) gets the host's time, as it would with no
# namespace, never an error.

# $DAEMON_DIR comes from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        command -v python3 >/dev/null || skip "python3 is not installed"
}

setup() {
        PROBE="$ROOT/tests/bats/file-times.py"
        FT_DIR=$(mktemp -d /tmp/timens-ft.XXXXXX)
        chmod 755 "$FT_DIR"
}

teardown() {
        show_output_on_failure
        daemon_teardown
        rm -rf "$FT_DIR"
}

# assert_file_times OUTPUT HOST_OUTPUT: every "now" within a second of
# the program's own time.time() (utime's whole seconds: within 1.5 s, not
# after), the rest as on the host.
assert_file_times() {
        local out=$1 host=$2 name how a m
        [ "$(wc -l <<<"$out")" = 12 ] || fail "not every way ran: $out"
        while read -r name how a m; do
                if [[ $name == bad-* ]]; then
                        grep -qx "$name $how $a" <<<"$host" || fail "$name: '$how $a' here, '$(grep "^$name " <<<"$host")' on the host"
                        continue
                fi
                [ "$how" = ok ] || fail "$name: $how $a"
                case $name in
                utimensat-expl) within "$a < -1e9 and $m < -1e9" || fail "$name: $a $m (explicit times must stay)" ;;
                utimensat-a-now) within "-1 < $a < 1 and $m < -1e9" || fail "$name: $a $m (atime now, mtime untouched)" ;;
                utime-null) within "-1.5 < $a <= 0.01 and -1.5 < $m <= 0.01" || fail "$name: $a $m" ;;
                *) within "-1 < $a < 1 and -1 < $m < 1" || fail "$name: $a $m (not the namespace's now)" ;;
                esac
        done <<<"$out"
}

# within EXPR: a Python comparison of numbers holds.
within() {
        python3 -c "import sys; sys.exit(not ($1))"
}

host_file_times() {
        HOST_OUT=$(python3 "$PROBE" "$FT_DIR") || fail "on the host: $HOST_OUT"
        assert_file_times "$HOST_OUT" "$HOST_OUT"
}

@test "file times set to now take the namespace's realtime (+1d, -10y), every call; explicit times and bad input as on the host" {
        host_file_times
        for off in +1d -3650d +1s; do
                run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime "$off" -- python3 "$PROBE" "$FT_DIR"
                assert_file_times "$output" "$HOST_OUT"
        done
        # No realtime offset: the kernel's own stamp.
        run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --monotonic +1d -- python3 "$PROBE" "$FT_DIR"
        assert_file_times "$output" "$HOST_OUT"
}

@test "touch and stat agree with date under --realtime 2030-01-01, in a dynamic and a static program" {
        local f=$FT_DIR/t out
        # shellcheck disable=SC2016 # expanded by the inner shell
        out=$(TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" tns run --realtime 2030-01-01 -- sh -c \
                'touch "$1"; date +%s; stat -c %Y "$1"' sh "$f") || fail "$out"
        { read -r d; read -r m; } <<<"$out"
        ((m >= 1893456000 && m - d <= 1 && d - m <= 1)) || fail "date $d, file $m"
        # busybox-static (a test dependency): no libc to lean on.
        if [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; then
                # shellcheck disable=SC2016 # expanded by the inner shell
                out=$(TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" tns run --realtime 2030-01-01 -- /bin/busybox sh -c \
                        '/bin/busybox touch "$1"; /bin/busybox date +%s; /bin/busybox stat -c %Y "$1"' sh "$f") || fail "$out"
                { read -r d; read -r m; } <<<"$out"
                ((m >= 1893456000 && m - d <= 1 && d - m <= 1)) || fail "busybox: date $d, file $m"
        fi
}

@test "through timensd: at a rate, and after a live timensctl set, now is the namespace's; stats count them" {
        requires_root
        local n h
        start_daemon
        host_file_times
        run -0 tns run --faketime '+1d x2' -- python3 "$PROBE" "$FT_DIR"
        assert_file_times "$output" "$HOST_OUT"
        tns create ft --realtime +5d
        run -0 tns run --join ft -- python3 "$PROBE" "$FT_DIR"
        assert_file_times "$output" "$HOST_OUT"
        tns set ft --realtime -2d
        run -0 tns run --join ft -- python3 "$PROBE" "$FT_DIR"
        assert_file_times "$output" "$HOST_OUT"
        tns destroy ft
        # Seven ways held per run, three runs: counted as set to the
        # namespace's now; none fell back to the host's.
        run -0 tns stats --json
        n=$(json_get 'j["file_times"]["namespace_now"]' <<<"$output")
        h=$(json_get 'j["file_times"]["host_now"]' <<<"$output")
        ((n >= 21 && h == 0)) || fail "file_times: namespace_now $n, host_now $h"
        run -0 tns stats
        [[ $output == *"File times: $n set to the namespace's now, 0 to the host's"* ]] || fail "$output"
}

# Explicit times need the owner (or CAP_FOWNER), "now" only write access:
# such a caller gets the host's time from its own call, run again.
@test "a caller with write access but not the owner: touch works, with the host's time; explicit times refused as on the host" {
        requires_root
        requires_setpriv
        local f=$FT_DIR/shared out host_m
        touch -d 2020-01-01 "$f"
        chmod 666 "$f"
        # shellcheck disable=SC2016 # expanded by the inner shell
        out=$(TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" tns run --realtime +1d -- "${NOBODY[@]}" sh -c \
                'touch "$1"; echo touch $?; touch -d 2021-01-01 "$1" 2>/dev/null; echo explicit $?' sh "$f")
        host_m=$(date +%s)
        [[ $out == *"touch 0"* ]] || fail "touch failed for a writer: $out"
        [[ $out == *"explicit 1"* ]] || fail "explicit times allowed to a non-owner: $out"
        m=$(stat -c %Y "$f")
        ((host_m - m <= 2 && m - host_m <= 1)) || fail "mtime $m, host $host_m: not the host's now"
}

# What a timensd killed in the middle of a "now" leaves (the rewritten
# times in a slot of the wait page, never let run) is run as that "now" by
# whoever serves next: an owner gets the namespace's now, a non-owner with
# write access the host's, neither an EPERM nor the stale explicit times.
# The program's own explicit times, near now or not, run as they are.
@test "a \"now\" a killed supervisor rewrote and never let run is run as that \"now\"; the program's own explicit times are not" {
        requires_root
        requires_setpriv
        # The embedded supervisor: not a timensd that may answer on the
        # default socket.
        local f=$FT_DIR/shared leftover=$ROOT/tests/bats/file-times-leftover.py how out py=/usr/bin/python3
        # Debian's, which nobody may run (not a python of root's own).
        "${NOBODY[@]}" "$py" -c pass 2>/dev/null || skip "nobody cannot run $py"
        touch "$f"
        chmod 666 "$f"
        for how in utimensat utimensat-a utimes; do
                run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime +1d -- "$py" "$leftover" "$f" "$how" 30
                [[ $output =~ ^ok\ -?0\.0[0-9]*\ (-?0\.0[0-9]*|kept)$ ]] ||
                        fail "$how as the owner: not the namespace's now: $output"
                [[ $how != utimensat-a || $output == *kept ]] || fail "touch -a moved the mtime: $output"
                out=$(TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime +1d -- "${NOBODY[@]}" "$py" "$leftover" "$f" "$how" 0.5)
                if [[ $how == utimensat-a ]]; then
                        # Not NULL: explicit to the kernel, refused on the host too.
                        [[ $out == "errno 1" ]] || fail "utimensat-a as a non-owner: $out, the host gives EPERM"
                else
                        [[ $out =~ ^ok\ -86400\.[0-9]+\ -86400\.[0-9]+$ ]] ||
                                fail "$how as a non-owner: not the host's now, as for a NULL: $out"
                fi
        done
        # The program's own: an hour old, or near now in its own memory.
        run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime +1d -- "$py" "$leftover" "$f" utimensat 3600
        [[ $output =~ ^ok\ -3600\.0[0-9]*\ -3600\.0 ]] || fail "explicit times an hour old changed: $output"
        run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime +1d -- "$py" "$leftover" "$f" plain 30
        [[ $output =~ ^ok\ -30\.0[0-9]*\ -30\.0 ]] || fail "the program's own explicit times changed: $output"
        out=$(TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" "$TIMENSCTL" run --realtime +1d -- "${NOBODY[@]}" "$py" "$leftover" "$f" plain 0.5)
        [ "$out" = "errno 1" ] || fail "a non-owner's own explicit times: $out, the host gives EPERM"
}

@test "through timensd: a non-owner's touch loops across hand-overs (SIGUSR2) never fail" {
        requires_root
        requires_setpriv
        local f=$FT_DIR/shared i k out
        touch "$f"
        chmod 666 "$f"
        start_daemon
        # Three loops, so that a hand-over often finds a touch between its
        # entry stop and its rewritten call's answer (the daemon log says
        # "Taking back" then): before that was handled, 1 touch in ~100k
        # failed with EPERM, about once in 60 hand-overs.
        for k in 0 1 2; do
                # shellcheck disable=SC2016 # expanded by the inner shell
                bg "$TIMENSCTL" run --realtime +1d -- "${NOBODY[@]}" sh -c \
                        'n=0; f=0; while [ ! -e "$2" ]; do touch "$1" || f=$((f+1)); n=$((n+1)); done; echo "touched $n failed $f"' \
                        sh "$f" "$FT_DIR/stop" >"$BATS_TEST_TMPDIR/loop$k" 2>&1
        done
        for ((i = 0; i < 20; i++)); do
                sleep 0.1
                handover_daemon
        done
        touch "$FT_DIR/stop"
        for k in 0 1 2; do
                wait_for_exit "${BG_PIDS[k]}" 60
                out=$(cat "$BATS_TEST_TMPDIR/loop$k")
                [[ $out =~ touched\ ([0-9]+)\ failed\ 0 ]] || fail "loop $k: $out"
                ((BASH_REMATCH[1] > 100)) || fail "too few touches in loop $k: $out"
        done
}
