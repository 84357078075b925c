# shellcheck shell=bash
# For tests/bats/oci*.bats (after `load helpers` and `load daemon-helpers`):
# real OCI runtimes on a busybox-static rootfs built here.
#
#   oci_build_rootfs DIR    busybox-static with relative applet symlinks,
#                           clockprobe (dynamic, with the libraries it
#                           needs) and clockprobe-static in /bin
#   oci_bundle DIR ARGS...  `runc spec` in DIR, rootfs copied in, no
#                           terminal, process.args = ARGS
#   oci_run RUNTIME DIR ID  runs the container to its end (bounded),
#                           stdout in $output
#   runc_ / crun_           the runtimes with a state root in $OCI_DIR
#
# crun 1.8.1 refuses this machine's hybrid cgroups: it runs in a private
# mount namespace with /sys/fs/cgroup/unified unmounted (issue 7's
# environment facts); the unmount stays inside that namespace.

OCI_TIMEOUT=${OCI_TIMEOUT:-30}

requires_runtime() {
        command -v "$1" >/dev/null || skip "$1 is not installed (scripts/deps.sh installs it)"
}

oci_build_rootfs() {
        local dir=$1 applet lib
        [ -x /bin/busybox ] || fail "/bin/busybox is missing (busybox-static)"
        mkdir -p "$dir"/{bin,proc,sys,dev,tmp,etc,lib,lib64,usr/lib}
        cp /bin/busybox "$dir/bin/busybox"
        for applet in $(/bin/busybox --list); do
                [ "$applet" = busybox ] || ln -sf busybox "$dir/bin/$applet"
        done
        cp "$HELPERS/clockprobe" "$dir/bin/clockprobe"
        [ -x "$HELPERS/clockprobe-static" ] && cp "$HELPERS/clockprobe-static" "$dir/bin/clockprobe-static"
        # The dynamic probe's libraries, at the paths its loader looks for.
        for lib in $(ldd "$HELPERS/clockprobe" | grep -oE '/[^ ]+'); do
                mkdir -p "$dir$(dirname "$lib")"
                cp -L "$lib" "$dir$lib"
        done
        echo "root:x:0:0:root:/:/bin/sh" >"$dir/etc/passwd"
}

# oci_bundle DIR ROOTFS ARGS...
oci_bundle() {
        local dir=$1 rootfs=$2
        shift 2
        mkdir -p "$dir"
        (cd "$dir" && runc spec) || fail "runc spec failed"
        cp -a "$rootfs" "$dir/rootfs"
        python3 - "$dir/config.json" "$@" <<'PY'
import json, sys
path, args = sys.argv[1], sys.argv[2:]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = args
c["process"]["env"] = ["PATH=/bin", "TZ=UTC"]
c["root"]["readonly"] = False
json.dump(c, open(path, "w"), indent=2)
PY
}

# oci_config_set DIR PYTHON-STATEMENT: edits config.json (c is the object).
oci_config_set() {
        python3 - "$1/config.json" "$2" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
exec(sys.argv[2])
json.dump(c, open(path, "w"), indent=2)
PY
}

runc_() {
        timeout -k 5 "$OCI_TIMEOUT" runc --root "$OCI_DIR/runc-root" "$@"
}

# crun in a private mount namespace without cgroup2's hybrid mount.
crun_() {
        # shellcheck disable=SC2016 # expanded by that sh
        timeout -k 5 "$OCI_TIMEOUT" unshare -m --propagation private sh -c \
                'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun --root "$0" "$@"' "$OCI_DIR/crun-root" "$@"
}

# oci_run RUNTIME BUNDLE ID: run to the end, with `run` (status in $status).
oci_run() {
        local rt=$1 bundle=$2 id=$3
        run --separate-stderr "${rt}_" run --bundle "$bundle" "$id"
}

# Everything the runtimes left: containers of either root, by id.
oci_cleanup() {
        local id
        for id in $(runc --root "$OCI_DIR/runc-root" list -q 2>/dev/null); do
                runc_ delete --force "$id" >/dev/null 2>&1 || true
        done
        for id in $(crun --root "$OCI_DIR/crun-root" list -q 2>/dev/null); do
                crun_ delete --force "$id" >/dev/null 2>&1 || true
        done
}

namespaces_left() {
        tns list --json | json_get 'len(j["namespaces"])'
}

# wait_namespaces N: timensd serves a listener once it has read the
# runtime's message, which the runtime does not wait for: poll (bounded).
wait_namespaces() {
        local t
        for ((t = 0; t < 100; t++)); do
                [ "$(namespaces_left)" = "$1" ] && return 0
                sleep 0.05
        done
        fail "$1 namespaces expected: $(tns list)"
}
