#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/procfs.sh BUILDDIR — /proc/uptime as a namespace sees it
# (lib/supervisor/supervisor-procfs.c), from run.sh: open+read+close of /proc/uptime
# (covered by a FUSE mount under timensctl run) and of /proc/loadavg (not
# covered: the proof that a program that never opens the covered files
# pays nothing) on the host, in a kernel time namespace and under
# timensctl run, p50 and p99 in us, with the ratio to the host.
# Environment: BENCH_PROCFS_N (default 2000 reads per row).
set -euo pipefail

builddir=$1
bench=$builddir/tests/bench/bench-procfs
timensctl=$builddir/timensctl
n=${BENCH_PROCFS_N:-2000}

echo
echo "/proc files (bench-procfs, $n open+read+close per row): p50/p99, us"
for f in "$bench" "$timensctl"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done

declare -A p50=() p99=()
measure() {
        local key=$1 path=$2 _r _p a b _rest
        shift 2
        read -r _r _p a b _rest < <("$@" "$bench" "$path" -n "$n" || echo "read $path n/a n/a")
        p50[$key/$path]=$a
        p99[$key/$path]=$b
}

have_kns=0
[[ $EUID -eq 0 ]] && unshare -T --boottime 1 true 2>/dev/null && have_kns=1
for path in /proc/loadavg /proc/uptime; do
        measure host "$path" env
        [[ $have_kns == 1 ]] && measure kns "$path" unshare -T --boottime 86400
        measure tns "$path" "$timensctl" run --boottime +1d --
done

cell() { # p50 p99 -> "p50/p99" in us
        awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || a == "n/a") print "n/a"; else printf "%.1f/%.1f", a / 1000, b / 1000 }'
}
ratio() {
        awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.2fx", a / b }'
}

printf '  %-16s %14s %14s %14s %12s\n' "" "host" "unshare -T" "timensctl" "tns/host p50"
for path in /proc/loadavg /proc/uptime; do
        printf '  %-16s %14s %14s %14s %12s\n' "$path" \
                "$(cell "${p50[host/$path]:-}" "${p99[host/$path]:-}")" \
                "$(cell "${p50[kns/$path]:-}" "${p99[kns/$path]:-}")" \
                "$(cell "${p50[tns/$path]:-}" "${p99[tns/$path]:-}")" \
                "$(ratio "${p50[tns/$path]:-}" "${p50[host/$path]:-}")"
done
echo "  /proc/loadavg is not covered: its ratio is the cost for programs that never open /proc/uptime or /proc/stat."
