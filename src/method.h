// The algorithm interface: every broad-phase method is one const table of these slots, in its
// own file. A method's state embeds `bp_algorithm` as its first member; slots take the base
// pointer and downcast inside (no function-pointer casts).
#ifndef BP_METHOD_H
#define BP_METHOD_H

#include "broadphase.h"
#include "core.h"

typedef struct bp_algorithm_class bp_algorithm_class;

/// Base of every method's state (the public enum is `bp_method`; the running thing is an
/// algorithm).
typedef struct bp_algorithm {
    const bp_algorithm_class *cls;
    bp_context *ctx;  // for allocation (bp_alloc, BP_RESERVE) and the definition
} bp_algorithm;

/// A query shape, already validated. `lo`/`hi` bound the shape (for a sphere, its bounding box);
/// the exact test is bp_query_hit().
typedef enum bp_query_kind { BP_QUERY_BOX, BP_QUERY_SPHERE, BP_QUERY_POINT } bp_query_kind;
typedef struct bp_query {
    bp_query_kind kind;
    float lo[3], hi[3];
    float center[3];
    float radius;
} bp_query;

struct bp_algorithm_class {
    const char *name;
    /// Reads the frame's sums (size_sum, center_sum, center_sq): the load computes them only
    /// when true, or under AUTO.
    bool frame_sums;
    /// Allocates the method's state through bp_alloc(ctx, ...), zeroed except as it likes; the
    /// context sets the base fields. Called once, lazily, the first time the method runs.
    bp_status (*create)(bp_context *ctx, bp_algorithm **out);
    /// Frees the state and everything it owns.
    void (*destroy)(bp_algorithm *m);
    /// Finds every overlapping pair of the frame and pushes it to the sink (any order, either
    /// orientation: the sink canonicalises). Adds its candidate tests to stats->checks.
    /// Allocation failures return BP_ERR_NOMEM; the method must stay destroyable and must be
    /// usable again after reset().
    bp_status (*find_pairs)(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks);
    /// Drops temporal state (after an error, or when the other set of boxes came from elsewhere).
    void (*reset)(bp_algorithm *m);
    /// Region query against the frame of the last successful find_pairs: pushes every matching
    /// index (any order, each once) with bp_index_push. NULL: the context scans all boxes.
    bp_status (*query)(bp_algorithm *m, const bp_frame *f, const bp_query *q, bp_index_buf *out);
    /// Draws the structure of the last call. NULL: nothing to draw.
    void (*debug_draw)(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw);
    /// Checks internal invariants of the last call. NULL: nothing to check.
    bp_status (*validate)(const bp_algorithm *m, const bp_frame *f);
    /// Writes the counters of its speed features into the bp_stats fields they belong to
    /// (sweep_axis, coherent, moved, full_sorts, resorts). NULL: none (the defaults stand).
    void (*stats)(const bp_algorithm *m, bp_stats *out);
};

/// The speed features' fields of bp_stats for the method state that ran the last call (NULL:
/// none did): their defaults, then its class's stats slot. Called by bp_get_stats.
static inline void bp_algorithm_stats(const bp_algorithm *m, bp_stats *out) {
    out->sweep_axis = -1;
    out->coherent = false;
    out->moved = 0;
    out->full_sorts = 0;
    out->resorts = 0;
    if (m && m->cls->stats) m->cls->stats(m, out);
}

/// Whether the box (min[d], max[d]) is within distance r of c, decided exactly (expansion
/// arithmetic; src/query.c): the borderline case of bp_sphere_box_hit.
bool bp_sphere_box_exact(const float *c, float r, const float *box, int d);
/// Whether |ca - cb| <= ra + rb, decided exactly (src/query.c): the borderline case of the
/// circle and sphere narrow tests.
bool bp_balls_exact(const float *ca, float ra, const float *cb, float rb, int d);

/// Whether the box (min[d], max[d]) is within distance r of c (r >= 0, all finite): the
/// distance in double, and the exact test where that is too close to r to tell.
static inline bool bp_sphere_box_hit(const float *center, float r, const float *b, int d) {
    double dist2 = 0.0;
    for (int a = 0; a < d; ++a) {
        double c = center[a], lo = b[a], hi = b[d + a];
        double e = c < lo ? lo - c : (c > hi ? c - hi : 0.0);
        dist2 += e * e;
    }
    // r * r is exact (a float's square); dist2 is within 5 roundings (2^-53 each) of the exact
    // squared distance, so only a result that close to r * r needs the exact test.
    const double r2 = (double)r * (double)r, diff = dist2 - r2;
    if (diff > 1e-15 * dist2) return false;
    if (-diff > 1e-15 * dist2) return true;
    return bp_sphere_box_exact(center, r, b, d);
}

/// The exact test of a query against a box stored min[dim], max[dim].
static inline bool bp_query_hit_box(const bp_query *q, const float *b, int d) {
    for (int a = 0; a < d; ++a)
        if (b[a] > q->hi[a] || q->lo[a] > b[d + a]) return false;
    return q->kind != BP_QUERY_SPHERE || bp_sphere_box_hit(q->center, q->radius, b, d);
}

/// The exact test of a query against box k of the frame.
static inline bool bp_query_hit(const bp_query *q, const bp_frame *f, size_t k) {
    return bp_query_hit_box(q, bp_frame_box(f, k), f->dim);
}

/// Query shapes from the public arguments, validated (BP_ERR_NONFINITE, BP_ERR_INVERTED_BOX,
/// BP_ERR_NEGATIVE_RADIUS); -0.0 becomes +0.0. Shared by the context's and the world's queries
/// (src/query.c).
bp_status bp_query_make_box(bp_query *q, int dim, const float *lo, const float *hi);
bp_status bp_query_make_point(bp_query *q, int dim, const float *point);
bp_status bp_query_make_sphere(bp_query *q, int dim, const float *center, float radius);

// AUTO's question to the grid (src/grid.c): would its cells for frame f be far coarser than its
// boxes want, and crowded for it (boxes in a small part of a huge world: clusters far apart,
// which its keys cannot cover with fine cells)? From a sample of the boxes; the second form
// answers for the geometry the grid state m last chose, without sampling.
bool bp_grid_too_coarse(const bp_frame *f, float user_cell);
bool bp_grid_was_too_coarse(const bp_algorithm *m);

extern const bp_algorithm_class bp_brute_class;
extern const bp_algorithm_class bp_sweep_class;
extern const bp_algorithm_class bp_grid_class;
extern const bp_algorithm_class bp_quadtree_class;
extern const bp_algorithm_class bp_rdc_class;

#endif
