#!/usr/bin/env bats
# The errno table (tests/data/errno-cases.tsv): every case as a raw
# syscall, on the host and under timensctl run; the answers (return value,
# errno, whether a buffer was touched) must be the same line for line,
# except where the table's timens column says timens differs by design
# (clock_settime on the monotonic clocks, which the RFC made settable).
#
# Both sides run without any capability (as nobody, or in a user namespace
# without a root mapping): the table's valid settime calls then fail with
# EPERM everywhere and can never move the host's clock. errno-probe itself
# refuses to run with CAP_SYS_TIME.
#
# The table runs once per variant (setup_file); each test compares the
# cases of one syscall, so that one bug fails one test.

load helpers

TABLE="$DATADIR/errno-cases.tsv"

# name, then timensctl's options; the wrapper comes from variant_wrapper.
VARIANTS=(
        "zero"
        "offsets --realtime -1d --monotonic 1d --boottime 2d"
        "date --realtime 2200-01-01T00:00:00Z"
        "userns --realtime +1h"
)

# How a variant drops its privileges, or nothing if it cannot here.
variant_wrapper() {
        if [ "$1" = userns ]; then
                unshare -U true 2>/dev/null && echo "unshare -U"
        else
                "${NOBODY[@]}" true 2>/dev/null && echo "${NOBODY[*]}"
        fi
        return 0
}

# expected_under_timens HOST_OUTPUT_FILE: the host's lines with the table's
# by-design differences (column 6) put in.
expected_under_timens() {
        awk -F'\t' '
                NR == FNR {
                        if ($0 !~ /^#/ && NF >= 6 && $6 != "")
                                want[$1] = $6
                        next
                }
                {
                        split($0, f, " ")
                        if (f[1] in want)
                                print f[1], want[f[1]]
                        else
                                print
                }' "$TABLE" "$1"
}

# Runs one variant on both sides into $BATS_FILE_TMPDIR/NAME.{host,timens,want}
# and NAME.status ("host-status timens-status"), or NAME.skip.
run_variant() {
        local name=$1 wrapper dir=$BATS_FILE_TMPDIR h=0 t=0
        shift
        read -r -a wrapper <<<"$(variant_wrapper "$name")"
        if [ ${#wrapper[@]} -eq 0 ]; then
                touch "$dir/$name.skip"
                return 0
        fi
        "${wrapper[@]}" "$HELPERS/errno-probe" "$TABLE" >"$dir/$name.host" 2>&1 || h=$?
        tns run "$@" -- "${wrapper[@]}" "$HELPERS/errno-probe" "$TABLE" >"$dir/$name.timens" 2>"$dir/$name.stderr" ||
                t=$?
        expected_under_timens "$dir/$name.host" >"$dir/$name.want"
        echo "$h $t" >"$dir/$name.status"
}

setup_file() {
        requires_timensctl
        build_helpers errno-probe
        local v
        for v in "${VARIANTS[@]}"; do
                # shellcheck disable=SC2086 # a variant is words on purpose
                run_variant $v
        done
}

# The lines of FILE whose case calls one of SYSCALLS (space separated).
lines_of() {
        awk -F'\t' -v calls=" $1 " '
                NR == FNR {
                        if ($0 !~ /^#/)
                                sys[$1] = $2
                        next
                }
                {
                        split($0, f, " ")
                        if (index(calls, " " sys[f[1]] " "))
                                print
                }' "$TABLE" "$2"
}

# compare_syscalls SYSCALL...: in every variant, the cases of these
# syscalls answer under timens as the table expects from the host's.
compare_syscalls() {
        local v name ran=0 failed=0 status diffs=""
        for v in "${VARIANTS[@]}"; do
                name=${v%% *}
                [ -e "$BATS_FILE_TMPDIR/$name.skip" ] && continue
                ran=1
                status=$(cat "$BATS_FILE_TMPDIR/$name.status")
                if [ "$status" != "0 0" ]; then
                        diffs+="variant $name: exit statuses (host, timens) $status"$'\n'
                        diffs+="$(cat "$BATS_FILE_TMPDIR/$name.stderr")"$'\n'
                        failed=1
                        continue
                fi
                if ! diffs+="$(diff -u --label "$name: host, as timens should answer" --label "$name: timens" \
                        <(lines_of "$*" "$BATS_FILE_TMPDIR/$name.want") \
                        <(lines_of "$*" "$BATS_FILE_TMPDIR/$name.timens"))"$'\n'; then
                        failed=1
                fi
        done
        ((ran)) || skip "cannot drop privileges here (setpriv, unshare -U)"
        output=$diffs
        ((failed == 0))
}

@test "the table runs, and reads the same twice on the host" {
        requires_setpriv
        run -0 "${NOBODY[@]}" "$HELPERS/errno-probe" "$TABLE"
        local first=$output cases
        run -0 "${NOBODY[@]}" "$HELPERS/errno-probe" "$TABLE"
        [ "$output" = "$first" ] || fail "two host runs differ"
        cases=$(grep -cv -e '^#' -e '^$' "$TABLE")
        (($(wc -l <<<"$output") == cases)) || fail "$(wc -l <<<"$output") lines for $cases cases"
}

@test "every case of the table belongs to a syscall the tests below compare" {
        # shellcheck disable=SC2016 # an awk program
        run -0 awk -F'\t' '$0 !~ /^#/ && NF && $2 !~ /^(clock_gettime|clock_getres|gettimeofday|time|clock_settime|settimeofday|adjtimex|clock_adjtime|unshare)$/' "$TABLE"
        [ -z "$output" ] || fail "cases of other syscalls: $output"
}

@test "errno-probe refuses to run with CAP_SYS_TIME" {
        requires_root
        run -2 "$HELPERS/errno-probe" "$TABLE"
}

@test "errno table: clock_gettime and clock_getres answer as the host's" {
        compare_syscalls clock_gettime clock_getres
}

@test "errno table: gettimeofday and time answer as the host's" {
        compare_syscalls gettimeofday time
}

@test "errno table: clock_settime answers as the host's (monotonic clocks: as the RFC)" {
        compare_syscalls clock_settime
}

@test "errno table: settimeofday answers as the host's" {
        compare_syscalls settimeofday
}

@test "errno table: adjtimex answers as the host's" {
        compare_syscalls adjtimex
}

@test "errno table: clock_adjtime answers as the host's" {
        compare_syscalls clock_adjtime
}

@test "errno table: unshare answers as the host's" {
        compare_syscalls unshare
}
