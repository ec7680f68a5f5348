// The linear quadtree's pairs (quadtree.h), over the sorted boxes and their runs (cells):
//  - strict placement: one pass over the runs with an explicit stack of ancestor cells (the
//    seed's walk, without recursion), where each cell only inherits the ancestor boxes that reach
//    into it, so a box straddling a boundary near the root is not tested against everything below
//    it; a subtree of at most QT_BUCKET boxes is tested as one bucket, and a crowded cell is swept;
//  - loose placement: every cell against the subtrees of its 3^dim neighbours at its own level
//    (contiguous runs found by binary search).
#include <math.h>

#include "par.h"
#include "quadtree.h"
#include "radix_sort.h"
#include "sort.h"
#include "sweep_kernel.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// The active arrays (and a crowded cell's sweep scratch) are reserved up front for the larger of
// last frame's peak and min(n, this) entries (bp_grow at least doubles), so that warm frames do
// not allocate.
#define QT_ACTIVE_FLOOR 4096
// Strict walk: a cell whose whole subtree holds at most this many boxes is one bucket, all
// pairs tested directly (4-wide in 2D); measured on the scenes (docs/quadtree.md).
// A cell whose own boxes times (own + inherited) exceeds this is swept instead of tested
// pair by pair.
#define QT_SWEEP_WORK 4096.0
#ifndef QT_BUCKET
#define QT_BUCKET 32
#endif

#if defined(__GNUC__)
#define QT_INLINE inline __attribute__((always_inline))
#else
#define QT_INLINE inline
#endif

void bp_qt_walk_mem_free(bp_context *ctx, qt_walk_mem *w) {
    BP_RELEASE(ctx, w->act_box, w->act_box_cap);
    BP_RELEASE(ctx, w->act_id, w->act_id_cap);
    BP_RELEASE(ctx, w->act_rng, w->act_rng_cap);
    BP_RELEASE(ctx, w->st_end, w->st_end_cap);
    BP_RELEASE(ctx, w->st_a0, w->st_a0_cap);
    BP_RELEASE(ctx, w->st_a1, w->st_a1_cap);
    BP_RELEASE(ctx, w->sw_keys, w->sw_keys_cap);
    BP_RELEASE(ctx, w->sw_vals, w->sw_vals_cap);
    BP_RELEASE(ctx, w->sw_tmp_keys, w->sw_tmp_keys_cap);
    BP_RELEASE(ctx, w->sw_tmp_vals, w->sw_tmp_vals_cap);
    BP_RELEASE(ctx, w->sw_soa, w->sw_soa_cap);
}

// Boxes in the sorted and active arrays are stored as min[dim] then -max[dim]: box b overlaps
// box a exactly when every float of b is <= the matching float of a's "reach" (max[dim] then
// -min[dim]), one packed comparison in 2D. Negation is exact, so the closed rule is kept.
#if defined(__SSE2__)
typedef __m128 qt_reach2;
static inline qt_reach2 qt_reach2_of(const float *a) {
    __m128 v = _mm_loadu_ps(a);
    return _mm_sub_ps(_mm_setzero_ps(), _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
}
static inline bool qt_hit2(qt_reach2 r, const float *b) {
    return _mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(b), r)) == 15;
}
#else
typedef struct {
    float v[4];
} qt_reach2;
static inline qt_reach2 qt_reach2_of(const float *a) {
    qt_reach2 r = {{-a[2], -a[3], -a[0], -a[1]}};
    return r;
}
static inline bool qt_hit2(qt_reach2 r, const float *b) {
    return (b[0] <= r.v[0]) & (b[1] <= r.v[1]) & (b[2] <= r.v[2]) & (b[3] <= r.v[3]);
}
#endif

static inline bool qt_hit3(const float *a, const float *b) {
    return (b[0] <= -a[3]) & (b[1] <= -a[4]) & (b[2] <= -a[5]) & (a[0] <= -b[3]) & (a[1] <= -b[4]) & (a[2] <= -b[5]);
}

// Box `a` (id ia) against sorted positions [j0, j1).
static inline bp_status qt_row(const bp_quadtree *q, int d, const float *a, uint32_t ia, size_t j0, size_t j1,
                               bp_sink *sink) {
    const float *BP_RESTRICT sb = q->sb;
    const uint32_t *BP_RESTRICT ids = q->ids;
    if (d == 2) {
        const qt_reach2 r = qt_reach2_of(a);
        for (size_t j = j0; j < j1; ++j)
            if (BP_UNLIKELY(qt_hit2(r, sb + 4 * j))) {
                bp_status st = bp_sink_push(sink, ia, ids[j]);
                if (st != BP_OK) return st;
            }
    } else {
        for (size_t j = j0; j < j1; ++j)
            if (BP_UNLIKELY(qt_hit3(a, sb + 6 * j))) {
                bp_status st = bp_sink_push(sink, ia, ids[j]);
                if (st != BP_OK) return st;
            }
    }
    return BP_OK;
}

// Every pair among sorted positions [p0, p1) (one cell's boxes).
static bp_status qt_pairs_within(const bp_quadtree *q, size_t p0, size_t p1, bp_sink *sink, uint64_t *checks) {
    const int d = q->dim;
    const size_t s = (size_t)(2 * d);
    const size_t c = p1 - p0;
    *checks += (uint64_t)c * (c - 1) / 2;
    for (size_t i = p0; i + 1 < p1; ++i) {
        bp_status st = qt_row(q, d, q->sb + s * i, q->ids[i], i + 1, p1, sink);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Sorted positions [p0, p1) against sorted positions [c0, c1) (different cells).
static bp_status qt_pairs_across(const bp_quadtree *q, size_t p0, size_t p1, size_t c0, size_t c1, bp_sink *sink,
                                 uint64_t *checks) {
    const int d = q->dim;
    const size_t s = (size_t)(2 * d);
    *checks += (uint64_t)(p1 - p0) * (c1 - c0);
    for (size_t i = p0; i < p1; ++i) {
        bp_status st = qt_row(q, d, q->sb + s * i, q->ids[i], c0, c1, sink);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Sort-and-sweep of one crowded cell: its own boxes (sorted positions [p0, p1)) and the
// inherited boxes (active entries [e0, e1)), along the axis of fewest candidates (sort.h), by the
// shared sweep (sweep_kernel.h) with the inherited rows marked: their pairs with each other were
// tested higher up. Against a scalar sweep of the boxes through the sorted order (bench, quadtree,
// 100,000 boxes, medians of three alternate runs): `line` 41 -> 27 ms, `sticks` 39 -> 25 ms,
// `sizes` 22 -> 15 ms.
static bp_status qt_sweep_cell(const bp_quadtree *q, qt_walk_mem *wm, int d, size_t e0, size_t e1, size_t p0, size_t p1, bp_sink *sink,
                               uint64_t *checks) {
    bp_context *ctx = q->base.ctx;
    const size_t s = (size_t)(2 * d);
    const size_t fa = e1 - e0, m = fa + (p1 - p0), st = m + BP_SWEEP_PAD;
    if (st > wm->sw_peak) wm->sw_peak = st;
    BP_RESERVE_DISCARD(ctx, wm->sw_keys, wm->sw_keys_cap, st);
    BP_RESERVE_DISCARD(ctx, wm->sw_vals, wm->sw_vals_cap, st);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_keys, wm->sw_tmp_keys_cap, st);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_vals, wm->sw_tmp_vals_cap, st);
    BP_RESERVE_DISCARD(ctx, wm->sw_soa, wm->sw_soa_cap, st * s);
    const float *act = wm->act_box, *sb = q->sb;
#define QT_SW_BOX(v) ((v) < fa ? act + (e0 + (v)) * s : sb + (p0 + (v) - fa) * s)
#define QT_SW_ID(v) ((v) < fa ? wm->act_id[e0 + (v)] : q->ids[p0 + (v) - fa])
    double sum[3] = {0, 0, 0}, sq[3] = {0, 0, 0}, size[3] = {0, 0, 0}, cost[3];
    for (size_t v = 0; v < m; ++v) {
        const float *b = QT_SW_BOX(v);
        for (int a = 0; a < d; ++a) {
            double ctr = 0.5 * ((double)b[a] - (double)b[d + a]);
            sum[a] += ctr;
            sq[a] += ctr * ctr;
            size[a] -= (double)b[d + a] + (double)b[a];
        }
    }
    for (int a = 0; a < d; ++a) cost[a] = bp_axis_cost(size[a], bp_axis_spread((double)m, sum[a], sq[a]));
    const int axis = bp_axis_choose(cost, d, -1);
    for (size_t v = 0; v < m; ++v) {
        wm->sw_keys[v] = bp_float_key(QT_SW_BOX(v)[axis]);
        wm->sw_vals[v] = (uint32_t)v;
    }
    bp_radix_sort32(wm->sw_keys, wm->sw_vals, wm->sw_tmp_keys, wm->sw_tmp_vals, m, 32);
    // The rows in sorted order: min and max on the axis, then on the others (the sorted boxes
    // hold -max), +inf past the last; each row's id, and ~0u on the inherited ones.
    float *soa = wm->sw_soa;
    uint32_t *idx = wm->sw_tmp_vals, *side = wm->sw_tmp_keys;
    const int other[2] = {axis == 0 ? 1 : 0, axis == 2 ? 1 : 2};
    for (size_t k = 0; k < m; ++k) {
        const size_t v = wm->sw_vals[k];
        const float *b = QT_SW_BOX(v);
        soa[k] = b[axis];
        soa[st + k] = -b[d + axis];
        for (int o = 0; o < d - 1; ++o) {
            soa[(size_t)(2 + 2 * o) * st + k] = b[other[o]];
            soa[(size_t)(3 + 2 * o) * st + k] = -b[d + other[o]];
        }
        idx[k] = QT_SW_ID(v);
        side[k] = v < fa ? ~0u : 0u;
    }
    for (size_t k = m; k < st; ++k) {
        idx[k] = 0;
        side[k] = 0;
        for (size_t x = 0; x < s; ++x) soa[x * st + k] = INFINITY;
    }
#undef QT_SW_BOX
#undef QT_SW_ID
    return bp_sweep_soa_rows_sided(soa, m, st, d, idx, side, 0, m, sink, checks);
}

// The walk's arrays as locals, loaded again after they grow: the active entries (boxes, ids,
// integer cell ranges) and, per stack entry, the end of its cell's finest-code range and its
// segment [a0, a1) of the active entries.
typedef struct qt_act {
    float *box;
    uint32_t *id, *rng;
    uint64_t *end;
    uint32_t *a0, *a1;
} qt_act;

static inline qt_act qt_act_of(const qt_walk_mem *wm) {
    const qt_act A = {wm->act_box, wm->act_id, wm->act_rng, wm->st_end, wm->st_a0, wm->st_a1};
    return A;
}

// Reserves the walk's arrays for a cell: `need` active entries and a stack of depth + 1.
static bp_status qt_walk_reserve(bp_context *ctx, qt_walk_mem *wm, size_t s, size_t need, size_t depth) {
    BP_RESERVE(ctx, wm->act_box, wm->act_box_cap, need * s);
    BP_RESERVE(ctx, wm->act_id, wm->act_id_cap, need);
    BP_RESERVE(ctx, wm->act_rng, wm->act_rng_cap, need * s);
    BP_RESERVE(ctx, wm->st_end, wm->st_end_cap, depth + 1);
    BP_RESERVE(ctx, wm->st_a0, wm->st_a0_cap, depth + 1);
    BP_RESERVE(ctx, wm->st_a1, wm->st_a1_cap, depth + 1);
    return BP_OK;
}

// Room for a cell: `need` active entries and a stack of depth + 1 (*A loaded again if they grew).
static QT_INLINE bp_status qt_walk_room(bp_context *ctx, qt_walk_mem *wm, size_t s, size_t need, size_t depth,
                                        qt_act *A) {
    if (need > wm->act_peak) wm->act_peak = need;
    if (need * s <= wm->act_box_cap && need <= wm->act_id_cap && need * s <= wm->act_rng_cap &&
        depth + 1 <= wm->st_end_cap && depth + 1 <= wm->st_a0_cap && depth + 1 <= wm->st_a1_cap)
        return BP_OK;
    const bp_status st = qt_walk_reserve(ctx, wm, s, need, depth);
    *A = qt_act_of(wm);
    return st;
}

// The finest cells [c0, c1] of the cell whose origin has finest code `code`, at level lvl.
static QT_INLINE void qt_cell_span(const int d, unsigned L, uint64_t code, unsigned lvl, uint32_t *c0, uint32_t *c1) {
    qt_decode(d, code, c0);
    for (int a = 0; a < d; ++a) c1[a] = c0[a] + (((uint32_t)1 << (L - lvl)) - 1u);
}

// Copies the active entries [a0, a1) that reach into cells [c0, c1] to w onwards (above the
// parent's segment); returns the end of the copy.
static QT_INLINE size_t qt_inherit(const qt_act *A, const int d, size_t a0, size_t a1, size_t w, const uint32_t *c0,
                                   const uint32_t *c1) {
    const size_t s = (size_t)(2 * d);
    float *act_box = A->box;
    uint32_t *act_id = A->id, *act_rng = A->rng;
    for (size_t e = a0; e < a1; ++e) {
        const uint32_t *rg = act_rng + e * s;
        bool meets = true;
        for (int a = 0; a < d; ++a) meets &= (rg[a] <= c1[a]) & (c0[a] <= rg[d + a]);
        if (!meets) continue;
        memcpy(act_box + w * s, act_box + e * s, s * sizeof *act_box);
        memcpy(act_rng + w * s, rg, s * sizeof *rg);
        act_id[w++] = act_id[e];
    }
    return w;
}

// Pushes a cell's own boxes (sorted positions [p0, p1)) as the stack entry `depth` whose segment
// begins at a0 with the inherited entries up to w: the children inherit them all. Ends at `end`.
static QT_INLINE void qt_push(const bp_quadtree *q, const qt_act *A, const int d, size_t depth, uint64_t end,
                              size_t a0, size_t w, size_t p0, size_t p1) {
    const size_t s = (size_t)(2 * d);
    float *act_box = A->box;
    uint32_t *act_id = A->id, *act_rng = A->rng;
    const float *sb = q->sb;
    for (size_t i = p0; i < p1; ++i) {
        memcpy(act_box + w * s, sb + i * s, s * sizeof *sb);
        qt_range_sorted(q, sb + i * s, act_rng + w * s);
        act_id[w++] = q->ids[i];
    }
    A->end[depth] = end;
    A->a0[depth] = (uint32_t)a0;
    A->a1[depth] = (uint32_t)w;
}

// With workers, a task starts the walk at run r0 (one no bucket swallows, qt_in_bucket): the
// stack is rebuilt as the walk from run 0 leaves it there. Those are the occupied strict
// ancestors of r0's cell, each pushed (none is a bucket, each has r0 below it) with the boxes
// of its parent's segment that reach it and then its own, as qt_walk_strict_dim pushes them;
// no pair is tested (the tasks before found them). *depth_out: the stack's depth.
static bp_status qt_walk_prime(const bp_quadtree *q, qt_walk_mem *wm, int d, size_t r0, size_t *depth_out) {
    const size_t s = (size_t)(2 * d);
    const unsigned L = q->levels;
    const uint64_t code0 = qt_key_code(q->run_key[r0]);
    const unsigned lvl0 = qt_key_level(q->run_key[r0]);
    qt_act A = qt_act_of(wm);
    size_t depth = 0;
    for (unsigned lc = 0; lc < lvl0; ++lc) {
        const unsigned sh = (unsigned)d * (L - lc);
        const uint64_t corig = (code0 >> sh) << sh, ckey = (corig << QT_LEVEL_BITS) | lc;
        const size_t r = bp_lower_bound64(q->run_key, 0, r0, ckey);
        if (r >= r0 || q->run_key[r] != ckey) continue;  // no box in that cell itself
        const size_t p0 = q->run_start[r], p1 = q->run_start[r + 1];
        const size_t a0 = depth ? A.a0[depth - 1] : 0, a1 = depth ? A.a1[depth - 1] : 0;
        bp_status st = qt_walk_room(q->base.ctx, wm, s, a1 + (a1 - a0) + (p1 - p0) + 1, depth, &A);
        if (st != BP_OK) return st;
        uint32_t c0[3], c1[3];
        qt_cell_span(d, L, corig, lc, c0, c1);
        const size_t w = qt_inherit(&A, d, a0, a1, a1, c0, c1);
        qt_push(q, &A, d, depth++, corig + ((uint64_t)1 << sh), a1, w, p0, p1);
    }
    *depth_out = depth;
    return BP_OK;
}

// Whether the walk reaches run r inside a bucket begun at an earlier run: some strict ancestor
// of r's cell holds boxes before r's and at most QT_BUCKET in all (its first run then takes the
// whole cell, or a coarser one, as its bucket).
static bool qt_in_bucket(const bp_quadtree *q, size_t r) {
    const int d = q->dim;
    const unsigned L = q->levels;
    const uint64_t code = qt_key_code(q->run_key[r]);
    const unsigned lvl = qt_key_level(q->run_key[r]);
    const size_t p0 = q->run_start[r];
    if (p0 == 0) return false;
    for (unsigned lc = 0; lc < lvl; ++lc) {
        const unsigned sh = (unsigned)d * (L - lc);
        const uint64_t corig = (code >> sh) << sh, ckey = (corig << QT_LEVEL_BITS) | lc;
        if (q->keys[p0 - 1] < ckey) continue;  // nothing of that cell before r
        const uint64_t cend = (corig + ((uint64_t)1 << sh)) << QT_LEVEL_BITS;
        const size_t first = bp_lower_bound64(q->keys, 0, p0, ckey);
        const size_t last = bp_lower_bound64(q->keys, p0, q->n, cend);
        if (last - first <= QT_BUCKET) return true;
    }
    return false;
}

// A bucket: the coarsest cell that holds the run at sorted position p0 (its cell's origin `code`,
// level lvl), starts there (no earlier box in its subtree) and has at most QT_BUCKET boxes in its
// whole subtree. Its boxes are one contiguous range, all tested together, so sparse regions stop
// descending early and dense ones go as deep as they need: the tree adapts without a per-frame
// level rule. Returns whether there is one, with its end *p1 and its cell (*bcode, *blvl).
static QT_INLINE bool qt_bucket(const bp_quadtree *q, const int d, uint64_t code, unsigned lvl, size_t p0, size_t *p1,
                                uint64_t *bcode, unsigned *blvl) {
    const uint64_t *BP_RESTRICT keys = q->keys;
    const size_t n = q->n;
    const unsigned L = q->levels;
    for (unsigned lc = 0; lc <= lvl; ++lc) {
        const unsigned sh = (unsigned)d * (L - lc);
        const uint64_t corig = (code >> sh) << sh;
        if (p0 > 0 && keys[p0 - 1] >= ((corig << QT_LEVEL_BITS) | lc)) continue;
        const uint64_t cend = (corig + ((uint64_t)1 << sh)) << QT_LEVEL_BITS;
        const size_t lim = n - p0 > QT_BUCKET ? p0 + QT_BUCKET : n;
        if (lim < n && keys[lim] < cend) continue;
        *p1 = bp_lower_bound64(keys, p0, lim, cend);
        *bcode = corig;
        *blvl = lc;
        return true;
    }
    return false;
}

// A cell's pairs: its own boxes (sorted positions [p0, p1)) against each other and against the
// inherited entries [top, w) that reach into it.
static QT_INLINE bp_status qt_cell_pairs(const bp_quadtree *q, qt_walk_mem *wm, const qt_act *A, const int d,
                                         size_t top, size_t w, size_t p0, size_t p1, bp_sink *sink, uint64_t *c) {
    const size_t s = (size_t)(2 * d);
    const size_t own = p1 - p0, inherited = w - top;
    // Many boxes in one cell (boxes straddling the planes near the root of an octree, a crowd on
    // a line): one sort-and-sweep instead of all pairs.
    if ((double)own * (double)(own + inherited) > QT_SWEEP_WORK)
        return qt_sweep_cell(q, wm, d, top, w, p0, p1, sink, c);
    if (own > 1) {
        bp_status st = qt_pairs_within(q, p0, p1, sink, c);
        if (st != BP_OK) return st;
    }
    *c += (uint64_t)own * inherited;
    for (size_t e = top; e < w; ++e) {
        bp_status st = qt_row(q, d, A->box + e * s, A->id[e], p0, p1, sink);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Strict placement: the seed's depth-first walk as one pass over the runs. The stack holds the
// occupied ancestors of the current cell; each entry's segment of the active arrays holds every
// box of an ancestor (its own included) that reaches into that ancestor's region. A cell tests its
// boxes against each other and against the part of its parent's segment that reaches into it, so
// a box straddling a line near the root meets only the cells it touches, not everything below.
// `d` is a constant at each call site, so the compiler specialises the loops per dimension.
static QT_INLINE bp_status qt_walk_strict_dim(const bp_quadtree *q, qt_walk_mem *wm, const int d, size_t r_begin,
                                              size_t r_end, bp_sink *sink, uint64_t *checks) {
    const size_t s = (size_t)(2 * d);
    const unsigned L = q->levels;
    const uint64_t *BP_RESTRICT run_key = q->run_key;
    const uint32_t *BP_RESTRICT run_start = q->run_start;
    const size_t nruns = q->nruns;
    size_t depth = 0;
    uint64_t c = 0;
    bp_status st = BP_OK;
    if (r_begin > 0) {
        st = qt_walk_prime(q, wm, d, r_begin, &depth);
        if (st != BP_OK) return st;
    }
    qt_act A = qt_act_of(wm);
    for (size_t r = r_begin; r < r_end; ++r) {
        const uint64_t key = run_key[r];
        const uint64_t code = qt_key_code(key);
        const unsigned lvl = qt_key_level(key);
        const uint64_t end = code + ((uint64_t)1 << ((unsigned)d * (L - lvl)));
        const size_t p0 = run_start[r];
        size_t p1 = run_start[r + 1];
        while (depth > 0 && code >= A.end[depth - 1]) --depth;
        const size_t a0 = depth ? A.a0[depth - 1] : 0, a1 = depth ? A.a1[depth - 1] : 0;
        uint64_t bcode = code;
        unsigned blvl = lvl;
        const bool bucket = qt_bucket(q, d, code, lvl, p0, &p1, &bcode, &blvl);
        if (bucket)
            while (r + 1 < nruns && run_start[r + 1] < p1) ++r;
        const bool inner = !bucket && r + 1 < nruns && qt_key_code(run_key[r + 1]) < end;
        if (a0 == a1 && !inner) {  // nothing above reaches it, nothing below
            if (p1 - p0 > 1) {
                st = qt_pairs_within(q, p0, p1, sink, &c);
                if (st != BP_OK) return st;
            }
            continue;
        }
        uint32_t c0[3], c1[3];
        qt_cell_span(d, L, bcode, blvl, c0, c1);
        const size_t top = a1;
        st = qt_walk_room(q->base.ctx, wm, s, top + (a1 - a0) + (p1 - p0) + 1, depth, &A);
        if (st != BP_OK) return st;
        // The parent's boxes that reach this cell, copied above the parent's segment: tested
        // here and, for an inner cell, inherited by the children.
        const size_t w = qt_inherit(&A, d, a0, a1, top, c0, c1);
        st = qt_cell_pairs(q, wm, &A, d, top, w, p0, p1, sink, &c);
        if (st != BP_OK) return st;
        if (inner) qt_push(q, &A, d, depth++, end, top, w, p0, p1);
    }
    *checks += c;
    return BP_OK;
}

// Reserves a walk's memory for last frame's peaks with headroom: a warm frame whose structure
// changes a little then allocates nothing (the walk still grows the arrays when it must).
static bp_status qt_walk_ahead(const bp_quadtree *q, qt_walk_mem *wm, size_t act_peak, size_t sw_peak) {
    bp_context *ctx = q->base.ctx;
    const size_t s = (size_t)(2 * q->dim);
    const size_t floor = q->n < QT_ACTIVE_FLOOR ? q->n : QT_ACTIVE_FLOOR;
    const size_t act = (act_peak > floor ? act_peak : floor) + 64;
    const size_t sw = (sw_peak > floor ? sw_peak : floor) + 64;
    BP_RESERVE(ctx, wm->act_box, wm->act_box_cap, act * s);
    BP_RESERVE(ctx, wm->act_id, wm->act_id_cap, act);
    BP_RESERVE(ctx, wm->act_rng, wm->act_rng_cap, act * s);
    BP_RESERVE(ctx, wm->st_end, wm->st_end_cap, (size_t)q->levels + 2);
    BP_RESERVE(ctx, wm->st_a0, wm->st_a0_cap, (size_t)q->levels + 2);
    BP_RESERVE(ctx, wm->st_a1, wm->st_a1_cap, (size_t)q->levels + 2);
    BP_RESERVE_DISCARD(ctx, wm->sw_keys, wm->sw_keys_cap, sw);
    BP_RESERVE_DISCARD(ctx, wm->sw_vals, wm->sw_vals_cap, sw);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_keys, wm->sw_tmp_keys_cap, sw);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_vals, wm->sw_tmp_vals_cap, sw);
    BP_RESERVE_DISCARD(ctx, wm->sw_soa, wm->sw_soa_cap, sw * s);
    wm->act_peak = 0;
    wm->sw_peak = 0;
    return BP_OK;
}

// Units [u0, u1) of the strict walk: runs q->units[u0] .. q->units[u1] (a task's part).
static bp_status qt_walk_part(void *user, size_t u0, size_t u1, uint32_t worker, bp_sink *sink, uint64_t *checks) {
    const bp_quadtree *q = user;
    qt_walk_mem *wm = &q->wmem[worker];
    return q->dim == 2 ? qt_walk_strict_dim(q, wm, 2, q->units[u0], q->units[u1], sink, checks)
                       : qt_walk_strict_dim(q, wm, 3, q->units[u0], q->units[u1], sink, checks);
}

static bp_status qt_walk_strict(bp_quadtree *q, bp_sink *sink, uint64_t *checks) {
    bp_context *ctx = q->base.ctx;
    const uint32_t tasks = bp_par_tasks(ctx, q->n, BP_PAR_GRAIN_PAIRS);
    if (tasks < 2) {
        bp_status st = qt_walk_ahead(q, &q->walk, q->walk.act_peak, q->walk.sw_peak);
        if (st != BP_OK) return st;
        return q->dim == 2 ? qt_walk_strict_dim(q, &q->walk, 2, 0, q->nruns, sink, checks)
                           : qt_walk_strict_dim(q, &q->walk, 3, 0, q->nruns, sink, checks);
    }
    // With workers: the runs cut where about n t / tasks boxes lie before, each cut moved on
    // past any bucket that holds it; a task's part (units) starts with the stack rebuilt there.
    const uint32_t workers = bp_par_workers(ctx);
    if (q->wmem_cap < workers) {
        const size_t old = q->wmem_cap;
        BP_RESERVE(ctx, q->wmem, q->wmem_cap, workers);
        memset(q->wmem + old, 0, (q->wmem_cap - old) * sizeof *q->wmem);
    }
    size_t act_peak = 0, sw_peak = 0;
    for (uint32_t w = 0; w < workers; ++w) {
        if (q->wmem[w].act_peak > act_peak) act_peak = q->wmem[w].act_peak;
        if (q->wmem[w].sw_peak > sw_peak) sw_peak = q->wmem[w].sw_peak;
    }
    for (uint32_t w = 0; w < workers; ++w) {
        bp_status st = qt_walk_ahead(q, &q->wmem[w], act_peak, sw_peak);
        if (st != BP_OK) return st;
    }
    BP_RESERVE_DISCARD(ctx, q->units, q->units_cap, (size_t)tasks + 1);
    size_t units = 0;
    q->units[units++] = 0;
    for (uint32_t t = 1; t < tasks; ++t) {
        const size_t box = (size_t)((uint64_t)q->n * t / tasks);
        size_t r = bp_upper_bound32(q->run_start + 1, 0, q->nruns, (uint32_t)box);  // the run holding that box
        while (r < q->nruns && qt_in_bucket(q, r)) ++r;
        if (r > q->units[units - 1] && r < q->nruns) q->units[units++] = r;
    }
    q->units[units] = q->nruns;
    return bp_par_pairs(ctx, sink, units, 1, qt_walk_part, q, checks);
}

// Loose placement: a box lies within its cell enlarged by half a cell, so two overlapping boxes
// sit in cells where the coarser one's cell neighbours (within one cell on every axis) the
// finer one's ancestor at that level. Each cell therefore meets the subtrees of its 3^dim
// neighbours: deeper boxes always, same-level boxes of a neighbour once (the larger code).
// Runs [r0, r1) (a task's part with workers: each run's pairs depend on that run alone).
static bp_status qt_walk_loose(void *user, size_t r0, size_t r1, uint32_t worker, bp_sink *sink, uint64_t *checks) {
    (void)worker;
    const bp_quadtree *q = user;
    const int d = q->dim;
    const unsigned L = q->levels;
    const uint64_t *rk = q->run_key;
    const size_t nr = q->nruns;
    uint64_t c = 0;
    for (size_t r = r0; r < r1; ++r) {
        const uint64_t key = rk[r];
        const uint64_t code = qt_key_code(key);
        const unsigned lvl = qt_key_level(key);
        const unsigned up = L - lvl;
        const size_t p0 = q->run_start[r], p1 = q->run_start[r + 1];
        bp_status st = qt_pairs_within(q, p0, p1, sink, &c);
        if (st != BP_OK) return st;
        uint32_t cc[3];
        qt_decode(d, code, cc);
        const uint32_t cells = (uint32_t)1 << lvl;  // cells per axis at this level
        for (int a = 0; a < d; ++a) cc[a] >>= up;
        const int nn = d == 2 ? 9 : 27;
        for (int o = 0; o < nn; ++o) {
            uint32_t nc[3];
            int rem = o;
            bool inside = true;
            for (int a = 0; a < d; ++a) {
                int off = rem % 3 - 1;
                rem /= 3;
                if ((off < 0 && cc[a] == 0) || (off > 0 && cc[a] + 1 >= cells)) inside = false;
                nc[a] = (uint32_t)((int64_t)cc[a] + off) << up;
            }
            if (!inside) continue;
            const uint64_t ncode = qt_morton(d, nc);
            const uint64_t k0 = (ncode << QT_LEVEL_BITS) | lvl;
            const uint64_t k1 = (ncode + ((uint64_t)1 << ((unsigned)d * up))) << QT_LEVEL_BITS;
            size_t r0 = ncode == code ? r : bp_lower_bound64(rk, 0, nr, k0);
            if (r0 >= nr || rk[r0] >= k1) continue;
            // The neighbour's own boxes: from one side only; the cell itself was done above.
            if (rk[r0] == k0 && (ncode <= code)) ++r0;
            size_t r1 = bp_lower_bound64(rk, r0, nr, k1);
            if (r0 >= r1) continue;
            st = qt_pairs_across(q, p0, p1, q->run_start[r0], q->run_start[r1], sink, &c);
            if (st != BP_OK) return st;
        }
    }
    *checks += c;
    return BP_OK;
}

bp_status bp_qt_pairs(bp_quadtree *q, bp_sink *sink, uint64_t *checks) {
    if (q->loose) return bp_par_pairs(q->base.ctx, sink, q->nruns, BP_PAR_GRAIN_PAIRS / 4, qt_walk_loose, q, checks);
    return qt_walk_strict(q, sink, checks);
}
