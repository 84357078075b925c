#!/usr/bin/env bats
# The trust boundary of timensd's sockets (docs/SECURITY.md, "timensd's sockets"; issue
# 14, items 2, 5, 6 and 7): each hole the audit proved is tried again as
# an unprivileged user and must now fail with a clear error, while timensd
# goes on serving everyone else. Users are made for the test and removed
# after it.

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154,SC2153,SC2030,SC2031 # each @test is a subshell: VICTIMS is per test

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe adopt-forge grant-escape
        export READER=tnssr$$ READER2=tnssq$$ WRITER=tnssw$$ WRITER2=tnssv$$ GROUP=tnssg$$
        [ "$(id -u)" = 0 ] || return 0
        groupadd "$GROUP"
        useradd -M -U -s /usr/sbin/nologin "$READER"
        useradd -M -U -s /usr/sbin/nologin "$READER2"
        useradd -M -U -s /usr/sbin/nologin -G "$GROUP" "$WRITER"
        useradd -M -U -s /usr/sbin/nologin -G "$GROUP" "$WRITER2"
}

teardown_file() {
        [ "$(id -u)" = 0 ] || return 0
        for u in "$READER" "$READER2" "$WRITER" "$WRITER2"; do
                userdel "$u" 2>/dev/null || true
        done
        groupdel "$GROUP" 2>/dev/null || true
}

setup() {
        requires_root
        command -v setpriv >/dev/null || skip "setpriv is missing (util-linux)"
        id "$WRITER" >/dev/null 2>&1 || skip "could not create the test users"
        VICTIMS=()
}

teardown() {
        local pid
        for pid in "${VICTIMS[@]}"; do
                kill -KILL "$pid" 2>/dev/null || true
        done
        daemon_teardown
}

# as USER CMD...: CMD with USER's uid, gid and groups.
as() {
        local user=$1
        shift
        timeout -k 5 "$TIMEOUT" setpriv --reuid="$user" --regid="$user" --init-groups "$@"
}

# victim [unshare options]: a root `sleep` in namespaces of its own; sets
# VICTIM to its pid (the pid timensd sees).
victim() {
        local f=$DAEMON_DIR/victim.$RANDOM
        # shellcheck disable=SC2016 # expanded by that sh
        setsid unshare "$@" sh -c 'echo $$ >"$0.tmp"; mv "$0.tmp" "$0"; exec sleep 1000' "$f" \
                </dev/null >/dev/null 2>&1 &
        wait_for_file "$f" 20
        VICTIM=$(cat "$f")
        # With --fork (a pid namespace), the sleep is unshare's child, and
        # $$ above is its pid inside: find the host's pid by the parent.
        if [[ " $* " == *" --fork "* ]]; then
                local i
                for ((i = 0; i < 100; i++)); do
                        VICTIM=$(pgrep -P "$!" sleep || pgrep -P "$(pgrep -P "$!" | head -1)" sleep || true)
                        [ -n "$VICTIM" ] && break
                        sleep 0.05
                done
        fi
        [ -n "$VICTIM" ] || fail "the victim did not start"
        VICTIMS+=("$VICTIM" "$!")
}

# timensd still serves everyone else: root's list, and a program under
# `timensctl run` reads shifted clocks.
still_serves() {
        local t
        run -0 tns list
        t=$(tns run --realtime +2d -- "$HELPERS/clockprobe" --sec realtime)
        assert_near "realtime under run after the attack" "$((t * NSEC_PER_SEC))" \
                "$(($(host_ns realtime) + 2 * 86400 * NSEC_PER_SEC))" "$((5 * NSEC_PER_SEC))"
        kill -0 "$DAEMON_PID" || fail "timensd died"
}

no_fuse_in() {
        ! grep -q " fuse" "/proc/$1/mountinfo" || fail "timensd mounted into process $1's mount namespace"
}

@test "agent socket: root's alone (0600); a group member cannot even connect" {
        start_daemon --group "$GROUP"
        local agent=$DAEMON_DIR/seccomp-agent.sock
        [ "$(stat -c %a "$agent")" = 600 ] || fail "the agent socket is mode $(stat -c %a "$agent")"
        run as "$WRITER" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$agent"
        [ "$status" -ne 0 ]
        [[ $output == *PermissionError* ]]
        still_serves
}

@test "adopt: a group member naming a root process in another mount namespace is refused, nothing mounted" {
        start_daemon --group "$GROUP"
        victim --mount --propagation private
        run -1 as "$WRITER" "$BUILDDIR/tests/helpers/adopt-forge" "$SOCK" "$VICTIM"
        [[ $output == *'"code":"permission-denied"'* ]]
        [[ $output == *"process $VICTIM (parent "*") is not a descendant of the client"* ]]
        no_fuse_in "$VICTIM"
        run -0 tns list
        [[ $output != *forged* ]]
        still_serves
}

@test "adopt: a process in another pid namespace, or the caller's own but not its descendant, is refused" {
        start_daemon --group "$GROUP"
        victim --pid --fork --mount-proc
        run -1 as "$WRITER" "$BUILDDIR/tests/helpers/adopt-forge" "$SOCK" "$VICTIM"
        [[ $output == *'"code":"permission-denied"'* ]]
        [[ $output == *"is not a descendant of the client"* ]]
        no_fuse_in "$VICTIM"
        # Its own uid's process, started apart: not the client's child.
        as "$WRITER" sleep 1000 </dev/null >/dev/null 2>&1 &
        VICTIMS+=("$!")
        local own="" i
        # setpriv execs sleep a moment later: wait for it, bounded.
        for ((i = 0; i < 200; i++)); do
                own=$(pgrep -n -u "$WRITER" -x sleep) && break
                sleep 0.05
        done
        [ -n "$own" ] || fail "no sleep of $WRITER"
        VICTIMS+=("$own")
        run -1 as "$WRITER" "$BUILDDIR/tests/helpers/adopt-forge" "$SOCK" "$own"
        [[ $output == *"is not a descendant of the client"* ]]
        run -0 tns list
        [[ $output != *forged* ]]
        still_serves
}

@test "attach: a group member cannot attach into a mount namespace it does not own" {
        start_daemon --group "$GROUP"
        victim --mount --propagation private
        run -1 --separate-stderr as "$WRITER" "$TIMENSCTL" attach --name stolen "$VICTIM"
        [[ $stderr == *"is in a mount namespace that uid $(id -u "$WRITER") does not own"*"(permission-denied)"* ]]
        no_fuse_in "$VICTIM"
        run -0 tns list
        [[ $output != *stolen* ]]
        still_serves
}

# gone_peer: a client that connects, forks, and exits; its child then
# asks with the inherited connection. Prints the reply.
GONE_PEER='
import json, os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
parent = os.getpid()
if os.fork() != 0:
    os._exit(0)
for _ in range(400):
    if os.getppid() != parent:
        break
    time.sleep(0.05)
s.sendall(json.dumps({"version": 1, "id": 1, "op": sys.argv[2], "params": json.loads(sys.argv[3])}).encode() + b"\n")
print(s.makefile().readline(), flush=True)
'

@test "a connection whose process exited has no access (it cannot pass for someone outside)" {
        start_daemon --group "$GROUP"
        local out=$DAEMON_DIR/gone.out
        # Inside a namespace granted nothing: before, once the connecting
        # process was gone, its pid counted as outside and the request
        # went through with the user's full rights.
        run -0 tns create target
        tns run --name jail -- /usr/bin/python3 -c "$GONE_PEER" "$SOCK" set \
                '{"name": "target", "offsets": {"realtime": "+9d"}}' >"$out"
        wait_for_file "$out" 20
        for ((i = 0; i < 200; i++)); do
                [ -s "$out" ] && break
                sleep 0.05
        done
        run cat "$out"
        [[ $output == *'"code":"permission-denied"'* ]]
        [[ $output == *"which opened this connection, has exited"* ]]
        run -0 tns show target
        [[ $output == *"Realtime: 0 "* ]]
        # And outside, as a group member: the connection dies with it.
        rm -f "$out"
        as "$WRITER" /usr/bin/python3 -c "$GONE_PEER" "$SOCK" create '{"name": "ghost"}' >"$out"
        for ((i = 0; i < 200; i++)); do
                [ -s "$out" ] && break
                sleep 0.05
        done
        run cat "$out"
        [[ $output == *"has exited"* ]]
        run -0 tns list
        [[ $output != *ghost* ]]
        still_serves
}

@test "a namespace belongs to its maker: others join it only if it is shared" {
        start_daemon --group "$GROUP"
        run -0 as "$WRITER" "$TIMENSCTL" create wns --realtime +5d
        run -0 tns show wns
        [[ $output == *"Owner: uid $(id -u "$WRITER")"* ]]
        # run exits 125 when it cannot start the command (timensctl(1)).
        run -125 --separate-stderr as "$WRITER2" "$TIMENSCTL" run --join wns -- true
        [[ $stderr == *"namespace 'wns' belongs to uid $(id -u "$WRITER") and is not shared"*"(permission-denied)"* ]]
        # Root too: the OCI hook's attach and the agent run as root, and a
        # container's org.timens.name must not reach it.
        run -125 --separate-stderr tns run --join wns -- true
        [[ $stderr == *"belongs to uid"*"(permission-denied)"* ]]
        victim
        run -1 --separate-stderr tns attach --join wns "$VICTIM"
        [[ $stderr == *"belongs to uid"*"(permission-denied)"* ]]
        python3 - "$DAEMON_DIR/seccomp-agent.sock" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
msg = b'{"ociVersion":"1.0.2","fds":["seccompFd"],"pid":0,"metadata":"name=wns","state":{"id":"c1","pid":0}}'
socket.send_fds(s, [msg], [os.open("/dev/null", os.O_RDONLY)])
s.shutdown(socket.SHUT_WR)
s.recv(1)
PY
        grep -q "container c1: namespace 'wns' belongs to uid $(id -u "$WRITER") and is not shared" \
                "$DAEMON_DIR/log" || fail "the agent did not refuse the join"
        # Its maker joins; a shared one is open to the group.
        run -0 as "$WRITER" "$TIMENSCTL" run --join wns -- true
        run -0 as "$WRITER" "$TIMENSCTL" create wshared --shared
        run -0 as "$WRITER2" "$TIMENSCTL" run --join wshared -- true
        run -0 tns show wshared
        [[ $output == *"(shared: any uid may join)"* ]]
        still_serves
}

# hold USER N FILE: USER opens N connections and says hello on each; FILE
# gets "OK REFUSED" and the refusals' messages, then the connections stay
# open until the process is killed (bounded by TIMEOUT).
hold() {
        as "$1" /usr/bin/python3 -c '
import socket, sys, time
n, ok, bad, msgs, keep = int(sys.argv[2]), 0, 0, set(), []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    try:
        s.sendall(b"{\"version\":1,\"id\":1,\"op\":\"hello\"}\n")
    except OSError:
        pass  # refused: the reply came, and the socket is closed
    try:
        line = s.makefile().readline()
    except OSError:
        line = "(reset)"
    if "\"result\"" in line:
        ok += 1
        keep.append(s)
    else:
        bad += 1
        msgs.add(line.strip())
with open(sys.argv[3] + ".tmp", "w") as f:
    print(ok, bad, file=f)
    for m in msgs:
        print(m, file=f)
import os
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
time.sleep(60)' "$SOCK" "$2" "$3" &
        VICTIMS+=("$!")
        wait_for_file "$3" 30
}

@test "connection quotas: one uid cannot take every slot, the last ones are kept for root and the group" {
        start_daemon --group "$GROUP" --max-connections 80
        local d=$DAEMON_DIR/out
        mkdir -m 1777 "$d"
        hold "$READER" 40 "$d/r1"
        run cat "$d/r1"
        [[ ${lines[0]} == "32 8" ]]
        [[ $output == *"too many connections of uid $(id -u "$READER") (32 at once)"* ]]
        # 80 - 20 kept: another reader gets 28 more.
        hold "$READER2" 32 "$d/r2"
        run cat "$d/r2"
        [[ ${lines[0]} == "28 4" ]]
        [[ $output == *"the last 20 are kept for root and group '$GROUP'"* ]]
        run -0 as "$WRITER" "$TIMENSCTL" list
        still_serves
}

@test "show: a reader gets the namespace without a scan of every process's maps" {
        start_daemon --group "$GROUP"
        local bgpid=$DAEMON_DIR/bgpid
        run -0 tns run --name lingering -- sh -c "sleep 30 >/dev/null 2>&1 & echo \$! > $bgpid"
        VICTIMS+=("$(cat "$bgpid")")
        # Root (and the group) find the reparented sleep by its mapping of
        # the namespace's vDSO; a reader gets only the trees timensd
        # tracks, which cost nothing that other users can inflate.
        run -0 tns show lingering
        [[ $output == *"Processes: 1 ($(cat "$bgpid"))"* ]]
        run -0 as "$READER" "$TIMENSCTL" show lingering
        [[ $output == *"Processes: 0"* ]]
        still_serves
}

@test "a namespace's owner survives a restart (SIGUSR2): others still cannot join it" {
        start_daemon --group "$GROUP"
        run -0 as "$WRITER" "$TIMENSCTL" create kept --realtime +5d
        run -0 as "$WRITER" "$TIMENSCTL" create keptshared --shared
        handover_daemon
        run -0 tns show kept
        [[ $output == *"Owner: uid $(id -u "$WRITER")"* ]]
        run -125 --separate-stderr as "$WRITER2" "$TIMENSCTL" run --join kept -- true
        [[ $stderr == *"namespace 'kept' belongs to uid $(id -u "$WRITER") and is not shared"* ]]
        run -0 as "$WRITER2" "$TIMENSCTL" run --join keptshared -- true
        still_serves
}

@test "a group member's own run still goes through timensd: its child passes every check" {
        start_daemon --group "$GROUP"
        local t
        t=$(as "$WRITER" "$TIMENSCTL" run --name mine --realtime +3d -- "$HELPERS/clockprobe" --sec realtime)
        assert_near "realtime of $WRITER's run" "$((t * NSEC_PER_SEC))" \
                "$(($(host_ns realtime) + 3 * 86400 * NSEC_PER_SEC))" "$((5 * NSEC_PER_SEC))"
        # Served by timensd, not by the fallback: the adopt was logged.
        grep -q "Serving namespace [0-9]* for process" "$DAEMON_DIR/log" ||
                fail "the run was not adopted: $(cat "$DAEMON_DIR/log")"
        run ! grep -q "not a descendant\|does not own\|does not run with" "$DAEMON_DIR/log"
}

@test "a member that sheds its mapping and its place in the tree keeps its filter: it may only read" {
        start_daemon --group "$GROUP"
        local req='{"version":1,"id":1,"op":"create","params":{"name":"escaped"}}'
        # A group member's program in a namespace granted nothing: as
        # itself it is refused; escaped (munmap, double fork), it is under
        # the filter still, which timensd cannot place: read at most.
        run -0 as "$WRITER" "$TIMENSCTL" run --grant none -- "$BUILDDIR/tests/helpers/grant-escape" "$SOCK" "$req"
        [[ $output == "ppid "* ]] || fail "the escape did not run: $output"
        [[ $output == *'"code":"permission-denied"'* ]] || fail "an escaped member changed state: $output"
        [[ $output == *"runs under a seccomp filter"*"may only read"* ]] || fail "$output"
        run -0 tns list
        [[ $output != *escaped* ]]
        # Reading is still open to it, as to any local user.
        run -0 as "$WRITER" "$TIMENSCTL" run --grant none -- "$BUILDDIR/tests/helpers/grant-escape" "$SOCK" \
                '{"version":1,"id":2,"op":"list","params":{}}'
        [[ $output == *'"result"'* ]] || fail "$output"
        still_serves
}
