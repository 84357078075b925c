#!/usr/bin/env bats
# Entrants of real containers: `runc exec` / `crun exec` into a container
# started in hook mode (timensd attached its init, its pid namespace is
# watched). The exec'd program comes from outside the container's process
# tree; timensd's BPF program holds it at its exec, and its very first
# clock read is the container's.

# $DAEMON_DIR, $OCI_DIR: daemon-helpers.bash, setup.
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers
load oci-helpers

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
        # The watch starts once timensd serves (an idle-time source):
        # its line, or the reason it has none, comes after it is ready.
        wait_for_line "$DAEMON_DIR/log" "Watching execs for entrants\|entrants are not attached"
        grep -q "Watching execs for entrants with BPF" "$DAEMON_DIR/log" ||
                skip "timensd could not load its BPF program here: $(grep -i bpf "$DAEMON_DIR/log")"
        OCI_DIR=$(mktemp -d "$DAEMON_DIR/oci.XXXXXX")
}

teardown() {
        oci_cleanup
        daemon_teardown
}

near() {
        local d=$(($2 - $3))
        ((d >= -1 && d <= 1)) || fail "$1: got $2, want $3"
}

exec_entrant_test() {
        local rt=$1 b p m want
        requires_runtime "$rt"
        b="$OCI_DIR/e-$rt"
        oci_bundle "$b" "$ROOTFS" /bin/sleep 60
        tns oci-config "$b" --hook-path "$BUILDDIR/timens-oci-hook" --realtime +10d || fail "oci-config failed"
        "${rt}_" run --detach --bundle "$b" "e-$rt" </dev/null >/dev/null 2>&1 || fail "$rt run -d failed"
        for p in clockprobe clockprobe-static; do
                for m in --vdso ""; do
                        # shellcheck disable=SC2086 # $m: an option or none
                        run -0 "${rt}_" exec "e-$rt" "/bin/$p" $m --sec realtime
                        want=$(($("$HELPERS/clockprobe" --sec realtime) + 10 * 86400))
                        near "$rt exec $p $m: its first read" "$output" "$want"
                done
        done
        grep -q "Entrant attached to namespace" "$DAEMON_DIR/log" || fail "no entrant was attached"
        "${rt}_" kill "e-$rt" KILL
        "${rt}_" delete --force "e-$rt"
}

@test "runc exec into a hook-mode container: the entrant's first clock read is shifted" {
        exec_entrant_test runc
}

@test "crun exec into a hook-mode container: the entrant's first clock read is shifted" {
        exec_entrant_test crun
}
