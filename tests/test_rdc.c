// Tests of method `rdc` (recursive dimensional clustering, seed 001): pair sets against brute
// force through the library, the seed's own figure, degenerate inputs, the threshold and epsilon
// options, region queries and out-of-memory. Self-contained: one test per command-line name,
// each registered with CTest (tests/rdc.cmake). Random tests print their seed; $SEED overrides
// it (default 1). Usage: test_rdc NAME (tests/harness.h)
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"
#include "harness.h"

// splitmix64 (docs/scenes.md, tests/harness.h) on a bare state word, never rand().
static uint64_t rng_next(uint64_t *s) {
    bpt_rng r = {*s};
    const uint64_t z = bpt_next(&r);
    *s = r.s;
    return z;
}
static double rng_u01(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }
static double rng_range(uint64_t *s, double a, double b) { return a + (b - a) * rng_u01(s); }

// ---------------------------------------------------------------------------------------------
// Helpers

static bp_context *make_ctx(int dim, bp_method m, uint32_t threshold, float eps) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = m;
    def.sort_pairs = true;  // canonical order: pair sets compare with memcmp
    def.rdc.threshold = threshold;
    def.rdc.epsilon = eps;
    bp_context *ctx = NULL;
    if (bp_context_create(&def, &ctx) != BP_OK) return NULL;
    return ctx;
}

// RDC beside brute force, its oracle, in one dimension (either NULL when it could not be made).
typedef struct rig {
    bp_context *rdc, *brute;
} rig;

static rig rig_open(int dim, uint32_t threshold) {
    rig g = {make_ctx(dim, BP_METHOD_RDC, threshold, 0.0f), NULL};
    g.brute = make_ctx(dim, BP_METHOD_BRUTE, 0, 0.0f);
    return g;
}

static void rig_close(rig *g) {
    bp_context_destroy(g->rdc);
    bp_context_destroy(g->brute);
}

static bp_status run(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    return dim == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, n, out)
                    : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)boxes, n, out);
}

// Finds the pairs with rdc (threshold, epsilon 0) and with brute force; they must be the same set.
// Also runs the validator.
static int same_as_brute(bp_context *rdc, bp_context *brute, int dim, const float *boxes, size_t n,
                         const char *what) {
    bp_pairs a, b;
    bp_status sa = run(rdc, dim, boxes, n, &a);
    bp_status sb = run(brute, dim, boxes, n, &b);
    if (sa != BP_OK || sb != BP_OK) {
        fprintf(stderr, "%s: status rdc %s brute %s (SEED=%" PRIu64 ")\n", what, bp_status_string(sa),
                bp_status_string(sb), bpt_seed);
        return 0;
    }
    if (a.count != b.count || (a.count && memcmp(a.pairs, b.pairs, a.count * sizeof *a.pairs) != 0)) {
        fprintf(stderr, "%s: n=%zu dim=%d rdc %zu pairs, brute %zu (SEED=%" PRIu64 ")\n", what, n, dim,
                a.count, b.count, bpt_seed);
        return 0;
    }
    if (bp_validate(rdc) != BP_OK) {
        fprintf(stderr, "%s: bp_validate failed (SEED=%" PRIu64 ")\n", what, bpt_seed);
        return 0;
    }
    return 1;
}

// n random boxes: centres in [0, world)^dim, extents up to `size` (some zero: points).
static void random_boxes(uint64_t *s, float *boxes, size_t n, int dim, double world, double size) {
    for (size_t k = 0; k < n; ++k) {
        float *b = boxes + k * (size_t)(2 * dim);
        for (int a = 0; a < dim; ++a) {
            double c = rng_range(s, 0.0, world);
            double e = rng_u01(s) < 0.1 ? 0.0 : rng_range(s, 0.0, size);
            b[a] = (float)(c - e / 2);
            b[dim + a] = (float)(c + e / 2);
            if (b[a] > b[dim + a]) b[a] = b[dim + a];
        }
    }
}

// Snaps every coordinate to a coarse lattice so that many boxes touch exactly.
static void snap_boxes(float *boxes, size_t n, int dim, float step) {
    for (size_t k = 0; k < n * (size_t)(2 * dim); ++k) boxes[k] = floorf(boxes[k] / step) * step;
}

// ---------------------------------------------------------------------------------------------
// Debug-draw capture

typedef struct drawn {
    int dim;
    size_t count[8];  // boxes drawn per level (levels >= 7 counted in 7)
    float lo[64][3], hi[64][3];  // the first final groups (level 0)
    size_t finals;
} drawn;

static void draw_box(const float *lo, const float *hi, int level, void *user) {
    drawn *d = user;
    d->count[level < 7 ? level : 7]++;
    if (level == 0 && d->finals < 64) {
        for (int a = 0; a < d->dim; ++a) {
            d->lo[d->finals][a] = lo[a];
            d->hi[d->finals][a] = hi[a];
        }
        d->finals++;
    }
}

static int has_final(const drawn *d, const float *box) {
    for (size_t k = 0; k < d->finals; ++k) {
        int same = 1;
        for (int a = 0; a < d->dim; ++a) same &= d->lo[k][a] == box[a] && d->hi[k][a] == box[d->dim + a];
        if (same) return 1;
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Tests

// The seed's figure: x groups [A, B, C], y splits [B] and [A, C], x again splits [A] and [C].
static void test_seed_figure(int argc, char **argv) {
    (void)argc, (void)argv;
    const float boxes[3 * 4] = {
        0.0f, 0.0f, 2.0f, 1.0f,  // A
        1.5f, 3.0f, 3.5f, 4.0f,  // B: overlaps A and C along x only
        3.0f, 0.0f, 5.0f, 1.0f,  // C: beside A along y, apart from it along x
    };
    bp_context *ctx = make_ctx(2, BP_METHOD_RDC, 1, 0.0f);
    CHECK(ctx);
    bp_pairs out;
    CHECK_OK(bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, 3, &out));
    CHECK(out.count == 0);
    CHECK_OK(bp_validate(ctx));
    drawn d;
    memset(&d, 0, sizeof d);
    d.dim = 2;
    bp_debug_draw dd = {draw_box, &d};
    CHECK_OK(bp_debug_draw_structure(ctx, &dd));
    // Final groups: the three singletons; intermediate: [A, B, C] (level 1), [A, C] (level 2).
    CHECK(d.count[0] == 3);
    CHECK(has_final(&d, boxes) && has_final(&d, boxes + 4) && has_final(&d, boxes + 8));
    CHECK(d.count[1] == 1 && d.count[2] == 1);
    CHECK(d.count[3] + d.count[4] + d.count[5] + d.count[6] + d.count[7] == 0);

    // Snap: C moved to start exactly where A ends. Touching counts: one pair, and [A, C] is one
    // final group (the seed's snap problem, solved by the boundary order).
    float snap[3 * 4];
    memcpy(snap, boxes, sizeof snap);
    snap[8] = 2.0f;
    CHECK_OK(bp_find_pairs2(ctx, (const bp_box2 *)(const void *)snap, 3, &out));
    CHECK(out.count == 1 && out.pairs[0].i == 0 && out.pairs[0].j == 2);
    CHECK_OK(bp_validate(ctx));
    memset(&d, 0, sizeof d);
    d.dim = 2;
    CHECK_OK(bp_debug_draw_structure(ctx, &dd));
    CHECK(d.count[0] == 2);  // [B] and [A, C]
    CHECK(has_final(&d, snap + 4));
    bp_context_destroy(ctx);

    // With the automatic threshold the three are one brute-forced group: same pairs.
    ctx = make_ctx(2, BP_METHOD_RDC, 0, 0.0f);
    CHECK(ctx);
    CHECK_OK(bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, 3, &out));
    CHECK(out.count == 0);
    bp_context_destroy(ctx);
}

// Random boxes of many shapes and densities, 2D and 3D, thresholds from 1 up.
static void test_random(int argc, char **argv) {
    (void)argc, (void)argv;
    static const uint32_t thresholds[] = {1, 2, 3, 0, 64};
    float *boxes = malloc(3000 * 6 * sizeof *boxes);
    CHECK(boxes);
    for (int dim = 2; dim <= 3; ++dim) {
        for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; ++t) {
            rig g = rig_open(dim, thresholds[t]);
            if (!g.rdc || !g.brute) {
                free(boxes);
                CHECK(0);
            }
            uint64_t s = bpt_seed * 1000 + (uint64_t)(dim * 10) + t;
            for (int round = 0; round < 12; ++round) {
                size_t n = (size_t)(rng_next(&s) % 3000);
                double world = rng_range(&s, 1.0, 400.0), size = rng_range(&s, 0.0, 20.0);
                random_boxes(&s, boxes, n, dim, world, size);
                if (round % 3 == 1) snap_boxes(boxes, n, dim, 1.0f);
                char what[64];
                snprintf(what, sizeof what, "random thr=%u round %d", thresholds[t], round);
                if (!same_as_brute(g.rdc, g.brute, dim, boxes, n, what)) {
                    rig_close(&g);
                    free(boxes);
                    CHECK(0);
                }
            }
            rig_close(&g);
        }
    }
    free(boxes);
}

// Moving boxes over many frames (coherence of the top-level order), n changing now and then.
static void test_frames(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { N = 2000 };
    float *boxes = malloc(N * 6 * sizeof *boxes);
    double *vel = malloc(N * 3 * sizeof *vel);
    CHECK(boxes && vel);
    for (int dim = 2; dim <= 3; ++dim) {
        rig g = rig_open(dim, 0);
        uint64_t s = bpt_seed * 77 + (uint64_t)dim;
        random_boxes(&s, boxes, N, dim, 120.0, 3.0);
        for (size_t k = 0; k < N * (size_t)dim; ++k) vel[k] = rng_range(&s, -0.5, 0.5);
        int ok = g.rdc && g.brute;
        for (int frame = 0; frame < 30 && ok; ++frame) {
            size_t n = frame % 7 == 6 ? N / 2 + (size_t)frame : N;
            char what[64];
            snprintf(what, sizeof what, "frames dim=%d frame %d", dim, frame);
            ok = same_as_brute(g.rdc, g.brute, dim, boxes, n, what);
            for (size_t k = 0; k < N; ++k)
                for (int a = 0; a < dim; ++a) {
                    float *b = boxes + k * (size_t)(2 * dim);
                    float v = (float)vel[k * (size_t)dim + (size_t)a];
                    b[a] += v;
                    b[dim + a] += v;
                }
        }
        rig_close(&g);
        if (!ok) {
            free(boxes);
            free(vel);
            CHECK(0);
        }
    }
    free(boxes);
    free(vel);
}

// The inputs every method must survive: n = 0 and 1, all identical, points, one line, huge and
// extreme coordinates, one box over everything, wildly different sizes, a frame after an error.
static void test_degenerate(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { N = 600 };
    static float boxes[N * 6];
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t stride = (size_t)(2 * dim);
        rig g = rig_open(dim, 0);
        CHECK(g.rdc && g.brute);
        uint64_t s = bpt_seed * 31 + (uint64_t)dim;
        int ok = 1;
        // n = 0 and n = 1
        random_boxes(&s, boxes, 1, dim, 10.0, 1.0);
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, 0, "n=0");
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, 1, "n=1");
        // all identical (the seed's worst case: no axis cuts)
        for (size_t k = 0; k < 200; ++k) memcpy(boxes + k * stride, boxes, stride * sizeof *boxes);
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, 200, "identical");
        // points, many coinciding
        for (size_t k = 0; k < N; ++k)
            for (int a = 0; a < dim; ++a) boxes[k * stride + (size_t)a] = boxes[k * stride + (size_t)(dim + a)] = (float)(rng_next(&s) % 20);
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "points");
        // everything on one x
        random_boxes(&s, boxes, N, dim, 300.0, 2.0);
        for (size_t k = 0; k < N; ++k) {
            boxes[k * stride] = 5.0f;
            boxes[k * stride + (size_t)dim] = 7.0f;
        }
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "line");
        // around +-1e7 (float spacing 1): touching and overlapping by one ulp
        random_boxes(&s, boxes, N, dim, 3000.0, 40.0);
        for (size_t k = 0; k < N * stride; ++k) boxes[k] = floorf(boxes[k]) + ((k / stride) % 2 ? 1e7f : -1e7f);
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "1e7");
        // up to +-FLT_MAX: extents overflow float, buckets must not
        random_boxes(&s, boxes, N, dim, 100.0, 10.0);
        for (size_t k = 0; k < N; ++k) {
            float *b = boxes + k * stride;
            int kind = (int)(rng_next(&s) % 5);
            for (int a = 0; a < dim; ++a) {
                if (kind == 0) b[a] = -FLT_MAX;
                if (kind == 1) b[dim + a] = FLT_MAX;
                if (kind == 2) b[a] = b[dim + a] = (rng_next(&s) % 2) ? FLT_MAX : -FLT_MAX;
                if (kind == 3) {
                    b[a] = -1e38f * (float)rng_u01(&s);
                    b[dim + a] = 1e38f * (float)rng_u01(&s);
                }
            }
        }
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "FLT_MAX");
        // one box covering everything, the rest sparse
        random_boxes(&s, boxes, N, dim, 1000.0, 1.0);
        for (int a = 0; a < dim; ++a) {
            boxes[a] = -1.0f;
            boxes[dim + a] = 1001.0f;
        }
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "cover");
        // wildly different sizes
        for (size_t k = 0; k < N; ++k) {
            float *b = boxes + k * stride;
            double size = pow(10.0, rng_range(&s, -4.0, 3.0));
            for (int a = 0; a < dim; ++a) {
                double c = rng_range(&s, 0.0, 1000.0);
                b[a] = (float)(c - size);
                b[dim + a] = (float)(c + size);
            }
        }
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "sizes");
        // a frame after an error: NaN, then the same valid frame again
        float saved = boxes[3];
        boxes[3] = NAN;
        bp_pairs out;
        ok = ok && run(g.rdc, dim, boxes, N, &out) == BP_ERR_NONFINITE;
        boxes[3] = saved;
        ok = ok && same_as_brute(g.rdc, g.brute, dim, boxes, N, "after error");
        rig_close(&g);
        CHECK(ok);
    }
}

// A structure that cuts deep: sparse boxes in a long diagonal chain of tiny clusters, so the
// work stack holds many groups at once (no recursion to blow).
static void test_deep(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { N = 20000 };
    static float boxes[N * 4];
    uint64_t s = bpt_seed * 5;
    for (size_t k = 0; k < N; ++k) {
        float *b = boxes + k * 4;
        double c = (double)(k / 3) * 3.0, e = rng_range(&s, 0.0, 1.0);
        b[0] = (float)(c + rng_u01(&s));
        b[1] = (float)(c + rng_u01(&s));
        b[2] = (float)(b[0] + e);
        b[3] = (float)(b[1] + e);
    }
    rig g = rig_open(2, 1);
    CHECK(g.rdc && g.brute);
    int ok = same_as_brute(g.rdc, g.brute, 2, boxes, N, "deep");
    rig_close(&g);
    CHECK(ok);
}

// Epsilon: the closed rule on intervals shrunk (> 0) or grown (< 0) by epsilon, checked against
// a brute force of the adjusted boxes written here.
static void test_epsilon(int argc, char **argv) {
    (void)argc, (void)argv;
    static const float epsilons[] = {0.25f, 1e-3f, -1e-3f, -0.5f, 3.0f};
    enum { N = 800 };
    static float boxes[N * 6], adj[N * 6];
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t stride = (size_t)(2 * dim);
        for (size_t e = 0; e < sizeof epsilons / sizeof epsilons[0]; ++e) {
            const float eps = epsilons[e];
            uint64_t s = bpt_seed * 13 + e + (uint64_t)dim * 100;
            random_boxes(&s, boxes, N, dim, 60.0, 4.0);
            snap_boxes(boxes, N, dim, 0.5f);  // many exact touches
            for (size_t k = 0; k < N; ++k)
                for (int a = 0; a < dim; ++a) {
                    adj[k * stride + (size_t)a] = boxes[k * stride + (size_t)a] + eps;
                    adj[k * stride + (size_t)(dim + a)] = boxes[k * stride + (size_t)(dim + a)] - eps;
                }
            size_t expect = 0;
            for (size_t i = 0; i < N; ++i)
                for (size_t j = i + 1; j < N; ++j) {
                    int hit = 1;
                    for (int a = 0; a < dim; ++a)
                        hit &= adj[i * stride + (size_t)a] <= adj[j * stride + (size_t)(dim + a)] &&
                               adj[j * stride + (size_t)a] <= adj[i * stride + (size_t)(dim + a)];
                    expect += (size_t)hit;
                }
            for (uint32_t thr = 1; thr <= 16; thr += 15) {
                bp_context *rdc = make_ctx(dim, BP_METHOD_RDC, thr, eps);
                CHECK(rdc);
                bp_pairs out;
                bp_status st = run(rdc, dim, boxes, N, &out);
                int ok = st == BP_OK && out.count == expect;
                for (size_t k = 0; ok && k < out.count; ++k) {
                    size_t i = out.pairs[k].i, j = out.pairs[k].j;
                    for (int a = 0; a < dim; ++a)
                        ok &= adj[i * stride + (size_t)a] <= adj[j * stride + (size_t)(dim + a)] &&
                              adj[j * stride + (size_t)a] <= adj[i * stride + (size_t)(dim + a)];
                }
                ok = ok && bp_validate(rdc) == BP_OK;
                if (!ok)
                    fprintf(stderr, "epsilon %g dim %d thr %u: %zu pairs, expected %zu\n", (double)eps, dim, thr,
                            out.count, expect);
                // Queries still answer about the boxes as given.
                const float lo[3] = {10.0f, 10.0f, 10.0f}, hi[3] = {30.0f, 20.0f, 40.0f};
                bp_indices q;
                ok = ok && bp_query_box(rdc, lo, hi, &q) == BP_OK;
                size_t want = 0;
                for (size_t k = 0; ok && k < N; ++k) {
                    int hit = 1;
                    for (int a = 0; a < dim; ++a)
                        hit &= boxes[k * stride + (size_t)a] <= hi[a] && lo[a] <= boxes[k * stride + (size_t)(dim + a)];
                    want += (size_t)hit;
                }
                ok = ok && q.count == want;
                bp_context_destroy(rdc);
                CHECK(ok);
            }
        }
    }
}

// Region queries from the clusters against the same queries on brute force's plain scan.
static void test_queries(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { N = 3000 };
    static float boxes[N * 6];
    for (int dim = 2; dim <= 3; ++dim) {
        for (int scene = 0; scene < 3; ++scene) {
            uint64_t s = bpt_seed * 17 + (uint64_t)(dim * 10 + scene);
            // sparse (many groups), dense (one swept group), snapped (touching)
            random_boxes(&s, boxes, N, dim, scene == 0 ? 2000.0 : 150.0, 4.0);
            if (scene == 2) snap_boxes(boxes, N, dim, 2.0f);
            rig g = rig_open(dim, scene == 0 ? 1 : 0);
            CHECK(g.rdc && g.brute);
            bp_pairs out;
            int ok = run(g.rdc, dim, boxes, N, &out) == BP_OK && run(g.brute, dim, boxes, N, &out) == BP_OK;
            const double world = scene == 0 ? 2000.0 : 150.0;
            for (int k = 0; ok && k < 300; ++k) {
                float lo[3], hi[3], c[3];
                for (int a = 0; a < dim; ++a) {
                    double x = rng_range(&s, -10.0, world + 10.0), w = rng_range(&s, 0.0, world / 8);
                    lo[a] = (float)x;
                    hi[a] = (float)(x + w);
                    c[a] = k % 4 == 3 ? boxes[(size_t)k * (size_t)(2 * dim) + (size_t)a] : (float)x;
                }
                float radius = (float)rng_range(&s, 0.0, world / 10);
                bp_indices qa, qb;
                size_t ca;
                uint32_t got[N];
                int kind = k % 3;
                bp_status sa = kind == 0 ? bp_query_box(g.rdc, lo, hi, &qa)
                                         : kind == 1 ? bp_query_sphere(g.rdc, c, radius, &qa) : bp_query_point(g.rdc, c, &qa);
                ca = qa.count;
                if (sa == BP_OK && ca) memcpy(got, qa.indices, ca * sizeof *got);
                bp_status sb = kind == 0 ? bp_query_box(g.brute, lo, hi, &qb)
                                         : kind == 1 ? bp_query_sphere(g.brute, c, radius, &qb) : bp_query_point(g.brute, c, &qb);
                ok = sa == BP_OK && sb == BP_OK && ca == qb.count && (ca == 0 || memcmp(got, qb.indices, ca * sizeof *got) == 0);
                if (!ok) fprintf(stderr, "query %d kind %d dim %d scene %d: rdc %zu, brute %zu\n", k, kind, dim, scene, ca, qb.count);
            }
            rig_close(&g);
            CHECK(ok);
        }
    }
}

// Out of memory: fail the k-th allocation for every k; each failure returns BP_ERR_NOMEM, leaks
// nothing, and the context works after it.
static void test_nomem(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { N = 1500 };
    static float boxes[N * 4];
    uint64_t s = bpt_seed * 3;
    random_boxes(&s, boxes, N, 2, 200.0, 5.0);
    bp_context *brute = make_ctx(2, BP_METHOD_BRUTE, 0, 0.0f);
    CHECK(brute);
    bp_pairs ref;
    CHECK_OK(bp_find_pairs2(brute, (const bp_box2 *)(const void *)boxes, N, &ref));
    for (size_t fail = 1; fail < 64; ++fail) {
        bpt_alloc c = {.fail_at = fail};
        bp_context_def def = bp_default_context_def();
        def.method = BP_METHOD_RDC;
        def.sort_pairs = true;
        def.rdc.epsilon = fail % 2 ? 0.0f : -1e-3f;  // the epsilon copy fails too
        def.allocator = bpt_allocator(&c);
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(&def, &ctx);
        if (st != BP_OK) {
            CHECK(st == BP_ERR_NOMEM && ctx == NULL && c.live_bytes == 0);
            continue;
        }
        bp_pairs out;
        int failed = 0;
        for (int frame = 0; frame < 3; ++frame) {
            st = bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, N, &out);
            if (st == BP_ERR_NOMEM) {
                failed = 1;
                continue;
            }
            CHECK(st == BP_OK);
            if (def.rdc.epsilon == 0.0f) CHECK(out.count == ref.count && memcmp(out.pairs, ref.pairs, out.count * sizeof *out.pairs) == 0);
            st = bp_validate(ctx);  // it allocates too
            CHECK(st == BP_OK || st == BP_ERR_NOMEM);
            bp_indices q;
            const float lo[2] = {50, 50}, hi[2] = {80, 90};
            st = bp_query_box(ctx, lo, hi, &q);
            CHECK(st == BP_OK || st == BP_ERR_NOMEM);
        }
        (void)failed;
        bp_context_destroy(ctx);
        CHECK(c.live_bytes == 0);
    }
    bp_context_destroy(brute);
}

// Bipartite calls through rdc: only pairs across the two sets.
static void test_between(int argc, char **argv) {
    (void)argc, (void)argv;
    enum { NA = 700, NB = 900 };
    static float a[NA * 4], b[NB * 4];
    uint64_t s = bpt_seed * 11;
    random_boxes(&s, a, NA, 2, 100.0, 4.0);
    random_boxes(&s, b, NB, 2, 100.0, 4.0);
    rig g = rig_open(2, 0);
    CHECK(g.rdc && g.brute);
    bp_pairs pa, pb;
    CHECK_OK(bp_find_pairs_between2(g.rdc, (const bp_box2 *)(const void *)a, NA, (const bp_box2 *)(const void *)b, NB, &pa));
    CHECK_OK(bp_find_pairs_between2(g.brute, (const bp_box2 *)(const void *)a, NA, (const bp_box2 *)(const void *)b, NB, &pb));
    CHECK(pa.count == pb.count && memcmp(pa.pairs, pb.pairs, pa.count * sizeof *pa.pairs) == 0);
    rig_close(&g);
}

static const bpt_case cases[] = {
    {"seed_figure", test_seed_figure}, {"random", test_random}, {"frames", test_frames},
    {"degenerate", test_degenerate}, {"deep", test_deep}, {"epsilon", test_epsilon}, {"queries", test_queries},
    {"nomem", test_nomem}, {"between", test_between},
};

BPT_MAIN_SEED(cases, 1)
