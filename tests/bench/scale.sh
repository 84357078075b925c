#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/scale.sh BUILDDIR — timensd at scale, from run.sh:
#   1. SCALE_NS namespaces x SCALE_PROCS processes, every process making a
#      trapped clock_gettime SCALE_HZ times a second for SCALE_SECONDS:
#      p50/p99/p99.9 of a call, timensd's CPU, RSS per namespace and fds;
#   2. one namespace with SCALE_BIG processes, the same load;
#   3. SCALE_CYCLES cycles of create + destroy of 1000 namespaces: RSS and
#      fds after each (growth).
# Each load runs twice: first served by bench-scale's bare supervisor (a
# thread per listener in RECV replying CONTINUE, no timensd), the floor of
# this machine for that load (its idle wake-ups, its scheduler), then by
# timensd; timensd's percentiles are printed as ratios to the floor's.
# The issue's load (10,000 processes at 1 kHz) is 10 million trapped calls
# a second, past what one core serves; the default offered load is printed
# with what was served. Goal: p99 <= 50 us, RSS <= 64 KiB per namespace, no
# growth over the cycles. Runs a timensd of its own on a temporary socket;
# needs root.
set -euo pipefail

ns_count=${SCALE_NS:-1000}
procs=${SCALE_PROCS:-10}
hz=${SCALE_HZ:-5}
seconds=${SCALE_SECONDS:-10}
big=${SCALE_BIG:-1000}
cycles=${SCALE_CYCLES:-10}
readonly GOAL_P99_US=50 GOAL_KIB=64

builddir=$1
timensd=$builddir/timensd
timensctl=$builddir/timensctl
worker=$(realpath "$builddir/tests/bench/bench-scale" 2>/dev/null || echo "$builddir/tests/bench/bench-scale")
api=$builddir/tests/bench/bench-api

echo
echo "timensd at scale (bench-scale: trapped clock_gettime from many namespaces and processes)"
if [[ $EUID -ne 0 ]]; then
        echo "  not measured: timensd needs root"
        exit 0
fi
for f in "$timensd" "$timensctl" "$worker" "$api"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done
# Every process of the run at once, and some room for the rest of the host.
need=$((ns_count * (procs + 1) + big + 2000))
if (($(cat /proc/sys/kernel/pid_max) < need)); then
        echo "  not measured: needs $need pids, kernel.pid_max is $(cat /proc/sys/kernel/pid_max)"
        exit 0
fi

dir=$(mktemp -d)
dpid=
cleanup() {
        pkill -KILL -f "^$worker worker $dir/" 2>/dev/null || true
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

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() {
        awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# load LABEL NAMESPACES PROCS [bare]: starts the workers (under timensd,
# or with "bare" under bench-scale's bare supervisor), lets them run,
# prints the row. The floor's percentiles stay in floor[] for the row of
# timensd that follows.
declare -A floor=()
load() {
        local label=$1 n=$2 p=$3 mode=${4:-timensd} run=$dir/$1-${4:-timensd} i t0 t1 rss0 rss fds started go
        local want=$((n * p)) pattern="^$worker worker $run "
        mkdir -p "$run"
        # The workers wait in open() for a writer (bench-scale.c).
        mkfifo "$run/go.fifo" "$run/stop.fifo"
        rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$dpid/status")
        if [[ $mode == bare ]]; then
                # The top process, a supervisor per namespace, the workers.
                want=$((1 + n + n * p)) pattern="^$worker bare $run "
                "$worker" bare "$run" "$n" "$p" "$hz" "$seconds" >/dev/null 2>>"$dir/workers.log" &
        else
                for ((i = 0; i < n; i++)); do
                        "$timensctl" run --name "$label-$i" --realtime +1d -- "$worker" worker "$run" "$p" "$hz" "$seconds" \
                                >/dev/null 2>>"$dir/workers.log" &
                done
        fi
        # Every process exists (and asked its first clock call) before the
        # load starts: the start of 1000 namespaces is not the load.
        for ((i = 0; i < 1200; i++)); do
                started=$(pgrep -c -f "$pattern" || true)
                ((started >= want)) && break
                sleep 0.1
        done
        # And timensd is done with their start (execs, /proc covers, the
        # record's saves): its CPU flat for half a second, at most 60 s.
        # Its start-up work is not the load; the cycles below measure it.
        if [[ $mode != bare ]]; then
                for ((i = 0; i < 120; i++)); do
                        t0=$(cpu_ticks "$dpid")
                        sleep 0.5
                        t1=$(cpu_ticks "$dpid")
                        ((t1 - t0 <= 1)) && break
                done
                ((i < 120)) || echo "  (timensd still busy after 60 s: the row counts start-up work too)"
        fi
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$dpid/status")
        fds=$(find "/proc/$dpid/fd" -mindepth 1 | wc -l)
        exec {go}<>"$run/go.fifo"
        # The warm-up second is not measured (bench-scale.c).
        sleep 1
        t0=$(cpu_ticks "$dpid")
        wait_measured "$run" $((n * p))
        t1=$(cpu_ticks "$dpid")
        wait_gone "$run" "$pattern"
        exec {go}>&-
        declare -A r=()
        local k v
        while read -r _ k v; do r[$k]=$v; done < <("$worker" report "$run" || true)
        local offered=$((n * p * hz)) served
        served=$(awk -v c="${r[calls]:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", c / s }')
        if [[ $mode == bare ]]; then
                floor[p50]=${r[p50_us]:-} floor[p99]=${r[p99_us]:-} floor[p999]=${r[p999_us]:-}
                printf '  %-34s %s processes, %s calls/s offered, %s served\n' "$label, floor (no timensd)" \
                        "$((n * p))" "$offered" "$served"
                printf '  %-34s p50 %s us, p99 %s us, p99.9 %s us, longest %s us\n' "" "${r[p50_us]:-n/a}" \
                        "${r[p99_us]:-n/a}" "${r[p999_us]:-n/a}" "${r[max_us]:-n/a}"
                return
        fi
        printf '  %-34s %s processes (%s started), %s calls/s offered, %s served\n' "$label, timensd" "$((n * p))" \
                "$started" "$offered" "$served"
        printf '  %-34s p50 %s us, p99 %s us, p99.9 %s us, longest %s us\n' "" "${r[p50_us]:-n/a}" \
                "${r[p99_us]:-n/a}" "${r[p999_us]:-n/a}" "${r[max_us]:-n/a}"
        printf '  %-34s p50 %s, p99 %s, p99.9 %s the floor\n' "" "$(ratio "${r[p50_us]:-}" "${floor[p50]:-}")" \
                "$(ratio "${r[p99_us]:-}" "${floor[p99]:-}")" "$(ratio "${r[p999_us]:-}" "${floor[p999]:-}")"
        printf '  %-34s timensd: %s%% of one CPU, RSS %s KiB (%s KiB per namespace), %s fds\n' "" \
                "$(awk -v a="$t0" -v b="$t1" -v s="$seconds" -v hz="$(getconf CLK_TCK)" \
                        'BEGIN { printf "%.0f", (b - a) * 100 / hz / s }')" "$rss" \
                "$(awk -v a="$rss0" -v b="$rss" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')" "$fds"
        if [[ -n ${r[p99_us]:-} ]]; then
                if awk -v v="${r[p99_us]}" -v g=$GOAL_P99_US 'BEGIN { exit !(v <= g) }'; then
                        echo "  => p99 meets the goal (<= $GOAL_P99_US us) at the offered load"
                else
                        echo "  => p99 MISSES the goal (<= $GOAL_P99_US us) at the offered load"
                fi
                if [[ -n ${floor[p99]:-} ]] && awk -v v="${floor[p99]}" -v g=$GOAL_P99_US 'BEGIN { exit !(v > g) }'; then
                        echo "     (so does the floor, ${floor[p99]} us: this machine's scheduling under the load, not timensd)"
                fi
        fi
}

# ratio A B: A / B as "N.NNx", or n/a.
ratio() {
        if [[ -n $1 && -n $2 ]] && awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
                awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
        else
                echo n/a
        fi
}

# wait_measured RUN PROCESSES: until every worker of RUN wrote its
# histogram, at most the run time and a minute more.
wait_measured() {
        local i
        for ((i = 0; i < (seconds + 60) * 10; i++)); do
                (($(find "$1" -maxdepth 1 -name 'h.*' | wc -l) >= $2)) && return 0
                sleep 0.1
        done
        echo "  (workers still measuring after $((seconds + 60)) s: the row counts what finished)"
}

# wait_gone RUN PATTERN: lets the workers of RUN end together (RUN/stop),
# and waits until the processes PATTERN finds are gone (their timensctl
# parents exit with them).
wait_gone() {
        local i stop
        exec {stop}<>"$1/stop.fifo"
        for ((i = 0; i < 600; i++)); do
                pgrep -f "$2" >/dev/null || break
                sleep 0.1
        done
        exec {stop}>&-
}

echo "  load: $hz trapped calls/s per process for $seconds s (SCALE_HZ, SCALE_SECONDS)"
load "ns$ns_count" "$ns_count" "$procs" bare
load "ns$ns_count" "$ns_count" "$procs"
load "big$big" 1 "$big" bare
load "big$big" 1 "$big"

echo "  create + destroy 1000 namespaces, $cycles times (timensd's RSS and fds after each cycle)"
declare -A c=()
while read -r _ k v; do c[$k]=$v; done < <("$api" --socket "$dir/sock" cycles "$dpid" 1000 "$cycles" || true)
printf '  %-34s RSS %s KiB, %s fds\n' "before" "${c[cycle_0_rss_kib]:-n/a}" "${c[cycle_0_fds]:-n/a}"
for ((i = 1; i <= cycles; i++)); do
        printf '  %-34s RSS %s KiB, %s fds\n' "after cycle $i" "${c[cycle_${i}_rss_kib]:-n/a}" "${c[cycle_${i}_fds]:-n/a}"
done
if [[ -n ${c[cycle_1_rss_kib]:-} && -n ${c[cycle_${cycles}_rss_kib]:-} ]]; then
        last_rss=${c[cycle_${cycles}_rss_kib]} last_fds=${c[cycle_${cycles}_fds]}
        echo "  => growth from cycle 1 to $cycles: $((last_rss - c[cycle_1_rss_kib])) KiB," \
                "$((last_fds - c[cycle_1_fds])) fds"
fi
echo "  goal: RSS <= $GOAL_KIB KiB per namespace (api.sh measures it without processes)"
