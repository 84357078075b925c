#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/exec.sh BUILDDIR — fork + exec + exit of /bin/true (bench-exec),
# then of `true` looked up in a PATH whose first three directories do not
# have it (execlp(), as a shell or env does: three failed execs first),
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

# one NAME CMD...: appends the wall and CPU us per exec to NAME and NAME.cpu.
one() {
        local name=$1
        shift
        "$@" 2>/dev/null | awk -v w="$dir/$name" -v c="$dir/$name.cpu" '
                $1 == "bench" { printf "%.1f\n", $3 / 1000 >> w }
                $1 == "cpu" { printf "%.1f\n", $3 / 1000 >> c }'
}

# The CPU time timensd's worker spent (ns, /proc/PID/schedstat).
daemon_cpu() {
        local w
        w=$(pgrep -f -- "--socket $dir/sock .*--foreground" | head -1)
        [[ -n $w ]] && awk '{ print $1 }' "/proc/$w/schedstat" 2>/dev/null || echo 0
}

median() {
        [[ -f $1 ]] || return 0
        sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
ratio() {
        if [[ -z ${1:-} || -z ${2:-} ]]; then
                echo n/a
        else
                awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
        fi
}

# measure TITLE PROG: the rounds and the table for one program.
measure() {
        local title=$1 prog=$2 i before after h e t hc ec tc dc
        rm -f "$dir"/host* "$dir"/embedded* "$dir"/timensd* "$dir"/daemon*
        echo
        echo "== $title: $rounds interleaved rounds of $n, median us per exec"
        for ((i = 0; i < rounds; i++)); do
                one host "$bench" "$n" "$prog"
                one embedded "$timensctl" run --no-daemon -- "$bench" "$n" "$prog"
                if [[ -n $keeper ]]; then
                        before=$(daemon_cpu)
                        TIMENS_SOCKET=$dir/sock one timensd "$timensctl" run -- "$bench" "$n" "$prog"
                        after=$(daemon_cpu)
                        awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { printf "%.1f\n", (a - b) / n / 1000 }' >>"$dir/daemon.cpu"
                fi
        done
        h=$(median "$dir/host")
        e=$(median "$dir/embedded")
        t=$(median "$dir/timensd")
        hc=$(median "$dir/host.cpu")
        ec=$(median "$dir/embedded.cpu")
        tc=$(median "$dir/timensd.cpu")
        dc=$(median "$dir/daemon.cpu")
        # CPU: the program's side (bench-exec and its children); timensd's own
        # CPU per exec beside it. A loaded machine inflates the wall column with
        # waits for a CPU, not the CPU one.
        printf '  %-44s %10s %10s %12s %12s\n' "" "wall us" "vs host" "cpu us" "vs host"
        printf '  %-44s %10s %10s %12s %12s\n' "host" "${h:-n/a}" "1.00x" "${hc:-n/a}" "1.00x"
        printf '  %-44s %10s %10s %12s %12s\n' "timensctl, embedded (no hold)" "${e:-n/a}" "$(ratio "$e" "$h")" "${ec:-n/a}" \
                "$(ratio "$ec" "$hc")"
        printf '  %-44s %10s %10s %12s %12s\n' "through timensd with an fd store (the hold)" "${t:-n/a}" "$(ratio "$t" "$h")" \
                "${tc:-n/a}" "$(ratio "$tc" "$hc")"
        [[ -z $dc ]] || echo "  timensd's own CPU per exec: $dc us (program + timensd vs host: $(ratio "$(awk -v a="$tc" -v b="$dc" 'BEGIN { print a + b }')" "$hc"))"
        [[ -z $h || -z $e ]] || echo "  split: injection (embedded - host) $(awk -v a="$e" -v b="$h" 'BEGIN { printf "%.1f", a - b }') us;" \
                "hold and daemon (timensd - embedded) $(awk -v a="${t:-$e}" -v b="$e" 'BEGIN { printf "%.1f", a - b }') us"
        echo "  => goal <= 1.05x host (issue 15)"
}

measure "fork + exec + exit of /bin/true" /bin/true
# Debian's PATH for root, where true is in the fourth directory.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin measure \
        "fork + execlp + exit of true, found in the 4th directory of PATH" true
