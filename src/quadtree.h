// The linear quadtree's (octree's) state and keys, shared by its three files: quadtree.c (the
// method: life cycle, queries, drawing, validation), quadtree_build.c (the mapping to cells, the
// keys' sort with temporal coherence, the layout in runs) and quadtree_walk.c (the pairs: the
// strict walk and the loose one). Private, never installed.
#ifndef BP_QUADTREE_H
#define BP_QUADTREE_H

#include "method.h"
#include "morton.h"

// Bits of the level field in a key; keys are (code << QT_LEVEL_BITS) | level and must stay below
// 2^63 so that the end of the root's range fits: 2D up to 29 levels, 3D up to 19.
#define QT_LEVEL_BITS 5u
#define QT_MAX_LEVELS_2D 29u
#define QT_MAX_LEVELS_3D 19u

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
    // Sweep of a crowded cell: the sort (keys, vals and the radix sort's scratch, which then holds
    // the rows' ids and sides) and the rows as the shared sweep reads them.
    uint32_t *sw_keys, *sw_vals, *sw_tmp_keys, *sw_tmp_vals;
    size_t sw_keys_cap, sw_vals_cap, sw_tmp_keys_cap, sw_tmp_vals_cap;
    float *sw_soa;
    size_t sw_soa_cap;
    size_t act_peak, sw_peak;  // largest needs of the last frame: reserved ahead with headroom
} qt_walk_mem;

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

static inline unsigned qt_max_levels(int dim) { return dim == 3 ? QT_MAX_LEVELS_3D : QT_MAX_LEVELS_2D; }

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

/// Chooses levels and world for this frame, keeping last frame's mapping when it still fits
/// (quadtree_build.c).
void bp_qt_choose_mapping(bp_quadtree *q, const bp_frame *f, const bp_context_def *def);

/// Computes the keys and sorts (keys, ids), reusing last frame's order when it can
/// (quadtree_build.c). BP_ERR_NOMEM leaves last frame's order intact.
bp_status bp_qt_sort(bp_quadtree *q, const bp_frame *f);

/// Gathers the boxes in sorted order and cuts the sorted keys into runs, one per occupied cell
/// (quadtree_build.c).
bp_status bp_qt_layout(bp_quadtree *q, const bp_frame *f);

/// Every overlapping pair of the laid-out boxes into the sink: the strict walk or the loose one
/// (quadtree_walk.c).
bp_status bp_qt_pairs(bp_quadtree *q, bp_sink *sink, uint64_t *checks);

/// Frees a walk's memory (quadtree_walk.c).
void bp_qt_walk_mem_free(bp_context *ctx, qt_walk_mem *w);

#endif
