#!/bin/bash
# The build's half of the layering (Makefile, LAYER_INC_): every
# #include "..." in our C names a bare file, so that a header is found only
# through the -I flags of the folder that includes it and an include across
# a forbidden edge fails to compile; and no two of our headers share a name,
# so that a bare name means one file.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

status=0
# Our C, or the files named (tests/bats/layers.bats).
if [ $# -gt 0 ]; then
        srcs=$*
else
        srcs=$(find lib proto daemon contrib vdso-patch tests -name '*.[ch]' -not -path '*/corpus/*' | sort)
fi

# shellcheck disable=SC2086
bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*[/][^"]*"' $srcs)
if [ -n "$bad" ]; then
        echo "check-layers: an include names a path; name the bare header and let the folder's LAYER_INC_ entry in the Makefile decide whether it may see it:" >&2
        echo "$bad" >&2
        status=1
fi

dups=$(find lib proto daemon contrib tests/include -name '*.h' -printf '%f\n' | sort | uniq -d)
if [ -n "$dups" ]; then
        echo "check-layers: two headers share a name (a bare include would be ambiguous): $dups" >&2
        status=1
fi
exit $status
