#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/vdso.sh BUILDDIR — the vDSO path and the cost of its
# injection, side by side in one run:
#   1. our image against the kernel's vDSO in one process (bench-vdso);
#   2. clock_gettime(CLOCK_MONOTONIC) through libc in a program run on the
#      host, in a kernel time namespace (unshare -T), under timensctl (our
#      image), and under libfaketime (LD_PRELOAD), as ratios to the host;
#   3. fork + exec + exit of /bin/true on the host and under timensctl
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
"$vdso" | grep -v -E '^(bench|ratio)' || echo "bench-vdso failed"

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
