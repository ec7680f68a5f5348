# shellcheck shell=bash
# Shared by tests/cli_test.sh and tests/world_cli_test.sh (sourced; bash). They set CASE, SEED
# and TMP before sourcing.

fail() {
    echo "FAIL [$CASE $*] (SEED=$SEED)" >&2
    exit 1
}

# refused RC [WHAT]: the run that wrote $TMP/out and $TMP/err, with exit status RC, is a usage
# or input error: its message is shown, it exited 2 and printed nothing on stdout. WHAT (the
# case's name) prefixes the failure.
refused() {
    local rc=$1 what=${2:+$2: }
    cat "$TMP/err"
    [ "$rc" -eq 2 ] || fail "${what}exit status $rc, expected 2"
    [ ! -s "$TMP/out" ] || fail "${what}something on stdout"
}
