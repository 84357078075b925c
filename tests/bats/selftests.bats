#!/usr/bin/env bats
# Ports (semantics, not code) of the kernel's timens selftests
# (tools/testing/selftests/timens/), checked by tests/helpers/selftest-probe
# under timensctl and, with the same offsets, under the kernel's own time
# namespaces (unshare -T), with positive and negative offsets:
#
# - exec.c, vfork_exec.c: a program exec'd in the namespace — after fork,
#   vfork, clone(CLONE_VM) as posix_spawn does, from a second thread —
#   reads the namespace's clocks by the vDSO and the raw syscall, from its
#   main thread and a second thread; and, nested, a process that unshares
#   CLONE_NEWTIME: what runs in the child namespace reads it, the parent
#   namespace is unchanged, even for the parent of a vfork child.
# - timens.c: the five clocks it checks, in every reading above; setns in
#   and out of a child namespace.
# - procfs.c: /proc/uptime, /proc/stat btime and sysinfo() in every reading.
# - timerfd.c, timer.c, clock_nanosleep.c, futex.c: timers an hour ahead,
#   an hour's sleep cut by a signal, a futex deadline.
#
# Nested namespaces are made the kernel's way (unshare, then
# /proc/self/timens_offsets) for the kernel and, mostly, the RFC's way
# (unshare, then clock_settime) for timensctl: the same shift, so the same
# readings, except the unsharer's own (the kernel moves its children only,
# the RFC the caller too). The kernel's way under timensctl: the setns and
# identity tests, and the kernel's selftests at the end. Both run in a user namespace (unshare -U -r), so that a
# clock_settime that escaped us could not set the host's clock.
#
# The identity of namespaces (/proc/PID/ns/time, setns, lsns) and the
# kernel's 5.6 interface inside (/proc/self/timens_offsets, util-linux
# unshare -T) are the kernel's own under timensctl: tests/helpers/
# nsident-probe checks them against unshare -T line by line. The kernel's
# own selftests, compiled unmodified, run at the end where their source is
# there (TIMENS_KSELFTESTS: tools/testing/selftests/timens of a kernel tree).
#
# The inventory of which test ports which upstream file: tests/README.md.

load helpers

DAY=86400

setup_file() {
        build_helpers selftest-probe clockprobe nsident-probe
}

setup() {
        requires_timensctl
        requires_helper selftest-probe
        requires_kernel_timens
        P="$HELPERS/selftest-probe"
}

# set_offsets SIGN: OUTER_MONO OUTER_BOOT for the namespace timensctl (or
# unshare -T) makes, SHIFT_MONO SHIFT_BOOT for a child namespace made
# inside it. Positive: timens.c's ten days, a different offset per clock,
# and exec.c's ten hours. Negative: parts of the host's uptime, as the
# kernel refuses a clock below zero.
set_offsets() {
        local up
        if [ "$1" = positive ]; then
                OUTER_MONO=$((10 * DAY)) OUTER_BOOT=$((10 * DAY + 2000)) SHIFT_MONO=36000 SHIFT_BOOT=72000
                return 0
        fi
        up=$(host_uptime_sec)
        ((up >= 60)) || skip "the host has been up for too short a time for negative offsets"
        OUTER_MONO=-$((up / 2)) OUTER_BOOT=-$((up / 3)) SHIFT_MONO=-$((up / 8)) SHIFT_BOOT=-$((up / 6))
}

# A listing's value: listing_value LISTING "LABEL WHERE CLOCK PATH".
listing_value() {
        local v
        v=$(awk -v k="$2" '$1 " " $2 " " $3 " " $4 == k && $5 == "0" { print $6 }' <<<"$1")
        [ -n "$v" ] || fail "no reading '$2' in the listing"
        echo "$v"
}

# compare_listings OURS KERNEL [LABELS]: every reading (LABEL WHERE CLOCK
# PATH RESULT NS) of ours is the kernel's: the same result, the same value
# within the tolerance (btime and sysinfo count whole seconds: one more),
# and the same readings in both, except labels matching the regex LABELS.
# Prints the mismatches, one a line; fails if there is one.
compare_listings() {
        local ours=$1 kernel=$2 skip_re=${3:-^$} label where clock path res v key kres kv tol bad="" n=0
        local -A kern=()
        while read -r label where clock path res v; do
                [[ "$label" =~ $skip_re ]] || kern["$label $where $clock $path"]="$res $v"
        done <<<"$kernel"
        while read -r label where clock path res v; do
                [[ "$label" =~ $skip_re ]] && continue
                key="$label $where $clock $path"
                if [ -z "${kern[$key]+set}" ]; then
                        bad+="$key: ours only"$'\n'
                        continue
                fi
                read -r kres kv <<<"${kern[$key]}"
                unset "kern[$key]"
                n=$((n + 1))
                if [ "$res" != "$kres" ]; then
                        bad+="$key: ours $res, the kernel's $kres"$'\n'
                        continue
                fi
                [ "$res" = 0 ] || continue
                tol=$TOLERANCE_NS
                [[ "$clock" == btime || "$clock" == sysinfo ]] && tol=$((NSEC_PER_SEC + TOLERANCE_NS))
                assert_near "$key" "$v" "$kv" "$tol" 2>/dev/null ||
                        bad+="$key: ours $(fmt_ns "$v"), the kernel's $(fmt_ns "$kv")"$'\n'
        done <<<"$ours"
        for key in "${!kern[@]}"; do
                bad+="$key: the kernel's only"$'\n'
        done
        ((n > 0)) || bad+="no reading at all"$'\n'
        printf '%s' "$bad"
        [ -z "$bad" ]
}

# shifted_by LISTING LABEL1 LABEL2 MONO BOOT: the readings of LABEL2 are
# LABEL1's shifted by MONO seconds (monotonic clocks) and BOOT (boottime,
# /proc/uptime, sysinfo; btime moves back by BOOT). Main thread, raw
# syscall: the two are read at most a few hundred ms apart.
shifted_by() {
        local listing=$1 a=$2 b=$3 mono=$4 boot=$5 spec clock path sec tol d
        for spec in "monotonic syscall $mono" "monotonic_raw syscall $mono" "boottime syscall $boot" \
                "uptime proc $boot" "btime proc $((-boot))" "sysinfo syscall $boot"; do
                read -r clock path sec <<<"$spec"
                tol=$TOLERANCE_NS
                [[ "$clock" == btime || "$clock" == sysinfo ]] && tol=$((NSEC_PER_SEC + TOLERANCE_NS))
                d=$(($(listing_value "$listing" "$b main $clock $path") - $(listing_value "$listing" "$a main $clock $path")))
                assert_near "$b minus $a, $clock" "$d" $((sec * NSEC_PER_SEC)) "$tol" || return 1
        done
}

# spawn_both HOW SIGN: `selftest-probe spawn HOW` under timensctl and under
# unshare -T with the same offsets: the exec'd program's readings agree,
# and are the host's shifted.
spawn_both() {
        local how=$1 ours kernel host
        set_offsets "$2"
        host=$("$P" read host)
        ours=$(tns run --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" -- "$P" spawn "$how") || fail "ours: $ours"
        kernel=$(unshare -T --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" "$P" spawn "$how") ||
                fail "kernel: $kernel"
        output=$(compare_listings "$ours" "$kernel") || fail "$how, $2 offsets:"$'\n'"$output"
        shifted_by "$host"$'\n'"$ours" host exec "$OUTER_MONO" "$OUTER_BOOT"
}

# nest_both HOW SIGN: `selftest-probe nest` under timensctl (rfc) and under
# the kernel (kernel). Returns 1 when the two differ, 2 on any other
# failure, with what went wrong in NEST_BAD. (Explicit returns: a caller
# may test it, which turns errexit off inside.)
nest_both() {
        local how=$1 ours kernel mine theirs
        set_offsets "$2"
        NEST_BAD=""
        if ! ours=$(tns run --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" -- \
                unshare -U -r "$P" nest rfc "$how" "$SHIFT_MONO" "$SHIFT_BOOT" 2>&1); then
                NEST_BAD="ours: $ours"
                return 2
        fi
        if ! kernel=$(unshare -U -r -T --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" \
                "$P" nest kernel "$how" "$SHIFT_MONO" "$SHIFT_BOOT" 2>&1); then
                NEST_BAD="kernel: $kernel"
                return 2
        fi
        # The kernel's run made a child namespace, shifted as asked.
        if ! NEST_BAD=$(shifted_by "$kernel" outer-after inner-exec "$SHIFT_MONO" "$SHIFT_BOOT" 2>&1); then
                NEST_BAD="the kernel's child namespace: $NEST_BAD"
                return 2
        fi
        # The unsharer itself: the kernel leaves it in the parent namespace,
        # the RFC moves it into the child one.
        if [ "$how" = fork ]; then
                mine=$(sed -n 's/^unsharer /x /p' <<<"$kernel")
                theirs=$(sed -n 's/^outer-before /x /p' <<<"$kernel")
                NEST_BAD=$(compare_listings "$mine" "$theirs") || return 2
                mine=$(sed -n 's/^unsharer /x /p' <<<"$ours")
                theirs=$(sed -n 's/^inner-fork /x /p' <<<"$ours")
                NEST_BAD=$(compare_listings "$mine" "$theirs") || return 2
        fi
        NEST_BAD=$(compare_listings "$ours" "$kernel" '^unsharer$')
}

@test "exec.c, timens.c, procfs.c: a program exec'd after fork reads the namespace's clocks, positive offsets" {
        spawn_both fork positive
}

@test "exec.c, timens.c, procfs.c: a program exec'd after fork reads the namespace's clocks, negative offsets" {
        spawn_both fork negative
}

@test "vfork_exec.c: a program exec'd after vfork, or clone(CLONE_VM | CLONE_VFORK) as posix_spawn does" {
        local how sign
        for how in vfork clone_vm; do
                for sign in positive negative; do
                        spawn_both "$how" "$sign"
                done
        done
}

@test "vfork_exec.c: a program exec'd from the second thread of a multithreaded process" {
        spawn_both thread positive
        spawn_both thread negative
}

@test "exec.c, nested: after unshare, children forked and what they exec read the child namespace; the parent namespace is unchanged" {
        requires_user_ns
        local sign
        for sign in positive negative; do
                nest_both fork "$sign" || fail "$sign:"$'\n'"$NEST_BAD"
        done
}

@test "exec.c, vfork_exec.c, nested: after unshare, programs spawned by clone(CLONE_VM) or from a second thread read the child namespace" {
        requires_user_ns
        local how sign
        for how in clone_vm thread; do
                for sign in positive negative; do
                        nest_both "$how" "$sign" || fail "$how, $sign:"$'\n'"$NEST_BAD"
                done
        done
}

@test "vfork_exec.c, nested: a vfork child unshares and execs into the child namespace; its parent still reads its own" {
        requires_user_ns
        local sign
        # The vfork child shares its parent's memory until its exec: its
        # unshare moves no offsets page there (supervisor_nsop_begin), and
        # its exec gets the child namespace's page.
        for sign in positive negative; do
                nest_both vfork "$sign" || fail "$sign: $NEST_BAD"
        done
}

@test "timens.c, procfs.c: setns in and out of a child namespace, with its /proc/self/ns/time inode" {
        requires_user_ns
        local sign mode kernel ours
        for sign in positive negative; do
                set_offsets "$sign"
                # Ours, in both styles: the child namespace shifted by
                # clock_settime inside (RFC) or /proc/self/timens_offsets
                # (the kernel's 5.6 interface, run by the kernel). unshare -T
                # gives the user namespace a parent time namespace it may
                # setns back into (setns needs CAP_SYS_ADMIN over it). The
                # kernel's reference is taken right before each: the values
                # are compared as readings of the same moment.
                for mode in rfc kernel; do
                        kernel=$(unshare -U -r -T --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" \
                                "$P" setns kernel "$SHIFT_MONO" "$SHIFT_BOOT") || fail "kernel: $kernel"
                        ours=$(tns run --monotonic "$OUTER_MONO" --boottime "$OUTER_BOOT" -- \
                                unshare -U -r -T "$P" setns "$mode" "$SHIFT_MONO" "$SHIFT_BOOT") ||
                                fail "ours ($mode): $ours"
                        shifted_by "$kernel" parent child "$SHIFT_MONO" "$SHIFT_BOOT"
                        shifted_by "$kernel" parent child-again "$SHIFT_MONO" "$SHIFT_BOOT"
                        output=$(compare_listings "$ours" "$kernel") || fail "$sign $mode:"$'\n'"$output"
                done
        done
}

# timers_both SIGN MONO BOOT REALTIME: `selftest-probe timers` on each
# clock, the kernel's with the same MONO and BOOT (it has no REALTIME):
# every timer reads an hour left and its 1 s interval, as the kernel's.
timers_both() {
        local sign=$1 mono=$2 boot=$3 rt=$4 clock ours kernel
        for clock in monotonic boottime boottime_alarm realtime; do
                ours=$(tns run --monotonic "$mono" --boottime "$boot" --realtime "$rt" -- "$P" timers "$clock") ||
                        fail "ours: $ours"
                kernel=$(unshare -T --monotonic "$mono" --boottime "$boot" "$P" timers "$clock") || fail "kernel: $kernel"
                # KIND REL|ABS CLOCK RESULT LEFT INTERVAL: the same results,
                # the same interval, an hour left (less the time to arm it).
                while read -r k m c r left iv _k _m _c kr kleft kiv; do
                        [ "$r" = "$kr" ] || fail "$sign $k $m $c: ours $r, the kernel's $kr"
                        [ "$r" = 0 ] || continue
                        [[ "$iv" == "$kiv" && "$iv" == "$NSEC_PER_SEC" ]] || fail "$sign $k $m $c: interval $iv, the kernel's $kiv"
                        assert_near "$sign $k $m $c: time left" "$left" $((3600 * NSEC_PER_SEC)) "$TOLERANCE_NS"
                        assert_near "$sign $k $m $c: time left, ours vs the kernel's" "$left" "$kleft" "$TOLERANCE_NS"
                done < <(paste -d' ' <(echo "$ours") <(echo "$kernel"))
        done
}

@test "timerfd.c, timer.c: timers armed an hour ahead, relative and absolute, read back an hour left, as the kernel's" {
        # timerfd.c's and timer.c's offsets: 70 days monotonic, 9 boottime.
        timers_both positive $((70 * DAY)) $((9 * DAY)) +1d
        set_offsets negative
        timers_both negative "$OUTER_MONO" "$OUTER_BOOT" -1d
}

@test "clock_nanosleep.c: an hour's sleep in a thread, relative or absolute, ends with EINTR at a handled signal, as the kernel's" {
        local sign mono boot clock how ours kernel
        for sign in positive negative; do
                if [ "$sign" = positive ]; then
                        # clock_nanosleep.c's: 7 days monotonic, 9 boottime.
                        mono=$((7 * DAY)) boot=$((9 * DAY))
                else
                        set_offsets negative
                        mono=$OUTER_MONO boot=$OUTER_BOOT
                fi
                for clock in monotonic boottime boottime_alarm; do
                        for how in rel abs; do
                                ours=$(tns run --monotonic "$mono" --boottime "$boot" -- "$P" nanosleep "$clock" "$how") ||
                                        fail "ours: $ours"
                                kernel=$(unshare -T --monotonic "$mono" --boottime "$boot" "$P" nanosleep "$clock" "$how") ||
                                        fail "kernel: $kernel"
                                # "nanosleep HOW CLOCK RESULT REM": EINTR (or
                                # EOPNOTSUPP, an alarm clock without an RTC);
                                # rel leaves 3599 s, abs leaves rem untouched.
                                [ "$ours" = "$kernel" ] || fail "$sign: ours '$ours', the kernel's '$kernel'"
                                [[ "$kernel" == *" EOPNOTSUPP "* || "$kernel" == *" EINTR "* ]] || fail "kernel: $kernel"
                        done
                done
        done
}

@test "futex.c: FUTEX_WAIT_BITSET to 100 ms ahead times out, neither early nor 50 ms late, on realtime and monotonic" {
        local sign mono clock opts ours kernel late
        for sign in positive negative; do
                if [ "$sign" = positive ]; then
                        mono=$((70 * DAY)) opts=(--realtime +1d)
                else
                        set_offsets negative
                        mono=$OUTER_MONO
                        opts=(--realtime -1d)
                fi
                for clock in realtime monotonic; do
                        ours=$(tns run --monotonic "$mono" "${opts[@]}" -- "$P" futex "$clock") || fail "ours: $ours"
                        kernel=$(unshare -T --monotonic "$mono" "$P" futex "$clock") || fail "kernel: $kernel"
                        for late in "${ours##* }" "${kernel##* }"; do
                                ((late >= 0 && late <= 50000000)) || fail "$sign $clock: ended $(fmt_ns "$late") s after the deadline"
                        done
                done
        done
}

# ---- identity and the kernel's 5.6 interface (nsident-probe) ----

# ident_both CMD: nsident-probe CMD under timensctl (as root: in the
# kernel time namespace timensctl run gives its command; and in a user
# namespace's, as a container has it) and under unshare -T: the same
# lines.
ident_both() {
        local cmd=$1 ours kernel
        N="$HELPERS/nsident-probe"
        kernel=$(unshare -U -r -T "$N" "$cmd") || fail "kernel: $kernel"
        ours=$(tns run --monotonic 1d --boottime 2d -- unshare -U -r -T "$N" "$cmd") || fail "ours: $ours"
        [ "$ours" = "$kernel" ] || fail "in a user namespace:"$'\n'"$(diff <(echo "$kernel") <(echo "$ours"))"
        if [ "$(id -u)" = 0 ]; then
                kernel=$(unshare -T "$N" "$cmd") || fail "kernel: $kernel"
                ours=$(tns run --monotonic 1d --boottime 2d -- "$N" "$cmd") || fail "ours: $ours"
                [ "$ours" = "$kernel" ] || fail "as root:"$'\n'"$(diff <(echo "$kernel") <(echo "$ours"))"
        fi
        IDENT_OUT=$ours
}

@test "identity: after unshare the caller's own namespace stays, time_for_children is new, a forked child is in it, setns in and out moves the caller and its clocks, as the kernel's" {
        requires_user_ns
        ident_both identity
        # Not only equal: the kernel's answers (which the probe cannot be
        # sure of alone).
        grep -qx 'after_children_vs_before differs' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
        grep -qx 'forked_child_vs_children same' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
        grep -qx 'clocks_after_setns_child shifted' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
        grep -qx 'clocks_after_setns_parent unshifted' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
}

@test "/proc/self/timens_offsets inside: written and read back before a process entered, EACCES after, EINVAL and ERANGE for bad input, as the kernel's" {
        requires_user_ns
        ident_both offsets
        grep -qx 'write_after_entered EACCES' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
        grep -qx 'read_monotonic 86401.000000000' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
}

@test "setns bad input: a closed fd, a mount namespace's fd, /dev/null, a pidfd, from a multithreaded caller: the kernel's errno each" {
        requires_user_ns
        ident_both errnos
        grep -qx 'setns_closed_fd EBADF' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
        grep -qx 'setns_multithreaded EUSERS' <<<"$IDENT_OUT" || fail "$IDENT_OUT"
}

@test "timensctl run gives its command a kernel time namespace of its own: readlink and lsns name it, its processes share it, two runs differ, the host's is not it" {
        requires_root
        local host a b i
        host=$(readlink /proc/self/ns/time)
        # The first run stays while the second looks: an inode is reused
        # once its namespace is gone.
        tns run -- sh -c 'readlink /proc/self/ns/time; sh -c "readlink /proc/self/ns/time"
                readlink /proc/self/ns/time_for_children; exec sleep 60' >"$BATS_TEST_TMPDIR/a" &
        wait_for_file "$BATS_TEST_TMPDIR/a" 30
        for ((i = 0; i < 300; i++)); do
                [ "$(wc -l <"$BATS_TEST_TMPDIR/a")" = 3 ] && break
                sleep 0.1
        done
        b=$(tns run -- readlink /proc/self/ns/time)
        a=$(cat "$BATS_TEST_TMPDIR/a")
        kill %1 2>/dev/null || true
        wait || true
        [ "$(sort -u <<<"$a" | wc -l)" = 1 ] || fail "one run, several namespaces: $a"
        [[ "$(head -1 <<<"$a")" == time:\[*\] ]] || fail "$a"
        [ "$(head -1 <<<"$a")" != "$host" ] || fail "the host's namespace: $a"
        [ "$(head -1 <<<"$a")" != "$b" ] || fail "two runs, one namespace: $a $b"
        if command -v lsns >/dev/null; then
                run -0 tns run -- sh -c 'lsns -t time -n -o NS -p $$; readlink /proc/self/ns/time'
                local ino
                ino=$(sed -n 2p <<<"$output")
                [ "time:[$(head -1 <<<"$output" | tr -d ' ')]" = "$ino" ] || fail "lsns: $output"
        fi
}

@test "unshare -T --monotonic --boottime inside timensctl run --monotonic --boottime: the command reads the sum, by the vDSO, the syscall and /proc/uptime" {
        requires_user_ns
        local lo hi v up
        for path in "" --vdso; do
                lo=$(host_ns monotonic)
                # shellcheck disable=SC2086 # empty or one word
                v=$(tns run --monotonic 10d --boottime 10d -- unshare -U -r -T --monotonic 86400 --boottime 86400 \
                        "$HELPERS/clockprobe" $path --ns monotonic) || fail "$v"
                hi=$(host_ns monotonic)
                assert_within "monotonic${path:+ ($path)}: host + 10 days + 1 day" $((v - 11 * DAY * NSEC_PER_SEC)) "$lo" "$hi"
        done
        v=$(tns run --monotonic 10d --boottime 10d -- unshare -U -r -T --monotonic 86400 --boottime 86400 \
                cat /proc/uptime) || fail "$v"
        up=$(host_uptime_sec)
        assert_near "/proc/uptime: host + 11 days" "${v%%.*}" $((up + 11 * DAY)) 5
}

# ---- the kernel's own selftests, unmodified ----

@test "the kernel's timens selftests, compiled unmodified, pass under timensctl run as on the host (TIMENS_KSELFTESTS)" {
        local src=${TIMENS_KSELFTESTS:-} out t status
        [ -n "$src" ] && [ -f "$src/timens.c" ] ||
                skip "set TIMENS_KSELFTESTS to a kernel tree's tools/testing/selftests/timens (make kselftests KSRC=...)"
        requires_root
        out=$BATS_TEST_TMPDIR/ksft
        mkdir -p "$out"
        # gettime_perf is a benchmark (24 s a run): it must run, its figures
        # are not judged.
        for t in timens exec procfs timerfd timer clock_nanosleep futex vfork_exec gettime_perf; do
                [ -f "$src/$t.c" ] || continue
                cc -O2 -I"$src" -I"$src/.." -o "$out/$t" "$src/$t.c" -lm -lpthread -lrt -ldl || fail "$t: does not compile"
                status=0
                (cd "$out" && timeout 120 "./$t" >"$out/$t.host" 2>&1) || status=$?
                ((status == 0)) || { echo "# $t fails on the host ($status), not compared"; continue; }
                run tns run -- sh -c "cd '$out' && exec ./$t"
                ((status == 0)) || fail "$t under timensctl run: $output"
                run tns run --monotonic 100d --boottime 100d --realtime +3650d -- sh -c "cd '$out' && exec ./$t"
                ((status == 0)) || fail "$t under timensctl run with offsets: $output"
        done
}
