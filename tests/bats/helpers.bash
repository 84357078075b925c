# shellcheck shell=bash
# Shared by the end-to-end tests: where things are, honest skips, bounded
# waits and clock arithmetic. Loaded with `load helpers`, as runc's
# tests/integration do.
#
# Knobs: BUILDDIR (default build, relative to the top directory),
# TIMENS_TEST_TIMEOUT (seconds any one command may take, default 60),
# TIMENS_TEST_NO_BUILD=1 (do not run make for missing helper programs).

bats_require_minimum_version 1.5.0

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
BUILDDIR="${BUILDDIR:-build}"
case "$BUILDDIR" in
/*) ;;
*) BUILDDIR="$ROOT/$BUILDDIR" ;;
esac
TIMENSCTL="$BUILDDIR/timensctl"
HELPERS="$BUILDDIR/tests/helpers"
# shellcheck disable=SC2034 # for the .bats files
DATADIR="$ROOT/tests/data"
TIMEOUT="${TIMENS_TEST_TIMEOUT:-60}"

NSEC_PER_SEC=1000000000
# Two reads of a clock from two processes started one after the other.
TOLERANCE_NS=$((NSEC_PER_SEC / 2))

# Runs a command with no capabilities at all and as nobody: every call in
# it that would set a clock fails with EPERM, on the host and under timens.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)

fail() {
        echo "$*" >&2
        return 1
}

# timensctl, bounded: a hang is a failure, not a stuck test run. timeout(1)
# gives 124 when it had to kill.
tns() {
        timeout -k 5 "$TIMEOUT" "$TIMENSCTL" "$@"
}

# Builds helper programs (tests/helpers/NAME.c) unless they are there and
# up to date; make decides. Call from setup_file.
build_helpers() {
        local targets=() name
        for name in "$@"; do
                targets+=("$BUILDDIR/tests/helpers/$name")
        done
        if [ "${TIMENS_TEST_NO_BUILD:-0}" = 1 ]; then
                return 0
        fi
        # The Makefile's ASan build lives in build-asan and needs its knob.
        local knobs=(BUILDDIR="$BUILDDIR")
        [ "$(basename "$BUILDDIR")" = build-asan ] && knobs+=(ASAN=1)
        make -s -C "$ROOT" "${knobs[@]}" "${targets[@]}" >&2 ||
                fail "could not build ${targets[*]}"
}

# The same for programs whose absence only skips the tests that use them
# (a static libc may be missing).
build_optional_helpers() {
        build_helpers "$@" 2>/dev/null || true
}

requires_timensctl() {
        [ -x "$TIMENSCTL" ] || fail "$TIMENSCTL is missing: run make $TIMENSCTL"
}

requires_helper() {
        [ -x "$HELPERS/$1" ] || skip "$HELPERS/$1 could not be built"
}

requires_root() {
        [ "$(id -u)" = 0 ] || skip "needs root"
}

# The kernel's own time namespaces, to compare with (util-linux unshare -T).
requires_kernel_timens() {
        unshare -T --monotonic 1 true 2>/dev/null || skip "no kernel time namespaces here (unshare -T failed)"
}

requires_user_ns() {
        unshare -U -r true 2>/dev/null || skip "cannot create user namespaces here (unshare -U -r failed)"
}

# io_uring, which timensd's lookups of exec files as anyone use (refused
# by kernel.io_uring_disabled or a seccomp profile: nothing is told then).
requires_io_uring() {
        python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(425, 2, ctypes.create_string_buffer(120)) >= 0 else 1)' ||
                skip "no io_uring here (kernel.io_uring_disabled, or a seccomp profile): no exec is let through"
}

requires_setpriv() {
        "${NOBODY[@]}" true 2>/dev/null || skip "setpriv cannot drop to nobody here"
}

# Polls for a non-empty file, up to $2 seconds (default 10): waits on the
# event, with a bound, instead of sleeping and hoping.
wait_for_file() {
        local file=$1 limit=$((${2:-10} * 20)) i
        for ((i = 0; i < limit; i++)); do
                [ -s "$file" ] && return 0
                sleep 0.05
        done
        fail "timed out waiting for $file"
}

# Polls until file $1 has a line matching the grep pattern $2, up to $3
# seconds (default 10): a log line written by another process after the
# event the test caused.
wait_for_line() {
        local file=$1 pattern=$2 limit=$((${3:-10} * 20)) i
        for ((i = 0; i < limit; i++)); do
                grep -q -- "$pattern" "$file" 2>/dev/null && return 0
                sleep 0.05
        done
        fail "timed out waiting for \"$pattern\" in $file: $(cat "$file" 2>&1)"
}

# Polls until process $1 is gone, up to $2 seconds (default 10).
wait_for_exit() {
        local pid=$1 limit=$((${2:-10} * 20)) i
        for ((i = 0; i < limit; i++)); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.05
        done
        fail "timed out waiting for process $pid to exit"
}

# One clock of the host, as clockprobe reads it (raw syscall), in ns.
host_ns() {
        "$HELPERS/clockprobe" --ns "$1"
}

# The value of line NAME of a clockprobe listing (stdin) in nanoseconds:
# "NAME 0 SEC.NSEC", "gettimeofday 0 SEC.USEC", "time 0 SEC".
probe_ns() {
        local name=$1 n r v sec frac
        while read -r n r v; do
                [ "$n" = "$name" ] || continue
                [ "$r" = 0 ] || fail "$name: $r"
                sec=${v%%.*}
                frac=0
                [ "$sec" != "$v" ] && frac=${v#*.}
                frac="${frac}000000000"
                echo $((sec * NSEC_PER_SEC + 10#${frac:0:9}))
                return 0
        done
        fail "$name is not in the listing"
}

# "12.345678901" for messages.
fmt_ns() {
        local v=$1 sign=""
        if ((v < 0)); then
                sign=-
                v=$((-v))
        fi
        printf '%s%d.%09d' "$sign" $((v / NSEC_PER_SEC)) $((v % NSEC_PER_SEC))
}

# assert_near LABEL GOT WANT [TOLERANCE_NS]
assert_near() {
        local label=$1 got=$2 want=$3 tol=${4:-$TOLERANCE_NS} d
        d=$((got - want))
        ((d < 0)) && d=$((-d))
        ((d <= tol)) ||
                fail "$label: got $(fmt_ns "$got"), want $(fmt_ns "$want") +- $(fmt_ns "$tol") (off by $(fmt_ns "$d"))"
}

# assert_within LABEL VALUE LOW HIGH: LOW - tolerance <= VALUE <= HIGH +
# tolerance. For a value read between two host reads LOW and HIGH.
assert_within() {
        local label=$1 v=$2 lo=$3 hi=$4
        ((v >= lo - TOLERANCE_NS && v <= hi + TOLERANCE_NS)) ||
                fail "$label: $(fmt_ns "$v") is not within [$(fmt_ns "$lo"), $(fmt_ns "$hi")] +- $(fmt_ns "$TOLERANCE_NS")"
}

# Seconds since boot of the host, whole.
host_uptime_sec() {
        echo $(($("$HELPERS/clockprobe" --ns monotonic) / NSEC_PER_SEC))
}

# bats does not show what `run` captured when a test fails: print it from
# teardown. A file with its own teardown calls this first.
show_output_on_failure() {
        [ -n "${BATS_TEST_COMPLETED:-}" ] && return 0
        printf '# last output:\n%s\n' "${output:-}"
        [ -n "${stderr:-}" ] && printf '# last stderr:\n%s\n' "$stderr"
        return 0
}

teardown() {
        show_output_on_failure
}

# assert_loop_live FILE MONO_OFF_SEC [REALTIME_FROM_SEC]: the clockloop
# writing FILE (tests/helpers/clockloop.c) still runs (a new line within
# 0.3 s), and its latest line reads monotonic = host + MONO_OFF_SEC by the
# vDSO and by the raw syscall, and realtime (both ways) within two minutes
# after REALTIME_FROM_SEC if given. For tests that restart the supervisor
# under a running program.
assert_loop_live() {
        local file=$1 mono_off=$2 rt_from=${3:-} n host_mono v seq rt_v rt_s mono_v mono_s _rest
        n=$(wc -l <"$file")
        sleep 0.3
        (($(wc -l <"$file") > n)) || fail "the program writing $file stopped"
        read -r seq rt_v rt_s mono_v mono_s _rest < <(tail -1 "$file")
        host_mono=$(($(host_ns monotonic) / NSEC_PER_SEC))
        for v in "$mono_v" "$mono_s"; do
                ((v >= host_mono + mono_off - 2 && v <= host_mono + mono_off)) ||
                        fail "line $seq: monotonic $v, want host $host_mono + $mono_off"
        done
        [ -n "$rt_from" ] || return 0
        for v in "$rt_v" "$rt_s"; do
                ((v >= rt_from && v < rt_from + 120)) || fail "line $seq: realtime $v, want $rt_from + <2 min"
        done
}
