#!/usr/bin/env bats
# timensctl run's own errors and exit statuses, as env(1) and chroot(1)
# have them: 125 for its own failures (with a message naming what was
# wrong), 126 for a command that cannot be executed, 127 for one that is
# not found, the command's status otherwise and 128+N for death by signal N.

load helpers

setup_file() {
        requires_timensctl
}

# run_error STATUS WORD ARGS...: timensctl run ARGS exits STATUS and its
# message (stderr) names WORD.
run_error() {
        local want=$1 word=$2
        shift 2
        run "-$want" --separate-stderr tns run "$@"
        [[ "$stderr" == *"$word"* ]] || fail "the message does not name '$word': $stderr"
        [ -z "$output" ] || fail "unexpected stdout: $output"
}

@test "a malformed offset: 125, naming the value" {
        run_error 125 abc --monotonic abc -- true
        run_error 125 1x --boottime 1x -- true
        run_error 125 tomorrow --realtime tomorrow -- true
        run_error 125 "''" --monotonic '' -- true
}

@test "a date is only for --realtime" {
        run_error 125 2030-01-01 --monotonic 2030-01-01 -- true
        run_error 125 @1893456000 --boottime @1893456000 -- true
}

@test "a date out of range: 125, naming the value" {
        run_error 125 2300-01-01 --realtime 2300-01-01 -- true
        run_error 125 1969-12-31 --realtime 1969-12-31T00:00:00Z -- true
}

@test "an offset the kernel would refuse: 125, naming the value" {
        run_error 125 -100000d --monotonic -100000d -- true
        run_error 125 -100000d --boottime -100000d -- true
        run_error 125 +200y --monotonic +200y -- true
        run_error 125 -100y --realtime -100y -- true
        run_error 125 +300y --realtime +300y -- true
}

@test "an offset beyond 64-bit nanoseconds: 125" {
        run_error 125 99999999999999999999 --monotonic 99999999999999999999 -- true
}

@test "an unknown option: 125" {
        run_error 125 bogus --bogus -- true
        run_error 125 "'x'" -x -- true
}

@test "an option without its value: 125" {
        run -125 --separate-stderr tns run --monotonic
        [ -n "$stderr" ] || fail "no message"
}

@test "no command: 125" {
        run_error 125 "command" --
        run_error 125 "command" --realtime +1d
        run -125 --separate-stderr tns run
}

# The commands other than run fail with 1 (timensctl --help), and so
# does timensctl itself when it has no such command or option.
@test "an unknown verb or global option: 1" {
        run -1 --separate-stderr tns frobnicate
        [[ "$stderr" == *frobnicate* ]] || fail "the message does not name the verb: $stderr"
        run -1 --separate-stderr tns --frobnicate list
        [[ "$stderr" == *frobnicate* ]] || fail "the message does not name the option: $stderr"
}

@test "a command that is not found: 127" {
        run_error 127 no-such-command-timens -- no-such-command-timens
        run_error 127 /nonexistent/cmd -- /nonexistent/cmd
        run_error 127 /etc/passwd/x -- /etc/passwd/x
}

@test "a command that cannot be executed: 126" {
        local f="$BATS_TEST_TMPDIR/not-executable"
        printf '#!/bin/sh\nexit 0\n' >"$f"
        chmod 644 "$f"
        run_error 126 "$f" -- "$f"
        run_error 126 "$BATS_TEST_TMPDIR" -- "$BATS_TEST_TMPDIR"
}

@test "the command's exit status is timensctl's" {
        run -0 --separate-stderr tns run -- true
        run -1 --separate-stderr tns run -- false
        run -42 --separate-stderr tns run -- sh -c 'exit 42'
        run -255 --separate-stderr tns run --realtime +1d -- sh -c 'exit 255'
        # The command's own 125, 126, 127 are passed on as they are.
        run -125 --separate-stderr tns run -- sh -c 'exit 125'
        [ -z "$stderr" ] || fail "timensctl spoke for a command's own 125: $stderr"
        run -127 --separate-stderr tns run -- sh -c 'exit 127'
}

@test "death by signal N: 128+N" {
        run -143 --separate-stderr tns run -- sh -c 'kill -TERM $$'
        run -137 --separate-stderr tns run -- sh -c 'kill -KILL $$'
        run -138 --separate-stderr tns run -- sh -c 'kill -USR1 $$'
        run -134 --separate-stderr tns run -- sh -c 'kill -ABRT $$'
}

@test "--help mentions every option, and exits 0" {
        run -0 --separate-stderr tns run --help
        local opt
        for opt in --monotonic --boottime --realtime --name --help; do
                [[ "$output" == *"$opt"* ]] || fail "--help does not mention $opt"
        done
        run -0 --separate-stderr tns run -h
        run -0 --separate-stderr tns --help
        [[ "$output" == *run* ]] || fail "timensctl --help does not mention run"
}

@test "--help stops before the command: nothing runs" {
        run -0 --separate-stderr tns run --help -- sh -c 'echo the-command-ran'
        [[ "$output" != *the-command-ran* ]] || fail "the command ran"
}

@test "--version" {
        run -0 --separate-stderr tns --version
        [[ "$output" == timensctl\ * ]] || fail "got '$output'"
}
