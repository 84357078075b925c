#!/usr/bin/env bats
# timensd and timensctl's commands for it: programs run through the
# daemon, list/show/--json, names, the life of a namespace, export and
# import, stats, and the protocol examples replayed. Each test has a
# timensd of its own (its child, on a temporary socket).

# $stderr comes from bats' run --separate-stderr, $DAEMON_DIR and
# $DAEMON_PID from daemon-helpers.bash (which bats' load brings in).
# shellcheck disable=SC2154,SC2153

load helpers
load daemon-helpers

setup_file() {
        requires_timensctl
        requires_timensd
        build_helpers clockprobe
}

setup() {
        requires_root
        start_daemon
}

teardown() {
        daemon_teardown
}

@test "timensd: --help, --version, and a clear error for a bad option" {
        run -0 "$TIMENSD" --help
        [[ $output == *"--socket PATH"* ]]
        run -0 "$TIMENSD" --version
        [[ $output == "timensd "* ]]
        run -1 "$TIMENSD" --log-level loud
        [[ $output == *"invalid --log-level 'loud'"* ]]
        run -1 "$TIMENSD" --max-connections 0
        [[ $output == *"--max-connections"* ]]
}

@test "hello over the socket: server, protocol 1, access, capabilities" {
        run -0 api '{"version":1,"id":1,"op":"hello"}'
        echo "$output" | json_get 'j["id"] == 1 and j["result"]["protocol"] == 1 or sys.exit(1)'
        echo "$output" | json_get 'j["result"]["access"] == "write" or sys.exit(1)'
        echo "$output" | json_get '"adopt" in j["result"]["capabilities"] or sys.exit(1)'
}

@test "run through timensd: the command reads its offsets through the raw syscall" {
        local before after rt mono
        before=$(host_ns realtime)
        run -0 tns run --name shifted --realtime +1d --monotonic +2h -- "$HELPERS/clockprobe"
        after=$(host_ns realtime)
        rt=$(probe_ns CLOCK_REALTIME <<<"$output")
        assert_within realtime "$((rt - 86400 * NSEC_PER_SEC))" "$before" "$after"
        mono=$(probe_ns CLOCK_MONOTONIC <<<"$output")
        assert_near monotonic "$((mono - 7200 * NSEC_PER_SEC))" "$(host_ns monotonic)" "$((2 * NSEC_PER_SEC))"
        grep -q "Serving namespace .* for process" "$DAEMON_DIR/log"
}

@test "list and show a running namespace; --json output parses" {
        local up=$DAEMON_DIR/up pid
        bg "$TIMENSCTL" run --name job --realtime +1d -- sh -c "echo \$\$ > $up; exec sleep 60"
        wait_for_file "$up"
        pid=$(cat "$up")
        run -0 tns list
        [[ $output == *" job "*"run"*"yes"*"+1d"* ]]
        [[ $output == *"1 namespace listed."* ]]
        run -0 tns show job
        [[ $output == *"job (id 1)"* ]]
        [[ $output == *"Origin: run"* ]]
        [[ $output == *"Realtime: +1d"* ]]
        [[ $output == *"Processes: 1 ($pid)"* ]]
        run -0 tns list --json
        python3 -m json.tool <<<"$output" >/dev/null
        echo "$output" | json_get 'j["namespaces"][0]["name"] == "job" or sys.exit(1)'
        run -0 tns --json show job
        echo "$output" | json_get 'j["namespace"]["processes"] == ['"$pid"'] or sys.exit(1)'
        echo "$output" | json_get 'j["namespace"]["clocks"]["realtime"]["offset_ns"] == 86400 * 10**9 or sys.exit(1)'
}

@test "a run's namespace goes from list with its last process (wait answers on the event)" {
        local bgpid=$DAEMON_DIR/bgpid state
        run -0 tns run --name brief -- true
        run -0 tns wait brief --timeout 20
        run -0 tns list
        [[ $output != *brief* ]]
        # The command exits; a process it left in the background keeps the
        # namespace until it exits too.
        run -0 tns run --name lingering -- sh -c "sleep 5 >/dev/null 2>&1 & echo \$! > $bgpid"
        run -0 tns show lingering
        [[ $output == *"Processes: 1 ($(cat "$bgpid"))"* ]]
        run -0 tns wait lingering --timeout 20
        # Exited: gone, or a zombie its new parent has not reaped yet.
        state=$(awk '/^State:/ { print $2 }' "/proc/$(cat "$bgpid")/status" 2>/dev/null || true)
        [[ -z $state || $state == Z ]]
        run -0 tns list
        [[ $output == "No namespaces." ]]
}

@test "--name must be unique in timensd" {
        run -0 tns create taken
        run -125 --separate-stderr tns run --name taken -- true
        [[ $stderr == *"A namespace named 'taken' exists in timensd already"* ]]
        run -1 --separate-stderr tns create taken
        [[ $stderr == *"exists"* ]]
}

@test "--no-daemon serves the namespace itself; with no daemon, run falls back" {
        local up=$DAEMON_DIR/up t
        bg "$TIMENSCTL" run --no-daemon --name own -- sh -c "echo x > $up; exec sleep 60"
        wait_for_file "$up"
        run -0 tns list
        [[ $output != *own* ]]
        t=$(TIMENS_SOCKET=$DAEMON_DIR/nobody-here.sock tns run --realtime +3d -- "$HELPERS/clockprobe" --sec realtime)
        assert_near "fallback realtime" "$((t * NSEC_PER_SEC))" "$(($(host_ns realtime) + 3 * 86400 * NSEC_PER_SEC))" \
                "$((2 * NSEC_PER_SEC))"
}

@test "create, run --join, destroy: refused while busy, --force detaches" {
        local up=$DAEMON_DIR/up t
        run -0 tns create box --realtime +5d
        t=$(tns run --join box -- "$HELPERS/clockprobe" --sec realtime)
        assert_near "joined realtime" "$((t * NSEC_PER_SEC))" "$(($(host_ns realtime) + 5 * 86400 * NSEC_PER_SEC))" \
                "$((2 * NSEC_PER_SEC))"
        bg "$TIMENSCTL" run --join box -- sh -c "echo x > $up; exec sleep 60"
        wait_for_file "$up"
        run -1 --separate-stderr tns destroy box
        [[ $stderr == *"has processes"*"(busy)"* ]]
        run -0 tns destroy --force box
        run -0 tns list
        [[ $output == *" -    "*"detached"*"yes"*"+5d"* ]]
        # The name is free again.
        run -0 tns create box
        run -125 --separate-stderr tns run --join nothere -- true
        [[ $stderr == *"no namespace named 'nothere'"* ]]
}

@test "bare timensctl lists; status shows one or lists all; list --names prints names only" {
        run -0 tns create box --realtime +5d
        run -0 tns create other
        run -0 --separate-stderr tns
        [[ $output == *"NAME"*"box"*"other"*"2 namespaces listed."* ]] || fail "bare timensctl: $output"
        run -0 --separate-stderr tns status
        [[ $output == *"box"*"other"*"2 namespaces listed."* ]] || fail "status: $output"
        run -0 --separate-stderr tns status box
        [[ $output == *"box"*"+5d"* && $output != *"other"* ]] || fail "status box: $output"
        run -0 --separate-stderr tns list --names
        [ "$output" = $'box\nother' ] || fail "list --names: $output"
        run -1 --separate-stderr tns list --names --json
        [[ $stderr == *"--names and --json"* ]]
}

@test "export and import: MONOTONIC continues from the exported value, REALTIME keeps its offset" {
        local state=$DAEMON_DIR/state.json exported now
        run -0 tns create saved --monotonic +1d --realtime -1h
        run -0 tns export saved --output "$state"
        python3 -m json.tool "$state" >/dev/null
        exported=$(json_get 'j["clocks"]["monotonic"]["value_ns"]' <"$state")
        run -0 tns destroy saved
        # Time passes between checkpoint and restore.
        sleep 1.5
        run -0 tns import "$state"
        run -0 tns --json show saved
        now=$(echo "$output" | json_get 'j["namespace"]["clocks"]["monotonic"]["now_ns"]')
        # Continued from the exported value: less than the 1.5 s that passed.
        ((now >= exported && now < exported + NSEC_PER_SEC)) ||
                fail "monotonic reads $(fmt_ns "$now") after import, exported $(fmt_ns "$exported")"
        echo "$output" | json_get 'j["namespace"]["clocks"]["realtime"]["offset_ns"] == -3600 * 10**9 or sys.exit(1)'
        echo "$output" | json_get 'j["namespace"]["origin"] == "import" or sys.exit(1)'
        run -1 --separate-stderr tns import "$state"
        [[ $stderr == *exists* ]]
        run -0 tns import --name copy - <"$state"
}

@test "stats count the calls served, as text and JSON" {
        run -0 tns run -- "$HELPERS/clockprobe" --sec realtime
        run -0 tns stats
        [[ $output == *"Notifications:"* ]]
        [[ $output == *"clock_gettime"* ]]
        run -0 tns stats --json
        echo "$output" | json_get 'j["syscalls"]["clock_gettime"]["calls"] >= 1 or sys.exit(1)'
        echo "$output" | json_get 'j["server"]["requests"] >= 1 or sys.exit(1)'
}

@test "attach refuses process 1, clearly (attach.bats attaches real programs)" {
        run -0 tns create target
        run -1 --separate-stderr tns attach 1 --join target
        [[ $stderr == *"process 1 is the init of timensd's pid namespace"*"(invalid-params)"* ]]
        run -0 api '{"version":1,"id":3,"op":"attach","params":{"name":"target","join":true,"pid":1}}'
        echo "$output" | json_get 'j["error"]["code"] == "invalid-params" or sys.exit(1)'
}

@test "commands name what failed, and exit 1" {
        run -1 --separate-stderr tns show ghost
        [[ $stderr == *"no namespace named 'ghost' (not-found)"* ]]
        run -1 --separate-stderr tns show 999
        [[ $stderr == *"no namespace with id 999"* ]]
        run -1 --separate-stderr tns set ghost --realtime +1q
        [[ $stderr == *"Invalid --realtime '+1q'"* ]]
        run -1 --separate-stderr tns --socket "$DAEMON_DIR/none.sock" list
        [[ $stderr == *"Failed to connect to timensd at $DAEMON_DIR/none.sock"*"is timensd running?"* ]]
}

@test "SIGHUP reloads, SIGTERM stops cleanly and removes the socket" {
        kill -HUP "$DAEMON_PID"
        run -0 tns list
        kill -TERM "$DAEMON_PID"
        wait_for_exit "$DAEMON_PID" 10
        run -0 wait "$DAEMON_PID"
        DAEMON_PID=
        [ ! -e "$SOCK" ]
        grep -q "Reloaded" "$DAEMON_DIR/log"
        grep -q "stopping" "$DAEMON_DIR/log"
}

@test "timensd on stderr: every line carries its priority as <N>, as sd-daemon(3) has it" {
        run -0 tns list
        grep -qE '^<6>timensd: Listening on ' "$DAEMON_DIR/log" || fail "no <6> on an info line: $(cat "$DAEMON_DIR/log")"
        run ! grep -vE '^<[0-7]>timensd: ' "$DAEMON_DIR/log"
        # timensctl's messages are for a human: no prefix.
        run -1 --separate-stderr tns show ghost
        [[ $stderr == "timensctl: "* ]] || fail "timensctl: $stderr"
}

@test "the protocol examples (proto/examples) replay as documented" {
        run -0 python3 "$BATS_TEST_DIRNAME/proto-replay.py" "$SOCK" "$ROOT/proto/examples"
        [[ $output == *"replayed as documented"* ]]
}

@test "run --join: the commands of one namespace share its kernel time namespace (one /proc/PID/ns/time), show names it; another run has its own" {
        local first second other
        tns create hand --monotonic +1000s
        bg "$TIMENSCTL" run --join hand -- sh -c 'readlink /proc/self/ns/time; exec sleep 60' >"$BATS_TEST_TMPDIR/a" 2>&1
        wait_for_file "$BATS_TEST_TMPDIR/a"
        second=$(tns run --join hand -- readlink /proc/self/ns/time)
        other=$(tns run -- readlink /proc/self/ns/time)
        first=$(cat "$BATS_TEST_TMPDIR/a")
        [[ "$first" == time:\[*\] ]] || fail "$first"
        [ "$second" = "$first" ] || fail "the second run of hand: $second, the first: $first"
        [ "$other" != "$first" ] || fail "a run of another namespace shares hand's: $other"
        run -0 tns show hand
        [[ "$output" == *"Kernel ns: $first"* ]] || fail "$output"
        stop_bg
}
