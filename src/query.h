// Queries: the shapes, their exact tests, and the one traversal contract (bp_visitor) that every
// method's structure and the world's cells implement. A query kind is written once, as a
// visitor; a structure is written once, as a traversal that hands it candidates.
#ifndef BP_QUERY_H
#define BP_QUERY_H

#include "core.h"

/// A query shape, already validated. `lo`/`hi` bound the shape (for a sphere, its bounding box);
/// the exact test is bp_query_hit().
typedef enum bp_query_kind { BP_QUERY_BOX, BP_QUERY_SPHERE, BP_QUERY_POINT } bp_query_kind;
typedef struct bp_query {
    bp_query_kind kind;
    float lo[3], hi[3];
    float center[3];
    float radius;
} bp_query;

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
/// BP_ERR_NEGATIVE_RADIUS); -0.0 becomes +0.0. Shared by the context's and the world's queries.
bp_status bp_query_make_box(bp_query *q, int dim, const float *lo, const float *hi);
bp_status bp_query_make_point(bp_query *q, int dim, const float *point);
bp_status bp_query_make_sphere(bp_query *q, int dim, const float *center, float radius);

/// One traversal of a structure for a query. The structure hands `visit` the index of every box
/// that may touch the window [lo, hi] (closed), each box at most once, in any order, and prunes
/// by the window: every box that touches it is handed over unless a call ends the traversal. It
/// may hand over boxes outside the window: the visitor tests what it gets. The visitor may
/// shrink the window between calls (a cast that found a nearer hit, a nearest query closing in);
/// a structure that reads it again after a call prunes more, one that reads it once is still
/// correct. `visit` returns BP_OK to go on; anything else ends the traversal, which returns it
/// (BP_ERR_STOPPED: the visitor has what it wants).
typedef struct bp_visitor bp_visitor;
struct bp_visitor {
    float lo[3], hi[3];
    bp_status (*visit)(bp_visitor *v, uint32_t index);
};

/// The traversal without a structure: every box of the frame whose box touches the window.
bp_status bp_visit_frame(const bp_frame *f, bp_visitor *v);

/// Region queries as a visitor: the exact test of `q` on each candidate, box k being the 2 * dim
/// floats at boxes + k * 2 * dim (a frame's boxes, the world's), matches pushed to `out` (any
/// order; the caller sorts). The context's and the world's region queries are this visitor.
typedef struct bp_region_visitor {
    bp_visitor base;  // first: the traversal's pointer is this visitor's
    const bp_query *q;
    const float *boxes;
    int dim;
    bp_index_buf *out;
} bp_region_visitor;

/// A region visitor for q over `boxes` into out (its window: q's bounds).
void bp_region_visitor_init(bp_region_visitor *rv, const bp_query *q, const float *boxes, int dim, bp_index_buf *out);

/// The same visitor's test and push for candidate `index`, for a visitor that wraps it (the
/// world's, which first tests a proxy's filter).
bp_status bp_region_visit(bp_visitor *v, uint32_t index);

#endif
