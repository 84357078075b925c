#!/usr/bin/env bats
# Containers: runc and crun (real runtimes, a busybox-static bundle), in
# the seccomp agent mode (linux.seccomp.listenerPath, timensd's agent
# socket) and the hook mode (timens-oci-hook at createRuntime), with the
# bundle edited by `timensctl oci-config`. Every clock is read inside by a
# dynamic and a static probe, through the vDSO and the raw syscall, and
# compared with the host's readings taken just before and after.

# shellcheck disable=SC2154,SC2153,SC2030,SC2031,SC2016 # run sets output/status/stderr; sh -c scripts
load helpers
load daemon-helpers
load oci-helpers

REALTIME_CLOCKS=(CLOCK_REALTIME CLOCK_REALTIME_COARSE gettimeofday time)
MONOTONIC_CLOCKS=(CLOCK_MONOTONIC CLOCK_MONOTONIC_RAW CLOCK_MONOTONIC_COARSE)
BOOTTIME_CLOCKS=(CLOCK_BOOTTIME)
REAL_OFF=+1000d
REAL_OFF_NS=$((1000 * 86400 * NSEC_PER_SEC))
MONO_OFF=+2h
MONO_OFF_NS=$((7200 * NSEC_PER_SEC))
BOOT_OFF=+10d
BOOT_OFF_NS=$((10 * 86400 * NSEC_PER_SEC))
# What the container prints: each probe, raw syscalls and vDSO, marked.
LISTING='echo "date $(date +%s)"; echo "uptime $(cat /proc/uptime)"; for p in clockprobe clockprobe-static; do for m in "" --vdso; do echo "== $p$m"; $p $m; done; done'

setup_file() {
        requires_root
        requires_timensctl
        requires_timensd
        build_helpers clockprobe clockprobe-static
        make -s -C "$ROOT" BUILDDIR="$BUILDDIR" "$BUILDDIR/timens-oci-hook" >&2 || fail "could not build the hook"
        export ROOTFS="$BATS_FILE_TMPDIR/rootfs"
        oci_build_rootfs "$ROOTFS"
}

setup() {
        requires_root
        start_daemon
        OCI_DIR=$(mktemp -d "$DAEMON_DIR/oci.XXXXXX")
        AGENT="$DAEMON_DIR/seccomp-agent.sock"
        HOOK="$BUILDDIR/timens-oci-hook"
}

teardown() {
        oci_cleanup
        daemon_teardown
}

# Hook mode needs timensd's attach (seize a running process, inject the
# filter): skip until it is there.
requires_attach() {
        api '{"version":1,"id":1,"op":"hello"}' | python3 -c '
import json, sys
sys.exit(0 if "attach" in json.load(sys.stdin)["result"].get("capabilities", []) else 1)' ||
                skip "timensd has no attach operation yet (issue 7, the attach helper's piece): hook mode cannot run"
}

# bundle NAME [oci-config args...]: a bundle printing $LISTING.
bundle() {
        local b="$OCI_DIR/$1"
        shift
        oci_bundle "$b" "$ROOTFS" /bin/sh -c "$LISTING"
        [ $# -eq 0 ] || tns oci-config "$b" "$@" || fail "oci-config $* failed"
        echo "$b"
}

# run_listing RUNTIME BUNDLE ID: runs it between two host listings.
run_listing() {
        host_before=$("$HELPERS/clockprobe")
        oci_run "$1" "$2" "$3"
        host_after=$("$HELPERS/clockprobe")
        [ "$status" -eq 0 ] || fail "$1 run failed ($status): $stderr"
        listing=$output
}

# section MARK: one probe's listing out of $listing.
section() {
        awk -v m="== $1" '$0 == m { on = 1; next } /^== / { on = 0 } on' <<<"$listing"
}

check_shift() {
        local ns=$1 off=$2 name v lo hi
        shift 2
        for name in "$@"; do
                v=$(probe_ns "$name" <<<"$ns")
                lo=$(probe_ns "$name" <<<"$host_before")
                hi=$(probe_ns "$name" <<<"$host_after")
                assert_within "$name shifted by $(fmt_ns "$off")" $((v - off)) "$lo" "$hi"
        done
}

# Every probe, both ways, sees the three offsets.
check_listing() {
        local p ns
        for p in clockprobe clockprobe--vdso clockprobe-static clockprobe-static--vdso; do
                ns=$(section "$p")
                [ -n "$ns" ] || fail "no listing of $p in: $listing"
                check_shift "$ns" "$REAL_OFF_NS" "${REALTIME_CLOCKS[@]}" || fail "($p)"
                check_shift "$ns" "$MONO_OFF_NS" "${MONOTONIC_CLOCKS[@]}" || fail "($p)"
                check_shift "$ns" "$BOOT_OFF_NS" "${BOOTTIME_CLOCKS[@]}" || fail "($p)"
        done
        local d
        d=$(awk '$1 == "date" { print $2 }' <<<"$listing")
        assert_within "date +%s" $((d * NSEC_PER_SEC - REAL_OFF_NS)) \
                $(($(probe_ns CLOCK_REALTIME <<<"$host_before") - NSEC_PER_SEC)) "$(probe_ns CLOCK_REALTIME <<<"$host_after")"
}

# /proc/uptime inside: the host's boottime plus the offset (timensd's
# FUSE cover over the container's own proc mount).
check_uptime() {
        local up
        up=$(awk '$1 == "uptime" { print $2 }' <<<"$listing")
        up=${up%%.*}
        [ -n "$up" ] || fail "no uptime in the listing: $listing"
        assert_near "/proc/uptime" $((up * NSEC_PER_SEC)) \
                $(($(probe_ns CLOCK_BOOTTIME <<<"$host_before") + BOOT_OFF_NS)) $((2 * NSEC_PER_SEC))
}

# agent_test RUNTIME [noNewPrivileges]
agent_test() {
        local rt=$1 nnp=${2:-True} b
        requires_runtime "$rt"
        b=$(bundle "a-$rt" --agent --agent-socket "$AGENT" --realtime "$REAL_OFF" --monotonic "$MONO_OFF" \
                --boottime "$BOOT_OFF")
        oci_config_set "$b" "c['process']['noNewPrivileges'] = $nnp"
        run_listing "$rt" "$b" "agent-$rt"
        check_listing
        # The listener hung up with the container's last process.
        wait_namespaces 0
        grep -q "Serving container agent-$rt" "$DAEMON_DIR/log" || fail "timensd did not log the container"
        check_uptime
}

@test "runc, agent mode: every clock inside, static and dynamic, vDSO and syscall" {
        agent_test runc
}

# Without no_new_privs runc installs the filter early, while its own init
# still runs (libcontainer/standard_init_linux.go): the listener reaches
# timensd before the container's program is exec'd, and that exec gets
# our vDSO like any other (the static probe's vDSO reads say so).
@test "runc, agent mode, noNewPrivileges false: the filter comes early, the exec still gets the vDSO" {
        agent_test runc False
}

@test "crun, agent mode: every clock inside, static and dynamic, vDSO and syscall" {
        agent_test crun
}

hook_test() {
        local rt=$1 b
        requires_runtime "$rt"
        requires_attach
        b=$(bundle "h-$rt" --hook-path "$HOOK" --realtime "$REAL_OFF" --monotonic "$MONO_OFF" --boottime "$BOOT_OFF")
        run_listing "$rt" "$b" "hook-$rt"
        check_listing
        check_uptime
}

@test "runc, hook mode: every clock inside, static and dynamic, vDSO and syscall" {
        hook_test runc
}

@test "crun, hook mode: every clock inside, static and dynamic, vDSO and syscall" {
        hook_test crun
}

@test "hook mode: linux.timeOffsets is honoured (the runtimes here ignore it)" {
        requires_runtime runc
        requires_attach
        local b
        b=$(bundle h-to --hook-path "$HOOK" --realtime "$REAL_OFF")
        oci_config_set "$b" "c['linux']['timeOffsets'] = {'monotonic': {'secs': 7200, 'nanosecs': 0}, 'boottime': {'secs': 864000}}"
        run_listing runc "$b" hook-to
        check_listing
        check_uptime
}

# A namespace of a container's name that exists already is joined only
# with the clocks the container asks for: a container started first under
# a name cannot give the next one of that name its own clocks. The name
# alone joins (shared clocks, as asked).
@test "hook mode: a container does not get the clocks of another's namespace of its name: other clocks are refused, the name alone joins" {
        requires_runtime runc
        requires_attach
        local b
        b="$OCI_DIR/first"
        oci_bundle "$b" "$ROOTFS" /bin/sleep 60
        tns oci-config "$b" --hook-path "$HOOK" --realtime +1000d --name ci-x >/dev/null
        runc_ run --detach --bundle "$b" first </dev/null >/dev/null 2>&1 || fail "runc run -d first failed"
        wait_namespaces 1
        b=$(bundle second --hook-path "$HOOK" --realtime +1d --name ci-x)
        oci_run runc "$b" second
        [ "$status" -ne 0 ] || fail "the second container started with another's clocks: $output"
        [[ "$stderr" == *"cannot join namespace 'ci-x'"*"realtime"*"+1000d"* ]] || fail "no reason: $stderr"
        # The first is untouched; a container naming it alone shares it.
        run -0 tns show ci-x
        [[ "$output" == *"Realtime: +1000d"* ]] || fail "$output"
        b=$(bundle third --hook-path "$HOOK" --name ci-x)
        run_listing runc "$b" third
        local r
        r=$(section clockprobe | probe_ns CLOCK_REALTIME)
        assert_within "CLOCK_REALTIME of the joiner - 1000d" $((r - 1000 * 86400 * NSEC_PER_SEC)) \
                "$(probe_ns CLOCK_REALTIME <<<"$host_before")" "$(probe_ns CLOCK_REALTIME <<<"$host_after")"
        runc_ kill first KILL
        runc_ delete --force first
        wait_namespaces 0
}

# The same with a rate: a namespace frozen at a date (org.timens.faketime)
# is no namespace for a container that asks for another date, nor for one
# that asks for that date without the freeze.
@test "hook mode: a container asking for a date does not join a frozen namespace of its name" {
        requires_runtime runc
        requires_attach
        local b
        b="$OCI_DIR/frozen"
        oci_bundle "$b" "$ROOTFS" /bin/sleep 60
        tns oci-config "$b" --hook-path "$HOOK" --name shared >/dev/null
        oci_config_set "$b" "c['annotations']['org.timens.faketime'] = '1999-01-01 00:00:00'"
        TZ=UTC runc_ run --detach --bundle "$b" frozen </dev/null >/dev/null 2>&1 || fail "runc run -d frozen failed"
        wait_namespaces 1
        b=$(bundle later --hook-path "$HOOK" --realtime 2030-01-01 --name shared)
        oci_run runc "$b" later
        [ "$status" -ne 0 ] || fail "a container asking for 2030 joined a namespace frozen at 1999: $output"
        [[ "$stderr" == *"cannot join namespace 'shared'"* ]] || fail "no reason: $stderr"
        b=$(bundle same-date --hook-path "$HOOK" --realtime 1999-01-01T00:00:00Z --name shared)
        oci_run runc "$b" same-date
        [ "$status" -ne 0 ] || fail "a container asking for 1999 at rate 1 joined a frozen namespace: $output"
        [[ "$stderr" == *"rate"* ]] || fail "no reason: $stderr"
        runc_ kill frozen KILL
        runc_ delete --force frozen
        wait_namespaces 0
}

# Without the runtime shim (hooks.d, or config.json by hand), the init of
# a container in the host's kernel time namespace is made to unshare one at
# its attach: the container's program and its children are in it.
@test "hook mode without the shim: the container's programs have a kernel time namespace of their own, which show names" {
        requires_runtime runc
        requires_attach
        requires_kernel_timens
        local b host ns
        host=$(readlink /proc/self/ns/time)
        b="$OCI_DIR/ident"
        oci_bundle "$b" "$ROOTFS" /bin/sh -c 'readlink /proc/self/ns/time; sleep 0 & readlink /proc/$!/ns/time'
        tns oci-config "$b" --hook-path "$HOOK" --monotonic +1d >/dev/null
        oci_run runc "$b" ident
        [ "$status" -eq 0 ] || fail "runc: $stderr"
        ns=$(sed -n 1p <<<"$output")
        [[ "$ns" == time:\[*\] ]] || fail "$output"
        [ "$ns" != "$host" ] || fail "the container's program is in the host's time namespace $host"
        [ "$(sed -n 2p <<<"$output")" = "$ns" ] || fail "its child is elsewhere: $output"
        # Two containers at once, two namespaces; show names each one's.
        local id pid a=()
        for id in ident2 ident3; do
                b="$OCI_DIR/$id"
                oci_bundle "$b" "$ROOTFS" /bin/sleep 60
                tns oci-config "$b" --hook-path "$HOOK" --monotonic +1d >/dev/null
                runc_ run --detach --bundle "$b" "$id" </dev/null >/dev/null 2>&1 || fail "runc run -d $id failed"
                pid=$(runc_ state "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
                ns=$(readlink "/proc/$pid/ns/time")
                [ "$ns" != "$host" ] || fail "$id is in the host's time namespace"
                run -0 tns show "$id"
                [[ "$output" == *"Kernel ns: $ns"* ]] || fail "$output"
                a+=("$ns")
        done
        [ "${a[0]}" != "${a[1]}" ] || fail "two containers in one kernel time namespace: ${a[*]}"
        for id in ident2 ident3; do
                runc_ kill "$id" KILL
                runc_ delete --force "$id"
        done
}

# A container's namespace goes with its last process; poststop destroys
# nothing, so neither a container's end nor a failed create (runc runs
# poststop then too) takes a namespace that is not the container's own.
@test "hook mode: poststop leaves namespaces alone: timensctl create's outlives the containers that joined it" {
        requires_runtime runc
        requires_attach
        local b
        tns create prod --realtime +365d
        b=$(bundle joins --hook-path "$HOOK" --name prod)
        run_listing runc "$b" joins
        b=$(bundle refused --hook-path "$HOOK" --realtime +1d --name prod)
        oci_run runc "$b" refused
        [ "$status" -ne 0 ] || fail "a container with other clocks joined prod"
        b=$(bundle own --hook-path "$HOOK" --realtime +1d)
        run_listing runc "$b" own
        wait_namespaces 1
        run -0 tns show prod
        [[ "$output" == *"Realtime: +365d"* ]] || fail "prod changed: $output"
}

# kernel_timens_state MONO BOOT [ANNOTATIONS-JSON]: a process in a kernel
# time namespace with those offsets (what a runtime that honours
# linux.timeOffsets makes), a bundle asking the same in linux.timeOffsets,
# and the container state the hook gets for it, in $KT_STATE.
kernel_timens_state() {
        requires_kernel_timens
        setsid unshare -T --monotonic "$1" --boottime "$2" --fork sleep 60 </dev/null >/dev/null 2>&1 3>&- &
        BG_PIDS+=($!)
        for ((i = 0; i < 100; i++)); do
                KT_PID=$(pgrep -P "$!" -x sleep) && break
                sleep 0.02
        done
        [ -n "$KT_PID" ] || fail "no process in a kernel time namespace"
        kt_state "$@"
}

# kernel_timens_pre_exec_state MONO BOOT [ANNOTATIONS-JSON]: the same, for
# a process that made the kernel time namespace and wrote its offsets but
# is not in it yet (its time_for_children): it enters it at its next exec,
# as the init of a runtime that unshares CLONE_NEWTIME in it would.
kernel_timens_pre_exec_state() {
        local self
        requires_kernel_timens
        rm -f "$OCI_DIR/kt-ready"
        setsid python3 -c '
import ctypes, sys, time
if ctypes.CDLL(None, use_errno=True).unshare(0x80) != 0:  # CLONE_NEWTIME
    sys.exit(1)
with open("/proc/self/timens_offsets", "w") as f:
    f.write("monotonic %s 0\nboottime %s 0\n" % (sys.argv[1], sys.argv[2]))
open(sys.argv[3], "w").close()
time.sleep(60)' "$1" "$2" "$OCI_DIR/kt-ready" </dev/null >/dev/null 2>&1 3>&- &
        BG_PIDS+=($!)
        KT_PID=$!
        for ((i = 0; i < 100; i++)); do
                [ -e "$OCI_DIR/kt-ready" ] && break
                sleep 0.02
        done
        [ -e "$OCI_DIR/kt-ready" ] || fail "no process with a kernel time namespace for its children"
        self=$(readlink /proc/self/ns/time)
        [ "$(readlink "/proc/$KT_PID/ns/time")" = "$self" ] || fail "process $KT_PID is in a time namespace already"
        [ "$(readlink "/proc/$KT_PID/ns/time_for_children")" != "$self" ] ||
                fail "process $KT_PID made no time namespace for its children"
        kt_state "$@"
}

# kt_state MONO BOOT [ANNOTATIONS-JSON]: the bundle and $KT_STATE for $KT_PID.
kt_state() {
        local mono=$1 boot=$2 ann=${3:-"{}"} b="$OCI_DIR/kt"
        mkdir -p "$b"
        printf '{"ociVersion":"1.0.2","linux":{"timeOffsets":{"monotonic":{"secs":%d,"nanosecs":0},"boottime":{"secs":%d,"nanosecs":0}}}}' \
                "$mono" "$boot" >"$b/config.json"
        KT_STATE=$(printf '{"ociVersion":"1.0.2","id":"kt","status":"creating","pid":%d,"bundle":"%s","annotations":%s}' \
                "$KT_PID" "$b" "$ann")
}

# kt_refused MESSAGE: the hook refuses $KT_STATE, saying MESSAGE, and
# makes no namespace.
kt_refused() {
        run --separate-stderr "$HOOK" --socket "$SOCK" createRuntime <<<"$KT_STATE"
        [ "$status" -ne 0 ] || fail "the hook accepted it: $stderr"
        [[ "$stderr" == *"Container kt is in a kernel time namespace whose offsets are not what is asked ($1)"* ]] ||
                fail "$stderr"
        run -0 tns list
        [[ "$output" == "No namespaces." ]] || fail "a namespace was made: $output"
}

@test "hook: a container already in a kernel time namespace with the asked offsets gets nothing applied twice" {
        kernel_timens_state 500 700
        run -0 --separate-stderr "$HOOK" --socket "$SOCK" createRuntime <<<"$KT_STATE"
        [[ "$stderr" == *"kernel time namespace with the asked offsets already: nothing to do"* ]] || fail "$stderr"
        run -0 tns list
        [[ "$output" == "No namespaces." ]] || fail "a namespace was made: $output"
        # Its clocks are the kernel's: not moved a second time.
        want=$(($(host_ns monotonic) + 500 * NSEC_PER_SEC))
        got=$(nsenter -t "$KT_PID" -T "$HELPERS/clockprobe" --ns monotonic)
        assert_near "monotonic" "$got" "$want" $((2 * NSEC_PER_SEC))
}

@test "hook: an init whose kernel time namespace is its children's (entered at its exec) gets nothing applied twice" {
        kernel_timens_pre_exec_state 500 700
        run -0 --separate-stderr "$HOOK" --socket "$SOCK" createRuntime <<<"$KT_STATE"
        [[ "$stderr" == *"kernel time namespace with the asked offsets already: nothing to do"* ]] || fail "$stderr"
        run -0 tns list
        [[ "$output" == "No namespaces." ]] || fail "a namespace was made: $output"
}

@test "hook: a kernel time namespace with offsets and realtime asked too is refused with a clear message" {
        kernel_timens_state 500 700 '{"org.timens.realtime":"+1d"}'
        kt_refused "realtime asked, which a kernel time namespace does not shift"
}

@test "hook: a kernel time namespace with other offsets than the asked ones is refused, naming them" {
        kernel_timens_state 500 700 '{"org.timens.boottime":"+1h"}'
        kt_refused "boottime +11m40s there, +1h asked"
        kernel_timens_pre_exec_state 0 700 '{"org.timens.monotonic":"+1d","org.timens.boottime":"0"}'
        kt_refused "monotonic 0 there, +1d asked; boottime +11m40s there, 0 asked"
}

# A malformed annotation stops the container before its program runs, with
# a message naming the annotation, through the runtime's own error.
malformed_test() {
        local rt=$1 b
        requires_runtime "$rt"
        b=$(bundle "bad-$rt" --hook-path "$HOOK")
        oci_config_set "$b" "c['annotations']['org.timens.realtime'] = 'next tuesday'"
        oci_run "$rt" "$b" "bad-$rt"
        [ "$status" -ne 0 ] || fail "$rt started the container: $output"
        [[ "$stderr" == *"annotation org.timens.realtime: 'next tuesday' is not an offset or a date"* ]] ||
                fail "no clear message from $rt: $stderr"
        [[ "$output" != *"== clockprobe"* ]] || fail "the container's program ran: $output"
}

@test "runc, hook mode: a malformed annotation fails the start with a clear message" {
        malformed_test runc
}

@test "crun, hook mode: a malformed annotation fails the start with a clear message" {
        malformed_test crun
}

@test "runc, hook mode: org.timens.faketime freezes the container's clocks at a date, and runs them at a rate" {
        requires_runtime runc
        local b v
        b=$(bundle fake --hook-path "$HOOK")
        oci_config_set "$b" "c['annotations']['org.timens.faketime'] = '2030-01-01 00:00:00'
c['process']['args'] = ['/bin/sh', '-c', 'clockprobe --ns realtime; sleep 0.3; clockprobe --vdso --ns realtime']"
        TZ=UTC oci_run runc "$b" fake
        [ "$status" -eq 0 ] || fail "runc: $stderr"
        mapfile -t v <<<"$output"
        [ "${v[0]}" = "${v[1]}" ] || fail "not frozen: ${v[*]}"
        [ "${v[0]}" = $((1893456000 * NSEC_PER_SEC)) ] || fail "frozen at ${v[0]}, not at 2030-01-01"
        b=$(bundle fast --hook-path "$HOOK")
        oci_config_set "$b" "c['annotations']['org.timens.faketime'] = '+0 x4'
c['process']['args'] = ['/bin/sh', '-c', 'clockprobe --vdso --ns monotonic; sleep 8; clockprobe --ns monotonic']"
        local t0 t1
        t0=$(date +%s%N)
        oci_run runc "$b" fast
        t1=$(date +%s%N)
        [ "$status" -eq 0 ] || fail "runc: $stderr"
        mapfile -t v <<<"$output"
        # sleep 8 at x4 is 2 s of host time, and 8 s of the container's.
        ((v[1] - v[0] >= 8 * NSEC_PER_SEC && v[1] - v[0] < 12 * NSEC_PER_SEC)) ||
                fail "monotonic advanced $(fmt_ns $((v[1] - v[0]))) s over sleep 8 at x4"
        ((t1 - t0 < 6 * NSEC_PER_SEC)) || fail "sleep 8 at x4 took $(fmt_ns $((t1 - t0))) s of host time"
}

# libfaketime's FAKETIME_DONT_FAKE_MONOTONIC: the date stands, MONOTONIC
# runs at the host's pace (so that Go, Java and Python waits end).
@test "runc, hook mode: org.timens.faketime-dont-fake-monotonic freezes the date alone" {
        requires_runtime runc
        local b v
        b=$(bundle dfm --hook-path "$HOOK")
        oci_config_set "$b" "c['annotations']['org.timens.faketime'] = '2030-01-01 00:00:00'
c['annotations']['org.timens.faketime-dont-fake-monotonic'] = '1'
c['process']['args'] = ['/bin/sh', '-c', 'clockprobe --ns realtime; clockprobe --ns monotonic; sleep 0.3; clockprobe --vdso --ns realtime; clockprobe --vdso --ns monotonic']"
        TZ=UTC oci_run runc "$b" dfm
        [ "$status" -eq 0 ] || fail "runc: $stderr"
        mapfile -t v <<<"$output"
        [ "${v[0]}" = $((1893456000 * NSEC_PER_SEC)) ] && [ "${v[2]}" = "${v[0]}" ] || fail "date not frozen: ${v[*]}"
        ((v[3] - v[1] >= 250000000 && v[3] - v[1] < 5 * NSEC_PER_SEC)) || fail "monotonic did not run: ${v[*]}"
        b=$(bundle dfm-bad --hook-path "$HOOK")
        oci_config_set "$b" "c['annotations']['org.timens.faketime-dont-fake-monotonic'] = 'yes'"
        oci_run runc "$b" dfm-bad
        [ "$status" -ne 0 ] || fail "runc started it"
        [[ "$stderr$output" == *"org.timens.faketime-dont-fake-monotonic: 'yes' is neither 1"* ]] || fail "$stderr"
}

@test "agent mode: a malformed listenerMetadata keeps the program from running; timensd says why" {
        requires_runtime runc
        local b
        b=$(bundle bad-md --agent --agent-socket "$AGENT")
        oci_config_set "$b" "c['linux']['seccomp']['listenerMetadata'] = 'realtime=soon'"
        oci_run runc "$b" bad-md
        [ "$status" -ne 0 ] || fail "runc started the container: $output"
        [[ "$output" != *"== clockprobe"* ]] || fail "the container's program ran: $output"
        grep -q "container bad-md: listenerMetadata: 'soon' is not an offset or a date" "$DAEMON_DIR/log" ||
                fail "timensd's log does not say why: $(cat "$DAEMON_DIR/log")"
}

@test "agent mode: no agent listening, the runtime refuses to start the container" {
        requires_runtime runc
        local b
        b=$(bundle noagent --agent --agent-socket "$DAEMON_DIR/nobody.sock")
        oci_run runc "$b" noagent
        [ "$status" -ne 0 ] || fail "runc started the container: $output"
}

# A container that stays: `RUNTIME exec` into it, then kill and delete.
exec_test() {
        local rt=$1 b
        requires_runtime "$rt"
        b="$OCI_DIR/x-$rt"
        oci_bundle "$b" "$ROOTFS" /bin/sleep 60
        tns oci-config "$b" --agent --agent-socket "$AGENT" --realtime "$REAL_OFF" --boottime "$BOOT_OFF"
        "${rt}_" run --detach --bundle "$b" "x-$rt" </dev/null >/dev/null 2>&1 || fail "$rt run -d failed"
        wait_namespaces 1
        [ "$(tns list --json | json_get 'j["namespaces"][0]["name"]')" = "x-$rt" ] || fail "no namespace: $(tns list)"
        host_before=$("$HELPERS/clockprobe")
        run -0 "${rt}_" exec "x-$rt" /bin/clockprobe-static --vdso
        host_after=$("$HELPERS/clockprobe")
        check_shift "$output" "$REAL_OFF_NS" "${REALTIME_CLOCKS[@]}"
        check_shift "$output" "$BOOT_OFF_NS" "${BOOTTIME_CLOCKS[@]}"
        # The exec's listener joined the container's namespace.
        [ "$(namespaces_left)" = 1 ] || fail "one namespace expected: $(tns list)"
        # ... also once its clocks were set live (helper-44: the exec was
        # refused as another container's, and failed with ENOSYS).
        run -0 tns set "x-$rt" --realtime +2d
        host_before=$("$HELPERS/clockprobe")
        run -0 "${rt}_" exec "x-$rt" /bin/clockprobe-static --vdso
        host_after=$("$HELPERS/clockprobe")
        check_shift "$output" $((2 * 86400 * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
        [ "$(namespaces_left)" = 1 ] || fail "one namespace expected: $(tns list)"
        "${rt}_" kill "x-$rt" KILL
        "${rt}_" delete --force "x-$rt"
        wait_namespaces 0
}

@test "runc, agent mode: runc exec sees the container's clocks; kill and delete leave no namespace" {
        exec_test runc
}

@test "crun, agent mode: crun exec sees the container's clocks; kill and delete leave no namespace" {
        exec_test crun
}

@test "agent mode: a runtime that exited before timensd read its message (runc run -d, not yet reaped) still has its container served" {
        requires_runtime runc
        local b
        b="$OCI_DIR/gone"
        oci_bundle "$b" "$ROOTFS" /bin/sleep 60
        tns oci-config "$b" --agent --agent-socket "$AGENT" --realtime "$REAL_OFF"
        # timensd stopped, runc run -d sends its message and exits; its
        # parent reaps it only after timensd has read the message: runc is
        # a zombie then and its init the reaper's (signal 0 still reaches
        # a zombie: that was taken for a live runtime naming a stranger).
        kill -STOP "$DAEMON_PID"
        python3 - "$DAEMON_PID" runc --root "$OCI_DIR/runc-root" run --detach --bundle "$b" gone <<'PY' ||
import os, subprocess, sys, time
daemon = int(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(400):
    if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG):
        break
    time.sleep(0.05)
else:
    os.kill(daemon, 18)
    sys.exit("runc run -d did not exit")
os.kill(daemon, 18)  # SIGCONT: it reads the message of a zombie runtime
time.sleep(1)
sys.exit(p.wait())
PY
                { kill -CONT "$DAEMON_PID"; fail "runc run -d failed"; }
        wait_namespaces 1
        grep -q "Container gone: the runtime (process [0-9]*) exited before process [0-9]* could be checked" \
                "$DAEMON_DIR/log" || fail "$(cat "$DAEMON_DIR/log")"
        ! grep -q "Refusing the seccomp listener of container gone" "$DAEMON_DIR/log" || fail "$(cat "$DAEMON_DIR/log")"
        # Served: the container's process reads the shifted clock.
        host_before=$("$HELPERS/clockprobe")
        run -0 runc_ exec gone /bin/clockprobe-static --vdso
        host_after=$("$HELPERS/clockprobe")
        check_shift "$output" "$REAL_OFF_NS" "${REALTIME_CLOCKS[@]}"
        runc_ kill gone KILL
        runc_ delete --force gone
        wait_namespaces 0
}

# agent_send [--as-nobody] PAYLOAD [FD-FILE]: one client of the agent
# socket, as a runtime is (the payload and, if given, an fd with it).
agent_send() {
        local pre=(python3)
        if [ "$1" = --as-nobody ]; then
                # The system's python: a user's pyenv is not nobody's.
                pre=("${NOBODY[@]}" /usr/bin/python3)
                shift
        fi
        "${pre[@]}" - "$AGENT" "$@" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
fds = [os.open(sys.argv[3], os.O_RDONLY)] if len(sys.argv) > 3 else []
socket.send_fds(s, [sys.argv[2].encode()], fds)
s.shutdown(socket.SHUT_WR)
s.recv(1)
PY
}

@test "agent socket: garbage, a missing fd, a non-listener fd, another's pid and strangers are refused; timensd serves on" {
        requires_runtime runc
        requires_setpriv
        local b
        agent_send 'not json at all'
        agent_send '{"ociVersion":"1.0.2","fds":["seccompFd"],"pid":1,"state":{"id":"nofd","pid":1}}'
        # pid 0, as crun exec's message says: no process to check first.
        agent_send '{"ociVersion":"1.0.2","fds":["seccompFd"],"pid":0,"state":{"id":"notalistener","pid":0}}' /dev/null
        # A process that is not the runtime's (here: pid 1).
        agent_send '{"ociVersion":"1.0.2","fds":["seccompFd"],"pid":1,"state":{"id":"notmine","pid":1}}' /dev/null
        agent_send '{"ociVersion":"1.0.2","fds":[],"state":{"id":"nofds"}}'
        chmod 755 "$DAEMON_DIR"
        # The socket is root's (0600): a stranger cannot even connect.
        [ "$(stat -c %a "$AGENT")" = 600 ] || fail "the agent socket is mode $(stat -c %a "$AGENT")"
        run agent_send --as-nobody '{"state":{"id":"stranger"}}'
        [[ $output == *PermissionError* ]] || fail "nobody could connect to the agent socket: $output"
        grep -q "A seccomp agent message is not JSON" "$DAEMON_DIR/log" || fail "no log of the garbage"
        grep -q "container nofd: \"seccompFd\" is fd 0 of the message, which brought 0" "$DAEMON_DIR/log" ||
                fail "no log of the missing fd"
        grep -q "container notalistener: the fd named \"seccompFd\" is not a seccomp listener" "$DAEMON_DIR/log" ||
                fail "no log of the bad fd"
        grep -q "container nofds: the message names no" "$DAEMON_DIR/log" || fail "no log of fds []"
        grep -q "container notmine: process 1 (parent 0) is not a descendant of the client" "$DAEMON_DIR/log" ||
                fail "no log of the process that is not the runtime's"
        [ "$(namespaces_left)" = 0 ] || fail "a refused message left a namespace: $(tns list)"
        b=$(bundle after --agent --agent-socket "$AGENT" --realtime "$REAL_OFF" --monotonic "$MONO_OFF" \
                --boottime "$BOOT_OFF")
        run_listing runc "$b" after
        check_listing
}

@test "oci-config: hook mode edits in place, keeps the rest, is idempotent" {
        local b
        b="$OCI_DIR/cfg"
        oci_bundle "$b" "$ROOTFS" /bin/true
        oci_config_set "$b" "c['annotations'] = {'keep.me': 'yes'}; c['hooks'] = {'createRuntime': [{'path': '/bin/other'}]}"
        run -0 tns oci-config "$b" --realtime 2030-01-01T00:00:00Z --boottime +1d --name web --hook-path /x/hook
        run -0 tns oci-config "$b" --realtime 2030-01-01T00:00:00Z --boottime +1d --name web --hook-path /x/hook
        run -0 python3 - "$b/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
hooks = c["hooks"]["createRuntime"]
assert [h["path"] for h in hooks] == ["/bin/other", "/x/hook"], hooks
a = c["annotations"]
assert a["keep.me"] == "yes" and a["org.timens.realtime"] == "2030-01-01T00:00:00Z", a
assert a["org.timens.boottime"] == "+1d" and a["org.timens.name"] == "web", a
assert c["process"]["args"] == ["/bin/true"], c["process"]
PY
        # A timensd on another socket is the hook's too (helper-44: the
        # hook went to the default one), and the agent's socket is beside it.
        run -0 python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hooks"]["createRuntime"][1]["args"])' \
                "$b/config.json"
        [ "$output" = "['timens-oci-hook', '--socket', '$SOCK']" ] || fail "$output"
        run -0 env -u TIMENS_SOCKET "$TIMENSCTL" oci-config "$b" --hook-path /x/hook
        run -0 python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hooks"]["createRuntime"][1]["args"])' \
                "$b/config.json"
        [ "$output" = "['timens-oci-hook']" ] || fail "$output"
        run -0 env -u TIMENS_SOCKET "$TIMENSCTL" --socket /x/t.sock oci-config --print-seccomp-profile
        [[ $output == *'"listenerPath":"/x/seccomp-agent.sock"'* || $output == *'"listenerPath": "/x/seccomp-agent.sock"'* ]] ||
                fail "$output"
}

@test "oci-config: agent mode, rules from the syscall table, idempotent, the bundle's own rules kept" {
        local b
        b="$OCI_DIR/cfg"
        oci_bundle "$b" "$ROOTFS" /bin/true
        oci_config_set "$b" "c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['mount'], 'action': 'SCMP_ACT_ERRNO'}]}"
        run -0 tns oci-config "$b" --agent --agent-socket /x/agent.sock --monotonic 86400
        run -0 tns oci-config "$b" --agent --agent-socket /x/agent.sock --monotonic 86400
        run -0 tns oci-config --print-seccomp-profile --agent-socket /x/agent.sock --monotonic 86400
        run -0 python3 - "$b/config.json" "$output" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["linux"]["seccomp"]
p = json.loads(sys.argv[2])
assert s["listenerPath"] == "/x/agent.sock" and s["listenerMetadata"] == "monotonic=86400", s
assert s["syscalls"][0] == {"names": ["mount"], "action": "SCMP_ACT_ERRNO"}, s["syscalls"][0]
assert s["syscalls"][1:] == p["syscalls"], "the bundle's rules are not the profile's"
names = {n for r in p["syscalls"] if r["action"] == "SCMP_ACT_NOTIFY" for n in r["names"]}
assert {"clock_gettime", "gettimeofday", "time", "clock_settime", "execve", "unshare"} <= names, names
PY
}

@test "oci-config: a bad offset or bundle is refused with a clear message, the file untouched" {
        local b sum
        b="$OCI_DIR/cfg"
        oci_bundle "$b" "$ROOTFS" /bin/true
        sum=$(md5sum <"$b/config.json")
        run -1 tns oci-config "$b" --realtime 'next tuesday'
        [[ "$output" == *"Invalid --realtime 'next tuesday'"* ]] || fail "unclear: $output"
        run -1 tns oci-config "$b" --monotonic -1000000d
        [[ "$output" == *"--monotonic '-1000000d'"* ]] || fail "unclear: $output"
        run -1 tns oci-config "$b" --name 1234
        [[ "$output" == *"Invalid --name '1234'"* ]] || fail "unclear: $output"
        run -1 tns oci-config "$OCI_DIR/none"
        [[ "$output" == *"$OCI_DIR/none/config.json"* ]] || fail "unclear: $output"
        [ "$(md5sum <"$b/config.json")" = "$sum" ] || fail "config.json changed"
}
