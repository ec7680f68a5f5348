// The exact narrow tests the seeds use: box-box, circle-circle, sphere-sphere, circle-box,
// sphere-box. Computed in double from float input, so products and sums of two floats do not
// round the decision the way float arithmetic would; where the double result is within its
// rounding error of the radius, exact arithmetic decides (src/query.c; circle-box and
// sphere-box share the region queries' test).
#include <math.h>

#include "query.h"

static bp_status check_box(const float *b, int d) {
    for (int a = 0; a < 2 * d; ++a)
        if (!isfinite(b[a])) return BP_ERR_NONFINITE;
    for (int a = 0; a < d; ++a)
        if (b[a] > b[d + a]) return BP_ERR_INVERTED_BOX;
    return BP_OK;
}

static bp_status check_ball(const float *c, float r, int d) {
    for (int a = 0; a < d; ++a)
        if (!isfinite(c[a])) return BP_ERR_NONFINITE;
    if (!isfinite(r)) return BP_ERR_NONFINITE;
    if (r < 0.0f) return BP_ERR_NEGATIVE_RADIUS;
    return BP_OK;
}

static bp_status test_boxes(const float *a, const float *b, int d, bool *hit) {
    if (!a || !b || !hit) return BP_ERR_NULL;
    bp_status st = check_box(a, d);
    if (st == BP_OK) st = check_box(b, d);
    if (st != BP_OK) return st;
    bool h = true;
    for (int k = 0; k < d; ++k) h = h && a[k] <= b[d + k] && b[k] <= a[d + k];
    *hit = h;
    return BP_OK;
}

static bp_status test_balls(const float *ca, float ra, const float *cb, float rb, int d, bool *hit) {
    if (!ca || !cb || !hit) return BP_ERR_NULL;
    bp_status st = check_ball(ca, ra, d);
    if (st == BP_OK) st = check_ball(cb, rb, d);
    if (st != BP_OK) return st;
    double dist2 = 0.0;
    for (int k = 0; k < d; ++k) {
        double e = (double)ca[k] - (double)cb[k];
        dist2 += e * e;
    }
    double r = (double)ra + (double)rb, r2 = r * r, diff = dist2 - r2;
    // dist2 is within 5 roundings of the exact value and r2 within 3: only results closer than
    // that need the exact test (coordinates of very different magnitudes).
    if (diff > 1e-15 * (dist2 + r2)) *hit = false;
    else if (-diff > 1e-15 * (dist2 + r2)) *hit = true;
    else *hit = bp_balls_exact(ca, ra, cb, rb, d);
    return BP_OK;
}

static bp_status test_ball_box(const float *c, float r, const float *box, int d, bool *hit) {
    if (!c || !box || !hit) return BP_ERR_NULL;
    bp_status st = check_ball(c, r, d);
    if (st == BP_OK) st = check_box(box, d);
    if (st != BP_OK) return st;
    *hit = bp_sphere_box_hit(c, r, box, d);  // the region queries' exact test (src/method.h)
    return BP_OK;
}

bp_status bp_test_box2(const bp_box2 *a, const bp_box2 *b, bool *hit) {
    return test_boxes(a ? (const float *)(const void *)a : NULL, b ? (const float *)(const void *)b : NULL, 2, hit);
}

bp_status bp_test_box3(const bp_box3 *a, const bp_box3 *b, bool *hit) {
    return test_boxes(a ? (const float *)(const void *)a : NULL, b ? (const float *)(const void *)b : NULL, 3, hit);
}

bp_status bp_test_circle(const float ca[2], float ra, const float cb[2], float rb, bool *hit) {
    return test_balls(ca, ra, cb, rb, 2, hit);
}

bp_status bp_test_sphere(const float ca[3], float ra, const float cb[3], float rb, bool *hit) {
    return test_balls(ca, ra, cb, rb, 3, hit);
}

bp_status bp_test_circle_box(const float c[2], float r, const bp_box2 *box, bool *hit) {
    return test_ball_box(c, r, box ? (const float *)(const void *)box : NULL, 2, hit);
}

bp_status bp_test_sphere_box(const float c[3], float r, const bp_box3 *box, bool *hit) {
    return test_ball_box(c, r, box ? (const float *)(const void *)box : NULL, 3, hit);
}
