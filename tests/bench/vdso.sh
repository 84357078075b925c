#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/vdso.sh BUILDDIR — the vDSO path and the cost of its
# injection, side by side in one run:
#   1. our image against the kernel's vDSO in one process (bench-vdso);
#   2. clock_gettime(CLOCK_MONOTONIC) through libc in a program run on the
#      host, in a kernel time namespace (unshare -T), under timensctl (our
#      image), and under libfaketime (LD_PRELOAD), as ratios to the host;
#   3. every time call through libc (clock_gettime per clock, time,
#      gettimeofday) on the host, in a kernel time namespace and under
#      timensctl with whole and with sub-second offsets, in rounds, as
#      ratios (issue 19: <= 1.02x host for clock_gettime, <= 1.2x for time,
#      gettimeofday and the coarse clocks);
#   4. fork + exec + exit of /bin/true on the host and under timensctl
#      (every exec held and injected), as a ratio.
set -euo pipefail

if [[ $# -ne 1 ]]; then
        echo "Usage: $0 BUILDDIR" >&2
        exit 2
fi
builddir=$1
clock=$builddir/tests/bench/bench-clock
vdso=$builddir/tests/bench/bench-vdso
exec_bench=$builddir/tests/bench/bench-exec
calls=$builddir/tests/bench/bench-vdso-calls
timensctl=$builddir/timensctl
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
batch=(-t "${BENCH_BATCH_MS:-100}" -b "${BENCH_BATCHES:-7}")

# median NAME CMD...: the median of bench line NAME of CMD's output.
median() {
        local name=$1
        shift
        "$@" 2>/dev/null | awk -v n="$name" '$1 == "bench" && $2 == n { print $3; exit }'
}

ratio() {
        if [[ -z ${1:-} || -z ${2:-} ]]; then
                echo n/a
        else
                awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
        fi
}

echo
echo "== the vDSO: our image against the kernel's, in one process (ns per call)"
# Short batches, ours right after the kernel's: the ratio of each adjacent
# pair sees the same machine, which a loaded 2-vCPU VM changes by the
# second; the median of ${BENCH_VDSO_BATCHES:-99} pairs is the figure.
"$vdso" -b "${BENCH_VDSO_BATCHES:-99}" -t "${BENCH_VDSO_BATCH_MS:-5}" | grep -v -E '^(bench|ratio)' || echo "bench-vdso failed"

echo
echo "== clock_gettime(CLOCK_MONOTONIC) through libc, per process kind (median ns per call)"
host=$(median vdso_clock_gettime_monotonic "$clock" "${batch[@]}")
kns=""
if [[ $EUID -eq 0 ]] && unshare -T --monotonic 86400 true 2>/dev/null; then
        kns=$(median vdso_clock_gettime_monotonic unshare -T --monotonic 86400 --boottime 86400 "$clock" "${batch[@]}")
fi
ours=$(median vdso_clock_gettime_monotonic "$timensctl" run --monotonic 86400 --realtime +1d -- "$clock" "${batch[@]}")
fake=""
if [[ -e $faketime_lib ]]; then
        fake=$(median vdso_clock_gettime_monotonic env LD_PRELOAD="$faketime_lib" FAKETIME="+1d" \
                "$clock" "${batch[@]}")
fi
printf '  %-34s %10s %10s\n' "" "ns" "vs host"
printf '  %-34s %10s %10s\n' "host vDSO" "${host:-n/a}" "1.00x"
printf '  %-34s %10s %10s\n' "kernel time namespace (unshare -T)" "${kns:-n/a}" "$(ratio "$kns" "$host")"
printf '  %-34s %10s %10s\n' "timens (our vDSO image)" "${ours:-n/a}" "$(ratio "$ours" "$host")"
printf '  %-34s %10s %10s\n' "libfaketime (LD_PRELOAD)" "${fake:-n/a}" "$(ratio "$fake" "$host")"
echo "  => ours / kernel time namespace: $(ratio "$ours" "$kns") (goal <= 1.05x host and <= the kernel's)"

echo
echo "== every time call through libc, per process kind: ns per call (median over ${BENCH_ROUNDS:-9} rounds of each"
echo "   process's median batch) and ratios (median over the rounds of the ratio within a round, whose"
echo "   four processes run back to back: the load of this shared machine changes between rounds)"
echo "  (our image's read path: the first line of the in-process table above)"
have_kns=0
[[ $EUID -eq 0 ]] && unshare -T --monotonic 86400 true 2>/dev/null && have_kns=1
rounds=()
for ((round = 0; round < ${BENCH_ROUNDS:-9}; round++)); do
        for kind in host kns whole sub; do
                case $kind in
                host) out=$("$calls" -b 3 -t 10 2>/dev/null || true) ;;
                kns)
                        out=""
                        ((have_kns)) && out=$(unshare -T --monotonic 86400 --boottime 172800 "$calls" -b 3 -t 10 2>/dev/null || true)
                        ;;
                whole) out=$("$timensctl" run --monotonic 86400 --boottime 172800 --realtime +1d -- "$calls" -b 3 -t 10 2>/dev/null || true) ;;
                sub) out=$("$timensctl" run --monotonic 86400.123456789 --boottime 172800.987654321 \
                        --realtime 86400.5 -- "$calls" -b 3 -t 10 2>/dev/null || true) ;;
                esac
                while read -r tag name med _; do
                        [[ $tag == bench ]] && rounds+=("$round $kind $name $med")
                done <<<"$out"
        done
done
printf '%s\n' "${rounds[@]}" | awk '
function median(list,   n, a, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n ? a[int((n + 1) / 2)] : ""
}
function fmt(v) { return v == "" ? "n/a" : sprintf("%.2fx", v) }
{ v[$1, $2, $3] = $4; names[$3] = 1; if ($1 + 1 > nr) nr = $1 + 1 }
END {
        split("monotonic realtime boottime tai monotonic_raw monotonic_coarse realtime_coarse time gettimeofday", order, " ")
        printf "  %-30s %7s %7s %7s %7s   %-9s %-9s %-9s\n", "call", "host", "unsh-T", "ours", "ours", "ours/host", "ours/host", "ours/kns"
        printf "  %-30s %7s %7s %7s %7s   %-9s %-9s %-9s\n", "", "", "", "whole s", "sub-s", "whole s", "sub-s", "whole s"
        for (k = 1; k <= 9; k++) {
                n = order[k]
                h = k_ = w = u = rw = ru = rk = ""
                for (r = 0; r < nr; r++) {
                        if ((r, "host", n) in v) h = h " " v[r, "host", n]
                        if ((r, "kns", n) in v) k_ = k_ " " v[r, "kns", n]
                        if ((r, "whole", n) in v) w = w " " v[r, "whole", n]
                        if ((r, "sub", n) in v) u = u " " v[r, "sub", n]
                        if (((r, "host", n) in v) && ((r, "whole", n) in v)) rw = rw " " v[r, "whole", n] / v[r, "host", n]
                        if (((r, "host", n) in v) && ((r, "sub", n) in v)) ru = ru " " v[r, "sub", n] / v[r, "host", n]
                        if (((r, "kns", n) in v) && ((r, "whole", n) in v)) rk = rk " " v[r, "whole", n] / v[r, "kns", n]
                }
                label = (n == "time" || n == "gettimeofday") ? n "()" : "clock_gettime(" toupper(n) ")"
                printf "  %-30s %7s %7s %7s %7s   %-9s %-9s %-9s\n", label, median(h), median(k_), median(w), median(u),
                        fmt(median(rw)), fmt(median(ru)), fmt(median(rk))
        }
}'
echo "  => goals: clock_gettime <= 1.02x host and <= unshare -T; time(), gettimeofday(), *_COARSE <= 1.2x host"
echo "     (load now: $(cut -d' ' -f1-3 /proc/loadavg))"

echo
echo "== fork + exec + exit of /bin/true (us per exec, best of 3 runs of 300)"
best() {
        local b="" v _
        for _ in 1 2 3; do
                v=$("$@" 300 | awk '$1 == "bench" { print $3 / 1000 }')
                [[ -z $b ]] || awk -v v="$v" -v b="$b" 'BEGIN { exit !(v < b) }' && b=$v
        done
        echo "$b"
}
h=$(best "$exec_bench")
t=$(best "$timensctl" run -- "$exec_bench")
printf '  %-34s %10s\n' "host" "${h:-n/a}"
printf '  %-34s %10s %10s\n' "timens (vDSO injected at exec)" "${t:-n/a}" "$(ratio "$t" "$h")"
echo "  => goal <= 1.10x; the ptrace hold at exec alone measured ~100 us here (see the issue's note)"
