#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/restart.sh BUILDDIR — restarts, from run.sh: under the
# machine's real systemd (tests/tools/systemd-ns) with the shipped units
# (RestartSec=10ms), a program makes trapped calls back to back while
# timensd is killed (kill -9) or restarted (systemctl restart) N times
# each; for each, the time from the kill (or the restart command) to the
# first call answered after it, p50 and max, in ms. The baseline is one
# trapped call with no restart (the loop's own median). Environment:
# BENCH_RESTARTS (default 10 of each). Then the same kill -9 loop
# without systemd: timensd's keeper (timensd(8), RESTARTS) starts the
# worker again.
set -uo pipefail

builddir=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$builddir/tests/bench/bench-restart
timensctl=$builddir/timensctl
n=${BENCH_RESTARTS:-10}

echo
echo "Restarts (bench-restart under systemd 252, RestartSec=10ms): $n of each"
if [[ $EUID -ne 0 || ! -x /lib/systemd/systemd || ! -x $bench ]]; then
        echo "  not measured: needs root, /lib/systemd/systemd and $bench"
        exit 0
fi
dir=$(mktemp -d /tmp/bench-restart.XXXXXX)
trap '"$root/tests/tools/systemd-ns" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
mkdir -p "$dir/units"
sed "s|@SBINDIR@|$builddir|" "$root/systemd/timensd.service.in" >"$dir/units/timensd.service"
cp "$root/systemd/timensd.socket" "$root/systemd/timensd-agent.socket" "$dir/units/"
pid=$(timeout 30 "$root/tests/tools/systemd-ns" start "$dir" "$dir/units") || { echo "  not measured: systemd did not boot"; exit 0; }
sns() { timeout 60 nsenter -t "$pid" -m -p "$@"; }
sns systemctl start timensd.socket timensd-agent.socket
sns "$timensctl" create bench --realtime +1d >/dev/null
main_pid() { sns systemctl show -p MainPID --value timensd.service; }
wait_new() {
        local old=$1 p i
        for ((i = 0; i < 500; i++)); do
                p=$(main_pid)
                [[ -n $p && $p != 0 && $p != "$old" ]] && sns "$timensctl" list >/dev/null 2>&1 && return 0
                sleep 0.01
        done
}
now_ns() { "$builddir/tests/helpers/clockprobe" --ns monotonic; }

seconds=$((n * 2 + 6))
sns "$timensctl" run --join bench -- "$bench" "$seconds" >"$dir/gaps" 2>&1 &
bg=$!
sleep 1
: >"$dir/kills"
for ((i = 0; i < n; i++)); do
        old=$(main_pid)
        echo "kill $(now_ns)" >>"$dir/kills"
        sns kill -9 "$old"
        wait_new "$old"
        sleep 0.3
done
for ((i = 0; i < n; i++)); do
        old=$(main_pid)
        echo "restart $(now_ns)" >>"$dir/kills"
        sns systemctl restart timensd.service
        wait_new "$old"
        sleep 0.3
done
wait "$bg"
calls=$(awk '/^calls/ { print $2 }' "$dir/gaps")
if [[ -z $calls ]]; then
        echo "  bench-restart did not finish: $(grep -v '^gap' "$dir/gaps" | tail -3)"
        sns journalctl -u timensd --no-pager | tail -15 | sed 's/^/  | /'
fi
# latencies KIND: for each event of KIND, the end of the first gap that
# ends after it (the call in progress at the kill, or the first one made
# after it: the kill itself takes a few ms through nsenter, counted in),
# in ms.
latencies() {
        local kills=${2:-$dir/kills} gaps=${3:-$dir/gaps}
        awk -v kind="$1" '
                FNR == NR { if ($1 == kind) ev[++n] = $2; next }
                $1 == "gap" { s[++g] = $2; e[g] = $3 }
                END {
                        for (i = 1; i <= n; i++)
                                for (j = 1; j <= g; j++)
                                        if (e[j] >= ev[i] && s[j] <= ev[i] + 200e6) { printf "%.1f\n", (e[j] - ev[i]) / 1e6; break }
                }' "$kills" "$gaps"
}
latencies kill >"$dir/kill.ms"
latencies restart >"$dir/restart.ms"
stats() {
        sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a n/a 0"; exit } printf "%s %s %d\n", v[int((NR + 1) / 2)], v[NR], NR }'
}
read -r kp50 kmax kn < <(stats "$dir/kill.ms")
read -r rp50 rmax rn < <(stats "$dir/restart.ms")
per_call=$(awk -v c="${calls:-0}" -v s="$seconds" 'BEGIN { if (c > 0) printf "%.1f", s * 1e6 / c; else print "n/a" }')
printf '  %-44s %10s %10s %8s\n' "" "p50 ms" "max ms" "events"
printf '  %-44s %10s %10s %8s\n' "kill -9 -> first answered call" "$kp50" "$kmax" "$kn/$n"
printf '  %-44s %10s %10s %8s\n' "systemctl restart -> first answered call" "$rp50" "$rmax" "$rn/$n"
printf '  %-44s %10s\n' "mean per call over the whole run (us)" "$per_call"
echo "  goal: kill -9 -> first answer <= 100 ms. Calls made meanwhile all succeeded (bench-restart stops at the first failure)."

# Without systemd: the keeper and its worker on a socket of their own.
keeper_dir=$dir/keeper
mkdir -p "$keeper_dir"
export TIMENS_SOCKET=$keeper_dir/sock
"$builddir/timensd" --socket "$TIMENS_SOCKET" --log-target stderr 2>"$keeper_dir/log"
keeper=$(pgrep -f -x "$builddir/timensd --socket $TIMENS_SOCKET --log-target stderr")
# Gone with the run, whatever happens (its worker goes with it).
trap '[[ -n $keeper ]] && kill -TERM "$keeper" 2>/dev/null; "$root/tests/tools/systemd-ns" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
worker() { pgrep -P "$keeper" -f -- "--foreground"; }
if [[ -z $keeper ]] || ! "$timensctl" create bench --realtime +1d >/dev/null; then
        echo "  keeper: not measured: $(tail -3 "$keeper_dir/log")"
        exit 0
fi
seconds=$((n + 4))
"$timensctl" run --join bench -- "$bench" "$seconds" >"$keeper_dir/gaps" 2>&1 &
bg=$!
sleep 1
: >"$keeper_dir/kills"
for ((i = 0; i < n; i++)); do
        old=$(worker)
        [[ -n $old ]] || break
        echo "kill $(now_ns)" >>"$keeper_dir/kills"
        kill -9 "$old"
        for ((j = 0; j < 500; j++)); do
                w=$(worker)
                [[ -n $w && $w != "$old" ]] && "$timensctl" list >/dev/null 2>&1 && break
                sleep 0.01
        done
        sleep 0.3
done
wait "$bg"
latencies kill "$keeper_dir/kills" "$keeper_dir/gaps" >"$keeper_dir/kill.ms"
read -r kp50 kmax kn < <(stats "$keeper_dir/kill.ms")
printf '  %-44s %10s %10s %8s\n' "keeper (no systemd): kill -9 -> first answer" "$kp50" "$kmax" "$kn/$n"
