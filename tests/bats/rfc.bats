#!/usr/bin/env bats
# The 2018 time namespace RFC's semantics (settable clocks, unshare moving
# the caller, nesting, capabilities), as tests/helpers/rfc-probe checks them
# step by step. The probe runs in a user namespace inside timensctl run:
# it holds CAP_SYS_TIME there, for the emulation, but not over the host's
# clock, so a setting call that escaped the supervisor fails with EPERM.
#
# The probe runs once per variant of offsets (setup_file); each test looks
# at one group of its checks in every variant, so that one bug fails one
# test. The last tests check that the host's clock did not move.

load helpers

# name, then timensctl's options.
VARIANTS=(
        "zero"
        "offsets --monotonic 1d --boottime 2d --realtime 2040-01-01T00:00:00Z"
        "negative --monotonic -NEG --boottime -NEG --realtime -1y"
)

# Every group of checks the tests below look at (a regex of check names).
GROUPS_RE='outer_|unshare_|inner_|child_|grandchild_|exec_|orphan_|parent_step_|settimeofday_|adjtimex_|clock_adjtime_|value_|nested_|thread_unshare_|drop_cap_|no_cap_|vdso_'

host_clocks() {
        echo "$(host_ns realtime) $(host_ns monotonic) $("$HELPERS/clockprobe" | awk '$1 == "timezone" { print $3 "," $4 }')"
}

# Runs the probe in one variant: $BATS_FILE_TMPDIR/NAME.out and NAME.status,
# or NAME.skip with the reason.
run_variant() {
        local name=$1 dir=$BATS_FILE_TMPDIR status=0 half opts=()
        shift
        if [ "$name" = negative ]; then
                half=$(($(host_uptime_sec) / 2))
                # The outer monotonic clock then reads about `half`: keep it
                # well away from the 5000 s the probe sets inside, or the
                # checks that tell the two namespaces apart cannot.
                if ((half > 4000 && half < 6000)); then
                        half=$((half / 2))
                fi
                if ((half < 2)); then
                        echo "the host has been up for too short a time for a negative offset" >"$dir/$name.skip"
                        return 0
                fi
        fi
        for o in "$@"; do
                opts+=("${o//NEG/$half}")
        done
        tns run "${opts[@]}" -- unshare -U -r "$HELPERS/rfc-probe" >"$dir/$name.out" 2>&1 || status=$?
        echo "$status" >"$dir/$name.status"
}

setup_file() {
        requires_timensctl
        build_helpers rfc-probe clockprobe
        host_clocks >"$BATS_FILE_TMPDIR/host-before"
        local v
        for v in "${VARIANTS[@]}"; do
                if ! unshare -U -r true 2>/dev/null; then
                        echo "cannot create user namespaces here (unshare -U -r failed)" >"$BATS_FILE_TMPDIR/${v%% *}.skip"
                        continue
                fi
                # shellcheck disable=SC2086 # a variant is words on purpose
                run_variant $v
        done
        host_clocks >"$BATS_FILE_TMPDIR/host-after"
}

# check_group REGEX [TAG]: in every variant, the probe made checks whose
# names match REGEX, and all of them passed. With TAG, a variant where the
# probe said "# SKIP TAG: why" instead counts as skipped.
check_group() {
        local re=$1 tag=${2:-} v name out lines ran=0 bad="" why=""
        for v in "${VARIANTS[@]}"; do
                name=${v%% *}
                [ -e "$BATS_FILE_TMPDIR/$name.skip" ] && continue
                out="$BATS_FILE_TMPDIR/$name.out"
                lines=$(grep -E "^(PASS|FAIL) ($re)" "$out" || true)
                if [ -z "$lines" ] && [ -n "$tag" ] && grep -q "^# SKIP $tag: " "$out"; then
                        why=$(grep -m1 "^# SKIP $tag: " "$out")
                        continue
                fi
                ran=1
                [ -n "$lines" ] || bad+="$name: no check matches '$re'"$'\n'
                if grep -q '^FAIL' <<<"$lines"; then
                        bad+="$name:"$'\n'"$(grep '^FAIL' <<<"$lines")"$'\n'
                fi
        done
        [ -z "$bad" ] || fail "$bad"
        ((ran)) || skip "${why#\# SKIP }$(cat "$BATS_FILE_TMPDIR"/*.skip 2>/dev/null | head -1)"
}

@test "rfc-probe refuses to run in the initial user namespace" {
        run -2 --separate-stderr "$HELPERS/rfc-probe"
        # shellcheck disable=SC2154 # set by run --separate-stderr
        [[ "$stderr" == *"user namespace"* ]] || fail "$stderr"
}

@test "the safety net: without timens, the probe's setting calls fail with EPERM" {
        requires_user_ns
        local before after
        before=$(host_clocks)
        run -1 unshare -U -r "$HELPERS/rfc-probe"
        [[ "$output" == *"FAIL outer_settime_realtime: errno EPERM"* ]] || fail "a settime did not fail with EPERM"
        after=$(host_clocks)
        check_host_unmoved "$before" "$after"
}

@test "RFC: clock_settime in timensctl's namespace moves its clocks" {
        check_group 'outer_'
}

@test "RFC: unshare(CLONE_NEWTIME) moves the caller and its threads, with the parent's clocks" {
        check_group 'unshare_'
}

@test "RFC: settime of MONOTONIC (_RAW, _COARSE), BOOTTIME, REALTIME in the new namespace; siblings follow" {
        check_group 'inner_'
}

@test "RFC: children forked before stay behind, children forked after and exec'd programs follow" {
        check_group 'child_|grandchild_|exec_'
}

@test "RFC: an orphaned grandchild (double fork) forked after the unshare stays in the new namespace" {
        check_group 'orphan_'
}

@test "a step of the parent namespace's clock shows in its child (lib/kernel/ns.h), not the reverse" {
        check_group 'parent_step_'
}

@test "RFC: settimeofday sets the namespace's time and timezone, seen by its members only" {
        check_group 'settimeofday_'
}

@test "RFC: adjtimex and clock_adjtime with ADJ_SETOFFSET step the namespace's realtime" {
        check_group 'adjtimex_|clock_adjtime_'
}

@test "RFC: the kernel's value checks hold with CAP_SYS_TIME, and a failed set changes nothing" {
        check_group 'value_'
}

@test "RFC: a second unshare nests" {
        check_group 'nested_'
}

@test "RFC: unshare from a secondary thread moves the whole process" {
        check_group 'thread_unshare_'
}

@test "RFC: without CAP_SYS_TIME setters fail with EPERM, without CAP_SYS_ADMIN unshare does" {
        check_group 'drop_cap_|no_cap_'
}

@test "through the vDSO, every process reads what its raw syscalls read, at every step" {
        check_group 'vdso_' vdso
}

@test "util-linux unshare -T --monotonic works inside timensctl, and the offsets compose (DESIGN.md)" {
        # unshare(1) unshares, then writes the new namespace's offsets to
        # /proc/self/timens_offsets, the kernel's interface since 5.6: the
        # kernel runs both (lib/supervisor/supervisor-kns.c), and what the
        # command reads is the sum of ours and the kernel's.
        requires_user_ns
        local lo hi
        lo=$(host_ns monotonic)
        run -0 --separate-stderr tns run --monotonic 1000 -- \
                unshare -U -r unshare -T --monotonic 100 "$HELPERS/clockprobe" --ns monotonic
        hi=$(host_ns monotonic)
        assert_within "monotonic less 1000 s (timensctl) and 100 s (unshare -T)" \
                $((output - 1100 * NSEC_PER_SEC)) "$lo" "$hi"
}

@test "rfc-probe: every check belongs to a group above, and the exit status agrees" {
        local v name out status
        for v in "${VARIANTS[@]}"; do
                name=${v%% *}
                [ -e "$BATS_FILE_TMPDIR/$name.skip" ] && continue
                out="$BATS_FILE_TMPDIR/$name.out"
                status=$(cat "$BATS_FILE_TMPDIR/$name.status")
                output=$(grep -Ev "^(PASS|FAIL) ($GROUPS_RE)|^# [0-9]+ passed, [0-9]+ failed$|^# SKIP vdso: " "$out" || true)
                [ -z "$output" ] || fail "$name: lines of no group (a probe that broke down?)"
                grep -Eq '^# [0-9]+ passed, [0-9]+ failed$' "$out" || fail "$name: no summary (status $status)"
                if grep -q '^FAIL' "$out"; then
                        ((status == 1)) || fail "$name: FAIL lines but exit status $status"
                else
                        ((status == 0)) || fail "$name: no FAIL line but exit status $status"
                fi
        done
}

# check_host_unmoved "REAL MONO TZ" "REAL MONO TZ": realtime advanced as
# monotonic did, and the timezone stayed.
check_host_unmoved() {
        local r0 m0 tz0 r1 m1 tz1
        read -r r0 m0 tz0 <<<"$1"
        read -r r1 m1 tz1 <<<"$2"
        assert_near "host realtime delta vs monotonic delta" $((r1 - r0)) $((m1 - m0))
        [ "$tz0" = "$tz1" ] || fail "the host's timezone changed: $tz0 -> $tz1"
}

@test "the host's clock and timezone did not move while the probes set theirs" {
        check_host_unmoved "$(cat "$BATS_FILE_TMPDIR/host-before")" "$(cat "$BATS_FILE_TMPDIR/host-after")"
}
