// Method `grid`, internal: the geometry shared by its two layouts, the sorted runs (any world:
// src/grid_sorted.c, grid_keys.c, grid_scan.c) and the table (small 2D worlds: src/grid_table.c),
// the state of each, and what each file offers the others (at the end). docs/grid.md.
#ifndef BP_GRID_H
#define BP_GRID_H

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "method.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Levels are tuples of per-axis shifts (docs/grid.md, "Long boxes"): at most this many.
#define GRID_MAX_LEVELS 1024
// Up to this many occupied levels, each two choose which one queries the other; beyond, the
// higher level queries the lower (targets then holds no list: toff is all zero).
#define GRID_PLAN_MAX 64
// Sentinel keys after the last box: every scan stops there without a bounds test.
#define GRID_PAD 16  // also covers the prefetch distance
#define GRID_SENTINEL UINT32_MAX
// A link (a list head or next[i]) is a box index or GRID_EMPTY, with GRID_MULTI set when the
// list it starts holds two boxes or more: one test of the first links tells whether any list
// needs walking further.
#define GRID_EMPTY 0x7FFFFFFFu
#define GRID_MULTI 0x80000000u
// A box's extent on an axis counts at most this many times its smallest extent when sizing the
// cells (grid_ideal), and beyond it the box is long on that axis (bp_grid_key).
#ifndef GRID_ELONGATION
#define GRID_ELONGATION 4.0
#endif
#if defined(__GNUC__)
#define GRID_PREFETCH_READ(p) __builtin_prefetch((p), 0, 0)
#else
#define GRID_PREFETCH_READ(p) ((void)0)
#endif

typedef struct grid_level {
    int64_t g[3];         // cells per axis (coordinates 0 .. g-1)
    uint8_t shift[3];     // the level's cells are 2^shift[a] level-0 cells on axis a
    uint32_t stride[3];   // key stride of each axis (0 past the dimension)
    // Key axes: kax[0] is the axis along which keys are contiguous (stride 1), then the row and
    // plane axes; kstride[k] = stride[kax[k]] (1, padded row, padded plane). x, y, z but on long
    // cells (grid_build_levels): there the keys run along a thin axis.
    uint8_t kax[3];
    uint32_t kstride[3];
    bool long_cells;      // shifts two or more apart (grid_key_axes)
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
    bool small;           // crowded cells of boxes mostly far smaller than them (grid_ideal)
    bool fitted;          // cells that hold the long boxes whole on every axis (grid_fit_long)
    int levels;
    int axis_levels[3];   // shifts per axis: 0 .. axis_levels[a] - 1 (1 past the dimension)
    int level_mul[3];     // level index = sum of shift[a] * level_mul[a] (x slowest)
    uint64_t total;       // keys of all levels
    grid_level lv[GRID_MAX_LEVELS];
} grid_geom;

// 16-bit codes of stored values (min x, y, z, -max x, y, z: value k of a stored box), for the
// AVX-512 kernel over crowded 3D frames (grid_sorted.soa): code k of x is (x - o[k]) * s[k] in double,
// clamped to +-GRID_CODE_MAX and truncated. Monotone in x, so for a stored value v and a probe's p,
// code(v) < code(p) means v < p and code(v) > code(p) means v > p; only equal codes need the
// floats (grid_dense.c). The window of the cells maps to +-GRID_CODE_SPAN, so a code step is
// 1/30,000 of half the window (`sizes` 3D 100,000: a window 230 wide, a step 0.0038, against
// boxes 0.2 to 60 wide), and the floats are rarely needed. Subnormal x counts as 0 (decided on
// its bits) and o[k] is a float, so no operation meets a subnormal: the codes are the same
// whatever a thread's MXCSR says (flush to zero, denormals are zero), as the thread that writes
// them and the threads that probe them may differ.
#define GRID_CODE_SPAN 30000.0
#define GRID_CODE_MAX 32000.0
typedef struct grid_codes {
    double o[6], s[6];
} grid_codes;

static inline int16_t grid_code(const grid_codes *q, int k, float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) == 0) x = 0.0f;
    double t = ((double)x - q->o[k]) * q->s[k];
    t = t > -GRID_CODE_MAX ? t : -GRID_CODE_MAX;  // (NaN: -GRID_CODE_MAX)
    t = t < GRID_CODE_MAX ? t : GRID_CODE_MAX;
    return (int16_t)(int32_t)t;
}

// The sorted layout's state (src/grid_sorted.c builds it, src/grid_keys.c orders it,
// src/grid_scan.c reads it): the frame's boxes sorted by cell key, the levels' index, the
// cross-level plan and the sorted cells of crowded 3D frames.
typedef struct grid_sorted {
    unsigned key_bits;
    // The sorted frame: object ids and boxes (2 * dim floats each; the keys are bp_grid.keys).
    uint32_t *perm;
    float *boxes;
    size_t perm_cap, boxes_cap;
    // Scratch: keys and boxes in last frame's order, the boxes that moved (keys, old positions;
    // also the radix sort's buffers), the next perm.
    uint32_t *okeys, *mkeys, *mpos, *perm2;
    float *oboxes;
    size_t okeys_cap, mkeys_cap, mpos_cap, perm2_cap, oboxes_cap;
    size_t moved;         // boxes pulled out of the order this frame
    // Index of the levels that boxes of higher levels search: rows[roff[l] + c] = first sorted
    // position of key base + c of level l (cells_ok[l]), or of padded row r (rows_ok[l]).
    uint32_t *rows;
    size_t rows_cap;
    size_t roff[GRID_MAX_LEVELS];
    bool rows_ok[GRID_MAX_LEVELS];
    bool cells_ok[GRID_MAX_LEVELS];
    // The largest extent on each axis of level l's boxes this frame, where measured (ext_ok[l],
    // grid_measure_extent: the searched levels above 0, levels of long cells, level 0 of crowds
    // of small boxes): a query or a same-level run needs the cells before a box's own only as
    // far as that reaches (grid_region_near, grid_level_pairs3_reach).
    float ext[GRID_MAX_LEVELS][3];  // rounded up
    bool ext_ok[GRID_MAX_LEVELS];
    // The levels holding boxes this frame, ascending: the pair passes and queries visit only these.
    int occupied[GRID_MAX_LEVELS];
    int occupied_count;
    // Cross-level pairs: the boxes of occupied level o query the levels targets[toff[o] ..
    // toff[o + 1]) (grid_plan_cross: for each two levels, the side with fewer row lookups).
    int toff[GRID_MAX_LEVELS + 1];
    int targets[GRID_PLAN_MAX * GRID_PLAN_MAX / 2];
    double lookups[GRID_PLAN_MAX];  // row lookups expected into each occupied level (the plan's)
    uint64_t resorts;     // frames that needed a full radix sort
    uint64_t given_up;    // ... of them, frames that tried last frame's order first
    bool coherent;        // this frame kept last frame's order (the moved boxes merged back)
    // 3D frames of crowded cells of boxes mostly far smaller than them (geom.small), with
    // AVX-512: each cell's boxes sorted by their min on the level's key axis kax[0], so that a
    // run along a row of the level is sorted by it too and stops at the first box that starts
    // past the probe (xsorted; grid_sort_cells); and, for the AVX-512 kernel, the boxes again as
    // six arrays of soa_stride 16-bit codes of (min x, y, z, -max x, y, z) (grid_code, codes: the
    // frame's), which it compares 16 lanes at a time without shuffles, in half the bytes of
    // floats.
    bool xsorted;
    int16_t *soa;
    size_t soa_cap, soa_stride;
    grid_codes codes;
} grid_sorted;

// The table layout's state (src/grid_table.c): cells are lists through a table of every level-0
// cell instead of runs of a sorted order. bp_grid.keys then holds every box's cell in input
// order (the pair tests read the frame's boxes, not a copy), head[c] links cell c's list,
// next[i] the rest of box i's. The table is GRID_EMPTY everywhere but in head[0 .. dirty) (the
// last table call's cells); head_ok false: wipe it. With workers the lists are linked through
// idx, bkey and prev (grid_table_link2_par).
typedef struct grid_table {
    bool crowded;         // AUTO: cells too full for the table (src/grid_table.c)
    bool head_ok;
    size_t dirty;
    uint32_t *head, *next;
    size_t head_cap, next_cap;
    uint32_t *idx, *bkey, *prev;
    size_t idx_cap, bkey_cap, prev_cap;
} grid_table;

// The SIMD kernels of crowded cells (src/grid_dense.c) for one instruction set: the same pairs
// in the same order as the scalar loops of src/grid_scan.c, with the same checks.
typedef struct bp_grid bp_grid;
typedef struct grid_kernels {
    int lanes;  // candidates a step: 16 (AVX-512), 8 (AVX2)
    // Stored box a (id) against the sorted boxes j, j+1, ... while keys[j] <= lim and j < end (a
    // row of a region query; end SIZE_MAX: keys alone bound it) and, with a stop axis (3D,
    // xsorted, a run within one row of a level), while they start at or before a's max on it
    // (grid_stop): pairs in order, the boxes tested added to *checks.
    bp_status (*run)(const bp_grid *g, const float *a, uint32_t id, size_t j, size_t end, uint32_t lim, int stop,
                     bp_sink *sink, uint64_t *checks);
    // The rows of a region query of stored box a (id): row r the sorted boxes from start[r]
    // while keys <= last[r] (and the stop, as above); long rows (GRID_DENSE_ROW_MIN boxes or
    // more) in steps, short ones box by box.
    bp_status (*rows)(const bp_grid *g, const float *a, uint32_t id, const size_t *start, const uint32_t *last,
                      size_t nr, int stop, bp_sink *sink, uint64_t *checks);
    // Stored box a (id) against several runs (run r: from start[r] while keys <= lim[r], and the
    // stop), each as `run` tests it, with the probe built once.
    bp_status (*runs)(const bp_grid *g, const float *a, uint32_t id, const size_t *start, const uint32_t *lim,
                      size_t nr, int stop, bp_sink *sink, uint64_t *checks);
    // The same-level pairs of boxes [p0, p1) of level L, as the scalar loops find them. cursor:
    // the next-row cursor(s) of the scalar loop, advanced alike.
    bp_status (*pairs2)(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, size_t *cursor, bp_sink *sink,
                        uint64_t *checks);
    bp_status (*pairs3)(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, size_t cursor[4],
                        bp_sink *sink, uint64_t *checks);
} grid_kernels;

// Which kernels a grid runs, from bp_context_def.grid.kernels (GRID_KERNELS_*) and the CPU,
// chosen when the grid is created.
enum { GRID_KERNELS_AUTO = 0, GRID_KERNELS_SCALAR = 1, GRID_KERNELS_ALWAYS = 2, GRID_KERNELS_AVX2 = 3 };
typedef struct grid_dense {
    const grid_kernels *k;  // NULL: the scalar loops only
    bool always;            // the kernels on every block and every cross-level row, crowded or not
    bool soa;               // the AVX-512 kernels exist here, whatever k (bp_grid_dense_soa_possible)
} grid_dense;

struct bp_grid {
    bp_algorithm base;
    // The definition's grid options (bp_context_def.grid), read once: the cell size (0:
    // automatic) and the layout.
    float user_cell;
    bp_grid_layout layout;
    grid_geom geom;
    bool have_geom;
    size_t n;             // boxes of the last call
    // The frame's cell keys (+ sentinels), written by either layout: sorted (the sorted layout),
    // or in input order (the table). ordered: keys and sorted.perm hold last frame's sorted
    // order (for coherence).
    uint32_t *keys;
    size_t keys_cap;
    bool ordered;
    bool on_table;        // the last call used the table layout
    // For AUTO (bp_grid_was_too_coarse): how much coarser the geometry's cells are than wanted
    // (the largest ratio over the axes), whether the sample says they are crowded, and whether
    // the last call tested GRID_COARSE_CHECKS candidates a box or more.
    double coarse;
    bool crowd_sample, crowd_checks;
    grid_sorted sorted;
    grid_table table;
    grid_dense dense;
};

// Level-0 cell coordinate of x on an axis: clamped in float before the conversion, so any finite
// float gives a defined result (an overflow to infinity clamps too); monotone in x.
static inline int64_t grid_coord(float x, float origin, float inv, float gmax) {
    float t = (x - origin) * inv;
    t = t > 0.0f ? t : 0.0f;
    t = t < gmax ? t : gmax;
    return (int64_t)(int32_t)t;
}

static inline void grid_cells(const grid_geom *G, const float *b, int64_t c0[3], int64_t c1[3]) {
    const int d = G->dim;
    for (int a = 0; a < d; ++a) {
        c0[a] = grid_coord(b[a], G->fo[a], G->fi[a], G->fg[a]);
        c1[a] = grid_coord(b[d + a], G->fo[a], G->fi[a], G->fg[a]);
    }
    for (int a = d; a < 3; ++a) c0[a] = c1[a] = 0;
}

// Level-0 cells of 2D boxes, four coordinates at once where SSE2 is there: the key passes of
// both layouts. grid_map2_box writes box b as (min, -max) to out and its cell range x0, y0, x1,
// y1 to c, exactly as grid_coord computes each; grid_map2_cells only the cell range.
#if defined(__SSE2__)
typedef struct grid_map2 {
    __m128 o, i, m;
} grid_map2;

static inline grid_map2 grid_map2_make(const grid_geom *G) {
    grid_map2 m = {_mm_setr_ps(G->fo[0], G->fo[1], G->fo[0], G->fo[1]),
                   _mm_setr_ps(G->fi[0], G->fi[1], G->fi[0], G->fi[1]),
                   _mm_setr_ps(G->fg[0], G->fg[1], G->fg[0], G->fg[1])};
    return m;
}

static inline void grid_map2_cells(const grid_map2 *m, const float *b, int32_t c[4]) {
    __m128 t = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(b), m->o), m->i);
    t = _mm_min_ps(_mm_max_ps(t, _mm_setzero_ps()), m->m);
    _mm_storeu_si128((__m128i *)(void *)c, _mm_cvttps_epi32(t));
}

static inline void grid_map2_box(const grid_map2 *m, const float *b, float *out, int32_t c[4]) {
    _mm_storeu_ps(out, _mm_xor_ps(_mm_loadu_ps(b), _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f)));
    grid_map2_cells(m, b, c);
}
#else
typedef struct grid_map2 {
    float o[2], i[2], m[2];
} grid_map2;

static inline grid_map2 grid_map2_make(const grid_geom *G) {
    grid_map2 m = {{G->fo[0], G->fo[1]}, {G->fi[0], G->fi[1]}, {G->fg[0], G->fg[1]}};
    return m;
}

static inline void grid_map2_cells(const grid_map2 *m, const float *b, int32_t c[4]) {
    for (int e = 0; e < 2; ++e) {
        c[e] = (int32_t)grid_coord(b[e], m->o[e], m->i[e], m->m[e]);
        c[2 + e] = (int32_t)grid_coord(b[2 + e], m->o[e], m->i[e], m->m[e]);
    }
}

static inline void grid_map2_box(const grid_map2 *m, const float *b, float *out, int32_t c[4]) {
    for (int e = 0; e < 2; ++e) {
        out[e] = b[e];
        out[2 + e] = -b[2 + e];
    }
    grid_map2_cells(m, b, c);
}
#endif

// The cells of level L that can hold the min corner of a box overlapping the level-0 cell
// range [c0, c1]: a box of level L spans at most two of its cells per axis, so its min cell is at
// most one before c0 (and not after c1). Clamped to the grid, so ranges never wrap into the next
// row.
static inline void grid_region(const grid_geom *G, const grid_level *L, const int64_t c0[3], const int64_t c1[3],
                               int64_t lo[3], int64_t hi[3]) {
    for (int a = 0; a < 3; ++a) {
        if (a < G->dim) {
            lo[a] = (c0[a] >> L->shift[a]) - 1;
            if (lo[a] < 0) lo[a] = 0;
            hi[a] = c1[a] >> L->shift[a];
        } else {
            lo[a] = hi[a] = 0;
        }
    }
}

// Both layouts store boxes as (min, -max): box b overlaps box a when every stored value of b is
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

// Where a run over sorted cells stops (grid_sorted.xsorted): its boxes are sorted by their min on
// axis ax, so once one starts past the probe's max `at` on it, none after overlaps. No stop: ax
// 0 and at +infinity, which every (finite) min passes.
typedef struct grid_stop {
    int ax;
    float at;
} grid_stop;

// For stored probe a in dimension d: a stop on axis `stop` (-1: none).
static inline grid_stop grid_stop_make(const float *a, int d, int stop) {
    const grid_stop s = {stop >= 0 ? stop : 0, stop >= 0 ? -a[d + stop] : INFINITY};
    return s;
}

// Whether stored box b starts at or before the stop.
static inline bool grid_stop_in(const grid_stop *s, const float *b) { return b[s->ax] <= s->at; }

// One row of a region query, box by box: stored probe pr (box id) against the sorted boxes from j
// while keys <= khi (and the stop lets them in), each candidate written and only the hits kept,
// without a branch on the hit (long boxes meet many: `sticks` has two pairs in five candidates,
// too many to predict). A row counts its candidates as checks, an empty one 1: the row's lookup
// costs as much.
// `stops` is a constant at each call (a copy of the loop with and one without the test).
__attribute__((always_inline)) static inline bp_status grid_row_boxes(const bp_grid *g, const grid_probe *pr,
                                                                      const grid_stop *sp, uint32_t id, size_t j,
                                                                      uint32_t khi, bp_sink *sink, uint64_t *checks,
                                                                      const bool stops) {
    const uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT ids = g->sorted.perm;
    const float *BP_RESTRICT bx = g->sorted.boxes;
    const int d = g->geom.dim;
    const size_t j0 = j;
    for (; keys[j] <= khi && (!stops || grid_stop_in(sp, bx + (size_t)(2 * d) * j)); ++j) {
        const float *b = bx + (size_t)(2 * d) * j;
        const unsigned hit = (unsigned)(d == 2 ? grid_hit2(pr, b) : grid_hit3(pr, b));
        const bp_status st = bp_sink_room(sink, 1);
        if (BP_UNLIKELY(st != BP_OK)) return st;
        bp_sink_put(sink, id, ids[j], hit);
    }
    *checks += j - j0 + (j == j0);
    return BP_OK;
}

// First position in sorted keys [lo, hi) whose key is >= key (hi when none): every binary
// search of the grid's keys.
static inline size_t grid_lower_bound32(const uint32_t *keys, size_t lo, size_t hi, uint32_t key) {
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Whether a region query of level L that covers w cells along its rows takes each plane's rows
// as one run of keys: when the boxes the run passes over outside the region, the rest of each
// row, are on average at most GRID_MERGE_SKIP a row (the level's boxes spread over its rows).
// A row costs its lookup and its loop's start and end, at least what 16 candidates in a step cost:
// with 8, the heavy-tailed sizes of docs/grid.md (level 0 of 11 boxes a row, its rows searched
// by a binary search each) took 34 ms a frame in 3D at 100,000, with 16 they take 18 (2D 10.5 ->
// 6.5); the scenes of SCENES.md do not merge either way but `mixed` 3D (100,000: 10.8 -> 8.5).
#define GRID_MERGE_SKIP 16
static inline bool grid_merge_width(const grid_level *L, int d, uint64_t w) {
    const uint64_t cells = (uint64_t)L->g[L->kax[0]];
    const uint64_t level_rows = (uint64_t)L->g[L->kax[1]] * (d == 3 ? (uint64_t)L->g[L->kax[2]] : 1u);
    const uint64_t boxes = L->end - L->begin;
    return w >= cells || (double)boxes * (double)(cells - w) <= (double)GRID_MERGE_SKIP * (double)level_rows * (double)cells;
}

// ---------------------------------------------------------------------------------------------
// The files of the method and what each offers the others (docs/grid.md). src/grid.c: the
// method's entry (the class table, find_pairs, queries, drawing, validation), which runs one
// layout a call.

// src/grid_fit.c: the geometry. Chooses this frame's cells, window and levels; true when last
// frame's geometry is kept (the keys, and so the sorted order, carry over).
bool bp_grid_choose(bp_grid *g, const bp_frame *f);
// Draws the cell of `key` in level l (coarser levels get smaller level numbers, 1 .. levels).
void bp_grid_draw_cell(const grid_geom *G, int l, uint32_t key, const bp_debug_draw *draw);

// src/grid_keys.c: the sorted order. The key of box b (min, max) from its level-0 cell range c0,
// c1, and its level.
uint32_t bp_grid_key(const grid_geom *G, const float *b, const int64_t c0[3], const int64_t c1[3], int *level);
// The frame's keys, order (sorted.perm2) and stored boxes, from last frame's order (sorted.perm:
// the identity when `reset`; its keys pulled out where they moved and merged back when
// `coherent`, else one radix sort), serially or with workers: the same result either way.
bp_status bp_grid_sort_frame(bp_grid *g, const bp_frame *f, bool reset, bool coherent);

// src/grid_sorted.c: the sorted layout's structure. bp_grid_sorted_begin marks the per-call
// indexes out of date (every call, whichever layout runs); bp_grid_sorted_build makes the
// frame's sorted order, level ranges, index and plan (same_grid: bp_grid_choose's answer).
void bp_grid_sorted_begin(grid_sorted *s);
bp_status bp_grid_sorted_build(bp_grid *g, const bp_frame *f, bool same_grid);
void bp_grid_sorted_reset(grid_sorted *s);
void bp_grid_sorted_release(bp_context *ctx, grid_sorted *s);
bp_status bp_grid_sorted_validate(const bp_grid *g, const bp_frame *f);
void bp_grid_sorted_draw(const bp_grid *g, const bp_debug_draw *draw);
// Frames that sorted their cells, over all contexts (for tests: a test input reaches the path).
extern _Atomic unsigned long long bp_grid_sorted_frames;

// src/grid_scan.c: the sorted layout's pair passes (the frame built) and region queries.
bp_status bp_grid_sorted_pairs(const bp_grid *g, bp_sink *sink, uint64_t *checks);
bp_status bp_grid_sorted_visit(const bp_grid *g, const bp_frame *f, bp_visitor *q);
// AUTO's question (src/grid_fit.c): would the cells for frame f be far coarser than its boxes
// want, and crowded for it? From a sample of the boxes; the second form answers for the geometry
// the grid state m last chose, without sampling.
bool bp_grid_too_coarse(const bp_frame *f, float user_cell);
bool bp_grid_was_too_coarse(const bp_algorithm *m);

// src/grid_table.c: the table layout. bp_grid_table_find runs a frame on it when it can and
// should (*done true); else the sorted layout runs, and the last call's table has been emptied
// (unless an error is returned: then the next call empties it).
bp_status bp_grid_table_find(bp_grid *g, const bp_frame *f, bp_sink *sink, uint64_t *checks, bool *done);
// Whether the table could serve the frame (whatever AUTO prefers).
bool bp_grid_table_possible(const bp_grid *g, const bp_frame *f);
// Records a frame's crowding (`shared` of n boxes found their cell occupied), from either layout.
void bp_grid_note_crowding(bp_grid *g, size_t shared, size_t n);
bp_status bp_grid_table_visit(const bp_grid *g, bp_visitor *q);
bp_status bp_grid_table_validate(const bp_grid *g, const bp_frame *f);
void bp_grid_table_draw(const bp_grid *g, const bp_debug_draw *draw);
void bp_grid_table_reset(grid_table *t);
void bp_grid_table_release(bp_context *ctx, grid_table *t);

// src/grid_dense.c: the kernels of crowded cells. Cross-level rows of at least this many boxes
// go to the steps; shorter ones stay box by box: a 16-box step costs more than a few scalar
// tests (`sticks` 2D 100,000 went from 10.9 to 17.9 ms with every row in steps, `sizes` 3D from
// 289 to 126).
#define GRID_DENSE_ROW_MIN 8
// Whether the row of sorted boxes from j while keys <= khi holds GRID_DENSE_ROW_MIN boxes or more
// (keys sorted: one load tells).
static inline bool grid_row_long(const uint32_t *keys, size_t j, uint32_t khi) {
    return keys[j + GRID_DENSE_ROW_MIN - 1] <= khi;
}
// The kernels for `kernels` (GRID_KERNELS_*) on this build and CPU: AVX-512 where there (unless
// GRID_KERNELS_AVX2), else AVX2; NULL where none or GRID_KERNELS_SCALAR (the scalar loops).
const grid_kernels *bp_grid_kernels_pick(int kernels);
// The candidates the kernels of `kernels` test a step: 16 (AVX-512), 8 (AVX2), 0 (the scalar loops).
int bp_grid_dense_lanes(int kernels);
// Whether this build and CPU have the kernel that reads the six arrays of grid_sorted.soa
// (AVX-512), whatever the kernels chosen: the frames that sort their cells for it
// (grid_sort_cells) do so with any kernels, so that they all give the same pairs in the same order.
bool bp_grid_dense_soa_possible(void);

#endif
