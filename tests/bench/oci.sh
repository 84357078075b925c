#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/bench/oci.sh BUILDDIR — container start time, from run.sh: `runc
# run` of /bin/true in a busybox-static bundle, plain and with timens (the
# seccomp agent mode, and the hook mode once timensd has attach), runs
# interleaved so that the machine's load hits every variant alike. Goal:
# timens adds at most 50 ms to a start. Runs a timensd of its own on a
# temporary socket; needs root and runc (crun too, for its rows).
set -euo pipefail

readonly GOAL_MS=50
readonly RUNS=${BENCH_OCI_RUNS:-15}

builddir=$(realpath "$1") # the hook path goes into config.json: absolute
timensd=$builddir/timensd
timensctl=$builddir/timensctl
hook=$builddir/timens-oci-hook

echo
echo "container start time (runc/crun run of /bin/true, $RUNS runs each, interleaved)"
if [[ $EUID -ne 0 ]] || ! command -v runc >/dev/null; then
        echo "  not measured: needs root and runc"
        exit 0
fi
for f in "$timensd" "$timensctl" "$hook"; do
        [[ -x $f ]] || { echo "  not measured: $f is missing"; exit 0; }
done

dir=$(mktemp -d)
dpid=
# shellcheck disable=SC2317 # called by the trap
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

# A busybox-static rootfs: /bin/true is enough.
mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys"
cp /bin/busybox "$dir/rootfs/bin/busybox"
ln -s busybox "$dir/rootfs/bin/true"
bundle() {
        mkdir -p "$dir/$1"
        (cd "$dir/$1" && runc spec)
        python3 - "$dir/$1/config.json" "$dir/rootfs" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["root"]["path"] = sys.argv[2]
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/true"]
json.dump(c, open(sys.argv[1], "w"))
PY
}
bundle plain
bundle agent
"$timensctl" oci-config "$dir/agent" --agent --agent-socket "$dir/seccomp-agent.sock" --realtime +1d
bundle hook
"$timensctl" oci-config "$dir/hook" --hook-path "$hook" --realtime +1d
has_attach=$(printf '%s\n' '{"version":1,"id":1,"op":"hello"}' |
        python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(int("attach" in json.loads(s.makefile().readline())["result"]["capabilities"]))' "$dir/sock")

# crun 1.8.1 refuses this machine's hybrid cgroups: a private mount
# namespace without /sys/fs/cgroup/unified (as tests/bats/oci-helpers.bash).
# shellcheck disable=SC2016 # expanded by that sh
crun_cmd=(unshare -m --propagation private sh -c
        'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun --root "$0" "$@"' "$dir/crun-root")
runc_cmd=(runc --root "$dir/runc-root")

declare -A times=()
# one KEY RUNTIME BUNDLE: a run, its wall time (ms, 0.01) appended to KEY.
one() {
        local key=$1 rt=$2 b=$3 t0 t1 cmd
        if [[ $rt == crun ]]; then cmd=("${crun_cmd[@]}"); else cmd=("${runc_cmd[@]}"); fi
        t0=$(date +%s%N)
        if ! timeout 30 "${cmd[@]}" run --bundle "$dir/$b" "bench-$key" >/dev/null 2>>"$dir/errors"; then
                times[$key]+=" fail"
                return
        fi
        t1=$(date +%s%N)
        times[$key]+=" $(((t1 - t0) / 10000))"
}

variants=("runc plain runc plain" "runc agent runc agent")
[[ $has_attach == 1 ]] && variants+=("runc hook runc hook")
if command -v crun >/dev/null; then
        variants+=("crun plain crun plain" "crun agent crun agent")
        [[ $has_attach == 1 ]] && variants+=("crun hook crun hook")
fi
for v in "${variants[@]}"; do read -r rt b _ <<<"$v"; one "$rt-$b" "$rt" "$b"; done # warm-up
times=()
for ((i = 0; i < RUNS; i++)); do
        for v in "${variants[@]}"; do
                read -r rt b _ <<<"$v"
                one "$rt-$b" "$rt" "$b"
        done
done

# stat KEY: "median min" in ms, or n/a if any run failed.
stat() {
        local v=${times[$1]:-}
        if [[ -z $v || $v == *fail* ]]; then
                echo "n/a n/a"
                return
        fi
        tr ' ' '\n' <<<"$v" | grep . | sort -n |
                awk '{ a[NR] = $1 } END { printf "%.1f %.1f\n", a[int((NR + 1) / 2)] / 100, a[1] / 100 }'
}

printf '  %-34s %12s %12s %14s %8s\n' "" "median ms" "fastest ms" "added (median)" "ratio"
for rt in runc crun; do
        [[ -n ${times[$rt-plain]:-} ]] || continue
        read -r base _ <<<"$(stat "$rt-plain")"
        for b in plain agent hook; do
                local_label="$rt, $b"
                [[ $b == agent ]] && local_label="$rt, timens seccomp agent"
                [[ $b == hook ]] && local_label="$rt, timens hook"
                if [[ -z ${times[$rt-$b]:-} ]]; then
                        [[ $b == hook ]] && printf '  %-34s %s\n' "$local_label" \
                                "not measured: timensd has no attach yet (the hook needs it)"
                        continue
                fi
                read -r med min <<<"$(stat "$rt-$b")"
                # "added ratio": the median's difference and quotient to plain's.
                read -r added ratio <<<"$(awk -v a="$med" -v b="$base" 'BEGIN {
                        if (a == "n/a" || b == "n/a" || b == 0) print "n/a n/a"; else printf "%+.1fms %.2f\n", a - b, a / b }')"
                [[ $b == plain ]] && added=-
                printf '  %-34s %12s %12s %14s %8s\n' "$local_label" "$med" "$min" "${added/ms/ ms}" "$ratio"
        done
done
worst=$(for rt in runc crun; do
        read -r base _ <<<"$(stat "$rt-plain")"
        for b in agent hook; do
                [[ -n ${times[$rt-$b]:-} ]] || continue
                read -r med _ <<<"$(stat "$rt-$b")"
                awk -v a="$med" -v b="$base" 'BEGIN { if (a != "n/a" && b != "n/a") printf "%.1f\n", a - b }'
        done
done | sort -n | tail -1)
if [[ -z $worst ]]; then
        echo "  => not measured"
elif awk -v w="$worst" -v g="$GOAL_MS" 'BEGIN { exit !(w <= g) }'; then
        echo "  => timens adds at most $worst ms to a start: meets the goal (<= +$GOAL_MS ms)"
else
        echo "  => timens adds up to $worst ms to a start: MISSES the goal (<= +$GOAL_MS ms)"
fi
if [[ -s $dir/errors ]]; then
        echo "  errors:"
        sed 's/^/    /' "$dir/errors" | head -5
fi
