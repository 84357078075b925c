#!/bin/bash
# Runs every level of tests that `make check` promises and ends with one
# summary line, "N passed, N failed, N skipped":
#   unit (C, per lib/ module)   build/tests/unit/test-*
#   live (C, real seccomp)      build/tests/live/test-*
#   the same under ASan+UBSan   build-asan/tests/{unit,live}/test-*
#   fuzz smoke                  build-fuzz/fuzz-* for FUZZ_SMOKE_SECONDS each
#   end to end (bats)           tests/bats/*.bats
# Each program prints TAP; a crash or a short plan counts as a failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

BUILDDIR=${BUILDDIR:-build}
ASANDIR=${ASANDIR:-build-asan}
FUZZ_SMOKE_SECONDS=${FUZZ_SMOKE_SECONDS:-10}
export BUILDDIR

passed=0 failed=0 skipped=0
failures=()
details=()

# count_tap LABEL OUTPUT RC
count_tap() {
        local label=$1 out=$2 rc=$3 plan ok notok skip
        plan=$(grep -m1 -oE '^1\.\.[0-9]+' <<<"$out" | cut -d. -f3)
        ok=$(grep -cE '^ok ' <<<"$out")
        skip=$(grep -ciE '^ok .*# skip' <<<"$out")
        notok=$(grep -cE '^not ok ' <<<"$out")
        passed=$((passed + ok - skip))
        skipped=$((skipped + skip))
        failed=$((failed + notok))
        if [ "$notok" -gt 0 ]; then
                failures+=("$label: $(grep -E '^not ok ' <<<"$out" | head -5 | tr '\n' ';')")
                # Each failure's first diagnostic lines, repeated at the end
                # where a CI log's tail shows them.
                details+=("$(awk '/^not ok /{n=16} n>0 && (/^not ok /||/^#/){print; n--; next} !/^#/{n=0}' <<<"$out" | head -80)")
        fi
        if [ -n "$plan" ] && [ $((ok + notok)) -lt "$plan" ]; then
                failed=$((failed + plan - ok - notok))
                failures+=("$label: stopped after $((ok + notok)) of $plan (exit $rc)")
        elif [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
                failed=$((failed + 1))
                failures+=("$label: exit status $rc without a failed test")
        fi
}

run_tap() {
        local label=$1 out rc
        shift
        echo "# --- $label"
        out=$("$@" 2>&1)
        rc=$?
        printf '%s\n' "$out"
        count_tap "$label" "$out" "$rc"
}

run_programs() {
        local level=$1 dir=$2 t
        for t in "$dir"/test-*; do
                [ -x "$t" ] || continue
                run_tap "$level/$(basename "$t")" timeout 600 "$t"
        done
}

fuzz_smoke() {
        local f name corpus out rc
        for f in build-fuzz/fuzz-*; do
                [ -x "$f" ] || continue
                name=$(basename "$f")
                corpus=build-fuzz/corpus/$name
                mkdir -p "$corpus"
                echo "# --- fuzz/$name (${FUZZ_SMOKE_SECONDS}s)"
                out=$("$f" -max_total_time="$FUZZ_SMOKE_SECONDS" "$corpus" "tests/fuzz/corpus/$name" 2>&1)
                rc=$?
                if [ $rc -eq 0 ]; then
                        passed=$((passed + 1))
                        grep -E '^Done' <<<"$out"
                else
                        failed=$((failed + 1))
                        failures+=("fuzz/$name: exit $rc")
                        tail -30 <<<"$out"
                fi
        done
}

host_clock_before=$(date +%s)
mono_before=$(cut -d' ' -f1 /proc/uptime)

run_programs unit "$BUILDDIR/tests/unit"
if [ "$(id -u)" = 0 ]; then
        run_programs live "$BUILDDIR/tests/live"
else
        echo "# SKIP live tests: they need root (seccomp listeners of other processes, ptrace)"
fi
run_programs asan-unit "$ASANDIR/tests/unit"
[ "$(id -u)" = 0 ] && run_programs asan-live "$ASANDIR/tests/live"
fuzz_smoke
if command -v bats >/dev/null; then
        run_tap bats bats --tap tests/bats
else
        failed=$((failed + 1))
        failures+=("bats: not installed (make deps)")
fi

# No test may move the host's clock: the wall clock must have advanced
# like the monotonic one (within a generous margin).
host_clock_after=$(date +%s)
mono_after=$(cut -d' ' -f1 /proc/uptime)
drift=$(awk -v a="$host_clock_before" -v b="$host_clock_after" -v m1="$mono_before" -v m2="$mono_after" \
        'BEGIN { d = (b - a) - (m2 - m1); if (d < 0) d = -d; printf "%d", d }')
if [ "$drift" -gt 5 ]; then
        failed=$((failed + 1))
        failures+=("host clock moved by ${drift}s during the tests")
else
        passed=$((passed + 1))
fi

echo
for d in "${details[@]}"; do printf '%s\n' "$d"; done
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
