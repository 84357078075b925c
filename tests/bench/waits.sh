#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/waits.sh BUILDDIR — absolute waits (lib/supervisor/supervisor-wait.c),
# from run.sh: how late an absolute wait wakes on the host, in a kernel
# time namespace and under timensctl run (p50 and p99, bench-wait), and
# the proof that relative sleeps and futex waits without a deadline are not
# intercepted: a timensd of its own counts the notifications they cause
# (none). Environment: BENCH_WAIT_N (default 500 waits per row).
set -euo pipefail

readonly OFFSET=864000 # +10 days, monotonic and boottime

builddir=$1
bench=$builddir/tests/bench/bench-wait
timensctl=$builddir/timensctl
timensd=$builddir/timensd
n=${BENCH_WAIT_N:-500}

echo
echo "absolute waits (bench-wait, $n waits per row, CLOCK_MONOTONIC): lateness of the wake-up, us"
for f in "$bench" "$timensctl"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done

declare -A p50=() p99=()
# measure KEY ARGS... -- CMD: one bench-wait line under KEY/KIND.
measure() {
        local key=$1 kind=$2 delay=$3 _w k a b _rest
        shift 3
        read -r _w k a b _rest < <("$@" "$bench" "$kind" -n "$n" -d "$delay" || echo "wake $kind n/a n/a")
        p50[$key/$kind/$delay]=$a
        p99[$key/$kind/$delay]=$b
}

kns=(unshare -T --monotonic "$OFFSET" --boottime "$OFFSET")
have_kns=0
[[ $EUID -eq 0 ]] && unshare -T --monotonic 1 true 2>/dev/null && have_kns=1
for kind in abs-sleep cond rel-sleep; do
        for delay in 1000 1; do
                measure host "$kind" "$delay" env
                [[ $have_kns == 1 ]] && measure kns "$kind" "$delay" "${kns[@]}"
                measure tns "$kind" "$delay" "$timensctl" run --monotonic +10d --boottime +10d --
        done
done

diff_us() {
        awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a") print "n/a"; else printf "%+.1f", a - b }'
}

printf '  %-44s %14s %14s %14s %16s\n' "" "host p50/p99" "unshare -T" "timensctl" "added p50/p99"
for kind in abs-sleep cond rel-sleep; do
        for delay in 1000 1; do
                k=$kind/$delay
                case $kind/$delay in
                abs-sleep/1000) label="clock_nanosleep ABSTIME, 1 ms ahead" ;;
                abs-sleep/1) label="clock_nanosleep ABSTIME, 1 us ahead (cost)" ;;
                cond/1000) label="pthread_cond_timedwait (MONOTONIC), 1 ms" ;;
                cond/1) label="pthread_cond_timedwait, 1 us ahead (cost)" ;;
                rel-sleep/1000) label="clock_nanosleep relative 1 ms (untrapped)" ;;
                *) label="clock_nanosleep relative 1 us (untrapped)" ;;
                esac
                printf '  %-44s %14s %14s %14s %16s\n' "$label" \
                        "${p50[host/$k]}/${p99[host/$k]}" "${p50[kns/$k]:-n/a}/${p99[kns/$k]:-n/a}" \
                        "${p50[tns/$k]}/${p99[tns/$k]}" \
                        "$(diff_us "${p50[tns/$k]}" "${p50[host/$k]}")/$(diff_us "${p99[tns/$k]}" "${p99[host/$k]}")"
        done
done
echo "  (1 ms ahead: the conversion happens before the deadline, the wake-up pays one ptrace stop;"
echo "   1 us ahead: the whole round trip of a converted call is late by its own cost)"

echo
echo "not intercepted: notifications timensd received for $n waits of each kind"
if [[ $EUID -ne 0 || ! -x $timensd ]]; then
        echo "  not measured: needs root and $timensd"
        exit 0
fi
dir=$(mktemp -d)
dpid=
cleanup() {
        [[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
        rm -rf "$dir"
}
trap cleanup EXIT
"$timensd" --foreground --log-target stderr --log-level warning --socket "$dir/sock" 2>"$dir/log" &
dpid=$!
export TIMENS_SOCKET=$dir/sock
for ((i = 0; i < 200; i++)); do
        "$timensctl" list >/dev/null 2>&1 && break
        sleep 0.05
done
# stat NAME: the calls counter of one syscall, or the total.
stat() {
        "$timensctl" stats | awk -v n="$1" '
                n == "total" && /^Notifications:/ { print $2; exit }
                n == "converted" && /Waits:/ { print $2; exit }
                $1 == n && NF >= 2 && $2 ~ /^[0-9]+$/ { print $2; exit }'
}
printf '  %-44s %14s %14s %14s %14s\n' "" "notifications" "clock_nanosleep" "futex" "converted"
for kind in rel-sleep futex-wait abs-sleep cond; do
        t0=$(stat total) c0=$(stat clock_nanosleep) f0=$(stat futex) w0=$(stat converted)
        "$timensctl" run --monotonic +10d -- "$bench" "$kind" -n "$n" -d 100 >/dev/null
        t1=$(stat total) c1=$(stat clock_nanosleep) f1=$(stat futex) w1=$(stat converted)
        printf '  %-44s %14s %14s %14s %14s\n' "$kind x $n" "$((t1 - t0))" "$((c1 - c0))" "$((f1 - f0))" "$((w1 - w0))"
done
echo "  (each run also execs bench-wait: its execve is the one notification of the relative rows;"
echo "   a converted wait is sent twice: the call, then its restart pointing at our copy)"
