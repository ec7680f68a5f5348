// Method `grid`, sorted layout: the pair passes and region queries over the frame that
// src/grid_sorted.c builds (docs/grid.md). Each box lives in exactly one cell, the cell of its min
// corner in its level; two boxes of a level that overlap have min-corner cells at most one apart
// on every axis, so a cell meets only its 8 (26) neighbours, and the 4 (13) "forward" ones find
// every pair once (seed 004). Row-major keys make those neighbours consecutive keys (x-1, x, x+1
// of the next row), so the pairs of a box are 2 (5) short key ranges of the sorted array, found
// by cursors that only move forward. A box of a coarser level meets the other levels through a
// region query of its own box. Crowded cells go to the SIMD kernels of src/grid_dense.c.
#include "grid.h"
#include "par.h"

// The small tests and moves of the scalar loops, inlined into each (some on a constant `stops`).
#define GRID_ALWAYS_INLINE __attribute__((always_inline)) static inline

// First sorted position in level l whose key is >= key: read from the cell index, or searched
// within the key's row when the level has a row index, else in the whole level.
static size_t grid_lower_bound(const bp_grid *g, int l, uint32_t key) {
    const grid_level *L = &g->geom.lv[l];
    if (g->sorted.cells_ok[l]) return g->sorted.rows[g->sorted.roff[l] + (key - L->base)];
    size_t lo = L->begin, hi = L->end;
    if (g->sorted.rows_ok[l]) {
        const size_t r = (key - L->base) / L->kstride[1];
        lo = g->sorted.rows[g->sorted.roff[l] + r];
        hi = g->sorted.rows[g->sorted.roff[l] + r + 1];
    }
    return grid_lower_bound32(g->keys, lo, hi, key);
}

// grid_region for the query box q (min, max) in level l, tightened by the level's extents where
// known: a box of l that overlaps q starts at or after q's min less the level's largest extent,
// so on an axis where l's boxes are thin against its cells (long cells: sticks), the cell
// before q's is searched only when q starts that close to it, not always (`sticks` 3D: 2.2 thin
// cells a query on each thin axis before). ext is at or above every extent, so q - ext, which
// rounding can move only to a float at or below any float min that is >= the exact difference,
// never misses a box.
static void grid_region_near(const bp_grid *g, int l, const float *q, const int64_t c0[3], const int64_t c1[3],
                             int64_t lo[3], int64_t hi[3]) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    grid_region(G, L, c0, c1, lo, hi);
    if (!g->sorted.ext_ok[l]) return;
    const int d = G->dim;
    for (int a = 0; a < d; ++a) {
        const int64_t c = grid_coord(q[a] - g->sorted.ext[l][a], G->fo[a], G->fi[a], G->fg[a]) >> L->shift[a];
        if (c > lo[a]) lo[a] = c;
    }
}

// ---------------------------------------------------------------------------------------------
// Pairs

// Tests sorted box j against the probe pr of sorted box p when j's key is at most lim, and pushes
// a hit. Branch-free but for the (rare) hit: cells hold a box or less on average, so loops that
// stop at the first key past the range would mispredict on almost every box.
GRID_ALWAYS_INLINE bp_status grid_try2(const uint32_t *BP_RESTRICT keys, const float *BP_RESTRICT bx,
                                       const uint32_t *BP_RESTRICT ids, const grid_probe *pr, size_t p, size_t j,
                                       uint32_t lim, bp_sink *sink, uint64_t *c) {
    const int in = keys[j] <= lim;
    *c += (uint64_t)in;
    if (BP_UNLIKELY(in & grid_hit2(pr, bx + 4 * j))) return bp_sink_push(sink, ids[p], ids[j]);
    return BP_OK;
}

// Whether the run's next box j (its key at most lim) is still in it, 3D: also within the stop sp
// where `stops` (grid_stop; runs over sorted cells; a constant in each specialised copy of the
// loops).
GRID_ALWAYS_INLINE bool grid_goes3(const uint32_t *BP_RESTRICT keys, const float *BP_RESTRICT bx, size_t j,
                                   uint32_t lim, const grid_stop *sp, const bool stops) {
    return keys[j] <= lim && (!stops || bx[6 * j + sp->ax] <= sp->at);
}

// grid_try2 in 3D, within the stop sp where `stops`.
GRID_ALWAYS_INLINE bp_status grid_try3(const uint32_t *BP_RESTRICT keys, const float *BP_RESTRICT bx,
                                       const uint32_t *BP_RESTRICT ids, const grid_probe *pr, const grid_stop *sp,
                                       size_t p, size_t j, uint32_t lim, bp_sink *sink, uint64_t *c,
                                       const bool stops) {
    const float *b = bx + 6 * j;
    const int in = (keys[j] <= lim) & (!stops || b[sp->ax] <= sp->at);
    *c += (uint64_t)in;
    if (BP_UNLIKELY(in & grid_hit3(pr, b))) return bp_sink_push(sink, ids[p], ids[j]);
    return BP_OK;
}

// Moves cursor q to the first key >= lo. The distance varies from box to box (about one on
// average), so a plain loop mispredicts; with SSE2 four keys are compared at once and, keys
// being sorted, the ones below lo are a prefix whose length is the count of trailing ones.
GRID_ALWAYS_INLINE size_t grid_advance(const uint32_t *keys, size_t q, uint32_t lo) {
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i bias = _mm_set1_epi32((int)0x80000000u);
    const __m128i lim = _mm_xor_si128(_mm_set1_epi32((int)lo), bias);
    for (;;) {
        const __m128i k = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(keys + q)), bias);
        const unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(k, lim)));
        q += (size_t)__builtin_ctz(~m);
        if (BP_LIKELY(m != 15)) return q;
    }
#else
    q += keys[q] < lo;
    q += keys[q] < lo;
    while (BP_UNLIKELY(keys[q] < lo)) ++q;
    return q;
#endif
}

// Where a cursor over level L stands for a row that starts at p0 (the first key >= lo): what the
// cursor of a pass started at the level's first box reaches, as it only moves forward to the
// first key >= each box's bound (a task's part starts the pass at p0).
static size_t grid_cursor_at(const bp_grid *g, const grid_level *L, size_t p0, uint32_t lo) {
    if (p0 == L->begin) return L->begin;
    return grid_lower_bound32(g->keys, L->begin, L->end, lo);
}

// Crowded cells go to the SIMD kernels of src/grid_dense.c (AVX-512 or AVX2), decided per block of
// this many boxes: a block is crowded when GRID_DENSE_SHARED_NUM / GRID_DENSE_SHARED_DEN of its
// boxes share the cell of the box before (1.5 boxes a cell or more). There a box's runs are
// long (`seed` 100,000: ~2,000 candidates a box) and 16 candidates a compare pay; in sparse
// cells (`uniform`: under one box a cell) the scalar loop's few branch-free tests are cheaper.
// Measured at 1,000,000 (docs/grid.md, "Dense cells"): with every block dense, `uniform` 2D
// 23 -> 33 ms and `mixed` 30 -> 41; with 1/3, `clustered` 42 -> 35 and the others unchanged;
// 1/2 and 3/4 left part of `clustered` scalar.
#define GRID_DENSE_BLOCK 64
#define GRID_DENSE_SHARED_NUM 1
#define GRID_DENSE_SHARED_DEN 3

// Cross-level rows whose starts are looked up together (grid_cross_pairs): a row's start is a
// load of the cell index (or a search of the row index) and then of its keys, likely cache
// misses both; looked up one row at a time, each waited for the last.
#define GRID_ROW_BATCH 32

// Whether the boxes [b, e) are crowded (see GRID_DENSE_BLOCK); always true when forced (tests).
static inline bool grid_block_crowded(bool always, const uint32_t *keys, size_t b, size_t e) {
    if (always) return true;
    unsigned shared = 0;
    for (size_t k = b + 1; k < e; ++k) shared += keys[k] == keys[k - 1];
    return (size_t)shared * GRID_DENSE_SHARED_DEN >= (e - b) * GRID_DENSE_SHARED_NUM;
}

// Same-level pairs, 2D: box p meets the rest of its cell and the next cell (keys K, K+1, after
// p) and the three cells of the next row (keys K+S-1 .. K+S+1), found by a cursor. Boxes
// [p0, p1) of the level; crowded blocks of them through the kernels' pairs2 (same pairs, same
// order).
static bp_status grid_level_pairs2(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, bp_sink *sink,
                                   uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->sorted.boxes;
    const uint32_t *BP_RESTRICT ids = g->sorted.perm;
    const uint32_t sx = L->kstride[1];
    size_t c1 = p0 < p1 ? grid_cursor_at(g, L, p0, keys[p0] + sx - 1) : p0;
    const bool dense = bp_sink_split(sink) == 0 && g->dense.k;
    uint64_t c = 0;
    for (size_t p = p0; p < p1;) {
        const size_t pe = p1 - p > GRID_DENSE_BLOCK ? p + GRID_DENSE_BLOCK : p1;
        if (dense && grid_block_crowded(g->dense.always, keys, p, pe)) {
            bp_status st = g->dense.k->pairs2(g, L, p, pe, &c1, sink, &c);
            if (st != BP_OK) return st;
            p = pe;
            continue;
        }
        for (; p < pe; ++p) {
            const uint32_t K = keys[p];
            const grid_probe pr = grid_probe_make(bx + 4 * p, 2);
            bp_status st;
            size_t j = p + 1;
            for (;;) {
                st = grid_try2(keys, bx, ids, &pr, p, j, K + 1, sink, &c);
                if (st != BP_OK) return st;
                st = grid_try2(keys, bx, ids, &pr, p, j + 1, K + 1, sink, &c);
                if (st != BP_OK) return st;
                if (BP_LIKELY(keys[j + 1] > K + 1)) break;
                j += 2;
            }
            const uint32_t lo = K + sx - 1, hi = K + sx + 1;
            c1 = grid_advance(keys, c1, lo);
            for (j = c1;; j += 3) {
                st = grid_try2(keys, bx, ids, &pr, p, j, hi, sink, &c);
                if (st != BP_OK) return st;
                st = grid_try2(keys, bx, ids, &pr, p, j + 1, hi, sink, &c);
                if (st != BP_OK) return st;
                st = grid_try2(keys, bx, ids, &pr, p, j + 2, hi, sink, &c);
                if (st != BP_OK) return st;
                if (BP_LIKELY(keys[j + 2] > hi)) break;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// The 3D same-level runs past a box's own cell: the key offsets of the next row and of the
// previous, same and next row of the next plane, and a cursor into each at box p0.
static void grid_runs3_start(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, uint32_t off[4],
                             size_t cur[4]) {
    const uint32_t sx = L->kstride[1], sxy = L->kstride[2];
    off[0] = sx;
    off[1] = sxy - sx;
    off[2] = sxy;
    off[3] = sxy + sx;
    for (int r = 0; r < 4; ++r) cur[r] = p0 < p1 ? grid_cursor_at(g, L, p0, g->keys[p0] + off[r] - 1) : p0;
}

// Functions whose loops are specialised on a constant `stops` (with and without the test).
#define GRID_SPECIALISED __attribute__((always_inline)) static inline

// Same-level pairs, 3D: the 13 forward neighbours are four runs of three consecutive keys
// (next row; previous, same and next row of the next plane) besides the next cell. Boxes
// [p0, p1) of the level; crowded blocks through the kernels' pairs3.
GRID_SPECIALISED bp_status grid_level_pairs3_as(const bp_grid *g, const grid_level *L, size_t p0, size_t p1,
                                               bp_sink *sink, uint64_t *checks, const bool stops) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->sorted.boxes;
    const uint32_t *BP_RESTRICT ids = g->sorted.perm;
    uint32_t off[4];
    size_t cur[4];
    grid_runs3_start(g, L, p0, p1, off, cur);
    const bool dense = bp_sink_split(sink) == 0 && g->dense.k;
    const int stop = stops ? L->kax[0] : -1;  // the runs are along rows
    uint64_t c = 0;
    for (size_t p = p0; p < p1;) {
        const size_t pe = p1 - p > GRID_DENSE_BLOCK ? p + GRID_DENSE_BLOCK : p1;
        if (dense && grid_block_crowded(g->dense.always, keys, p, pe)) {
            bp_status st = g->dense.k->pairs3(g, L, p, pe, cur, sink, &c);
            if (st != BP_OK) return st;
            p = pe;
            continue;
        }
        for (; p < pe; ++p) {
            const uint32_t K = keys[p];
            const grid_probe pr = grid_probe_make(bx + 6 * p, 3);
            const grid_stop sp = grid_stop_make(bx + 6 * p, 3, stop);
            bp_status st;
            size_t j = p + 1;
            for (;;) {
                st = grid_try3(keys, bx, ids, &pr, &sp, p, j, K + 1, sink, &c, stops);
                if (st != BP_OK) return st;
                st = grid_try3(keys, bx, ids, &pr, &sp, p, j + 1, K + 1, sink, &c, stops);
                if (st != BP_OK) return st;
                if (BP_LIKELY(!grid_goes3(keys, bx, j + 1, K + 1, &sp, stops))) break;
                j += 2;
            }
            for (int r = 0; r < 4; ++r) {
                const uint32_t lo = K + off[r] - 1, hi = K + off[r] + 1;
                const size_t q = cur[r] = grid_advance(keys, cur[r], lo);
                for (j = q;; j += 3) {
                    st = grid_try3(keys, bx, ids, &pr, &sp, p, j, hi, sink, &c, stops);
                    if (st != BP_OK) return st;
                    st = grid_try3(keys, bx, ids, &pr, &sp, p, j + 1, hi, sink, &c, stops);
                    if (st != BP_OK) return st;
                    st = grid_try3(keys, bx, ids, &pr, &sp, p, j + 2, hi, sink, &c, stops);
                    if (st != BP_OK) return st;
                    if (BP_LIKELY(!grid_goes3(keys, bx, j + 2, hi, &sp, stops))) break;
                }
            }
        }
    }
    *checks += c;
    return BP_OK;
}

static bp_status grid_level_pairs3(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, bp_sink *sink,
                                   uint64_t *checks) {
    return g->sorted.xsorted ? grid_level_pairs3_as(g, L, p0, p1, sink, checks, true)
                             : grid_level_pairs3_as(g, L, p0, p1, sink, checks, false);
}

// Same-level pairs, 3D, where boxes are far smaller than the cells on some axes (levels of long
// cells: sticks 3D, 0.8 in cells of 4; level 0 of crowds of small boxes, G->small: sizes 3D):
// the runs of grid_level_pairs3, each cut to the cells the box can reach. The cell after its
// own is needed only when the box reaches into it, and the cell before only when a box of the
// level starting there can reach this one (the level's largest extent, rounded up:
// grid_measure_extent). Skipped cells hold no box that overlaps, so the pairs and their order
// are those of grid_level_pairs3 (checks of a frame, 100,000 boxes: sticks 3D 9.35M -> 7.88M,
// sizes 3D 128.8M -> 104.6M). Per box it costs eight cell coordinates: on sparse cells the
// cursor loop is faster (level 0 of `mixed` 3D: 8.7 -> 17.6 ms), and where boxes are as large
// as the cells they reach their neighbours anyway (`line` 3D: slower).
GRID_SPECIALISED bp_status grid_level_pairs3_reach_as(const bp_grid *g, int l, size_t p0, size_t p1, bp_sink *sink,
                                                     uint64_t *checks, const bool stops) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->sorted.boxes;
    const uint32_t *BP_RESTRICT ids = g->sorted.perm;
    uint32_t off[4];
    size_t cur[4];
    grid_runs3_start(g, L, p0, p1, off, cur);
    const bool dense = bp_sink_split(sink) == 0 && g->dense.k;
    const int stop = stops ? L->kax[0] : -1;  // the runs are along rows
    uint64_t c = 0;
    for (size_t p = p0; p < p1; ++p) {
        const float *a = bx + 6 * p;  // (min, -max)
        const uint32_t K = keys[p];
        // Per key axis: the box reaches the next cell (up); a box of the level that starts in
        // the cell before can reach this one (down: no run looks at the plane before).
        bool up[3], down[2];
        for (int k = 0; k < 3; ++k) {
            const int ax = L->kax[k], sh = L->shift[ax];
            const int64_t c0 = grid_coord(a[ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh;
            up[k] = (grid_coord(-a[3 + ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh) > c0;
            if (k < 2) down[k] = (grid_coord(a[ax] - g->sorted.ext[l][ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh) < c0;
        }
        // The runs: the rest of the own cell (and the next), then the next row and the three
        // rows of the next plane, each over the cells before, at and after the box's.
        const bool need[4] = {up[1], down[1] && up[2], up[2], up[1] && up[2]};
        const uint32_t hi0 = up[0] ? 1u : 0u;
        size_t start[5];
        uint32_t lim[5];
        size_t nr = 0;
        start[nr] = p + 1;
        lim[nr++] = K + hi0;
        for (int r = 0; r < 4; ++r) {
            size_t q = cur[r] = grid_advance(keys, cur[r], K + off[r] - 1);
            if (!need[r]) continue;
            if (!down[0]) q = grid_advance(keys, q, K + off[r]);
            start[nr] = q;
            lim[nr++] = K + off[r] + hi0;
        }
        // The box's runs in one call, its probe built once (with a call and a probe per run,
        // level 0 of `sizes` 3D 100,000 took 16.3M cycles in this pass, 14.0M so).
        if (dense) {
            bp_status st = g->dense.k->runs(g, a, ids[p], start, lim, nr, stop, sink, &c);
            if (st != BP_OK) return st;
            continue;
        }
        const grid_probe pr = grid_probe_make(a, 3);
        const grid_stop sp = grid_stop_make(a, 3, stop);
        for (size_t r = 0; r < nr; ++r)
            for (size_t j = start[r]; grid_goes3(keys, bx, j, lim[r], &sp, stops); ++j) {
                ++c;
                if (grid_hit3(&pr, bx + 6 * j)) {
                    bp_status st = bp_sink_push(sink, ids[p], ids[j]);
                    if (st != BP_OK) return st;
                }
            }
    }
    *checks += c;
    return BP_OK;
}

static bp_status grid_level_pairs3_reach(const bp_grid *g, int l, size_t p0, size_t p1, bp_sink *sink,
                                        uint64_t *checks) {
    return g->sorted.xsorted ? grid_level_pairs3_reach_as(g, l, p0, p1, sink, checks, true)
                             : grid_level_pairs3_reach_as(g, l, p0, p1, sink, checks, false);
}

// Whether a region query of level L over cells [lo, hi] takes each plane's rows as one run of
// keys (grid_cross_pairs).
static bool grid_merge_rows(const grid_level *L, int d, const int64_t lo[3], const int64_t hi[3]) {
    const int a1 = L->kax[1];
    return hi[a1] > lo[a1] && grid_merge_width(L, d, (uint64_t)(hi[L->kax[0]] - lo[L->kax[0]] + 1));
}

// The next nr runs of a region query of level l over cells [lo, hi] (span rows each), from row
// yz[0] of plane yz[1] (moved past them): run r from sorted position start[r] while keys <=
// last[r]. Every run's start first: independent loads of the index, then prefetches of its first
// keys and boxes, all in flight at once.
static inline void grid_row_starts(const bp_grid *g, int l, const int64_t lo[3], const int64_t hi[3], uint64_t span,
                                   int64_t yz[2], uint64_t nr, size_t *start, uint32_t *last) {
    const grid_level *L = &g->geom.lv[l];
    const int a0 = L->kax[0], a1 = L->kax[1];
    const size_t w = (size_t)(2 * g->geom.dim);
    int64_t y = yz[0], z = yz[1];
    for (uint64_t r = 0; r < nr; ++r) {
        const uint64_t plane = L->base + (uint64_t)(z + 1) * L->kstride[2] + (uint64_t)(lo[a0] + 1);
        const uint32_t klo = (uint32_t)(plane + (uint64_t)(y + 1) * L->kstride[1]);
        y += (int64_t)span;
        last[r] = (uint32_t)(plane + (uint64_t)y * L->kstride[1]) + (uint32_t)(hi[a0] - lo[a0]);
        start[r] = grid_lower_bound(g, l, klo);
        GRID_PREFETCH_READ(g->keys + start[r]);
        GRID_PREFETCH_READ(g->sorted.boxes + w * start[r]);
        if (y > hi[a1]) {
            y = lo[a1];
            ++z;
        }
    }
    yz[0] = y;
    yz[1] = z;
}

// Cross-level pairs: each box of occupied level mo (boxes [p0, p1)) against the levels it
// queries (grid_plan_cross), as a region query of its own box: each pair of boxes in two levels
// is found from the one whose level queries the other's, once.
static bp_status grid_cross_pairs(const bp_grid *g, int mo, size_t p0, size_t p1, bp_sink *sink, uint64_t *checks) {
    const grid_geom *G = &g->geom;
    const int d = G->dim;
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->sorted.boxes;
    const uint32_t *BP_RESTRICT ids = g->sorted.perm;
    // Rows of boxes sorted by key, as in the same-level pass: the SIMD runs where there.
    const bool dense = bp_sink_split(sink) == 0 && g->dense.k;
    uint64_t c = 0;
    for (size_t p = p0; p < p1; ++p) {
        const float *a = bx + (size_t)(2 * d) * p;
        const grid_probe pr = grid_probe_make(a, d);
        // The cells of the box itself (its stored max is negated).
        float box[6];
        for (int e = 0; e < d; ++e) {
            box[e] = a[e];
            box[d + e] = -a[d + e];
        }
        int64_t c0[3], c1[3];
        grid_cells(G, box, c0, c1);
        const bool planned = g->sorted.occupied_count <= GRID_PLAN_MAX;
        const int t0 = planned ? g->sorted.toff[mo] : 0, t1 = planned ? g->sorted.toff[mo + 1] : mo;
        for (int t = t0; t < t1; ++t) {
            const int l = planned ? g->sorted.targets[t] : g->sorted.occupied[t];
            const grid_level *L = &G->lv[l];
            int64_t lo[3], hi[3];
            grid_region_near(g, l, box, c0, c1, lo, hi);
            const int a1 = L->kax[1], a2 = L->kax[2];
            const uint64_t rows = (uint64_t)(hi[a1] - lo[a1] + 1) * (uint64_t)(hi[a2] - lo[a2] + 1);
            if (2 * rows >= L->end - L->begin) {
                // Rows about as many as boxes (a box spanning a huge extent, or a level of a few
                // boxes): a search per row would cost in proportion to the extent (issue #17), a
                // scan of the level to its boxes, never more than brute force.
                if (dense && (L->end - L->begin >= GRID_DENSE_ROW_MIN || g->dense.always)) {
                    bp_status st = g->dense.k->run(g, a, ids[p], L->begin, L->end, GRID_SENTINEL - 1, -1, sink, &c);
                    if (st != BP_OK) return st;
                    continue;
                }
                for (size_t j = L->begin; j < L->end; ++j) {
                    const float *b = bx + (size_t)(2 * d) * j;
                    const unsigned hit = (unsigned)(d == 2 ? grid_hit2(&pr, b) : grid_hit3(&pr, b));
                    bp_status st = bp_sink_room(sink, 1);
                    if (BP_UNLIKELY(st != BP_OK)) return st;
                    bp_sink_put(sink, ids[p], ids[j], hit);
                }
                c += L->end - L->begin;
                continue;
            }
            // A plane's rows as one run of keys, from its first row's start to its last row's
            // end, when the boxes that run passes over outside the region (the rest of each row)
            // are few: a box far larger than the level's cells meets thousands of rows of a few
            // boxes each, and a search per row cost more than testing those boxes (grid_merge_rows).
            const uint64_t span = grid_merge_rows(L, d, lo, hi) ? (uint64_t)(hi[a1] - lo[a1] + 1) : 1;
            const uint64_t runs = rows / span;
            // Runs along one row of sorted cells stop at the first box past the query's max.
            const int stop = g->sorted.xsorted && span == 1 ? L->kax[0] : -1;
            const grid_stop sp = grid_stop_make(a, d, stop);
            // Rows in batches: first every row's start (grid_row_starts), then the rows in
            // order, plane axis outer and row axis inner.
            int64_t yz[2] = {lo[a1], lo[a2]};
            for (uint64_t r0 = 0; r0 < runs; r0 += GRID_ROW_BATCH) {
                const uint64_t nr = runs - r0 < GRID_ROW_BATCH ? runs - r0 : GRID_ROW_BATCH;
                size_t start[GRID_ROW_BATCH];
                uint32_t last[GRID_ROW_BATCH];
                grid_row_starts(g, l, lo, hi, span, yz, nr, start, last);
                // A batch of short rows only (long boxes' queries into levels of a few boxes a
                // cell: `plates`, `sticks`) is tested here, box by box, as the kernel would
                // (grid_row_long): its call and probe cost more than those few boxes.
                bool steps = dense && g->dense.always;
                for (uint64_t r = 0; r < nr && dense && !steps; ++r)
                    steps = grid_row_long(keys, start[r], last[r]);
                if (steps) {
                    bp_status st = g->dense.k->rows(g, a, ids[p], start, last, (size_t)nr, stop, sink, &c);
                    if (st != BP_OK) return st;
                    continue;
                }
                for (uint64_t r = 0; r < nr; ++r) {
                    bp_status st = stop >= 0 ? grid_row_boxes(g, &pr, &sp, ids[p], start[r], last[r], sink, &c, true)
                                             : grid_row_boxes(g, &pr, &sp, ids[p], start[r], last[r], sink, &c, false);
                    if (st != BP_OK) return st;
                }
            }
        }
    }
    *checks += c;
    return BP_OK;
}


// A box's queries of the other levels cost many times its own level's pass (row lookups in
// several levels): each counts as this many items when the pair pass is cut into tasks, so that
// the few large boxes of a scene like `mixed` spread over several tasks instead of one (with 2
// workers one task held most of the cross-level work: mixed at 1,000,000 took 22.3 ms a frame
// with weight 1, 19.3 with 16, 18.4 with 64, 32.5 with one worker). Which box goes to which
// task does not change the pairs or their order.
#define GRID_CROSS_WEIGHT 64

// The pair passes as one list of items: per occupied level, its boxes against their own level,
// then (when it queries others) against the levels it queries; a task's part may span several.
typedef struct grid_pairs_job {
    const bp_grid *g;
    int nseg;
    size_t off[2 * GRID_MAX_LEVELS + 1];  // items: a level pass's boxes, GRID_CROSS_WEIGHT per cross box
    int level[2 * GRID_MAX_LEVELS];
    int occ[2 * GRID_MAX_LEVELS];  // the level's place among the occupied ones
    bool cross[2 * GRID_MAX_LEVELS];
} grid_pairs_job;

static bp_status grid_pairs_part(void *user, size_t v0, size_t v1, uint32_t worker, bp_sink *sink,
                                 uint64_t *checks) {
    (void)worker;
    const grid_pairs_job *j = user;
    const bp_grid *g = j->g;
    for (int s = 0; s < j->nseg; ++s) {
        if (j->off[s + 1] <= v0 || j->off[s] >= v1) continue;
        const grid_level *L = &g->geom.lv[j->level[s]];
        // Box b of the segment owns items [off + b w, off + (b + 1) w): a task takes the boxes
        // whose first item is in [v0, v1), so every box is taken once.
        const size_t w = j->cross[s] ? GRID_CROSS_WEIGHT : 1;
        const size_t a0 = v0 > j->off[s] ? v0 - j->off[s] : 0;
        const size_t a1 = (v1 < j->off[s + 1] ? v1 : j->off[s + 1]) - j->off[s];
        const size_t p0 = L->begin + (a0 + w - 1) / w, p1 = L->begin + (a1 + w - 1) / w;
        if (p0 >= p1) continue;
        bp_status st;
        if (j->cross[s]) st = grid_cross_pairs(g, j->occ[s], p0, p1, sink, checks);
        else if (g->geom.dim == 2) st = grid_level_pairs2(g, L, p0, p1, sink, checks);
        else if ((L->long_cells || (j->level[s] == 0 && g->geom.small)) && g->sorted.ext_ok[j->level[s]])
            st = grid_level_pairs3_reach(g, j->level[s], p0, p1, sink, checks);
        else st = grid_level_pairs3(g, L, p0, p1, sink, checks);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

bp_status bp_grid_sorted_pairs(const bp_grid *g, bp_sink *sink, uint64_t *checks) {
    const grid_sorted *s = &g->sorted;
    grid_pairs_job pj;
    memset(&pj, 0, sizeof pj);
    pj.g = g;
    size_t items = 0;
    const bool planned = s->occupied_count <= GRID_PLAN_MAX;
    for (int o = 0; o < s->occupied_count; ++o) {
        const int l = s->occupied[o];
        const grid_level *L = &g->geom.lv[l];
        const bool queries = planned ? s->toff[o + 1] > s->toff[o] : o > 0;
        for (int cross = 0; cross < 1 + queries; ++cross) {
            pj.off[pj.nseg] = items;
            pj.level[pj.nseg] = l;
            pj.occ[pj.nseg] = o;
            pj.cross[pj.nseg++] = cross;
            items += (L->end - L->begin) * (cross ? GRID_CROSS_WEIGHT : 1);
        }
    }
    pj.off[pj.nseg] = items;
    return bp_par_pairs(g->base.ctx, sink, items, BP_PAR_GRAIN_PAIRS, grid_pairs_part, &pj, checks);
}

// A query's traversal (src/query.h): per occupied level, the cells of the window, row by row
// (or the whole level when it has fewer boxes than the window has rows).
bp_status bp_grid_sorted_visit(const bp_grid *g, const bp_frame *f, bp_visitor *q) {
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    if (g->n != f->n || !g->ordered) return BP_ERR_NO_BOXES;
    float qb[6];
    for (int a = 0; a < d; ++a) {
        qb[a] = q->lo[a];
        qb[d + a] = q->hi[a];
    }
    int64_t c0[3], c1[3];
    grid_cells(G, qb, c0, c1);
    const uint32_t *keys = g->keys, *ids = g->sorted.perm;
    for (int o = 0; o < g->sorted.occupied_count; ++o) {
        const int l = g->sorted.occupied[o];
        const grid_level *L = &G->lv[l];
        int64_t lo[3], hi[3];
        grid_region_near(g, l, qb, c0, c1, lo, hi);
        const int a0 = L->kax[0], a1 = L->kax[1], a2 = L->kax[2];
        const uint64_t rows = (uint64_t)(hi[a1] - lo[a1] + 1) * (uint64_t)(hi[a2] - lo[a2] + 1);
        if (rows >= L->end - L->begin) {
            // More rows than boxes: scanning the level is cheaper than a search per row.
            for (size_t j = L->begin; j < L->end; ++j) {
                bp_status st = q->visit(q, ids[j]);
                if (st != BP_OK) return st;
            }
            continue;
        }
        for (int64_t z = lo[a2]; z <= hi[a2]; ++z) {
            for (int64_t y = lo[a1]; y <= hi[a1]; ++y) {
                const uint32_t klo = (uint32_t)(L->base + (uint64_t)(z + 1) * L->kstride[2] +
                                                (uint64_t)(y + 1) * L->kstride[1] + (uint64_t)(lo[a0] + 1));
                const uint32_t khi = klo + (uint32_t)(hi[a0] - lo[a0]);
                for (size_t j = grid_lower_bound(g, l, klo); keys[j] <= khi; ++j) {
                    bp_status st = q->visit(q, ids[j]);
                    if (st != BP_OK) return st;
                }
            }
        }
    }
    return BP_OK;
}
