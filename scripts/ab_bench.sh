#!/usr/bin/env bash
# Compares two builds of the CLI on the rows of BENCHMARKS.md's top table (scene, dimension, N
# and our best method there), run alternately (each row old then new, the order swapped every
# round) for ROUNDS rounds in one run, so that both see the same machine: the rule for a change that must not move speed
# (issue #35). Prints each row's median mean-ms-per-frame of each build and new/old.
#
#   scripts/ab_bench.sh OLD_BIN NEW_BIN [ROUNDS] [FRAMES]      (defaults: 5 rounds, 20 frames)
#
# The rows are taken from BENCHMARKS.md's "Best of ours against the best peer" table, each with
# the method that was best there.
set -euo pipefail
old=$1
new=$2
rounds=${3:-5}
frames=${4:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "| uniform 2D | 100000 | grid | ..." -> "uniform 2 100000 grid"
awk -F'|' '/^## Best of ours/ { on = 1 } on && /^## / && !/^## Best of ours/ { exit }
    on && /^\| [a-z]+ [23]D \| [0-9]+ \|/ {
    split($2, sd, " "); gsub(/ /, "", $3); gsub(/ /, "", $4)
    print sd[1], substr(sd[2], 1, 1), $3, $4
}' "$root/BENCHMARKS.md" > "$tmp/rows"

# Each row runs both builds back to back, the first of the two swapped every round.
for r in $(seq 1 "$rounds"); do
    order="old new"
    [ $((r % 2)) -eq 0 ] && order="new old"
    while read -r scene dim n method; do
        for which in $order; do
            bin=$old
            [ "$which" = new ] && bin=$new
            "$bin" bench --scene "$scene" --dim "$dim" --n "$n" --method "$method" --frames "$frames" --format csv |
                awk -F, -v w="$which" 'NR > 1 && $12 == "ours" { print $1, $2, $3, $4, w, $7 }' >> "$tmp/runs"
        done
    done < "$tmp/rows"
    echo "round $r of $rounds done" >&2
done

printf '| scene | N | method | old ms | new ms | new / old |\n| --- | ---: | --- | ---: | ---: | ---: |\n'
while read -r scene dim n method; do
    med() { awk -v s="$scene" -v d="$dim" -v n="$n" -v m="$method" -v w="$1" \
        '$1 == s && $2 == d && $3 == n && $4 == m && $5 == w { print $6 }' "$tmp/runs" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    o=$(med old)
    w=$(med new)
    printf '| %s %sD | %s | %s | %.3f | %.3f | %.3f |\n' "$scene" "$dim" "$n" "$method" "$o" "$w" "$(awk -v a="$o" -v b="$w" 'BEGIN { print b / a }')"
done < "$tmp/rows"
