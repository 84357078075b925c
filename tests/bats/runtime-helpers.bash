# shellcheck shell=bash
# For tests/bats/runtime.bats (after helpers, daemon-helpers, oci-helpers):
# the engines that run timens-runtime, each started by the test on private
# sockets and roots, without network, never the host's own daemons.
#
#   docker_start / docker_stop   dockerd with --add-runtime-like daemon.json
#                                "runtimes" entry (its own containerd in its
#                                exec root), image timens-bb:test imported
#   dk ARGS...                   the docker client on that daemon (bounded)
#   containerd_start / _stop     containerd with a private config, root,
#                                state and socket; the image imported
#   ct ARGS...                   ctr on that containerd (bounded)
#
# The runtime reads $RT_CONF (runtime.conf), which setup() points at the
# test's timensd and this build's hook. Skips carry the reason in
# $DOCKER_SKIP / $CONTAINERD_SKIP when an engine is missing or would not
# start.

RUNTIME="$BUILDDIR/timens-runtime"
IMAGE=timens-bb:test
CT_IMAGE=docker.io/library/timens-bb:test

# The client of the same package as dockerd (/usr/bin/docker): another one
# earlier in PATH may speak a newer API than 20.10's.
docker_client() {
        if [ -x /usr/bin/docker ]; then echo /usr/bin/docker; else command -v docker; fi
}

dk() {
        DOCKER_HOST="unix://$DOCKER_DIR/docker.sock" DOCKER_CONFIG="$DOCKER_DIR/client" \
                timeout -k 5 120 "$(docker_client)" "$@"
}

# Polls (bounded) until CMD... succeeds.
wait_until() {
        local limit=$1 i
        shift
        for ((i = 0; i < limit * 10; i++)); do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        return 1
}

# Unmounts whatever a daemon left under DIR (overlay, shm, netns), deepest first.
umount_under() {
        local m
        while read -r m; do
                umount -l "$m" 2>/dev/null || true
        done < <(awk -v d="$1" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
}

# docker_start: exports DOCKER_DIR, or DOCKER_SKIP with the reason.
docker_start() {
        export DOCKER_SKIP=""
        if ! command -v dockerd >/dev/null || [ -z "$(docker_client)" ]; then
                export DOCKER_SKIP="dockerd is not installed (docker.io: scripts/deps.sh installs it)"
                return 0
        fi
        command -v containerd >/dev/null || {
                export DOCKER_SKIP="containerd is not installed (scripts/deps.sh installs it)"
                return 0
        }
        # Short: containerd's sockets live under the exec root (108 bytes).
        DOCKER_DIR=$(mktemp -d /tmp/tns-dk.XXXXXX)
        export DOCKER_DIR
        mkdir -p "$DOCKER_DIR/client"
        # The daemon.json entry README.md gives, with this build's shim
        # and the test's runtime.conf (runtimeArgs come first on the
        # runtime's command line).
        cat >"$DOCKER_DIR/daemon.json" <<JSON
{"runtimes": {"timens": {"path": "$RUNTIME", "runtimeArgs": ["--timens-config", "$RT_CONF"]}}}
JSON
        setsid dockerd --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
                --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/e" \
                -H "unix://$DOCKER_DIR/docker.sock" --pidfile "$DOCKER_DIR/docker.pid" \
                --config-file "$DOCKER_DIR/daemon.json" --storage-driver overlay2 \
                </dev/null >"$DOCKER_DIR/dockerd.log" 2>&1 3>&- &
        echo $! >"$DOCKER_DIR/dockerd.bgpid"
        if ! wait_until 90 dk version; then
                DOCKER_SKIP="dockerd did not start here: $(tail -3 "$DOCKER_DIR/dockerd.log" | tr '\n' ' ')"
                export DOCKER_SKIP
                docker_stop
                return 0
        fi
        tar -C "$ROOTFS" -cf "$DOCKER_DIR/rootfs.tar" . || fail "tar of the rootfs failed"
        dk import --change 'ENV PATH=/bin' "$DOCKER_DIR/rootfs.tar" "$IMAGE" >/dev/null || fail "docker import failed"
}

docker_stop() {
        local pid
        [ -n "${DOCKER_DIR:-}" ] && [ -d "$DOCKER_DIR" ] || return 0
        [ -n "${DOCKER_SKIP:-}" ] || docker_clean
        pid=$(cat "$DOCKER_DIR/dockerd.bgpid" 2>/dev/null)
        if [ -n "$pid" ]; then
                kill -TERM "$pid" 2>/dev/null || true
                wait_for_exit "$pid" 30 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
        umount_under "$DOCKER_DIR"
        rm -rf "$DOCKER_DIR"
}

requires_docker() {
        [ -z "${DOCKER_SKIP:-}" ] || skip "$DOCKER_SKIP"
}

# Every container of the test's docker gone (between tests).
docker_clean() {
        [ -z "${DOCKER_SKIP:-}" ] && [ -n "${DOCKER_DIR:-}" ] || return 0
        local ids
        mapfile -t ids < <(dk ps -aq 2>/dev/null)
        [ ${#ids[@]} -eq 0 ] || dk rm -f "${ids[@]}" >/dev/null 2>&1 || true
}

ct() {
        timeout -k 5 120 ctr --address "$CT_DIR/c.sock" "$@"
}

# ct_run ARGS...: ctr run with its state in the test's directory too:
# runc's root (default /run/containerd/runc) and the IO fifos (default
# /run/containerd/fifo). Only the shims' sockets stay where containerd 1.6
# puts them (/run/containerd/s, named by a hash of our address).
ct_run() {
        ct run --runc-root "$CT_DIR/runc" --fifo-dir "$CT_DIR/fifo" "$@"
}

# containerd_start: exports CT_DIR, or CONTAINERD_SKIP with the reason.
# The runtime finds its runtime.conf through $TIMENS_RUNTIME_CONFIG, which
# containerd hands down to its shims and they to the runtime.
containerd_start() {
        export CONTAINERD_SKIP=""
        if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
                export CONTAINERD_SKIP="containerd is not installed (scripts/deps.sh installs it)"
                return 0
        fi
        CT_DIR=$(mktemp -d /tmp/tns-ct.XXXXXX)
        export CT_DIR
        cat >"$CT_DIR/config.toml" <<TOML
version = 2
root = "$CT_DIR/root"
state = "$CT_DIR/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CT_DIR/c.sock"
[ttrpc]
  address = "$CT_DIR/c.sock.ttrpc"
[debug]
  address = "$CT_DIR/debug.sock"
TOML
        TIMENS_RUNTIME_CONFIG="$RT_CONF" setsid containerd --config "$CT_DIR/config.toml" \
                </dev/null >"$CT_DIR/containerd.log" 2>&1 3>&- &
        echo $! >"$CT_DIR/containerd.bgpid"
        if ! wait_until 60 ct version; then
                CONTAINERD_SKIP="containerd did not start here: $(tail -3 "$CT_DIR/containerd.log" | tr '\n' ' ')"
                export CONTAINERD_SKIP
                containerd_stop
                return 0
        fi
        tar -C "$ROOTFS" -cf "$CT_DIR/rootfs.tar" . || fail "tar of the rootfs failed"
        python3 "$BATS_TEST_DIRNAME/oci-image.py" "$CT_DIR/rootfs.tar" "$CT_DIR/image.tar" "$CT_IMAGE" ||
                fail "oci-image.py failed"
        ct images import "$CT_DIR/image.tar" >/dev/null || fail "ctr images import failed"
}

containerd_clean() {
        [ -z "${CONTAINERD_SKIP:-}" ] && [ -n "${CT_DIR:-}" ] || return 0
        local id
        for id in $(ct tasks ls -q 2>/dev/null); do
                ct tasks kill -s KILL "$id" >/dev/null 2>&1 || true
                ct tasks delete -f "$id" >/dev/null 2>&1 || true
        done
        for id in $(ct containers ls -q 2>/dev/null); do
                ct containers delete "$id" >/dev/null 2>&1 || true
        done
}

containerd_stop() {
        local pid
        [ -n "${CT_DIR:-}" ] && [ -d "$CT_DIR" ] || return 0
        containerd_clean
        pid=$(cat "$CT_DIR/containerd.bgpid" 2>/dev/null)
        if [ -n "$pid" ]; then
                kill -TERM "$pid" 2>/dev/null || true
                wait_for_exit "$pid" 30 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
        umount_under "$CT_DIR"
        rm -rf "$CT_DIR"
}

requires_containerd() {
        [ -z "${CONTAINERD_SKIP:-}" ] || skip "$CONTAINERD_SKIP"
}

# podman_start: storage and configuration of the test's own (rootful, vfs),
# the image imported; PODMAN_SKIP with the reason otherwise. podman hands
# the runtime no environment of ours: the configuration goes in by
# --runtime-flag, which podman puts first on the runtime's command line.
podman_start() {
        export PODMAN_SKIP=""
        command -v podman >/dev/null || {
                export PODMAN_SKIP="podman is not installed (scripts/deps.sh installs it)"
                return 0
        }
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
        tar -C "$ROOTFS" -cf "$PODMAN_DIR/rootfs.tar" . || fail "tar of the rootfs failed"
        if ! timeout 120 podman import --change 'ENV PATH=/bin' "$PODMAN_DIR/rootfs.tar" localhost/timens-bb \
                >/dev/null 2>&1; then
                export PODMAN_SKIP="podman import failed here"
        fi
}

pm() {
        timeout -k 5 120 podman --runtime "$RUNTIME" --runtime-flag "timens-config=$RT_CONF" "$@"
}

podman_stop() {
        [ -n "${PODMAN_DIR:-}" ] && [ -z "${PODMAN_SKIP:-}" ] || return 0
        timeout 60 podman rm --all --force >/dev/null 2>&1 || true
        timeout 60 podman rmi --all --force >/dev/null 2>&1 || true
}

requires_podman() {
        [ -z "${PODMAN_SKIP:-}" ] || skip "$PODMAN_SKIP"
}
