#!/usr/bin/env bats
# timens-runtime, the OCI runtime shim (daemon/timens-runtime/): what it
# passes through untouched, what it edits, its errors; then the engines
# that run it, each started here on private sockets and roots without
# network: runc itself, dockerd 20.10 (--runtime timens, its own
# containerd), containerd 1.6 (ctr run --runc-binary), podman --runtime.
# A busybox-static image is made here (docker import, an OCI archive for
# ctr): no registry is reachable.

# shellcheck disable=SC2154,SC2153,SC2030,SC2031,SC2016,SC2046,SC2086 # run sets output/status/stderr; sh -c scripts; word lists
load helpers
load daemon-helpers
load oci-helpers
load runtime-helpers

REAL_OFF_NS=$((86400 * NSEC_PER_SEC))
MONO_OFF_NS=$((7200 * NSEC_PER_SEC))
BOOT_OFF_NS=$((10 * 86400 * NSEC_PER_SEC))
SETTINGS=(TIMENS_REALTIME=+1d TIMENS_MONOTONIC=+2h TIMENS_BOOTTIME=+10d)
# What a container prints: each probe (raw syscalls, vDSO, static), and
# /proc/uptime.
LISTING='for p in clockprobe "clockprobe --vdso" clockprobe-static; do echo "== $p"; $p; done; echo "uptime $(cat /proc/uptime)"'

setup_file() {
        requires_root
        requires_timensctl
        requires_timensd
        build_helpers clockprobe clockprobe-static
        make -s -C "$ROOT" BUILDDIR="$BUILDDIR" "$BUILDDIR/timens-oci-hook" "$BUILDDIR/timens-runtime" >&2 ||
                fail "could not build the hook and the runtime"
        export ROOTFS="$BATS_FILE_TMPDIR/rootfs" RT_CONF="$BATS_FILE_TMPDIR/runtime.conf"
        oci_build_rootfs "$ROOTFS"
        : >"$RT_CONF"
        # containerd 1.6's shims put their sockets in /run/containerd/s, the
        # one path neither engine can be told: leave the host as found.
        [ -e /run/containerd ] || : >"$BATS_FILE_TMPDIR/made-run-containerd"
        docker_start
        containerd_start
        podman_start
}

teardown_file() {
        docker_stop
        containerd_stop
        podman_stop
        if [ -e "$BATS_FILE_TMPDIR/made-run-containerd" ]; then
                rmdir /run/containerd/s /run/containerd 2>/dev/null || true
        fi
}

setup() {
        requires_root
        start_daemon
        OCI_DIR=$(mktemp -d "$DAEMON_DIR/oci.XXXXXX")
        # This build's hook, this test's timensd.
        printf 'hook = %s\nsocket = %s\ntimensd = %s\n' "$BUILDDIR/timens-oci-hook" "$SOCK" "$TIMENSD" >"$RT_CONF"
        FAKE_OUT="$BATS_TEST_TMPDIR/fake"
        mkdir -p "$FAKE_OUT"
}

teardown() {
        # (node-timensd too, the pod-like container)
        docker_clean
        [ -z "${NODE_RUN_DIR:-}" ] || rm -rf "$NODE_RUN_DIR"
        containerd_clean
        if [ -z "${PODMAN_SKIP:-}" ]; then timeout 60 podman rm --all --force >/dev/null 2>&1 || true; fi
        oci_cleanup
        daemon_teardown
}

# A runtime that records what it was given: its arguments, its stdin, its
# pid, the bundle's config.json as it found it; exits 42, or waits for
# SIGTERM with "wait" as the command.
fake_runtime() {
        cat >"$FAKE_OUT/runtime" <<SH
#!/bin/sh
printf '%s\n' "\$@" >"$FAKE_OUT/argv"
echo \$\$ >"$FAKE_OUT/pid"
[ -f config.json ] && cp config.json "$FAKE_OUT/config.json"
if [ "\$1" = wait ]; then
        trap 'echo TERM >"$FAKE_OUT/signal"; exit 0' TERM
        echo ready >"$FAKE_OUT/ready"
        while :; do sleep 0.05; done
fi
cat >"$FAKE_OUT/stdin"
exit 42
SH
        chmod +x "$FAKE_OUT/runtime"
}

# shim ARGS...: the runtime with the test's runtime.conf, bounded.
shim() {
        timeout -k 5 60 "$RUNTIME" --timens-config "$RT_CONF" "$@"
}

# env_bundle DIR ENV...: a new bundle of runc spec's printing $LISTING,
# process.env = PATH=/bin ENV...
env_bundle() {
        local b=$1
        shift
        rm -rf "$b"
        oci_bundle "$b" "$ROOTFS" /bin/sh -c "$LISTING"
        python3 - "$b/config.json" "$@" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["env"] = ["PATH=/bin"] + sys.argv[2:]
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
}

section() {
        awk -v m="== $1" '$0 == m { on = 1; next } /^== |^uptime / { on = 0 } on' <<<"$listing"
}

# check_listing REAL MONO BOOT: each probe of $listing, read between
# $host_before and $host_after, sees the three offsets (ns); /proc/uptime
# the boottime one.
check_listing() {
        local real=$1 mono=$2 boot=$3 p ns up
        for p in clockprobe "clockprobe --vdso" clockprobe-static; do
                ns=$(section "$p")
                [ -n "$ns" ] || fail "no listing of $p in: $listing"
                assert_within "$p CLOCK_REALTIME - $(fmt_ns "$real")" $(($(probe_ns CLOCK_REALTIME <<<"$ns") - real)) \
                        "$(probe_ns CLOCK_REALTIME <<<"$host_before")" "$(probe_ns CLOCK_REALTIME <<<"$host_after")"
                assert_within "$p CLOCK_MONOTONIC - $(fmt_ns "$mono")" $(($(probe_ns CLOCK_MONOTONIC <<<"$ns") - mono)) \
                        "$(probe_ns CLOCK_MONOTONIC <<<"$host_before")" "$(probe_ns CLOCK_MONOTONIC <<<"$host_after")"
                assert_within "$p CLOCK_BOOTTIME - $(fmt_ns "$boot")" $(($(probe_ns CLOCK_BOOTTIME <<<"$ns") - boot)) \
                        "$(probe_ns CLOCK_BOOTTIME <<<"$host_before")" "$(probe_ns CLOCK_BOOTTIME <<<"$host_after")"
        done
        up=$(awk '$1 == "uptime" { print $2 }' <<<"$listing")
        up=${up%%.*}
        [ -n "$up" ] || fail "no uptime in: $listing"
        assert_within "/proc/uptime - $(fmt_ns "$boot")" $((up * NSEC_PER_SEC - boot + NSEC_PER_SEC / 2)) \
                "$(probe_ns CLOCK_BOOTTIME <<<"$host_before")" "$(probe_ns CLOCK_BOOTTIME <<<"$host_after")"
}

# listing_of CMD...: runs CMD (which prints $LISTING) between two host
# readings; its stdout in $listing.
listing_of() {
        host_before=$("$HELPERS/clockprobe")
        run --separate-stderr "$@"
        host_after=$("$HELPERS/clockprobe")
        [ "$status" -eq 0 ] || fail "$* failed ($status): $stderr $output"
        listing=$output
}

# ---------------------------------------------------------------- the shim

@test "runtime: --timens-help, and --help shows ours before the runtime's" {
        run -0 "$RUNTIME" --timens-help
        [[ "$output" == *"Usage: timens-runtime"* ]] || fail "no usage: $output"
        [[ "$output" == *TIMENS_BOOTTIME* && "$output" == *--timens-runtime* ]] || fail "incomplete help: $output"
        run -0 shim --help
        [[ "$output" == *"Usage: timens-runtime"* && "$output" == *"runc"* ]] || fail "$output"
}

@test "runtime: any other command passes through untouched: arguments, stdin, exit status, same process" {
        fake_runtime
        run -42 bash -c 'echo $$ >"$1/shell"; exec "$2" --timens-config "$3" --timens-runtime "$1/runtime" \
                --root /r --log /l --log-format json state "a b" <<<"hello"' bash "$FAKE_OUT" "$RUNTIME" "$RT_CONF"
        run -0 cat "$FAKE_OUT/argv"
        [ "$output" = "$(printf '%s\n' --root /r --log /l --log-format json state "a b")" ] || fail "argv: $output"
        [ "$(cat "$FAKE_OUT/stdin")" = hello ] || fail "stdin: $(cat "$FAKE_OUT/stdin")"
        # exec, not fork: the runtime is the process the engine started.
        [ "$(cat "$FAKE_OUT/pid")" = "$(cat "$FAKE_OUT/shell")" ] || fail "not the same process"
}

@test "runtime: a signal to the runtime's pid reaches the real runtime" {
        fake_runtime
        setsid "$RUNTIME" --timens-config "$RT_CONF" --timens-runtime "$FAKE_OUT/runtime" wait 3>&- &
        local pid=$!
        BG_PIDS+=("$pid")
        wait_for_file "$FAKE_OUT/ready"
        [ "$(cat "$FAKE_OUT/pid")" = "$pid" ] || fail "the runtime is not the process started"
        kill -TERM "$pid"
        wait_for_exit "$pid" 10
        [ "$(cat "$FAKE_OUT/signal")" = TERM ] || fail "the runtime did not get SIGTERM"
}

@test "runtime: create without timens settings leaves config.json exactly as it was" {
        fake_runtime
        env_bundle "$OCI_DIR/b" OTHER=1
        cp "$OCI_DIR/b/config.json" "$OCI_DIR/orig.json"
        local ino
        ino=$(stat -c %i "$OCI_DIR/b/config.json")
        run -42 shim --timens-runtime "$FAKE_OUT/runtime" --root /r create --bundle "$OCI_DIR/b" c1 </dev/null
        cmp "$OCI_DIR/orig.json" "$OCI_DIR/b/config.json" || fail "config.json changed"
        [ "$(stat -c %i "$OCI_DIR/b/config.json")" = "$ino" ] || fail "config.json was rewritten"
        [ "$(cat "$FAKE_OUT/argv")" = "$(printf '%s\n' --root /r create --bundle "$OCI_DIR/b" c1)" ]
}

@test "runtime: create with TIMENS_* writes the annotations and the hook entries, keeps the rest (bundle from cwd, run)" {
        fake_runtime
        env_bundle "$OCI_DIR/b" TIMENS_REALTIME=2030-01-01 TIMENS_BOOTTIME=+1d TIMENS_NAME=web
        oci_config_set "$OCI_DIR/b" "c['annotations'] = {'keep.me': 'yes', 'org.timens.boottime': '+2d'}"
        (cd "$OCI_DIR/b" && TZ=Asia/Tokyo timeout 60 "$RUNTIME" --timens-config "$RT_CONF" \
                --timens-runtime "$FAKE_OUT/runtime" run -d c1 </dev/null) || [ $? = 42 ] || fail "run failed"
        python3 - "$FAKE_OUT/config.json" "$BUILDDIR/timens-oci-hook" "$SOCK" "$TIMENSD" <<'PY'
import json, sys
c, hook, sock, timensd = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
a = c["annotations"]
assert a == {"keep.me": "yes", "org.timens.boottime": "+2d", "org.timens.realtime": "2029-12-31T15:00:00Z",
             "org.timens.name": "web"}, a
for stage, last in (("createRuntime", []), ("poststop", ["poststop"])):
    hooks = c["hooks"][stage]
    assert [h["path"] for h in hooks] == [hook], hooks
    assert hooks[0]["args"] == ["timens-oci-hook", "--socket", sock, "--timensd", timensd] + last, hooks
assert c["process"]["args"][0] == "/bin/sh", c["process"]
PY
}

@test "runtime: bad settings fail create with the reason on stderr and in the --log file, config.json untouched" {
        fake_runtime
        local b="$OCI_DIR/b" log="$OCI_DIR/log.json" v
        env_bundle "$b" TIMENS_REALTIME=+1d
        for v in TIMENS_REALTIME=soon TIMENS_BOOTTIME=2030-01-01 TIMENS_REALTIM=+1d TIMENS_FAKETIME=i2.0 TIMENS_NAME=-x; do
                env_bundle "$b" "$v"
                cp "$b/config.json" "$OCI_DIR/orig.json"
                rm -f "$FAKE_OUT/argv" "$log"
                run -1 --separate-stderr shim --timens-runtime "$FAKE_OUT/runtime" --log "$log" --log-format json \
                        create --bundle "$b" c1
                [[ "$stderr" == "timens-runtime: Container c1: environment variable ${v%%=*}"* ]] || fail "$v: $stderr"
                python3 -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert e[-1]["level"] == "error" and e[-1]["msg"].startswith("timens-runtime: Container c1"), e' "$log" ||
                        fail "$v: not in the log"
                cmp "$OCI_DIR/orig.json" "$b/config.json" || fail "$v: config.json changed"
                [ ! -e "$FAKE_OUT/argv" ] || fail "$v: the runtime ran"
                [ "$(find "$b" -maxdepth 1 -name 'config.json.*' | wc -l)" = 0 ] || fail "$v: a temporary file is left"
        done
        [[ "$stderr" == *"not a namespace name"* ]] || fail "$stderr"
}

@test "runtime: a container id that is no namespace name needs TIMENS_NAME, said so" {
        fake_runtime
        env_bundle "$OCI_DIR/b" TIMENS_REALTIME=+1d
        run -1 --separate-stderr shim --timens-runtime "$FAKE_OUT/runtime" create --bundle "$OCI_DIR/b" 12345
        [[ "$stderr" == *"Container id '12345' is not a namespace name: set TIMENS_NAME"* ]] || fail "$stderr"
}

@test "runtime: runtime.conf errors name the file and line; the missing hook is said so" {
        fake_runtime
        env_bundle "$OCI_DIR/b" TIMENS_REALTIME=+1d
        printf 'runtime = runc\nmod = agent\n' >"$OCI_DIR/bad.conf"
        run -1 --separate-stderr "$RUNTIME" --timens-config "$OCI_DIR/bad.conf" state x
        [[ "$stderr" == *"$OCI_DIR/bad.conf:2: unknown key 'mod'"* ]] || fail "$stderr"
        run -1 --separate-stderr "$RUNTIME" --timens-config "$OCI_DIR/none.conf" state x
        [[ "$stderr" == *"Failed to open $OCI_DIR/none.conf"* ]] || fail "$stderr"
        printf 'hook = /nonexistent/hook\n' >"$OCI_DIR/nohook.conf"
        run -1 --separate-stderr "$RUNTIME" --timens-config "$OCI_DIR/nohook.conf" --timens-runtime "$FAKE_OUT/runtime" \
                create --bundle "$OCI_DIR/b" c1
        [[ "$stderr" == *"the hook /nonexistent/hook cannot be run"* ]] || fail "$stderr"
        printf 'runtime = %s\n' "$RUNTIME" >"$OCI_DIR/self.conf"
        run -1 --separate-stderr "$RUNTIME" --timens-config "$OCI_DIR/self.conf" state x
        [[ "$stderr" == *"timens-runtime itself"* ]] || fail "$stderr"
}

@test "runtime: \$TIMENS_RUNTIME_CONFIG names the configuration, runtime= the real runtime" {
        fake_runtime
        printf 'runtime = %s\n' "$FAKE_OUT/runtime" >"$OCI_DIR/fake.conf"
        TIMENS_RUNTIME_CONFIG="$OCI_DIR/fake.conf" run -42 timeout 20 "$RUNTIME" --version </dev/null
        [ "$(cat "$FAKE_OUT/argv")" = --version ]
}

@test "runtime: runc through the shim, settings from the environment: every clock, /proc/uptime" {
        requires_runtime runc
        env_bundle "$OCI_DIR/b" "${SETTINGS[@]}"
        listing_of shim --root "$OCI_DIR/runc-root" run --bundle "$OCI_DIR/b" rt-runc
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        # poststop: the namespace went with the container.
        wait_namespaces 0
}

@test "runtime: runc through the shim without settings runs as plain runc (host clocks, no namespace)" {
        requires_runtime runc
        env_bundle "$OCI_DIR/b"
        listing_of shim --root "$OCI_DIR/runc-root" run --bundle "$OCI_DIR/b" rt-plain
        check_listing 0 0 0
        grep -q "Created namespace" "$DAEMON_DIR/log" && fail "timensd made a namespace"
        true
}

# sleeper_bundle DIR ENV...: a bundle whose process sleeps, for exec.
sleeper_bundle() {
        env_bundle "$@"
        oci_config_set "$1" 'c["process"]["args"] = ["sleep", "1000"]'
}

# time_ns PID: its kernel time namespace, as readlink shows it.
time_ns() {
        readlink "/proc/$1/ns/time"
}

@test "runtime: runc through the shim: a container with settings has a kernel time namespace of its own, runc exec enters it, timensctl show names it" {
        requires_runtime runc
        requires_kernel_timens
        local host a b plain pid_a pid_b pid_p inode
        host=$(time_ns self)
        sleeper_bundle "$OCI_DIR/a" "${SETTINGS[@]}"
        sleeper_bundle "$OCI_DIR/b" "${SETTINGS[@]}"
        sleeper_bundle "$OCI_DIR/p"
        shim --root "$OCI_DIR/runc-root" run -d --bundle "$OCI_DIR/a" id-a </dev/null >/dev/null 2>&1 || fail "run id-a"
        shim --root "$OCI_DIR/runc-root" run -d --bundle "$OCI_DIR/b" id-b </dev/null >/dev/null 2>&1 || fail "run id-b"
        shim --root "$OCI_DIR/runc-root" run -d --bundle "$OCI_DIR/p" id-p </dev/null >/dev/null 2>&1 || fail "run id-p"
        pid_a=$(runc_ state id-a | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
        pid_b=$(runc_ state id-b | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
        pid_p=$(runc_ state id-p | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
        a=$(time_ns "$pid_a") b=$(time_ns "$pid_b") plain=$(time_ns "$pid_p")
        [ "$a" != "$host" ] || fail "container id-a is in the host's time namespace $host"
        [ "$b" != "$host" ] && [ "$b" != "$a" ] || fail "id-a $a, id-b $b, host $host: not distinct"
        [ "$plain" = "$host" ] || fail "a container without settings was moved: $plain (host $host)"
        # A container of the same name (TIMENS_NAME: one namespace, shared
        # clocks) is where the first one's processes are.
        sleeper_bundle "$OCI_DIR/c" "${SETTINGS[@]}" TIMENS_NAME=id-a
        shim --root "$OCI_DIR/runc-root" run -d --bundle "$OCI_DIR/c" id-c </dev/null >/dev/null 2>&1 || fail "run id-c"
        [ "$(time_ns "$(runc_ state id-c | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')")" = "$a" ] ||
                fail "id-c, of namespace id-a, is not in id-a's kernel time namespace $a"
        runc_ kill id-c KILL
        runc_ delete -f id-c
        # Seen from inside, by a process runc exec started, and by a
        # process it forked.
        run -0 shim --root "$OCI_DIR/runc-root" exec id-a readlink /proc/self/ns/time
        [ "$output" = "$a" ] || fail "runc exec in id-a is in $output, the container in $a"
        run -0 shim --root "$OCI_DIR/runc-root" exec id-a sh -c 'sleep 0 & readlink /proc/$!/ns/time; readlink /proc/1/ns/time'
        [ "$output" = "$a"$'\n'"$a" ] || fail "in id-a: $output (want $a twice)"
        run -0 shim --root "$OCI_DIR/runc-root" exec id-p readlink /proc/self/ns/time
        [ "$output" = "$host" ] || fail "runc exec in id-p is in $output, the host in $host"
        # The clocks are timens's, with the kernel namespace's zero offsets.
        listing_of shim --root "$OCI_DIR/runc-root" exec id-a sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        # timensd paired its namespace with it.
        inode=${a#time:[}
        inode=${inode%]}
        run -0 tns show id-a
        [[ "$output" == *"Kernel ns: time:[$inode]"* ]] || fail "show id-a: $output"
        # A new timensd (SIGUSR2: the same socket, the state handed over)
        # finds the pair again.
        handover_daemon
        run -0 tns show id-a
        [[ "$output" == *"Kernel ns: time:[$inode]"* ]] || fail "show id-a after a handover: $output"
        run -0 shim --root "$OCI_DIR/runc-root" exec id-a readlink /proc/self/ns/time
        [ "$output" = "$a" ] || fail "runc exec in id-a after a handover is in $output, the container in $a"
        runc_ kill id-a KILL; runc_ kill id-b KILL; runc_ kill id-p KILL
        runc_ delete -f id-a; runc_ delete -f id-b; runc_ delete -f id-p
}

# ---------------------------------------------------------------- docker

@test "docker: run --runtime timens -e TIMENS_*: every clock, /proc/uptime" {
        requires_docker
        listing_of dk run --rm --network none --runtime timens $(printf -- '-e %s ' "${SETTINGS[@]}") "$IMAGE" \
                sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        wait_namespaces 0
}

@test "docker: date in a container of --runtime timens -e TIMENS_REALTIME=+1d is a day ahead" {
        requires_docker
        local before after d
        before=$(date +%s)
        run -0 dk run --rm --network none --runtime timens -e TIMENS_REALTIME=+1d "$IMAGE" date +%s
        after=$(date +%s)
        d=$output
        ((d >= before + 86400 - 1 && d <= after + 86400 + 1)) || fail "date $d, host $before..$after"
}

@test "docker: -e TIMENS_FAKETIME takes libfaketime's forms: a frozen date, a clock at x4" {
        requires_docker
        local a b t0 t1
        # Frozen: two reads a second apart give the same date.
        run -0 dk run --rm --network none --runtime timens -e 'TIMENS_FAKETIME=2030-01-01 12:00:00' "$IMAGE" \
                sh -c 'date -u +%s; sleep 1; date -u +%s'
        a=$(sed -n 1p <<<"$output") b=$(sed -n 2p <<<"$output")
        [ "$a" = "$b" ] || fail "a frozen clock moved: $output"
        ((a >= 1893495600 - 86400 && a <= 1893495600 + 86400)) || fail "not 2030-01-01: $a"
        # x4: 'sleep 4' ends after about one host second, the clock 4 s on.
        t0=$(date +%s%N)
        run -0 dk run --rm --network none --runtime timens -e 'TIMENS_FAKETIME=+0 x4' "$IMAGE" \
                sh -c 'date +%s; sleep 4; date +%s'
        t1=$(date +%s%N)
        a=$(sed -n 1p <<<"$output") b=$(sed -n 2p <<<"$output")
        ((b - a >= 4 && b - a <= 6)) || fail "the clock moved $((b - a)) s over sleep 4"
        # The container's start dominates on a loaded machine: only an upper
        # bound that a sleep at x1 (4 s) would not meet with its start.
        echo "host time for run + sleep 4 at x4: $(((t1 - t0) / 1000000)) ms" >&3
}

@test "docker: --runtime timens without settings is plain runc: host clocks, no namespace" {
        requires_docker
        listing_of dk run --rm --network none --runtime timens "$IMAGE" sh -c "$LISTING"
        check_listing 0 0 0
        grep -q "Created namespace" "$DAEMON_DIR/log" && fail "timensd made a namespace"
        true
}

@test "docker: bad settings: docker run fails with the reason, nothing is left running" {
        requires_docker
        run --separate-stderr dk run --name bad --network none --runtime timens -e TIMENS_BOOTTIME=tomorrow "$IMAGE" true
        [ "$status" -ne 0 ] || fail "docker run succeeded"
        [[ "$stderr" == *"timens-runtime: Container"*"environment variable TIMENS_BOOTTIME: 'tomorrow' is not an offset"* ]] ||
                fail "no reason: $stderr"
        run -0 dk ps -q
        [ -z "$output" ] || fail "a container runs: $output"
        [ "$(namespaces_left)" = 0 ] || fail "a namespace is left"
}

@test "docker: exec into a running container sees its clocks, /proc/uptime too, after exec'd processes came and went" {
        requires_docker
        run -0 dk run -d --name ex --network none --runtime timens $(printf -- '-e %s ' "${SETTINGS[@]}") "$IMAGE" \
                sleep 1000
        # Processes that enter and leave, one still there: the cover of
        # /proc/uptime must outlive each (it once died with the first).
        run -0 dk exec ex cat /proc/uptime
        run -0 dk exec -d ex sleep 1000
        run -0 dk exec ex true
        listing_of dk exec ex sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        grep -q "Failed to cover" "$DAEMON_DIR/log" && fail "timensd could not cover /proc"
        true
}

@test "docker: stop/start and restart keep the clocks" {
        requires_docker
        run -0 dk run -d --name st --network none --runtime timens $(printf -- '-e %s ' "${SETTINGS[@]}") "$IMAGE" \
                sleep 1000
        run -0 dk stop -t 1 st
        run -0 dk start st
        listing_of dk exec st sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        run -0 dk restart -t 1 st
        listing_of dk exec st sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        # One namespace, the container's, however often it started.
        [ "$(namespaces_left)" = 1 ] || fail "$(tns list)"
}

@test "docker: each container of --runtime timens has its own kernel time namespace; docker exec enters it" {
        requires_docker
        requires_kernel_timens
        local host a b pa pb
        host=$(time_ns self)
        run -0 dk run -d --name id1 --network none --runtime timens -e TIMENS_MONOTONIC=+1d "$IMAGE" sleep 1000
        run -0 dk run -d --name id2 --network none --runtime timens -e TIMENS_MONOTONIC=+1d "$IMAGE" sleep 1000
        pa=$(dk inspect -f '{{.State.Pid}}' id1) pb=$(dk inspect -f '{{.State.Pid}}' id2)
        a=$(time_ns "$pa") b=$(time_ns "$pb")
        [ "$a" != "$host" ] && [ "$b" != "$host" ] && [ "$a" != "$b" ] || fail "id1 $a, id2 $b, host $host"
        run -0 dk exec id1 sh -c 'readlink /proc/self/ns/time; readlink /proc/1/ns/time'
        [ "$output" = "$a"$'\n'"$a" ] || fail "docker exec id1: $output (want $a twice)"
        run -0 dk exec id2 readlink /proc/self/ns/time
        [ "$output" = "$b" ] || fail "docker exec id2: $output (want $b)"
        # ... and the exec'd process's clocks are the container's.
        listing_of dk exec id1 sh -c "$LISTING"
        check_listing 0 $((86400 * NSEC_PER_SEC)) 0
        # Two containers of one TIMENS_NAME share their clocks and so
        # their kernel time namespace.
        run -0 dk run -d --name id3 --network none --runtime timens -e TIMENS_MONOTONIC=+1d -e TIMENS_NAME=shared \
                "$IMAGE" sleep 1000
        run -0 dk run -d --name id4 --network none --runtime timens -e TIMENS_NAME=shared "$IMAGE" sleep 1000
        [ "$(time_ns "$(dk inspect -f '{{.State.Pid}}' id3)")" = "$(time_ns "$(dk inspect -f '{{.State.Pid}}' id4)")" ] ||
                fail "id3 and id4, both of namespace 'shared', are in different kernel time namespaces"
        # Started again, the container is in a new kernel namespace (its
        # create made it), which timensd's namespace follows.
        run -0 dk restart -t 1 id1
        pa=$(dk inspect -f '{{.State.Pid}}' id1)
        a=$(time_ns "$pa")
        [ "$a" != "$host" ] || fail "id1 restarted in the host's time namespace"
        run -0 dk exec id1 readlink /proc/self/ns/time
        [ "$output" = "$a" ] || fail "docker exec id1 after a restart: $output (want $a)"
        run -0 tns show "$(dk inspect -f '{{.Id}}' id1)"
        [[ "$output" == *"Kernel ns: $a"* ]] || fail "show id1 after a restart, the container in $a: $output"
}

# ---------------------------------------------------------------- containerd

@test "containerd: ctr run --runc-binary timens-runtime --env TIMENS_*: every clock, /proc/uptime" {
        requires_containerd
        listing_of ct_run --rm --runc-binary "$RUNTIME" $(printf -- '--env %s ' "${SETTINGS[@]}") "$CT_IMAGE" ct-env \
                sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        wait_namespaces 0
}

@test "containerd: ctr run --annotation org.timens.*: every clock; an annotation wins over the environment" {
        requires_containerd
        listing_of ct_run --rm --runc-binary "$RUNTIME" --annotation org.timens.realtime=+1d \
                --annotation org.timens.monotonic=+2h --annotation org.timens.boottime=+10d \
                --env TIMENS_REALTIME=+5d "$CT_IMAGE" ct-ann sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
}

@test "containerd: without settings the container runs as under runc: host clocks, no namespace" {
        requires_containerd
        listing_of ct_run --rm --runc-binary "$RUNTIME" "$CT_IMAGE" ct-plain sh -c "$LISTING"
        check_listing 0 0 0
        grep -q "Created namespace" "$DAEMON_DIR/log" && fail "timensd made a namespace"
        true
}

@test "containerd: bad settings: ctr run fails with the reason, nothing is left" {
        requires_containerd
        run --separate-stderr ct_run --rm --runc-binary "$RUNTIME" --annotation org.timens.monotonic=2030-01-01 \
                "$CT_IMAGE" ct-bad true
        [ "$status" -ne 0 ] || fail "ctr run succeeded"
        [[ "$stderr" == *"timens-runtime: Container ct-bad: annotation org.timens.monotonic: '2030-01-01' is not an offset"* ]] ||
                fail "no reason: $stderr"
        run -0 ct tasks ls -q
        [ -z "$output" ] || fail "a task is left: $output"
        [ "$(namespaces_left)" = 0 ] || fail "a namespace is left"
}

@test "containerd: ctr tasks exec into a running container sees its clocks" {
        requires_containerd
        run -0 ct_run -d --runc-binary "$RUNTIME" $(printf -- '--env %s ' "${SETTINGS[@]}") "$CT_IMAGE" ct-exec \
                sleep 1000
        run -0 ct tasks exec --fifo-dir "$CT_DIR/fifo" --exec-id e1 ct-exec cat /proc/uptime
        listing_of ct tasks exec --fifo-dir "$CT_DIR/fifo" --exec-id e2 ct-exec sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
}

@test "containerd: a container of the shim has its own kernel time namespace; ctr tasks exec enters it" {
        requires_containerd
        requires_kernel_timens
        local host pid ns
        host=$(time_ns self)
        run -0 ct_run -d --runc-binary "$RUNTIME" --env TIMENS_MONOTONIC=+1d "$CT_IMAGE" ct-id sleep 1000
        pid=$(ct tasks ls | awk '$1 == "ct-id" { print $2 }')
        [ -n "$pid" ] || fail "no task ct-id: $(ct tasks ls)"
        ns=$(time_ns "$pid")
        [ "$ns" != "$host" ] || fail "ct-id is in the host's time namespace $host"
        run -0 ct tasks exec --fifo-dir "$CT_DIR/fifo" --exec-id e1 ct-id readlink /proc/self/ns/time
        [ "$output" = "$ns" ] || fail "ctr tasks exec: $output (want $ns)"
}

# The CRI runtime handler a RuntimeClass `timens` selects: containerd
# reads it (appended to its config, the way the file says to install it)
# and its CRI plugin starts with it. No kubelet or crictl runs here.
@test "containerd: contrib/timens-runtime/containerd-cri.toml is accepted by containerd's CRI plugin" {
        requires_containerd
        local d pid
        d=$(mktemp -d /tmp/tns-cri.XXXXXX)
        sed "s|/usr/local/bin/timens-runtime|$RUNTIME|" "$ROOT/contrib/timens-runtime/containerd-cri.toml" >"$d/timens.toml"
        # A node's config.toml as `containerd config default` writes it,
        # moved into the test's directory, with ours appended.
        {
                containerd config default | sed -e "s|\"/var/lib/containerd\"|\"$d/root\"|; s|\"/run/containerd\"|\"$d/state\"|" \
                        -e "s|\"/run/containerd/containerd.sock\"|\"$d/c.sock\"|; s|\"/opt/containerd\"|\"$d/opt\"|" \
                        -e "s|\"/opt/cni/bin\"|\"$d/cni-bin\"|; s|\"/etc/cni/net.d\"|\"$d/cni-conf\"|"
                cat "$d/timens.toml"
        } >"$d/config.toml"
        grep -qE '/var/lib/containerd|"/run/containerd|/opt/containerd' "$d/config.toml" &&
                fail "the default config names other host paths now: $(cat "$d/config.toml")"
        containerd --config "$d/config.toml" config dump >"$d/dump.toml" || fail "config dump failed"
        python3 - "$RUNTIME" "$d/dump.toml" <<'PY' || fail "the dump lacks the runtime: $(cat "$d/dump.toml")"
import sys, tomllib
c = tomllib.loads(open(sys.argv[2]).read())
rt = c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["timens"]
assert rt["runtime_type"] == "io.containerd.runc.v2", rt
assert rt["options"]["BinaryName"] == sys.argv[1], rt
assert "org.timens.*" in rt["pod_annotations"] and "org.timens.*" in rt["container_annotations"], rt
PY
        setsid containerd --config "$d/config.toml" </dev/null >"$d/log" 2>&1 3>&- &
        pid=$!
        BG_PIDS+=("$pid")
        wait_until 60 ctr --address "$d/c.sock" version || fail "containerd did not start: $(cat "$d/log")"
        run -0 timeout 30 ctr --address "$d/c.sock" plugins ls
        kill -TERM "$pid"
        wait_for_exit "$pid" 30
        umount_under "$d"
        rm -rf "$d"
        [ "$(awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" { print $NF }' <<<"$output")" = ok ] ||
                fail "the CRI plugin did not load: $output"
}

# ---------------------------------------------------------------- podman

@test "podman: --runtime timens-runtime -e TIMENS_*: every clock, /proc/uptime; exec too" {
        requires_podman
        listing_of pm run --rm $(printf -- '-e %s ' "${SETTINGS[@]}") localhost/timens-bb sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        run -0 pm run -d --name pex $(printf -- '-e %s ' "${SETTINGS[@]}") localhost/timens-bb sleep 1000
        listing_of pm exec pex sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
}

@test "podman: a container of --runtime timens-runtime has its own kernel time namespace; podman exec enters it" {
        requires_podman
        requires_kernel_timens
        local host pid ns
        host=$(time_ns self)
        run -0 pm run -d --name pid1 -e TIMENS_MONOTONIC=+1d localhost/timens-bb sleep 1000
        pid=$(pm inspect -f '{{.State.Pid}}' pid1)
        ns=$(time_ns "$pid")
        [ "$ns" != "$host" ] || fail "pid1 is in the host's time namespace $host"
        run -0 pm exec pid1 readlink /proc/self/ns/time
        [ "$output" = "$ns" ] || fail "podman exec: $output (want $ns)"
}

@test "podman: --runtime timens-runtime with bad settings fails with the reason" {
        requires_podman
        run --separate-stderr pm run --rm -e TIMENS_REALTIME=bad localhost/timens-bb true
        [ "$status" -ne 0 ] || fail "podman run succeeded"
        [[ "$stderr" == *"environment variable TIMENS_REALTIME: 'bad' is not an offset or a date"* ]] || fail "$stderr"
}

# ---------------------------------------------------------------- Kubernetes

# The manifests, offline (no cluster here): they parse, and what they
# name agrees with the rest of the tree.
@test "kubernetes: contrib/kubernetes YAML is valid and agrees with the CRI handler, the image and the shim" {
        python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
        python3 - "$ROOT" "$BATS_TEST_TMPDIR" <<'PY'
import json, os, sys, tomllib, yaml
root, tmp = sys.argv[1], sys.argv[2]
k = os.path.join(root, "contrib/kubernetes")
docs = {}
for f in ("daemonset.yaml", "runtimeclass.yaml", "example-pod.yaml"):
    for d in yaml.safe_load_all(open(os.path.join(k, f))):
        assert d["apiVersion"] and d["metadata"]["name"], (f, d)
        docs[d["kind"]] = d
rc, ds, pod = docs["RuntimeClass"], docs["DaemonSet"], docs["Pod"]
cri = tomllib.load(open(os.path.join(root, "contrib/timens-runtime/containerd-cri.toml"), "rb"))
handlers = cri["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
assert rc["handler"] in handlers, (rc, handlers)
assert pod["spec"]["runtimeClassName"] == rc["metadata"]["name"]
spec = ds["spec"]["template"]["spec"]
assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
assert spec["hostPID"] is True
c = spec["containers"][0]
assert c["securityContext"]["privileged"] is True
vols = {v["name"]: v for v in spec["volumes"]}
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
assert vols[mounts["/run/timens"]]["hostPath"]["path"] == "/run/timens"
env = {e["name"]: e["value"] for e in c["env"]}
for path, name in mounts.items():
    if path.startswith(env["HOST"] + "/"):
        assert vols[name]["hostPath"]["path"] == path[len(env["HOST"]):], (path, vols[name])
# What the manifests run is in the image.
copied = [l.split()[-1] for l in open(os.path.join(k, "Containerfile")) if l.startswith("COPY")]
probe = c["readinessProbe"]["exec"]["command"][0]
assert probe in copied, (probe, copied)
for l in open(os.path.join(k, "Containerfile")):
    if l.startswith("COPY"):
        for src in l.split()[1:-1]:
            assert src.startswith("build/") or os.path.exists(os.path.join(root, src)), src
# The example pod's annotations, as the CRI puts them into config.json.
json.dump({"ociVersion": "1.0.2", "process": {"args": ["date"], "env": ["PATH=/bin"]},
           "annotations": pod["metadata"]["annotations"]}, open(os.path.join(tmp, "config.json"), "w"))
PY
        fake_runtime
        run -42 shim --timens-runtime "$FAKE_OUT/runtime" create --bundle "$BATS_TEST_TMPDIR" pod-ctr </dev/null
        python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
assert c["hooks"]["createRuntime"] and c["annotations"]["org.timens.name"] == "ci-2030", c' "$BATS_TEST_TMPDIR/config.json"
}

@test "kubernetes: the shipped runtime.conf is read as it is" {
        fake_runtime
        run -42 "$RUNTIME" --timens-config "$ROOT/contrib/timens-runtime/runtime.conf" \
                --timens-runtime "$FAKE_OUT/runtime" state x </dev/null
}

# contrib/kubernetes/Containerfile built with docker build, offline: the
# base is a busybox-static root with the shared libraries the programs
# link (ldd), imported; the build context holds exactly the tree's files
# the Containerfile copies.
build_node_image() {
        local base="$DOCKER_DIR/base" ctx="$DOCKER_DIR/ctx" p lib
        [ -n "$(dk images -q timens-node:test)" ] && return 0
        rm -rf "$base" "$ctx"
        mkdir -p "$base/bin" "$base/tmp" "$base/etc" "$ctx"
        cp /bin/busybox "$base/bin/busybox"
        for p in $(/bin/busybox --list); do
                [ "$p" = busybox ] || ln -sf busybox "$base/bin/$p"
        done
        for p in timensd timensctl timens-runtime timens-oci-hook; do
                for lib in $(ldd "$BUILDDIR/$p" | grep -oE '/[^ ]+'); do
                        mkdir -p "$base$(dirname "$lib")"
                        cp -L "$lib" "$base$lib"
                done
        done
        tar -C "$base" -cf "$DOCKER_DIR/base.tar" . || fail "tar of the base failed"
        dk import "$DOCKER_DIR/base.tar" timens-base:test >/dev/null || fail "docker import of the base failed"
        (cd "$ROOT" && cp --parents contrib/kubernetes/Containerfile contrib/kubernetes/timens-node.sh \
                contrib/timens-runtime/containerd-cri.toml systemd/timensd.service.in systemd/timensd.socket \
                systemd/timensd-agent.socket "$ctx/") || fail "copy of the tree failed"
        mkdir -p "$ctx/build"
        cp "$BUILDDIR/timensd" "$BUILDDIR/timensctl" "$BUILDDIR/timens-runtime" "$BUILDDIR/timens-oci-hook" "$ctx/build/"
        run -0 dk build -q -f "$ctx/contrib/kubernetes/Containerfile" --build-arg BASE=timens-base:test \
                --build-arg PACKAGES= -t timens-node:test "$ctx"
}

@test "kubernetes: the Containerfile builds with docker build, its programs run in the image" {
        requires_docker
        build_node_image
        run -0 dk run --rm --network none --entrypoint /opt/timens/sbin/timensd timens-node:test --version
        run -0 dk run --rm --network none --entrypoint /opt/timens/bin/timens-runtime timens-node:test --timens-help
        [[ "$output" == *"Usage: timens-runtime"* ]] || fail "$output"
        run -0 dk run --rm --network none timens-node:test --help
        [[ "$output" == *"timens-node install"* ]] || fail "$output"
}

@test "kubernetes: timens-node install puts the programs, runtime.conf and the CRI handler onto the node, once" {
        requires_docker
        build_node_image
        local host="$DOCKER_DIR/node"
        mkdir -p "$host/etc/containerd"
        containerd config default >"$host/etc/containerd/config.toml"
        run -0 dk run --rm --network none -v "$host:/host" timens-node:test install
        run -0 dk run --rm --network none -v "$host:/host" timens-node:test install
        [ -x "$host/opt/timens/bin/timens-runtime" ] && [ -x "$host/opt/timens/libexec/timens-oci-hook" ] &&
                [ -x "$host/opt/timens/sbin/timensd" ] || fail "programs missing: $(find "$host/opt")"
        [ "$(grep -c 'runtimes\.timens\]' "$host/etc/containerd/config.toml")" = 1 ] || fail "the handler is not there once"
        grep -q 'BinaryName = "/opt/timens/bin/timens-runtime"' "$host/etc/containerd/config.toml" || fail "BinaryName"
        containerd --config "$host/etc/containerd/config.toml" config dump >/dev/null || fail "containerd refuses the config"
        fake_runtime
        run -42 "$RUNTIME" --timens-config "$host/etc/timens/runtime.conf" --timens-runtime "$FAKE_OUT/runtime" state x </dev/null
        grep -qx 'hook = /opt/timens/libexec/timens-oci-hook' "$host/etc/timens/runtime.conf" || fail "hook="
}

# The DaemonSet's pod without a node systemd (TIMENSD_MODE=pod): timensd
# in a privileged container with the host's pids and a /run/timens of the
# test's, serving a container that timens-runtime started.
@test "kubernetes: timensd of the image, in a pod-like container, serves containers started through the shim" {
        requires_docker
        build_node_image
        local host="$DOCKER_DIR/node2" run_dir
        NODE_RUN_DIR=$(mktemp -d /tmp/tns-run.XXXXXX)
        run_dir=$NODE_RUN_DIR
        mkdir -p "$host"
        # The DaemonSet's privileged: true, less CAP_SYS_RESOURCE, which
        # this machine's bounding set lacks (docker's --privileged fails).
        run -0 dk run -d --name node-timensd --network none --pid host -e TIMENSD_MODE=pod \
                --cap-add SYS_ADMIN --cap-add SYS_PTRACE --cap-add DAC_READ_SEARCH --cap-add NET_ADMIN \
                --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
                --device /dev/fuse \
                -v "$run_dir:/run/timens" -v "$host:/host" timens-node:test run
        wait_until 60 test -S "$run_dir/timensd.sock" || fail "no socket: $(dk logs node-timensd 2>&1)"
        printf 'hook = %s\nsocket = %s\n' "$BUILDDIR/timens-oci-hook" "$run_dir/timensd.sock" >"$RT_CONF"
        listing_of dk run --rm --network none --runtime timens $(printf -- '-e %s ' "${SETTINGS[@]}") "$IMAGE" \
                sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
}

@test "docker: mode = agent: with seccomp=unconfined the listener goes to timensd; docker's profile is refused, said why" {
        requires_docker
        printf 'mode = agent\nagent-socket = %s\n' "$DAEMON_DIR/seccomp-agent.sock" >"$RT_CONF"
        listing_of dk run --rm --network none --runtime timens --security-opt seccomp=unconfined \
                $(printf -- '-e %s ' "${SETTINGS[@]}") "$IMAGE" sh -c "$LISTING"
        check_listing "$REAL_OFF_NS" "$MONO_OFF_NS" "$BOOT_OFF_NS"
        grep -q "through the seccomp agent" "$DAEMON_DIR/log" || fail "timensd did not serve it as an agent"
        # Docker's default profile allows the clock calls: they would
        # bypass the agent, so the start is refused with the reason.
        run --separate-stderr dk run --rm --network none --runtime timens -e TIMENS_REALTIME=+1d "$IMAGE" true
        [ "$status" -ne 0 ] || fail "docker run succeeded"
        [[ "$stderr" == *"mode = agent: the container's seccomp profile allows"*"seccomp=unconfined"* ]] || fail "$stderr"
}
