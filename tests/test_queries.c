// Region queries (box, circle/sphere with the exact distance, point) for every method against a
// scan the test does with the narrow tests, on random and degenerate data: queries far outside,
// covering everything, flat, of radius 0, exactly touching. Results ascending, each index once.
// Usage: test_queries CASE METHOD DIM.
#include <float.h>

#include "harness.h"

typedef struct qstate {
    bp_method method;
    int dim;
    bpt_boxes boxes;  // what the last pair-finding call saw (A then B after a bipartite call)
    size_t checked;
} qstate;

// The state of a case from its arguments: METHOD DIM.
static qstate qstate_make(int argc, char **argv) {
    qstate s;
    memset(&s, 0, sizeof s);
    s.method = bpt_method_arg(argc, argv, 0);
    s.dim = bpt_dim_arg(argc, argv, 1);
    return s;
}

// Frees the case's state and the context it queried.
static void qstate_free(qstate *s, bp_context *ctx) {
    bp_context_destroy(ctx);
    bpt_boxes_free(&s->boxes);
}

static bool scan_hit(const qstate *s, const float *box, int kind, const float *q, float radius) {
    bool hit = false;
    const int d = s->dim;
    if (kind == 0) {  // q: lo then hi
        CHECK_OK(bpt_test_boxes(d, box, q, &hit));
    } else if (kind == 1) {
        CHECK_OK(bpt_test_round_box(d, q, radius, box, &hit));
        // A box outside the sphere's bounding box [c - r, c + r] (rounded outward) is outside
        // the sphere. The narrow test's double distance can round such a box in when the
        // coordinates are near FLT_MAX (distance FLT_MAX + 7 rounds to FLT_MAX); the query
        // prefilters exactly, so the scan does the same.
        for (int a = 0; a < d; ++a) {
            double lo = (double)q[a] - (double)radius, hi = (double)q[a] + (double)radius;
            if ((double)box[d + a] < lo || (double)box[a] > hi) hit = false;
        }
    } else {
        float pt[6];
        for (int a = 0; a < d; ++a) pt[a] = pt[d + a] = q[a];
        CHECK_OK(bpt_test_boxes(d, box, pt, &hit));
    }
    return hit;
}

static const char *const kinds[] = {"box", "sphere", "point"};

// Runs one query (kind 0 box with q = lo, hi; 1 sphere centre q, radius; 2 point q) and compares.
static void query(qstate *s, bp_context *ctx, int kind, const float *q, float radius) {
    const int d = s->dim;
    bp_indices idx;
    idx.count = 999;
    if (kind == 0) CHECK_OK(bp_query_box(ctx, q, q + d, &idx));
    else if (kind == 1) CHECK_OK(bp_query_sphere(ctx, q, radius, &idx));
    else CHECK_OK(bp_query_point(ctx, q, &idx));
    CHECK(idx.count == 0 || idx.indices != NULL);
    for (size_t k = 1; k < idx.count; ++k)
        CHECK_MSG(idx.indices[k - 1] < idx.indices[k], "%s query: results not strictly ascending at %zu", kinds[kind], k);
    size_t x = 0;
    for (size_t k = 0; k < s->boxes.n; ++k) {
        bool hit = scan_hit(s, bpt_box(&s->boxes, k), kind, q, radius);
        bool got = x < idx.count && idx.indices[x] == k;
        if (hit != got) {
            fprintf(stderr, "%s query (radius %.9g) at (%.9g, %.9g, %.9g)-(%.9g, %.9g, %.9g): box %zu %s\n", kinds[kind],
                    (double)radius, (double)q[0], (double)q[1], (double)(d == 3 ? q[2] : 0), (double)q[d],
                    (double)q[d + 1], (double)(d == 3 ? q[d + 2] : 0), k, hit ? "missing" : "extra");
            bpt_print_box("box", bpt_box(&s->boxes, k), d);
            bpt_fail(__FILE__, __LINE__, "query result differs from the scan");
        }
        if (got) ++x;
    }
    CHECK_MSG(x == idx.count, "%s query returned %zu indices, %zu valid", kinds[kind], idx.count, x);
    s->checked++;
}

static void find(qstate *s, bp_context *ctx) {
    bpt_pairs got = {0};
    CHECK_OK(bpt_find(ctx, s->dim, s->boxes.v, s->boxes.n, BPT_BUFFER, &got));
    bpt_pairs_free(&got);
}

// A batch of random queries around the boxes' bounds [lo, hi]: inside, far outside, covering
// everything, flat, radius 0 and huge, and anchored exactly on box corners.
static void random_queries(qstate *s, bp_context *ctx, bpt_rng *r, double lo, double hi, int count) {
    const int d = s->dim;
    const double span = hi - lo;
    for (int t = 0; t < count; ++t) {
        int kind = (int)bpt_below(r, 3);
        float q[6];
        float radius = 0.0f;
        int shape = (int)bpt_below(r, 8);
        for (int a = 0; a < d; ++a) {
            double c = bpt_uniform(r, lo - 0.1 * span, hi + 0.1 * span), h = span * exp(bpt_uniform(r, -8.0, 0.0));
            if (shape == 0) c += (bpt_coin(r, 0.5) ? 3.0 : -3.0) * span;  // far outside
            if (shape == 1) c = 0.5 * (lo + hi), h = span;                 // covering everything
            if (shape == 2 && a == 0) h = 0.0;                             // flat
            q[a] = (float)(c - h);
            q[d + a] = (float)(c + h);
            if (q[a] > q[d + a]) q[a] = q[d + a];
        }
        if (shape == 3 && s->boxes.n) {  // exactly on a box corner (touching)
            const float *b = bpt_box(&s->boxes, bpt_below(r, s->boxes.n));
            for (int a = 0; a < d; ++a) {
                q[a] = b[d + a];
                if (q[d + a] < q[a]) q[d + a] = q[a];
            }
        }
        if (kind == 1) {
            radius = (float)(span * exp(bpt_uniform(r, -10.0, 0.5)));
            if (shape == 2) radius = 0.0f;
            if (shape == 1) radius = (float)(span * 2.0);
        }
        bpt_note("random query %d (%s, shape %d), n = %zu", t, kinds[kind], shape, s->boxes.n);
        query(s, ctx, kind, q, radius);
    }
}

static void case_random(int argc, char **argv) {
    qstate s = qstate_make(argc, argv);
    bpt_rng r = bpt_rng_make(1);
    for (int t = 0; t < 60; ++t) {
        size_t n = t % 4 == 0 ? bpt_below(&r, 20) : bpt_below(&r, 1500);
        double hmax = exp(bpt_uniform(&r, log(0.01), log(50.0)));
        double off = bpt_coin(&r, 0.3) ? bpt_uniform(&r, -1e6, 1e6) : 0.0;
        bp_context *ctx = bpt_context(s.method, s.dim, NULL);
        bpt_random_boxes(&r, &s.boxes, s.dim, n, 100.0, bpt_coin(&r, 0.3) ? 0.0 : hmax * 0.01, hmax);
        for (size_t k = 0; k < n * (size_t)(2 * s.dim); ++k) s.boxes.v[k] = (float)((double)s.boxes.v[k] + off);
        for (int f = 0; f < 3; ++f) {
            find(&s, ctx);
            random_queries(&s, ctx, &r, off, off + 100.0, 25);
            bpt_jiggle(&r, &s.boxes, 0.5);
        }
        bp_context_destroy(ctx);
    }
    printf("%zu queries checked\n", s.checked);
    bpt_boxes_free(&s.boxes);
}

// Exact touching cases and degenerate sets.
static void case_degenerate(int argc, char **argv) {
    qstate s = qstate_make(argc, argv);
    const int d = s.dim;
    bpt_rng r = bpt_rng_make(2);
    bp_context *ctx = bpt_context(s.method, d, NULL);

    // A lattice of unit boxes: queries on lattice points and edges touch several boxes exactly.
    const int side = d == 2 ? 10 : 5;
    size_t cells = (size_t)side * (size_t)side * (d == 3 ? (size_t)side : 1);
    bpt_boxes_resize(&s.boxes, d, cells);
    for (size_t c = 0; c < cells; ++c) {
        float *b = bpt_box(&s.boxes, c);
        int idx[3] = {(int)(c % (size_t)side), (int)(c / (size_t)side % (size_t)side), (int)(c / (size_t)(side * side))};
        for (int a = 0; a < d; ++a) {
            b[a] = (float)idx[a];
            b[d + a] = (float)(idx[a] + 1);
        }
    }
    find(&s, ctx);
    for (int t = 0; t < 200; ++t) {
        float q[6];
        for (int a = 0; a < d; ++a) {
            q[a] = (float)bpt_below(&r, (size_t)side + 2) - 1.0f;
            q[d + a] = q[a] + (float)bpt_below(&r, 3);
        }
        float radius = (float)bpt_below(&r, 3) * (bpt_coin(&r, 0.5) ? 1.0f : 0.5f);
        bpt_note("lattice query %d", t);
        query(&s, ctx, t % 3, q, radius);
    }
    // Negative zeros: a sphere of radius -0.0 at (-0.0, ...) is the point (0, ...), which touches
    // the boxes at the lattice's corner (its bounding box once ended at -0.0, which RDC's
    // float-key window put below every box starting at +0.0: fuzz_context).
    {
        bpt_note("a sphere of radius -0.0 at (-0.0, -0.0, -0.0)");
        const float nz[3] = {-0.0f, -0.0f, -0.0f};
        query(&s, ctx, 1, nz, -0.0f);
        query(&s, ctx, 1, nz, 0.0f);
        query(&s, ctx, 2, nz, 0.0f);
    }
    // The circle of the narrow-test example: centre (0, 0) radius 1 touches [1, 2] x [0, 1] and
    // misses the box [0.8, 2] x [0.8, 2] whose bounding box it overlaps.
    bpt_boxes_resize(&s.boxes, d, 3);
    float *b0 = bpt_box(&s.boxes, 0), *b1 = bpt_box(&s.boxes, 1), *b2 = bpt_box(&s.boxes, 2);
    for (int a = 0; a < d; ++a) {
        b0[a] = a == 0 ? 1.0f : 0.0f;
        b0[d + a] = a == 0 ? 2.0f : 1.0f;
        b1[a] = 0.8f;
        b1[d + a] = 2.0f;
        b2[a] = -3.0f;
        b2[d + a] = -2.0f;
    }
    find(&s, ctx);
    float c[3] = {0, 0, 0};
    bp_indices idx;
    CHECK_OK(bp_query_sphere(ctx, c, 1.0f, &idx));
    CHECK_EQ(idx.count, 1);
    CHECK_EQ(idx.indices[0], 0);
    query(&s, ctx, 1, c, 1.0f);
    query(&s, ctx, 1, c, 0.0f);
    c[0] = -2.0f;
    query(&s, ctx, 2, c, 0.0f);

    // A box whose extent rounds down in float (4.20247841 - 1.91340482 = 2.28907347 in float,
    // 2.28907359 exactly) and a query touching its max: a window [lo - largest extent, hi]
    // built from the rounded extent cut it off (sweep, SEED=15 'test_queries random sweep 3').
    {
        bpt_note("a box whose extent rounds down, a query touching its max");
        volatile float mn = 1.91340482f, mx = 4.20247841f;
        CHECK((double)(mx - mn) < (double)mx - (double)mn);
        bpt_boxes_resize(&s.boxes, d, 2);
        for (int a = 0; a < d; ++a) {
            bpt_box(&s.boxes, 0)[a] = mn;
            bpt_box(&s.boxes, 0)[d + a] = mx;
            bpt_box(&s.boxes, 1)[a] = 100.0f;
            bpt_box(&s.boxes, 1)[d + a] = 101.0f;
        }
        find(&s, ctx);
        float q[6];
        for (int a = 0; a < d; ++a) q[a] = q[d + a] = mx;
        q[d] = 150.0f;
        query(&s, ctx, 0, q, 0.0f);
        query(&s, ctx, 2, q, 0.0f);
        query(&s, ctx, 1, q, 0.0f);
        CHECK_EQ(s.checked >= 3, 1);
    }

    // Points, identical boxes, everything on one x, huge coordinates and FLT_MAX.
    for (int set = 0; set < 5; ++set) {
        size_t n = 300;
        bpt_boxes_resize(&s.boxes, d, n);
        for (size_t k = 0; k < n; ++k) {
            float *b = bpt_box(&s.boxes, k);
            for (int a = 0; a < d; ++a) {
                float lo, hi;
                switch (set) {
                case 0: lo = hi = (float)bpt_below(&r, 6); break;
                case 1: lo = 2.0f, hi = 4.0f; break;
                case 2: lo = a == 0 ? 7.0f : (float)bpt_uniform(&r, 0, 50); hi = a == 0 ? 7.0f : lo + 1.0f; break;
                case 3: lo = (float)(1e7 + bpt_uniform(&r, -100, 100)); hi = lo + (float)bpt_below(&r, 4); break;
                default:
                    lo = bpt_coin(&r, 0.3) ? -FLT_MAX : (float)bpt_uniform(&r, -10, 10);
                    hi = bpt_coin(&r, 0.3) ? FLT_MAX : lo + 1.0f;
                    break;
                }
                b[a] = lo;
                b[d + a] = hi;
            }
        }
        find(&s, ctx);
        double lo = set == 3 ? 1e7 - 120 : -12, hi = set == 3 ? 1e7 + 120 : 55;
        random_queries(&s, ctx, &r, lo, hi, 150);
        if (set == 4) {  // queries at the ends of the float range
            float q[6];
            for (int a = 0; a < d; ++a) q[a] = -FLT_MAX, q[d + a] = FLT_MAX;
            query(&s, ctx, 0, q, 0.0f);
            query(&s, ctx, 1, q, FLT_MAX);
            query(&s, ctx, 2, q + d, 0.0f);
            query(&s, ctx, 2, q, 0.0f);
        }
    }
    // Coordinates of very different magnitudes (docs/reliability.md, defect 4): from the centre
    // (1e30, 0, 0) the squared distance to (0, y, 0) is r^2 + y^2 for r = 1e30, so only y = 0
    // is within r; in double 1e60 + 1e28 rounds to 1e60. Boxes 0-3 are (0, y) for y = 0, 1e14,
    // -1e-45, 1e-30; the expected hits are worked out here, not by a narrow test.
    {
        bpt_note("a sphere query with coordinates of very different magnitudes");
        static const float ys[4] = {0.0f, 1e14f, -1e-45f, 1e-30f};
        bpt_boxes_resize(&s.boxes, d, 4);
        for (size_t k = 0; k < 4; ++k) {
            float *b = bpt_box(&s.boxes, k);
            for (int a = 0; a < d; ++a) b[a] = b[d + a] = a == 1 ? ys[k] : 0.0f;
        }
        find(&s, ctx);
        const float c[3] = {1e30f, 0.0f, 0.0f};
        bp_indices idx;
        CHECK_OK(bp_query_sphere(ctx, c, 1e30f, &idx));
        CHECK_EQ(idx.count, 1);
        CHECK_EQ(idx.indices[0], 0);
        CHECK_OK(bp_query_sphere(ctx, c, nextafterf(1e30f, 2e30f), &idx));
        CHECK_EQ(idx.count, 4);
        // The world's queries share the test.
        bp_world_def wd = bp_default_world_def();
        wd.dimension = d;
        wd.method = s.method;
        bp_world *w = NULL;
        CHECK_OK(bp_world_create(&wd, &w));
        for (size_t k = 0; k < 4; ++k) {
            bp_proxy_def pd = bp_default_proxy_def();
            pd.user = k;
            bp_proxy_id id;
            CHECK_OK(d == 2 ? bp_world_add2(w, bpt_as2(bpt_box(&s.boxes, k)), &pd, &id)
                            : bp_world_add3(w, bpt_as3(bpt_box(&s.boxes, k)), &pd, &id));
        }
        bp_world_hits h;
        CHECK_OK(bp_world_query_sphere(w, c, 1e30f, UINT64_MAX, &h));
        CHECK_EQ(h.count, 1);
        CHECK_EQ(h.users[0], 0);
        bp_world_destroy(w);
    }
    // An empty set answers nothing.
    s.boxes.n = 0;
    find(&s, ctx);
    random_queries(&s, ctx, &r, 0, 10, 10);
    qstate_free(&s, ctx);
}

// After a bipartite call, queries see A followed by B (B's box j has index na + j).
static void case_after_between(int argc, char **argv) {
    qstate s = qstate_make(argc, argv);
    const int d = s.dim;
    bpt_rng r = bpt_rng_make(3);
    bp_context *ctx = bpt_context(s.method, d, NULL);
    bpt_boxes a = {0}, b = {0};
    bpt_pairs got = {0};
    for (int t = 0; t < 20; ++t) {
        size_t na = t % 5 == 0 ? 0 : bpt_below(&r, 400), nb = t % 7 == 3 ? 0 : bpt_below(&r, 400);
        bpt_random_boxes(&r, &a, d, na, 50.0, 0.1, 3.0);
        bpt_random_boxes(&r, &b, d, nb, 50.0, 0.1, 3.0);
        CHECK_OK(bpt_find_between(ctx, d, a.v, na, b.v, nb, &got));
        bpt_boxes_resize(&s.boxes, d, na + nb);
        if (na) memcpy(s.boxes.v, a.v, na * (size_t)(2 * d) * sizeof(float));
        if (nb) memcpy(bpt_box(&s.boxes, na), b.v, nb * (size_t)(2 * d) * sizeof(float));
        random_queries(&s, ctx, &r, 0.0, 50.0, 30);
    }
    qstate_free(&s, ctx);
    bpt_boxes_free(&a);
    bpt_boxes_free(&b);
    bpt_pairs_free(&got);
}

static const bpt_case cases[] = {
    {"random", case_random},
    {"degenerate", case_degenerate},
    {"after_between", case_after_between},
};

BPT_MAIN(cases)
