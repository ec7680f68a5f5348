// Linear quadtree (2D) / octree (3D) in Morton order (seed 000), built from arrays instead of the
// seed's per-cell linked lists:
//  - every box is mapped to integer cell coordinates of the finest level (2^L cells per axis,
//    clamped, so boxes outside the world land in the border cells and are never dropped);
//  - strict placement (the seed's): the smallest cell holding both corners, found by the XOR of
//    the corners' Morton codes; loose placement: the cell of the centre, at the level given by the
//    size alone (cells enlarged by half a cell on every side);
//  - the key (cell origin's finest-level Morton code, then level) puts every cell before its
//    descendants, so one radix sort lays the tree out depth first and cells become runs;
//  - temporal coherence: last frame's sorted order is kept, only boxes whose key changed are
//    re-sorted (radix) and merged back;
//  - strict: one pass over the runs with an explicit stack of ancestor cells (the seed's walk,
//    without recursion), where each cell only inherits the ancestor boxes that reach into it, so
//    a box straddling a boundary near the root is not tested against everything below it; a
//    subtree of at most QT_BUCKET boxes is tested as one bucket, and a crowded cell is swept;
//  - loose: every cell against the subtrees of its 3^dim neighbours at its own level (contiguous
//    runs found by binary search).
// Region queries descend the implicit tree with an explicit stack.
#include <math.h>

#include "method.h"
#include "morton.h"
#include "par.h"
#include "radix_sort.h"
#include "sort.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Finest cell edge as a multiple of the mean box extent (automatic levels); measured on the
// docs/scenes.md scenes (docs/quadtree.md).
#define QT_CELL_FACTOR_STRICT 2.0
#define QT_CELL_FACTOR_LOOSE 1.0
// About this many boxes per finest cell if they were spread evenly (automatic levels): deeper
// levels only cost key bits and moved keys, since buckets stop the walk where boxes are few.
#define QT_BOXES_PER_CELL 4.0
// Bits of the level field in a key; keys are (code << QT_LEVEL_BITS) | level and must stay below
// 2^63 so that the end of the root's range fits: 2D up to 29 levels, 3D up to 19.
#define QT_LEVEL_BITS 5u
#define QT_MAX_LEVELS_2D 29u
#define QT_MAX_LEVELS_3D 19u
// Coherence: keep last frame's world while the boxes fit in it and fill at least this fraction
// of it on the widest axis; re-sort in full when more than this fraction of the keys changed.
#define QT_WORLD_KEEP 0.8
#define QT_WORLD_MARGIN (1.0 / 32.0)
// How much wider than the bulk of the boxes (qt_bulk) the bounds must be for the world to be cut
// to it: a few far boxes (outliers) would otherwise make every cell larger than the scene.
#define QT_ROBUST_RATIO 4.0
#define QT_MOVED_MAX 0.5
// The active arrays (and a crowded cell's sweep scratch) are reserved up front for the larger of
// last frame's peak and min(n, this) entries (growth keeps 1.5x headroom), so that warm frames
// do not allocate.
#define QT_ACTIVE_FLOOR 4096

// Boxes are gathered in sorted order, at random: loads are issued this many boxes ahead.
#define QT_PREFETCH 16
// Strict walk: a cell whose whole subtree holds at most this many boxes is one bucket, all
// pairs tested directly (4-wide in 2D); measured on the scenes (docs/quadtree.md).
// A cell whose own boxes times (own + inherited) exceeds this is swept instead of tested
// pair by pair.
#define QT_SWEEP_WORK 4096.0
#ifndef QT_BUCKET
#define QT_BUCKET 32
#endif

#if defined(__GNUC__)
#define BP_PREFETCH(p) __builtin_prefetch(p)
#define QT_INLINE inline __attribute__((always_inline))
#else
#define BP_PREFETCH(p) ((void)0)
#define QT_INLINE inline
#endif

// The strict walk's memory: the active ancestor boxes (filtered per cell) as a stack of
// segments, and a crowded cell's sweep scratch. One per walk running (serial: one).
typedef struct qt_walk_mem {
    float *act_box;
    uint32_t *act_id;
    uint32_t *act_rng;  // integer cell range of each active box: lo[dim] then hi[dim]
    size_t act_box_cap, act_id_cap, act_rng_cap;
    uint64_t *st_end;   // per stack entry: end (exclusive) of the cell's finest-code range
    uint32_t *st_a0, *st_a1;  // its segment of the active arrays
    size_t st_end_cap, st_a0_cap, st_a1_cap;
    uint32_t *sw_keys, *sw_vals, *sw_tmp_keys, *sw_tmp_vals;  // sweep of a crowded cell
    size_t sw_keys_cap, sw_vals_cap, sw_tmp_keys_cap, sw_tmp_vals_cap;
    size_t act_peak, sw_peak;  // largest needs of the last frame: reserved ahead with headroom
} qt_walk_mem;

static void qt_walk_mem_free(bp_context *ctx, qt_walk_mem *w) {
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
}

typedef struct bp_quadtree {
    bp_algorithm base;
    // Mapping of the last call: cell = floor((x - origin) * scale), clamped to [0, 2^L - 1].
    int dim;
    unsigned levels;
    bool loose;
    double origin[3], scale[3], extent[3];
    size_t n;           // boxes of the last call
    bool ordered;       // ids/keys are the sorted order of the last call under this mapping
    bool valid;         // runs/sorted boxes describe the last successful call
    uint64_t *keys;     // sorted keys
    uint32_t *ids;      // sorted position -> box index
    uint64_t *tmp_keys; // radix scratch and the stream of moved boxes
    uint32_t *tmp_ids;
    size_t keys_cap, ids_cap, tmp_keys_cap, tmp_ids_cap;
    float *sb;          // boxes in sorted order, 2 * dim floats each
    size_t sb_cap;
    uint64_t *run_key;  // one entry per occupied cell, in key order
    uint32_t *run_start;  // nruns + 1 entries: first sorted position of each run, then n
    size_t nruns, run_key_cap, run_start_cap;
    qt_walk_mem walk;   // the strict walk's memory (serial calls)
    qt_walk_mem *wmem;  // with workers: one per worker
    size_t wmem_cap;
    size_t *units;      // with workers: the runs where the strict walk's tasks start
    size_t units_cap;
    // The speed features' counters (bp_stats): whether the last call kept last call's order (only
    // the boxes whose key changed sorted and merged back), how many changed, sorts of every key,
    // and of those the ones after the kept order was given up (too many keys changed).
    bool coherent;
    size_t moved;
    uint64_t full_sorts, resorts;
} bp_quadtree;

static bp_status qt_create(bp_context *ctx, bp_algorithm **out) {
    bp_quadtree *q = bp_alloc(ctx, sizeof *q);
    if (!q) return BP_ERR_NOMEM;
    memset(q, 0, sizeof *q);
    *out = &q->base;
    return BP_OK;
}

static void qt_destroy(bp_algorithm *m) {
    bp_quadtree *q = (bp_quadtree *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, q->keys, q->keys_cap);
    BP_RELEASE(ctx, q->ids, q->ids_cap);
    BP_RELEASE(ctx, q->tmp_keys, q->tmp_keys_cap);
    BP_RELEASE(ctx, q->tmp_ids, q->tmp_ids_cap);
    BP_RELEASE(ctx, q->sb, q->sb_cap);
    BP_RELEASE(ctx, q->run_key, q->run_key_cap);
    BP_RELEASE(ctx, q->run_start, q->run_start_cap);
    qt_walk_mem_free(ctx, &q->walk);
    for (size_t w = 0; w < q->wmem_cap; ++w) qt_walk_mem_free(ctx, &q->wmem[w]);
    BP_RELEASE(ctx, q->wmem, q->wmem_cap);
    BP_RELEASE(ctx, q->units, q->units_cap);
    bp_free(ctx, q, sizeof *q);
}

static void qt_reset(bp_algorithm *m) {
    bp_quadtree *q = (bp_quadtree *)m;
    q->ordered = false;
    q->valid = false;
    q->n = 0;
    q->nruns = 0;
}

// ---------------------------------------------------------------------------------------------
// Mapping and keys

static unsigned qt_max_levels(int dim) { return dim == 3 ? QT_MAX_LEVELS_3D : QT_MAX_LEVELS_2D; }

// Finest-level cell of coordinate x on axis a. Clamped in double before the conversion, so huge
// or outside coordinates are defined and land in the border cells; monotone in x, which is all
// correctness needs (overlapping boxes get overlapping cell ranges).
static inline uint32_t qt_cell(const bp_quadtree *q, int a, float x, double maxc) {
    double t = ((double)x - q->origin[a]) * q->scale[a];
    if (!(t > 0.0)) return 0;
    if (t >= maxc) return (uint32_t)maxc;
    return (uint32_t)t;
}

static inline uint64_t qt_morton(int dim, const uint32_t *c) {
    return dim == 2 ? bp_morton2_64(c[0], c[1]) : bp_morton3_64(c[0], c[1], c[2]);
}

// Integer range of a box: lo[dim] then hi[dim].
static inline void qt_range(const bp_quadtree *q, const float *b, uint32_t *r) {
    const int d = q->dim;
    const double maxc = (double)(((uint32_t)1 << q->levels) - 1u);
    for (int a = 0; a < d; ++a) {
        r[a] = qt_cell(q, a, b[a], maxc);
        r[d + a] = qt_cell(q, a, b[d + a], maxc);
    }
}

// The same from a box stored as min[dim] then -max[dim].
static inline void qt_range_sorted(const bp_quadtree *q, const float *b, uint32_t *r) {
    const int d = q->dim;
    const double maxc = (double)(((uint32_t)1 << q->levels) - 1u);
    for (int a = 0; a < d; ++a) {
        r[a] = qt_cell(q, a, b[a], maxc);
        r[d + a] = qt_cell(q, a, -b[d + a], maxc);
    }
}

// The key of a box: (finest-level code of its cell's origin << QT_LEVEL_BITS) | level.
static inline uint64_t qt_key(const bp_quadtree *q, const float *b) {
    const int d = q->dim;
    const unsigned L = q->levels;
    uint32_t r[6] = {0, 0, 0, 0, 0, 0};
    qt_range(q, b, r);
    unsigned up;
    uint64_t code;
    if (!q->loose) {
        // Seed 000: the XOR of the corners' codes gives the level, the shifted code the cell.
        uint64_t lo = qt_morton(d, r), hi = qt_morton(d, r + d);
        up = bp_morton_common_up(lo, hi, (unsigned)d);
        code = lo;
    } else {
        // Loose: the level where the box is narrower than one cell, the cell of its centre.
        uint32_t ext = 0, c[3] = {0, 0, 0};
        for (int a = 0; a < d; ++a) {
            uint32_t e = r[d + a] - r[a];
            ext |= e;
            c[a] = r[a] + e / 2u;
        }
        up = bp_bit_length64(ext);
        if (up > L) up = L;
        code = qt_morton(d, c);
    }
    const unsigned sh = (unsigned)d * up;
    code = sh >= 64 ? 0 : (code >> sh) << sh;
    return (code << QT_LEVEL_BITS) | (uint64_t)(L - up);
}

static inline unsigned qt_key_level(uint64_t key) { return (unsigned)(key & ((1u << QT_LEVEL_BITS) - 1u)); }
static inline uint64_t qt_key_code(uint64_t key) { return key >> QT_LEVEL_BITS; }

// The bounds of the bulk of the boxes on each axis (bp_bulk_window over a sample). Boxes outside
// land in the border cells (the mapping clamps), so a few far boxes cost a few candidates
// instead of the whole scene falling into one cell (one box 10^6 away from 100,000 in 3D: every
// pair tested, 8.9 s).
static void qt_bulk(const bp_frame *f, double blo[3], double bhi[3]) {
    double cen[BP_SAMPLE], qlo, qhi;
    for (int a = 0; a < f->dim; ++a) {
        const size_t s = bp_sample_centres(f, a, cen);
        bp_sample_quantiles(cen, s, &qlo, &qhi);
        if (s < 2) {
            blo[a] = f->lo[a];
            bhi[a] = f->hi[a];
        } else {
            bp_bulk_window(f->lo[a], f->hi[a], qlo, qhi, &blo[a], &bhi[a]);
        }
    }
}

// Chooses levels and world for this frame. Keeps last frame's mapping when it still fits, so
// that keys (and the sorted order) stay valid between frames.
static void qt_choose_mapping(bp_quadtree *q, const bp_frame *f, const bp_context_def *def) {
    const int d = f->dim;
    const bool loose = def->quadtree.loose;
    const unsigned lmax = qt_max_levels(d);
    double lo[3], ext[3], elo[3] = {0, 0, 0}, ehi[3] = {0, 0, 0};  // elo, ehi: what the world must hold
    double widest = 0.0;
    if (def->quadtree.fixed_world) {
        for (int a = 0; a < d; ++a) {
            lo[a] = def->quadtree.world_min[a];
            ext[a] = (double)def->quadtree.world_max[a] - (double)def->quadtree.world_min[a];
            widest = ext[a] > widest ? ext[a] : widest;
        }
    } else {
        // Cubic cells: one extent for every axis, so that "everything on one line" does not make
        // every box span its whole (thin) axis and sit at the root.
        double blo[3], bhi[3], bulk = 0.0;
        qt_bulk(f, blo, bhi);
        for (int a = 0; a < d; ++a) {
            double e = (double)f->hi[a] - (double)f->lo[a];
            widest = e > widest ? e : widest;
            bulk = bhi[a] - blo[a] > bulk ? bhi[a] - blo[a] : bulk;
        }
        // The world is the frame's bounds, or the bulk's where those are far wider (outliers).
        const bool cut = widest > QT_ROBUST_RATIO * bulk;
        for (int a = 0; a < d; ++a) {
            elo[a] = cut ? blo[a] : (double)f->lo[a];
            ehi[a] = cut ? bhi[a] : (double)f->hi[a];
        }
        if (cut) widest = bulk;
        // A margin so that boxes drifting outwards keep last frame's mapping for a while.
        const double margin = widest * QT_WORLD_MARGIN;
        for (int a = 0; a < d; ++a) {
            lo[a] = elo[a] - margin;
            ext[a] = widest + 2.0 * margin;
        }
    }
    unsigned L;
    if (def->quadtree.levels > 0) {
        L = (unsigned)def->quadtree.levels < lmax ? (unsigned)def->quadtree.levels : lmax;
    } else {
        // Finest cell at least QT_CELL_FACTOR mean extents, and about QT_BOXES_PER_CELL boxes
        // per finest cell.
        double mean = 0.0;
        for (int a = 0; a < d; ++a) {
            double m = f->n ? f->size_sum[a] / (double)f->n : 0.0;
            mean = m > mean ? m : mean;
        }
        double cell = (loose ? QT_CELL_FACTOR_LOOSE : QT_CELL_FACTOR_STRICT) * mean;
        double by_n = log2((double)(f->n > 0 ? f->n : 1) / QT_BOXES_PER_CELL) / (double)d;
        double by_size = cell > 0.0 && widest > 0.0 ? log2(widest / cell) : (double)lmax;
        double want = ceil(by_size < by_n ? by_size : by_n);
        L = want <= 0.0 ? 0u : (want >= (double)lmax ? lmax : (unsigned)want);
    }
    if (L == 0) L = 1;  // one level of children keeps the code paths uniform; costs nothing
    // Keep the previous mapping when it still fits: same levels and placement, boxes inside,
    // world not much too large.
    bool keep = q->ordered && q->dim == d && q->levels == L && q->loose == loose;
    for (int a = 0; a < d && keep; ++a) {
        if (def->quadtree.fixed_world) {
            keep = q->origin[a] == lo[a] && q->extent[a] == ext[a];
        } else {
            keep = elo[a] >= q->origin[a] && ehi[a] <= q->origin[a] + q->extent[a] &&
                   ext[a] >= QT_WORLD_KEEP * q->extent[a];
        }
    }
    if (keep) return;
    q->ordered = false;
    q->dim = d;
    q->levels = L;
    q->loose = loose;
    const double cells = (double)((uint32_t)1 << L);
    for (int a = 0; a < d; ++a) {
        q->origin[a] = lo[a];
        q->extent[a] = ext[a];
        // A zero extent (all boxes on one coordinate) maps everything to cell 0.
        q->scale[a] = ext[a] > 0.0 ? cells / ext[a] : 0.0;
        if (!isfinite(q->scale[a])) q->scale[a] = 0.0;
    }
}

// ---------------------------------------------------------------------------------------------
// Sorting

// ---------------------------------------------------------------------------------------------
// Sorting and layout with workers: qt_sort's and qt_layout's results, bit for bit. The coherent
// sort's split into kept and moved boxes is two passes (new keys and a moved flag per box, then
// both lists written at offsets from per-task counts), the merge gives each task its kept boxes
// and the moved ones that go before them (ties: the kept box first, as the serial merge).
#define QT_MOVED_BIT 0x80000000u  // box indices stay below 2^30

typedef struct qt_par {
    bp_quadtree *q;
    const bp_frame *f;
    size_t n, w, m;        // boxes, kept, moved
    uint32_t tasks;
    uint64_t *nk;          // new keys (scratch in q->sb)
    uint32_t *nid;         // ids, the moved ones flagged (scratch in q->sb)
    size_t *kept, *moved;  // per task: counts, then offsets
    size_t *at, *jm;       // merge: output offset, first moved box (tasks + 1)
} qt_par;

static void qt_par_keys_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_par *j = user;
    bp_quadtree *q = j->q;
    size_t b, e;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    const size_t stride = (size_t)(2 * j->f->dim);
    for (size_t k = b; k < e; ++k) {
        q->ids[k] = (uint32_t)k;
        q->keys[k] = qt_key(q, j->f->boxes + k * stride);
    }
}

static void qt_par_split_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_par *j = user;
    const bp_quadtree *q = j->q;
    size_t b, e, m = 0;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    const size_t stride = (size_t)(2 * j->f->dim);
    for (size_t k = b; k < e; ++k) {
        const uint32_t i = q->ids[k];
        if (k + QT_PREFETCH < e) BP_PREFETCH(j->f->boxes + (size_t)q->ids[k + QT_PREFETCH] * stride);
        const uint64_t key = qt_key(q, j->f->boxes + (size_t)i * stride);
        const bool moved = key != q->keys[k];
        j->nk[k] = key;
        j->nid[k] = i | (moved ? QT_MOVED_BIT : 0u);
        m += moved;
    }
    j->moved[t] = m;
    j->kept[t] = (e - b) - m;
}

static void qt_par_place_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_par *j = user;
    bp_quadtree *q = j->q;
    size_t b, e;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    size_t w = j->kept[t], m = j->moved[t];
    for (size_t k = b; k < e; ++k) {
        const uint32_t id = j->nid[k];
        if (id & QT_MOVED_BIT) {
            q->tmp_keys[m] = j->nk[k];
            q->tmp_ids[m++] = id & ~QT_MOVED_BIT;
        } else {
            q->keys[w] = j->nk[k];
            q->ids[w++] = id;
        }
    }
}

// Kept boxes [a, b) of task t (keys/ids) with moved boxes jm[t] .. jm[t+1], into nk/nid.
static void qt_par_merge_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_par *j = user;
    const bp_quadtree *q = j->q;
    size_t a, b;
    bp_par_range(j->w, j->tasks, t, &a, &b);
    size_t x = j->jm[t], o = j->at[t];
    const size_t x1 = j->jm[t + 1];
    const uint64_t *keys = q->keys, *mk = q->tmp_keys;
    while (a < b || x < x1) {
        if (a < b && (x == x1 || keys[a] <= mk[x])) {
            j->nk[o] = keys[a];
            j->nid[o++] = q->ids[a++];
        } else {
            j->nk[o] = mk[x];
            j->nid[o++] = q->tmp_ids[x++];
        }
    }
}

static bp_status qt_sort_par(bp_quadtree *q, const bp_frame *f, uint32_t tasks, unsigned bits) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    qt_par j;
    memset(&j, 0, sizeof j);
    j.q = q;
    j.f = f;
    j.n = n;
    j.tasks = tasks;
    if (!(q->ordered && q->n == n)) {
        bp_status st = bp_par_run(ctx, tasks, qt_par_keys_task, &j);
        if (st == BP_OK) st = bp_par_radix64(ctx, q->keys, q->ids, q->tmp_keys, q->tmp_ids, n, bits);
        q->full_sorts++;
        return st;
    }
    // New keys and flagged ids in the sorted boxes' array (free until the layout): 12 bytes a box
    // of its 16 (2D) or 24 (3D).
    j.nk = (uint64_t *)(void *)q->sb;
    j.nid = (uint32_t *)(void *)(q->sb + 2 * n);
    bp_status st = BP_OK;
    size_t *sc = bp_par_scratch(ctx, (4 * (size_t)tasks + 2) * sizeof(size_t), &st);
    if (st != BP_OK) return st;
    j.kept = sc;
    j.moved = sc + tasks;
    j.at = sc + 2 * (size_t)tasks;
    j.jm = j.at + tasks;
    st = bp_par_run(ctx, tasks, qt_par_split_task, &j);
    if (st != BP_OK) return st;
    for (uint32_t t = 0; t < tasks; ++t) {
        const size_t k = j.kept[t], m = j.moved[t];
        j.kept[t] = j.w;
        j.moved[t] = j.m;
        j.w += k;
        j.m += m;
    }
    q->moved = j.m;
    q->coherent = (double)j.m <= QT_MOVED_MAX * (double)n;
    if (j.m == 0) return BP_OK;  // every key as it was: the order stands
    st = bp_par_run(ctx, tasks, qt_par_place_task, &j);
    if (st != BP_OK) return st;
    const size_t w = j.w, m = j.m;
    if (!q->coherent) {
        st = bp_par_copy(ctx, q->keys + w, q->tmp_keys, m * sizeof *q->keys);
        if (st == BP_OK) st = bp_par_copy(ctx, q->ids + w, q->tmp_ids, m * sizeof *q->ids);
        if (st == BP_OK) st = bp_par_radix64(ctx, q->keys, q->ids, q->tmp_keys, q->tmp_ids, n, bits);
        q->full_sorts++;
        q->resorts++;
        return st;
    }
    // m <= n / 2: the second half of the scratch is the radix sort's own scratch.
    st = bp_par_radix64(ctx, q->tmp_keys, q->tmp_ids, q->tmp_keys + m, q->tmp_ids + m, m, bits);
    if (st != BP_OK) return st;
    // Task t merges kept boxes [a_t, a_t+1) with the moved ones below a_t's key (the earlier
    // ones went to earlier tasks), into nk/nid from a_t + jm[t]; then the result goes back.
    for (uint32_t t = 0; t < tasks; ++t) {
        size_t a, b;
        bp_par_range(w, tasks, t, &a, &b);
        j.jm[t] = t == 0 ? 0 : (a < w ? bp_lower_bound64(q->tmp_keys, 0, m, q->keys[a]) : m);
        j.at[t] = a + j.jm[t];
    }
    j.jm[tasks] = m;
    j.w = w;
    st = bp_par_run(ctx, tasks, qt_par_merge_task, &j);
    if (st == BP_OK) st = bp_par_copy(ctx, q->keys, j.nk, n * sizeof *q->keys);
    if (st == BP_OK) st = bp_par_copy(ctx, q->ids, j.nid, n * sizeof *q->ids);
    return st;
}

typedef struct qt_layout_job {
    bp_quadtree *q;
    const bp_frame *f;
    size_t n;
    uint32_t tasks;
    size_t *runs;  // per task: runs starting in its share, then their first index
} qt_layout_job;

static void qt_gather(bp_quadtree *q, const bp_frame *f, size_t b, size_t e);

static void qt_layout_gather_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_layout_job *j = user;
    size_t b, e;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    qt_gather(j->q, j->f, b, e);
    size_t r = 0;
    for (size_t k = b; k < e; ++k) r += k == 0 || j->q->keys[k] != j->q->keys[k - 1];
    j->runs[t] = r;
}

static void qt_layout_runs_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_layout_job *j = user;
    bp_quadtree *q = j->q;
    size_t b, e, r = j->runs[t];
    bp_par_range(j->n, j->tasks, t, &b, &e);
    for (size_t k = b; k < e; ++k) {
        if (k == 0 || q->keys[k] != q->keys[k - 1]) {
            q->run_key[r] = q->keys[k];
            q->run_start[r++] = (uint32_t)k;
        }
    }
}

// Computes the keys and sorts (keys, ids), reusing last frame's order when it can.
static bp_status qt_sort(bp_quadtree *q, const bp_frame *f) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    const unsigned bits = (unsigned)f->dim * q->levels + QT_LEVEL_BITS;
    // Reserve everything first: a failure leaves last frame's order intact.
    BP_RESERVE(ctx, q->keys, q->keys_cap, n + 1);
    BP_RESERVE(ctx, q->ids, q->ids_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->tmp_keys, q->tmp_keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->tmp_ids, q->tmp_ids_cap, n + 1);
    const uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP);
    if (tasks > 1) {
        BP_RESERVE_DISCARD(ctx, q->sb, q->sb_cap, n * (size_t)(2 * f->dim) + 1);
        return qt_sort_par(q, f, tasks, bits);
    }
    uint64_t *keys = q->keys, *mk = q->tmp_keys;
    uint32_t *ids = q->ids, *mi = q->tmp_ids;
    const size_t stride = (size_t)(2 * f->dim);
    if (!(q->ordered && q->n == n)) {
        for (size_t k = 0; k < n; ++k) {
            ids[k] = (uint32_t)k;
            keys[k] = qt_key(q, f->boxes + k * stride);
        }
        bp_radix_sort64(keys, ids, mk, mi, n, bits);
        q->full_sorts++;
        return BP_OK;
    }
    // Coherent: boxes whose key is unchanged stay in order (compacted in place); the others
    // are sorted on their own and merged back from the end.
    size_t w = 0, m = 0;
    for (size_t k = 0; k < n; ++k) {
        uint32_t i = ids[k];
        // The boxes are read in last frame's sorted order, at random: fetch ahead.
        if (k + QT_PREFETCH < n) BP_PREFETCH(f->boxes + (size_t)ids[k + QT_PREFETCH] * stride);
        uint64_t key = qt_key(q, f->boxes + (size_t)i * stride);
        if (key == keys[k]) {
            keys[w] = key;
            ids[w++] = i;
        } else {
            mk[m] = key;
            mi[m++] = i;
        }
    }
    q->moved = m;
    q->coherent = (double)m <= QT_MOVED_MAX * (double)n;
    if (m == 0) return BP_OK;
    if (!q->coherent) {
        memcpy(keys + w, mk, m * sizeof *keys);
        memcpy(ids + w, mi, m * sizeof *ids);
        bp_radix_sort64(keys, ids, mk, mi, n, bits);
        q->full_sorts++;
        q->resorts++;
        return BP_OK;
    }
    // m <= n / 2: the second half of the scratch is the radix sort's own scratch.
    bp_radix_sort64(mk, mi, mk + m, mi + m, m, bits);
    size_t i = w, j = m, out = n;
    while (j > 0) {
        if (i > 0 && keys[i - 1] > mk[j - 1]) {
            --out;
            --i;
            keys[out] = keys[i];
            ids[out] = ids[i];
        } else {
            --out;
            --j;
            keys[out] = mk[j];
            ids[out] = mi[j];
        }
    }
    return BP_OK;
}

// The sorted boxes [b, e), stored min then -max.
static void qt_gather(bp_quadtree *q, const bp_frame *f, size_t b, size_t e) {
    const size_t n = f->n, stride = (size_t)(2 * f->dim);
    float *BP_RESTRICT sb = q->sb;
    const float *BP_RESTRICT boxes = f->boxes;
    const size_t ahead = n > QT_PREFETCH ? n - QT_PREFETCH : 0;
    if (stride == 4) {
        for (size_t k = b; k < e; ++k) {
            if (k < ahead) BP_PREFETCH(boxes + 4 * (size_t)q->ids[k + QT_PREFETCH]);
            const float *x = boxes + 4 * (size_t)q->ids[k];
            sb[4 * k] = x[0];
            sb[4 * k + 1] = x[1];
            sb[4 * k + 2] = -x[2];
            sb[4 * k + 3] = -x[3];
        }
    } else {
        for (size_t k = b; k < e; ++k) {
            if (k < ahead) BP_PREFETCH(boxes + 6 * (size_t)q->ids[k + QT_PREFETCH]);
            const float *x = boxes + 6 * (size_t)q->ids[k];
            for (int a = 0; a < 3; ++a) {
                sb[6 * k + (size_t)a] = x[a];
                sb[6 * k + 3 + (size_t)a] = -x[3 + a];
            }
        }
    }
}

// Gathers the boxes in sorted order and cuts the sorted keys into runs (one per cell).
static bp_status qt_layout(bp_quadtree *q, const bp_frame *f) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    const size_t stride = (size_t)(2 * f->dim);
    BP_RESERVE_DISCARD(ctx, q->sb, q->sb_cap, n * stride + 1);
    // Sized for n (runs <= n), not for this frame's runs, so that a warm frame never grows them.
    BP_RESERVE_DISCARD(ctx, q->run_key, q->run_key_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->run_start, q->run_start_cap, n + 1);
    qt_layout_job j = {q, f, n, bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP), NULL};
    if (j.tasks > 1) {
        // With workers: runs counted per task, then written from each task's first index.
        bp_status st = BP_OK;
        j.runs = bp_par_scratch(ctx, j.tasks * sizeof *j.runs, &st);
        if (st == BP_OK) st = bp_par_run(ctx, j.tasks, qt_layout_gather_task, &j);
        if (st != BP_OK) return st;
        size_t r = 0;
        for (uint32_t t = 0; t < j.tasks; ++t) {
            const size_t c = j.runs[t];
            j.runs[t] = r;
            r += c;
        }
        st = bp_par_run(ctx, j.tasks, qt_layout_runs_task, &j);
        if (st != BP_OK) return st;
        q->run_start[r] = (uint32_t)n;
        q->nruns = r;
        return BP_OK;
    }
    qt_gather(q, f, 0, n);
    size_t r = 0;
    for (size_t k = 0; k < n; ++k) {
        if (k == 0 || q->keys[k] != q->keys[k - 1]) {
            q->run_key[r] = q->keys[k];
            q->run_start[r++] = (uint32_t)k;
        }
    }
    q->run_start[r] = (uint32_t)n;
    q->nruns = r;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Pairs

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

// Decodes a finest-level code into cell coordinates.
static inline void qt_decode(int dim, uint64_t code, uint32_t *c) {
    if (dim == 2) {
        c[0] = (uint32_t)bp_morton_compact2_64(code);
        c[1] = (uint32_t)bp_morton_compact2_64(code >> 1);
    } else {
        c[0] = (uint32_t)bp_morton_compact3_64(code);
        c[1] = (uint32_t)bp_morton_compact3_64(code >> 1);
        c[2] = (uint32_t)bp_morton_compact3_64(code >> 2);
    }
}

// Sort-and-sweep of one crowded cell: its own boxes (sorted positions [p0, p1)) and the
// inherited boxes (active entries [e0, e1)), along the axis of fewest candidates (sort.h); pairs
// of two inherited boxes are skipped (they were tested higher up).
static bp_status qt_sweep_cell(const bp_quadtree *q, qt_walk_mem *wm, int d, size_t e0, size_t e1, size_t p0, size_t p1, bp_sink *sink,
                               uint64_t *checks) {
    bp_context *ctx = q->base.ctx;
    const size_t s = (size_t)(2 * d);
    const size_t fa = e1 - e0, m = fa + (p1 - p0);
    if (m + 1 > wm->sw_peak) wm->sw_peak = m + 1;
    BP_RESERVE_DISCARD(ctx, wm->sw_keys, wm->sw_keys_cap, m + 1);
    BP_RESERVE_DISCARD(ctx, wm->sw_vals, wm->sw_vals_cap, m + 1);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_keys, wm->sw_tmp_keys_cap, m + 1);
    BP_RESERVE_DISCARD(ctx, wm->sw_tmp_vals, wm->sw_tmp_vals_cap, m + 1);
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
    uint64_t c = 0;
    for (size_t k = 0; k < m; ++k) {
        const size_t v = wm->sw_vals[k];
        const float *bk = QT_SW_BOX(v);
        const float hi = -bk[d + axis];
        const bool inherited = v < fa;
        const uint32_t idk = QT_SW_ID(v);
        for (size_t j = k + 1; j < m; ++j) {
            const size_t u = wm->sw_vals[j];
            const float *bj = QT_SW_BOX(u);
            if (bj[axis] > hi) break;
            if (inherited && u < fa) continue;
            ++c;
            bool hit = d == 2 ? qt_hit2(qt_reach2_of(bk), bj) : qt_hit3(bk, bj);
            if (BP_UNLIKELY(hit)) {
                bp_status st = bp_sink_push(sink, idk, QT_SW_ID(u));
                if (st != BP_OK) return st;
            }
        }
    }
#undef QT_SW_BOX
#undef QT_SW_ID
    *checks += c;
    return BP_OK;
}

// Reserves the walk's arrays for a cell: `need` active entries and a stack of depth + 1.
static bp_status qt_walk_reserve(bp_context *ctx, qt_walk_mem *wm, size_t s, size_t need, size_t depth) {
    if (need > wm->act_peak) wm->act_peak = need;
    if (need * s > wm->act_box_cap || need > wm->act_id_cap || need * s > wm->act_rng_cap ||
        depth + 1 > wm->st_end_cap || depth + 1 > wm->st_a0_cap || depth + 1 > wm->st_a1_cap) {
        BP_RESERVE(ctx, wm->act_box, wm->act_box_cap, need * s);
        BP_RESERVE(ctx, wm->act_id, wm->act_id_cap, need);
        BP_RESERVE(ctx, wm->act_rng, wm->act_rng_cap, need * s);
        BP_RESERVE(ctx, wm->st_end, wm->st_end_cap, depth + 1);
        BP_RESERVE(ctx, wm->st_a0, wm->st_a0_cap, depth + 1);
        BP_RESERVE(ctx, wm->st_a1, wm->st_a1_cap, depth + 1);
    }
    return BP_OK;
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
    size_t depth = 0;
    for (unsigned lc = 0; lc < lvl0; ++lc) {
        const unsigned sh = (unsigned)d * (L - lc);
        const uint64_t corig = (code0 >> sh) << sh, ckey = (corig << QT_LEVEL_BITS) | lc;
        const size_t r = bp_lower_bound64(q->run_key, 0, r0, ckey);
        if (r >= r0 || q->run_key[r] != ckey) continue;  // no box in that cell itself
        const size_t p0 = q->run_start[r], p1 = q->run_start[r + 1];
        const size_t a0 = depth ? wm->st_a0[depth - 1] : 0, a1 = depth ? wm->st_a1[depth - 1] : 0;
        bp_status st = qt_walk_reserve(q->base.ctx, wm, s, a1 + (a1 - a0) + (p1 - p0) + 1, depth);
        if (st != BP_OK) return st;
        uint32_t c0[3], c1[3];
        qt_decode(d, corig, c0);
        for (int a = 0; a < d; ++a) c1[a] = c0[a] + (((uint32_t)1 << (L - lc)) - 1u);
        size_t w = a1;
        for (size_t e = a0; e < a1; ++e) {
            const uint32_t *rg = wm->act_rng + e * s;
            bool meets = true;
            for (int a = 0; a < d; ++a) meets &= (rg[a] <= c1[a]) & (c0[a] <= rg[d + a]);
            if (!meets) continue;
            memcpy(wm->act_box + w * s, wm->act_box + e * s, s * sizeof *wm->act_box);
            memcpy(wm->act_rng + w * s, rg, s * sizeof *rg);
            wm->act_id[w++] = wm->act_id[e];
        }
        for (size_t i = p0; i < p1; ++i) {
            memcpy(wm->act_box + w * s, q->sb + i * s, s * sizeof *q->sb);
            qt_range_sorted(q, q->sb + i * s, wm->act_rng + w * s);
            wm->act_id[w++] = q->ids[i];
        }
        wm->st_end[depth] = corig + ((uint64_t)1 << sh);
        wm->st_a0[depth] = (uint32_t)a1;
        wm->st_a1[depth] = (uint32_t)w;
        ++depth;
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

// Strict placement: the seed's depth-first walk as one pass over the runs. The stack holds the
// occupied ancestors of the current cell; each entry's segment of the active arrays holds every
// box of an ancestor (its own included) that reaches into that ancestor's region. A cell tests its
// boxes against each other and against the part of its parent's segment that reaches into it, so
// a box straddling a line near the root meets only the cells it touches, not everything below.
// `d` is a constant at each call site, so the compiler specialises the loops per dimension.
static QT_INLINE bp_status qt_walk_strict_dim(const bp_quadtree *q, qt_walk_mem *wm, const int d, size_t r_begin,
                                              size_t r_end, bp_sink *sink, uint64_t *checks) {
    bp_context *ctx = q->base.ctx;
    const size_t s = (size_t)(2 * d);
    const unsigned L = q->levels;
    const uint64_t *BP_RESTRICT run_key = q->run_key;
    const uint32_t *BP_RESTRICT run_start = q->run_start;
    const float *BP_RESTRICT sb = q->sb;
    const uint32_t *BP_RESTRICT ids = q->ids;
    const size_t nruns = q->nruns, n = q->n;
    const uint64_t *BP_RESTRICT keys = q->keys;
    float *act_box = wm->act_box;
    uint32_t *act_id = wm->act_id, *act_rng = wm->act_rng;
    uint64_t *st_end = wm->st_end;
    uint32_t *st_a0 = wm->st_a0, *st_a1 = wm->st_a1;
    size_t depth = 0;
    uint64_t c = 0;
    bp_status st = BP_OK;
    if (r_begin > 0) {
        st = qt_walk_prime(q, wm, d, r_begin, &depth);
        if (st != BP_OK) return st;
        act_box = wm->act_box;
        act_id = wm->act_id;
        act_rng = wm->act_rng;
        st_end = wm->st_end;
        st_a0 = wm->st_a0;
        st_a1 = wm->st_a1;
    }
    for (size_t r = r_begin; r < r_end; ++r) {
        const uint64_t key = run_key[r];
        const uint64_t code = qt_key_code(key);
        const unsigned lvl = qt_key_level(key);
        const uint64_t end = code + ((uint64_t)1 << ((unsigned)d * (L - lvl)));
        const size_t p0 = run_start[r];
        size_t p1 = run_start[r + 1];
        while (depth > 0 && code >= st_end[depth - 1]) --depth;
        const size_t a0 = depth ? st_a0[depth - 1] : 0, a1 = depth ? st_a1[depth - 1] : 0;
        // A bucket: the coarsest cell that holds this run, starts here (no earlier box in its
        // subtree) and has at most QT_BUCKET boxes in its whole subtree. Its boxes are one
        // contiguous range and are all tested together, so sparse regions stop descending early
        // and dense ones go as deep as they need: the tree adapts without a per-frame level rule.
        uint64_t bcode = code;
        unsigned blvl = lvl;
        bool bucket = false;
        for (unsigned lc = 0; lc <= lvl; ++lc) {
            const unsigned sh = (unsigned)d * (L - lc);
            const uint64_t corig = (code >> sh) << sh;
            if (p0 > 0 && keys[p0 - 1] >= ((corig << QT_LEVEL_BITS) | lc)) continue;
            const uint64_t cend = (corig + ((uint64_t)1 << sh)) << QT_LEVEL_BITS;
            const size_t lim = n - p0 > QT_BUCKET ? p0 + QT_BUCKET : n;
            if (lim < n && keys[lim] < cend) continue;
            p1 = bp_lower_bound64(keys, p0, lim, cend);
            bcode = corig;
            blvl = lc;
            bucket = true;
            break;
        }
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
        qt_decode(d, bcode, c0);
        for (int a = 0; a < d; ++a) c1[a] = c0[a] + (((uint32_t)1 << (L - blvl)) - 1u);
        const size_t top = a1;
        const size_t need = top + (a1 - a0) + (p1 - p0) + 1;
        if (need > wm->act_peak) wm->act_peak = need;
        if (need * s > wm->act_box_cap || need > wm->act_id_cap || need * s > wm->act_rng_cap ||
            depth + 1 > wm->st_end_cap || depth + 1 > wm->st_a0_cap || depth + 1 > wm->st_a1_cap) {
            st = qt_walk_reserve(ctx, wm, s, need, depth);
            if (st != BP_OK) return st;
            act_box = wm->act_box;
            act_id = wm->act_id;
            act_rng = wm->act_rng;
            st_end = wm->st_end;
            st_a0 = wm->st_a0;
            st_a1 = wm->st_a1;
        }
        // The parent's boxes that reach this cell, copied above the parent's segment: tested
        // here and, for an inner cell, inherited by the children.
        size_t w = top;
        for (size_t e = a0; e < a1; ++e) {
            const uint32_t *rg = act_rng + e * s;
            bool meets = true;
            for (int a = 0; a < d; ++a) meets &= (rg[a] <= c1[a]) & (c0[a] <= rg[d + a]);
            if (!meets) continue;
            memcpy(act_box + w * s, act_box + e * s, s * sizeof *act_box);
            memcpy(act_rng + w * s, rg, s * sizeof *rg);
            act_id[w++] = act_id[e];
        }
        const size_t own = p1 - p0, inherited = w - top;
        if ((double)own * (double)(own + inherited) > QT_SWEEP_WORK) {
            // Many boxes in one cell (boxes straddling the planes near the root of an octree,
            // a crowd on a line): one sort-and-sweep instead of all pairs.
            st = qt_sweep_cell(q, wm, d, top, w, p0, p1, sink, &c);
            if (st != BP_OK) return st;
        } else {
            if (own > 1) {
                st = qt_pairs_within(q, p0, p1, sink, &c);
                if (st != BP_OK) return st;
            }
            c += (uint64_t)own * inherited;
            for (size_t e = top; e < w; ++e) {
                st = qt_row(q, d, act_box + e * s, act_id[e], p0, p1, sink);
                if (st != BP_OK) return st;
            }
        }
        if (!inner) continue;
        for (size_t i = p0; i < p1; ++i) {
            memcpy(act_box + w * s, sb + i * s, s * sizeof *sb);
            qt_range_sorted(q, sb + i * s, act_rng + w * s);
            act_id[w++] = ids[i];
        }
        st_end[depth] = end;
        st_a0[depth] = (uint32_t)top;
        st_a1[depth] = (uint32_t)w;
        ++depth;
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

static bp_status qt_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_quadtree *q = (bp_quadtree *)m;
    q->valid = false;
    q->coherent = false;
    q->moved = f->n;
    qt_choose_mapping(q, f, bp_context_def_of(m->ctx));
    bp_status st = qt_sort(q, f);
    if (st != BP_OK) return st;
    q->n = f->n;
    q->ordered = true;
    st = qt_layout(q, f);
    if (st != BP_OK) return st;
    q->valid = true;
    if (q->loose) return bp_par_pairs(m->ctx, sink, q->nruns, BP_PAR_GRAIN_PAIRS / 4, qt_walk_loose, q, checks);
    return qt_walk_strict(q, sink, checks);
}

// ---------------------------------------------------------------------------------------------
// Queries, drawing, validation

// Descends the implicit tree from the root, visiting only cells whose region (enlarged for loose
// placement) meets the query's cell range, each with the runs of its subtree.
static bp_status qt_query(bp_algorithm *m, const bp_frame *f, const bp_query *qu, bp_index_buf *out) {
    const bp_quadtree *q = (const bp_quadtree *)m;
    if (!q->valid || q->nruns == 0) return BP_OK;
    const int d = q->dim;
    const unsigned L = q->levels;
    uint32_t qr[6];
    float qb[6];
    for (int a = 0; a < d; ++a) {
        qb[a] = qu->lo[a];
        qb[d + a] = qu->hi[a];
    }
    qt_range(q, qb, qr);
    // Explicit stack: each level pushes at most 2^dim children, the deepest path holds L levels.
    struct {
        uint64_t code;
        unsigned lvl;
        size_t r0, r1;
    } stack[8 * (QT_MAX_LEVELS_2D + 1)];
    size_t sp = 0;
    stack[sp].code = 0;
    stack[sp].lvl = 0;
    stack[sp].r0 = 0;
    stack[sp].r1 = q->nruns;
    ++sp;
    while (sp > 0) {
        --sp;
        const uint64_t code = stack[sp].code;
        const unsigned lvl = stack[sp].lvl;
        size_t r0 = stack[sp].r0;
        const size_t r1 = stack[sp].r1;
        if (q->run_key[r0] == ((code << QT_LEVEL_BITS) | lvl)) {
            for (size_t p = q->run_start[r0]; p < q->run_start[r0 + 1]; ++p) {
                if (bp_query_hit(qu, f, q->ids[p])) {
                    bp_status st = bp_index_push(out, q->ids[p]);
                    if (st != BP_OK) return st;
                }
            }
            ++r0;
        }
        if (lvl == L || r0 >= r1) continue;
        const unsigned csh = (unsigned)d * (L - lvl - 1);
        const uint32_t side = (uint32_t)1 << (L - lvl - 1);  // child edge in finest cells
        const int kids = 1 << d;
        for (int k = 0; k < kids && r0 < r1; ++k) {
            const uint64_t ccode = code + ((uint64_t)k << csh);
            const uint64_t kend = (ccode + ((uint64_t)1 << csh)) << QT_LEVEL_BITS;
            size_t e = bp_lower_bound64(q->run_key, r0, r1, kend);
            if (e > r0) {
                uint32_t c0[3], c1[3];
                qt_decode(d, ccode, c0);
                bool meets = true;
                for (int a = 0; a < d; ++a) {
                    int64_t lo = c0[a], hi = (int64_t)c0[a] + side - 1;
                    if (q->loose) {
                        // Enlarged by half a cell (nothing at the finest level).
                        int64_t g = side > 1 ? side / 2 : 0;
                        lo -= g;
                        hi += g;
                    }
                    meets &= ((int64_t)qr[a] <= hi) & (lo <= (int64_t)qr[d + a]);
                }
                (void)c1;
                if (meets) {
                    stack[sp].code = ccode;
                    stack[sp].lvl = lvl + 1;
                    stack[sp].r0 = r0;
                    stack[sp].r1 = e;
                    ++sp;
                }
            }
            r0 = e;
        }
    }
    return BP_OK;
}

// Occupied cells, each drawn with its level (0: the root).
static void qt_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw) {
    const bp_quadtree *q = (const bp_quadtree *)m;
    (void)f;
    if (!draw->box || !q->valid) return;
    const int d = q->dim;
    for (size_t r = 0; r < q->nruns; ++r) {
        const unsigned lvl = qt_key_level(q->run_key[r]);
        uint32_t c[3];
        qt_decode(d, qt_key_code(q->run_key[r]), c);
        const double side = (double)((uint64_t)1 << (q->levels - lvl));
        float lo[3], hi[3];
        for (int a = 0; a < d; ++a) {
            if (q->scale[a] > 0.0) {
                lo[a] = (float)(q->origin[a] + (double)c[a] / q->scale[a]);
                hi[a] = (float)(q->origin[a] + ((double)c[a] + side) / q->scale[a]);
            } else {
                lo[a] = hi[a] = (float)q->origin[a];
            }
        }
        draw->box(lo, hi, (int)lvl, draw->user);
    }
}

// Keys sorted and consistent with the boxes, every box placed exactly once, runs and gathered
// boxes matching.
static bp_status qt_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_quadtree *q = (const bp_quadtree *)m;
    if (!q->valid || q->n != f->n) return BP_ERR_INVALID_ARG;
    const size_t n = q->n, s = (size_t)(2 * f->dim);
    for (size_t k = 0; k < n; ++k) {
        uint32_t i = q->ids[k];
        if (i >= n) return BP_ERR_INVALID_ARG;
        if (q->keys[k] != qt_key(q, bp_frame_box(f, i))) return BP_ERR_INVALID_ARG;
        if (k > 0 && q->keys[k - 1] > q->keys[k]) return BP_ERR_INVALID_ARG;
        for (size_t a = 0; a < s; ++a) {
            const float v = a < s / 2 ? bp_frame_box(f, i)[a] : -bp_frame_box(f, i)[a];
            if (q->sb[k * s + a] != v) return BP_ERR_INVALID_ARG;
        }
        if (qt_key_level(q->keys[k]) > q->levels) return BP_ERR_INVALID_ARG;
    }
    if (q->run_start[q->nruns] != n) return BP_ERR_INVALID_ARG;
    for (size_t r = 0; r < q->nruns; ++r) {
        size_t p0 = q->run_start[r], p1 = q->run_start[r + 1];
        if (p0 >= p1) return BP_ERR_INVALID_ARG;
        for (size_t p = p0; p < p1; ++p)
            if (q->keys[p] != q->run_key[r]) return BP_ERR_INVALID_ARG;
    }
    return bp_check_permutation(m->ctx, q->ids, n);
}

static void qt_stats(const bp_algorithm *m, bp_stats *out) {
    const bp_quadtree *q = (const bp_quadtree *)m;
    out->coherent = q->coherent;
    out->moved = q->moved;
    out->full_sorts = q->full_sorts;
    out->resorts = q->resorts;
}

const bp_algorithm_class bp_quadtree_class = {
    .name = "quadtree",
    .frame_sums = true,
    .create = qt_create,
    .destroy = qt_destroy,
    .find_pairs = qt_find_pairs,
    .reset = qt_reset,
    .query = qt_query,
    .debug_draw = qt_debug_draw,
    .validate = qt_validate,
    .stats = qt_stats,
};
