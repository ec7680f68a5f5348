// Method `grid`: a uniform grid built by sorting (seeds 003 and 004), with a hierarchy of
// coarser grids for boxes larger than a cell. docs/grid.md explains the choices; in short:
//  - Each box lives in exactly one cell: the cell of its min corner, in the finest level whose
//    cells it spans at most two of per axis. Two such boxes that overlap have min-corner cells
//    at most one apart on every axis, so a cell only meets its 8 (26) neighbours, and looking
//    at the 4 (13) "forward" ones finds every pair once (seed 004).
//  - No array of all cells: boxes are sorted by a row-major cell key with the shared radix sort,
//    and a cell is a run of equal keys. Row-major keys make the forward neighbours of a cell
//    consecutive keys (x-1, x, x+1 of the next row), so the pairs of a box are 2 (5) short key
//    ranges of the sorted array, found by cursors that only move forward.
//  - Temporal coherence: boxes are visited in last frame's order, so the new keys are almost
//    sorted; the few that moved are pulled out, radix-sorted alone and merged back.
//  - Keys are well defined for any finite coordinate: cell coordinates are clamped in double to
//    a bounded window before conversion. Clamping is monotone, so it can only put more boxes in
//    the same cell (more candidate tests), never separate two overlapping boxes.
//  - Boxes too large for the finest cells go to coarser levels (cells 2, 4, 8... times larger);
//    a box of a coarse level meets the finer levels through region queries of its own box.
#include <math.h>

#include "method.h"
#include "radix_sort.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The dense path's candidate pass has a 16-wide AVX-512 loop, chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX512)
#define GRID_AVX512 1
#include <immintrin.h>
#endif

// The cell edge is this many times the typical box extent (the 75th percentile of a sample of
// extents, so a few huge boxes do not inflate it). Measured on `uniform` and `clustered` at
// N = 1,000,000 (docs/grid.md): larger cells test more candidates, smaller ones send more boxes
// up the hierarchy; 3D pays more per candidate (13 neighbour cells), so its cells are tighter.
#ifndef GRID_CELL_FACTOR_2D
#define GRID_CELL_FACTOR_2D 1.5
#endif
#ifndef GRID_CELL_FACTOR_3D
#define GRID_CELL_FACTOR_3D 1.25
#endif
// With points (no extent), cells of this many times the mean spacing of the bulk of the boxes.
#ifndef GRID_SPACING_FACTOR
#define GRID_SPACING_FACTOR 0.35
#endif
// Boxes sampled per frame to choose the cell size and the window.
#define GRID_SAMPLE 64
// Keep last frame's grid while the ideal cell stays within this factor of it and the boxes stay
// inside its window: an unchanged grid keeps the keys, hence the order, from frame to frame.
#define GRID_KEEP_RATIO 1.5
// Cells in level 0, padding included; the coarser levels add at most as many again.
#define GRID_MAX_CELLS ((uint64_t)1 << 30)
#define GRID_MAX_LEVELS 34
// Cells per axis: coordinates stay exact in float.
#define GRID_MAX_AXIS 16777000.0
// Sentinel keys after the last box: every scan stops there without a bounds test.
#define GRID_PAD 16  // also covers the prefetch distance
#define GRID_SENTINEL UINT32_MAX
// Marks, in last frame's order, a box that was pulled out to be sorted apart (never a real key).
#define GRID_MOVED (UINT32_MAX - 1)
// The coherent sort gives up (full radix sort) when more than 1/this of the boxes moved.
#define GRID_MOVED_MAX_DIV 4
// Boxes are read in last frame's sorted order, which is random in memory: prefetch this far
// ahead so that many cache (and TLB) misses are in flight at once.
#define GRID_PREFETCH 16
// Debug drawing draws the whole level-0 lattice only up to this many cells (a demo-sized world).
#define GRID_DRAW_CELLS 4096
#if defined(__GNUC__)
#define GRID_PREFETCH_READ(p) __builtin_prefetch((p), 0, 0)
#else
#define GRID_PREFETCH_READ(p) ((void)0)
#endif

typedef struct grid_level {
    int64_t g[3];         // cells per axis (coordinates 0 .. g-1)
    uint32_t stride[3];   // key strides: 1, padded row, padded plane
    uint32_t base;        // first key of the level
    uint32_t size;        // keys of the level: the padded cell count
    size_t begin, end;    // the level's boxes in sorted order
} grid_level;

typedef struct grid_geom {
    int dim;
    double origin[3], cell[3], inv[3];
    // The cell coordinate of x is (x - fo) * fi clamped to [0, fg], in float: the same
    // arithmetic in every path (SSE or scalar), monotone in x, exact bounds (fg < 2^24).
    float fo[3], fi[3], fg[3];
    int64_t g0[3];        // level-0 cells per axis
    double wlo[3], whi[3];  // the window the cells cover
    bool robust;          // the window was cut to the bulk of the boxes (outliers clamped)
    int levels;
    uint64_t total;       // keys of all levels
    grid_level lv[GRID_MAX_LEVELS];
} grid_geom;

typedef struct bp_grid {
    bp_algorithm base;
    grid_geom geom;
    bool have_geom;
    bool ordered;         // perm holds last frame's order (for coherence)
    size_t n;             // boxes of the last call
    unsigned key_bits;
    // The sorted frame: object ids, cell keys (+ sentinels) and boxes (2 * dim floats each).
    uint32_t *perm, *keys;
    float *boxes;
    size_t perm_cap, keys_cap, boxes_cap;
    // Scratch: keys and boxes in last frame's order, the boxes that moved (keys, old positions;
    // also the radix sort's buffers), the next perm.
    uint32_t *okeys, *mkeys, *mpos, *perm2;
    float *oboxes;
    size_t okeys_cap, mkeys_cap, mpos_cap, perm2_cap, oboxes_cap;
    size_t moved;         // boxes pulled out of the order this frame
    // Row index of the levels that coarser boxes search: rows[roff[l] + r] = first sorted
    // position of padded row r of level l (rows_ok[l] when built).
    uint32_t *rows;
    size_t rows_cap;
    size_t roff[GRID_MAX_LEVELS];
    bool rows_ok[GRID_MAX_LEVELS];
    uint64_t resorts;     // frames that needed a full radix sort
    // Small worlds (2D): the cells are lists through a dense table instead of runs of a sorted
    // order (see "Small worlds" below). keys and boxes then hold every box in input order,
    // head[c] links cell c's list, next[i] the rest of box i's. The table is GRID_EMPTY
    // everywhere but in head[0 .. dirty) (the last dense call's cells); head_ok false: wipe it.
    bool dense;           // the last call took the dense path
    bool crowded;         // AUTO: cells too full for the table (grid_dense_fits)
    bool head_ok;
    size_t dirty;
    uint32_t *head, *next;
    size_t head_cap, next_cap;
} bp_grid;

static bp_status grid_create(bp_context *ctx, bp_algorithm **out) {
    bp_grid *g = bp_alloc(ctx, sizeof *g);
    if (!g) return BP_ERR_NOMEM;
    memset(g, 0, sizeof *g);
    *out = &g->base;
    return BP_OK;
}

static void grid_destroy(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, g->perm, g->perm_cap);
    BP_RELEASE(ctx, g->keys, g->keys_cap);
    BP_RELEASE(ctx, g->boxes, g->boxes_cap);
    BP_RELEASE(ctx, g->okeys, g->okeys_cap);
    BP_RELEASE(ctx, g->mkeys, g->mkeys_cap);
    BP_RELEASE(ctx, g->mpos, g->mpos_cap);
    BP_RELEASE(ctx, g->perm2, g->perm2_cap);
    BP_RELEASE(ctx, g->oboxes, g->oboxes_cap);
    BP_RELEASE(ctx, g->rows, g->rows_cap);
    BP_RELEASE(ctx, g->head, g->head_cap);
    BP_RELEASE(ctx, g->next, g->next_cap);
    bp_free(ctx, g, sizeof *g);
}

static void grid_reset(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    g->ordered = false;
    g->have_geom = false;
    g->dense = false;
    g->crowded = false;
    g->head_ok = false;  // wiped whole before its next use
    g->dirty = 0;
    memset(g->rows_ok, 0, sizeof g->rows_ok);
    g->n = 0;
    for (int l = 0; l < GRID_MAX_LEVELS; ++l) g->geom.lv[l].begin = g->geom.lv[l].end = 0;
    g->geom.levels = 0;
}

// ---------------------------------------------------------------------------------------------
// Geometry: cell size, window, levels

// Level-0 cell coordinate of x on an axis: clamped in float before the conversion, so any finite
// float gives a defined result (an overflow to infinity clamps too); monotone in x.
static inline int64_t grid_coord(float x, float origin, float inv, float gmax) {
    float t = (x - origin) * inv;
    t = t > 0.0f ? t : 0.0f;
    t = t < gmax ? t : gmax;
    return (int64_t)(int32_t)t;
}

static void grid_sort_doubles(double *v, size_t n) {
    for (size_t k = 1; k < n; ++k) {
        double x = v[k];
        size_t j = k;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            --j;
        }
        v[j] = x;
    }
}

// The ideal cell per axis and the bulk of the boxes (centre quantiles), from a sample.
static void grid_ideal(const bp_frame *f, float user_cell, double cell[3], double qlo[3], double qhi[3]) {
    const int d = f->dim;
    const size_t n = f->n;
    const size_t s = n < GRID_SAMPLE ? n : GRID_SAMPLE;
    double ext[GRID_SAMPLE], cen[GRID_SAMPLE];
    for (int a = 0; a < d; ++a) {
        for (size_t j = 0; j < s; ++j) {
            const float *b = bp_frame_box(f, s == n ? j : (size_t)((uint64_t)j * n / s));
            ext[j] = (double)b[d + a] - (double)b[a];
            cen[j] = 0.5 * ((double)b[a] + (double)b[d + a]);
        }
        grid_sort_doubles(ext, s);
        grid_sort_doubles(cen, s);
        double typical = s ? ext[(s * 3) / 4 < s ? (s * 3) / 4 : s - 1] : 0.0;
        qlo[a] = s ? cen[s / 20] : 0.0;
        qhi[a] = s ? cen[s - 1 - s / 20] : 0.0;
        // Points (zero extent) still want a few boxes per cell: the spacing of the bulk.
        double bulk = (qhi[a] - qlo[a]) / 0.9;
        double spacing = n ? bulk / pow((double)n, 1.0 / d) : 0.0;
        double c = (d == 2 ? GRID_CELL_FACTOR_2D : GRID_CELL_FACTOR_3D) * typical;
        if (c < GRID_SPACING_FACTOR * spacing) c = GRID_SPACING_FACTOR * spacing;
        if (user_cell > 0.0f) c = (double)user_cell;
        // Everything identical: any positive cell will do; keep it relative to the coordinates.
        if (!(c > 0.0)) {
            double mag = fabs(qlo[a]) > fabs(qhi[a]) ? fabs(qlo[a]) : fabs(qhi[a]);
            c = mag > 1e-30 ? mag * 1e-6 : 1.0;
        }
        cell[a] = c;
    }
}

// Fills the levels of a geometry whose level 0 is set. False when the keys do not fit 32 bits.
static bool grid_build_levels(grid_geom *G) {
    const int d = G->dim;
    uint64_t base = 0;
    int l = 0;
    for (;; ++l) {
        if (l >= GRID_MAX_LEVELS) return false;
        grid_level *L = &G->lv[l];
        bool top = true;
        uint64_t size = 1, stride[3] = {0, 0, 0};  // 0 past the dimension: those terms vanish
        for (int a = 0; a < 3; ++a) {
            L->g[a] = a < d ? ((G->g0[a] - 1) >> l) + 1 : 1;
            if (L->g[a] > 2) top = false;
        }
        for (int a = 0; a < d; ++a) {
            stride[a] = size;
            size *= (uint64_t)L->g[a] + 2;
        }
        if (base + size >= (uint64_t)GRID_SENTINEL - GRID_PAD) return false;
        for (int a = 0; a < 3; ++a) L->stride[a] = (uint32_t)stride[a];
        L->base = (uint32_t)base;
        L->size = (uint32_t)size;
        L->begin = L->end = 0;
        base += size;
        // At two cells per axis every box spans at most two cells: this level takes the rest.
        if (top) break;
    }
    G->levels = l + 1;
    G->total = base;
    return true;
}

// Sets level 0 to cover [lo, hi] with cells `cell` (grown until the keys fit).
static void grid_fit(grid_geom *G, int d, const double lo[3], const double hi[3], const double cell_in[3]) {
    double cell[3] = {cell_in[0], cell_in[1], cell_in[2]};
    for (int tries = 0;; ++tries) {
        uint64_t cells = 1;
        bool ok = true;
        for (int a = 0; a < d; ++a) {
            double span = hi[a] - lo[a];
            double g = floor(span / cell[a]) + 1.0;
            if (!(g <= GRID_MAX_AXIS)) {
                ok = false;
                break;
            }
            G->g0[a] = (int64_t)g;
            cells *= (uint64_t)G->g0[a] + 2;
            if (cells > GRID_MAX_CELLS) {
                ok = false;
                break;
            }
        }
        if (ok) {
            G->dim = d;
            for (int a = 0; a < d; ++a) {
                G->origin[a] = lo[a];
                G->cell[a] = cell[a];
                G->inv[a] = 1.0 / cell[a];
                G->fo[a] = (float)lo[a];
                G->fi[a] = (float)G->inv[a];
                G->fg[a] = (float)(G->g0[a] - 1);
                G->wlo[a] = lo[a];
                G->whi[a] = lo[a] + (double)G->g0[a] * cell[a];
            }
            for (int a = d; a < 3; ++a) {
                G->g0[a] = 1;
                G->origin[a] = G->wlo[a] = G->whi[a] = 0.0;
                G->cell[a] = G->inv[a] = 1.0;
                G->fo[a] = G->fg[a] = 0.0f;
                G->fi[a] = 1.0f;
            }
            if (grid_build_levels(G)) return;
        }
        // Too many cells for 32-bit keys: coarser cells.
        for (int a = 0; a < d; ++a) cell[a] *= tries < 64 ? 1.25 : 4.0;
    }
}

// Chooses this frame's geometry; keeps last frame's when still good, so that keys (and the
// sorted order) carry over.
static bool grid_choose(bp_grid *g, const bp_frame *f) {
    const int d = f->dim;
    const float user = bp_context_def_of(g->base.ctx)->grid.cell_size;
    double cell[3] = {1, 1, 1}, qlo[3] = {0, 0, 0}, qhi[3] = {0, 0, 0};
    grid_ideal(f, user, cell, qlo, qhi);
    grid_geom *G = &g->geom;
    if (g->have_geom && G->dim == d) {
        bool keep = true;
        for (int a = 0; a < d && keep; ++a) {
            double r = G->cell[a] / cell[a];
            if (user > 0.0f ? r != 1.0 : (r > GRID_KEEP_RATIO || r < 1.0 / GRID_KEEP_RATIO)) keep = false;
            // The window must still hold the boxes (or, when cut to the bulk, the bulk), and
            // not be much larger than needed.
            double lo = G->robust ? qlo[a] : (double)f->lo[a];
            double hi = G->robust ? qhi[a] : (double)f->hi[a];
            if (lo < G->wlo[a] || hi > G->whi[a]) keep = false;
            if ((hi - lo) * 2.0 + 4.0 * G->cell[a] < G->whi[a] - G->wlo[a]) keep = false;
        }
        if (keep) return true;
    }
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool robust = false;
    uint64_t cells = 1;
    for (int a = 0; a < d; ++a) {
        double span = (double)f->hi[a] - (double)f->lo[a];
        double g0 = floor(span / cell[a]) + 3.0;
        cells = g0 > (double)GRID_MAX_CELLS || cells * (uint64_t)g0 > GRID_MAX_CELLS ? GRID_MAX_CELLS + 1
                                                                                      : cells * (uint64_t)g0;
    }
    if (cells > GRID_MAX_CELLS) robust = true;
    for (int a = 0; a < d; ++a) {
        // A margin so that small motions do not leave the window; when the bounds are far too
        // large for the cells (outliers), cut the window to the bulk of the boxes.
        double l0 = f->lo[a], h0 = f->hi[a];
        if (robust) {
            double w = qhi[a] - qlo[a];
            l0 = fmax(l0, qlo[a] - w);
            h0 = fmin(h0, qhi[a] + w);
        }
        double margin = 0.5 * cell[a] + 0.02 * (h0 - l0);
        lo[a] = l0 - margin;
        hi[a] = h0 + margin;
    }
    grid_fit(G, d, lo, hi, cell);
    G->robust = robust;
    g->have_geom = true;
    return false;
}

// The key of a box from its level-0 cell range, in the finest level where it spans at most two
// cells per axis.
static inline uint32_t grid_key(const grid_geom *G, const int64_t c0[3], const int64_t c1[3], int *level) {
    int l = 0;
    const int d = G->dim;
    for (;; ++l) {
        bool fits = true;
        for (int a = 0; a < d; ++a)
            if ((c1[a] >> l) - (c0[a] >> l) > 1) fits = false;
        if (fits || l + 1 >= G->levels) break;
    }
    const grid_level *L = &G->lv[l];
    uint64_t k = L->base;
    for (int a = 0; a < d; ++a) k += (uint64_t)((c0[a] >> l) + 1) * L->stride[a];
    *level = l;
    return (uint32_t)k;
}

static inline void grid_cells(const grid_geom *G, const float *b, int64_t c0[3], int64_t c1[3]) {
    const int d = G->dim;
    for (int a = 0; a < d; ++a) {
        c0[a] = grid_coord(b[a], G->fo[a], G->fi[a], G->fg[a]);
        c1[a] = grid_coord(b[d + a], G->fo[a], G->fi[a], G->fg[a]);
    }
    for (int a = d; a < 3; ++a) c0[a] = c1[a] = 0;
}

// ---------------------------------------------------------------------------------------------
// Building the frame's structure

static bp_status grid_reserve(bp_grid *g, size_t n, int d) {
    bp_context *ctx = g->base.ctx;
    const size_t m = n + GRID_PAD;
    const size_t fl = m * (size_t)(2 * d);
    // Everything before the old order is touched, so a failure leaves it intact.
    BP_RESERVE(ctx, g->perm, g->perm_cap, m);
    BP_RESERVE(ctx, g->perm2, g->perm2_cap, m);
    BP_RESERVE_DISCARD(ctx, g->keys, g->keys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->boxes, g->boxes_cap, fl);
    BP_RESERVE_DISCARD(ctx, g->okeys, g->okeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->mkeys, g->mkeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->mpos, g->mpos_cap, m);
    BP_RESERVE_DISCARD(ctx, g->oboxes, g->oboxes_cap, fl);
    return BP_OK;
}

// Pulling out, during the key pass, the boxes whose new key breaks last frame's order. Kept: a
// non-decreasing subsequence that holds every box whose key did not change (last frame's keys,
// `old`, are sorted) and each changed key that still fits below the next old key. Moved: the
// rest, marked GRID_MOVED in okeys and listed in mkeys/mpos, up to `cap` of them.
typedef struct grid_extract {
    const uint32_t *old;  // NULL: no coherence, nothing is pulled out
    uint32_t *mkeys, *mpos;
    size_t count, cap;
    uint32_t last;
} grid_extract;

static inline uint32_t grid_extract_one(grid_extract *x, size_t k, uint32_t key) {
    if (!x->old) return key;
    if (BP_LIKELY(key >= x->last && key <= x->old[k + 1])) {
        x->last = key;
        return key;
    }
    if (BP_UNLIKELY(x->count == x->cap)) {
        // Too many moved for a merge to pay: give up on coherence for this frame.
        x->old = NULL;
        return key;
    }
    x->mkeys[x->count] = key;
    x->mpos[x->count++] = (uint32_t)k;
    return GRID_MOVED;
}

// Keys and boxes in last frame's order (perm): boxes are read once, in an order close to the
// sorted one, and the gather after the sort reads oboxes almost sequentially.
static void grid_keys2(bp_grid *g, const bp_frame *f, size_t n, grid_extract *x) {
    const grid_geom *G = &g->geom;
    const uint64_t sx = G->lv[0].stride[1];
    const uint32_t *BP_RESTRICT perm = g->perm;
    uint32_t *BP_RESTRICT ok = g->okeys;
    float *BP_RESTRICT ob = g->oboxes;
    const float *BP_RESTRICT src = f->boxes;
#if defined(__SSE2__)
    const __m128 O = _mm_setr_ps(G->fo[0], G->fo[1], G->fo[0], G->fo[1]);
    const __m128 I = _mm_setr_ps(G->fi[0], G->fi[1], G->fi[0], G->fi[1]);
    const __m128 M = _mm_setr_ps(G->fg[0], G->fg[1], G->fg[0], G->fg[1]);
    const __m128 neg_max = _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f);
#endif
    for (size_t k = 0; k < n; ++k) {
        GRID_PREFETCH_READ(src + (size_t)perm[k + GRID_PREFETCH] * 4);
        const float *b = src + (size_t)perm[k] * 4;
#if defined(__SSE2__)
        // The four coordinates at once, exactly as grid_coord computes each.
        const __m128 v = _mm_loadu_ps(b);
        _mm_storeu_ps(ob + 4 * k, _mm_xor_ps(v, neg_max));
        __m128 t = _mm_mul_ps(_mm_sub_ps(v, O), I);
        t = _mm_min_ps(_mm_max_ps(t, _mm_setzero_ps()), M);
        int32_t c[4];
        _mm_storeu_si128((__m128i *)(void *)c, _mm_cvttps_epi32(t));
        const int64_t x0 = c[0], y0 = c[1], x1 = c[2], y1 = c[3];
#else
        float *o = ob + 4 * k;
        o[0] = b[0];
        o[1] = b[1];
        o[2] = -b[2];
        o[3] = -b[3];
        const int64_t x0 = grid_coord(b[0], G->fo[0], G->fi[0], G->fg[0]);
        const int64_t y0 = grid_coord(b[1], G->fo[1], G->fi[1], G->fg[1]);
        const int64_t x1 = grid_coord(b[2], G->fo[0], G->fi[0], G->fg[0]);
        const int64_t y1 = grid_coord(b[3], G->fo[1], G->fi[1], G->fg[1]);
#endif
        uint32_t key;
        if (BP_LIKELY(x1 - x0 <= 1 && y1 - y0 <= 1)) {
            key = (uint32_t)((uint64_t)(y0 + 1) * sx + (uint64_t)(x0 + 1));
        } else {
            int64_t c0[3] = {x0, y0, 0}, c1[3] = {x1, y1, 0};
            int l;
            key = grid_key(G, c0, c1, &l);
        }
        ok[k] = grid_extract_one(x, k, key);
    }
}

static void grid_keys3(bp_grid *g, const bp_frame *f, size_t n, grid_extract *x) {
    const grid_geom *G = &g->geom;
    const uint64_t sx = G->lv[0].stride[1], sxy = G->lv[0].stride[2];
    const uint32_t *BP_RESTRICT perm = g->perm;
    uint32_t *BP_RESTRICT ok = g->okeys;
    float *BP_RESTRICT ob = g->oboxes;
    const float *BP_RESTRICT src = f->boxes;
    for (size_t k = 0; k < n; ++k) {
        GRID_PREFETCH_READ(src + (size_t)perm[k + GRID_PREFETCH] * 6);
        const float *b = src + (size_t)perm[k] * 6;
        float *o = ob + 6 * k;
        for (int e = 0; e < 3; ++e) {
            o[e] = b[e];
            o[3 + e] = -b[3 + e];
        }
        int64_t c0[3], c1[3];
        grid_cells(G, b, c0, c1);
        uint32_t key;
        if (BP_LIKELY(c1[0] - c0[0] <= 1 && c1[1] - c0[1] <= 1 && c1[2] - c0[2] <= 1)) {
            key = (uint32_t)((uint64_t)(c0[2] + 1) * sxy + (uint64_t)(c0[1] + 1) * sx + (uint64_t)(c0[0] + 1));
        } else {
            int l;
            key = grid_key(G, c0, c1, &l);
        }
        ok[k] = grid_extract_one(x, k, key);
    }
}

// Writes the sorted frame (keys, boxes, next perm) from last frame's order. Coherent (x->old
// still set): merges the kept boxes (okeys in order, GRID_MOVED skipped) with the moved ones,
// radix-sorted alone. Otherwise: one radix sort of all the keys.
static void grid_sort_gather(bp_grid *g, size_t n, int d, grid_extract *x) {
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT np = g->perm2;
    uint32_t *BP_RESTRICT ok = g->okeys, *BP_RESTRICT mk = g->mkeys, *BP_RESTRICT mp = g->mpos;
    const uint32_t *BP_RESTRICT perm = g->perm;
    const float *BP_RESTRICT ob = g->oboxes;
    float *BP_RESTRICT bx = g->boxes;
    const size_t w = (size_t)(2 * d);
    if (x->old) {
        const size_t nm = x->count;
        g->moved = nm;
        // keys and perm2 are free until the merge: the small sort's buffers.
        bp_radix_sort32(mk, mp, keys, np, nm, g->key_bits);
        mk[nm] = GRID_SENTINEL;
        ok[n] = GRID_SENTINEL;
        size_t i = 0, j = 0;
        for (size_t o = 0; o < n; ++o) {
            while (ok[i] == GRID_MOVED) ++i;
            size_t p;
            // Ties: the kept box first (any order within a cell is valid).
            if (ok[i] <= mk[j]) {
                p = i++;
                keys[o] = ok[p];
            } else {
                p = mp[j];
                keys[o] = mk[j++];
            }
            np[o] = perm[p];
            if (d == 2) memcpy(bx + 4 * o, ob + 4 * p, 4 * sizeof(float));
            else memcpy(bx + 6 * o, ob + 6 * p, 6 * sizeof(float));
        }
        return;
    }
    // If the extraction gave up half-way, the boxes it had pulled out get their keys back.
    for (size_t t = 0; t < x->count; ++t) ok[mp[t]] = mk[t];
    g->moved = n;
    for (size_t k = 0; k < n; ++k) {
        keys[k] = ok[k];
        mp[k] = (uint32_t)k;
    }
    bp_radix_sort32(keys, mp, mk, np, n, g->key_bits);
    g->resorts++;
    for (size_t o = 0; o < n; ++o) {
        const size_t p = mp[o];
        np[o] = perm[p];
        memcpy(bx + w * o, ob + w * p, w * sizeof(float));  // (first frames only)
    }
}

// First sorted position in level l whose key is >= key: within the key's row when the level
// has a row index, else in the whole level.
static size_t grid_lower_bound(const bp_grid *g, int l, uint32_t key) {
    const grid_level *L = &g->geom.lv[l];
    size_t lo = L->begin, hi = L->end;
    if (g->rows_ok[l]) {
        const size_t r = (key - L->base) / L->stride[1];
        lo = g->rows[g->roff[l] + r];
        hi = g->rows[g->roff[l] + r + 1];
    }
    const uint32_t *keys = g->keys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Row index of the non-empty levels finer than `coarse` (the ones coarser boxes search), each
// row found by a binary search: rows x log n, far less than a pass over the boxes. A level with
// more rows than the budget allows is searched whole instead.
static bp_status grid_build_rows(bp_grid *g, size_t n, int coarse) {
    const grid_geom *G = &g->geom;
    // Offsets for every level under the budget, whether searched this frame or not, so that
    // the reservation does not change while the grid does not (no allocation once warm).
    size_t total = 0;
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        const size_t rows = L->size / L->stride[1] + 1;
        g->rows_ok[l] = total + rows <= n + 4096;
        if (g->rows_ok[l]) {
            g->roff[l] = total;
            total += rows;
        }
    }
    for (int l = coarse; l < G->levels; ++l) g->rows_ok[l] = false;
    for (int l = 0; l < coarse; ++l)
        if (G->lv[l].end == G->lv[l].begin) g->rows_ok[l] = false;
    bp_status st = BP_OK;
    g->rows = bp_grow(g->base.ctx, g->rows, &g->rows_cap, total + 1, sizeof *g->rows, false, &st);
    if (st != BP_OK) {
        memset(g->rows_ok, 0, sizeof g->rows_ok);
        return st;
    }
    const uint32_t *keys = g->keys;
    for (int l = 0; l < coarse; ++l) {
        if (!g->rows_ok[l]) continue;
        const grid_level *L = &G->lv[l];
        const size_t rows = L->size / L->stride[1] + 1;
        uint32_t *out = g->rows + g->roff[l];
        size_t p = L->begin;
        for (size_t r = 0; r < rows; ++r) {
            const uint64_t start = (uint64_t)L->base + (uint64_t)r * L->stride[1];
            size_t hi = L->end;
            while (p < hi) {
                size_t mid = p + (hi - p) / 2;
                if (keys[mid] < start) p = mid + 1;
                else hi = mid;
            }
            out[r] = (uint32_t)p;
        }
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Pairs

// Sorted boxes are stored as (min, -max): box b overlaps box a when every stored value of b is
// <= the matching value of the probe (max(a), -min(a)), so one 4-wide compare tests a 2D pair.
// Negation is exact, so this is the closed-interval test, bit for bit.
#if defined(__SSE2__)
typedef struct grid_probe {
    __m128 lo, hi;
} grid_probe;

static inline grid_probe grid_probe_make(const float *a, int d) {
    float t[8] = {0, 0, 0, 0, INFINITY, INFINITY, INFINITY, INFINITY};
    for (int e = 0; e < d; ++e) {
        t[e] = -a[d + e];
        t[d + e] = -a[e];
    }
    grid_probe p = {_mm_loadu_ps(t), _mm_loadu_ps(t + 4)};
    return p;
}

static inline int grid_hit2(const grid_probe *p, const float *b) {
    return _mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(b), p->lo)) == 15;
}

static inline int grid_hit3(const grid_probe *p, const float *b) {
    __m128 hi = _mm_castpd_ps(_mm_load_sd((const double *)(const void *)(b + 4)));
    int m = _mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(b), p->lo)) |
            (_mm_movemask_ps(_mm_cmple_ps(hi, p->hi)) << 4);
    return m == 0xFF;
}
#else
typedef struct grid_probe {
    float v[6];
} grid_probe;

static inline grid_probe grid_probe_make(const float *a, int d) {
    grid_probe p;
    for (int e = 0; e < d; ++e) {
        p.v[e] = -a[d + e];
        p.v[d + e] = -a[e];
    }
    return p;
}

static inline int grid_hit2(const grid_probe *p, const float *b) {
    return (b[0] <= p->v[0]) & (b[1] <= p->v[1]) & (b[2] <= p->v[2]) & (b[3] <= p->v[3]);
}

static inline int grid_hit3(const grid_probe *p, const float *b) {
    return (b[0] <= p->v[0]) & (b[1] <= p->v[1]) & (b[2] <= p->v[2]) & (b[3] <= p->v[3]) &
           (b[4] <= p->v[4]) & (b[5] <= p->v[5]);
}
#endif

// Tests sorted box j against box p (a0..a3 / a) when its key is at most `lim`, and pushes a hit.
// Branch-free but for the (rare) hit: cells hold a box or less on average, so loops that stop
// at the first key past the range would mispredict on almost every box.
#define GRID_TRY2(j, lim)                                                                      \
    do {                                                                                       \
        const float *b_ = bx + 4 * (j);                                                        \
        const int in_ = keys[j] <= (lim);                                                      \
        c += (uint64_t)in_;                                                                    \
        if (BP_UNLIKELY(in_ & grid_hit2(&pr, b_))) {                                           \
            bp_status st_ = bp_sink_push(sink, ids[p], ids[j]);                                \
            if (st_ != BP_OK) return st_;                                                      \
        }                                                                                      \
    } while (0)

#define GRID_TRY3(j, lim)                                                                      \
    do {                                                                                       \
        const float *b_ = bx + 6 * (j);                                                        \
        const int in_ = keys[j] <= (lim);                                                      \
        c += (uint64_t)in_;                                                                    \
        if (BP_UNLIKELY(in_ & grid_hit3(&pr, b_))) {                                           \
            bp_status st_ = bp_sink_push(sink, ids[p], ids[j]);                                \
            if (st_ != BP_OK) return st_;                                                      \
        }                                                                                      \
    } while (0)

// Moves cursor q to the first key >= lo. The distance varies from box to box (about one on
// average), so a plain loop mispredicts; with SSE2 four keys are compared at once and, keys
// being sorted, the ones below lo are a prefix whose length is the count of trailing ones.
#if defined(__SSE2__) && defined(__GNUC__)
#define GRID_ADVANCE(q, lo)                                                                    \
    do {                                                                                       \
        const __m128i bias_ = _mm_set1_epi32((int)0x80000000u);                               \
        const __m128i lim_ = _mm_xor_si128(_mm_set1_epi32((int)(lo)), bias_);                 \
        for (;;) {                                                                             \
            __m128i k_ = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(keys + q)), bias_); \
            unsigned m_ = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(k_, lim_))); \
            q += (size_t)__builtin_ctz(~m_);                                                   \
            if (BP_LIKELY(m_ != 15)) break;                                                    \
        }                                                                                      \
    } while (0)
#else
#define GRID_ADVANCE(q, lo)                                                                    \
    do {                                                                                       \
        q += keys[q] < (lo);                                                                   \
        q += keys[q] < (lo);                                                                   \
        while (BP_UNLIKELY(keys[q] < (lo))) ++q;                                               \
    } while (0)
#endif

// Same-level pairs, 2D: box p meets the rest of its cell and the next cell (keys K, K+1, after
// p) and the three cells of the next row (keys K+S-1 .. K+S+1), found by a cursor.
static bp_status grid_level_pairs2(const bp_grid *g, const grid_level *L, bp_sink *sink, uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const uint32_t sx = L->stride[1];
    size_t c1 = L->begin;
    uint64_t c = 0;
    for (size_t p = L->begin; p < L->end; ++p) {
        const uint32_t K = keys[p];
        const grid_probe pr = grid_probe_make(bx + 4 * p, 2);
        size_t j = p + 1;
        for (;;) {
            GRID_TRY2(j, K + 1);
            GRID_TRY2(j + 1, K + 1);
            if (BP_LIKELY(keys[j + 1] > K + 1)) break;
            j += 2;
        }
        const uint32_t lo = K + sx - 1, hi = K + sx + 1;
        GRID_ADVANCE(c1, lo);
        for (j = c1;; j += 3) {
            GRID_TRY2(j, hi);
            GRID_TRY2(j + 1, hi);
            GRID_TRY2(j + 2, hi);
            if (BP_LIKELY(keys[j + 2] > hi)) break;
        }
    }
    *checks += c;
    return BP_OK;
}

// Same-level pairs, 3D: the 13 forward neighbours are four runs of three consecutive keys
// (next row; previous, same and next row of the next plane) besides the next cell.
static bp_status grid_level_pairs3(const bp_grid *g, const grid_level *L, bp_sink *sink, uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const uint32_t sx = L->stride[1], sxy = L->stride[2];
    const uint32_t off[4] = {sx, sxy - sx, sxy, sxy + sx};
    size_t cur[4] = {L->begin, L->begin, L->begin, L->begin};
    uint64_t c = 0;
    for (size_t p = L->begin; p < L->end; ++p) {
        const uint32_t K = keys[p];
        const grid_probe pr = grid_probe_make(bx + 6 * p, 3);
        size_t j = p + 1;
        for (;;) {
            GRID_TRY3(j, K + 1);
            GRID_TRY3(j + 1, K + 1);
            if (BP_LIKELY(keys[j + 1] > K + 1)) break;
            j += 2;
        }
        for (int r = 0; r < 4; ++r) {
            const uint32_t lo = K + off[r] - 1, hi = K + off[r] + 1;
            size_t q = cur[r];
            GRID_ADVANCE(q, lo);
            cur[r] = q;
            for (j = q;; j += 3) {
                GRID_TRY3(j, hi);
                GRID_TRY3(j + 1, hi);
                GRID_TRY3(j + 2, hi);
                if (BP_LIKELY(keys[j + 2] > hi)) break;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// The cells of level l that can hold the min corner of a box overlapping the level-0 cell
// range [c0, c1]: a box of level l spans at most two cells, so its min cell is at most one
// before c0 (and not after c1). Clamped to the grid, so ranges never wrap into the next row.
static void grid_region(const grid_geom *G, int l, const int64_t c0[3], const int64_t c1[3], int64_t lo[3],
                        int64_t hi[3]) {
    for (int a = 0; a < 3; ++a) {
        if (a < G->dim) {
            lo[a] = (c0[a] >> l) - 1;
            if (lo[a] < 0) lo[a] = 0;
            hi[a] = c1[a] >> l;
        } else {
            lo[a] = hi[a] = 0;
        }
    }
}

// Cross-level pairs: each box of level m against the finer levels, as a region query of its
// own box (each pair is found from its coarser box only).
static bp_status grid_cross_pairs(const bp_grid *g, int m, bp_sink *sink, uint64_t *checks) {
    const grid_geom *G = &g->geom;
    const int d = G->dim;
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const grid_level *M = &G->lv[m];
    uint64_t c = 0;
    for (size_t p = M->begin; p < M->end; ++p) {
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
        for (int l = 0; l < m; ++l) {
            const grid_level *L = &G->lv[l];
            if (L->begin == L->end) continue;
            int64_t lo[3], hi[3];
            grid_region(G, l, c0, c1, lo, hi);
            for (int64_t z = lo[2]; z <= hi[2]; ++z) {
                for (int64_t y = lo[1]; y <= hi[1]; ++y) {
                    const uint32_t klo = (uint32_t)(L->base + (uint64_t)(z + 1) * L->stride[2] +
                                                    (uint64_t)(y + 1) * L->stride[1] + (uint64_t)(lo[0] + 1));
                    const uint32_t khi = klo + (uint32_t)(hi[0] - lo[0]);
                    size_t j = grid_lower_bound(g, l, klo);
                    const size_t j0 = j;
                    for (; keys[j] <= khi; ++j) {
                        const float *b = bx + (size_t)(2 * d) * j;
                        int hit = d == 2 ? grid_hit2(&pr, b) : grid_hit3(&pr, b);
                        if (hit) {
                            bp_status st = bp_sink_push(sink, ids[p], ids[j]);
                            if (st != BP_OK) return st;
                        }
                    }
                    c += j - j0;
                }
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Small worlds (2D): cells as lists through a dense table
//
// With few boxes the sorted path is bound by its fixed cost per box, not by memory: the key
// pass, the merge of the boxes that changed cell, and the cursor that finds the next row (a
// chain of dependent loads from box to box). When level 0 has few cells, so that a table of
// list heads for all of them stays in cache, and every box fits level 0, the grid instead links
// each box into its cell's list in input order: no sort and no order to keep, and the five
// lists a box meets (the rest of its own cell, the next cell, three cells of the next row) are
// direct loads of the table, independent from box to box. docs/grid.md gives the measurements.
#ifndef GRID_DENSE_MAX_CELLS
#define GRID_DENSE_MAX_CELLS ((uint64_t)1 << 18)  // 1 MiB of list heads
#endif
// Sparser than this many cells per box, the table costs more to keep than the sort it saves.
#define GRID_DENSE_CELLS_PER_BOX 16
// A link (a list head or next[i]) is a box index or GRID_EMPTY, with GRID_MULTI set when the
// list it starts holds two boxes or more: one test of the first links tells whether any list
// needs walking further.
#define GRID_EMPTY 0x7FFFFFFFu
#define GRID_MULTI 0x80000000u
// The table is read 16 bytes at a time from the first cell of the next row.
#define GRID_HEAD_PAD 4

// Whether the table can serve this frame (not whether it should: see grid_dense_fits).
static bool grid_dense_possible(const bp_grid *g, const bp_frame *f) {
    const grid_geom *G = &g->geom;
    if (f->dim != 2 || f->n == 0 || f->n >= GRID_EMPTY || G->lv[0].size > GRID_DENSE_MAX_CELLS) return false;
    // Every box must fit level 0 (checked exactly while linking; this spares a wasted pass).
    for (int a = 0; a < 2; ++a)
        if (!((double)f->size_max[a] <= G->cell[a])) return false;
    return true;
}

// AUTO takes the table for sparse cells only: where many boxes share a cell (`clustered` from
// 30,000 boxes, `seed`, `line`) the lists are walked box by box and the sorted runs are faster
// (docs/grid.md). Crowding is the share of boxes whose cell already held one, measured on the
// last frame by either layout; two thresholds so that a scene near one does not flip-flop
// (each switch to the sorted layout costs it a full sort).
#define GRID_CROWDED_ABOVE 0.30
#define GRID_SPARSE_BELOW 0.20

static bool grid_dense_fits(const bp_grid *g, const bp_frame *f) {
    const bp_grid_layout layout = bp_context_def_of(g->base.ctx)->grid.layout;
    if (layout == BP_GRID_LAYOUT_SORTED || !grid_dense_possible(g, f)) return false;
    if (layout == BP_GRID_LAYOUT_TABLE) return true;
    return !g->crowded && g->geom.lv[0].size <= (uint64_t)GRID_DENSE_CELLS_PER_BOX * f->n;
}

// Records this frame's crowding: `shared` of n boxes found their cell occupied.
static void grid_note_crowding(bp_grid *g, size_t shared, size_t n) {
    const double frac = n ? (double)shared / (double)n : 0.0;
    g->crowded = g->crowded ? frac > GRID_SPARSE_BELOW : frac > GRID_CROWDED_ABOVE;
}

// Puts the table back to all GRID_EMPTY. A fill of the range the last call used: cheaper than
// clearing its boxes' cells one by one (random stores), as the table has few cells per box.
static void grid_dense_clear(bp_grid *g) {
    uint32_t *BP_RESTRICT head = g->head;
    for (size_t c = 0; c < g->dirty; ++c) head[c] = GRID_EMPTY;
    g->dirty = 0;
}

static bp_status grid_dense_reserve(bp_grid *g, size_t n) {
    bp_context *ctx = g->base.ctx;
    const size_t cells = (size_t)g->geom.lv[0].size + GRID_HEAD_PAD;
    BP_RESERVE_DISCARD(ctx, g->keys, g->keys_cap, n + GRID_PAD);
    BP_RESERVE_DISCARD(ctx, g->boxes, g->boxes_cap, (n + GRID_PAD) * 4);
    BP_RESERVE_DISCARD(ctx, g->next, g->next_cap, n + 1);
    if (cells > g->head_cap) {
        bp_status st = BP_OK;
        uint32_t *h = bp_grow(ctx, g->head, &g->head_cap, cells, sizeof *h, false, &st);
        if (st != BP_OK) return st;
        g->head = h;
        g->head_ok = false;
    }
    if (!g->head_ok) {
        for (size_t c = 0; c < g->head_cap; ++c) g->head[c] = GRID_EMPTY;
        g->head_ok = true;
    }
    return BP_OK;
}

#if defined(GRID_AVX512)
static bool grid_has_avx512(void) {
    static int cached = -1;  // benign race: every thread computes the same value
    if (cached < 0) cached = __builtin_cpu_supports("avx512f") ? 1 : 0;
    return cached == 1;
}

// The key pass of grid_dense_link2 for whole groups of 16 boxes, four to a register, the same
// arithmetic as the SSE loop. Returns the boxes done; ORs (span - 1) > 0 flags into *wide.
__attribute__((target("avx512f"))) static size_t grid_dense_keys_avx512(const grid_geom *G, const float *src,
                                                                        size_t n, uint32_t *BP_RESTRICT keys,
                                                                        float *BP_RESTRICT nb, uint32_t *wide) {
    const __m512 O = _mm512_setr4_ps(G->fo[0], G->fo[1], G->fo[0], G->fo[1]);
    const __m512 I = _mm512_setr4_ps(G->fi[0], G->fi[1], G->fi[0], G->fi[1]);
    const __m512 M = _mm512_setr4_ps(G->fg[0], G->fg[1], G->fg[0], G->fg[1]);
    const __m512i neg_max = _mm512_setr4_epi32(0, 0, (int)0x80000000u, (int)0x80000000u);
    const int sx = (int)G->lv[0].stride[1];
    // key = x0 + y0 * sx + sx + 1, summed in lane 0 of each box.
    const __m512i mul = _mm512_setr4_epi32(1, sx, 0, 0);
    const __m512i base = _mm512_set1_epi32(sx + 1);
    __m512i span = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m512i key4[4];
        for (int q = 0; q < 4; ++q) {
            const __m512 v = _mm512_loadu_ps(src + 4 * (k + 4 * (size_t)q));
            _mm512_storeu_si512((void *)(nb + 4 * (k + 4 * (size_t)q)), _mm512_xor_si512(_mm512_castps_si512(v), neg_max));
            __m512 t = _mm512_mul_ps(_mm512_sub_ps(v, O), I);
            t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), M);
            const __m512i c = _mm512_cvttps_epi32(t);
            // (x1 - x0, y1 - y0) in lanes 2 and 3: above 1 means a coarser level.
            span = _mm512_or_si512(span, _mm512_sub_epi32(c, _mm512_shuffle_epi32(c, _MM_PERM_BADC)));
            const __m512i p = _mm512_mullo_epi32(c, mul);
            key4[q] = _mm512_add_epi32(p, _mm512_shuffle_epi32(p, _MM_PERM_AAAB));
        }
        // Lane 0 of each box (lanes 0, 4, 8, 12 of each register) into one register of 16.
        const __m512i lo = _mm512_permutex2var_epi32(
            key4[0], _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), key4[1]);
        const __m512i hi = _mm512_permutex2var_epi32(
            key4[2], _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), key4[3]);
        const __m512i all = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
        _mm512_storeu_si512((void *)(keys + k), _mm512_add_epi32(all, base));
    }
    // Only lanes 2 and 3 hold spans (lanes 0 and 1 hold x0 - x1 and y0 - y1, <= 0).
    const __m512i spans = _mm512_and_si512(span, _mm512_setr4_epi32(0, 0, -1, -1));
    *wide |= (uint32_t)_mm512_reduce_or_epi32(_mm512_srli_epi32(spans, 1));
    return k;
}
#endif

// Keys and boxes (min, -max) in input order, each box pushed on its cell's list. False when a
// box spans more than two cells on an axis (it needs a coarser level): the caller undoes it.
static bool grid_dense_link2(bp_grid *g, const bp_frame *f, size_t n) {
    const grid_geom *G = &g->geom;
    const uint32_t sx = G->lv[0].stride[1];
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->head, *BP_RESTRICT next = g->next;
    float *BP_RESTRICT nb = g->boxes;
    const float *BP_RESTRICT src = f->boxes;
    uint32_t wide = 0;
    size_t shared = 0;
#if defined(__SSE2__)
    const __m128 O = _mm_setr_ps(G->fo[0], G->fo[1], G->fo[0], G->fo[1]);
    const __m128 I = _mm_setr_ps(G->fi[0], G->fi[1], G->fi[0], G->fi[1]);
    const __m128 M = _mm_setr_ps(G->fg[0], G->fg[1], G->fg[0], G->fg[1]);
    const __m128 neg_max = _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f);
#endif
    size_t k = 0;
#if defined(GRID_AVX512)
    if (grid_has_avx512()) {
        k = grid_dense_keys_avx512(G, src, n, keys, nb, &wide);
        for (size_t q = 0; q < k; ++q) {
            const uint32_t key = keys[q], h = head[key];
            next[q] = h;
            head[key] = (uint32_t)q | (h != GRID_EMPTY ? GRID_MULTI : 0u);
            shared += h != GRID_EMPTY;
        }
    }
#endif
    for (; k < n; ++k) {
        const float *b = src + 4 * k;
#if defined(__SSE2__)
        const __m128 v = _mm_loadu_ps(b);
        _mm_storeu_ps(nb + 4 * k, _mm_xor_ps(v, neg_max));
        __m128 t = _mm_mul_ps(_mm_sub_ps(v, O), I);
        t = _mm_min_ps(_mm_max_ps(t, _mm_setzero_ps()), M);
        int32_t c[4];
        _mm_storeu_si128((__m128i *)(void *)c, _mm_cvttps_epi32(t));
        const uint32_t x0 = (uint32_t)c[0], y0 = (uint32_t)c[1], x1 = (uint32_t)c[2], y1 = (uint32_t)c[3];
#else
        float *o = nb + 4 * k;
        o[0] = b[0];
        o[1] = b[1];
        o[2] = -b[2];
        o[3] = -b[3];
        const uint32_t x0 = (uint32_t)grid_coord(b[0], G->fo[0], G->fi[0], G->fg[0]);
        const uint32_t y0 = (uint32_t)grid_coord(b[1], G->fo[1], G->fi[1], G->fg[1]);
        const uint32_t x1 = (uint32_t)grid_coord(b[2], G->fo[0], G->fi[0], G->fg[0]);
        const uint32_t y1 = (uint32_t)grid_coord(b[3], G->fo[1], G->fi[1], G->fg[1]);
#endif
        wide |= ((x1 - x0) | (y1 - y0)) >> 1;  // coordinates are monotone: x1 >= x0
        const uint32_t key = (y0 + 1) * sx + x0 + 1;
        keys[k] = key;
        const uint32_t h = head[key];
        next[k] = h;
        head[key] = (uint32_t)k | (h != GRID_EMPTY ? GRID_MULTI : 0u);
        shared += h != GRID_EMPTY;
    }
    grid_note_crowding(g, shared, n);
    g->dirty = (size_t)G->lv[0].size + GRID_HEAD_PAD;
    return wide == 0;
}

// The pairs of box i with the boxes after the first of list `link` (the first was tested with
// the others' first boxes).
static bp_status grid_dense_rest(const bp_grid *g, uint32_t i, uint32_t link, const float *probe, bp_sink *sink,
                                 uint64_t *checks) {
    const uint32_t *next = g->next;
    const float *nb = g->boxes;
    for (uint32_t u = next[link & ~GRID_MULTI]; (u & ~GRID_MULTI) != GRID_EMPTY; u = next[u & ~GRID_MULTI]) {
        const uint32_t e = u & ~GRID_MULTI;
        const float *b = nb + 4 * (size_t)e;
        ++*checks;
        if ((b[0] <= probe[0]) & (b[1] <= probe[1]) & (b[2] <= probe[2]) & (b[3] <= probe[3])) {
            bp_status st = bp_sink_push(sink, i, e);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

#define GRID_DENSE_BLOCK 128

// Pass 1 for boxes [i0, i1): appends the candidates to ci/ce (room for 10 per box and 16 more):
// the first box of each list, and its second when the list has two or more. The boxes with a
// list of three or more go to slow. Returns the candidate count.
static size_t grid_dense_cands(const bp_grid *g, uint32_t i0, uint32_t i1, uint32_t *BP_RESTRICT ci,
                               uint32_t *BP_RESTRICT ce, uint32_t *BP_RESTRICT slow, size_t *ns_out) {
    const uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->head, *BP_RESTRICT next = g->next;
    const uint32_t sx = g->geom.lv[0].stride[1];
    const uint32_t last = (uint32_t)g->n;  // next[last] is GRID_EMPTY
    size_t nc = 0, ns = 0;
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t K = keys[i];
        const uint32_t link[5] = {next[i], head[K + 1], head[K + sx - 1], head[K + sx], head[K + sx + 1]};
        uint32_t deep = 0;
        for (int r = 0; r < 5; ++r) {
            const uint32_t e = link[r] & ~GRID_MULTI;
            ci[nc] = i;
            ce[nc] = e;
            nc += e != GRID_EMPTY;
            const uint32_t l2 = next[e < last ? e : last];
            ci[nc] = i;
            ce[nc] = l2 & ~GRID_MULTI;
            nc += link[r] >> 31;
            deep |= l2;  // flagged only when the list holds three or more
        }
        slow[ns] = i;
        ns += deep >> 31;
    }
    *ns_out = ns;
    return nc;
}

#if defined(GRID_AVX512)
// Pass 1, 16 boxes at a time: the four table links by gathers, each list's candidates appended
// by a compress (to a register, then a full store: the buffers have 16 entries of slack).
// Second boxes, rare on sparse scenes, behind one test per 16 boxes.
__attribute__((target("avx512f,popcnt"))) static size_t grid_dense_cands_avx512(
    const bp_grid *g, uint32_t i0, uint32_t i1, uint32_t *BP_RESTRICT ci, uint32_t *BP_RESTRICT ce,
    uint32_t *BP_RESTRICT slow, size_t *ns_out) {
    const uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->head, *BP_RESTRICT next = g->next;
    const __m512i sx = _mm512_set1_epi32((int)g->geom.lv[0].stride[1]);
    const __m512i one = _mm512_set1_epi32(1), empty = _mm512_set1_epi32((int)GRID_EMPTY);
    const __m512i multi = _mm512_set1_epi32((int)GRID_MULTI);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    size_t nc = 0, ns = 0;
    for (uint32_t i = i0; i < i1; i += 16) {
        const __mmask16 m = (__mmask16)(i1 - i >= 16 ? 0xFFFFu : (1u << (i1 - i)) - 1u);
        const __m512i I = _mm512_add_epi32(_mm512_set1_epi32((int)i), iota);
        const __m512i K = _mm512_maskz_loadu_epi32(m, keys + i);
        const __m512i row = _mm512_add_epi32(K, sx);
        __m512i l[5];
        l[0] = _mm512_mask_loadu_epi32(empty, m, next + i);
        l[1] = _mm512_mask_i32gather_epi32(empty, m, _mm512_add_epi32(K, one), head, 4);
        l[2] = _mm512_mask_i32gather_epi32(empty, m, _mm512_sub_epi32(row, one), head, 4);
        l[3] = _mm512_mask_i32gather_epi32(empty, m, row, head, 4);
        l[4] = _mm512_mask_i32gather_epi32(empty, m, _mm512_add_epi32(row, one), head, 4);
        for (int r = 0; r < 5; ++r) {
            const __m512i e = _mm512_andnot_si512(multi, l[r]);
            const __mmask16 k = _mm512_cmpneq_epi32_mask(e, empty);
            _mm512_storeu_si512((void *)(ci + nc), _mm512_maskz_compress_epi32(k, I));
            _mm512_storeu_si512((void *)(ce + nc), _mm512_maskz_compress_epi32(k, e));
            nc += (size_t)__builtin_popcount(k);
        }
        __m512i any = _mm512_or_si512(_mm512_or_si512(l[0], l[1]), _mm512_or_si512(l[2], l[3]));
        any = _mm512_or_si512(any, l[4]);
        if (BP_UNLIKELY(_mm512_test_epi32_mask(any, multi))) {
            // Some lists hold two boxes or more: their second boxes too.
            __m512i deep = _mm512_setzero_si512();
            for (int r = 0; r < 5; ++r) {
                const __mmask16 k = _mm512_test_epi32_mask(l[r], multi);
                if (!k) continue;
                const __m512i l2 = _mm512_mask_i32gather_epi32(empty, k, _mm512_andnot_si512(multi, l[r]), next, 4);
                _mm512_storeu_si512((void *)(ci + nc), _mm512_maskz_compress_epi32(k, I));
                _mm512_storeu_si512((void *)(ce + nc), _mm512_maskz_compress_epi32(k, _mm512_andnot_si512(multi, l2)));
                nc += (size_t)__builtin_popcount(k);
                deep = _mm512_or_si512(deep, l2);
            }
            const __mmask16 ms = _mm512_test_epi32_mask(deep, multi);
            _mm512_storeu_si512((void *)(slow + ns), _mm512_maskz_compress_epi32(ms, I));
            ns += (size_t)__builtin_popcount(ms);
        }
    }
    *ns_out = ns;
    return nc;
}

#endif

// Two passes per block of boxes, without a branch on the data: the boxes are in input order, so
// the table and box loads come from all over the cache, and a mispredicted branch waiting on
// them would throw away the work of many boxes in flight. Pass 1 lists the candidates; pass 2
// tests them (about 0.6 per box on `uniform`, against 5 links read), writing every candidate to
// the sink and keeping the hits. Lists of three boxes or more are walked apart.
static bp_status grid_dense_pairs2(const bp_grid *g, size_t n, bp_sink *sink, uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->head, *BP_RESTRICT next = g->next;
    const float *BP_RESTRICT nb = g->boxes;
    const uint32_t sx = g->geom.lv[0].stride[1];
    const uint32_t last = (uint32_t)n;
    uint32_t ci[10 * GRID_DENSE_BLOCK + 16], ce[10 * GRID_DENSE_BLOCK + 16], slow[GRID_DENSE_BLOCK + 16];
    uint64_t c = 0;
#if defined(GRID_AVX512)
    const bool avx512 = grid_has_avx512();
#endif
    for (uint32_t i0 = 0; i0 < last; i0 += GRID_DENSE_BLOCK) {
        const uint32_t i1 = last - i0 > GRID_DENSE_BLOCK ? i0 + GRID_DENSE_BLOCK : last;
        size_t ns;
#if defined(GRID_AVX512)
        const size_t nc = avx512 ? grid_dense_cands_avx512(g, i0, i1, ci, ce, slow, &ns)
                                 : grid_dense_cands(g, i0, i1, ci, ce, slow, &ns);
#else
        const size_t nc = grid_dense_cands(g, i0, i1, ci, ce, slow, &ns);
#endif
        c += nc;
        const uint32_t split = sink->split;
        for (size_t q0 = 0; q0 < nc; q0 += BP_SINK_MIN_ROOM) {
            const size_t q1 = nc - q0 > BP_SINK_MIN_ROOM ? q0 + BP_SINK_MIN_ROOM : nc;
            bp_status st = bp_sink_room(sink, q1 - q0);
            if (st != BP_OK) return st;
            bp_pair *BP_RESTRICT out = sink->buf;
            size_t count = sink->count;
            for (size_t q = q0; q < q1; ++q) {
                const uint32_t i = ci[q], e = ce[q];
                const float *a = nb + 4 * (size_t)i, *b = nb + 4 * (size_t)e;
#if defined(__SSE2__)
                // Stored (min, -max); the probe is (max, -min): b meets a when b <= probe lane by lane.
                const __m128 A = _mm_loadu_ps(a);
                const __m128 P = _mm_xor_ps(_mm_shuffle_ps(A, A, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f));
                unsigned hit = _mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(b), P)) == 15;
#else
                unsigned hit = (b[0] <= -a[2]) & (b[1] <= -a[3]) & (b[2] <= -a[0]) & (b[3] <= -a[1]);
#endif
                hit &= (unsigned)(!split | ((i < split) != (e < split)));
                out[count].i = i < e ? i : e;
                out[count].j = i < e ? e : i;
                count += hit;
            }
            sink->count = count;
        }
        for (size_t q = 0; q < ns; ++q) {
            const uint32_t i = slow[q], K = keys[i];
            const float *a = nb + 4 * (size_t)i;
            const float probe[4] = {-a[2], -a[3], -a[0], -a[1]};
            const uint32_t link[5] = {next[i], head[K + 1], head[K + sx - 1], head[K + sx], head[K + sx + 1]};
            for (int r = 0; r < 5; ++r) {
                if (!(link[r] & GRID_MULTI)) continue;
                const uint32_t l2 = next[link[r] & ~GRID_MULTI];
                if (!(l2 & GRID_MULTI)) continue;
                bp_status st = grid_dense_rest(g, i, l2, probe, sink, &c);  // from the third box on
                if (st != BP_OK) return st;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// The dense path of one call. *done false: the frame does not fit it (the sorted path runs).
static bp_status grid_dense_find(bp_grid *g, const bp_frame *f, bp_sink *sink, uint64_t *checks, bool *done) {
    const size_t n = f->n;
    *done = false;
    if (!grid_dense_fits(g, f)) return BP_OK;
    bp_status st = grid_dense_reserve(g, n);
    if (st != BP_OK) return st;
    // keys and boxes are overwritten: the sorted path's order is gone.
    g->ordered = false;
    g->dense = false;
    if (!grid_dense_link2(g, f, n)) {
        grid_dense_clear(g);
        return BP_OK;
    }
    for (int l = 0; l < g->geom.levels; ++l) g->geom.lv[l].begin = g->geom.lv[l].end = 0;
    g->geom.lv[0].end = n;
    float *sentinel = g->boxes + 4 * n;
    for (int e = 0; e < 4; ++e) sentinel[e] = INFINITY;
    g->next[n] = GRID_EMPTY;
    g->n = n;
    g->dense = true;
    *done = true;
    return grid_dense_pairs2(g, n, sink, checks);
}

static bp_status grid_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_grid *g = (bp_grid *)m;
    const size_t n = f->n;
    const int d = f->dim;
    // First, while keys still hold the last dense call's cells.
    grid_dense_clear(g);
    g->dense = false;
    memset(g->rows_ok, 0, sizeof g->rows_ok);
    const bool same_grid = grid_choose(g, f);
    bool done;
    bp_status st = grid_dense_find(g, f, sink, checks, &done);
    if (st != BP_OK || done) return st;
    st = grid_reserve(g, n, d);
    if (st != BP_OK) return st;
    grid_geom *G = &g->geom;
    unsigned bits = 1;
    while (bits < 32 && (G->total >> bits) != 0) ++bits;
    g->key_bits = bits;

    const bool coherent = g->ordered && g->n == n && same_grid;
    if (!(g->ordered && g->n == n))
        for (size_t k = 0; k < n; ++k) g->perm[k] = (uint32_t)k;
    for (size_t k = n; k < n + GRID_PAD; ++k) g->perm[k] = 0;  // read by the prefetches
    grid_extract x = {coherent ? g->keys : NULL, g->mkeys, g->mpos, 0, n / GRID_MOVED_MAX_DIV, 0};
    if (d == 2) grid_keys2(g, f, n, &x);
    else grid_keys3(g, f, n, &x);
    grid_sort_gather(g, n, d, &x);
    // The new order becomes next frame's starting point.
    {
        uint32_t *t = g->perm;
        g->perm = g->perm2;
        g->perm2 = t;
        size_t tc = g->perm_cap;
        g->perm_cap = g->perm2_cap;
        g->perm2_cap = tc;
    }
    for (size_t k = n; k < n + GRID_PAD; ++k) g->keys[k] = GRID_SENTINEL;
    // The padding boxes are read (and ignored: their keys are past every range) by the tests.
    memset(g->boxes + (size_t)(2 * d) * n, 0, (size_t)(2 * d) * GRID_PAD * sizeof(float));
    g->n = n;
    g->ordered = true;

    // Level ranges in the sorted order.
    int coarse = 0;  // the last non-empty level
    for (int l = 0; l < G->levels; ++l) {
        grid_level *L = &G->lv[l];
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->keys[mid] < L->base) lo = mid + 1;
            else hi = mid;
        }
        L->begin = lo;
        hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->keys[mid] < L->base + L->size) lo = mid + 1;
            else hi = mid;
        }
        L->end = lo;
        if (L->end > L->begin) coarse = l;
    }
    if (coarse > 0) {
        st = grid_build_rows(g, n, coarse);
        if (st != BP_OK) return st;
    }
    // Where the table could serve, the crowding that decides between the layouts next frame.
    if (coarse == 0 && grid_dense_possible(g, f)) {
        size_t shared = 0;
        for (size_t j = 1; j < n; ++j) shared += g->keys[j] == g->keys[j - 1];
        grid_note_crowding(g, shared, n);
    }
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        if (L->begin == L->end) continue;
        st = d == 2 ? grid_level_pairs2(g, L, sink, checks) : grid_level_pairs3(g, L, sink, checks);
        if (st != BP_OK) return st;
        if (l > 0) {
            st = grid_cross_pairs(g, l, sink, checks);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Queries, drawing, validation

// Region query from the lists: a box of level 0 overlapping the query has its min corner in the
// cells from one before the query's low corner to its high corner.
static bp_status grid_dense_query(const bp_grid *g, const bp_frame *f, const bp_query *q, bp_index_buf *out) {
    const grid_geom *G = &g->geom;
    const uint32_t sx = G->lv[0].stride[1];
    const float qb[4] = {q->lo[0], q->lo[1], q->hi[0], q->hi[1]};
    int64_t c0[3], c1[3], lo[3], hi[3];
    grid_cells(G, qb, c0, c1);
    grid_region(G, 0, c0, c1, lo, hi);
    for (int64_t y = lo[1]; y <= hi[1]; ++y) {
        for (int64_t x = lo[0]; x <= hi[0]; ++x) {
            const uint32_t key = (uint32_t)(y + 1) * sx + (uint32_t)(x + 1);
            for (uint32_t u = g->head[key]; (u & ~GRID_MULTI) != GRID_EMPTY; u = g->next[u & ~GRID_MULTI]) {
                const uint32_t e = u & ~GRID_MULTI;
                if (bp_query_hit(q, f, e)) {
                    bp_status st = bp_index_push(out, e);
                    if (st != BP_OK) return st;
                }
            }
        }
    }
    return BP_OK;
}

// Every box in the list of its own cell, once; lists in decreasing index order (so they end),
// flags right; the table empty elsewhere; keys and boxes those of the frame.
static bp_status grid_dense_validate(const bp_grid *g, const bp_frame *f) {
    const grid_geom *G = &g->geom;
    const size_t n = f->n;
    if (g->n != n || f->dim != 2 || !g->have_geom || G->dim != 2 || !g->head_ok) return BP_ERR_INVALID_ARG;
    const size_t cells = (size_t)G->lv[0].size + GRID_HEAD_PAD;
    if (g->dirty != cells || cells > g->head_cap) return BP_ERR_INVALID_ARG;
    const uint32_t sx = G->lv[0].stride[1];
    for (size_t i = 0; i < n; ++i) {
        const float *b = bp_frame_box(f, i), *sb = g->boxes + 4 * i;
        for (int e = 0; e < 2; ++e)
            if (sb[e] != b[e] || -sb[2 + e] != b[2 + e]) return BP_ERR_INVALID_ARG;
        int64_t c0[3], c1[3];
        grid_cells(G, b, c0, c1);
        if (c1[0] - c0[0] > 1 || c1[1] - c0[1] > 1) return BP_ERR_INVALID_ARG;
        if (g->keys[i] != (uint32_t)(c0[1] + 1) * sx + (uint32_t)(c0[0] + 1)) return BP_ERR_INVALID_ARG;
    }
    const float *sentinel = g->boxes + 4 * n;
    for (int e = 0; e < 4; ++e)
        if (sentinel[e] != INFINITY) return BP_ERR_INVALID_ARG;
    if (g->next[n] != GRID_EMPTY) return BP_ERR_INVALID_ARG;
    size_t seen = 0;
    for (size_t c = 0; c < cells; ++c) {
        uint32_t u = g->head[c], prev = UINT32_MAX;
        for (; (u & ~GRID_MULTI) != GRID_EMPTY; u = g->next[u & ~GRID_MULTI]) {
            const uint32_t e = u & ~GRID_MULTI;
            if (e >= n || e >= prev || g->keys[e] != c) return BP_ERR_INVALID_ARG;
            const bool more = (g->next[e] & ~GRID_MULTI) != GRID_EMPTY;
            if (((u & GRID_MULTI) != 0) != more) return BP_ERR_INVALID_ARG;
            prev = e;
            ++seen;
        }
        if (u != GRID_EMPTY) return BP_ERR_INVALID_ARG;
    }
    return seen == n ? BP_OK : BP_ERR_INVALID_ARG;
}

static bp_status grid_query(bp_algorithm *m, const bp_frame *f, const bp_query *q, bp_index_buf *out) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    if (g->dense && g->n == f->n) return grid_dense_query(g, f, q, out);
    if (g->n != f->n || !g->ordered) return BP_ERR_NO_BOXES;
    float qb[6];
    for (int a = 0; a < d; ++a) {
        qb[a] = q->lo[a];
        qb[d + a] = q->hi[a];
    }
    int64_t c0[3], c1[3];
    grid_cells(G, qb, c0, c1);
    const uint32_t *keys = g->keys, *ids = g->perm;
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        if (L->begin == L->end) continue;
        int64_t lo[3], hi[3];
        grid_region(G, l, c0, c1, lo, hi);
        const uint64_t rows = (uint64_t)(hi[1] - lo[1] + 1) * (uint64_t)(hi[2] - lo[2] + 1);
        if (rows >= L->end - L->begin) {
            // More rows than boxes: scanning the level is cheaper than a search per row.
            for (size_t j = L->begin; j < L->end; ++j) {
                if (bp_query_hit(q, f, ids[j])) {
                    bp_status st = bp_index_push(out, ids[j]);
                    if (st != BP_OK) return st;
                }
            }
            continue;
        }
        for (int64_t z = lo[2]; z <= hi[2]; ++z) {
            for (int64_t y = lo[1]; y <= hi[1]; ++y) {
                const uint32_t klo = (uint32_t)(L->base + (uint64_t)(z + 1) * L->stride[2] +
                                                (uint64_t)(y + 1) * L->stride[1] + (uint64_t)(lo[0] + 1));
                const uint32_t khi = klo + (uint32_t)(hi[0] - lo[0]);
                for (size_t j = grid_lower_bound(g, l, klo); keys[j] <= khi; ++j) {
                    if (bp_query_hit(q, f, ids[j])) {
                        bp_status st = bp_index_push(out, ids[j]);
                        if (st != BP_OK) return st;
                    }
                }
            }
        }
    }
    return BP_OK;
}

// Draws the cell of `key` in level l (coarser levels get smaller level numbers, 1 .. levels).
static void grid_draw_key(const grid_geom *G, int l, uint32_t key, const bp_debug_draw *draw) {
    const int d = G->dim;
    const grid_level *L = &G->lv[l];
    const double scale = ldexp(1.0, l);
    uint64_t local = key - L->base;
    int64_t c[3] = {0, 0, 0};
    for (int a = d - 1; a >= 0; --a) {
        c[a] = (int64_t)(local / L->stride[a]) - 1;
        local %= L->stride[a];
    }
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) {
        lo[a] = (float)(G->origin[a] + (double)c[a] * scale * G->cell[a]);
        hi[a] = (float)(G->origin[a] + (double)(c[a] + 1) * scale * G->cell[a]);
    }
    draw->box(lo, hi, 1 + (G->levels - 1 - l), draw->user);
}

// Draws the window (level 0); then, when level 0 has at most GRID_DRAW_CELLS cells, every one of
// them, empty or not (level `levels + 1`: the lattice, as in the seeds' pictures); then every
// occupied cell, coarser levels with smaller numbers (1 .. levels).
static void grid_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    if (!draw->box || !g->have_geom) return;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) {
        lo[a] = (float)G->wlo[a];
        hi[a] = (float)G->whi[a];
    }
    draw->box(lo, hi, 0, draw->user);
    uint64_t cells = 1;
    for (int a = 0; a < d; ++a) cells *= (uint64_t)G->g0[a];
    if (cells <= GRID_DRAW_CELLS) {
        for (uint64_t k = 0; k < cells; ++k) {
            uint64_t r = k;
            for (int a = 0; a < d; ++a) {
                const int64_t c = (int64_t)(r % (uint64_t)G->g0[a]);
                r /= (uint64_t)G->g0[a];
                lo[a] = (float)(G->origin[a] + (double)c * G->cell[a]);
                hi[a] = (float)(G->origin[a] + (double)(c + 1) * G->cell[a]);
            }
            draw->box(lo, hi, G->levels + 1, draw->user);
        }
    }
    if (g->dense) {
        // Each occupied cell once: where box i heads its cell's list.
        for (size_t i = 0; i < g->n; ++i)
            if ((g->head[g->keys[i]] & ~GRID_MULTI) == i) grid_draw_key(G, 0, g->keys[i], draw);
        return;
    }
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        for (size_t j = L->begin; j < L->end; ++j)
            if (j == L->begin || g->keys[j] != g->keys[j - 1]) grid_draw_key(G, l, g->keys[j], draw);
    }
}

static bp_status grid_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    const size_t n = f->n;
    if (g->dense) return grid_dense_validate(g, f);
    if (g->n != n || !g->ordered || !g->have_geom || G->dim != d) return BP_ERR_INVALID_ARG;
    for (size_t k = n; k < n + GRID_PAD; ++k)
        if (g->keys[k] != GRID_SENTINEL) return BP_ERR_INVALID_ARG;
    size_t covered = 0;
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        if (L->begin != covered || L->end < L->begin) return BP_ERR_INVALID_ARG;
        covered = L->end;
        for (size_t j = L->begin; j < L->end; ++j) {
            const uint32_t i = g->perm[j];
            if (i >= n) return BP_ERR_INVALID_ARG;
            if (j > 0 && g->keys[j - 1] > g->keys[j]) return BP_ERR_INVALID_ARG;
            const float *b = bp_frame_box(f, i);
            const float *sb = g->boxes + (size_t)(2 * d) * j;
            for (int e = 0; e < d; ++e)
                if (sb[e] != b[e] || -sb[d + e] != b[d + e]) return BP_ERR_INVALID_ARG;
            int64_t c0[3], c1[3];
            grid_cells(G, b, c0, c1);
            int lev;
            if (grid_key(G, c0, c1, &lev) != g->keys[j] || lev != l) return BP_ERR_INVALID_ARG;
            // In its level, the box spans at most two cells per axis (the top level excepted:
            // there every axis has at most two cells).
            for (int a = 0; a < d; ++a)
                if ((c1[a] >> l) - (c0[a] >> l) > 1) return BP_ERR_INVALID_ARG;
        }
    }
    if (covered != n) return BP_ERR_INVALID_ARG;
    return bp_check_permutation(m->ctx, g->perm, n);
}

const bp_algorithm_class bp_grid_class = {
    .name = "grid",
    .create = grid_create,
    .destroy = grid_destroy,
    .find_pairs = grid_find_pairs,
    .reset = grid_reset,
    .query = grid_query,
    .debug_draw = grid_debug_draw,
    .validate = grid_validate,
};
