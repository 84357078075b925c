#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/rate.sh BUILDDIR — clock rates (issue 18), from run.sh, side
# by side in one run with a timensd of its own (rates need it):
#   1. clock_gettime(CLOCK_MONOTONIC) through libc (bench-clock) on the
#      host, in a namespace without a rate, in a rate-capable one at rate 1
#      (the offsets' path: unchanged) and at rate 2 (the rated path of our
#      vDSO image), as ratios to the host (goal: rate 1 unchanged, rate 2
#      <= 1.15x host);
#   2. what a trapped relative wait costs: bench-wait's lateness of a
#      relative clock_nanosleep 1 us ahead, untrapped (no rate), trapped
#      and let through (rate 1), trapped and converted (rate 2; lateness in
#      the namespace's microseconds, twice the host's).
set -euo pipefail

builddir=$1
clock=$builddir/tests/bench/bench-clock
wait_bench=$builddir/tests/bench/bench-wait
timensctl=$builddir/timensctl
timensd=$builddir/timensd
batch=(-t "${BENCH_BATCH_MS:-100}" -b "${BENCH_BATCHES:-7}")
n=${BENCH_WAIT_N:-300}

echo
echo "== clock rates: clock_gettime(CLOCK_MONOTONIC) through libc (median ns per call)"
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

median() {
        local name=$1
        shift
        "$@" 2>/dev/null | awk -v n="$name" '$1 == "bench" && $2 == n && !done { print $3; done = 1 }'
}

ratio() {
        if [[ -z ${1:-} || -z ${2:-} ]]; then
                echo n/a
        else
                awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
        fi
}

k=vdso_clock_gettime_monotonic
host=$(median $k "$clock" "${batch[@]}")
plain=$(median $k "$timensctl" run --monotonic +1d -- "$clock" "${batch[@]}")
one=$(median $k "$timensctl" run --monotonic +1d --rate 1 -- "$clock" "${batch[@]}")
# bench-clock times its batches with CLOCK_MONOTONIC, which in a rated
# namespace runs at the rate: its ns per call there are the namespace's,
# twice the host's at x2. Divided back into host ns.
two=$(median $k "$timensctl" run --monotonic +1d --rate 2 -- "$clock" "${batch[@]}")
[[ -n $two ]] && two=$(awk -v t="$two" 'BEGIN { printf "%.1f", t / 2 }')
printf '  %-40s %10s %10s\n' "" "ns" "vs host"
printf '  %-40s %10s %10s\n' "host vDSO" "${host:-n/a}" "1.00x"
printf '  %-40s %10s %10s\n' "timens, no rate" "${plain:-n/a}" "$(ratio "$plain" "$host")"
printf '  %-40s %10s %10s\n' "timens, rate-capable at rate 1" "${one:-n/a}" "$(ratio "$one" "$host")"
printf '  %-40s %10s %10s\n' "timens, rate 2 (rated vDSO path, host ns)" "${two:-n/a}" "$(ratio "$two" "$host")"
echo "  => rate 1 / no rate: $(ratio "$one" "$plain") (goal 1.00x); rate 2 / host: $(ratio "$two" "$host") (goal <= 1.15x)"

echo
echo "== our vDSO image against the kernel's in one process, batches in alternation (bench-vdso, ratio)"
"$builddir/tests/bench/bench-vdso" 2>/dev/null | awk '
        $1 == "ratio" && $2 == "clock_gettime_monotonic" { plain = $3 }
        $1 == "ratio_subsec" && $2 == "clock_gettime_monotonic" { subsec = $3 }
        $1 == "ratio_rated" { printf "  %-40s %8.3fx\n", "rate 2, " $2, $3 }
        END { printf "  %-40s %8.3fx\n  %-40s %8.3fx\n", "no rate, clock_gettime_monotonic", plain,
                     "no rate, sub-second offsets", subsec }'
echo "  (goal: rate 2 <= 1.15x the kernel's vDSO; the no-rate rows are the offsets path, unchanged)"

echo
echo "== a relative wait in a rated namespace: clock_nanosleep relative, 1 us ahead, $n waits (lateness, us)"
wake() {
        "$@" "$wait_bench" rel-sleep -n "$n" -d 1 2>/dev/null | awk '$1 == "wake" { print $3 "/" $4 }'
}
printf '  %-44s %14s\n' "" "p50/p99"
printf '  %-44s %14s\n' "no rate (untrapped)" "$(wake "$timensctl" run --)"
printf '  %-44s %14s\n' "rate 1, rate-capable (trapped, let through)" "$(wake "$timensctl" run --rate 1 --)"
printf '  %-44s %14s\n' "rate 2 (trapped and converted)" "$(wake "$timensctl" run --rate 2 --)"
echo "  (rate 2: lateness in the namespace's microseconds, twice the host's; a converted wait is a"
echo "   notification, a ptrace hold of the thread and the restarted call's notification)"
