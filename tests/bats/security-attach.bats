#!/usr/bin/env bats
# What timensd does with ptrace, attacked (docs/SECURITY.md, "What timensd does with ptrace"): a
# member of the daemon's group attaches its own tree, in which a setuid
# root program, a process that asked not to be traced and one with
# capabilities run; an exec with a full fd table; children killed right
# after their exec; a tree whose processes never stop. Real users and a
# real timensd of the test's own, as daemon-auth.bats.

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash.
# shellcheck disable=SC2154,SC2153,SC2030,SC2031,SC2016 # run sets output; bash -c scripts expand their own $1

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe vforker
        export MEMBER=tnsm$$ GROUP=tnsg$$
        [ "$(id -u)" = 0 ] || return 0
        groupadd "$GROUP"
        useradd -M -U -s /usr/sbin/nologin -G "$GROUP" "$MEMBER"
}

teardown_file() {
        [ "$(id -u)" = 0 ] || return 0
        userdel "$MEMBER" 2>/dev/null || true
        groupdel "$GROUP" 2>/dev/null || true
}

setup() {
        requires_root
        id "$MEMBER" >/dev/null 2>&1 || skip "could not create the test user"
        start_daemon --group "$GROUP"
        # Private to the test, reachable by the member (mktemp makes 0700).
        PRIV=$(mktemp -d "$DAEMON_DIR/priv.XXXXXX")
        chmod 755 "$PRIV"
}

teardown() {
        daemon_teardown
}

# as CMD...: CMD as the member, with its uid, gid and groups.
as_member() {
        timeout -k 5 "$TIMEOUT" setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups "$@"
}

# status_field PID FIELD: a field of /proc/PID/status ("Seccomp", ...).
status_field() {
        awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# wait_children PID N: until PID has N children (bounded, 10 s); prints them.
wait_children() {
        local i
        for ((i = 0; i < 200; i++)); do
                (($(pgrep -c -P "$1") >= $2)) && break
                sleep 0.05
        done
        (($(pgrep -c -P "$1") >= $2)) || fail "process $1 did not start $2 children"
        pgrep -P "$1"
}

# wait_exec PID PROGRAM: until PID runs PROGRAM (its exec is done).
wait_exec() {
        local i want
        want=$(readlink -f "$2")
        for ((i = 0; i < 200; i++)); do
                [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
                sleep 0.05
        done
        fail "process $1 did not exec $2"
}

# assert_untouched PID: not traced, no filter, no no_new_privs: as it was.
assert_untouched() {
        [ "$(status_field "$1" TracerPid)" = 0 ] || fail "process $1 is traced by $(status_field "$1" TracerPid)"
        [ "$(status_field "$1" Seccomp)" = 0 ] || fail "process $1 has a seccomp filter"
        [ "$(status_field "$1" NoNewPrivs)" = 0 ] || fail "process $1 got no_new_privs"
        [[ $(awk '$1 == "State:" { print $2 }' "/proc/$1/status") != [tT] ]] || fail "process $1 is left stopped"
}

assert_attached() {
        [ "$(status_field "$1" Seccomp)" = 2 ] || fail "process $1 has no filter"
        [ "$(status_field "$1" TracerPid)" = 0 ] || fail "process $1 is left traced"
}

# A setuid-root copy of sleep in the test's private directory: a real
# privilege transition, as `su` under a member's `script`. Skips where the
# file system ignores setuid bits.
make_setuid_sleep() {
        cp "$(readlink -f /bin/sleep)" "$PRIV/suid-sleep"
        chown root:root "$PRIV/suid-sleep"
        chmod 4755 "$PRIV/suid-sleep"
        as_member "$PRIV/suid-sleep" 0 || skip "the member cannot run $PRIV/suid-sleep"
}

@test "a member's tree: its own processes attached, a setuid-root child skipped and reported" {
        local tree kids suid="" own="" p
        make_setuid_sleep
        bg setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups \
                bash -c '"$1" 1000 & /bin/sleep 1000 & wait' tree "$PRIV/suid-sleep"
        tree=${BG_PIDS[-1]}
        kids=$(wait_children "$tree" 2)
        for ((i = 0; i < 200; i++)); do
                suid="" own=""
                for p in $kids; do
                        case $(readlink "/proc/$p/exe") in
                        "$PRIV/suid-sleep") suid=$p ;;
                        "$(readlink -f /bin/sleep)") own=$p ;;
                        esac
                done
                [ -n "$suid" ] && [ -n "$own" ] && break
                sleep 0.05
        done
        [ -n "$suid" ] && [ -n "$own" ] || fail "children that did not exec: $kids"
        # The transition happened: it runs as root.
        [ "$(awk '$1 == "Uid:" { print $3 }' "/proc/$suid/status")" = 0 ] || skip "setuid bits are ignored here"

        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree" --realtime +1d
        [[ $output == *"Attached 2 processes."* ]]
        [[ $stderr == *"Skipped process $suid of the tree"*"runs as another user"* ]]
        assert_untouched "$suid"
        assert_attached "$tree"
        assert_attached "$own"
        grep -q "1 skipped: not the caller's" "$DAEMON_DIR/log"
        grep -q "Skipped process $suid of the tree of $tree, asked by uid $(id -u "$MEMBER"): it runs as another user" \
                "$DAEMON_DIR/log"
}

@test "the reply lists skipped processes with the reason (JSON)" {
        local tree suid
        make_setuid_sleep
        bg setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups \
                bash -c '"$1" 1000 & wait' tree "$PRIV/suid-sleep"
        tree=${BG_PIDS[-1]}
        suid=$(wait_children "$tree" 1)
        wait_exec "$suid" "$PRIV/suid-sleep"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree" --json
        [ "$(json_get "[k['pid'] for k in j['skipped']]" <<<"$output")" = "[$suid]" ]
        [[ $(json_get "j['skipped'][0]['reason']" <<<"$output") == *"another user"* ]]
        [ "$(json_get "j['attached']" <<<"$output")" = "[$tree]" ]
        assert_untouched "$suid"
}

@test "a member cannot attach a setuid-root process itself: refused with the reason, left untouched" {
        local suid
        make_setuid_sleep
        bg setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups "$PRIV/suid-sleep" 1000
        suid=${BG_PIDS[-1]}
        wait_exec "$suid" "$PRIV/suid-sleep"
        run -1 --separate-stderr as_member "$TIMENSCTL" attach "$suid" --no-tree
        [[ $stderr == *"process $suid is not yours to attach: it runs as another user"*"(permission-denied)"* ]]
        assert_untouched "$suid"
        # Root may.
        run -0 tns attach "$suid" --no-tree
        assert_attached "$suid"
}

@test "a process that runs as the member but can become root again (saved uid 0) is skipped" {
        local tree child
        # As a setuid-root program that dropped its euid for a while (su,
        # sudo): the euid /proc/PID shows is the member's, the saved uid
        # root's. Seen only once the process is stopped.
        bg bash -c 'python3 -c "import os, time; os.setgroups([]); os.setresgid($2, $2, $2); os.setresuid($1, $1, 0); time.sleep(1000)" &
                exec setpriv --reuid="$1" --regid="$2" --init-groups /bin/sleep 1000' tree "$(id -u "$MEMBER")" \
                "$(id -g "$MEMBER")"
        tree=${BG_PIDS[-1]}
        child=$(wait_children "$tree" 1)
        wait_exec "$tree" /bin/sleep
        for ((i = 0; i < 200; i++)); do
                [ "$(awk '$1 == "Uid:" { print $4 }' "/proc/$child/status")" = 0 ] &&
                        [ "$(stat -c %u "/proc/$child")" = "$(id -u "$MEMBER")" ] && break
                sleep 0.05
        done
        [ "$(awk '$1 == "Uid:" { print $3 "/" $4 }' "/proc/$child/status")" = "$(id -u "$MEMBER")/0" ] ||
                fail "process $child: $(grep Uid: "/proc/$child/status")"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree"
        [[ $stderr == *"Skipped process $child"*"another user"* ]]
        assert_untouched "$child"
        assert_attached "$tree"
        run -1 --separate-stderr as_member "$TIMENSCTL" attach "$child"
        [[ $stderr == *"is not yours to attach: it runs as another user"* ]]
        assert_untouched "$child"
}

@test "a member's own process that is not dumpable is skipped (it asked not to be traced)" {
        local tree child
        bg setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups bash -c \
                'python3 -c "import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(1000)" & wait' tree
        tree=${BG_PIDS[-1]}
        child=$(wait_children "$tree" 1)
        for ((i = 0; i < 200; i++)); do
                [ "$(stat -c %u "/proc/$child/status")" = 0 ] && break
                sleep 0.05
        done
        [ "$(stat -c %u "/proc/$child/status")" = 0 ] || fail "process $child did not become non-dumpable"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree"
        [[ $stderr == *"Skipped process $child"*"not dumpable"* ]]
        assert_untouched "$child"
        assert_attached "$tree"
}

@test "a member's own process with capabilities (ambient) is skipped" {
        local tree child
        # The member cannot raise capabilities: root's setpriv starts the
        # child with the member's ids and CAP_SYS_TIME, then the parent
        # becomes the member's own sleep.
        bg bash -c 'setpriv --reuid="$1" --regid="$1" --init-groups --inh-caps=+sys_time --ambient-caps=+sys_time \
                /bin/sleep 1000 & exec setpriv --reuid="$1" --regid="$1" --init-groups /bin/sleep 1000' tree "$MEMBER"
        tree=${BG_PIDS[-1]}
        child=$(wait_children "$tree" 1)
        wait_exec "$child" /bin/sleep
        wait_exec "$tree" /bin/sleep
        [ "$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$child/status")" != 0000000000000000 ] ||
                skip "setpriv could not give the child an ambient capability"
        [ "$(stat -c %U "/proc/$tree")" = "$MEMBER" ] || fail "process $tree is not the member's"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree"
        [[ $stderr == *"Skipped process $child"*"capabilities"* ]]
        assert_untouched "$child"
        assert_attached "$tree"
}

@test "a member's process in a user namespace it made (capabilities there only) is attached" {
        local tree child
        as_member unshare -U -r true 2>/dev/null || skip "the member cannot create user namespaces here"
        bg setpriv --reuid="$MEMBER" --regid="$MEMBER" --init-groups bash -c 'unshare -U -r /bin/sleep 1000 & wait' tree
        tree=${BG_PIDS[-1]}
        child=$(wait_children "$tree" 1)
        wait_exec "$child" /bin/sleep
        [ "$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$child/status")" != 0000000000000000 ] ||
                fail "process $child has no capabilities in its user namespace"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree"
        [[ $output == *"Attached 2 processes."* ]]
        [[ $stderr != *Skipped* ]]
        assert_attached "$child"
}

@test "a process running as the member in root's user namespace (root of a container mapped to the member) is skipped" {
        local tree child
        # Root makes the user namespace (so owns it) and maps its root to
        # the member: the process's ids read as the member's from here,
        # its capabilities are those of a user namespace the member does
        # not own.
        # (The maps written by hand, newuidmap may be missing; the child
        # waits for them before it runs anything: an exec unmapped would
        # lose its capabilities.)
        cat >"$PRIV/userns-root.py" <<'EOF'
import ctypes, os, time
ctypes.CDLL(None, use_errno=True).unshare(0x10000000)  # CLONE_NEWUSER
while not open("/proc/self/gid_map").read():
    time.sleep(0.01)
os.setgroups([])
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
os.execv("/bin/sleep", ["sleep", "1000"])
EOF
        bg bash -c 'python3 "$3" &
                child=$!
                for ((i = 0; i < 200; i++)); do
                        [ "$(readlink /proc/$child/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break
                        sleep 0.05
                done
                echo "0 $1 1" >/proc/$child/uid_map
                echo "0 $2 1" >/proc/$child/gid_map
                exec setpriv --reuid="$1" --regid="$2" --init-groups /bin/sleep 1000' tree "$(id -u "$MEMBER")" \
                "$(id -g "$MEMBER")" "$PRIV/userns-root.py"
        tree=${BG_PIDS[-1]}
        wait_exec "$tree" /bin/sleep
        child=$(wait_children "$tree" 1)
        wait_exec "$child" /bin/sleep
        [ "$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' "/proc/$child/status")" = "$(printf '%s' "$(id -u "$MEMBER")"{,,,})" ] ||
                skip "unshare could not map the member: $(grep Uid: "/proc/$child/status")"
        run -0 --separate-stderr as_member "$TIMENSCTL" attach "$tree"
        [[ $stderr == *"Skipped process $child"*"capabilities"* ]]
        assert_untouched "$child"
        assert_attached "$tree"
}

@test "an exec with a full fd table runs, un-injected, its clocks shifted, never left stopped" {
        local want
        # Python's fds are close-on-exec: the exec finds no free fd for the
        # vDSO's memfd (EMFILE), the program it runs has room again.
        cat >"$PRIV/fill-fds.py" <<'EOF'
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
try:
    while True:
        os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
except OSError:
    pass
os.execv(sys.argv[1], sys.argv[1:])
EOF
        want=$(($(host_ns realtime) / NSEC_PER_SEC + 86400))
        run -0 tns run --realtime +1d -- python3 "$PRIV/fill-fds.py" "$HELPERS/clockprobe" --sec realtime
        ((output >= want - 2 && output <= want + 30)) || fail "syscall realtime $output, want $want"
        # libc's clock_gettime, with no vDSO: the syscall, shifted too.
        run -0 tns run --realtime +1d -- python3 "$PRIV/fill-fds.py" "$(command -v python3)" -c \
                'import time; print(int(time.time()))'
        ((output >= want - 2 && output <= want + 30)) || fail "libc realtime $output, want $want"
        grep -q "Failed to hand the program its vDSO, it uses the syscall path: Too many open files" \
                "$DAEMON_DIR/log"
}

# kill_loop N: N children, each SIGKILLed the moment it is seen in its
# ptrace stop after its exec (state t: the supervisor injects our vDSO),
# or once it runs. Python: a shell's polling is too slow for that window.
# A child not reaped within 10 s is a zombie still traced by the
# supervisor (its parent cannot reap it before the tracer has).
kill_loop() {
        cat >"$PRIV/kill-loop.py" <<'EOF'
import os, signal, sys, time
# N children, each SIGKILLed the moment it is seen in a ptrace stop ('t')
# after its exec (or once its exec is done): while the supervisor injects.
n = int(sys.argv[1])
prog = os.path.realpath("/bin/sleep")
for i in range(n):
    pid = os.fork()
    if pid == 0:
        os.execv(prog, [prog, "100"])
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                st = f.read()
            state = st[st.rindex(b")") + 2:st.rindex(b")") + 3]
            if state == b"t" and os.readlink(f"/proc/{pid}/exe") == prog:
                break
            if state == b"S" and os.readlink(f"/proc/{pid}/exe") == prog:
                break
        except OSError:
            pass
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            print(f"child {pid} not reaped within 10 s", file=sys.stderr)
            sys.exit(1)
        time.sleep(0.001)
print("done")
EOF
        # 200 forks, execs and injections: generous on a loaded machine.
        local TIMEOUT=$((TIMEOUT * 3))
        run -0 --separate-stderr tns run --realtime +1d -- python3 "$PRIV/kill-loop.py" "$1"
        [ "$output" = "done" ]
}

@test "children killed right after their exec (200): none left traced, no warning" {
        # timensd again, logging warnings and worse only: its log must stay
        # empty (a program that dies is its own business).
        stop_daemon
        "$TIMENSD" --foreground --log-target stderr --log-level warning --socket "$SOCK" --group "$GROUP" \
                2>"$DAEMON_DIR/warnings" &
        DAEMON_PID=$!
        wait_daemon_ready
        kill_loop 200
        [ -z "$stderr" ]
        [ ! -s "$DAEMON_DIR/warnings" ] || fail "timensd warned: $(cat "$DAEMON_DIR/warnings")"
        # Nothing of ours is still traced by timensd.
        run -0 bash -c "grep -l '^TracerPid:[[:space:]]*$DAEMON_PID\$' /proc/[0-9]*/status 2>/dev/null | wc -l"
        [ "$output" = 0 ]
}

@test "children killed right after their exec, timensctl's own supervisor: nothing on the terminal" {
        stop_daemon
        export TIMENS_SOCKET="$DAEMON_DIR/nothing-here.sock"
        kill_loop 200
        [ -z "$stderr" ]
}

@test "an attach of a tree whose processes never stop is bounded, and leaves none stopped" {
        local tree start end p
        build_helpers vforker
        bg bash -c 'for i in 1 2 3 4 5 6 7 8; do "$1" & done; wait' tree "$HELPERS/vforker"
        tree=${BG_PIDS[-1]}
        wait_children "$tree" 8 >/dev/null
        start=$(date +%s%N)
        run -1 --separate-stderr tns attach "$tree" --realtime +1d
        end=$(date +%s%N)
        # Eight processes that never stop: 8 x 2 s before; now 2 s for the
        # request (generous bound: a loaded machine).
        (((end - start) / 1000000 < 6000)) || fail "the attach took $(((end - start) / 1000000)) ms"
        [[ $stderr == *"Failed to attach process"*"did not stop in time"* ]]
        assert_attached "$tree"
        # Let the vfork children go: their parents then stop for the
        # interrupt still queued, and timensd detaches them.
        for p in $(pgrep -P "$tree"); do
                pkill -TERM -P "$p" || true
        done
        for p in $(pgrep -P "$tree"); do
                wait_for_exit "$p" 10
        done
        run -0 bash -c "grep -l '^TracerPid:[[:space:]]*$DAEMON_PID\$' /proc/[0-9]*/status 2>/dev/null | wc -l"
        [ "$output" = 0 ]
}
