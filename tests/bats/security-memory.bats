#!/usr/bin/env bats
# Issue 14, items 1 and 4: what timensd maps into members, attacked by a
# member (tests/helpers/page-attack.c). No description of a namespace's
# file that a member can get is writable, by any route, root included;
# timensd does not read back what members map; and a member cannot make
# timensd take another namespace for its own by forging a mapping.
# docs/SECURITY.md says why each holds.

# $DAEMON_DIR, $DAEMON_PID and $SOCK come from daemon-helpers.bash.
# shellcheck disable=SC2154,SC2153,SC2030,SC2031

load helpers
load daemon-helpers

TEN_YEARS=$((3650 * 86400))

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers page-attack clockprobe wait-hog
}

setup() {
        requires_root
        requires_helper page-attack
}

teardown() {
        daemon_teardown
        [ -z "${FORGE_DIR:-}" ] || rmdir "$FORGE_DIR"
}

# Other users run page-attack from the checkout: one under a directory
# they cannot enter (/root) cannot be tested that way.
requires_nobody_reaches_helpers() {
        setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$HELPERS/page-attack" ||
                skip "user nobody cannot reach $HELPERS (the checkout's directory is closed to other users)"
}

# The `sleep` that the first bg command runs (in its session), once it
# runs: its pid, or a failure after 10 s.
bg_sleep_member() {
        local i
        for ((i = 0; i < 100; i++)); do
                pgrep -n -x sleep -s "${BG_PIDS[0]}" && return 0
                sleep 0.1
        done
        return 1
}

# The fields page-attack prints: "seen N writable N" and the like.
field() {
        awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$2"
}

@test "a task sharing the exec'ing task's fd table gets only unwritable descriptions (root and another user)" {
        local who
        requires_nobody_reaches_helpers
        for who in root nobody; do
                local as=()
                [ "$who" = root ] || as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
                run -0 --separate-stderr tns run --realtime +3650d -- "${as[@]}" "$HELPERS/page-attack" sibling /bin/true
                # The attack saw the fd the exec was handed (it ran), and
                # could not write through it by any route.
                (($(field seen "$output") >= 1)) || fail "$who: the sibling saw no fd of ours: $output $stderr"
                [ "$(field writable "$output")" = 0 ] || fail "$who: $output: $stderr"
        done
}

@test "a member cannot write the mappings of its namespace: mprotect, map_files, /proc/self/mem" {
        run -0 --separate-stderr tns run --realtime +3650d -- "$HELPERS/page-attack" self
        (($(field mappings "$output") >= 1)) || fail "no mapping of ours: $output"
        [ "$(field writable "$output")" = 0 ] || fail "$output: $stderr"
}

@test "after the attacks, a root program in the same namespace runs our image with the namespace's clock" {
        local host
        run -0 tns run --realtime +3650d -- sh -c "
                '$HELPERS/page-attack' sibling /bin/true >/dev/null 2>&1
                '$HELPERS/page-attack' self >/dev/null 2>&1
                '$HELPERS/clockprobe' --sec realtime"
        host=$(($(host_ns realtime) / NSEC_PER_SEC))
        ((output >= host + TEN_YEARS - 2 && output <= host + TEN_YEARS + 1)) || fail "realtime $output, host $host"
}

@test "the files are on a read-only mount: /proc/PID/fd of a member is not writable by root either" {
        start_daemon
        bg "$TIMENSCTL" run --name ro --realtime +1d -- sleep 300
        local pid
        pid=$(bg_sleep_member) || fail "no member"
        # Root reopens the member's mapping through map_files (as CRIU
        # would): read-only mount.
        local range
        range=$(awk '/timens-vdso/ && $3 == "00001000" { print $1; exit }' "/proc/$pid/maps")
        [ -n "$range" ] || fail "no offsets page mapped by $pid"
        run python3 -c "
import errno, os, sys
try:
    os.open('/proc/$pid/map_files/$range', os.O_RDWR)
    print('writable')
except OSError as e:
    print(errno.errorcode[e.errno])"
        [ "$output" = EROFS ] || fail "map_files O_RDWR by root: $output"
        # And timensd itself still writes it: a live change reaches it.
        run -0 tns set ro --realtime +2d
        run -0 tns run --join ro -- "$HELPERS/clockprobe" --sec realtime
}

@test "a forged mapping (same inode number, own tmpfs) names no other namespace: clock_settime moves only the attacker's" {
        requires_user_ns
        requires_nobody_reaches_helpers
        start_daemon
        bg "$TIMENSCTL" run --name victim --realtime +1d -- sleep 300
        local pid ino host_before host_after
        pid=$(bg_sleep_member) || fail "no victim process"
        ino=$(awk '/timens-vdso/ && $3 == "00001000" { print $5; exit }' "/proc/$pid/maps")
        [ -n "$ino" ] || fail "the victim maps no offsets page"
        # Where the attacker mounts its tmpfs (in a mount namespace of its
        # own): a directory it can reach.
        FORGE_DIR=$(mktemp -d /tmp/timens-forge.XXXXXX)
        chmod 755 "$FORGE_DIR"
        host_before=$(date +%s)
        # The attacker: a member of a namespace of its own, unprivileged in
        # the host's user namespace (unshare -U -r gives it the mount and
        # the settime rights in a user namespace of its own).
        run -0 --separate-stderr tns run --realtime +2d -- setpriv --reuid=65534 --regid=65534 --clear-groups \
                unshare -U -r "$HELPERS/page-attack" forge "$FORGE_DIR" "$ino"
        [[ $output == "forged $ino settime "* ]] || fail "the attack did not run: $output $stderr"
        host_after=$(date +%s)
        ((host_after - host_before < 60)) || fail "the host clock moved: $host_before -> $host_after"
        local rt
        rt=$(tns --json show victim | json_get 'j["namespace"]["clocks"]["realtime"]["offset_ns"]')
        [ "$rt" = 86400000000000 ] || fail "the victim's realtime offset is now $rt"
}

@test "a restarted timensd (SIGUSR2) keeps the files on the read-only mount and writes them still" {
        start_daemon
        tns create kept --realtime +1d
        handover_daemon
        ! grep -q "making another" "$DAEMON_DIR/log" || fail "the store was not taken over: $(cat "$DAEMON_DIR/log")"
        run -0 --separate-stderr tns run --join kept -- "$HELPERS/page-attack" self
        [ "$(field writable "$output")" = 0 ] || fail "$output: $stderr"
        run -0 --separate-stderr tns run --join kept -- "$HELPERS/page-attack" sibling /bin/true
        [ "$(field writable "$output")" = 0 ] || fail "$output: $stderr"
        # The successor writes the adopted page: a live change is read.
        run -0 tns set kept --realtime +3650d
        local host
        run -0 tns run --join kept -- "$HELPERS/clockprobe" --sec realtime
        host=$(($(host_ns realtime) / NSEC_PER_SEC))
        ((output >= host + TEN_YEARS - 2 && output <= host + TEN_YEARS + 1)) || fail "realtime $output, host $host"
}

@test "one namespace's members cannot take the converted waits of every other namespace" {
        requires_helper wait-hog
        start_daemon
        # More sleepers than a namespace tree may hold (1024): the rest of
        # its own waits run unconverted, nobody else's.
        bg "$TIMENSCTL" run --realtime +1h -- "$HELPERS/wait-hog" hog 1100 120
        local i n=0
        for ((i = 0; i < 120; i++)); do
                n=$(grep -l "^TracerPid:[[:space:]]*$DAEMON_PID$" /proc/[0-9]*/task/*/status 2>/dev/null | wc -l)
                ((n >= 1024)) && break
                sleep 0.5
        done
        ((n >= 1024)) || fail "the hog holds $n waits"
        sleep 1
        n=$(grep -l "^TracerPid:[[:space:]]*$DAEMON_PID$" /proc/[0-9]*/task/*/status 2>/dev/null | wc -l)
        ((n <= 1024 + 8)) || fail "one namespace holds $n waits"
        # Another namespace, a day behind: a 1 s absolute sleep takes 1 s
        # (unconverted, it would end at once).
        local ms
        run -0 tns run --realtime -1d -- "$HELPERS/wait-hog" once
        ms=${output#* }
        ((ms >= 900 && ms <= 5000)) || fail "a converted 1 s sleep took $ms ms ($output)"
}

# A member that maps 30,000 areas (30,000 lines of /proc/PID/maps) and
# then calls, in loops, what makes timensd look at its mappings: the
# first-call check (arch_prctl from forked children) and, its tree having
# moved (unshare -T), a caller's namespace (clock_gettime from a thread).
# Each look was a whole read of its maps on the loop that serves every
# namespace: another namespace's calls took 44 ms each. Each process's
# mappings are now read once: they take what they take without it.
# The same by new processes: children forked in a loop, each calling once
# (each is read once, and only up to a bound: TNS_IMAGE_MAX_MAPS).
@test "a member with thousands of mappings calling in loops does not slow other namespaces' calls" {
        requires_user_ns
        requires_nobody_reaches_helpers
        build_helpers maps-flood
        start_daemon
        local mean mode
        for mode in loop churn; do
                bg "$TIMENSCTL" run --name "flood-$mode" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
                        unshare -U -r -T "$HELPERS/maps-flood" 30000 2 8 ${mode/loop/}
                sleep 2
                run -0 tns run --name "calm-$mode" -- "$HELPERS/maps-flood" victim 3
                mean=$(awk '{ print $3 }' <<<"$output")
                [[ "$mean" =~ ^[0-9]+$ ]] || fail "no figure: $output"
                echo "another namespace's clock_gettime under the flood ($mode): $output" >&3
                ((mean < 5000)) || fail "another namespace's calls took $mean us each under the flood ($mode: $output)"
                stop_bg
        done
}

# settime_as_nobody [timensctl run options...]: a member run as nobody in a
# namespace root made, with every capability in a user namespace of its
# own, sets CLOCK_REALTIME; prints date's status, then the namespace's
# realtime as root's member reads it.
settime_as_nobody() {
        "$TIMENSCTL" run "$@" -- sh -c '
                setpriv --reuid=65534 --regid=65534 --clear-groups \
                        unshare -U -r date -s @2000000000 >/dev/null 2>&1
                echo "$?"
                date +%s'
}

@test "a member's own user namespace gives it no right to the clocks of a namespace it does not own" {
        requires_user_ns
        local host_before host_after now
        host_before=$(date +%s)
        now=$(date +%s)
        # Embedded supervisor (root's run) and timensd (root's namespace,
        # joined): EPERM, as the kernel gives for a time namespace its
        # owner made, and the clock stays.
        run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" bash -c "$(declare -f settime_as_nobody);
                TIMENSCTL=$TIMENSCTL settime_as_nobody --realtime +1h"
        [ "${lines[0]}" = 1 ] || fail "nobody's settime in root's embedded namespace: $output"
        ((lines[1] - now > 3500 && lines[1] - now < 3700)) || fail "the clock moved: $output"
        start_daemon
        run -0 tns create svc --realtime +1h
        run -0 settime_as_nobody --join svc
        [ "${lines[0]}" = 1 ] || fail "nobody's settime in root's namespace: $output"
        ((lines[1] - now > 3500 && lines[1] - now < 3700)) || fail "the clock moved: $output"
        run -0 tns run --join svc -- date +%s
        ((output - now > 3500 && output - now < 3700)) || fail "root's member reads $output"
        # Root's own process in a user namespace root made, and nobody in
        # a namespace of its own: theirs to set.
        run -0 tns run --join svc -- unshare -U -r date -s @2000000000
        run -0 tns run --join svc -- date +%s
        ((output >= 2000000000 && output < 2000000100)) || fail "root's settime did not take: $output"
        if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TIMENSCTL"; then
                run -0 env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock" setpriv --reuid=65534 --regid=65534 \
                        --clear-groups "$TIMENSCTL" run -- sh -c 'unshare -U -r date -s @2000000000 >/dev/null && date +%s'
                ((output >= 2000000000 && output < 2000000100)) || fail "nobody's own settime did not take: $output"
        fi
        host_after=$(date +%s)
        ((host_after - host_before < 60)) || fail "the host clock moved: $host_before -> $host_after"
}

@test "a member's loop of unshares fills neither its tree nor the daemon, and is warned about once" {
        requires_user_ns
        start_daemon
        run -0 tns create box
        local out=$BATS_TEST_TMPDIR/unshares n
        # 400 unshare(CLONE_NEWTIME), each giving the process a namespace
        # made inside its last one, then it stays. Its output goes to a file
        # root's shell opens (nobody may not create one here).
        local script='
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
print(sum(libc.unshare(0x80) == 0 for _ in range(400)), flush=True)
time.sleep(60)'
        # shellcheck disable=SC2016 # expanded by that sh
        bg "$TIMENSCTL" run --join box -- sh -c 'exec setpriv --reuid=65534 --regid=65534 --clear-groups \
                unshare -U -r /usr/bin/python3 -c "$1" >"$0"' "$out" "$script"
        for ((n = 0; n < 600; n++)); do
                [ -s "$out" ] && break
                sleep 0.1
        done
        [ "$(cat "$out")" = 400 ] || fail "the kernel's unshares: $(cat "$out")"
        n=$(tns --json list | json_get 'len(j["namespaces"])')
        ((n >= 200 && n <= 257)) || fail "$n namespaces after 400 unshares in one tree"
        run -0 tns create other
        [ "$(grep -c 'Failed to give the caller a namespace of its own' "$DAEMON_DIR/log")" -ge 1 ]
        # Once at warning level (<4>), the rest at debug level (<7>).
        [ "$(grep -c '^<4>.*Failed to give the caller a namespace of its own' "$DAEMON_DIR/log")" -eq 1 ] ||
                fail "warned more than once: $(grep -c '^<4>.*namespace of its own' "$DAEMON_DIR/log")"
}
