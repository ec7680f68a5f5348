// Region query shapes from the public arguments, validated once for the context's and the
// world's queries (src/method.h).
#include <math.h>

#include "method.h"

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
    q->radius = radius;
    for (int a = 0; a < dim; ++a) {
        if (!isfinite(center[a])) return BP_ERR_NONFINITE;
        q->center[a] = center[a] + 0.0f;
        // The bounding box, rounded outward so it never cuts off a box the exact test accepts.
        const double lo = (double)center[a] - (double)radius, hi = (double)center[a] + (double)radius;
        float flo = (float)lo, fhi = (float)hi;
        if ((double)flo > lo) flo = nextafterf(flo, -INFINITY);
        if ((double)fhi < hi) fhi = nextafterf(fhi, INFINITY);
        q->lo[a] = flo;
        q->hi[a] = fhi;
    }
    return BP_OK;
}
