# shellcheck shell=bash
# For tests/bats/systemd.bats (after `load helpers`): this machine's real
# systemd as PID 1 of private namespaces (tests/tools/systemd-ns), with
# timensd's units installed into it, and commands run inside it.

SYSTEMD_NS="$ROOT/tests/tools/systemd-ns"

requires_systemd() {
        [ -x /lib/systemd/systemd ] || skip "no systemd on this machine (/lib/systemd/systemd)"
        command -v nsenter >/dev/null || skip "nsenter is missing (util-linux)"
}

# boot_systemd [DROP-IN TEXT for timensd.service]: boots it with the units
# of systemd/ pointing at this build; SNS_PID is its PID 1 on the host.
boot_systemd() {
        SNS_DIR=$(mktemp -d "${BATS_FILE_TMPDIR:-/tmp}/sns.XXXXXX")
        mkdir -p "$SNS_DIR/units"
        sed "s|@SBINDIR@|$BUILDDIR|" "$ROOT/systemd/timensd.service.in" >"$SNS_DIR/units/timensd.service"
        cp "$ROOT/systemd/timensd.socket" "$ROOT/systemd/timensd-agent.socket" "$SNS_DIR/units/"
        if [ -n "${1:-}" ]; then
                mkdir -p "$SNS_DIR/units/timensd.service.d"
                printf '%s\n' "$1" >"$SNS_DIR/units/timensd.service.d/test.conf"
        fi
        SNS_PID=$(timeout 30 "$SYSTEMD_NS" start "$SNS_DIR" "$SNS_DIR/units") || fail "systemd did not boot"
        sns systemctl start timensd.socket timensd-agent.socket
}

stop_systemd() {
        [ -n "${SNS_DIR:-}" ] || return 0
        timeout 30 "$SYSTEMD_NS" stop "$SNS_DIR" || true
        SNS_DIR=
}

# sns CMD...: CMD inside its pid and mount namespaces, bounded.
sns() {
        timeout -k 5 "$TIMEOUT" nsenter -t "$SNS_PID" -m -p "$@"
}

sns_ctl() {
        sns "$TIMENSCTL" "$@"
}

main_pid() {
        sns systemctl show -p MainPID --value timensd.service
}

# The host pid of timensd (for /proc/PID/fd from here).
host_pid_of_timensd() {
        local p
        for p in $(pgrep -x timensd); do
                [ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$SNS_PID/ns/pid")" ] && echo "$p" && return 0
        done
        return 1
}

# Waits until timensd's main pid is neither 0 nor $1 and it answers, up
# to 20 s of wall time (a loaded machine: each look is two commands).
wait_restarted() {
        local old=$1 p end=$((SECONDS + 20))
        while ((SECONDS < end)); do
                p=$(main_pid)
                if [ -n "$p" ] && [ "$p" != 0 ] && [ "$p" != "$old" ] && sns_ctl list >/dev/null 2>&1; then
                        return 0
                fi
                sleep 0.02
        done
        fail "timensd did not come back (main pid $(main_pid)): $(sns journalctl -u timensd --no-pager | tail -20)"
}

# What `timensctl list` shows that must survive restarts: id, name,
# origin, parent, offsets (the CALLS column counts per process).
list_state() {
        sns_ctl list | awk 'NR > 1 && NF >= 8 { print $1, $2, $3, $4, $6, $7, $8 }'
}

# kill -9 of timensd, then until its successor answers.
kill9_timensd() {
        local old
        old=$(main_pid)
        sns kill -9 "$old"
        wait_restarted "$old"
}

# kill -9 of timensd: its successor has the same namespaces, offsets and
# all (list_state).
kill9_keeps_state() {
        local before after
        before=$(list_state)
        kill9_timensd
        after=$(list_state)
        [ "$before" = "$after" ] || fail "before: $before / after: $after"
}
