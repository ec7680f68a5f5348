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
//
// The method's files: quadtree.h (state, keys), quadtree_build.c (mapping, sort, layout),
// quadtree_walk.c (pairs); this one holds its life cycle, queries, drawing and validation.
#include "quadtree.h"
#include "sort.h"

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
    bp_qt_walk_mem_free(ctx, &q->walk);
    for (size_t w = 0; w < q->wmem_cap; ++w) bp_qt_walk_mem_free(ctx, &q->wmem[w]);
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

static bp_status qt_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_quadtree *q = (bp_quadtree *)m;
    q->valid = false;
    q->coherent = false;
    q->moved = f->n;
    bp_qt_choose_mapping(q, f, bp_context_def_of(m->ctx));
    bp_status st = bp_qt_sort(q, f);
    if (st != BP_OK) return st;
    q->n = f->n;
    q->ordered = true;
    st = bp_qt_layout(q, f);
    if (st != BP_OK) return st;
    q->valid = true;
    return bp_qt_pairs(q, sink, checks);
}

// ---------------------------------------------------------------------------------------------
// Queries, drawing, validation

// A query's traversal: descends the implicit tree from the root, visiting only cells whose region
// (enlarged for loose placement) meets the window's cell range, each with the runs of its subtree.
static bp_status qt_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *qu) {
    (void)f;
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
                bp_status st = qu->visit(qu, q->ids[p]);
                if (st != BP_OK) return st;
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
    .size = sizeof(bp_quadtree),
    .destroy = qt_destroy,
    .find_pairs = qt_find_pairs,
    .reset = qt_reset,
    .visit = qt_visit,
    .debug_draw = qt_debug_draw,
    .validate = qt_validate,
    .stats = qt_stats,
};
