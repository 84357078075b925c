#!/usr/bin/env bats
# The layering is the compiler's (Makefile, LAYER_INC_): a file of a lower
# layer that includes a header of a higher one, or of a layer beside it
# that it may not see, does not compile; an include by path is refused
# before anything compiles (scripts/check-layers.sh).

load helpers

setup_file() {
        command -v "${CC:-gcc}" >/dev/null || skip "no C compiler"
}

# compiles DIR HEADER: whether a file of folder DIR that includes HEADER
# compiles with DIR's flags.
compiles() {
        local dir=$1 header=$2 flags
        flags=$(make -s -C "$ROOT" layer-flags DIR="$dir") || fail "make layer-flags DIR=$dir failed"
        # The probe sits in a private folder: the includes resolve through
        # the -I flags alone (relative to $ROOT), as for a file of DIR.
        printf '#include "%s"\nint tns_layer_probe(void);\nint tns_layer_probe(void) { return 0; }\n' "$header" \
                >"$BATS_TEST_TMPDIR/probe.c"
        # shellcheck disable=SC2086 # flags are words
        (cd "$ROOT" && ${CC:-gcc} $flags -fsyntax-only "$BATS_TEST_TMPDIR/probe.c") 2>"$BATS_TEST_TMPDIR/err"
}

refused() {
        if compiles "$1" "$2"; then
                fail "$1 may include $2: the layering does not hold"
        fi
        grep -q "$2: No such file" "$BATS_TEST_TMPDIR/err" || fail "$1 + $2 failed for another reason: $(cat "$BATS_TEST_TMPDIR/err")"
}

allowed() {
        compiles "$1" "$2" || fail "$1 cannot include $2: $(cat "$BATS_TEST_TMPDIR/err")"
}

@test "the pure core (lib/core) sees nothing above it" {
        allowed lib/core time-util.h
        allowed lib/core ns-model.h
        for h in ns.h filter.h supervisor.h registry.h timens-proto.h client.h oci.h timensd.h; do
                refused lib/core "$h"
        done
}

@test "the wire protocol (proto) sees the core only, not the engine" {
        allowed proto ns-model.h
        allowed proto timens-proto.h
        for h in supervisor.h registry.h ns.h client.h timensd.h; do
                refused proto "$h"
        done
}

@test "the kernel edges (lib/kernel) see the core, not the engine or the protocol" {
        allowed lib/kernel ptrace-util.h
        for h in supervisor.h registry.h timens-proto.h client.h oci.h; do
                refused lib/kernel "$h"
        done
}

@test "the engine (lib/supervisor) does not see the registry above it, the protocol or the programs" {
        allowed lib/supervisor supervisor.h
        for h in registry.h timens-proto.h client.h oci.h timensd.h timensctl.h; do
                refused lib/supervisor "$h"
        done
}

@test "the client and the OCI code do not see the engine" {
        allowed lib/client client.h
        allowed lib/oci oci.h
        for d in lib/client lib/oci; do
                for h in supervisor.h registry.h; do
                        refused "$d" "$h"
                done
        done
}

@test "the OCI hook speaks the protocol only: no engine, no registry, no daemon" {
        allowed contrib/oci-hook client.h
        for h in supervisor.h registry.h ns.h timensd.h timensctl.h; do
                refused contrib/oci-hook "$h"
        done
}

@test "one program does not see another's headers" {
        refused daemon/timensctl timensd.h
        refused daemon/timensd timensctl.h
}

@test "a folder the Makefile does not place is an error, not a silent default" {
        run make -s -C "$ROOT" layer-flags DIR=lib/nowhere
        [ "$status" -ne 0 ]
        [[ "$output" == *"lib/nowhere/x.c: its folder has no LAYER_INC_ entry"* ]] || fail "$output"
}

@test "an include by path is refused before anything compiles; our tree has none" {
        printf '#include "../supervisor/supervisor.h"\n' >"$BATS_TEST_TMPDIR/bad.c"
        run "$ROOT/scripts/check-layers.sh" "$BATS_TEST_TMPDIR/bad.c"
        [ "$status" -ne 0 ]
        [[ "$output" == *"an include names a path"* ]] || fail "$output"
        run "$ROOT/scripts/check-layers.sh"
        [ "$status" -eq 0 ] || fail "$output"
}
