// The exact narrow tests: box-box (touching counts), circle-circle, sphere-sphere, circle-box,
// sphere-box, on cases computed by hand (exact touching, a corner the bounding boxes overlap but
// the circle misses), random integer inputs where exact arithmetic is easy, and every bad-input
// status. Usage: test_narrow CASE.
#include <float.h>

#include "harness.h"

static bool box2(float x0, float y0, float x1, float y1, float u0, float v0, float u1, float v1) {
    bp_box2 a = {{x0, y0}, {x1, y1}}, b = {{u0, v0}, {u1, v1}};
    bool hit = false, hit2 = false;
    CHECK_OK(bp_test_box2(&a, &b, &hit));
    CHECK_OK(bp_test_box2(&b, &a, &hit2));
    CHECK_MSG(hit == hit2, "box test not symmetric");
    return hit;
}

static void case_box2(int argc, char **argv) {
    (void)argc, (void)argv;
    CHECK(box2(0, 0, 1, 1, 0.5f, 0.5f, 2, 2));       // overlap
    CHECK(box2(0, 0, 1, 1, 1, 0, 2, 1));             // touching edge
    CHECK(box2(0, 0, 1, 1, 1, 1, 2, 2));             // touching corner
    CHECK(box2(0, 0, 1, 1, 0, 0, 1, 1));             // identical
    CHECK(box2(0, 0, 10, 10, 2, 2, 3, 3));           // inside
    CHECK(box2(0, 0, 0, 0, 0, 0, 0, 0));             // equal points
    CHECK(box2(0, 0, 1, 1, 1, 1, 1, 1));             // point on corner
    CHECK(box2(-0.0f, 0, 1, 1, -1, -1, 0.0f, 0.0f)); // signed zeros
    CHECK(!box2(0, 0, 1, 1, nextafterf(1, 2), 0, 2, 1));  // one ulp apart
    CHECK(!box2(0, 0, 1, 1, 0, 2, 1, 3));            // apart on y only
    CHECK(!box2(0, 0, 1, 1, 2, 0, 3, 1));            // apart on x only
    CHECK(box2(-FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX, 1e30f, 1e30f, 1e30f, 1e30f));
    CHECK(!box2(-FLT_MAX, -FLT_MAX, -1e38f, -1e38f, 1e38f, 1e38f, FLT_MAX, FLT_MAX));
}

static bool box3(const float a[6], const float b[6]) {
    bool hit = false, hit2 = false;
    CHECK_OK(bp_test_box3(bpt_as3(a), bpt_as3(b), &hit));
    CHECK_OK(bp_test_box3(bpt_as3(b), bpt_as3(a), &hit2));
    CHECK(hit == hit2);
    return hit;
}

static void case_box3(int argc, char **argv) {
    (void)argc, (void)argv;
    const float u[6] = {0, 0, 0, 1, 1, 1};
    const float face[6] = {1, 0, 0, 2, 1, 1}, edge[6] = {1, 1, 0, 2, 2, 1}, corner[6] = {1, 1, 1, 2, 2, 2};
    const float apart_z[6] = {0, 0, 1.5f, 1, 1, 2}, in[6] = {0.25f, 0.25f, 0.25f, 0.5f, 0.5f, 0.5f};
    const float pt[6] = {1, 1, 1, 1, 1, 1};
    CHECK(box3(u, face));
    CHECK(box3(u, edge));
    CHECK(box3(u, corner));
    CHECK(box3(u, in));
    CHECK(box3(u, pt));
    CHECK(!box3(u, apart_z));
    float near[6] = {0, 0, nextafterf(1, 2), 1, 1, 2};
    CHECK(!box3(u, near));
}

// The circle (d = 2) or sphere (d = 3) test of a against b, which must agree with b against a.
static bool round_pair(int d, const float *a, float ra, const float *b, float rb) {
    bool hit = false, hit2 = false;
    CHECK_OK(bpt_test_round(d, a, ra, b, rb, &hit));
    CHECK_OK(bpt_test_round(d, b, rb, a, ra, &hit2));
    CHECK(hit == hit2);
    return hit;
}

static bool circle(float x0, float y0, float r0, float x1, float y1, float r1) {
    float a[2] = {x0, y0}, b[2] = {x1, y1};
    return round_pair(2, a, r0, b, r1);
}

static void case_circle(int argc, char **argv) {
    (void)argc, (void)argv;
    CHECK(circle(0, 0, 1, 2, 0, 1));        // touching: distance 2 == 1 + 1
    CHECK(!circle(0, 0, 1, nextafterf(2, 3), 0, 1));
    CHECK(circle(0, 0, 1, 3, 4, 4));        // 3-4-5: distance 5 == 1 + 4
    CHECK(!circle(0, 0, 1, 3, 4, nextafterf(4, 0)));
    CHECK(circle(0, 0, 0, 0, 0, 0));        // coincident points
    CHECK(!circle(0, 0, 0, 1e-30f, 0, 0));  // distinct points
    CHECK(circle(0, 0, 10, 1, 1, 1));       // inside
    CHECK(circle(-1e7f, 0, 5e6f, 0, 0, 5e6f));  // large, touching
    // Floats whose float arithmetic would round the decision: 0.1 + 0.2 (in float) vs 0.3.
    CHECK(circle(0, 0, 0.1f, 0.3f, 0, 0.2f) == ((double)0.3f <= (double)0.1f + (double)0.2f));
    // Coordinates of very different magnitudes (docs/reliability.md, defect 4), where double
    // rounds: with C = 1e30f, |(C, 0) - (0, y)|^2 = C^2 + y^2 against (C + r1)^2 = C^2 +
    // 2 C r1 + r1^2: for r1 = 0 only y = 0 touches; for r1 = 1e-30f (2 C r1 is about 2) y = 1
    // is inside and y = 2 outside. Double rounds all of them to C^2.
    CHECK(circle(1e30f, 0, 1e30f, 0, 0, 0));
    CHECK(!circle(1e30f, 0, 1e30f, 0, 1e14f, 0));
    CHECK(circle(1e30f, 0, 1e30f, 0, 1, 1e-30f));
    CHECK(!circle(1e30f, 0, 1e30f, 0, 2, 1e-30f));
}

static bool sphere(const float a[3], float ra, const float b[3], float rb) { return round_pair(3, a, ra, b, rb); }

static void case_sphere(int argc, char **argv) {
    (void)argc, (void)argv;
    const float o[3] = {0, 0, 0}, p[3] = {2, 3, 6};  // |p| = 7
    CHECK(sphere(o, 3, p, 4));
    CHECK(!sphere(o, 3, p, nextafterf(4, 0)));
    CHECK(sphere(o, 0, o, 0));
    const float big[3] = {1e30f, 0, 0}, y1[3] = {0, 1, 0}, y2[3] = {0, 0, 2};  // (see case_circle)
    CHECK(sphere(big, 1e30f, y1, 1e-30f));
    CHECK(!sphere(big, 1e30f, y2, 1e-30f));
    CHECK(!sphere(big, 1e30f, y1, 0));
    CHECK(sphere(big, 1e30f, o, 0));
    CHECK(sphere(o, 100, p, 0));
    const float q[3] = {1, 2, 2};  // |q| = 3
    CHECK(sphere(o, 1, q, 2));
    CHECK(!sphere(o, 1, q, 1.99f));
}

static bool circle_box(float cx, float cy, float r, float x0, float y0, float x1, float y1) {
    float c[2] = {cx, cy};
    bp_box2 b = {{x0, y0}, {x1, y1}};
    bool hit = false;
    CHECK_OK(bp_test_circle_box(c, r, &b, &hit));
    return hit;
}

static void case_circle_box(int argc, char **argv) {
    (void)argc, (void)argv;
    CHECK(circle_box(0, 0, 1, 1, 0, 2, 1));        // touching the left edge at (1, 0)
    CHECK(circle_box(0, 0, 1, 0, 1, 1, 2));        // touching the bottom edge at (0, 1)
    CHECK(!circle_box(0, 0, 1, nextafterf(1, 2), 0, 2, 1));
    // Corner: the bounding boxes overlap ([-1,1]^2 and [0.8,2]^2) but the corner (0.8, 0.8) is
    // at distance 1.13 > 1.
    CHECK(!circle_box(0, 0, 1, 0.8f, 0.8f, 2, 2));
    CHECK(circle_box(0, 0, 1.5f, 0.8f, 0.8f, 2, 2));
    // Corner at distance exactly 5 (3-4-5).
    CHECK(circle_box(0, 0, 5, 3, 4, 10, 10));
    CHECK(!circle_box(0, 0, nextafterf(5, 0), 3, 4, 10, 10));
    CHECK(circle_box(5, 5, 0, 0, 0, 10, 10));      // centre inside, radius 0
    CHECK(circle_box(10, 10, 0, 0, 0, 10, 10));    // centre on the corner, radius 0
    CHECK(circle_box(1, 1, 0, 1, 1, 1, 1));        // point box at the centre
    CHECK(!circle_box(0, 0, 0.5f, 1, 1, 1, 1));    // point box outside
    CHECK(circle_box(0, 0, 100, -1, -1, 1, 1));    // box inside the circle
    // Coordinates of very different magnitudes (docs/reliability.md, defect 4): the squared
    // distance from (1e30, 0) to (0, y) is r^2 + y^2, above r^2 = 1e30^2 for any y != 0, but
    // 1e60 + 1e28 rounds to 1e60 in double.
    CHECK(circle_box(1e30f, 0, 1e30f, 0, 0, 0, 0));
    CHECK(!circle_box(1e30f, 0, 1e30f, 0, 1e14f, 0, 1e14f));
    CHECK(!circle_box(1e30f, 0, 1e30f, -1, -1e-45f, 0, -1e-45f));
    CHECK(circle_box(1e30f, 0, nextafterf(1e30f, 2e30f), 0, 1e14f, 0, 1e14f));
}

static bool sphere_box(float cx, float cy, float cz, float r, const float box[6]) {
    float c[3] = {cx, cy, cz};
    bool hit = false;
    CHECK_OK(bp_test_sphere_box(c, r, bpt_as3(box), &hit));
    return hit;
}

static void case_sphere_box(int argc, char **argv) {
    (void)argc, (void)argv;
    const float face[6] = {1, 0, 0, 2, 1, 1};
    CHECK(sphere_box(0, 0, 0, 1, face));
    CHECK(!sphere_box(0, 0, 0, nextafterf(1, 0), face));
    const float corner[6] = {2, 3, 6, 9, 9, 9};  // nearest corner (2, 3, 6) at distance 7
    CHECK(sphere_box(0, 0, 0, 7, corner));
    CHECK(!sphere_box(0, 0, 0, nextafterf(7, 0), corner));
    const float cube[6] = {0.8f, 0.8f, 0.8f, 2, 2, 2};  // bounding boxes overlap, sphere misses
    CHECK(!sphere_box(0, 0, 0, 1, cube));
    CHECK(sphere_box(1, 1, 1, 0, cube));  // centre inside
    const float far[6] = {0, 1e14f, -1e-45f, 0, 1e14f, -1e-45f};  // (see case_circle_box)
    CHECK(!sphere_box(1e30f, 0, 0, 1e30f, far));
    CHECK(sphere_box(1e30f, 0, 0, nextafterf(1e30f, 2e30f), far));
    const float near_[6] = {-5, 0, 0, 0, 0, 0};
    CHECK(sphere_box(1e30f, 0, 0, 1e30f, near_));
}

// Integer coordinates up to 2^10: every distance and sum is exact in double, so the expected
// answer is computed here in integers.
static void case_random(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(1);
    for (int t = 0; t < 100000; ++t) {
        int d = t % 2 ? 3 : 2;
        long long ca[3], cb[3], ra = (long long)bpt_below(&r, 64), rb = (long long)bpt_below(&r, 64);
        long long lo[3], hi[3], lo2[3], hi2[3];
        float fca[3], fcb[3], box[6], box2[6];
        for (int a = 0; a < d; ++a) {
            ca[a] = (long long)bpt_below(&r, 256) - 128;
            cb[a] = (long long)bpt_below(&r, 256) - 128;
            lo[a] = (long long)bpt_below(&r, 256) - 128;
            hi[a] = lo[a] + (long long)bpt_below(&r, 64);
            lo2[a] = (long long)bpt_below(&r, 256) - 128;
            hi2[a] = lo2[a] + (long long)bpt_below(&r, 64);
            fca[a] = (float)ca[a];
            fcb[a] = (float)cb[a];
            box[a] = (float)lo[a];
            box[d + a] = (float)hi[a];
            box2[a] = (float)lo2[a];
            box2[d + a] = (float)hi2[a];
        }
        long long dist2 = 0, bdist2 = 0;
        bool boxes = true;
        for (int a = 0; a < d; ++a) {
            dist2 += (ca[a] - cb[a]) * (ca[a] - cb[a]);
            long long e = ca[a] < lo[a] ? lo[a] - ca[a] : ca[a] > hi[a] ? ca[a] - hi[a] : 0;
            bdist2 += e * e;
            boxes = boxes && lo[a] <= hi2[a] && lo2[a] <= hi[a];
        }
        bool hit = false;
        bpt_note("trial %d", t);
        CHECK_OK(bpt_test_round(d, fca, (float)ra, fcb, (float)rb, &hit));
        CHECK_EQ(hit, dist2 <= (ra + rb) * (ra + rb));
        CHECK_OK(bpt_test_round_box(d, fca, (float)ra, box, &hit));
        CHECK_EQ(hit, bdist2 <= ra * ra);
        CHECK_OK(bpt_test_boxes(d, box, box2, &hit));
        CHECK_EQ(hit, boxes);
    }
}

// Every bad input of every narrow test: NULL, NaN / +inf / -inf in each slot, min > max,
// negative radius.
static void case_bad_input(int argc, char **argv) {
    (void)argc, (void)argv;
    bool hit = true;
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    for (int d = 2; d <= 3; ++d) {
        float a[6] = {0, 0, 0, 1, 1, 1}, b[6] = {0, 0, 0, 1, 1, 1}, c[3] = {0, 0, 0};
        if (d == 2) a[2] = a[3] = b[2] = b[3] = 1;  // 2D boxes are min[2], max[2]
        CHECK_OK(bpt_test_boxes(d, a, b, &hit));
        CHECK(hit);
        CHECK_ST(bpt_test_boxes(d, NULL, b, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_boxes(d, a, NULL, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_boxes(d, a, b, NULL), BP_ERR_NULL);
        CHECK_ST(bpt_test_round(d, NULL, 1, c, 1, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_round(d, c, 1, NULL, 1, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_round(d, c, 1, c, 1, NULL), BP_ERR_NULL);
        CHECK_ST(bpt_test_round_box(d, NULL, 1, a, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_round_box(d, c, 1, NULL, &hit), BP_ERR_NULL);
        CHECK_ST(bpt_test_round_box(d, c, 1, a, NULL), BP_ERR_NULL);
        for (int slot = 0; slot < 2 * d; ++slot) {
            for (int k = 0; k < 3; ++k) {
                bpt_note("%dD slot %d value %d", d, slot, k);
                float save = a[slot];
                a[slot] = bad[k];
                CHECK_ST(bpt_test_boxes(d, a, b, &hit), BP_ERR_NONFINITE);
                CHECK_ST(bpt_test_boxes(d, b, a, &hit), BP_ERR_NONFINITE);
                CHECK_ST(bpt_test_round_box(d, c, 1, a, &hit), BP_ERR_NONFINITE);
                a[slot] = save;
            }
        }
        for (int ax = 0; ax < d; ++ax) {
            float save = a[ax];
            a[ax] = 2;  // min > max
            CHECK_ST(bpt_test_boxes(d, a, b, &hit), BP_ERR_INVERTED_BOX);
            CHECK_ST(bpt_test_boxes(d, b, a, &hit), BP_ERR_INVERTED_BOX);
            CHECK_ST(bpt_test_round_box(d, c, 1, a, &hit), BP_ERR_INVERTED_BOX);
            a[ax] = save;
            for (int k = 0; k < 3; ++k) {
                float cs = c[ax];
                c[ax] = bad[k];
                CHECK_ST(bpt_test_round(d, c, 1, b, 1, &hit), BP_ERR_NONFINITE);
                CHECK_ST(bpt_test_round(d, b, 1, c, 1, &hit), BP_ERR_NONFINITE);
                CHECK_ST(bpt_test_round_box(d, c, 1, a, &hit), BP_ERR_NONFINITE);
                c[ax] = cs;
            }
        }
        for (int k = 0; k < 3; ++k) {
            CHECK_ST(bpt_test_round(d, c, bad[k], b, 1, &hit), BP_ERR_NONFINITE);
            CHECK_ST(bpt_test_round(d, c, 1, b, bad[k], &hit), BP_ERR_NONFINITE);
            CHECK_ST(bpt_test_round_box(d, c, bad[k], a, &hit), BP_ERR_NONFINITE);
        }
        CHECK_ST(bpt_test_round(d, c, -1, b, 1, &hit), BP_ERR_NEGATIVE_RADIUS);
        CHECK_ST(bpt_test_round(d, c, 1, b, -FLT_MIN, &hit), BP_ERR_NEGATIVE_RADIUS);
        CHECK_ST(bpt_test_round_box(d, c, -0.5f, a, &hit), BP_ERR_NEGATIVE_RADIUS);
        CHECK_OK(bpt_test_round_box(d, c, -0.0f, a, &hit));  // -0 is zero, not negative
        CHECK(hit);
    }
}

static const bpt_case cases[] = {
    {"box2", case_box2},           {"box3", case_box3},
    {"circle", case_circle},       {"sphere", case_sphere},
    {"circle_box", case_circle_box}, {"sphere_box", case_sphere_box},
    {"random", case_random},       {"bad_input", case_bad_input},
};

BPT_MAIN(cases)
