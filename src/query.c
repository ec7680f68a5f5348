// Query shapes from the public arguments, validated once for the context's and the world's
// queries; their exact tests; the traversal without a structure; the region visitor.
#include <math.h>

#include "exact.h"
#include "query.h"

bp_status bp_query_make_box(bp_query *q, int dim, const float *lo, const float *hi) {
    memset(q, 0, sizeof *q);
    q->kind = BP_QUERY_BOX;
    for (int a = 0; a < dim; ++a) {
        if (!isfinite(lo[a]) || !isfinite(hi[a])) return BP_ERR_NONFINITE;
        if (lo[a] > hi[a]) return BP_ERR_INVERTED_BOX;
        q->lo[a] = lo[a] + 0.0f;
        q->hi[a] = hi[a] + 0.0f;
        q->center[a] = q->lo[a];
    }
    return BP_OK;
}

bp_status bp_query_make_point(bp_query *q, int dim, const float *point) {
    memset(q, 0, sizeof *q);
    q->kind = BP_QUERY_POINT;
    for (int a = 0; a < dim; ++a) {
        if (!isfinite(point[a])) return BP_ERR_NONFINITE;
        q->lo[a] = q->hi[a] = q->center[a] = point[a] + 0.0f;
    }
    return BP_OK;
}

bp_status bp_query_make_sphere(bp_query *q, int dim, const float *center, float radius) {
    memset(q, 0, sizeof *q);
    q->kind = BP_QUERY_SPHERE;
    if (!isfinite(radius)) return BP_ERR_NONFINITE;
    if (radius < 0.0f) return BP_ERR_NEGATIVE_RADIUS;
    q->radius = radius + 0.0f;
    for (int a = 0; a < dim; ++a) {
        if (!isfinite(center[a])) return BP_ERR_NONFINITE;
        q->center[a] = center[a] + 0.0f;
        // The bounding box, rounded outward so it never cuts off a box the exact test accepts;
        // from +0.0 (not -0.0 + -0.0 = -0.0: methods that search float keys order -0.0 below
        // +0.0, and a box starting at +0.0 fell outside such a window).
        const double lo = (double)q->center[a] - (double)q->radius, hi = (double)q->center[a] + (double)q->radius;
        float flo = (float)lo, fhi = (float)hi;
        if ((double)flo > lo) flo = nextafterf(flo, -INFINITY);
        if ((double)fhi < hi) fhi = nextafterf(fhi, INFINITY);
        q->lo[a] = flo;
        q->hi[a] = fhi;
    }
    return BP_OK;
}

// Exact arithmetic for the sphere test's borderline case (docs/reliability.md, defect 4): with
// coordinates of very different magnitudes the double distance rounds, e.g. centre (1e30, 0),
// radius 1e30 and the point (0, 1e14), whose squared distance exceeds r * r by 1e28, far below
// one unit in the last place of 1e60. Every value below is a float or built from floats by
// exact steps (Shewchuk's two-sum and two-product): no overflow (all below 2^259) and no
// underflow (all multiples of 2^-298, far above double's smallest 2^-1074).

// Adds (a - b)^2 exactly: a - b = hi + lo (two-sum), (hi + lo)^2 = hi^2 + 2 hi lo + lo^2.
static size_t add_diff_squared(double *e, size_t n, double a, double b) {
    double lo;
    const double hi = bp_two_sum(a, -b, &lo);
    n = bp_add_product(e, n, hi, hi);
    n = bp_add_product(e, n, 2.0 * hi, lo);
    return bp_add_product(e, n, lo, lo);
}

bool bp_sphere_box_exact(const float *c, float r, const float *box, int d) {
    // The sign of the sum over axes of e^2, minus r^2.
    double e[40];
    size_t n = bp_add_product(e, 0, -(double)r, (double)r);
    for (int a = 0; a < d; ++a) {
        if (c[a] < box[a]) n = add_diff_squared(e, n, box[a], c[a]);
        else if (c[a] > box[d + a]) n = add_diff_squared(e, n, c[a], box[d + a]);
    }
    return n == 0 || e[n - 1] <= 0.0;
}

bool bp_balls_exact(const float *ca, float ra, const float *cb, float rb, int d) {
    // The sign of |ca - cb|^2 - (ra^2 + 2 ra rb + rb^2); each product of two floats is exact.
    double e[40];
    size_t n = bp_add_product(e, 0, -(double)ra, (double)ra);
    n = bp_add_product(e, n, -2.0 * (double)ra, (double)rb);
    n = bp_add_product(e, n, -(double)rb, (double)rb);
    for (int a = 0; a < d; ++a) n = add_diff_squared(e, n, ca[a], cb[a]);
    return n == 0 || e[n - 1] <= 0.0;
}

bp_status bp_visit_frame(const bp_frame *f, bp_visitor *v) {
    const int d = f->dim;
    for (size_t k = 0; k < f->n; ++k) {
        const float *b = bp_frame_box(f, k);
        bool touch = true;
        for (int a = 0; a < d; ++a) touch &= !(b[a] > v->hi[a] || v->lo[a] > b[d + a]);
        if (!touch) continue;
        const bp_status st = v->visit(v, (uint32_t)k);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

bp_status bp_region_visit(bp_visitor *v, uint32_t index) {
    const bp_region_visitor *rv = (const bp_region_visitor *)v;
    const float *box = rv->boxes + (size_t)index * (size_t)(2 * rv->dim);
    return bp_query_hit_box(rv->q, box, rv->dim) ? bp_index_push(rv->out, index) : BP_OK;
}

void bp_region_visitor_init(bp_region_visitor *rv, const bp_query *q, const float *boxes, int dim, bp_index_buf *out) {
    for (int a = 0; a < 3; ++a) {
        rv->base.lo[a] = q->lo[a];
        rv->base.hi[a] = q->hi[a];
    }
    rv->base.visit = bp_region_visit;
    rv->q = q;
    rv->boxes = boxes;
    rv->dim = dim;
    rv->out = out;
}
