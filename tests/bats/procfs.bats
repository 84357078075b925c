#!/usr/bin/env bats
# /proc/uptime, /proc/stat's btime and sysinfo()'s uptime as a namespace
# sees them (lib/supervisor/supervisor-procfs.c), compared with the kernel's own time
# namespace (`unshare -T --boottime N`) on this machine: embedded and
# through timensd, with positive and negative boottime offsets, after a
# live `timensctl set`, in nested namespaces (RFC style, under unshare -U -r),
# and what it must not touch (the host's /proc, other files).

# $DAEMON_DIR comes from daemon-helpers.bash.
# shellcheck disable=SC2153

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        build_helpers sysinfo-probe clockprobe
}

setup() {
        requires_root
}

teardown() {
        stop_bg
        daemon_teardown
}

# What a reader prints: "UPTIME IDLE BTIME SYSINFO", one line (expanded
# by the reader's shell, not ours).
# shellcheck disable=SC2016
READ='read -r up idle </proc/uptime; bt=$(sed -n "s/^btime //p" /proc/stat); si=$('"$BUILDDIR"'/tests/helpers/sysinfo-probe); echo "$up $idle $bt ${si#uptime }"'

# Hundredths of a second, from "12345.67".
centi() {
        echo $((10#${1%.*} * 100 + 10#${1#*.}))
}

# compare_kernel OURS KERNEL: our reading against the kernel's, taken one
# after the other: uptime within 0.5 s, btime and sysinfo within 1 s (a
# second boundary may fall between the two).
compare_kernel() {
        local ours kern d
        read -r -a ours <<<"$1"
        read -r -a kern <<<"$2"
        [ "${#ours[@]}" = 4 ] || fail "ours: '$1'"
        [ "${#kern[@]}" = 4 ] || fail "kernel: '$2'"
        d=$(($(centi "${ours[0]}") - $(centi "${kern[0]}")))
        ((d >= -50 && d <= 50)) || fail "/proc/uptime: ours ${ours[0]}, kernel ${kern[0]}"
        d=$((ours[2] - kern[2]))
        ((d >= -1 && d <= 1)) || fail "btime: ours ${ours[2]}, kernel ${kern[2]}"
        d=$((ours[3] - kern[3]))
        ((d >= -1 && d <= 1)) || fail "sysinfo uptime: ours ${ours[3]}, kernel ${kern[3]}"
}

# Half the host's uptime: a negative offset that keeps BOOTTIME >= 0.
neg_offset() {
        local half=$(($(host_uptime_sec) / 2))
        ((half >= 2)) || skip "the host has been up for too short a time for a negative offset"
        echo "-$half"
}

check_offset() {
        local off=$1 ours kern
        requires_kernel_timens
        ours=$(tns run --boottime "$off" -- sh -c "$READ")
        kern=$(unshare -T --boottime "$off" sh -c "$READ")
        compare_kernel "$ours" "$kern"
}

@test "embedded: /proc/uptime, btime, sysinfo match unshare -T with --boottime +1000" {
        check_offset 1000
}

@test "embedded: /proc/uptime, btime, sysinfo match unshare -T with a negative boottime offset" {
        check_offset "$(neg_offset)"
}

@test "embedded: with no boottime offset, the host's values" {
        local ours host
        ours=$(tns run --monotonic 1d -- sh -c "$READ")
        host=$(sh -c "$READ")
        compare_kernel "$ours" "$host"
}

@test "the idle field is the host's, unshifted (as the kernel leaves it)" {
        local ours host
        read -r -d '' -a ours < <(tns run --boottime 100000 -- sh -c "$READ") || true
        read -r -d '' -a host < <(sh -c "$READ") || true
        local d=$(($(centi "${ours[1]}") - $(centi "${host[1]}")))
        ((d >= -200 && d <= 200)) || fail "idle: ours ${ours[1]}, host ${host[1]}"
}

@test "btime follows our realtime offset: btime + uptime is the namespace's date" {
        local ours host now
        read -r -d '' -a ours < <(tns run --boottime 1000 --realtime +1d -- sh -c "$READ; date +%s") || true
        read -r -d '' -a host < <(sh -c "$READ") || true
        # realtime +1 day, boot 1000 s earlier.
        local d=$((ours[2] - (host[2] + 86400 - 1000)))
        ((d >= -1 && d <= 1)) || fail "btime: ours ${ours[2]}, host ${host[2]}"
        now=${ours[4]}
        d=$((ours[2] + 10#${ours[0]%.*} - now))
        ((d >= -2 && d <= 1)) || fail "btime ${ours[2]} + uptime ${ours[0]} != date $now"
}

@test "a reader that keeps the fd and reads again from 0 sees the time move (procps does)" {
        run -0 tns run --boottime 1000 -- python3 -c '
import os, time
fd = os.open("/proc/uptime", os.O_RDONLY)
a = float(os.pread(fd, 64, 0).split()[0])
time.sleep(0.3)
b = float(os.pread(fd, 64, 0).split()[0])
print(a, b)
assert 0.25 <= b - a <= 1.0, (a, b)
'
}

@test "sendfile and splice (busybox cat) read the same text as read(), and stat's size is its length" {
        command -v busybox >/dev/null || skip "busybox is not installed (busybox-static)"
        # shellcheck disable=SC2016 # expanded by that sh
        run -0 tns run --boottime 1000 -- sh -c '
                for f in /proc/uptime /proc/stat; do
                        a=$(busybox cat "$f" | wc -c)
                        b=$(cat "$f" | wc -c)
                        s=$(stat -c %s "$f")
                        echo "$f $a $b $s"
                done'
        local f a b s
        while read -r f a b s; do
                ((a > 10 && b > 10)) || fail "$f: busybox cat read $a bytes, cat $b"
                ((a - b <= 2 && b - a <= 2)) || fail "$f: busybox cat read $a bytes, cat $b"
                ((s > 0)) || fail "$f: stat says size $s"
        done <<<"$output"
        # The same by name: sendfile(2) and splice(2) against read(2).
        run -0 tns run --boottime 1000 -- python3 -c '
import os
for f in ("/proc/uptime", "/proc/stat"):
    fd = os.open(f, os.O_RDONLY)
    r, w = os.pipe()
    n = os.sendfile(w, fd, None, 1 << 20)
    sent = os.read(r, 1 << 20)
    os.close(fd)
    fd = os.open(f, os.O_RDONLY)
    m = os.splice(fd, w, 1 << 16)
    spliced = os.read(r, 1 << 20)
    os.close(fd)
    fd = os.open(f, os.O_RDONLY)
    text = os.read(fd, 1 << 20)
    assert n > 10 and m > 10, (f, n, m)
    assert sent.split()[0] == text.split()[0] == spliced.split()[0] or f == "/proc/uptime", (f, sent[:40], text[:40])
    assert abs(len(sent) - len(text)) <= 2 and abs(len(spliced) - len(text)) <= 2, (f, len(sent), len(spliced), len(text))
    print(f, n, m, len(text))
up = float(open("/proc/uptime").read().split()[0])
r, w = os.pipe(); fd = os.open("/proc/uptime", os.O_RDONLY); os.sendfile(w, fd, None, 64)
sent = float(os.read(r, 64).split()[0])
assert abs(sent - up) < 1, (sent, up)
'
        [ "${#lines[@]}" -eq 2 ] || fail "$output"
}

@test "short reads and reads at an offset give the same text as one read" {
        run -0 tns run --boottime 1000 -- python3 -c '
import os
fd = os.open("/proc/stat", os.O_RDONLY)
whole = os.pread(fd, 1 << 20, 0)
parts = b"".join(os.pread(fd, 7, i) for i in range(0, len(whole), 7))
first = lambda t: [l for l in t.split(b"\n") if l.startswith(b"btime ")]
assert first(whole) == first(parts) and len(whole) > 100, (first(whole), first(parts))
assert os.pread(fd, 10, len(whole) + 100) == b""
'
}

@test "sysinfo with a bad pointer fails with EFAULT, as on the host" {
        run -0 tns run --boottime 1000 -- "$HELPERS/sysinfo-probe" --fault
        [ "$output" = "fault EFAULT" ] || fail "$output"
}

@test "the host's /proc is untouched: no mount leaks out, host values unshifted" {
        local before after
        before=$(grep -c ' - fuse ' /proc/self/mountinfo || true)
        run -0 tns run --boottime 100000 -- sh -c 'grep " - fuse " /proc/self/mountinfo; sleep 0.2 & cat /proc/uptime /proc/1/mountinfo >/dev/null; wait'
        [ "$(grep -c ' /proc/uptime ' <<<"$output")" = 1 ] || fail "no mount over /proc/uptime inside: $output"
        [ "$(grep -c ' /proc/stat ' <<<"$output")" = 1 ] || fail "no mount over /proc/stat inside: $output"
        after=$(grep -c ' - fuse ' /proc/self/mountinfo || true)
        [ "$before" = "$after" ] || fail "a FUSE mount appeared on the host"
        after=$(cut -d. -f1 /proc/uptime)
        ((after < 100000 + $(host_uptime_sec) - 10)) || fail "the host's uptime is shifted: $after"
}

@test "a program that never opens these files sees the host's other /proc files and mounts" {
        local ours
        ours=$(tns run --boottime 1000 -- cat /proc/loadavg /proc/version)
        [[ "$ours" == *"$(cat /proc/version)"* ]] || fail "$ours"
}

@test "unprivileged (nobody): no mount namespace, /proc is the host's, sysinfo is still shifted" {
        requires_setpriv
        local out host
        out=$(tns run --boottime 100000 -- "${NOBODY[@]}" sh -c "$READ") || fail "run failed"
        # The command runs as nobody, but timensctl ran as root: covered.
        read -r -a out <<<"$out"
        ((${out[0]%.*} >= 100000)) || fail "not covered: ${out[*]}"
        read -r -d '' -a out < <("${NOBODY[@]}" "$TIMENSCTL" run --boottime 100000 -- sh -c "$READ") || true
        read -r -d '' -a host < <(sh -c "$READ") || true
        ((${out[0]%.*} < 100000)) || fail "nobody cannot have a mount namespace: ${out[*]}"
        ((out[3] >= 100000)) || fail "sysinfo not shifted: ${out[*]}"
}

@test "timensd: the same values as unshare -T, and a live set moves them" {
        requires_timensd
        requires_kernel_timens
        local fifo out kern line
        start_daemon
        fifo="$DAEMON_DIR/go"
        mkfifo "$fifo"
        out="$DAEMON_DIR/out"
        bg "$TIMENSCTL" run --name pfs --boottime 1000 -- sh -c "$READ; read -r _ <'$fifo'; $READ" >"$out"
        wait_for_file "$out"
        kern=$(unshare -T --boottime 1000 sh -c "$READ")
        compare_kernel "$(head -n1 "$out")" "$kern"
        grep -q "pfs" <<<"$("$TIMENSCTL" list)" || fail "timensd does not serve it"
        "$TIMENSCTL" set pfs --boottime 5000
        echo go >"$fifo"
        for _ in $(seq 100); do
                [ "$(wc -l <"$out")" = 2 ] && break
                sleep 0.05
        done
        line=$(sed -n 2p "$out")
        kern=$(unshare -T --boottime 5000 sh -c "$READ")
        compare_kernel "$line" "$kern"
}

@test "nested (RFC): a child namespace's boottime settime shows in its /proc/uptime only" {
        requires_user_ns
        run -0 tns run --boottime 1000 -- unshare -U -r python3 -c '
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])
r, w = os.pipe()
pid = os.fork()
if pid == 0:  # stays in the outer namespace
    os.read(r, 1)
    print("outer", uptime(), flush=True)
    os._exit(0)
assert libc.unshare(0x80) == 0, ctypes.get_errno()
time.clock_settime(time.CLOCK_BOOTTIME, 50000.0)
print("inner", uptime(), flush=True)
os.write(w, b"x")
os.waitpid(pid, 0)
'
        local inner outer
        inner=$(awk '$1 == "inner" { print int($2) }' <<<"$output")
        outer=$(awk '$1 == "outer" { print int($2) }' <<<"$output")
        ((inner >= 50000 && inner <= 50002)) || fail "inner: $inner"
        # The outer namespace is the host's plus 1000 s (whatever the
        # host's uptime: not below 50000 on a machine up for a day).
        local host
        host=$(host_uptime_sec)
        ((outer >= host + 1000 - 2 && outer <= host + 1000)) || fail "outer: $outer, host $host"
}

# timensd's FUSE fds of a cover, open now.
fuse_fds() {
        find "/proc/$DAEMON_PID/fd" -lname /dev/fuse 2>/dev/null | wc -l
}

# The covers are served on a thread of their own (security-fuse.bats says
# why). Its connections go with their namespace: closed at once, not at
# the next request of another (helper-47: left open, and a reader that
# had entered that mount namespace waited on them for good).
@test "timensd: a namespace's cover connections are closed when it ends" {
        requires_timensd
        [ -c /dev/fuse ] || skip "no /dev/fuse: no covers"
        local before i
        start_daemon
        before=$(fuse_fds)
        run -0 "$TIMENSCTL" run --boottime 1000 -- cat /proc/uptime
        for ((i = 0; i < 100; i++)); do
                (($(fuse_fds) == before)) && break
                sleep 0.05
        done
        (($(fuse_fds) == before)) || fail "$(fuse_fds) /dev/fuse fds open, $before before"
}

# A hand-over (SIGUSR2) stops the FUSE thread first: a request it had read
# and not answered died with it, and its reader waited for good on the
# connection the successor holds (helper-47: 4 readers of 4, in 10).
@test "timensd: hand-overs while /proc/uptime and /proc/stat are read in a loop leave no reader waiting" {
        requires_timensd
        [ -c /dev/fuse ] || skip "no /dev/fuse: no covers"
        local out i
        start_daemon
        out="$DAEMON_DIR/readers"
        # shellcheck disable=SC2016 # the reader's shell expands them
        bg "$TIMENSCTL" run --boottime 1000 -- sh -c '
                for r in 1 2 3 4; do
                        (n=0; while [ $n -lt 400 ]; do cat /proc/uptime /proc/stat >/dev/null; n=$((n + 1)); done; echo ended) &
                done
                wait' >"$out"
        for ((i = 0; i < 5; i++)); do
                sleep 0.3
                handover_daemon
        done
        for ((i = 0; i < 600; i++)); do
                [ "$(grep -c ended "$out")" = 4 ] && break
                sleep 0.1
        done
        [ "$(grep -c ended "$out")" = 4 ] || fail "$(grep -c ended "$out") of 4 readers ended"
}
