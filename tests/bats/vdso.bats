#!/usr/bin/env bats
# Our vDSO: programs that read their clocks through the vDSO (libc's
# clock_gettime, date, python3, Go, Java, static binaries) see the
# namespace's clocks, checked against the raw syscall path and against the
# kernel's own time namespaces.

load helpers

DAY=86400
TEN_YEARS=$((3650 * DAY))

setup_file() {
        build_helpers clockprobe marker-forge
        build_optional_helpers clockprobe-static
        export GOCACHE="$BATS_FILE_TMPDIR/gocache" GOPATH="$BATS_FILE_TMPDIR/gopath" HOME="${HOME:-/root}"
        if command -v go >/dev/null; then
                (cd "$ROOT/tests/helpers" && timeout 300 go build -o "$BATS_FILE_TMPDIR/gotime" gotime.go) || true
        fi
        if command -v musl-gcc >/dev/null; then
                musl-gcc -static -O2 -o "$BATS_FILE_TMPDIR/now-musl" "$ROOT/tests/helpers/now.c"
        fi
}

setup() {
        requires_timensctl
}

# realtime_shift_of CMD...: runs CMD (which prints seconds since the epoch)
# under --realtime +3650d and checks it is the host's time ten years on.
assert_ten_years_ahead() {
        local lo hi got
        lo=$(($(host_ns realtime) / NSEC_PER_SEC))
        run -0 tns run --realtime +3650d -- "$@"
        hi=$(($(host_ns realtime) / NSEC_PER_SEC))
        got=${output##*$'\n'}
        got=${got%%.*}
        ((got >= lo + TEN_YEARS - 1 && got <= hi + TEN_YEARS + 1)) ||
                fail "$*: $got is not ten years after [$lo, $hi]"
}

@test "date reads the shifted realtime through the vDSO" {
        assert_ten_years_ahead date +%s
}

@test "python3's time.time() and time.monotonic() are shifted" {
        assert_ten_years_ahead python3 -c 'import time; print(int(time.time()))'
        # Bracketed by host reads: a loaded machine may take seconds to
        # start python, and that is no error.
        local lo hi
        lo=$(($(host_ns monotonic) + DAY * NSEC_PER_SEC))
        run -0 tns run --monotonic 1d -- python3 -c 'import time; print(time.monotonic_ns())'
        hi=$(($(host_ns monotonic) + DAY * NSEC_PER_SEC))
        assert_within "python3 monotonic" "$output" "$lo" "$hi"
}

@test "a static glibc binary reads shifted clocks through the vDSO" {
        requires_helper clockprobe-static
        assert_ten_years_ahead "$HELPERS/clockprobe-static" --vdso --sec realtime
}

@test "a static musl binary reads shifted clocks through the vDSO" {
        command -v musl-gcc >/dev/null || skip "musl-gcc is not installed (Debian package musl-tools)"
        assert_ten_years_ahead "$BATS_FILE_TMPDIR/now-musl"
}

@test "a Go binary (its runtime parses the vDSO itself) reads shifted clocks" {
        [ -x "$BATS_FILE_TMPDIR/gotime" ] || skip "go is not installed (Debian package golang-go)"
        assert_ten_years_ahead "$BATS_FILE_TMPDIR/gotime"
}

@test "java reads shifted clocks" {
        command -v java >/dev/null || skip "java is not installed (Debian package openjdk-17-jre-headless)"
        cp "$ROOT/tests/helpers/Now.java" "$BATS_TEST_TMPDIR/"
        assert_ten_years_ahead java "$BATS_TEST_TMPDIR/Now.java"
}

@test "every clock through the vDSO equals the raw syscall under timensctl" {
        local raw vdso name want got
        raw=$(tns run --realtime +1d --monotonic 2d --boottime 3d -- "$HELPERS/clockprobe")
        vdso=$(tns run --realtime +1d --monotonic 2d --boottime 3d -- "$HELPERS/clockprobe" --vdso)
        for name in CLOCK_REALTIME CLOCK_MONOTONIC CLOCK_MONOTONIC_RAW CLOCK_REALTIME_COARSE \
                CLOCK_MONOTONIC_COARSE CLOCK_BOOTTIME CLOCK_TAI gettimeofday; do
                want=$(probe_ns "$name" <<<"$raw")
                got=$(probe_ns "$name" <<<"$vdso")
                assert_near "$name vDSO vs raw" "$got" "$want" $((NSEC_PER_SEC * 2))
        done
        # Clocks the kernel's vDSO passes to the syscall (the alarm clocks):
        # the same answer (here often EINVAL, without an RTC) both ways.
        for name in CLOCK_REALTIME_ALARM CLOCK_BOOTTIME_ALARM; do
                [ "$(grep "^$name " <<<"$raw" | cut -d' ' -f2)" = "$(grep "^$name " <<<"$vdso" | cut -d' ' -f2)" ] ||
                        fail "$name: raw and vDSO disagree: $(grep "^$name " <<<"$raw") / $(grep "^$name " <<<"$vdso")"
        done
}

@test "monotonic and boottime through the vDSO equal the kernel's time namespace" {
        requires_kernel_timens
        local kernel ours clock
        for clock in monotonic boottime; do
                kernel=$(unshare -T --monotonic 86400 --boottime 172800 "$HELPERS/clockprobe" --vdso --ns "$clock")
                ours=$(tns run --monotonic 86400 --boottime 172800 -- "$HELPERS/clockprobe" --vdso --ns "$clock")
                assert_near "$clock: timens vs unshare -T" "$ours" "$kernel"
        done
}

@test "exec chains and failed PATH lookups keep the namespace" {
        assert_ten_years_ahead sh -c 'sh -c "no-such-program-here 2>/dev/null; exec date +%s"'
        assert_ten_years_ahead env -i /bin/sh -c 'exec /bin/date +%s'
}

@test "a program that forks and execs 1000 times keeps the namespace" {
        # shellcheck disable=SC2016 # the inner shell expands it
        assert_ten_years_ahead sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i + 1)); done; date +%s'
}

@test "threads share the shifted vDSO" {
        assert_ten_years_ahead python3 -c '
import threading, time
out = []
ts = [threading.Thread(target=lambda: out.append(int(time.time()))) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
assert max(out) - min(out) <= 1, out
print(min(out))'
}

@test "the injection leaves no tracer behind, and strace works inside" {
        run -0 tns run -- grep TracerPid /proc/self/status
        [[ "$output" == *$'\t'0 ]] || fail "TracerPid: $output"
        command -v strace >/dev/null || skip "strace is not installed"
        # The raw syscall under strace: still shifted.
        run -0 tns run --realtime +3650d -- strace -f -qq -o /dev/null "$HELPERS/clockprobe" --sec realtime
        local host
        host=$(($(host_ns realtime) / NSEC_PER_SEC))
        ((output >= host + TEN_YEARS - 2 && output <= host + TEN_YEARS + 1)) ||
                fail "under strace, raw realtime $output is not ten years after $host"
}

# A program a debugger starts is traced from its exec on: it cannot be
# seized for our image, and starts with the kernel's vDSO, whose clock
# functions become syscalls at its first arch_prctl (README: Debuggers).
@test "programs started by strace read shifted clocks through their vDSO: dynamic, static, Go, date" {
        command -v strace >/dev/null || skip "strace is not installed"
        local st=(strace -f -qq -o /dev/null)
        assert_ten_years_ahead "${st[@]}" "$HELPERS/clockprobe" --vdso --sec realtime
        assert_ten_years_ahead "${st[@]}" "$HELPERS/clockprobe" --vdso --sec gettimeofday
        assert_ten_years_ahead "${st[@]}" "$HELPERS/clockprobe" --vdso --sec time
        assert_ten_years_ahead "${st[@]}" date +%s
        if [ -x "$HELPERS/clockprobe-static" ]; then
                assert_ten_years_ahead "${st[@]}" "$HELPERS/clockprobe-static" --vdso --sec realtime
        fi
        if [ -x "$BATS_FILE_TMPDIR/gotime" ]; then
                assert_ten_years_ahead "${st[@]}" "$BATS_FILE_TMPDIR/gotime"
        fi
        # Every clock, through the vDSO, as the raw syscall sees it (the
        # monotonic ones compared within the time the two runs take).
        local lo hi
        lo=$(($(host_ns monotonic) + 2 * DAY * NSEC_PER_SEC))
        run -0 tns run --monotonic 2d -- "${st[@]}" "$HELPERS/clockprobe" --vdso --ns monotonic
        hi=$(($(host_ns monotonic) + 2 * DAY * NSEC_PER_SEC))
        assert_within "monotonic under strace" "$output" "$lo" "$hi"
        # A program that made the marker call itself, as if it had our
        # image, and then execs: the new program is judged by its own exec.
        assert_ten_years_ahead "${st[@]}" "$HELPERS/marker-forge" "$HELPERS/clockprobe" --vdso --sec realtime
        # The stubs make syscalls strace sees, answered shifted.
        run -0 tns run --realtime +3650d -- strace -qq -e trace=clock_gettime "$HELPERS/clockprobe" --vdso --sec realtime
        [[ "$output" == *"clock_gettime(CLOCK_REALTIME"* ]] || fail "no clock_gettime seen by strace: $output"
        # The forged marker call again, by an unprivileged member with no
        # capabilities (last: a checkout nobody cannot read skips it).
        requires_setpriv
        "${NOBODY[@]}" test -x "$HELPERS/marker-forge" || skip "nobody cannot run the helpers in this checkout"
        assert_ten_years_ahead "${NOBODY[@]}" "${st[@]}" "$HELPERS/marker-forge" "$HELPERS/clockprobe" --vdso \
                --sec realtime
}

@test "a program gdb runs reads shifted clocks through its vDSO, and gdb works" {
        command -v gdb >/dev/null || skip "gdb is not installed (Debian package gdb)"
        local lo hi got
        lo=$(($(host_ns realtime) / NSEC_PER_SEC))
        run -0 tns run --realtime +3650d -- gdb -q -batch -ex run --args "$HELPERS/clockprobe" --vdso --sec realtime
        hi=$(($(host_ns realtime) / NSEC_PER_SEC))
        [[ "$output" == *"exited normally"* ]] || fail "gdb: $output"
        got=$(grep -E '^[0-9]+$' <<<"$output" | tail -1)
        ((got >= lo + TEN_YEARS - 1 && got <= hi + TEN_YEARS + 1)) ||
                fail "under gdb, vDSO realtime '$got' is not ten years after [$lo, $hi]: $output"
        # A breakpoint in the program, and a backtrace through it: the
        # debugger sees the program as it is.
        run -0 tns run -- gdb -q -batch -ex 'break clock_gettime' -ex run -ex bt -ex continue \
                --args "$HELPERS/clockprobe" --vdso --sec realtime
        [[ "$output" == *"Breakpoint 1"* && "$output" == *"main"* ]] || fail "gdb breakpoint: $output"
}

@test "gdb breakpoints on the clock functions, then removed, leave every read shifted (dynamic and static)" {
        command -v gdb >/dev/null || skip "gdb is not installed (Debian package gdb)"
        # gdb puts them into the kernel vDSO's functions before the first
        # instruction (after their prologue, or on their first byte), then
        # puts the original bytes back: into the syscall stubs the program
        # got for want of our image (helper-38: syscall 0x410000e4, ENOSYS;
        # SIGILL in gettimeofday, SIGSEGV in time).
        local p b lo got line
        for p in "$HELPERS/clockprobe" "$HELPERS/clockprobe-static"; do
                [ -x "$p" ] || continue
                for b in clock_gettime gettimeofday time; do
                        lo=$(($(host_ns realtime) / NSEC_PER_SEC))
                        run -0 tns run --realtime +3650d -- gdb -q -batch -ex "break $b" -ex run -ex delete \
                                -ex continue --args "$p" --vdso
                        [[ "$output" == *"exited normally"* ]] || fail "gdb, break $b, $p: $output"
                        for line in CLOCK_REALTIME gettimeofday time; do
                                got=$(awk -v n="$line" '$1 == n && $2 == 0 { split($3, a, "."); print a[1] }' <<<"$output")
                                [ -n "$got" ] || fail "break $b, $p: no $line read: $output"
                                ((got >= lo + TEN_YEARS - 1 && got <= lo + TEN_YEARS + 60)) ||
                                        fail "break $b, $p: $line read $got, not ten years ahead: $output"
                        done
                done
        done
}

@test "our mappings are named, and a member cannot make the offsets page writable" {
        run -0 tns run -- cat /proc/self/maps
        [[ "$output" == *timens-vdso* ]] || fail "no timens-vdso mapping: $output"
        run -0 tns run -- python3 -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
for line in open("/proc/self/maps"):
    f = line.split()
    if "timens-vdso" in line and f[1].endswith("s") and int(f[2], 16) == 4096:
        lo = int(f[0].split("-")[0], 16)
        r = libc.mprotect(ctypes.c_void_p(lo), 4096, 3)
        print("mprotect", r, errno.errorcode.get(ctypes.get_errno(), 0))
        break
else:
    print("no shared offsets page")'
        [ "$output" = "mprotect -1 EACCES" ] || fail "mprotect(PROT_WRITE) on the offsets page: $output"
}

@test "a live offset change is seen by the next vDSO read" {
        # Inside, settimeofday() with CAP_SYS_TIME in the user namespace
        # moves the namespace's clock; the next libc read must see it.
        requires_user_ns
        run -0 tns run -- unshare -U -r python3 -c '
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
class TV(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("us", ctypes.c_long)]
before = time.time()
assert libc.settimeofday(ctypes.byref(TV(2000000000, 0)), None) == 0, ctypes.get_errno()
after = time.time()
print(int(before), int(after))'
        local after=${output#* }
        ((after >= 2000000000 && after <= 2000000002)) || fail "after settimeofday: $output"
}

@test "a 32-bit program runs on the syscall path, with ENOSYS for its clock calls and no fd of ours" {
        command -v as >/dev/null && command -v ld >/dev/null || skip "binutils is not installed"
        as --32 -o "$BATS_TEST_TMPDIR/time32.o" "$ROOT/tests/helpers/time32.S" &&
                ld -m elf_i386 -o "$BATS_TEST_TMPDIR/time32" "$BATS_TEST_TMPDIR/time32.o" ||
                skip "binutils cannot build i386 programs here"
        # A kernel without IA32 emulation cannot run it at all.
        local native
        native=$("$BATS_TEST_TMPDIR/time32" 2>&1; echo "rc=$?")
        [[ $native != *"Exec format error"* ]] || skip "this kernel cannot run 32-bit programs (no IA32 emulation)"
        run -38 tns run -- "$BATS_TEST_TMPDIR/time32"
        # Held in pause(): the fd it was handed at exec is closed again.
        tns run -- "$BATS_TEST_TMPDIR/time32" pause &
        local pid=$! child="" i
        for ((i = 0; i < 200; i++)); do
                child=$(pgrep -f "^$BATS_TEST_TMPDIR/time32 pause" || true)
                [ -n "$child" ] && grep -q '^State:.*S' "/proc/$child/status" && break
                sleep 0.05
        done
        [ -n "$child" ] || fail "the 32-bit program did not start"
        local fds
        fds=$(cd "/proc/$child/fd" && for f in *; do readlink "$f"; done)
        kill -TERM "$child"
        wait "$pid" || true
        [[ "$fds" != *timens-vdso* ]] || fail "the 32-bit program kept our memfd: $fds"
        # The supervisor survived it: the next program is served.
        assert_ten_years_ahead date +%s
}

@test "--no-vdso: the command's programs have no vDSO, every clock read is a shifted syscall" {
        local lo hi got
        lo=$(($(host_ns realtime) / NSEC_PER_SEC))
        run -0 tns run --realtime +3650d --no-vdso -- sh -c 'grep -c timens-vdso /proc/self/maps; date +%s'
        hi=$(($(host_ns realtime) / NSEC_PER_SEC))
        [ "${lines[0]}" = 0 ] || fail "a timens-vdso mapping under --no-vdso: ${lines[0]}"
        got=${lines[1]}
        ((got >= lo + TEN_YEARS - 1 && got <= hi + TEN_YEARS + 1)) || fail "date under --no-vdso: $got"
        run -0 tns run --realtime +3650d --no-vdso -- python3 -c 'import time; print(int(time.time()))'
        ((output >= lo + TEN_YEARS - 1)) || fail "python3 under --no-vdso: $output"
}
