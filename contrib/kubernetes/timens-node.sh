#!/bin/sh
# timens-node: what the DaemonSet of contrib/kubernetes/ runs on each node,
# from the image of contrib/kubernetes/Containerfile, with the node's root
# file system at $HOST (a hostPath, default /host).
#
#   timens-node install  copies timens-runtime, the hook and timensd to
#                        $HOST/opt/timens, writes $HOST/etc/timens/runtime.conf,
#                        and appends the CRI runtime handler "timens" to
#                        $HOST/etc/containerd/config.toml unless it is there
#   timens-node run      install, then serve the node's /run/timens:
#     TIMENSD_MODE=host-systemd (default where the node runs systemd):
#                        timensd.service and its sockets are installed into
#                        the node's systemd and started there (nsenter into
#                        PID 1's namespaces). timensd then lives outside the
#                        pod: a restart or upgrade of the pod does not touch
#                        it, and `systemctl restart timensd` keeps the
#                        containers served through systemd's fd store.
#     TIMENSD_MODE=pod   timensd runs in this pod (--foreground). A restart
#                        of the pod closes every seccomp listener it held:
#                        the containers it served get ENOSYS from then on.
#   RESTART_CONTAINERD=1 restarts containerd (on the node, by systemctl)
#                        when the handler was appended.
set -eu

HOST=${HOST:-/host}
SRC=/opt/timens
DEST=/opt/timens # on the node
mode=${TIMENSD_MODE:-auto}

log() { echo "timens-node: $*" >&2; }

on_node() { nsenter --target 1 --mount --uts --ipc --net --pid -- "$@"; }

install_files() {
        mkdir -p "$HOST$DEST/bin" "$HOST$DEST/sbin" "$HOST$DEST/libexec" "$HOST/etc/timens"
        # Beside, then renamed: a runtime starting meanwhile runs the old
        # file or the new, never half of one.
        for f in bin/timens-runtime libexec/timens-oci-hook sbin/timensd bin/timensctl; do
                cp "$SRC/$f" "$HOST$DEST/$f.new"
                mv -f "$HOST$DEST/$f.new" "$HOST$DEST/$f"
        done
        if [ ! -e "$HOST/etc/timens/runtime.conf" ]; then
                printf '%s\n' "# Written by timens-node (contrib/kubernetes); timens-runtime(8)." \
                        "runtime = runc" "mode = hook" "hook = $DEST/libexec/timens-oci-hook" \
                        "socket = /run/timens/timensd.sock" "timensd = $DEST/sbin/timensd" \
                        >"$HOST/etc/timens/runtime.conf"
        fi
        conf="$HOST/etc/containerd/config.toml"
        if [ -f "$conf" ] && ! grep -q 'runtimes\.timens\]' "$conf"; then
                sed "s|/usr/local/bin/timens-runtime|$DEST/bin/timens-runtime|" "$SRC/share/containerd-cri.toml" >>"$conf"
                log "appended the runtime handler timens to /etc/containerd/config.toml"
                if [ "${RESTART_CONTAINERD:-0}" = 1 ]; then
                        on_node systemctl restart containerd
                else
                        log "restart containerd on this node for the RuntimeClass timens to work"
                fi
        fi
        log "installed into $DEST"
}

install_units() {
        unitdir="$HOST/etc/systemd/system"
        mkdir -p "$unitdir"
        sed "s|@SBINDIR@|$DEST/sbin|" "$SRC/share/systemd/timensd.service.in" >"$unitdir/timensd.service"
        cp "$SRC/share/systemd/timensd.socket" "$SRC/share/systemd/timensd-agent.socket" "$unitdir/"
}

case "${1:-run}" in
install)
        install_files
        ;;
run)
        install_files
        if [ "$mode" = auto ]; then
                if [ -d "$HOST/run/systemd/system" ]; then mode=host-systemd; else mode=pod; fi
        fi
        case "$mode" in
        host-systemd)
                install_units
                on_node systemctl daemon-reload
                # A running timensd is left as it is (its fd store holds
                # the containers); a new binary takes over at the next
                # `systemctl restart timensd`, which keeps them served.
                on_node systemctl enable --now timensd.socket timensd-agent.socket timensd.service
                log "timensd runs on the node under systemd; this pod only installs"
                exec sleep 2147483647
                ;;
        pod)
                log "timensd runs in this pod: a pod restart cuts off the containers it serves"
                exec "$SRC/sbin/timensd" --foreground --log-target stderr --socket /run/timens/timensd.sock
                ;;
        *)
                log "TIMENSD_MODE must be host-systemd, pod or auto, not '$mode'"
                exit 2
                ;;
        esac
        ;;
-h | --help)
        sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
        ;;
*)
        log "unknown command '$1' (install, run, --help)"
        exit 2
        ;;
esac
