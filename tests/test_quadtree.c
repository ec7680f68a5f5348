// Quadtree-specific oracle tests: pair SETS (not counts) equal to brute force computed through
// the library, for both placements (strict, loose), in 2D and 3D, on the cases issue #4 names:
// boxes exactly on cell boundaries, boxes larger than the world, points, levels 1 and the
// maximum, boxes outside a fixed world, huge coordinates, everything on one line, identical
// boxes, n changing between frames, a frame after an error; plus region queries against a scan
// and the method's own validator. Random tests print their seed; $SEED overrides it.
// Usage: test_quadtree <case> (tests/harness.h). $SEED overrides the seed (default 1).
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"
#include "../src/morton.h"
#include "harness.h"

// The case's random stream: splitmix64 (tests/harness.h) from the seed, started at the first draw.
static bpt_rng g_rng;
static bool g_rng_started;

static uint64_t rng_next(void) {
    if (!g_rng_started) g_rng.s = bpt_seed, g_rng_started = true;
    return bpt_next(&g_rng);
}

static double rng_u01(void) { return (double)(rng_next() >> 11) * 0x1p-53; }
static float rng_range(double a, double b) { return (float)(a + (b - a) * rng_u01()); }

typedef struct options {
    bool loose;
    int levels;
    bool fixed_world;
    float wmin[3], wmax[3];
} options;

static int cmp_pair(const void *a, const void *b) {
    const bp_pair *x = a, *y = b;
    return bpt_cmp_keys(x->i, x->j, y->i, y->j);
}

static bp_context *make(int dim, bp_method m, const options *o) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = m;
    def.sort_pairs = true;
    if (o) {
        def.quadtree.loose = o->loose;
        def.quadtree.levels = o->levels;
        def.quadtree.fixed_world = o->fixed_world;
        for (int a = 0; a < 3; ++a) {
            def.quadtree.world_min[a] = o->wmin[a];
            def.quadtree.world_max[a] = o->wmax[a];
        }
    }
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    return ctx;
}

static bp_status run(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    return dim == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, n, out)
                    : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)boxes, n, out);
}

// One frame through the quadtree context `qt` compared with brute force, plus validation and
// a few region queries compared with a scan of the boxes.
static void compare(bp_context *qt, int dim, const float *boxes, size_t n) {
    bp_context *br = make(dim, BP_METHOD_BRUTE, NULL);
    bp_pairs a, b;
    CHECK_OK(run(br, dim, boxes, n, &b));
    CHECK_OK(run(qt, dim, boxes, n, &a));
    bp_pair *x = malloc((a.count + 1) * sizeof *x), *y = malloc((b.count + 1) * sizeof *y);
    CHECK(x && y);
    if (a.count) memcpy(x, a.pairs, a.count * sizeof *x);
    if (b.count) memcpy(y, b.pairs, b.count * sizeof *y);
    qsort(x, a.count, sizeof *x, cmp_pair);
    qsort(y, b.count, sizeof *y, cmp_pair);
    if (a.count != b.count) fprintf(stderr, "quadtree %zu pairs, brute %zu\n", a.count, b.count);
    CHECK(a.count == b.count);
    CHECK(a.count == 0 || memcmp(x, y, a.count * sizeof *x) == 0);
    free(x);
    free(y);
    bp_stats s;
    CHECK_OK(bp_get_stats(qt, &s));
    CHECK(s.method == BP_METHOD_QUADTREE);
    CHECK_OK(bp_validate(qt));
    // Queries: boxes, circles and points around random boxes, against a scan.
    const size_t stride = (size_t)(2 * dim);
    for (int t = 0; t < 6 && n > 0; ++t) {
        const float *b0 = boxes + (size_t)(rng_next() % n) * stride;
        float lo[3], hi[3], c[3];
        float r = (float)(rng_u01() * 3.0);
        for (int k = 0; k < dim; ++k) {
            lo[k] = b0[k] - r;
            hi[k] = b0[dim + k];
            c[k] = b0[k];
        }
        for (int kind = 0; kind < 3; ++kind) {
            bp_indices got;
            if (kind == 0) CHECK_OK(bp_query_box(qt, lo, hi, &got));
            else if (kind == 1) CHECK_OK(bp_query_sphere(qt, c, r, &got));
            else CHECK_OK(bp_query_point(qt, c, &got));
            size_t want = 0, gi = 0;
            for (size_t k = 0; k < n; ++k) {
                const float *bb = boxes + k * stride;
                bool hit = true;
                double d2 = 0.0;
                for (int e = 0; e < dim; ++e) {
                    float ql = kind == 0 ? lo[e] : (kind == 1 ? c[e] - r : c[e]);
                    float qh = kind == 0 ? hi[e] : (kind == 1 ? c[e] + r : c[e]);
                    hit = hit && bb[e] <= qh && ql <= bb[dim + e];
                    double cc = c[e], l = bb[e], h = bb[dim + e];
                    double g = cc < l ? l - cc : (cc > h ? cc - h : 0.0);
                    d2 += g * g;
                }
                if (kind == 1) hit = hit && d2 <= (double)r * (double)r;
                if (hit) {
                    ++want;
                    CHECK(gi < got.count && got.indices[gi] == k);
                    ++gi;
                }
            }
            CHECK(got.count == want);
        }
    }
    bp_context_destroy(br);
}

static float *random_boxes(int dim, size_t n, double world, double size_max) {
    float *b = malloc((n * (size_t)(2 * dim) + 1) * sizeof *b);
    CHECK(b);
    for (size_t k = 0; k < n; ++k)
        for (int a = 0; a < dim; ++a) {
            float lo = rng_range(0.0, world);
            float s = rng_range(0.0, size_max);
            b[k * (size_t)(2 * dim) + (size_t)a] = lo;
            b[k * (size_t)(2 * dim) + (size_t)(dim + a)] = lo + s;
        }
    return b;
}

// Moves every box by a random step of at most `step` per axis.
static void move(float *b, size_t n, int dim, double step) {
    for (size_t k = 0; k < n; ++k)
        for (int a = 0; a < dim; ++a) {
            float v = rng_range(-step, step);
            b[k * (size_t)(2 * dim) + (size_t)a] += v;
            b[k * (size_t)(2 * dim) + (size_t)(dim + a)] += v;
            if (b[k * (size_t)(2 * dim) + (size_t)a] > b[k * (size_t)(2 * dim) + (size_t)(dim + a)])
                b[k * (size_t)(2 * dim) + (size_t)a] = b[k * (size_t)(2 * dim) + (size_t)(dim + a)];
        }
}

static const options k_strict = {false, 0, false, {0}, {0}};
static const options k_loose = {true, 0, false, {0}, {0}};

// Random boxes of mixed sizes, both placements, 2D and 3D, moving over frames (coherence).
static void case_random(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, lo ? &k_loose : &k_strict);
            size_t n = 1500;
            float *b = random_boxes(dim, n, 100.0, 4.0);
            for (int f = 0; f < 6; ++f) {
                move(b, n, dim, 1.5);
                compare(qt, dim, b, n);
            }
            // A few huge boxes among small ones.
            for (size_t k = 0; k < 10; ++k)
                for (int a = 0; a < dim; ++a) b[k * (size_t)(2 * dim) + (size_t)(dim + a)] += 60.0f;
            compare(qt, dim, b, n);
            free(b);
            bp_context_destroy(qt);
        }
}

// Boxes exactly on cell boundaries: integer coordinates in a world of 64 with levels 6 (cell 1),
// touching edges and corners (closed intervals), at levels 1, 6 and the maximum.
static void case_boundaries(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            const int levels[] = {1, 6, 40};
            for (int li = 0; li < 3; ++li) {
                options o = {lo != 0, levels[li], true, {0, 0, 0}, {64, 64, 64}};
                bp_context *qt = make(dim, BP_METHOD_QUADTREE, &o);
                size_t n = 800;
                float *b = malloc(n * (size_t)(2 * dim) * sizeof *b);
                CHECK(b);
                for (size_t k = 0; k < n; ++k)
                    for (int a = 0; a < dim; ++a) {
                        float x = (float)(rng_next() % 64);
                        float s = (float)(rng_next() % 3);
                        b[k * (size_t)(2 * dim) + (size_t)a] = x;
                        b[k * (size_t)(2 * dim) + (size_t)(dim + a)] = x + s;
                    }
                compare(qt, dim, b, n);
                free(b);
                bp_context_destroy(qt);
            }
        }
}

// Degenerate inputs: n = 0 and 1, identical boxes, points, a line, huge coordinates, a box
// covering everything.
static void case_degenerate(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            const options *o = lo ? &k_loose : &k_strict;
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, o);
            const size_t s = (size_t)(2 * dim);
            size_t n = 300;
            float *b = malloc(n * s * sizeof *b);
            CHECK(b);
            compare(qt, dim, b, 0);
            for (int a = 0; a < dim; ++a) {
                b[a] = 1.0f;
                b[dim + a] = 2.0f;
            }
            compare(qt, dim, b, 1);
            // identical boxes
            for (size_t k = 0; k < n; ++k) memcpy(b + k * s, b, s * sizeof *b);
            compare(qt, dim, b, n);
            // identical points
            for (size_t k = 0; k < n; ++k)
                for (int a = 0; a < dim; ++a) b[k * s + (size_t)a] = b[k * s + (size_t)(dim + a)] = 3.0f;
            compare(qt, dim, b, n);
            // random points on a small lattice (many coincide)
            for (size_t k = 0; k < n; ++k)
                for (int a = 0; a < dim; ++a)
                    b[k * s + (size_t)a] = b[k * s + (size_t)(dim + a)] = (float)(rng_next() % 8);
            compare(qt, dim, b, n);
            // everything on one x
            for (size_t k = 0; k < n; ++k) {
                b[k * s] = 50.0f;
                b[k * s + (size_t)dim] = 52.0f;
                for (int a = 1; a < dim; ++a) {
                    float y = rng_range(0.0, 300.0);
                    b[k * s + (size_t)a] = y;
                    b[k * s + (size_t)(dim + a)] = y + 2.0f;
                }
            }
            compare(qt, dim, b, n);
            // coordinates around +-1e7 and up to +-FLT_MAX
            for (size_t k = 0; k < n; ++k)
                for (int a = 0; a < dim; ++a) {
                    float x = rng_range(-1e7, 1e7);
                    b[k * s + (size_t)a] = x;
                    b[k * s + (size_t)(dim + a)] = x + rng_range(0.0, 2e5);
                }
            b[0] = -FLT_MAX;
            b[s + (size_t)dim] = FLT_MAX;
            for (int a = 0; a < dim; ++a) {
                b[2 * s + (size_t)a] = -FLT_MAX;
                b[2 * s + (size_t)(dim + a)] = FLT_MAX;
            }
            compare(qt, dim, b, n);
            free(b);
            bp_context_destroy(qt);
        }
}

// A fixed world with boxes partly and wholly outside it (clamped into the border cells, never
// dropped), and boxes larger than the world.
static void case_outside(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            options o = {lo != 0, 0, true, {10, 10, 10}, {20, 30, 40}};
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, &o);
            size_t n = 1000;
            float *b = random_boxes(dim, n, 60.0, 6.0);
            for (size_t k = 0; k < n * (size_t)(2 * dim); ++k) b[k] -= 5.0f;
            for (size_t k = 0; k < 5; ++k)
                for (int a = 0; a < dim; ++a) {
                    b[k * (size_t)(2 * dim) + (size_t)a] = -100.0f;
                    b[k * (size_t)(2 * dim) + (size_t)(dim + a)] = 200.0f;
                }
            compare(qt, dim, b, n);
            free(b);
            bp_context_destroy(qt);
        }
}

// A few boxes far from the rest (one 10^6 away from 20,000 in a world of 60): the world is cut
// to the bulk of the boxes, the far ones land in the border cells. Pairs equal brute force's,
// strict and loose, with under n^2 / 16 candidates (the whole scene fell into one cell before:
// every pair tested, n^2 / 2; now 0.35-11 million of 200 million).
static void case_outlier(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            options o = {lo != 0, 0, false, {0, 0, 0}, {0, 0, 0}};
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, &o);
            const size_t n = 20000, w = (size_t)(2 * dim);
            float *b = random_boxes(dim, n, 60.0, 1.0);
            for (size_t k = 0; k < 3; ++k)
                for (int a = 0; a < dim; ++a) {
                    b[k * w + (size_t)a] += k == 0 ? 1e6f : -1e6f;
                    b[k * w + (size_t)(dim + a)] += k == 0 ? 1e6f : -1e6f;
                }
            compare(qt, dim, b, n);
            bp_stats s;
            CHECK_OK(bp_get_stats(qt, &s));
            printf("outlier %dD %s: %llu pairs, %llu checks\n", dim, lo ? "loose" : "strict",
                   (unsigned long long)s.pairs, (unsigned long long)s.checks);
            CHECK(s.checks < (uint64_t)n * n / 16);
            free(b);
            bp_context_destroy(qt);
        }
}

// n changing between frames, a frame after an error, and dimension 3 after dimension 2 contexts.
static void case_frames(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, lo ? &k_loose : &k_strict);
            float *b = random_boxes(dim, 2000, 120.0, 3.0);
            const size_t sizes[] = {2000, 10, 1999, 0, 700, 2000, 2000};
            for (int f = 0; f < 7; ++f) {
                move(b, 2000, dim, 2.0);
                compare(qt, dim, b, sizes[f]);
            }
            // An error (inverted box), then a normal frame.
            float keep = b[0];
            b[0] = b[dim] + 1.0f;
            bp_pairs out;
            CHECK(run(qt, dim, b, 100, &out) == BP_ERR_INVERTED_BOX);
            b[0] = keep;
            compare(qt, dim, b, 2000);
            free(b);
            bp_context_destroy(qt);
        }
}

// Debug draw: every occupied cell drawn once, levels within range.

static void case_draw(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_context *qt = make(2, BP_METHOD_QUADTREE, &k_strict);
    float *b = random_boxes(2, 500, 100.0, 5.0);
    compare(qt, 2, b, 500);
    bpt_draw drawn = {.dim = 2};
    bp_debug_draw dd = {bpt_draw_box, &drawn};
    CHECK_OK(bp_debug_draw_structure(qt, &dd));
    CHECK(drawn.boxes > 0 && drawn.boxes <= 500 && !drawn.bad && drawn.top <= 40);
    free(b);
    bp_context_destroy(qt);
}

// Out of memory: an allocator that fails the k-th allocation, for every k until a frame
// succeeds; each failure returns BP_ERR_NOMEM, the next frame is exact, nothing leaks.
typedef struct fail_alloc {
    long countdown;  // allocations left before the failure; < 0: never fail
    long live;
} fail_alloc;

static void *fa_alloc(size_t size, size_t align, void *user) {
    fail_alloc *fa = user;
    if (fa->countdown == 0) return NULL;
    if (fa->countdown > 0) fa->countdown--;
    size_t rounded = (size + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, rounded);
    if (p) fa->live++;
    return p;
}

static void fa_free(void *p, size_t size, void *user) {
    (void)size;
    fail_alloc *fa = user;
    if (p) fa->live--;
    free(p);
}

static void case_nomem(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            float *b = random_boxes(dim, 3000, 150.0, 6.0);
            for (long k = 0;; ++k) {
                fail_alloc fa = {-1, 0};
                bp_context_def def = bp_default_context_def();
                def.dimension = dim;
                def.method = BP_METHOD_QUADTREE;
                def.quadtree.loose = lo != 0;
                def.allocator = (bp_allocator){fa_alloc, fa_free, &fa};
                bp_context *qt = NULL;
                CHECK_OK(bp_context_create(&def, &qt));
                bp_pairs out;
                CHECK_OK(run(qt, dim, b, 2000, &out));  // warm at a smaller size
                fa.countdown = k;
                move(b, 3000, dim, 1.0);
                bp_status st = run(qt, dim, b, 3000, &out);
                fa.countdown = -1;
                CHECK(st == BP_OK || st == BP_ERR_NOMEM);
                compare(qt, dim, b, 3000);
                bp_context_destroy(qt);
                CHECK(fa.live == 0);
                if (st == BP_OK) break;
            }
            free(b);
        }
}

// Bipartite calls: pairs across the two sets only, equal to brute force's.
static void case_between(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int dim = 2; dim <= 3; ++dim)
        for (int lo = 0; lo < 2; ++lo) {
            bp_context *qt = make(dim, BP_METHOD_QUADTREE, lo ? &k_loose : &k_strict);
            bp_context *br = make(dim, BP_METHOD_BRUTE, NULL);
            float *a = random_boxes(dim, 700, 80.0, 5.0), *b = random_boxes(dim, 500, 80.0, 5.0);
            bp_pairs x, y;
            if (dim == 2) {
                CHECK_OK(bp_find_pairs_between2(qt, (bp_box2 *)(void *)a, 700, (bp_box2 *)(void *)b, 500, &x));
                CHECK_OK(bp_find_pairs_between2(br, (bp_box2 *)(void *)a, 700, (bp_box2 *)(void *)b, 500, &y));
            } else {
                CHECK_OK(bp_find_pairs_between3(qt, (bp_box3 *)(void *)a, 700, (bp_box3 *)(void *)b, 500, &x));
                CHECK_OK(bp_find_pairs_between3(br, (bp_box3 *)(void *)a, 700, (bp_box3 *)(void *)b, 500, &y));
            }
            // Both contexts deliver sorted pairs.
            CHECK(x.count == y.count);
            CHECK(x.count == 0 || memcmp(x.pairs, y.pairs, x.count * sizeof *x.pairs) == 0);
            free(a);
            free(b);
            bp_context_destroy(qt);
            bp_context_destroy(br);
        }
}

// morton.h against a bit-by-bit interleave, 2D and 3D, 32 and 64 bits, and the seed's rules.
static uint64_t naive_interleave(const uint64_t *c, int dim, int bits) {
    uint64_t r = 0;
    for (int b = 0; b < bits; ++b)
        for (int a = 0; a < dim; ++a) r |= ((c[a] >> b) & 1u) << (b * dim + a);
    return r;
}

static void case_morton(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int t = 0; t < 100000; ++t) {
        uint64_t c[3];
        for (int a = 0; a < 3; ++a) c[a] = rng_next();
        uint64_t m16[3] = {c[0] & 0xffff, c[1] & 0xffff, 0};
        uint64_t m32[3] = {c[0] & 0xffffffff, c[1] & 0xffffffff, 0};
        uint64_t m10[3] = {c[0] & 0x3ff, c[1] & 0x3ff, c[2] & 0x3ff};
        uint64_t m21[3] = {c[0] & 0x1fffff, c[1] & 0x1fffff, c[2] & 0x1fffff};
        CHECK(bp_morton2_32((uint32_t)m16[0], (uint32_t)m16[1]) == naive_interleave(m16, 2, 16));
        CHECK(bp_morton2_64(m32[0], m32[1]) == naive_interleave(m32, 2, 32));
        CHECK(bp_morton3_32((uint32_t)m10[0], (uint32_t)m10[1], (uint32_t)m10[2]) == naive_interleave(m10, 3, 10));
        uint64_t m3 = bp_morton3_64(m21[0], m21[1], m21[2]);
        CHECK(m3 == naive_interleave(m21, 3, 21));
        CHECK(bp_morton_compact3_64(m3) == m21[0] && bp_morton_compact3_64(m3 >> 2) == m21[2]);
        uint64_t m2 = bp_morton2_64(m32[0], m32[1]);
        CHECK(bp_morton_compact2_64(m2) == m32[0] && bp_morton_compact2_64(m2 >> 1) == m32[1]);
    }
    // Seed 000: corners in cells 0 and 3 of a 2-level grid (codes 0 and 15) share only the root;
    // the linear index of level 2's cell 5 is (16 - 1) / 3 + 5 = 10.
    CHECK(bp_morton_common_up(0, 15, 2) == 2);
    CHECK(bp_morton_common_up(4, 7, 2) == 1);
    CHECK(bp_morton_common_up(9, 9, 2) == 0);
    CHECK(bp_morton_linear_index(5, 2, 2) == 10);
    CHECK(bp_morton_linear_index(3, 1, 3) == 4);
}

static const bpt_case cases[] = {
    {"random", case_random}, {"boundaries", case_boundaries}, {"degenerate", case_degenerate},
    {"outside", case_outside}, {"frames", case_frames}, {"draw", case_draw}, {"nomem", case_nomem},
    {"between", case_between}, {"morton", case_morton}, {"outlier", case_outlier},
};

BPT_MAIN_SEED(cases, 1)
