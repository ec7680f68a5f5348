#!/usr/bin/env bash
# Tests of the `broadphase` command-line tool, one case per CTest test:
#   cli_test.sh BINARY CASE [ARGS...]
# Exit 0 pass, 1 fail, 77 skipped (a method this build does not have).
# Inputs come from awk with a fixed seed ($SEED overrides it; it is printed on failure).
set -u
BIN=$1
CASE=$2
shift 2
SEED=${SEED:-12345}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bp_cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/cli_common.sh
. "$(dirname "$0")/cli_common.sh"

# Skips (77) when the method is not built; other errors fail.
need_method() {
    local m=$1
    printf '0 0 1 1\n' >"$TMP/probe"
    if ! "$BIN" pairs --method "$m" "$TMP/probe" >/dev/null 2>"$TMP/probe.err"; then
        if grep -q "not available" "$TMP/probe.err"; then
            echo "method $m is not available in this build: skipped"
            exit 77
        fi
        cat "$TMP/probe.err" >&2
        fail "method $m errors on a trivial input"
    fi
}

# gen KIND DIM: writes boxes to stdout.
gen() {
    awk -v kind="$1" -v dim="$2" -v seed="$SEED" '
    function box(lo1, lo2, lo3, hi1, hi2, hi3) {
        if (dim == 2) printf "%s %s %s %s\n", lo1, lo2, hi1, hi2
        else printf "%s %s %s %s %s %s\n", lo1, lo2, lo3, hi1, hi2, hi3
    }
    BEGIN {
        srand(seed)
        if (kind == "random") {
            # 600 boxes of varied sizes, some tiny, some large, negative coordinates too.
            for (k = 0; k < 600; k++) {
                s = (rand() < 0.1) ? rand() * 40 : rand() * 3
                for (a = 1; a <= 3; a++) { lo[a] = int((rand() - 0.5) * (dim == 3 ? 50 : 200) * 64) / 64; hi[a] = lo[a] + int(rand() * s * 64) / 64 }
                box(lo[1], lo[2], lo[3], hi[1], hi[2], hi[3])
            }
        } else if (kind == "touching") {
            # Unit boxes on an integer lattice: every neighbour touches (faces, edges, corners).
            for (i = 0; i < 8; i++) for (j = 0; j < 8; j++) for (l = 0; l < (dim == 3 ? 4 : 1); l++)
                box(i, j, l, i + 1, j + 1, l + 1)
        } else if (kind == "identical") {
            for (k = 0; k < 40; k++) box(1.5, -2, 3, 2.5, 7, 4)
            box(2.5, 7, 4, 9, 9, 9)
            box(2.5000002, 7, 4, 9, 9, 9)
        } else if (kind == "points") {
            # Points (min == max) on a small lattice, with duplicates, and a few boxes over them.
            for (k = 0; k < 300; k++) { x = int(rand() * 6); y = int(rand() * 6); z = int(rand() * 6); box(x, y, z, x, y, z) }
            box(0, 0, 0, 2, 2, 2); box(3, 3, 3, 3, 5, 3); box(-1, -1, -1, -1, 7, 7)
        } else if (kind == "large") {
            # Coordinates around +-1e7 and near the float limits.
            for (k = 0; k < 200; k++) { x = (rand() < 0.5 ? -1 : 1) * 1e7 + int(rand() * 16) * 2; box(x, x, x, x + int(rand() * 8), x + 4, x + 4) }
            box(-3.4e38, -3.4e38, -3.4e38, 3.4e38, 3.4e38, 3.4e38)
            box(3.4e38, 3.4e38, 3.4e38, 3.4e38, 3.4e38, 3.4e38)
        }
    }'
}

need_peer() {
    # Skips (77) when the peer is not compiled in (its library was not found).
    if ! "$BIN" bench --scene uniform --n 10 --frames 1 --method "$1" >/dev/null 2>"$TMP/peer.err"; then
        echo "peer $1 is not in this build: skipped"
        exit 77
    fi
}

case "$CASE" in
pairs_equal)
    # pairs_equal METHOD DIM KIND: the method prints exactly what brute force prints.
    m=$1 dim=$2 kind=$3
    need_method "$m"
    gen "$kind" "$dim" >"$TMP/in" || fail "generator"
    "$BIN" pairs --method brute --dim "$dim" "$TMP/in" >"$TMP/want" || fail "brute failed"
    "$BIN" pairs --method "$m" --dim "$dim" <"$TMP/in" >"$TMP/got" || fail "$m failed"
    [ -s "$TMP/want" ] || fail "no pairs at all: the input is not testing anything"
    # Brute force's own output must be sorted, i < j, no duplicates.
    awk '$1 >= $2 { exit 1 }' "$TMP/want" || fail "a pair with i >= j"
    sort -n -k1,1 -k2,2 -u "$TMP/want" | cmp -s - "$TMP/want" || fail "output not sorted or has duplicates"
    cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" | head >&2; fail "$m differs from brute"; }
    echo "$m dim $dim $kind: $(wc -l <"$TMP/got") pairs, equal to brute force"
    ;;
circles)
    # Worked by hand. 2D: 0 and 1 touch exactly (distance 2 = 1 + 1); 0 and 2 have touching
    # boxes ([-1,1] vs [1,2] on both axes) but the circles are sqrt(4.5) > 1.5 apart; 3 and 4
    # touch exactly along a 3-4-5 triangle (distance 5 = 2 + 3); 5 is a zero-radius point on
    # circle 3's boundary (distance 2 = 2 + 0).
    printf '0 0 1\n2 0 1\n1.5 1.5 0.5\n10 10 2\n13 14 3\n8 10 0\n' >"$TMP/in"
    printf '0 1\n3 4\n3 5\n' >"$TMP/want"
    "$BIN" pairs --circles "$TMP/in" >"$TMP/got" || fail "pairs --circles failed"
    cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" >&2; fail "2D circles"; }
    # 3D: spheres touching along (1,2,2) * 3 = distance 9 = 4 + 5; a pair whose boxes overlap
    # (corner region) but spheres do not.
    printf '0 0 0 4\n3 6 6 5\n5 5 5 1\n' >"$TMP/in3"
    printf '0 1\n1 2\n' >"$TMP/want3"
    "$BIN" pairs --circles --dim 3 "$TMP/in3" >"$TMP/got3" || fail "pairs --circles --dim 3 failed"
    cmp -s "$TMP/want3" "$TMP/got3" || { diff "$TMP/want3" "$TMP/got3" >&2; fail "3D spheres"; }
    # Non-representable decimals: 0.1 + 0.2 vs 0.3 apart. In doubles 0.1 + 0.2 > 0.3, so the
    # circles at distance 0.3 with radii 0.1 and 0.2 overlap by the parsed values; and the
    # outward-rounded float boxes must not lose the pair.
    printf '0 0 0.1\n0.3 0 0.2\n' >"$TMP/in4"
    printf '0 1\n' >"$TMP/want4"
    "$BIN" pairs --circles "$TMP/in4" >"$TMP/got4" || fail "decimal circles failed"
    cmp -s "$TMP/want4" "$TMP/got4" || fail "decimal circles: expected the pair (0.1 + 0.2 > 0.3 in double)"
    echo "circles and spheres as computed by hand"
    ;;
unsorted)
    # unsorted METHOD DIM KIND: --unsorted prints the same set of pairs as the sorted output,
    # each pair once with i < j, in whatever order the method finds them.
    m=$1 dim=$2 kind=$3
    need_method "$m"
    gen "$kind" "$dim" >"$TMP/in" || fail "generator"
    "$BIN" pairs --method "$m" --dim "$dim" "$TMP/in" >"$TMP/want" || fail "sorted run failed"
    "$BIN" pairs --unsorted --method "$m" --dim "$dim" <"$TMP/in" >"$TMP/got" || fail "--unsorted failed"
    [ -s "$TMP/want" ] || fail "no pairs at all: the input is not testing anything"
    awk '$1 >= $2 { exit 1 }' "$TMP/got" || fail "a pair with i >= j"
    sort -n -k1,1 -k2,2 "$TMP/got" >"$TMP/got.sorted"
    [ "$(uniq -d "$TMP/got.sorted" | wc -l)" -eq 0 ] || fail "a pair printed twice"
    cmp -s "$TMP/want" "$TMP/got.sorted" || { diff "$TMP/want" "$TMP/got.sorted" | head >&2; fail "--unsorted set differs"; }
    echo "$m dim $dim $kind: $(wc -l <"$TMP/got") pairs unsorted, the sorted output's set"
    ;;
unsorted_circles)
    # --unsorted --circles: the exact circle filter applies to the streamed pairs too.
    awk -v seed="$SEED" 'BEGIN { srand(seed); for (k = 0; k < 800; k++) printf "%d %d %g\n", int(rand() * 120), int(rand() * 120), int(rand() * 16) / 4 }' >"$TMP/in"
    "$BIN" pairs --circles "$TMP/in" >"$TMP/want" || fail "sorted --circles failed"
    "$BIN" pairs --circles --unsorted "$TMP/in" | sort -n -k1,1 -k2,2 >"$TMP/got" || fail "--unsorted --circles failed"
    [ -s "$TMP/want" ] || fail "no circle pairs: the input is not testing anything"
    cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" | head >&2; fail "--unsorted --circles set differs"; }
    echo "circles: $(wc -l <"$TMP/got") pairs unsorted, the sorted output's set"
    ;;
unsorted_memory)
    # Identical boxes: every pair overlaps. 1,000 boxes give 0.5 million pairs, 4,000 give 8
    # million (64 MB as pairs, more while sorting); streamed, the peak resident memory must not
    # grow with the pairs. GNU time reports the peak (kB).
    [ -x /usr/bin/time ] || { echo "/usr/bin/time (Debian package time) not found: skipped"; exit 77; }
    peak() {
        awk -v n="$1" 'BEGIN { for (k = 0; k < n; k++) print "0 0 1 1" }' >"$TMP/id$1"
        lines=$(/usr/bin/time -f %M -o "$TMP/rss$1" "$BIN" pairs --unsorted "$TMP/id$1" | wc -l)
        [ "$lines" -eq $(($1 * ($1 - 1) / 2)) ] || fail "$1 identical boxes: $lines pairs, not n(n-1)/2"
        tail -n 1 "$TMP/rss$1"
    }
    small=$(peak 1000) big=$(peak 4000)
    echo "peak resident: ${small} kB with 1,000 identical boxes, ${big} kB with 4,000"
    [ $((big - small)) -lt 16384 ] || fail "peak memory grew by $((big - small)) kB for 7.5 million more pairs"
    ;;
bad)
    # bad NAME LINE DIM FLAGS INPUT: exit 2, a message naming the line, nothing on stdout.
    name=$1 line=$2 dim=$3 flags=$4 input=$5
    printf "$input" >"$TMP/in"
    # shellcheck disable=SC2086
    BROADPHASE_MAX_BOXES=3 "$BIN" pairs --dim "$dim" $flags "$TMP/in" >"$TMP/out" 2>"$TMP/err"
    refused $? "$name"
    grep -q "line $line\b" "$TMP/err" || fail "$name: the message does not name line $line"
    ;;
parse)
    # Comments, blank lines, commas, tabs, CRLF, signs and exponents all parse.
    printf '# header comment\n\n0,0,1,1   # box 0\n\t1\t1\t2\t2\r\n   \n# another\n0.5 , 0.5 , +3e0 , 3.0\n-1E1 -10 -9.5 -9\n5 5 6 6' >"$TMP/in"
    printf '0 1\n0 2\n1 2\n' >"$TMP/want"
    "$BIN" pairs "$TMP/in" >"$TMP/got" || fail "parse failed"
    cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" >&2; fail "parsed pairs"; }
    # An empty input gives no pairs and success.
    : >"$TMP/empty"
    "$BIN" pairs "$TMP/empty" >"$TMP/got" || fail "empty input"
    [ ! -s "$TMP/got" ] || fail "pairs from an empty input"
    echo "comments, blank lines, commas, tabs parse"
    ;;
query)
    # query METHOD DIM KIND: against a scan done here in awk (integer/half inputs: exact).
    m=$1 dim=$2 kind=$3
    need_method "$m"
    awk -v dim="$dim" -v seed="$SEED" 'BEGIN { srand(seed)
        for (k = 0; k < (dim == 3 ? 2000 : 400); k++) {
            for (a = 1; a <= dim; a++) { lo[a] = int(rand() * 80) / 2; hi[a] = lo[a] + int(rand() * (dim == 3 ? 24 : 8)) / 2 }
            if (dim == 2) print lo[1], lo[2], hi[1], hi[2]; else print lo[1], lo[2], lo[3], hi[1], hi[2], hi[3]
        }
        # Whatever the seed, every query hits something: a box whose corner touches the point
        # (15, 15[, 15]), inside the query box and the circle.
        if (dim == 2) print 12, 13, 15, 15; else print 12, 13, 10, 15, 15, 15 }' >"$TMP/in"
    if [ "$dim" = 2 ]; then
        qbox="10,12.5,20,18" qcircle="20,20,6.5" qpoint="15,15"
    else
        qbox="10,12.5,8,20,18,30" qcircle="20,20,20,6.5" qpoint="15,15,15"
    fi
    case $kind in
    box) q=$qbox ;;
    circle) q=$qcircle ;;
    point) q=$qpoint ;;
    esac
    awk -v dim="$dim" -v kind="$kind" -v q="$q" 'BEGIN { nq = split(q, Q, ","); for (k = 1; k <= nq; k++) Q[k] += 0 }
        NF > 0 { hit = 1; d2 = 0
            for (a = 1; a <= dim; a++) {
                lo = $a + 0; hi = $(a + dim) + 0
                if (kind == "box") { if (lo > Q[a + dim] || Q[a] > hi) hit = 0 }
                else if (kind == "point") { if (Q[a] < lo || Q[a] > hi) hit = 0 }
                else { c = Q[a]; d = 0; if (c < lo) d = lo - c; else if (c > hi) d = c - hi; d2 += d * d }
            }
            if (kind == "circle" && d2 > Q[dim + 1] * Q[dim + 1]) hit = 0
            if (hit) print NR - 1 }' "$TMP/in" >"$TMP/want"
    [ -s "$TMP/want" ] || fail "the query hits nothing: not a test"
    "$BIN" query --method "$m" --dim "$dim" "--$kind" "$q" "$TMP/in" >"$TMP/got" || fail "query failed"
    cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got" | head >&2; fail "query $kind differs"; }
    echo "query $kind ($m, ${dim}D): $(wc -l <"$TMP/got") hits, equal to the scan"
    ;;
help)
    # help [SUBCOMMAND]: --help exits 0 and prints a usage line on stdout.
    "$BIN" "$@" --help >"$TMP/out" || fail "--help exit status"
    grep -q "usage: broadphase" "$TMP/out" || fail "no usage line"
    ;;
version)
    out=$("$BIN" --version) || fail "--version exit status"
    [ "$out" = "broadphase $1" ] || fail "--version printed '$out', expected 'broadphase $1'"
    ;;
usage)
    # usage ARGS...: a usage error exits 2 with a message and nothing on stdout.
    printf '0 0 1 1\n' >"$TMP/in"
    "$BIN" "$@" "$TMP/in" >"$TMP/out" 2>"$TMP/err"
    refused $?
    [ -s "$TMP/err" ] || fail "no message"
    ;;
pairs_threads)
    # pairs_threads METHOD DIM: --threads 3 prints exactly what --threads 1 prints, on 40,000
    # boxes (over the size from which calls use their workers).
    m=$1 dim=$2
    need_method "$m"
    awk -v dim="$dim" 'BEGIN { srand(7); w = dim == 2 ? 800 : 120
        for (k = 0; k < 40000; k++) {
            line = ""; hi = ""
            for (a = 0; a < dim; a++) { c = rand() * w; h = 0.2 + rand() * 1.3; line = line sprintf("%.4f ", c - h); hi = hi sprintf(" %.4f", c + h) }
            print line hi
        } }' >"$TMP/in" || fail "generator"
    "$BIN" pairs --method "$m" --dim "$dim" "$TMP/in" >"$TMP/want" || fail "--threads 1 failed"
    "$BIN" pairs --method "$m" --dim "$dim" --threads 3 "$TMP/in" >"$TMP/got" || fail "--threads 3 failed"
    [ -s "$TMP/want" ] || fail "no pairs at all: the input is not testing anything"
    cmp -s "$TMP/want" "$TMP/got" || fail "--threads 3 differs from --threads 1"
    echo "$m dim $dim: $(wc -l <"$TMP/got") pairs, the same with 3 threads"
    ;;
bench_threads)
    # --threads 1,2: each of our methods once per count (CSV column `threads`), baselines once;
    # the same pairs and checks whatever the count; the table has the speed-up table.
    "$BIN" bench --frames 2 --n 2000 --scene uniform --method sweep,grid,naive-sweep --threads 1,2 \
        --parallel-min 1 --format csv --check >"$TMP/out" || fail "bench exit status"
    cat "$TMP/out"
    for m in sweep grid; do
        l1=$(grep "^uniform,2,2000,$m,1,2," "$TMP/out" | cut -d, -f10,11) || fail "no 1-thread line for $m"
        l2=$(grep "^uniform,2,2000,$m,2,2," "$TMP/out" | cut -d, -f10,11) || fail "no 2-thread line for $m"
        [ -n "$l1" ] && [ "$l1" = "$l2" ] || fail "$m: pairs,checks '$l1' with 1 thread, '$l2' with 2"
    done
    [ "$(grep -c '^uniform,2,2000,naive-sweep,1,' "$TMP/out")" -eq 1 ] || fail "naive-sweep should run once, single-threaded"
    grep -q ',naive-sweep,2,' "$TMP/out" && fail "naive-sweep ran with 2 threads"
    "$BIN" bench --frames 1 --n 1000 --scene uniform --method grid --threads 1,2 >"$TMP/table" || fail "table exit status"
    grep -q "by worker count" "$TMP/table" || fail "no worker-count table"
    grep -q "^method .* 1 thr .* 2 thr .* 1/2" "$TMP/table" || fail "worker-count table header"
    grep -Eq "^grid +1000 +[0-9.]+ +[0-9.]+ +[0-9.]+x" "$TMP/table" || fail "no grid row with its speed-up"
    ;;
bench_csv)
    "$BIN" bench --frames 2 --n 1000 --scene uniform --format csv --check >"$TMP/out" || fail "bench exit status"
    cat "$TMP/out"
    head -1 "$TMP/out" |
        grep -qx 'scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks,kind,status,peak_bytes' ||
        fail "CSV header"
    # One line per method this build has (no peer without --peers), each with 14 fields and the
    # same pair count; memcpy (the floor: a copy of the boxes) finds no pairs.
    methods="naive-sweep brute sweep sweep-resort auto world world-incremental world-rebuild"
    for m in grid quadtree rdc; do
        printf '0 0 1 1\n' | "$BIN" pairs --method $m >/dev/null 2>&1 && methods="$methods $m"
    done
    case " $methods " in *" quadtree "*) methods="$methods quadtree-loose" ;; esac
    case " $methods " in *" grid "*) methods="$methods grid-sorted" ;; esac
    for m in $methods memcpy; do
        grep -q "^uniform,2,1000,$m,1,2,[0-9.]*,[0-9.]*,[0-9.]*,[0-9]*,[0-9]*,ours,ok,\$" "$TMP/out" || fail "no line for $m"
    done
    [ "$(tail -n +2 "$TMP/out" | wc -l)" -eq "$(($(echo $methods | wc -w) + 1))" ] || fail "extra lines"
    grep -q '^uniform,2,1000,memcpy,1,2,[0-9.]*,[0-9.]*,[0-9.]*,0,0,ours,ok,$' "$TMP/out" || fail "memcpy row"
    [ "$(tail -n +2 "$TMP/out" | grep -v ',memcpy,' | cut -d, -f10 | sort -u | wc -l)" -eq 1 ] ||
        fail "methods disagree on pairs"
    ;;
bench_table)
    # Every scene (the world scenes too) gets its block with a header and the ratio column; the
    # baseline reads 1.00x.
    "$BIN" bench --scene all --n 300 --frames 2 --method naive-sweep,brute,sweep >"$TMP/out" || fail "bench exit status"
    cat "$TMP/out"
    scenes="seed uniform clustered mixed line sticks sizes pareto plates blobs static shooter"
    for s in $scenes; do
        grep -q "^$s  2D  N = 300  frames 2  seed 1\$" "$TMP/out" || fail "no block for $s"
    done
    count=$(echo $scenes | wc -w)
    [ "$(grep -c '^method .*mean ms.*median ms.*max ms.*pairs.*checks.*vs naive.*vs sweep' "$TMP/out")" -eq $count ] || fail "headers"
    [ "$(grep -c '^naive-sweep .* 1\.00x  *[0-9.]*x$' "$TMP/out")" -eq $count ] || fail "baseline ratio"
    [ "$(grep -c '^sweep .*x  *1\.00x$' "$TMP/out")" -eq $count ] || fail "sweep ratio"
    ;;
bench_check_values)
    # The bench's pairs column at frame 10 reproduces docs/scenes.md's check values for sticks and sizes,
    # in 2D and 3D, for brute force, sweep, AUTO and the other methods this build has (--check
    # also compares each frame with brute force).
    methods=brute,sweep,auto
    for m in grid quadtree rdc; do
        printf '0 0 1 1\n' | "$BIN" pairs --method $m >/dev/null 2>&1 && methods="$methods,$m"
    done
    for row in "sticks 2 7061" "sizes 2 6689" "sticks 3 11151" "sizes 3 130108"; do
        set -- $row
        "$BIN" bench --scene "$1" --dim "$2" --n 1000 --frames 10 --format csv --check --method "$methods" \
            >"$TMP/out" 2>"$TMP/err" ||
            { cat "$TMP/out" "$TMP/err"; fail "bench $1 $2D"; }
        cat "$TMP/out"
        [ "$(tail -n +2 "$TMP/out" | wc -l)" -ge 3 ] || fail "$1 $2D: too few rows"
        [ "$(tail -n +2 "$TMP/out" | cut -d, -f10 | sort -u)" = "$3" ] ||
            fail "$1 $2D: pairs at frame 10 are not $3"
    done
    ;;
bench_shapes)
    # The shapes beyond SCENES.md (docs/scenes.md): every method of this build against brute force
    # on every frame (--check), 2D and 3D; all rows report the same pairs.
    for scene in pareto plates blobs; do
        for dim in 2 3; do
            "$BIN" bench --scene $scene --dim $dim --n 1500 --frames 3 --format csv --check --method all \
                >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "bench $scene ${dim}D"; }
            [ "$(tail -n +2 "$TMP/out" | grep -vc ',memcpy,')" -ge 5 ] || fail "$scene ${dim}D: too few rows"
            [ "$(tail -n +2 "$TMP/out" | grep -v ',memcpy,' | cut -d, -f10 | sort -u | wc -l)" = 1 ] ||
                { cat "$TMP/out"; fail "$scene ${dim}D: the methods' pairs differ"; }
        done
    done
    ;;
bench_skip)
    # Brute force at N = 1,000,000 is estimated over 5 s per frame and skipped without running.
    "$BIN" bench --scene uniform --n 1000000 --method brute --frames 1 >"$TMP/out" || fail "bench exit status"
    cat "$TMP/out"
    grep -q '^brute .*skipped (>5 s/frame' "$TMP/out" || fail "brute not skipped at 1000000"
    "$BIN" bench --scene uniform --n 1000000 --method brute --frames 1 --format csv >"$TMP/csv" || fail "csv status"
    grep -qx 'uniform,2,1000000,brute,1,1,,,,,,ours,skipped,' "$TMP/csv" || fail "skipped CSV line"
    ;;
bench_peers)
    # --peers adds a row per peer to the per-N block and to the scene table, and the best-ours /
    # best-peer rows; cgal-box handles 2D and 3D, so it is there whenever any C++ peer is.
    need_peer cgal-box
    "$BIN" bench --scene uniform --n 300,1000 --frames 2 --method sweep,grid --peers >"$TMP/out" ||
        fail "bench exit status"
    cat "$TMP/out"
    grep -q '^uniform 2D: mean ms per frame (frames 2, seed 1)$' "$TMP/out" || fail "no scene table"
    grep -q '^method  *300  *1000$' "$TMP/out" || fail "N columns"
    [ "$(grep -c '^cgal-box  *[0-9.]*  *[0-9.]*$' "$TMP/out")" -eq 1 ] || fail "no cgal-box row in the table"
    [ "$(grep -c '^cgal-box  .*x$' "$TMP/out")" -eq 2 ] || fail "no cgal-box row in the per-N blocks"
    grep -q '^best ours  *[a-z-]*  *[a-z-]*$' "$TMP/out" || fail "no best-ours row"
    grep -q '^best peer  *[a-z0-9-]*  *[a-z0-9-]*$' "$TMP/out" || fail "no best-peer row"
    grep -q '^best peer / best ours  *[0-9.]*x  *[0-9.]*x$' "$TMP/out" || fail "no ratio row"
    # 3D: only the peers that handle it (Chipmunk2D and Box2D are 2D only).
    "$BIN" bench --scene uniform --dim 3 --n 300 --frames 1 --method sweep --peers >"$TMP/out3" ||
        fail "3D exit status"
    cat "$TMP/out3"
    grep -q '^cgal-box ' "$TMP/out3" || fail "no cgal-box in 3D"
    ! grep -q '^chipmunk\|^box2d' "$TMP/out3" || fail "a 2D-only peer ran in 3D"
    ;;
bench_json)
    need_peer cgal-box
    "$BIN" bench --scene seed,uniform --n 200 --frames 2 --method sweep,brute,cgal-box --format json >"$TMP/out" ||
        fail "bench exit status"
    cat "$TMP/out"
    if [ -x /usr/bin/python3 ]; then
        /usr/bin/python3 -m json.tool "$TMP/out" >/dev/null || fail "not JSON"
        /usr/bin/python3 - "$TMP/out" <<'PY' || fail "JSON content"
import json, sys
runs = json.load(open(sys.argv[1]))
assert len(runs) == 6, len(runs)
keys = {"scene", "dim", "n", "method", "kind", "threads", "frames", "mean_ms", "median_ms", "max_ms", "pairs", "checks",
        "status", "peak_bytes", "missing", "extra"}
for r in runs:
    assert set(r) == keys, r
    assert r["status"] == "ok" and r["mean_ms"] >= 0 and r["peak_bytes"] is None, r
    assert r["kind"] == ("peer" if r["method"] == "cgal-box" else "ours"), r
for s in ("seed", "uniform"):
    assert len({r["pairs"] for r in runs if r["scene"] == s}) == 1, s
PY
    else
        grep -q '^\[$' "$TMP/out" && grep -q '^\]$' "$TMP/out" || fail "no JSON array"
    fi
    # CSV with a peer: kind peer, status ok.
    "$BIN" bench --scene uniform --n 200 --frames 2 --method sweep,cgal-box --format csv >"$TMP/csv" ||
        fail "csv exit status"
    grep -q '^uniform,2,200,cgal-box,1,2,[0-9.]*,[0-9.]*,[0-9.]*,[0-9]*,[0-9]*,peer,ok,$' "$TMP/csv" ||
        fail "peer CSV line"
    ;;
bench_out)
    # --out writes the CSV, and a plot per scene when gnuplot is installed.
    "$BIN" bench --scene uniform,line --n 200,400 --frames 1 --method sweep,grid --out "$TMP/o" >"$TMP/out" ||
        fail "bench exit status"
    [ -s "$TMP/o/bench.csv" ] || fail "no CSV"
    head -1 "$TMP/o/bench.csv" | grep -q '^scene,dim,n,method,threads,' || fail "CSV header"
    [ "$(tail -n +2 "$TMP/o/bench.csv" | wc -l)" -eq 8 ] || fail "CSV lines"
    if command -v gnuplot >/dev/null 2>&1; then
        for s in uniform line; do
            [ -s "$TMP/o/bench-$s.png" ] || fail "no plot for $s"
            head -c 8 "$TMP/o/bench-$s.png" | od -c | grep -q 'P   N   G' || fail "$s plot is not a PNG"
        done
    fi
    # Without gnuplot on PATH: the CSV only, a note, exit 0.
    PATH=/nonexistent "$BIN" bench --scene uniform --n 200 --frames 1 --method sweep --out "$TMP/p" \
        >/dev/null 2>"$TMP/err" || fail "exit status without gnuplot"
    [ -s "$TMP/p/bench.csv" ] || fail "no CSV without gnuplot"
    grep -q 'gnuplot not found' "$TMP/err" || fail "no note about gnuplot"
    ;;
bench_wrong)
    # chipmunk-sweep1d misses boxes touching on x (docs/peers.md): on uniform, N = 10,000, seed 1
    # it misses one pair at frame 6. It is shown WRONG; --check still exits 0, since it checks our
    # methods only (a wrong peer is a finding about another library, not a failure of ours).
    need_peer chipmunk-sweep1d
    "$BIN" bench --scene uniform --n 10000 --frames 6 --method chipmunk-sweep1d --check --out "$TMP/o" >"$TMP/out" ||
        fail "exit status: a wrong peer must not fail --check"
    cat "$TMP/out"
    grep -q '^chipmunk-sweep1d .*WRONG: frame 6: 1 pairs missing, 0 extra' "$TMP/out" || fail "not reported WRONG"
    grep -q '^chipmunk-sweep1d  *WRONG -1/+0$' "$TMP/out" || fail "no WRONG cell in the table"
    grep -q '^best peer  *-$' "$TMP/out" || fail "a wrong peer counted as best"
    grep -q '^uniform,2,10000,chipmunk-sweep1d,1,6,.*,peer,wrong,$' "$TMP/o/bench.csv" || fail "CSV status wrong"
    ;;
bench_seed_memory)
    # Seed 003's table (checks in the per-N blocks, ms in the table) and --memory at the largest N.
    "$BIN" bench --scene seed --n 500,1000,3000 --frames 1 --method naive-sweep,sweep --memory >"$TMP/out" ||
        fail "bench exit status"
    cat "$TMP/out"
    for n in 500 1000 3000; do
        grep -q "^seed  2D  N = $n  frames 1  seed 1\$" "$TMP/out" || fail "no block for $n"
    done
    [ "$(grep -c '^method .*pairs.*checks' "$TMP/out")" -eq 3 ] || fail "check columns"
    grep -q '^method  *500  *1000  *3000$' "$TMP/out" || fail "seed table"
    grep -q '^seed 2D: peak memory at N = 3000, bytes per object' "$TMP/out" || fail "no memory block"
    grep -q '^sweep  *[0-9.]*$' "$TMP/out" || fail "no sweep memory"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
