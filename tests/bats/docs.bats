#!/usr/bin/env bats
# The documentation says what the code does: every command timensctl
# --help lists and every option its --help texts name appear in
# timensctl(1), the bash completion and the zsh completion; the hook's
# options in timens-oci-hook(8).

load helpers

setup_file() {
        requires_timensctl
}

# Options other programs take, named in our help texts (podman's
# --security-opt, in oci-config's).
FOREIGN_OPTIONS=" --security-opt "

# The man page with roff's escaped hyphens made plain.
man_text() {
        sed 's/\\-/-/g' "$ROOT/man/$1"
}

verbs() {
        "$TIMENSCTL" --help | sed -n '/^Commands:/,/^$/p' | sed -nE 's/^  ([a-z][a-z-]*)( .*)?$/\1/p'
}

# The long options of a --help text, one a line.
options_of() {
        "$@" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u
}

@test "timensctl --help lists the commands, and each has a --help that exits 0" {
        local v n=0
        for v in $(verbs); do
                run -0 --separate-stderr "$TIMENSCTL" "$v" --help
                [[ $output == *"Usage: timensctl $v"* ]] || fail "$v --help: $output"
                n=$((n + 1))
        done
        [ "$n" -ge 13 ] || fail "only $n commands in timensctl --help: $(verbs)"
}

@test "every command is in timensctl(1) and in the bash and zsh completions" {
        local v man bash zsh missing=()
        man=$(man_text timensctl.1)
        bash=$(grep -m1 'local commands=' "$ROOT/contrib/bash-completion/timensctl")
        zsh=$(cat "$ROOT/contrib/completion/_timensctl")
        for v in $(verbs); do
                grep -qE "^\.B(R|I)? \"?$v\b" <<<"$man" || grep -qE "timensctl $v\b" <<<"$man" || missing+=("$v: timensctl(1)")
                [[ " ${bash#*=} " == *[\ \"]"$v"[\ \"]* ]] || missing+=("$v: bash completion")
                grep -qE "^ +'$v:" <<<"$zsh" || missing+=("$v: zsh completion")
        done
        [ ${#missing[@]} -eq 0 ] || fail "not documented: ${missing[*]}"
}

@test "every option of timensctl --help and each command's --help is in timensctl(1) and the completions" {
        local v o man bash zsh missing=()
        man=$(man_text timensctl.1)
        bash=$(cat "$ROOT/contrib/bash-completion/timensctl")
        zsh=$(cat "$ROOT/contrib/completion/_timensctl")
        for o in $( (options_of "$TIMENSCTL"; for v in $(verbs); do options_of "$TIMENSCTL" "$v"; done) | sort -u); do
                [[ $FOREIGN_OPTIONS == *" $o "* ]] && continue
                grep -qF -- "$o" <<<"$man" || missing+=("$o: timensctl(1)")
                grep -qE -- "$o([^a-z-]|$)" <<<"$bash" || missing+=("$o: bash completion")
                grep -qE -- "$o([^a-z-]|$)" <<<"$zsh" || missing+=("$o: zsh completion")
        done
        [ ${#missing[@]} -eq 0 ] || fail "not documented: ${missing[*]}"
}

@test "timens-oci-hook: --help and --version exit 0, its options are in timens-oci-hook(8)" {
        local hook="$BUILDDIR/timens-oci-hook" o man missing=()
        [ -x "$hook" ] || skip "no $hook (make)"
        run -0 --separate-stderr "$hook" --version
        [[ $output == "timens-oci-hook "* ]]
        run -0 --separate-stderr "$hook" --help
        [[ $output == *"Usage: timens-oci-hook"* ]]
        man=$(man_text timens-oci-hook.8)
        for o in $(options_of "$hook"); do
                grep -qF -- "$o" <<<"$man" || missing+=("$o")
        done
        [ ${#missing[@]} -eq 0 ] || fail "not in timens-oci-hook(8): ${missing[*]}"
}

@test "timens-runtime: --timens-help exits 0, its options and variables are in timens-runtime(8)" {
        local rt="$BUILDDIR/timens-runtime" o man missing=()
        [ -x "$rt" ] || skip "no $rt (make)"
        run -0 --separate-stderr "$rt" --timens-help
        [[ $output == *"Usage: timens-runtime"* ]]
        man=$(man_text timens-runtime.8)
        while read -r o; do
                grep -qF -- "$o" <<<"$man" || missing+=("$o")
        done < <(grep -oE -- '--timens-[a-z-]+|TIMENS_[A-Z_]+' <<<"$output" | sort -u)
        [ ${#missing[@]} -eq 0 ] || fail "not in timens-runtime(8): ${missing[*]}"
}

# Every path docs/ARCHITECTURE.md names in backticks, and every link it
# makes, exists: a file that moves or goes takes its row with it. A token
# is a path if it has a slash or a file's ending; a bare file name must
# exist somewhere in the tree; <placeholders> and globs are not paths.
@test "every path and link in docs/ARCHITECTURE.md exists" {
        local doc="$ROOT/docs/ARCHITECTURE.md" t n=0 missing=() bt
        bt=$(printf '\x60') # a backtick
        [ -f "$doc" ] || fail "no $doc"
        while IFS= read -r t; do
                [[ $t == *[\<\*\ \(]* || $t == .* || $t == -* ]] && continue
                if [[ $t == */* ]]; then
                        [ -e "$ROOT/$t" ] || missing+=("$t")
                elif [[ $t =~ \.(c|h|md|sh|bats|in|socket|lds|mk|tsv|json|1|8)$ ]]; then
                        [ -n "$(find "$ROOT" -path "$ROOT/build*" -prune -o -name "$t" -print -quit)" ] ||
                                missing+=("$t")
                else
                        continue
                fi
                n=$((n + 1))
        done < <(grep -oE "${bt}[^${bt}]+${bt}" "$doc" | tr -d "$bt" | sort -u)
        while IFS= read -r t; do
                [ -e "$ROOT/docs/${t%%#*}" ] || missing+=("link $t")
                n=$((n + 1))
        done < <(grep -oE '\]\([^)#]+\)' "$doc" | sed -E 's/^\]\((.*)\)$/\1/' | grep -v '://' | sort -u)
        [ "$n" -ge 80 ] || fail "only $n paths found in $doc: the extraction is broken"
        [ ${#missing[@]} -eq 0 ] || fail "named in docs/ARCHITECTURE.md but not there: ${missing[*]}"
}
