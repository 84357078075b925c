#!/usr/bin/env bats
# Who may do what (proto/PROTOCOL.md, "Access"), with real users made for
# the test and removed after it: root and members of the daemon's group
# change state, other users only read, and processes inside a supervised
# namespace get nothing unless the namespace was granted more.

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe
        # Names of this run only; exported, because each test runs in a
        # process of its own.
        export READER=tnsr$$ WRITER=tnsw$$ GROUP=tnsg$$
        [ "$(id -u)" = 0 ] || return 0
        groupadd "$GROUP"
        useradd -M -U -s /usr/sbin/nologin "$READER"
        useradd -M -U -s /usr/sbin/nologin -G "$GROUP" "$WRITER"
}

teardown_file() {
        [ "$(id -u)" = 0 ] || return 0
        userdel "$READER" 2>/dev/null || true
        userdel "$WRITER" 2>/dev/null || true
        groupdel "$GROUP" 2>/dev/null || true
}

setup() {
        requires_root
        id "$READER" >/dev/null 2>&1 || skip "could not create the test users"
        start_daemon --group "$GROUP"
}

teardown() {
        daemon_teardown
}

# as USER CMD...: CMD with USER's uid, gid and groups.
as() {
        local user=$1
        shift
        timeout -k 5 "$TIMEOUT" setpriv --reuid="$user" --regid="$user" --init-groups "$@"
}

@test "another local user may read, not change state" {
        run -0 tns create shared --realtime +1d
        run -0 as "$READER" "$TIMENSCTL" list
        [[ $output == *shared* ]]
        run -0 as "$READER" "$TIMENSCTL" show shared
        run -0 as "$READER" "$TIMENSCTL" export shared
        run -0 as "$READER" "$TIMENSCTL" stats
        run -1 --separate-stderr as "$READER" "$TIMENSCTL" set shared --realtime +2d
        [[ $stderr == *"set changes state: only root and group '$GROUP' may do it"*"(permission-denied)"* ]]
        run -1 --separate-stderr as "$READER" "$TIMENSCTL" destroy shared
        [[ $stderr == *"(permission-denied)"* ]]
        run -1 --separate-stderr as "$READER" "$TIMENSCTL" create mine
        [[ $stderr == *"(permission-denied)"* ]]
        run -0 tns show shared
        [[ $output == *"Realtime: +1d"* ]]
}

@test "members of the daemon's group may change state" {
        run -0 as "$WRITER" "$TIMENSCTL" create grouped --realtime +1d
        run -0 as "$WRITER" "$TIMENSCTL" set grouped --realtime +2d
        run -0 tns show grouped
        [[ $output == *"Realtime: +2d"* ]]
        run -0 as "$WRITER" "$TIMENSCTL" destroy grouped
}

@test "a group member may not set or destroy a namespace it does not own, shared or not" {
        run -0 tns create rootown --realtime +1h
        run -0 tns create rootshared --realtime +1h --shared
        for n in rootown rootshared; do
                run -1 --separate-stderr as "$WRITER" "$TIMENSCTL" set "$n" --realtime +500d
                [[ $stderr == *"belongs to uid 0: only uid 0 and root may set it"*"(permission-denied)"* ]] ||
                        fail "set of $n: $stderr"
                run -1 --separate-stderr as "$WRITER" "$TIMENSCTL" destroy --force "$n"
                [[ $stderr == *"may destroy it"*"(permission-denied)"* ]] || fail "destroy of $n: $stderr"
                run -0 tns show "$n"
                [[ $output == *"Realtime: +1h"* ]]
        done
        # Root may change the group member's.
        run -0 as "$WRITER" "$TIMENSCTL" create theirs --realtime +1d
        run -0 tns set theirs --realtime +2d
        run -0 tns destroy theirs
}

@test "another user's run falls back to its own supervisor, and works" {
        local t
        t=$(as "$READER" "$TIMENSCTL" run --name theirs --realtime +2d -- "$HELPERS/clockprobe" --sec realtime)
        assert_near "realtime of $READER's run" "$((t * NSEC_PER_SEC))" \
                "$(($(host_ns realtime) + 2 * 86400 * NSEC_PER_SEC))" "$((2 * NSEC_PER_SEC))"
        run -0 tns list
        [[ $output != *theirs* ]]
}

@test "a process inside a namespace is refused, even as root" {
        run -0 tns create outside
        run -1 --separate-stderr tns run --name inside -- "$TIMENSCTL" list
        [[ $stderr == *"is inside time namespace"*"not granted read access"*"(permission-denied)"* ]]
        run -1 --separate-stderr tns run --name inside2 -- "$TIMENSCTL" set outside --realtime +1d
        [[ $stderr == *"(permission-denied)"* ]]
        # The refusal names the request; the daemon goes on for others.
        run -0 tns show outside
        [[ $output == *"Realtime: 0 "* ]]
}

@test "an orphan inside, its parent gone, is refused too: its vDSO mapping names its namespace" {
        local out=$DAEMON_DIR/orphan
        # The child waits for its parent to be gone, so that no ancestry
        # leads back to the namespace: only the mapping can.
        # shellcheck disable=SC2016 # expanded by that sh
        run -0 tns run --name parentgone -- sh -c '
                p=$$
                (while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
                 "$0" list >"$1.txt" 2>&1; echo $? >"$1.rc") >/dev/null 2>&1 &' "$TIMENSCTL" "$out"
        wait_for_file "$out.rc" 20
        grep -q "inside time namespace" "$out.txt" || fail "an orphan inside got: $(cat "$out.txt")"
        [ "$(cat "$out.rc")" = 1 ]
}

@test "--grant read lets processes inside read, not write; --grant full as from outside" {
        run -0 tns create outside
        run -0 tns run --name reader --grant read -- "$TIMENSCTL" list
        [[ $output == *reader* ]]
        run -1 --separate-stderr tns run --name reader2 --grant read -- "$TIMENSCTL" set outside --realtime +1d
        [[ $stderr == *"not granted write access"* ]]
        run -0 tns run --name writer --grant full -- "$TIMENSCTL" set outside --realtime +1d
        run -0 tns show outside
        [[ $output == *"Realtime: +1d"* ]]
}

@test "a process that joins a granted namespace later gets its grant" {
        run -0 tns create room --grant read
        run -0 tns run --join room -- "$TIMENSCTL" show room
        [[ $output == *"Grant: read"* ]]
        run -1 --separate-stderr tns run --join room -- "$TIMENSCTL" destroy room
        [[ $stderr == *"not granted write access"* ]]
}
