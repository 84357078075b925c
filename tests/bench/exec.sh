#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/exec.sh BUILDDIR — fork + exec + exit of /bin/true (bench-exec),
# interleaved rounds, medians: on the host, under timensctl's embedded
# supervisor (seize, inject at the exec stop, marker call), and through a
# timensd with an fd store (its keeper), which adds the exec hold (a
# SIGSTOP pending from the reply, taken back by SIGCONT:
# docs/design/exec-path.md). The split: embedded - host is the injection,
# timensd - embedded the hold and the daemon's own path.
set -euo pipefail

if [[ $# -ne 1 ]]; then
        echo "Usage: $0 BUILDDIR" >&2
        exit 2
fi
builddir=$1
bench=$builddir/tests/bench/bench-exec
timensctl=$builddir/timensctl
timensd=$builddir/timensd
rounds=${BENCH_EXEC_ROUNDS:-9}
n=${BENCH_EXEC_N:-200}

echo
echo "== fork + exec + exit of /bin/true: $rounds interleaved rounds of $n, median us per exec"
dir=$(mktemp -d)
keeper=""
cleanup() {
        [[ -z $keeper ]] || kill -TERM "$keeper" 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT
if [[ $EUID -eq 0 ]]; then
        # Without --foreground: the keeper holds an fd store, as systemd would.
        "$timensd" --socket "$dir/sock" --log-target stderr --log-level warning 2>"$dir/log" || true
        keeper=$(pgrep -f -- "--socket $dir/sock --log-target stderr --log-level warning$" || true)
fi

one() {
        "$@" "$n" 2>/dev/null | awk '$1 == "bench" { printf "%.1f\n", $3 / 1000 }'
}

: >"$dir/host" && : >"$dir/embedded" && : >"$dir/timensd"
for ((i = 0; i < rounds; i++)); do
        one "$bench" >>"$dir/host"
        one "$timensctl" run --no-daemon -- "$bench" >>"$dir/embedded"
        [[ -z $keeper ]] || TIMENS_SOCKET=$dir/sock one "$timensctl" run -- "$bench" >>"$dir/timensd"
done

median() {
        sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
ratio() {
        if [[ -z ${1:-} || -z ${2:-} ]]; then
                echo n/a
        else
                awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
        fi
}
h=$(median "$dir/host")
e=$(median "$dir/embedded")
t=$(median "$dir/timensd")
printf '  %-44s %10s %10s\n' "" "us" "vs host"
printf '  %-44s %10s %10s\n' "host" "${h:-n/a}" "1.00x"
printf '  %-44s %10s %10s\n' "timensctl, embedded (no hold)" "${e:-n/a}" "$(ratio "$e" "$h")"
printf '  %-44s %10s %10s\n' "through timensd with an fd store (the hold)" "${t:-n/a}" "$(ratio "$t" "$h")"
[[ -z $h || -z $e ]] || echo "  split: injection (embedded - host) $(awk -v a="$e" -v b="$h" 'BEGIN { printf "%.1f", a - b }') us;" \
        "hold and daemon (timensd - embedded) $(awk -v a="${t:-$e}" -v b="$e" 'BEGIN { printf "%.1f", a - b }') us"
echo "  => goal <= 1.05x host (issue 15)"
