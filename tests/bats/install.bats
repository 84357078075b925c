#!/usr/bin/env bats
# make install: the paths compiled into the programs follow PREFIX even
# after a plain `make`, every installed file names the same tree, and
# installing needs only what the programs need. Never into the real
# system: DESTDIR only, and a copy of the build directory, so that the
# build the other tests use keeps its paths.

load helpers

setup_file() {
        requires_timensctl
        command -v strings >/dev/null || skip "no strings(1) (binutils)"
}

# make_in BUILD ARGS...: make in the top directory with BUILD as BUILDDIR.
make_in() {
        local build=$1 knobs=()
        shift
        [ "$(basename "$BUILDDIR")" = build-asan ] && knobs+=(ASAN=1)
        timeout -k 5 600 make -s -C "$ROOT" "${knobs[@]}" BUILDDIR="$build" "$@"
}

@test "make, then make install PREFIX=/usr: every installed file names /usr, never /usr/local" {
        local build="$BATS_TEST_TMPDIR/build" dest="$BATS_TEST_TMPDIR/dest" f hits
        # A copy of the plain `make` (default PREFIX=/usr/local), mtimes kept.
        cp -a "$BUILDDIR" "$build"
        run -0 make_in "$build" programs
        grep -q '"/usr/local/sbin/timensd"' "$build/paths.h" || fail "the plain build has no /usr/local path: $(cat "$build/paths.h")"
        run -0 make_in "$build" install PREFIX=/usr DESTDIR="$dest"

        for f in usr/bin/timensctl usr/sbin/timensd usr/libexec/timens/timens-oci-hook usr/bin/timens-runtime \
                usr/share/man/man8/timens-runtime.8 \
                usr/share/man/man1/timensctl.1 usr/share/bash-completion/completions/timensctl \
                usr/share/zsh/vendor-completions/_timensctl usr/share/containers/oci/hooks.d/timens.json \
                usr/lib/systemd/system/timensd.service usr/lib/sysusers.d/timens.conf usr/lib/tmpfiles.d/timens.conf; do
                [ -e "$dest/$f" ] || fail "not installed: /$f (installed: $(cd "$dest" && find . -type f))"
        done
        # Nothing outside /usr.
        run -0 find "$dest" -mindepth 1 -maxdepth 1
        [ "$output" = "$dest/usr" ] || fail "installed outside /usr: $output"
        # Every file, binaries through strings(1). lib/kernel/spawn.c's and
        # timens-runtime's fallback $PATH are search paths, not install paths.
        hits=$(find "$dest" -type f -print0 | xargs -0 strings -a -f |
                grep -F /usr/local | grep -vF -e '/usr/local/bin:/usr/bin:/bin' \
                -e '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin') || true
        [ -z "$hits" ] || fail "files name /usr/local: $hits"
        grep -q '/usr/libexec/timens/timens-oci-hook' "$dest/usr/share/containers/oci/hooks.d/timens.json"
        grep -q '^ExecStart=/usr/sbin/timensd ' "$dest/usr/lib/systemd/system/timensd.service"
        strings -a "$dest/usr/bin/timensctl" | grep -qx '/usr/sbin/timensd'
        strings -a "$dest/usr/libexec/timens/timens-oci-hook" | grep -qx '/usr/sbin/timensd'
        strings -a "$dest/usr/bin/timens-runtime" | grep -q '^/usr/libexec/timens/'
        grep -qF '/usr/bin/timens\-runtime' "$dest/usr/share/man/man8/timens-runtime.8"
}

@test "make install PREFIX=/usr after a plain make rebuilds only what embeds a path" {
        local build="$BATS_TEST_TMPDIR/build"
        cp -a "$BUILDDIR" "$build"
        run -0 make_in "$build" programs
        run -0 make_in "$build" -n install PREFIX=/usr DESTDIR="$BATS_TEST_TMPDIR/dest"
        local compiled
        compiled=$(grep -oE -- '-c -o [^ ]+' <<<"$output" | sort | tr '\n' ' ')
        [ "$compiled" = "-c -o $build/contrib/oci-hook/timens-oci-hook.o -c -o $build/daemon/timens-runtime/timens-runtime-conf.o -c -o $build/daemon/timens-runtime/timens-runtime.o -c -o $build/daemon/timensctl/timensctl-daemon-client.o -c -o $build/daemon/timensctl/timensctl-oci-config.o " ] ||
                fail "recompiled: $compiled"
}

@test "make install needs no test tools: a dry run from scratch builds no tests or benchmarks" {
        run -0 make_in "$BATS_TEST_TMPDIR/empty" -n install PREFIX=/usr DESTDIR="$BATS_TEST_TMPDIR/dest"
        [[ "$output" == *timensd-main.c* ]] || fail "the dry run builds no programs: $output"
        if grep -E 'tests/|build-fuzz' <<<"$output"; then
                fail "install builds tests"
        fi
}

@test "make install into a DESTDIR says how to create the group timens" {
        local build="$BATS_TEST_TMPDIR/build"
        cp -a "$BUILDDIR" "$build"
        run -0 make_in "$build" install PREFIX=/usr DESTDIR="$BATS_TEST_TMPDIR/dest"
        [[ "$output" == *"systemd-sysusers /usr/lib/sysusers.d/timens.conf"* ]] || fail "no word of the group: $output"
}
