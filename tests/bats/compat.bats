#!/usr/bin/env bats
# The 32-bit doors: i386 syscalls (int $0x80) and x32 syscalls (the x32
# bit in the number) from a 64-bit process. timens emulates neither, so
# under timensctl its filter refuses the clock ones with ENOSYS: they must
# never read, or set, the host's time behind the namespace's back.
# tests/helpers/compat-probe makes the calls; it runs without privileges
# (its setters pass time 0 and would step the clock otherwise).

load helpers

setup_file() {
        requires_timensctl
        build_helpers compat-probe
}

I386_CLOCK_CALLS=(i386_clock_gettime i386_clock_gettime_monotonic i386_clock_gettime64 i386_gettimeofday i386_time
        i386_clock_settime i386_clock_settime64 i386_settimeofday i386_stime i386_adjtimex i386_clock_adjtime
        i386_clock_adjtime64)
X32_CLOCK_CALLS=(x32_clock_gettime x32_gettimeofday x32_time x32_clock_settime)

requires_ia32() {
        run "${NOBODY[@]}" "$HELPERS/compat-probe" --ia32-works
        if [ "$status" != 0 ] || [ "$output" != "i386_getpid ok" ]; then
                skip "int \$0x80 does not work here (no IA32 emulation?): $output"
        fi
}

# result NAME: the answer of one call in $output.
result() {
        awk -v n="$1" '$1 == n { print $2 }' <<<"$output"
}

# expect ANSWER NAME...: each call answered ANSWER (ok or an errno name).
expect() {
        local want=$1 name bad=""
        shift
        for name in "$@"; do
                [ "$(result "$name")" = "$want" ] || bad+=" $name=$(result "$name")"
        done
        [ -z "$bad" ] || fail "want $want:$bad"
}

@test "on the host, the i386 clock calls work (the setters fail with EPERM)" {
        requires_setpriv
        requires_ia32
        run -0 "${NOBODY[@]}" "$HELPERS/compat-probe"
        expect ok i386_clock_gettime i386_clock_gettime_monotonic i386_clock_gettime64 i386_gettimeofday i386_time \
                i386_adjtimex i386_clock_adjtime i386_clock_adjtime64 i386_clock_getres
        expect EPERM i386_clock_settime i386_clock_settime64 i386_settimeofday i386_stime
}

@test "under timensctl, every i386 clock call fails with ENOSYS" {
        requires_setpriv
        requires_ia32
        run -0 --separate-stderr tns run --realtime +1d -- "${NOBODY[@]}" "$HELPERS/compat-probe"
        expect ENOSYS "${I386_CLOCK_CALLS[@]}"
}

@test "under timensctl, i386 calls that are not about clocks still work" {
        requires_setpriv
        requires_ia32
        run -0 --separate-stderr tns run -- "${NOBODY[@]}" "$HELPERS/compat-probe"
        expect ok i386_clock_getres
        run -0 --separate-stderr tns run -- "${NOBODY[@]}" "$HELPERS/compat-probe" --ia32-works
}

@test "under timensctl, every x32 clock call fails with ENOSYS" {
        requires_setpriv
        run -0 --separate-stderr tns run --realtime +1d -- "${NOBODY[@]}" "$HELPERS/compat-probe" --x32
        expect ENOSYS "${X32_CLOCK_CALLS[@]}"
}

@test "on the host and under timensctl, x32 calls that are not about clocks answer alike" {
        requires_setpriv
        local host
        run -0 "${NOBODY[@]}" "$HELPERS/compat-probe" --x32
        host=$(result x32_getpid)
        # A kernel without CONFIG_X86_X32_ABI answers ENOSYS to every x32
        # call: then the test above shows nothing timens-specific.
        [ "$host" = ok ] || skip "this kernel has no x32 ABI (x32_getpid: $host): x32 ENOSYS is the kernel's own"
        run -0 --separate-stderr tns run -- "${NOBODY[@]}" "$HELPERS/compat-probe" --x32
        expect ok x32_getpid
}
