#!/usr/bin/env bash
# Tests of `broadphase world` (issue #13), one case per CTest test:
#   world_cli_test.sh BROADPHASE TEST_WORLD_SCRIPT CASE [ARGS...]
# Exit 0 pass, 1 fail. Random scripts come from test_world_script (seeded; $SEED overrides it
# and is printed on failure), which also writes the output the reference world expects.
set -u
BIN=$1
GEN=$2
CASE=$3
shift 3
SEED=${SEED:-4242}
export SEED
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bp_world_cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/cli_common.sh
. "$(dirname "$0")/cli_common.sh"

# same WANT GOT WHAT: the files are equal, or the first differences are shown.
same() {
    cmp -s "$1" "$2" || { diff "$1" "$2" | head -20 >&2; fail "$3"; }
}

case "$CASE" in
example)
    # Worked by hand (2D). A static wall 10 and balls 2 and 3; 2 touches the wall at x = 1..2;
    # 3 is moved onto the wall's end (touching at x = 9..10); queries by box, point and sphere;
    # removing 2 ends its pair; the wall turns moving (3-10 stays); a filter that 10's category
    # misses ends 3-10. Ids removed and added again are new proxies: 7 ends and begins with 2.
    cat >"$TMP/in" <<'IN'
# a wall and two balls
add 10 static 1 0xffff 0 0 10 1
add 2	moving 1 0xFFFF 1 0.5 2 1.5
add 3 moving 1 18446744073709551615 5 5 6 6
update
move 3 9 0 10 1   # onto the wall's end
update

query box 0 0 3 3 1
query point 9.5 0.5 0x1
query sphere 5 5 0.1 1
query box 0 0 3 3 2
remove 2
kind 10 moving
update
filter 3 2 2
update
add 7 moving 1 1 20 20 21 21
add 8 moving 1 1 21 21 22 22
update
remove 7
add 7 moving 1 1 20 20 21 21
update
update
IN
    printf '%s\n' 'begin 2 10' 'pairs 1' 'begin 3 10' 'pairs 2' 'query 2 10' 'query 3 10' 'query' 'query' \
        'end 2 10' 'pairs 1' 'end 3 10' 'pairs 0' 'begin 7 8' 'pairs 1' 'begin 7 8' 'end 7 8' 'pairs 1' 'pairs 1' >"$TMP/want"
    "$BIN" world "$TMP/in" >"$TMP/got" || fail "exit status"
    same "$TMP/want" "$TMP/got" "2D example"
    # 3D: two static boxes never pair; a moving one touching both by a corner and by a face.
    printf 'add 1 static 1 1 0 0 0 1 1 1\nadd 2 static 1 1 1 0 0 2 1 1\nadd 3 moving 1 1 1 1 1 3 3 3\nupdate\n' >"$TMP/in3"
    printf 'move 3 2 0 0 3 1 1\nupdate\nquery box 1 1 1 1 1 1 1\nquery sphere 2.5 0.5 0.5 0 1\n' >>"$TMP/in3"
    printf '%s\n' 'begin 1 3' 'begin 2 3' 'pairs 2' 'end 1 3' 'pairs 1' 'query 1 2' 'query 3' >"$TMP/want3"
    "$BIN" world --dim 3 "$TMP/in3" >"$TMP/got3" || fail "3D exit status"
    same "$TMP/want3" "$TMP/got3" "3D example"
    # An empty script prints nothing and succeeds.
    : >"$TMP/empty"
    "$BIN" world "$TMP/empty" >"$TMP/got" || fail "empty script"
    [ ! -s "$TMP/got" ] || fail "output from an empty script"
    ;;
random)
    # random DIM MODE: a generated script through the command (from a file and from stdin)
    # prints exactly what the reference world expects.
    dim=$1 mode=$2
    "$GEN" gen "$dim" "$TMP/script" "$TMP/want" || fail "generator"
    [ -s "$TMP/want" ] || fail "no expected output"
    "$BIN" world --dim "$dim" --mode "$mode" "$TMP/script" >"$TMP/got" || fail "exit status"
    same "$TMP/want" "$TMP/got" "file"
    "$BIN" world --dim="$dim" --mode="$mode" - <"$TMP/script" >"$TMP/got2" || fail "stdin exit status"
    same "$TMP/want" "$TMP/got2" "stdin"
    echo "$(grep -c '^update' "$TMP/script") updates, $(grep -c '^begin' "$TMP/want") begins, equal to the reference"
    ;;
bad)
    # bad NAME LINE DIM INPUT: exit 2, a message naming the line, nothing on stdout.
    name=$1 line=$2 dim=$3 input=$4
    printf "$input" >"$TMP/in"
    BROADPHASE_MAX_BOXES=3 "$BIN" world --dim "$dim" "$TMP/in" >"$TMP/out" 2>"$TMP/err"
    refused $? "$name"
    grep -q "^broadphase: line $line: " "$TMP/err" || fail "$name: the message does not name line $line"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$name: more than one message"
    ;;
usage)
    # usage ARGS...: exit 2, a message, nothing on stdout.
    printf 'update\n' >"$TMP/in"
    (cd "$TMP" && "$BIN" world "$@" >"$TMP/out" 2>"$TMP/err")
    refused $?
    [ -s "$TMP/err" ] || fail "no message"
    ;;
bench_values)
    # bench_values SCENE DIM N FRAMES PAIRS: every row of ours and every peer with a persistent
    # interface runs the world scene with --check, agrees with the reference world every frame
    # (no mismatch, no WRONG peer) and reports docs/scenes.md's pair count at frame FRAMES.
    scene=$1 dim=$2 n=$3 frames=$4 pairs=$5
    "$BIN" bench --scene "$scene" --dim "$dim" --n "$n" --frames "$frames" \
        --method sweep,grid,auto,world,world-incremental,world-rebuild --peers --check --format csv >"$TMP/out" ||
        fail "bench exit status (a --check mismatch?)"
    cat "$TMP/out"
    for m in sweep auto world world-incremental world-rebuild; do
        grep -q "^$scene,$dim,$n,$m,1,$frames,[0-9.]*,[0-9.]*,[0-9.]*,$pairs,[0-9]*,ours,ok,\$" "$TMP/out" ||
            fail "row $m: not ok or not $pairs pairs"
    done
    ! grep -q ',peer,wrong,' "$TMP/out" || fail "a peer disagrees with the reference world"
    npeer=$(grep -c ',peer,' "$TMP/out")
    [ "$(grep -c ",$pairs,[0-9]*,peer,ok," "$TMP/out")" -eq "$npeer" ] || fail "a peer reports other pairs"
    echo "$npeer peers agree"
    ;;
bench_rows)
    # The world rows on the stateless scenes (every object moved every frame), checked against
    # the reference world; the table's per-scene summary lists them; world scenes in 3D leave
    # the 2D-only peers out.
    "$BIN" bench --scene uniform,clustered --n 3000 --frames 3 --method sweep,world,world-incremental,world-rebuild \
        --check >"$TMP/out" || fail "bench exit status"
    cat "$TMP/out"
    for m in world world-incremental world-rebuild; do
        [ "$(grep -c "^$m  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9]*  *[0-9]* " "$TMP/out")" -eq 2 ] || fail "no $m rows"
    done
    [ "$(awk '$1 == "sweep" || $1 ~ /^world/ { print $5 }' "$TMP/out" | sort -u | wc -l)" -eq 2 ] ||
        fail "rows disagree on pairs"
    "$BIN" bench --scene static --dim 3 --n 2000 --frames 2 --method world --peers >"$TMP/out3" ||
        fail "3D exit status"
    cat "$TMP/out3"
    ! grep -q '^chipmunk\|^box2d' "$TMP/out3" || fail "a 2D-only peer ran in 3D"
    ! grep -q '^cgal-box' "$TMP/out3" || fail "cgal-box has no persistent interface"
    ;;
help)
    "$BIN" world --help >"$TMP/out" || fail "--help exit status"
    grep -q "^usage: broadphase world" "$TMP/out" || fail "no usage line"
    "$BIN" --help | grep -q "^  world " || fail "world missing from broadphase --help"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
