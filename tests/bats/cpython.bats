#!/usr/bin/env bats
# CPython's own tests of processes, signals, threads and the os module
# (test_subprocess, test_os, test_threading, test_signal) under shifted
# clocks give the host's results (issue 15): they fork, exec, kill children
# at any instant of their exec, stop and continue them, wait with timeouts
# on every clock and interrupt waits with signals. A test that fails under
# timensctl run must fail on the host too; a run that hangs fails.
#
# Only the failures are run again on the host, so a clean run costs one
# pass of the suites.

load helpers

SUITES=(test_subprocess test_os test_threading test_signal)

setup_file() {
        requires_timensctl
        local py
        # A python3 with its test package: pyenv's or a source build have
        # it; Debian's is in libpython3.11-testsuite (scripts/deps.sh).
        for py in "$(command -v python3)" /usr/bin/python3; do
                [ -x "$py" ] || continue
                if "$py" -c "import test.support, $(printf 'test.%s,' "${SUITES[@]}" | sed 's/,$//')" 2>/dev/null; then
                        export PY=$py
                        return
                fi
        done
        skip "no python3 here has CPython's test suite (Debian: libpython3.11-testsuite)"
}

teardown() {
        show_output_on_failure
}

# run_suites LOG SUITE...: runs regrtest verbosely under the command in
# the array PREFIX (none: on the host), from a private directory (its
# temporary files stay there), with a bound per test and one for the
# whole run.
run_suites() {
        local log=$1 dir
        shift
        dir=$(mktemp -d "$BATS_TEST_TMPDIR/run.XXXXXX")
        (cd "$dir" && TMPDIR=$dir timeout -k 10 1500 "${PREFIX[@]}" "$PY" -m test -v --timeout 600 "$@") \
                </dev/null >"$log" 2>&1
}

# failed_ids LOG: the ids of the test cases unittest reported as failed or
# in error, one per line, sorted.
failed_ids() {
        sed -nE 's/^(FAIL|ERROR): ([^ ]+) \(([^)]+)\).*/\3 \2/p' "$1" |
                awk '{ id = $1; n = split(id, p, "."); if (p[n] != $2) id = id "." $2; print id }' | sort -u
}

# suites_of IDS: the suites (test_xxx modules) the ids belong to.
suites_of() {
        sed -nE 's/^test\.(test_[a-z_0-9]+)\..*/\1/p' <<<"$1" | sort -u
}

# result_of LOG: regrtest's verdict ("== Tests result: FAILURE ==").
result_of() {
        grep -o "Tests result: [A-Z ,]*[A-Z]" "$1" | tail -1
}

check_against_host() {
        local label=$1 log=$2 rc=$3 ids host_ids extra suites
        ((rc != 124 && rc != 137)) || fail "$label: the suites did not end within 25 minutes (a hang): $(tail -40 "$log")"
        grep -q "Tests result: " "$log" || fail "$label: regrtest ended without a result (exit $rc): $(tail -40 "$log")"
        ids=$(failed_ids "$log")
        if grep -q "Tests result: SUCCESS" "$log" && [ -z "$ids" ]; then
                return 0
        fi
        # Something failed or changed the environment: what does the host
        # say of the same suites?
        mapfile -t suites < <(suites_of "$ids")
        [ ${#suites[@]} -gt 0 ] || mapfile -t suites < <(printf '%s\n' "${SUITES[@]}")
        local PREFIX=()
        run_suites "$BATS_TEST_TMPDIR/host.log" "${suites[@]}" || true
        host_ids=$(failed_ids "$BATS_TEST_TMPDIR/host.log")
        extra=$(comm -23 <(printf '%s\n' "$ids" | sed '/^$/d') <(printf '%s\n' "$host_ids" | sed '/^$/d'))
        [ -z "$extra" ] || fail "$label: fails under timensctl, passes on the host: $extra
$(grep -A30 -E '^(FAIL|ERROR): ' "$log" | head -120)"
        if ! grep -q "Tests result: SUCCESS" "$log"; then
                [ "$(result_of "$log")" = "$(result_of "$BATS_TEST_TMPDIR/host.log")" ] ||
                        fail "$label: $(result_of "$log") under timensctl, $(result_of "$BATS_TEST_TMPDIR/host.log") on the host:
$(grep -B2 -A10 -i "env changed\|altered the execution environment\|dangling\|warning --" "$log" | head -80)"
        fi
}

@test "CPython's test_subprocess, test_os, test_threading and test_signal under --realtime +1d --monotonic +10d: the host's results" {
        local rc=0
        PREFIX=(env TIMENS_SOCKET="$BATS_TEST_TMPDIR/none.sock"
                "$TIMENSCTL" run --realtime +1d --monotonic +10d --boottime +10d --)
        run_suites "$BATS_TEST_TMPDIR/tns.log" "${SUITES[@]}" || rc=$?
        check_against_host "timensctl run" "$BATS_TEST_TMPDIR/tns.log" "$rc"
}
