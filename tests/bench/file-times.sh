#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/file-times.sh BUILDDIR — file times set to "now" (touch,
# futimens) and explicit ones (tar, cp -p), from run.sh: per call, p50 and
# p99, on the host and under timensctl run with and without a realtime
# shift (lib/core/file-times.c: "now" is held and run with the namespace's
# now; explicit times run as they are). Environment: BENCH_UTIME_N
# (default 2000 calls per row).
set -euo pipefail

builddir=$1
bench=$builddir/tests/bench/bench-utime
timensctl=$builddir/timensctl
n=${BENCH_UTIME_N:-2000}

echo
echo "file times (bench-utime, $n utimensat calls per row on one file): ns per call, p50 / p99"
for f in "$bench" "$timensctl"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/timens-bench-utime.XXXXXX")
trap 'rm -rf "$dir"' EXIT

declare -A p50=() p99=()
measure() {
        local key=$1 kind=$2 _u _k a b _rest
        shift 2
        read -r _u _k a b _rest < <("$@" "$bench" "$kind" "$dir/f" -n "$n" || echo "utime $kind n/a n/a")
        p50[$key/$kind]=$a
        p99[$key/$kind]=$b
}

for kind in now explicit; do
        measure host "$kind" env
        measure shifted "$kind" env TIMENS_SOCKET="$dir/none.sock" "$timensctl" run --realtime +1d --
        measure plain "$kind" env TIMENS_SOCKET="$dir/none.sock" "$timensctl" run --monotonic +1d --
done

ratio() {
        awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.1fx", a / b }'
}

printf '  %-56s %10s %10s %9s\n' "" "p50" "p99" "p50/host"
for kind in now explicit; do
        for key in host shifted plain; do
                case $key in
                host) label="host" ;;
                shifted) label="timensctl run --realtime +1d" ;;
                plain) label="timensctl run --monotonic +1d (no realtime)" ;;
                esac
                printf '  %-56s %10s %10s %9s\n' "$kind: $label" "${p50[$key/$kind]}" "${p99[$key/$kind]}" \
                        "$(ratio "${p50[$key/$kind]}" "${p50[host/$kind]}")"
        done
done
echo "  - 'now' under a realtime shift is held under ptrace (seize, interrupt, entry and"
echo "    exit stops) like an absolute wait; explicit times are decided on a receive thread."
