#!/bin/sh
# usage: exports_test.sh LIBRARY HEADER MACRO PREFIX
# Checks that the shared LIBRARY exports exactly the functions HEADER declares with MACRO (its
# export macro, e.g. BP_API): every dynamic symbol it defines starts with PREFIX and is one of
# those declarations, and each declaration is exported. Prints the symbols that differ.
set -eu
lib=$1 header=$2 macro=$3 prefix=$4
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIPPED: nm not found"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Defined dynamic symbols: "ADDRESS TYPE NAME" (symbol versions, if any, cut off at '@').
nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp/exported"
# The declarations: the name before '(' on each line that starts with the macro.
grep "^$macro " "$header" | sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)$/\1/' | sort -u > "$tmp/declared"
status=0
if ! [ -s "$tmp/declared" ]; then
    echo "FAIL: no $macro declaration found in $header"
    exit 1
fi
outside=$(grep -v "^$prefix" "$tmp/exported" || true)
if [ -n "$outside" ]; then
    echo "FAIL: $lib exports symbols without the prefix $prefix:"
    echo "$outside"
    status=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
    echo "FAIL: $lib exports symbols $header does not declare with $macro:"
    echo "$extra"
    status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
    echo "FAIL: $lib does not export these $macro declarations of $header:"
    echo "$missing"
    status=1
fi
[ "$status" -eq 0 ] && echo "ok: $lib exports the $(wc -l < "$tmp/declared") $macro functions of $header, nothing else"
exit "$status"
