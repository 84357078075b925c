#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/api.sh BUILDDIR — timensd's control API, from run.sh: the
# round trip of hello, a live set on a namespace without processes and on
# one with 100, and timensd's RSS with 1, 100 and 1000 namespaces (goal:
# at most 64 KiB per namespace beyond the base). Runs a timensd of its own
# on a temporary socket; needs root.
set -euo pipefail

readonly GOAL_KIB=64

builddir=$1
timensd=$builddir/timensd
timensctl=$builddir/timensctl
bench=$builddir/tests/bench/bench-api
batch=(-t "${BENCH_BATCH_MS:-100}" -b "${BENCH_BATCHES:-7}")

echo
echo "timensd control API (bench-api, one connection, lib/client/client.c)"
if [[ $EUID -ne 0 ]]; then
        echo "  not measured: timensd needs root"
        exit 0
fi
for f in "$timensd" "$timensctl" "$bench"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done

dir=$(mktemp -d)
dpid=
members=()
cleanup() {
        local pid
        for pid in "${members[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
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

declare -A med=() min=() info=()
# collect [--pin] ARGS...: bench-api ARGS; --pin runs it, and timensd, on
# CPU 0 (as run.sh's pinned column: the floor, without the scheduler's
# placement across CPUs), and keeps the figures under NAME@pin.
collect() {
        local kind name a b sfx="" pin=()
        if [[ $1 == --pin ]]; then
                shift
                sfx=@pin pin=(taskset -c 0)
                taskset -p -c 0 "$dpid" >/dev/null
        else
                taskset -p -c "0-$(($(nproc) - 1))" "$dpid" >/dev/null
        fi
        while read -r kind name a b _; do
                case $kind in
                bench) med[$name$sfx]=$a min[$name$sfx]=$b ;;
                info) info[$name]=$a ;;
                esac
        done < <("${pin[@]}" "$bench" --socket "$dir/sock" "${batch[@]}" "$@" || echo "bench-api $* failed" >&2)
}

collect hello
collect --pin hello
"$timensctl" create empty >/dev/null
collect set empty
collect --pin set empty
# 100 processes in one namespace, held until we are done.
# shellcheck disable=SC2016 # expanded by that sh, not this one
"$timensctl" run --name members100 -- sh -c \
        'for i in $(seq 100); do sleep 600 & done; echo > "$0"; wait' "$dir/ready" >/dev/null 2>&1 &
for ((i = 0; i < 400; i++)); do
        [[ -e $dir/ready ]] && break
        sleep 0.05
done
mapfile -t members < <("$timensctl" show --json members100 |
        python3 -c 'import json, sys; print(*json.load(sys.stdin)["namespace"]["processes"], sep="\n")')
collect set members100
collect --pin set members100
collect rss "$dpid"

cell() {
        [[ -n ${med[$1]:-} ]] && echo "${med[$1]} (${min[$1]})" || echo n/a
}
row() {
        printf '  %-46s %20s %20s\n' "$1" "$(cell "$2")" "$(cell "$2@pin")"
}
echo "ns per request: median of ${BENCH_BATCHES:-7} batches of ~${BENCH_BATCH_MS:-100} ms (fastest batch)"
printf '  %-46s %20s %20s\n' "" "unpinned (default)" "pinned (CPU 0)"
row "hello round trip" api_hello
row "set realtime, namespace without processes" api_set_empty
row "set realtime, namespace with ${#members[@]} processes" api_set_members100
echo "timensd RSS with namespaces held (created through the API; VmRSS)"
printf '  %-46s %s\n' "base" "${info[rss_base_kib]:-n/a} KiB"
verdict="not measured"
for n in 1 100 1000; do
        printf '  %-46s %s\n' "$n namespaces" \
                "${info[rss_${n}_kib]:-n/a} KiB: ${info[rss_per_ns_${n}_kib]:-n/a} KiB per namespace beyond the base"
done
if [[ -n ${info[rss_per_ns_1000_kib]:-} ]]; then
        if awk -v v="${info[rss_per_ns_1000_kib]}" -v g=$GOAL_KIB 'BEGIN { exit !(v <= g) }'; then
                verdict="meets the goal (<= $GOAL_KIB KiB per namespace)"
        else
                verdict="MISSES the goal (<= $GOAL_KIB KiB per namespace)"
        fi
fi
echo "  => at 1000 namespaces: $verdict"
echo "  plus, outside the RSS: each namespace's memfd (parameter page, offsets page, vDSO image),"
echo "  ${info[memfd_per_ns_1000_kib]:-n/a} KiB of shared memory per namespace at 1000"
