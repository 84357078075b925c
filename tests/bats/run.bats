#!/usr/bin/env bats
# timensctl run: the clocks a command sees, through the raw syscalls the
# supervisor serves. Values are compared with the host's read just before
# and just after, or with the kernel's own time namespaces (unshare -T),
# never with a fixed expectation of how long a command takes.
#
# The vDSO path (libc's clock_gettime, coreutils date) is not shifted yet:
# the test for it skips, saying so, while it reads the host's time.

load helpers

setup_file() {
        requires_timensctl
        build_helpers clockprobe
        build_optional_helpers clockprobe-static
}

# Every clock of clockprobe's listing that a namespace moves, by class.
REALTIME_CLOCKS=(CLOCK_REALTIME CLOCK_REALTIME_COARSE CLOCK_TAI gettimeofday time)
MONOTONIC_CLOCKS=(CLOCK_MONOTONIC CLOCK_MONOTONIC_RAW CLOCK_MONOTONIC_COARSE)
BOOTTIME_CLOCKS=(CLOCK_BOOTTIME)

# Lists every clock with PROBE (default clockprobe) under `timensctl run
# ARGS`, between two listings of the host: sets host_before, ns, host_after.
listing_under() {
        local probe="$HELPERS/clockprobe"
        if [ "$1" = --probe ]; then
                probe=$2
                shift 2
        fi
        host_before=$("$HELPERS/clockprobe")
        run -0 --separate-stderr tns run "$@" -- "$probe"
        ns=$output
        host_after=$("$HELPERS/clockprobe")
}

# check_shift OFFSET_NS CLOCK...: each clock in $ns, less OFFSET, lies
# between its host readings before and after.
check_shift() {
        local off=$1 name v lo hi
        shift
        for name in "$@"; do
                v=$(probe_ns "$name" <<<"$ns")
                lo=$(probe_ns "$name" <<<"$host_before")
                hi=$(probe_ns "$name" <<<"$host_after")
                assert_within "$name shifted by $(fmt_ns "$off")" $((v - off)) "$lo" "$hi"
        done
}

# check_date EPOCH_SEC: realtime clocks in $ns read EPOCH_SEC plus the
# time that passed since timensctl resolved the date (at most the time
# between the two host listings).
check_date() {
        local want=$(($1 * NSEC_PER_SEC)) elapsed name v
        elapsed=$(($(probe_ns CLOCK_REALTIME <<<"$host_after") - $(probe_ns CLOCK_REALTIME <<<"$host_before")))
        for name in CLOCK_REALTIME gettimeofday CLOCK_TAI; do
                v=$(probe_ns "$name" <<<"$ns")
                assert_within "$name" "$v" "$want" $((want + elapsed))
        done
}

# The line of one clock, as "RESULT" only: for clocks that fail.
probe_result() {
        awk -v n="$1" '$1 == n { print $2 }'
}

@test "without offsets every clock reads the host's" {
        listing_under
        check_shift 0 "${REALTIME_CLOCKS[@]}" "${MONOTONIC_CLOCKS[@]}" "${BOOTTIME_CLOCKS[@]}"
        # Clocks the namespace does not shift answer as on the host.
        local name
        for name in CLOCK_PROCESS_CPUTIME_ID CLOCK_THREAD_CPUTIME_ID CLOCK_REALTIME_ALARM CLOCK_BOOTTIME_ALARM \
                CLOCK_SGI_CYCLE timezone; do
                [ "$(probe_result "$name" <<<"$ns")" = "$(probe_result "$name" <<<"$host_before")" ] ||
                        fail "$name: $(probe_result "$name" <<<"$ns") under timens, $(probe_result "$name" <<<"$host_before") on the host"
        done
}

@test "explicit zero offsets read the host's clocks" {
        listing_under --monotonic 0 --boottime 0 --realtime 0
        check_shift 0 "${REALTIME_CLOCKS[@]}" "${MONOTONIC_CLOCKS[@]}" "${BOOTTIME_CLOCKS[@]}"
}

@test "--realtime +1d: realtime clocks read the host's plus a day, the others the host's" {
        listing_under --realtime +1d
        check_shift $((86400 * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
        check_shift 0 "${MONOTONIC_CLOCKS[@]}" "${BOOTTIME_CLOCKS[@]}"
}

@test "--realtime -1d: a negative realtime offset" {
        listing_under --realtime -1d
        check_shift $((-86400 * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
}

@test "--realtime -3h30m: suffixed components add up" {
        listing_under --realtime -3h30m
        check_shift $((-(3 * 3600 + 30 * 60) * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
}

@test "--monotonic and --boottime shift their classes only" {
        listing_under --monotonic 100000 --boottime 200000
        check_shift $((100000 * NSEC_PER_SEC)) "${MONOTONIC_CLOCKS[@]}"
        check_shift $((200000 * NSEC_PER_SEC)) "${BOOTTIME_CLOCKS[@]}"
        check_shift 0 "${REALTIME_CLOCKS[@]}"
}

# Same machine, read back to back: timens and the kernel must agree.
compare_with_kernel_timens() {
        local mono=$1 boot=$2 kernel timens name k t
        shift 2
        kernel=$(unshare -T --monotonic "$mono" --boottime "$boot" "$HELPERS/clockprobe")
        timens=$(tns run "$@" -- "$HELPERS/clockprobe")
        for name in "${MONOTONIC_CLOCKS[@]}" "${BOOTTIME_CLOCKS[@]}" CLOCK_REALTIME; do
                k=$(probe_ns "$name" <<<"$kernel")
                t=$(probe_ns "$name" <<<"$timens")
                assert_near "$name: timens vs unshare -T" "$t" "$k"
        done
}

@test "--monotonic/--boottime read what the kernel's unshare -T gives" {
        requires_root
        requires_kernel_timens
        compare_with_kernel_timens 100000 200000 --monotonic 100000 --boottime 200000
}

@test "suffixed offsets read what unshare -T gives in seconds" {
        requires_root
        requires_kernel_timens
        compare_with_kernel_timens 86400 $((2 * 86400 + 3600)) --monotonic 1d --boottime 2d1h
}

@test "negative --monotonic/--boottime read what unshare -T gives" {
        requires_root
        requires_kernel_timens
        local half
        half=$(($(host_uptime_sec) / 2))
        ((half >= 2)) || skip "the host has been up for too short a time for a negative offset"
        compare_with_kernel_timens -"$half" -"$half" --monotonic -"$half" --boottime -"$half"
}

@test "--realtime 2030-01-01T00:00:00Z: the clock reads that date" {
        listing_under --realtime 2030-01-01T00:00:00Z
        check_date 1893456000
}

@test "--realtime @1893456000: the epoch form" {
        listing_under --realtime @1893456000
        check_date 1893456000
}

@test "--realtime with a zone offset: 2030-01-01T09:00:00+09:00" {
        listing_under --realtime 2030-01-01T09:00:00+09:00
        check_date 1893456000
}

@test "--realtime 2030-01-01 is midnight in the caller's TZ" {
        # A POSIX TZ string, so that no zoneinfo files are needed: UTC+9.
        host_before=$("$HELPERS/clockprobe")
        TZ=JST-9 run -0 --separate-stderr tns run --realtime 2030-01-01 -- "$HELPERS/clockprobe"
        ns=$output
        host_after=$("$HELPERS/clockprobe")
        check_date $((1893456000 - 9 * 3600))
}

@test "--realtime far in the past and in the future" {
        listing_under --realtime 1970-01-02T00:00:00Z
        check_date 86400
        listing_under --realtime 2200-01-01T00:00:00Z
        check_date 7258118400
}

@test "python3 making the raw syscall through ctypes sees the offset" {
        local python
        python=$(command -v python3) || skip "no python3"
        "$python" -c 'import ctypes' 2>/dev/null || skip "python3 has no ctypes"
        local script='
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ts = (ctypes.c_long * 2)()
assert libc.syscall(228, 0, ts) == 0, ctypes.get_errno()   # clock_gettime(CLOCK_REALTIME)
tv = (ctypes.c_long * 2)()
assert libc.syscall(96, tv, None) == 0, ctypes.get_errno() # gettimeofday
print(ts[0] * 10**9 + ts[1], tv[0] * 10**9 + tv[1] * 1000)
'
        local lo hi rt gtod
        lo=$(host_ns realtime)
        run -0 --separate-stderr tns run --realtime +1d -- "$python" -c "$script"
        hi=$(host_ns realtime)
        read -r rt gtod <<<"$output"
        assert_within "python realtime" $((rt - 86400 * NSEC_PER_SEC)) "$lo" "$hi"
        assert_within "python gettimeofday" $((gtod - 86400 * NSEC_PER_SEC)) "$lo" "$hi"
}

@test "a static binary sees the offsets" {
        requires_helper clockprobe-static
        listing_under --probe "$HELPERS/clockprobe-static" --realtime +10d --monotonic 1000 --boottime 2000
        check_shift $((10 * 86400 * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
        check_shift $((1000 * NSEC_PER_SEC)) "${MONOTONIC_CLOCKS[@]}"
        check_shift $((2000 * NSEC_PER_SEC)) "${BOOTTIME_CLOCKS[@]}"
}

@test "the vDSO path (libc clock_gettime, gettimeofday, time) sees the offsets" {
        host_before=$("$HELPERS/clockprobe")
        run -0 --separate-stderr tns run --realtime +1d --monotonic 1000 --boottime 2000 -- \
                "$HELPERS/clockprobe" --vdso
        ns=$output
        host_after=$("$HELPERS/clockprobe")
        local v lo hi
        v=$(probe_ns CLOCK_REALTIME <<<"$ns")
        lo=$(probe_ns CLOCK_REALTIME <<<"$host_before")
        hi=$(probe_ns CLOCK_REALTIME <<<"$host_after")
        if ((v >= lo - TOLERANCE_NS && v <= hi + TOLERANCE_NS)); then
                skip "libc's clock_gettime reads the host's time: the vDSO is not replaced yet"
        fi
        check_shift $((86400 * NSEC_PER_SEC)) "${REALTIME_CLOCKS[@]}"
        check_shift $((1000 * NSEC_PER_SEC)) "${MONOTONIC_CLOCKS[@]}"
        check_shift $((2000 * NSEC_PER_SEC)) "${BOOTTIME_CLOCKS[@]}"
}

@test "--name is accepted" {
        run -0 --separate-stderr tns run --name bats-test --realtime +1h -- "$HELPERS/clockprobe" --sec realtime
}

@test "arguments, stdin and stdout pass through to the command" {
        run -0 --separate-stderr tns run -- sh -c 'printf "%s|" "$@"; cat' sh 'a b' --realtime -- <<<"from stdin"
        [ "$output" = "a b|--realtime|--|from stdin" ] || fail "got '$output'"
}

@test "options after the command are the command's own" {
        run -0 --separate-stderr tns run echo --realtime +1d
        [ "$output" = "--realtime +1d" ] || fail "got '$output'"
}
