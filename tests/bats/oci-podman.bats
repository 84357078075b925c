#!/usr/bin/env bats
# podman (rootful, storage and configuration in a test directory, an image
# imported from the busybox-static rootfs: no registry is reachable here)
# with runc and crun: the hooks.d file of contrib/oci-hook matching
# org.timens.* annotations, and the seccomp agent profile of
# `timensctl oci-config --print-seccomp-profile`.

# shellcheck disable=SC2154,SC2153,SC2030,SC2031,SC2016 # run sets output/status/stderr; sh -c scripts
load helpers
load daemon-helpers
load oci-helpers

setup_file() {
        requires_root
        requires_timensctl
        requires_timensd
        requires_runtime podman
        build_helpers clockprobe clockprobe-static
        make -s -C "$ROOT" BUILDDIR="$BUILDDIR" "$BUILDDIR/timens-oci-hook" >&2 || fail "could not build the hook"
        export PODMAN_DIR="$BATS_FILE_TMPDIR/podman"
        mkdir -p "$PODMAN_DIR"
        cat >"$PODMAN_DIR/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "none"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
        cat >"$PODMAN_DIR/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$PODMAN_DIR/graph"
runroot = "$PODMAN_DIR/run"
CONF
        export CONTAINERS_CONF="$PODMAN_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$PODMAN_DIR/storage.conf"
        oci_build_rootfs "$BATS_FILE_TMPDIR/rootfs"
        tar -C "$BATS_FILE_TMPDIR/rootfs" -cf "$PODMAN_DIR/rootfs.tar" .
        timeout 60 podman import "$PODMAN_DIR/rootfs.tar" localhost/timens-bb >/dev/null || fail "podman import failed"
}

teardown_file() {
        [ -n "${PODMAN_DIR:-}" ] || return 0
        timeout 60 podman rm --all --force >/dev/null 2>&1 || true
        timeout 60 podman rmi --all --force >/dev/null 2>&1 || true
}

setup() {
        start_daemon
        HOOKS="$DAEMON_DIR/hooks.d"
        mkdir -p "$HOOKS"
        # The installed files, pointed at this build and this daemon.
        local f
        for f in timens timens-poststop; do
                sed "s|@HOOK@|$BUILDDIR/timens-oci-hook|; s|\"timens-oci-hook\",|\"timens-oci-hook\", \"--socket\", \"$SOCK\",|" \
                        "$ROOT/contrib/oci-hook/$f.json.in" >"$HOOKS/$f.json"
        done
}

teardown() {
        daemon_teardown
}

# podman_ RUNTIME ARGS...: podman run --rm with that runtime (crun in the
# private mount namespace it needs here).
podman_() {
        local rt=$1
        shift
        if [ "$rt" = crun ]; then
                timeout -k 5 60 unshare -m --propagation private sh -c \
                        'umount /sys/fs/cgroup/unified 2>/dev/null; exec podman "$@"' podman \
                        --hooks-dir "$HOOKS" run --rm --runtime crun "$@"
        else
                timeout -k 5 60 podman --hooks-dir "$HOOKS" run --rm --runtime runc "$@"
        fi
}

requires_attach() {
        api '{"version":1,"id":1,"op":"hello"}' | python3 -c '
import json, sys
sys.exit(0 if "attach" in json.load(sys.stdin)["result"].get("capabilities", []) else 1)' ||
                skip "timensd has no attach operation yet (issue 7, the attach helper's piece): hook mode cannot run"
}

# The date, boottime and /proc/uptime inside, checked against the host
# around the run.
check_inside() {
        local d boot up host_boot
        d=$(sed -n 1p <<<"$output")
        boot=$(sed -n 2p <<<"$output")
        up=$(sed -n 3p <<<"$output" | cut -d' ' -f1)
        up=${up%%.*}
        host_boot=$(host_ns boottime)
        assert_within "date +%s" $(((d - 1000 * 86400) * NSEC_PER_SEC)) $((t0 - NSEC_PER_SEC)) "$(host_ns realtime)"
        assert_near "CLOCK_BOOTTIME" $((boot - 10 * 86400 * NSEC_PER_SEC)) "$host_boot" $((3 * NSEC_PER_SEC))
        [ -n "$up" ] || fail "no /proc/uptime line: $output"
        assert_near "/proc/uptime" $(((up - 10 * 86400) * NSEC_PER_SEC)) "$host_boot" $((3 * NSEC_PER_SEC))
}

INSIDE='date +%s; clockprobe-static --vdso --ns boottime; cat /proc/uptime'

hooksd_test() {
        requires_runtime "$1"
        requires_attach
        t0=$(host_ns realtime)
        run -0 --separate-stderr podman_ "$1" --annotation org.timens.realtime=+1000d --annotation org.timens.boottime=+10d \
                localhost/timens-bb /bin/sh -c "$INSIDE"
        check_inside
}

@test "podman + runc through hooks.d: annotations set the clocks" {
        hooksd_test runc
}

@test "podman + crun through hooks.d: annotations set the clocks" {
        hooksd_test crun
}

malformed_test() {
        requires_runtime "$1"
        run --separate-stderr podman_ "$1" --annotation org.timens.boottime=yesterday localhost/timens-bb /bin/true
        [ "$status" -ne 0 ] || fail "podman started the container"
        # podman shows crun's own error line only (from crun's log), not
        # what crun's hooks print: the hook's message is runc's alone.
        if [ "$1" = crun ]; then
                [[ "$stderr" == *"error executing hook"*"timens-oci-hook"* ]] || fail "no hook error: $stderr"
                return 0
        fi
        [[ "$stderr" == *"annotation org.timens.boottime: 'yesterday' is not an offset"* ]] ||
                fail "no clear message: $stderr"
}

@test "podman + runc through hooks.d: a malformed annotation fails with a clear message" {
        malformed_test runc
}

@test "podman + crun through hooks.d: a malformed annotation fails with a clear message" {
        malformed_test crun
}

profile_test() {
        requires_runtime "$1"
        tns oci-config --print-seccomp-profile --agent-socket "$DAEMON_DIR/seccomp-agent.sock" --realtime +1000d \
                --boottime +10d >"$DAEMON_DIR/profile.json"
        t0=$(host_ns realtime)
        run -0 --separate-stderr podman_ "$1" --security-opt "seccomp=$DAEMON_DIR/profile.json" localhost/timens-bb \
                /bin/sh -c "$INSIDE"
        check_inside
        wait_namespaces 0
}

@test "podman + runc, seccomp agent profile: the clocks of listenerMetadata" {
        profile_test runc
}

@test "podman + crun, seccomp agent profile: the clocks of listenerMetadata" {
        profile_test crun
}
