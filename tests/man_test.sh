#!/usr/bin/env bash
# A manual page against its program: man_test.sh PAGE BINARY [commands]
#  1. groff (when installed) formats it with every warning on and prints none; man-db's lint
#     (`man --warnings -l`, when installed) too.
#  2. Every option (--name) that `BINARY --help` prints appears in the formatted page; with
#     `commands`, every command the help lists appears as a section of its own, and every option
#     of `BINARY COMMAND --help` appears in the page too.
# Without groff the page's source is checked, its escapes (\-) undone.
set -u
PAGE=$1 BIN=$2 MODE=${3:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bp_man.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
[ -s "$PAGE" ] || fail "no page at $PAGE"

if command -v groff >/dev/null 2>&1; then
    LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$PAGE" 2>"$TMP/warn"
    [ ! -s "$TMP/warn" ] || { cat "$TMP/warn" >&2; fail "groff warns about $PAGE"; }
    if command -v man >/dev/null 2>&1; then
        LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l -Tutf8 -Z "$PAGE" 2>"$TMP/warn" >/dev/null
        [ ! -s "$TMP/warn" ] || { cat "$TMP/warn" >&2; fail "man --warnings complains about $PAGE"; }
    fi
    # Plain text, no hyphenation, long lines: an option is never split across lines.
    LC_ALL=C groff -man -Tascii -rHY=0 -rLL=300n -P-cbou "$PAGE" >"$TMP/text" 2>/dev/null || fail "groff failed"
    echo "groff formats $PAGE without warnings"
else
    echo "groff not installed: checking the page's source only"
    # Escapes undone; a section heading (.SS) indented as man would show it.
    sed 's/\\-/-/g; s/\\f[BIRP]//g; s/^\.SS /   /' "$PAGE" >"$TMP/text"
fi

# The options a help text prints, one per line.
options() {
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
check_options() {  # check_options WHAT < help text
    local n=0
    while read -r opt; do
        grep -qF -- "$opt" "$TMP/text" || fail "$WHAT prints $opt; the page does not mention it"
        n=$((n + 1))
    done < <(options)
    echo "$WHAT: $n options, all in the page"
}

"$BIN" --help >"$TMP/help" 2>&1
[ -s "$TMP/help" ] || fail "$BIN --help printed nothing"
WHAT="$(basename "$BIN") --help" check_options <"$TMP/help"

if [ "$MODE" = commands ]; then
    # The commands: indented lines after "Commands:" up to the first blank line.
    awk '/^Commands:/ { on = 1; next } on && /^[ \t]*$/ { exit } on { print $1 }' "$TMP/help" >"$TMP/commands"
    [ -s "$TMP/commands" ] || fail "no commands found in $BIN --help"
    while read -r cmd; do
        # A section of the page named after the command (.SS pairs, formatted at the indent of 3).
        grep -qE "^ {3}$cmd\$" "$TMP/text" || fail "command $cmd has no section in the page"
        "$BIN" "$cmd" --help >"$TMP/help.$cmd" 2>&1 || fail "$BIN $cmd --help failed"
        WHAT="$(basename "$BIN") $cmd --help" check_options <"$TMP/help.$cmd"
    done <"$TMP/commands"
    echo "commands: $(tr '\n' ' ' <"$TMP/commands")each with a section"
fi
exit 0
