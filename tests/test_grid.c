// Tests specific to method `grid` (issue #3): pair SETS identical to brute force (computed
// through the library, BP_METHOD_BRUTE) on the benchmark scenes and on the inputs a grid finds
// hard: huge and far-away coordinates, one box covering everything, everything in one cell,
// mixed sizes, n changing between frames, failed allocations. Queries against a brute scan.
// Usage: test_grid <case> (tests/harness.h). $SEED overrides the random seed (default 1).
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif
#include "../src/core.h"  // bp_select_double (test_select)
#include "harness.h"

// ---------------------------------------------------------------------------------------------
// splitmix64 and the docs/scenes.md generator

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double u01(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }
static double uni(uint64_t *s, double a, double b) { return a + (b - a) * u01(s); }
static double gauss(uint64_t *s) {
    double u1 = u01(s);
    if (u1 == 0) u1 = 0x1.0p-53;
    double u2 = u01(s);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

typedef struct scene {
    int dim;
    size_t n;
    double W;
    double *p, *v, *r;
} scene;

static void scene_free(scene *s) {
    free(s->p);
    free(s->v);
    free(s->r);
}

static int scene_init(scene *s, const char *name, size_t n, int dim, uint64_t seed) {
    uint64_t R = seed;
    s->dim = dim;
    s->n = n;
    s->p = calloc(n * 3 + 1, sizeof(double));
    s->v = calloc(n * 3 + 1, sizeof(double));
    s->r = calloc(n + 1, sizeof(double));
    if (!s->p || !s->v || !s->r) return 0;
    double W = dim == 2 ? sqrt((double)n * 3.14159265358979323846 / 0.05)
                        : cbrt((double)n * (4.0 / 3.0) * 3.14159265358979323846 / 0.05);
    if (!strcmp(name, "seed")) W = 300;
    s->W = W;
    double c[16][3];
    if (!strcmp(name, "clustered"))
        for (int k = 0; k < 16; ++k)
            for (int a = 0; a < dim; ++a) c[k][a] = uni(&R, W / 8, 7 * W / 8);
    for (size_t i = 0; i < n; ++i) {
        double *p = s->p + 3 * i, *v = s->v + 3 * i, r = 1;
        if (!strcmp(name, "uniform")) {
            for (int a = 0; a < dim; ++a) p[a] = uni(&R, 1, W - 1);
            for (int a = 0; a < dim; ++a) v[a] = uni(&R, -0.5, 0.5);
        } else if (!strcmp(name, "clustered")) {
            int k = (int)floor(u01(&R) * 16);
            if (k > 15) k = 15;
            for (int a = 0; a < dim; ++a) {
                double x = c[k][a] + gauss(&R) * W / 40;
                p[a] = x < 1 ? 1 : (x > W - 1 ? W - 1 : x);
            }
            for (int a = 0; a < dim; ++a) v[a] = uni(&R, -0.5, 0.5);
        } else if (!strcmp(name, "mixed")) {
            double u = u01(&R);
            if (u < 0.01) r = exp(uni(&R, log(0.5), log(25)));
            for (int a = 0; a < dim; ++a) p[a] = uni(&R, r, W - r);
            for (int a = 0; a < dim; ++a) v[a] = uni(&R, -0.5, 0.5);
        } else if (!strcmp(name, "line")) {
            p[0] = W / 2;
            for (int a = 1; a < dim; ++a) p[a] = uni(&R, 1, W - 1);
            v[0] = 0;
            for (int a = 1; a < dim; ++a) v[a] = uni(&R, -0.5, 0.5);
        } else {  // seed
            r = 5;
            for (int a = 0; a < dim; ++a) p[a] = floor(u01(&R) * W / 2) + W / 4;
            for (int a = 0; a < dim; ++a) v[a] = uni(&R, -2, 2);
        }
        s->r[i] = r;
    }
    return 1;
}

static void scene_step(scene *s) {
    for (size_t i = 0; i < s->n; ++i) {
        double *p = s->p + 3 * i, *v = s->v + 3 * i, r = s->r[i];
        for (int a = 0; a < s->dim; ++a) {
            p[a] += v[a];
            if (p[a] - r < 0) {
                p[a] = r;
                v[a] = -v[a];
            }
            if (p[a] + r > s->W) {
                p[a] = s->W - r;
                v[a] = -v[a];
            }
        }
    }
}

static void scene_boxes(const scene *s, float *out) {
    const int d = s->dim;
    for (size_t i = 0; i < s->n; ++i)
        for (int a = 0; a < d; ++a) {
            out[i * 2 * d + a] = (float)(s->p[3 * i + a] - s->r[i]);
            out[i * 2 * d + d + a] = (float)(s->p[3 * i + a] + s->r[i]);
        }
}

// A scene of n objects and a buffer for its boxes (2 * dim floats each), both checked.
static float *scene_open(scene *s, const char *name, size_t n, int dim, uint64_t seed) {
    CHECK(scene_init(s, name, n, dim, seed));
    float *boxes = bpt_xrealloc(NULL, n * 2 * (size_t)dim * sizeof(float));
    return boxes;
}

static void scene_close(scene *s, float *boxes) {
    free(boxes);
    scene_free(s);
}

// ---------------------------------------------------------------------------------------------
// The oracle: sorted pairs from grid and brute force must be identical.

typedef struct pair_set {
    bp_pair *p;
    size_t n;
} pair_set;

static bp_status find(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    return dim == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, n, out)
                    : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)boxes, n, out);
}

static bp_context *make_ctx_layout(int dim, bp_method m, float cell, bp_grid_layout layout) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = m;
    def.sort_pairs = true;
    def.grid.cell_size = cell;
    def.grid.layout = layout;
    bp_context *ctx = NULL;
    if (bp_context_create(&def, &ctx) != BP_OK) return NULL;
    return ctx;
}

static bp_context *make_ctx(int dim, bp_method m, float cell) {
    return make_ctx_layout(dim, m, cell, BP_GRID_LAYOUT_AUTO);
}

// One frame through both contexts; pairs compared as sorted arrays; grid validated.
static int compare_frame(bp_context *grid, bp_context *brute, int dim, const float *boxes, size_t n,
                         size_t *pairs_out) {
    bp_pairs a, b;
    CHECK_OK(find(grid, dim, boxes, n, &a));
    CHECK_OK(bp_validate(grid));
    bp_stats st;
    CHECK_OK(bp_get_stats(grid, &st));
    CHECK(st.method == BP_METHOD_GRID);
    CHECK(st.pairs == a.count);
    // Copy: the brute context's call does not touch the grid context's buffer, but be safe.
    bp_pair *ga = malloc((a.count + 1) * sizeof *ga);
    CHECK(ga != NULL);
    if (a.count) memcpy(ga, a.pairs, a.count * sizeof *ga);
    size_t ac = a.count;
    bp_status s2 = find(brute, dim, boxes, n, &b);
    int same = s2 == BP_OK && b.count == ac && (ac == 0 || memcmp(ga, b.pairs, ac * sizeof *ga) == 0);
    if (!same && s2 == BP_OK)
        fprintf(stderr, "n=%zu dim=%d: grid %zu pairs, brute %zu pairs\n", n, dim, ac, b.count);
    free(ga);
    CHECK(same);
    if (pairs_out) *pairs_out = ac;
    return 0;
}

static int compare_boxes(int dim, const float *boxes, size_t n, float cell) {
    bp_context *g = make_ctx(dim, BP_METHOD_GRID, cell), *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
    CHECK(g && b);
    int r = compare_frame(g, b, dim, boxes, n, NULL);
    bp_context_destroy(g);
    bp_context_destroy(b);
    return r;
}

// ---------------------------------------------------------------------------------------------
// Cases

// The docs/scenes.md check values, and grid == brute on every frame 0..10.
static int test_scenes(void) {
    static const struct {
        const char *name;
        int dim;
        size_t n;
        long f0, f10;
    } sc[] = {
        {"seed", 2, 1000, 9317, 7277},     {"uniform", 2, 1000, 127, 133}, {"clustered", 2, 1000, 1115, 901},
        {"mixed", 2, 1000, 172, 165},      {"line", 2, 1000, 8067, 8148},  {"uniform", 3, 1000, 393, 397},
        {"clustered", 3, 1000, 17336, 1714}, {"uniform", 2, 10000, -1, 1243}, {"mixed", 2, 10000, -1, 1764},
    };
    for (size_t c = 0; c < sizeof sc / sizeof sc[0]; ++c) {
        scene s;
        float *boxes = scene_open(&s, sc[c].name, sc[c].n, sc[c].dim, 1);
        bp_context *g = make_ctx(sc[c].dim, BP_METHOD_GRID, 0), *b = make_ctx(sc[c].dim, BP_METHOD_BRUTE, 0);
        CHECK(g && b);
        for (int f = 0; f <= 10; ++f) {
            if (f) scene_step(&s);
            scene_boxes(&s, boxes);
            size_t pc = 0;
            if (compare_frame(g, b, sc[c].dim, boxes, sc[c].n, &pc)) {
                fprintf(stderr, "scene %s dim %d n %zu frame %d\n", sc[c].name, sc[c].dim, sc[c].n, f);
                return 1;
            }
            if (f == 0 && sc[c].f0 >= 0) CHECK((long)pc == sc[c].f0);
            if (f == 10) CHECK((long)pc == sc[c].f10);
        }
        bp_context_destroy(g);
        bp_context_destroy(b);
        scene_close(&s, boxes);
    }
    return 0;
}

// Random boxes of wildly different sizes (log-uniform over 6 decades), n changing every frame,
// some frames with big outliers, 2D and 3D, with and without a user cell size.
static int test_random(void) {
    uint64_t R = bpt_seed;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int variant = 0; variant < 3; ++variant) {
            float cell = variant == 1 ? 0.5f : (variant == 2 ? 50.0f : 0.0f);
            bp_context *g = make_ctx(dim, BP_METHOD_GRID, cell), *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
            CHECK(g && b);
            for (int frame = 0; frame < 12; ++frame) {
                size_t n = (size_t)(rng_next(&R) % 1500);
                float *boxes = bpt_xrealloc(NULL, (n + 1) * 2 * (size_t)dim * sizeof(float));
                double world = frame % 4 == 3 ? 1e5 : 200.0;
                for (size_t i = 0; i < n; ++i) {
                    double size = exp(uni(&R, log(1e-3), log(1e3))) * (u01(&R) < 0.5 ? 0.01 : 1.0);
                    for (int a = 0; a < dim; ++a) {
                        double c = uni(&R, -world, world);
                        double e = size * uni(&R, 0.2, 1.0);
                        if (u01(&R) < 0.05) e = 0;  // points and segments
                        boxes[i * 2 * dim + a] = (float)(c - e);
                        boxes[i * 2 * dim + dim + a] = (float)(c + e);
                    }
                }
                if (n > 3 && frame % 3 == 2) {
                    // A few far-away boxes: the window must not follow them.
                    for (int a = 0; a < dim; ++a) {
                        boxes[a] = 1e7f;
                        boxes[dim + a] = 1e7f + 1.0f;
                        boxes[2 * dim + a] = -3e38f;
                        boxes[2 * dim + dim + a] = -2e38f;
                    }
                }
                int r = compare_frame(g, b, dim, boxes, n, NULL);
                free(boxes);
                if (r) {
                    fprintf(stderr, "random: dim %d variant %d frame %d\n", dim, variant, frame);
                    return 1;
                }
            }
            bp_context_destroy(g);
            bp_context_destroy(b);
        }
    }
    return 0;
}

// Small, degenerate inputs: n = 0 and 1, all identical, points, one line, one cell.
static int test_degenerate(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t w = 2 * (size_t)dim;
        float *boxes = bpt_xrealloc(NULL, 600 * w * sizeof(float));
        uint64_t R = bpt_seed + (uint64_t)dim;
        CHECK(compare_boxes(dim, boxes, 0, 0) == 0);
        for (int a = 0; a < dim; ++a) {
            boxes[a] = 1.0f;
            boxes[dim + a] = 2.0f;
        }
        CHECK(compare_boxes(dim, boxes, 1, 0) == 0);
        // All identical boxes: every pair.
        for (size_t i = 0; i < 300; ++i)
            for (int a = 0; a < dim; ++a) {
                boxes[i * w + a] = -5.0f;
                boxes[i * w + dim + a] = 5.0f;
            }
        CHECK(compare_boxes(dim, boxes, 300, 0) == 0);
        // All identical points.
        for (size_t i = 0; i < 300; ++i)
            for (int a = 0; a < dim; ++a) boxes[i * w + a] = boxes[i * w + dim + a] = 3.0f;
        CHECK(compare_boxes(dim, boxes, 300, 0) == 0);
        // Points on a small integer lattice (many touch exactly).
        for (size_t i = 0; i < 600; ++i)
            for (int a = 0; a < dim; ++a) boxes[i * w + a] = boxes[i * w + dim + a] = (float)(rng_next(&R) % 8);
        CHECK(compare_boxes(dim, boxes, 600, 0) == 0);
        // Unit boxes on a lattice: touching faces and corners count.
        for (size_t i = 0; i < 600; ++i)
            for (int a = 0; a < dim; ++a) {
                float x = (float)(rng_next(&R) % 12);
                boxes[i * w + a] = x;
                boxes[i * w + dim + a] = x + 1.0f;
            }
        CHECK(compare_boxes(dim, boxes, 600, 0) == 0);
        CHECK(compare_boxes(dim, boxes, 600, 1.0f) == 0);  // cell == box: every pair on a boundary
        // Everything on one line (one x), thin in x.
        for (size_t i = 0; i < 600; ++i)
            for (int a = 0; a < dim; ++a) {
                float x = a == 0 ? 7.0f : (float)uni(&R, -100, 100);
                boxes[i * w + a] = x;
                boxes[i * w + dim + a] = a == 0 ? x : x + 1.0f;
            }
        CHECK(compare_boxes(dim, boxes, 600, 0) == 0);
        // Everything in one cell: a user cell far larger than the world.
        for (size_t i = 0; i < 600; ++i)
            for (int a = 0; a < dim; ++a) {
                float x = (float)uni(&R, 0, 100);
                boxes[i * w + a] = x;
                boxes[i * w + dim + a] = x + 3.0f;
            }
        CHECK(compare_boxes(dim, boxes, 600, 1e6f) == 0);
        // A user cell far smaller than the boxes: everything goes up the hierarchy.
        CHECK(compare_boxes(dim, boxes, 600, 1e-3f) == 0);
        // Cells at the ends of the float range: a denormal edge, the largest float.
        CHECK(compare_boxes(dim, boxes, 600, 1e-45f) == 0);
        CHECK(compare_boxes(dim, boxes, 600, FLT_MAX) == 0);
        free(boxes);
    }
    return 0;
}

// Coordinates around +-1e7 (float spacing 1), negative, and up to +-FLT_MAX; one huge box over
// everything; boxes of extent FLT_MAX.
static int test_extreme(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t w = 2 * (size_t)dim, n = 1000;
        float *boxes = bpt_xrealloc(NULL, n * w * sizeof(float));
        uint64_t R = bpt_seed * 7 + (uint64_t)dim;
        for (int variant = 0; variant < 6; ++variant) {
            for (size_t i = 0; i < n; ++i)
                for (int a = 0; a < dim; ++a) {
                    double c, e;
                    switch (variant) {
                    case 0: c = uni(&R, -1e7 - 500, -1e7 + 500); e = uni(&R, 0, 4); break;   // far, negative
                    case 1: c = uni(&R, 1e7 - 300, 1e7 + 300); e = uni(&R, 0, 4); break;     // float spacing 1
                    case 2: c = uni(&R, -3e38, 3e38); e = uni(&R, 0, 1e37); break;           // the whole range
                    case 3: c = uni(&R, -100, 100); e = uni(&R, 0, 2); break;                // + huge boxes below
                    case 4: c = (i % 2 ? 1e30 : -1e30) + uni(&R, -1e24, 1e24); e = uni(&R, 0, 1e23); break;
                    default: c = uni(&R, -50, 50); e = 1; break;                             // + FLT_MAX extents
                    }
                    double lo = c - e, hi = c + e;
                    if (lo < -FLT_MAX) lo = -FLT_MAX;
                    if (hi > FLT_MAX) hi = FLT_MAX;
                    boxes[i * w + a] = (float)lo;
                    boxes[i * w + dim + a] = (float)hi;
                }
            if (variant == 3) {
                // One box covering everything, one covering everything on one axis only.
                for (int a = 0; a < dim; ++a) {
                    boxes[a] = -1e6f;
                    boxes[dim + a] = 1e6f;
                    boxes[w + a] = a == 0 ? -FLT_MAX : 0.0f;
                    boxes[w + dim + a] = a == 0 ? FLT_MAX : 0.5f;
                }
            }
            if (variant == 5)
                for (size_t i = 0; i < n; i += 97)
                    for (int a = 0; a < dim; ++a) {
                        boxes[i * w + a] = -FLT_MAX;
                        boxes[i * w + dim + a] = FLT_MAX;
                    }
            if (compare_boxes(dim, boxes, n, 0)) {
                fprintf(stderr, "extreme: dim %d variant %d\n", dim, variant);
                return 1;
            }
        }
        free(boxes);
    }
    return 0;
}

// One region query of the given kind: a box (lo, hi), a sphere (centre lo, radius r) or a point.
static bp_status query_kind(bp_context *ctx, int kind, const float *lo, const float *hi, float r, bp_indices *out) {
    return kind == 0 ? bp_query_box(ctx, lo, hi, out) : kind == 1 ? bp_query_sphere(ctx, lo, r, out)
                                                                  : bp_query_point(ctx, lo, out);
}

// Region queries from the grid against the brute context's scan, on the mixed scene.
static int query_compare(bp_context *g, bp_context *b, int kind, const float *lo, const float *hi, float r) {
    bp_indices x, y;
    if (query_kind(g, kind, lo, hi, r, &x) != BP_OK) return 1;
    uint32_t *keep = malloc((x.count + 1) * sizeof *keep);
    if (!keep) return 1;
    if (x.count) memcpy(keep, x.indices, x.count * sizeof *keep);
    size_t c = x.count;
    bp_status s2 = query_kind(b, kind, lo, hi, r, &y);
    int ok = s2 == BP_OK && y.count == c && (c == 0 || !memcmp(keep, y.indices, c * sizeof *keep));
    free(keep);
    return !ok;
}

// `count` random queries of each kind from grid context g, compared with brute context b (both
// called on `boxes` last), in a world of side W: boxes and spheres of sizes from 0.01 to W/4 (every
// tenth the whole world, every fiftieth box +-FLT_MAX), points, and points on a box's corner.
static int query_rounds(bp_context *g, bp_context *b, uint64_t *R, double W, const float *boxes, size_t n, int dim,
                        int count) {
    for (int q = 0; q < count; ++q) {
        float lo[3], hi[3];
        double size = q % 10 == 0 ? W : exp(uni(R, log(0.01), log(W / 4)));
        for (int a = 0; a < dim; ++a) {
            double c = uni(R, -0.1 * W, 1.1 * W);
            lo[a] = (float)(c - size * u01(R));
            hi[a] = (float)(c + size * u01(R));
        }
        if (q % 50 == 1)
            for (int a = 0; a < dim; ++a) {
                lo[a] = -FLT_MAX;
                hi[a] = FLT_MAX;
            }
        CHECK(query_compare(g, b, 0, lo, hi, 0) == 0);
        CHECK(query_compare(g, b, 1, lo, NULL, (float)size) == 0);
        CHECK(query_compare(g, b, 2, lo, NULL, 0) == 0);
        // A point on a box corner (the boundary counts).
        const float *corner = boxes + (size_t)(rng_next(R) % n) * 2 * (size_t)dim;
        CHECK(query_compare(g, b, 2, corner, NULL, 0) == 0);
    }
    return 0;
}


static int test_query(void) {
    uint64_t R = bpt_seed * 13;
    for (int dim = 2; dim <= 3; ++dim) {
        const char *names[2] = {"mixed", "clustered"};
        for (int sc = 0; sc < 2; ++sc) {
            scene s;
            const size_t n = 5000;
            float *boxes = scene_open(&s, names[sc], n, dim, bpt_seed);
            scene_boxes(&s, boxes);
            // A few extra huge boxes so that the coarse levels are queried too.
            for (int a = 0; a < dim; ++a) {
                boxes[a] = 0.0f;
                boxes[dim + a] = (float)(s.W / 3);
            }
            bp_context *g = make_ctx(dim, BP_METHOD_GRID, 0), *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
            CHECK(g && b);
            bp_indices none;
            CHECK(bp_query_point(g, boxes, &none) == BP_ERR_NO_BOXES);
            bp_pairs out;
            CHECK_OK(find(g, dim, boxes, n, &out));
            CHECK_OK(find(b, dim, boxes, n, &out));
            CHECK(query_rounds(g, b, &R, s.W, boxes, n, dim, 300) == 0);
            bp_context_destroy(g);
            bp_context_destroy(b);
            scene_close(&s, boxes);
        }
    }
    return 0;
}

// Bipartite calls: grid == brute for pairs between two sets.
static int test_between(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        scene s;
        const size_t n = 4000;
        float *boxes = scene_open(&s, "mixed", n, dim, bpt_seed);
        scene_boxes(&s, boxes);
        bp_context *g = make_ctx(dim, BP_METHOD_GRID, 0), *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
        CHECK(g && b);
        const size_t na = 1234;
        const float *B = boxes + na * 2 * (size_t)dim;
        bp_pairs x, y;
        if (dim == 2) {
            CHECK_OK(bp_find_pairs_between2(g, (const bp_box2 *)(const void *)boxes, na, (const bp_box2 *)(const void *)B, n - na, &x));
        } else {
            CHECK_OK(bp_find_pairs_between3(g, (const bp_box3 *)(const void *)boxes, na, (const bp_box3 *)(const void *)B, n - na, &x));
        }
        bp_pair *keep = malloc((x.count + 1) * sizeof *keep);
        CHECK(keep);
        if (x.count) memcpy(keep, x.pairs, x.count * sizeof *keep);
        size_t c = x.count;
        if (dim == 2) {
            CHECK_OK(bp_find_pairs_between2(b, (const bp_box2 *)(const void *)boxes, na, (const bp_box2 *)(const void *)B, n - na, &y));
        } else {
            CHECK_OK(bp_find_pairs_between3(b, (const bp_box3 *)(const void *)boxes, na, (const bp_box3 *)(const void *)B, n - na, &y));
        }
        CHECK(c > 0 && y.count == c && !memcmp(keep, y.pairs, c * sizeof *keep));
        free(keep);
        bp_context_destroy(g);
        bp_context_destroy(b);
        scene_close(&s, boxes);
    }
    return 0;
}

// Failed allocations: the Nth allocation fails for every N; the call returns BP_ERR_NOMEM, the
// context stays usable (the next call matches brute force) and nothing leaks.
typedef struct fail_alloc {
    long countdown;  // fail when it reaches 0; negative: never
    size_t live;
} fail_alloc;

static void *fa_alloc(size_t size, size_t align, void *user) {
    fail_alloc *fa = user;
    if (fa->countdown == 0) {
        fa->countdown = -1;
        return NULL;
    }
    if (fa->countdown > 0) fa->countdown--;
    size_t rounded = (size + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, rounded);
    if (p) fa->live += size;
    return p;
}

static void fa_free(void *p, size_t size, void *user) {
    fail_alloc *fa = user;
    if (!p) return;
    fa->live -= size;
    free(p);
}

// A grid context whose allocations go through fa.
static bp_context *make_ctx_failing(int dim, bool sorted, fail_alloc *fa) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = BP_METHOD_GRID;
    def.sort_pairs = sorted;
    def.allocator = (bp_allocator){fa_alloc, fa_free, fa};
    bp_context *g = NULL;
    CHECK_OK(bp_context_create(&def, &g));
    return g;
}

static int test_nomem(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        scene s;
        const size_t n = 3000;
        float *boxes = scene_open(&s, "mixed", n, dim, bpt_seed);
        bp_context *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
        CHECK(b);
        int failures = 0;
        for (long fail_at = 0; fail_at < 200; ++fail_at) {
            fail_alloc fa = {-1, 0};
            bp_context *g = make_ctx_failing(dim, true, &fa);
            // Warm up with a smaller frame, then fail somewhere in a larger one.
            scene_boxes(&s, boxes);
            bp_pairs out;
            CHECK_OK(find(g, dim, boxes, n / 3, &out));
            fa.countdown = fail_at;
            scene_step(&s);
            scene_boxes(&s, boxes);
            bp_status st = find(g, dim, boxes, n, &out);
            if (st == BP_ERR_NOMEM) {
                failures++;
                CHECK(out.count == 0);
            } else {
                CHECK_OK(st);
                fa.countdown = -1;
            }
            fa.countdown = -1;
            // Usable afterwards, and right.
            CHECK(compare_frame(g, b, dim, boxes, n, NULL) == 0);
            scene_step(&s);
            scene_boxes(&s, boxes);
            CHECK(compare_frame(g, b, dim, boxes, n, NULL) == 0);
            bp_context_destroy(g);
            CHECK(fa.live == 0);
            if (st == BP_OK) break;  // no allocation left to fail
        }
        CHECK(failures > 0);
        bp_context_destroy(b);
        scene_close(&s, boxes);
    }
    return 0;
}

// A warm context allocates nothing: same n, the scene moving. Pairs go to a callback, so the
// context's own pair buffer (which grows with the pair count) stays out of the picture.
static bool count_pairs(const bp_pair *p, size_t c, void *user) {
    (void)p;
    *(size_t *)user += c;
    return true;
}

static int test_warm(void) {
    const size_t n = 20000;
    for (int dim = 2; dim <= 3; ++dim) {
        scene s;
        float *boxes = scene_open(&s, "mixed", n, dim, bpt_seed);
        fail_alloc fa = {-1, 0};
        bp_context *g = make_ctx_failing(dim, false, &fa);
        size_t got = 0;
        for (int f = 0; f < 13; ++f) {
            scene_step(&s);
            scene_boxes(&s, boxes);
            if (f == 3) fa.countdown = 0;  // from here on, any allocation fails
            bp_status st = dim == 2 ? bp_find_pairs2_cb(g, (const bp_box2 *)(const void *)boxes, n, count_pairs, &got)
                                    : bp_find_pairs3_cb(g, (const bp_box3 *)(const void *)boxes, n, count_pairs, &got);
            CHECK_OK(st);
        }
        CHECK(fa.countdown == 0);
        CHECK(got > 0);
        bp_context_destroy(g);
        CHECK(fa.live == 0);
        scene_close(&s, boxes);
    }
    return 0;
}

// The pair callback stops delivery: BP_ERR_STOPPED, queries still answer, next frame is right.
static bool stop_after_one(const bp_pair *p, size_t c, void *user) {
    count_pairs(p, c, user);
    return false;
}

static int test_stop(void) {
    scene s;
    const size_t n = 20000;
    float *boxes = scene_open(&s, "uniform", n, 2, bpt_seed);
    scene_boxes(&s, boxes);
    bp_context_def def = bp_default_context_def();
    def.method = BP_METHOD_GRID;
    bp_context *g = NULL;
    CHECK_OK(bp_context_create(&def, &g));
    size_t got = 0;
    CHECK(bp_find_pairs2_cb(g, (const bp_box2 *)(const void *)boxes, n, stop_after_one, &got) == BP_ERR_STOPPED);
    CHECK(got > 0);
    bp_indices q;
    CHECK_OK(bp_query_point(g, boxes, &q));
    CHECK(q.count >= 1);
    bp_context *b = make_ctx(2, BP_METHOD_BRUTE, 0);
    bp_context_destroy(g);
    g = make_ctx(2, BP_METHOD_GRID, 0);
    CHECK(g && b);
    CHECK(compare_frame(g, b, 2, boxes, n, NULL) == 0);
    bp_context_destroy(g);
    bp_context_destroy(b);
    scene_close(&s, boxes);
    return 0;
}

// Debug drawing: the window first (level 0), then occupied cells, each holding some box.
static int test_draw(void) {
    scene s;
    const size_t n = 2000;
    float *boxes = scene_open(&s, "mixed", n, 2, bpt_seed);
    scene_boxes(&s, boxes);
    bp_context *g = make_ctx(2, BP_METHOD_GRID, 0);
    CHECK(g);
    bp_pairs out;
    CHECK_OK(find(g, 2, boxes, n, &out));
    bpt_draw acc = {.dim = 2};
    bp_debug_draw dd = {bpt_draw_box, &acc};
    CHECK_OK(bp_debug_draw_structure(g, &dd));
    CHECK(acc.level0 == 1 && !acc.bad);
    CHECK(acc.boxes > 1 && acc.boxes <= n + 1);
    CHECK(acc.wlo[0] <= 0.0f && acc.whi[0] >= (float)s.W);
    bp_context_destroy(g);
    scene_close(&s, boxes);
    return 0;
}

// A demo-sized world (the seed scene): the whole level-0 lattice is drawn too, at the largest
// level number. Its cells are equal, tile the window exactly, and every occupied finest cell is
// one of them.
#define LATTICE_MAX (4096 + 1024)  // the drawn lattice's limit, plus occupied cells
typedef struct lattice_acc {
    size_t n;
    float cell[LATTICE_MAX][4];
    int level[LATTICE_MAX];
    float wlo[2], whi[2];
    int top;
} lattice_acc;

static void lattice_box(const float *lo, const float *hi, int level, void *user) {
    lattice_acc *acc = user;
    if (level == 0) {
        memcpy(acc->wlo, lo, sizeof acc->wlo);
        memcpy(acc->whi, hi, sizeof acc->whi);
        return;
    }
    if (level > acc->top) acc->top = level;
    if (acc->n == LATTICE_MAX) return;
    acc->level[acc->n] = level;
    memcpy(acc->cell[acc->n++], (const float[4]){lo[0], lo[1], hi[0], hi[1]}, sizeof acc->cell[0]);
}

static int test_draw_lattice(void) {
    scene s;
    const size_t n = 500;
    float *boxes = scene_open(&s, "seed", n, 2, bpt_seed);
    lattice_acc *acc = calloc(1, sizeof *acc);
    CHECK(acc);
    scene_boxes(&s, boxes);
    bp_context *g = make_ctx(2, BP_METHOD_GRID, 0);
    CHECK(g);
    bp_pairs out;
    CHECK_OK(find(g, 2, boxes, n, &out));
    bp_debug_draw dd = {lattice_box, acc};
    CHECK_OK(bp_debug_draw_structure(g, &dd));
    CHECK(acc->n < LATTICE_MAX);
    size_t lattice = 0;
    double area = 0;
    const float *first = NULL;
    for (size_t k = 0; k < acc->n; ++k) {
        if (acc->level[k] != acc->top) continue;
        const float *c = acc->cell[k];
        if (!first) first = c;
        // Equal cells (up to float rounding of origin + k * cell), inside the window.
        CHECK(fabsf((c[2] - c[0]) - (first[2] - first[0])) <= 1e-3f * (first[2] - first[0]));
        CHECK(fabsf((c[3] - c[1]) - (first[3] - first[1])) <= 1e-3f * (first[3] - first[1]));
        CHECK(c[0] >= acc->wlo[0] && c[1] >= acc->wlo[1] && c[2] <= acc->whi[0] * 1.0001f + 1e-3f &&
              c[3] <= acc->whi[1] * 1.0001f + 1e-3f);
        area += (double)(c[2] - c[0]) * (double)(c[3] - c[1]);
        lattice++;
    }
    CHECK(lattice > 1);
    const double window = (double)(acc->whi[0] - acc->wlo[0]) * (double)(acc->whi[1] - acc->wlo[1]);
    CHECK(fabs(area - window) <= 1e-3 * window);
    // Occupied finest cells (the level just below the lattice's number) are lattice cells.
    size_t occupied = 0;
    for (size_t k = 0; k < acc->n; ++k) {
        if (acc->level[k] != acc->top - 1) continue;
        int found = 0;
        for (size_t j = 0; j < acc->n && !found; ++j)
            found = acc->level[j] == acc->top && memcmp(acc->cell[j], acc->cell[k], sizeof acc->cell[0]) == 0;
        CHECK(found);
        occupied++;
    }
    CHECK(occupied > 0 && occupied < lattice);
    bp_context_destroy(g);
    free(acc);
    scene_close(&s, boxes);
    return 0;
}

// Both layouts (sorted runs; the table of small 2D worlds) and AUTO's choice between them, against
// brute force frame after frame on the scenes, the world then shrinking (every box pulled to
// the centre: cells crowd, the table's lists grow long), n changing, and queries from each.
static int test_layouts(void) {
    static const struct {
        const char *name;
        size_t n;
    } sc[] = {{"uniform", 3000}, {"clustered", 3000}, {"seed", 1000}, {"line", 1000}, {"mixed", 1000}};
    uint64_t R = bpt_seed * 31;
    for (size_t c = 0; c < sizeof sc / sizeof sc[0]; ++c) {
        for (int layout = 0; layout < 3; ++layout) {
            scene s;
            float *boxes = scene_open(&s, sc[c].name, sc[c].n, 2, bpt_seed);
            bp_context *g = make_ctx_layout(2, BP_METHOD_GRID, 0, (bp_grid_layout)layout);
            bp_context *b = make_ctx(2, BP_METHOD_BRUTE, 0);
            CHECK(g && b);
            for (int f = 0; f <= 12; ++f) {
                if (f) scene_step(&s);
                scene_boxes(&s, boxes);
                size_t n = sc[c].n;
                if (f >= 6) {
                    // Pulled towards the centre, more each frame: from sparse to one crowd.
                    const float k = 1.0f / (float)(1 << (f - 5)), mid = (float)(s.W / 2);
                    for (size_t i = 0; i < n * 4; ++i) boxes[i] = mid + (boxes[i] - mid) * k;
                }
                if (f == 4) n -= n / 3;
                if (compare_frame(g, b, 2, boxes, n, NULL)) {
                    fprintf(stderr, "layouts: %s layout %d frame %d\n", sc[c].name, layout, f);
                    return 1;
                }
                if (f == 3 || f == 8) CHECK(query_rounds(g, b, &R, s.W, boxes, n, 2, 60) == 0);
            }
            bp_context_destroy(g);
            bp_context_destroy(b);
            scene_close(&s, boxes);
        }
    }
    return 0;
}

// AUTO leaves the table for the sorted layout when the cells crowd. Seen through the allocator:
// the sorted layout's arrays exist only once it has run, so an AUTO context holds as many bytes
// as a table-only one while it stays on the table, more once it has sorted. `uniform` (7% of
// the boxes share a cell) stays on the table; `line` (everything in one column: 92%) sorts from
// its first frame on (the crowding measured while linking), and its pairs stay right once the
// boxes spread out again (a wider window, the table back).
static int test_crowding(void) {
    const char *names[2] = {"uniform", "line"};
    for (int c = 0; c < 2; ++c) {
        scene s;
        const size_t n = 2000;
        float *boxes = scene_open(&s, names[c], n, 2, bpt_seed);
        bp_context *g = make_ctx(2, BP_METHOD_GRID, 0);
        bp_context *t = make_ctx_layout(2, BP_METHOD_GRID, 0, BP_GRID_LAYOUT_TABLE);
        CHECK(g && t);
        size_t bytes[4], table_bytes[4];
        for (int f = 0; f < 4; ++f) {
            scene_step(&s);
            scene_boxes(&s, boxes);
            bp_pairs out;
            bp_stats st;
            CHECK_OK(find(g, 2, boxes, n, &out));
            CHECK_OK(bp_validate(g));
            CHECK_OK(bp_get_stats(g, &st));
            bytes[f] = st.bytes;
            CHECK_OK(find(t, 2, boxes, n, &out));
            CHECK_OK(bp_get_stats(t, &st));
            table_bytes[f] = st.bytes;
        }
        for (int f = 0; f < 4; ++f) {
            if (c == 0) CHECK(bytes[f] == table_bytes[f]);
            else CHECK(bytes[f] > table_bytes[f] && bytes[f] == bytes[0]);
        }
        if (c == 1) {
            // Spread the boxes over the square (the same boxes, x from the index): sparse again.
            for (size_t i = 0; i < n; ++i) {
                const float x = (float)((double)(i % 45) * s.W / 45.0) + 1.0f;
                boxes[4 * i] = x - 1.0f;
                boxes[4 * i + 2] = x + 1.0f;
            }
            bp_context *b = make_ctx(2, BP_METHOD_BRUTE, 0);
            CHECK(b);
            for (int f = 0; f < 3; ++f) CHECK(compare_frame(g, b, 2, boxes, n, NULL) == 0);
            bp_context_destroy(b);
        }
        bp_context_destroy(g);
        bp_context_destroy(t);
        scene_close(&s, boxes);
    }
    return 0;
}

// Crowded cells (src/grid_dense.c): the AVX-512 kernels must give the scalar loop's pairs in
// the scalar loop's order, with the same check count, in buffer mode (plain and streamed), in
// callback mode (batches flushed in the middle of runs) and with workers (tasks starting
// mid-level), with the AVX-512 kernels and with the AVX2 ones. The definition's grid.kernels
// forces each path; the library's internal queries (a static build's hidden symbols) say which
// kernels this CPU has and count the frames that sorted their cells.
#if defined(BP_STATIC)
extern int bp_grid_dense_lanes(int kernels);
extern bool bp_grid_dense_soa_possible(void);
extern _Atomic unsigned long long bp_grid_sorted_frames;
// The values of bp_context_def.grid.kernels.
#define DENSE_AUTO 0
#define DENSE_OFF 1
#define DENSE_ALWAYS 2
#define DENSE_AVX2 3

typedef struct seq {
    bp_pair *p;
    size_t n, cap, batches;
    size_t batch_sizes_hash;
} seq;

static bool seq_cb(const bp_pair *pairs, size_t count, void *user) {
    seq *s = user;
    if (s->n + count > s->cap) {
        size_t cap = (s->n + count) * 2;
        bp_pair *p = realloc(s->p, cap * sizeof *p);
        if (!p) return false;
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->n, pairs, count * sizeof *pairs);
    s->n += count;
    s->batches++;
    s->batch_sizes_hash = s->batch_sizes_hash * 31 + count;
    return true;
}

// One run of `frames` frames (boxes[f]) in the given mode; pairs in method order (unsorted).
// callback: through bp_find_pairs*_cb. Returns the pairs of every frame, concatenated, the
// checks summed.
static int dense_run(int dim, const float *const *boxes, size_t n, int frames, float cell, int mode, bool callback,
                     int workers, seq *out, uint64_t *checks) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = BP_METHOD_GRID;
    def.grid.cell_size = cell;
    def.grid.layout = BP_GRID_LAYOUT_SORTED;
    def.workers = workers;
    def.parallel_min = workers > 1 ? 1 : 0;
    def.grid.kernels = mode;
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    memset(out, 0, sizeof *out);
    *checks = 0;
    for (int f = 0; f < frames; ++f) {
        if (callback) {
            bp_status st = dim == 2 ? bp_find_pairs2_cb(ctx, (const bp_box2 *)(const void *)boxes[f], n, seq_cb, out)
                                    : bp_find_pairs3_cb(ctx, (const bp_box3 *)(const void *)boxes[f], n, seq_cb, out);
            CHECK_OK(st);
        } else {
            bp_pairs pr;
            CHECK_OK(find(ctx, dim, boxes[f], n, &pr));
            seq tmp = *out;
            CHECK(pr.count == 0 || seq_cb(pr.pairs, pr.count, &tmp));
            *out = tmp;
        }
        CHECK_OK(bp_validate(ctx));
        bp_stats st;
        CHECK_OK(bp_get_stats(ctx, &st));
        CHECK(st.method == BP_METHOD_GRID);
        *checks += st.checks;
    }
    bp_context_destroy(ctx);
    return 0;
}

static int cmp_pair(const void *a, const void *b) {
    const bp_pair *x = a, *y = b;
    return bpt_cmp_keys(x->i, x->j, y->i, y->j);
}

// The scalar loop's output against the kernels' (forced on every block, and chosen per block),
// in every delivery mode; the scalar pair set against brute force, frame by frame.
static int dense_compare(const char *what, int dim, const float *const *boxes, size_t n, int frames, float cell) {
    seq ref, got;
    uint64_t ref_checks, got_checks;
    CHECK(dense_run(dim, boxes, n, frames, cell, DENSE_OFF, false, 1, &ref, &ref_checks) == 0);
    const struct {
        int mode;
        bool callback;
        int workers;
    } runs[] = {{DENSE_ALWAYS, false, 1}, {DENSE_AUTO, false, 1}, {DENSE_ALWAYS, true, 1}, {DENSE_ALWAYS, false, 2},
                {DENSE_AVX2, false, 1}, {DENSE_AVX2, true, 1}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r) {
        CHECK(dense_run(dim, boxes, n, frames, cell, runs[r].mode, runs[r].callback, runs[r].workers, &got,
                        &got_checks) == 0);
        const bool same = got.n == ref.n && (ref.n == 0 || memcmp(got.p, ref.p, ref.n * sizeof *ref.p) == 0);
        if (!same || got_checks != ref_checks)
            fprintf(stderr, "dense %s dim %d run %zu: %zu pairs (scalar %zu), checks %llu (scalar %llu)\n", what,
                    dim, r, got.n, ref.n, (unsigned long long)got_checks, (unsigned long long)ref_checks);
        free(got.p);
        CHECK(same);
        CHECK(got_checks == ref_checks);
    }
    // Callback batches: the same sizes whichever path filled them.
    seq cb_ref;
    CHECK(dense_run(dim, boxes, n, frames, cell, DENSE_OFF, true, 1, &cb_ref, &ref_checks) == 0);
    CHECK(dense_run(dim, boxes, n, frames, cell, DENSE_ALWAYS, true, 1, &got, &got_checks) == 0);
    CHECK(cb_ref.batches == got.batches && cb_ref.batch_sizes_hash == got.batch_sizes_hash);
    free(got.p);
    CHECK(dense_run(dim, boxes, n, frames, cell, DENSE_AVX2, true, 1, &got, &got_checks) == 0);
    CHECK(cb_ref.batches == got.batches && cb_ref.batch_sizes_hash == got.batch_sizes_hash);
    free(cb_ref.p);
    free(got.p);
    // The pair set of each frame against brute force.
    bp_context *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
    CHECK(b);
    size_t at = 0;
    for (int f = 0; f < frames; ++f) {
        bp_pairs bp;
        CHECK_OK(find(b, dim, boxes[f], n, &bp));
        CHECK(at + bp.count <= ref.n);
        qsort(ref.p + at, bp.count, sizeof *ref.p, cmp_pair);
        CHECK(bp.count == 0 || memcmp(ref.p + at, bp.pairs, bp.count * sizeof *bp.pairs) == 0);
        at += bp.count;
    }
    CHECK(at == ref.n);
    bp_context_destroy(b);
    free(ref.p);
    return 0;
}

static void dense_box(float *b, int dim, const double *c, const double *e) {
    for (int a = 0; a < dim; ++a) {
        b[a] = (float)(c[a] - e[a]);
        b[dim + a] = (float)(c[a] + e[a]);
    }
}

static int test_dense(void) {
    if (bp_grid_dense_lanes(DENSE_AUTO) == 0) printf("dense: no dense kernels in this build or on this CPU; the scalar loop against itself\n");
    uint64_t R = bpt_seed;
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t w = 2 * (size_t)dim;
        enum { MAXN = 6000, FRAMES = 2 };
        float *buf[FRAMES];
        for (int f = 0; f < FRAMES; ++f) {
            buf[f] = bpt_xrealloc(NULL, MAXN * w * sizeof(float));
        }
        const float *const *boxes = (const float *const *)buf;
        double c[3], e[3];
        // 1. Identical boxes: one cell, every candidate a pair, runs of every length down to 1.
        for (size_t i = 0; i < 100; ++i) {
            for (int a = 0; a < dim; ++a) c[a] = 10.0, e[a] = 1.0;
            dense_box(buf[0] + i * w, dim, c, e);
        }
        CHECK(dense_compare("identical", dim, boxes, 100, 1, 0.0f) == 0);
        // 2. Cells of 1 .. 40 boxes (every tail length of a 16-box step), boxes within a cell and
        // reaching into the next, a cell of edge 1 forced.
        size_t n = 0;
        for (int k = 1; k <= 40; ++k) {
            const double cx = 3.0 * (k % 8), cy = 3.0 * (k / 8), cz = 1.5 * (k % 3);
            for (int i = 0; i < k; ++i) {
                c[0] = cx + uni(&R, 0.0, 1.0), c[1] = cy + uni(&R, 0.0, 1.0), c[2] = cz + uni(&R, 0.0, 1.0);
                for (int a = 0; a < dim; ++a) e[a] = uni(&R, 0.05, 0.45);
                dense_box(buf[0] + n++ * w, dim, c, e);
            }
        }
        CHECK(dense_compare("runs", dim, boxes, n, 1, 1.0f) == 0);
        // 3. Touching edges: a lattice of unit boxes, four copies a site, neighbours sharing faces
        // exactly (closed boxes: they overlap).
        n = 0;
        for (int i = 0; i < 8 && n + 4 <= MAXN; ++i)
            for (int j = 0; j < 8; ++j)
                for (int k = 0; k < (dim == 3 ? 4 : 1); ++k)
                    for (int r = 0; r < 4; ++r) {
                        c[0] = i + 0.5, c[1] = j + 0.5, c[2] = k + 0.5;
                        e[0] = e[1] = e[2] = 0.5;
                        dense_box(buf[0] + n++ * w, dim, c, e);
                    }
        CHECK(dense_compare("touching", dim, boxes, n, 1, 0.0f) == 0);
        // 4. Sizes over decades and a few boxes as large as the stage: coarser levels, whose
        // boxes meet the finer ones by rows of a region query or by a scan of a whole level.
        // In 3D these are crowds of boxes mostly far smaller than their cells, whose cells are
        // sorted (with AVX-512: every mode sorts them, so the scalar loops, AVX2 and AVX-512 all
        // stop their runs at the first box past the probe, and count the same checks). Two
        // frames: in the second the boxes moved, some to other cells, so the sort has work.
        n = 2000;
        const double sizes_stage = dim == 2 ? 100.0 : 50.0;  // 3D: 16 boxes a cell and more
        for (size_t i = 0; i < n; ++i) {
            const double r = i < 3 ? 60.0 : exp(uni(&R, log(0.1), log(30.0)));
            for (int a = 0; a < dim; ++a) c[a] = uni(&R, 0.0, sizes_stage), e[a] = r * uni(&R, 0.5, 1.0);
            dense_box(buf[0] + i * w, dim, c, e);
            for (int a = 0; a < dim; ++a) c[a] += uni(&R, -3.0, 3.0);
            dense_box(buf[1] + i * w, dim, c, e);
        }
        const unsigned long long sorted_before = bp_grid_sorted_frames;
        CHECK(dense_compare("sizes", dim, boxes, n, FRAMES, 0.0f) == 0);
        if (dim == 3 && bp_grid_dense_soa_possible()) CHECK(bp_grid_sorted_frames > sorted_before);
        if (dim == 2) CHECK(bp_grid_sorted_frames == sorted_before);
        // 4b. The same with a few boxes far outside the stage, in touching pairs: the cells'
        // window is cut to the bulk, so in 3D their codes in the six arrays are clamped to the
        // same extreme and only the floats can tell touching from one float step apart (pairs
        // 2k, 2k + 1 touch on x; pairs 2k + 1, 2k + 2 are one step apart).
        for (size_t k = 0; k < 40; ++k) {
            float *b = buf[0] + (n - 40 + k) * w;
            for (int a = 0; a < dim; ++a) b[a] = 1e5f + (float)(k / 2) * 3.0f * (a > 0), b[dim + a] = b[a] + 1.0f;
            if (k % 2) {
                const float *p = b - w;
                b[0] = p[dim];  // touching its partner
                b[dim] = b[0] + 1.0f;
            } else if (k > 0) {
                b[0] = nextafterf(b[-w + dim], INFINITY);  // one step clear of the box before
                b[dim] = b[0] + 1.0f;
            }
            memcpy(buf[1] + (n - 40 + k) * w, b, w * sizeof(float));
        }
        const unsigned long long sorted_before_far = bp_grid_sorted_frames;
        CHECK(dense_compare("sizes far", dim, boxes, n, FRAMES, 0.0f) == 0);
        if (dim == 3 && bp_grid_dense_soa_possible()) CHECK(bp_grid_sorted_frames > sorted_before_far);
        // 5. A seed-like crowd (circles of radius 5, hundreds a cell), two frames (the second
        // coherent), and a larger one whose second frame streams (a million pairs and more).
        const size_t crowd[2] = {3000, MAXN};
        const double stage[2] = {dim == 2 ? 300.0 : 60.0, dim == 2 ? 40.0 : 25.0};
        for (int t = 0; t < 2; ++t) {
            for (size_t i = 0; i < crowd[t]; ++i) {
                for (int a = 0; a < dim; ++a) c[a] = uni(&R, 0.0, stage[t]), e[a] = t ? 2.5 : 5.0;
                dense_box(buf[0] + i * w, dim, c, e);
                for (int a = 0; a < dim; ++a) c[a] += uni(&R, -0.5, 0.5);
                dense_box(buf[1] + i * w, dim, c, e);
            }
            CHECK(dense_compare(t ? "stream" : "crowd", dim, boxes, crowd[t], FRAMES, 0.0f) == 0);
        }
        for (int f = 0; f < FRAMES; ++f) free(buf[f]);
    }
    return 0;
}

// The six arrays' kernel compares 16-bit codes of the stored values and leaves equal codes to the
// floats; the codes must not depend on MXCSR (a game engine's thread, or a task hook's worker,
// may flush results too small for a normal float to zero, or read such inputs as zero). A sorted
// 3D crowd at tiny coordinates (around 1e-35, where one float step is about 1e-42, below the
// smallest normal), with partners one float step clear of a box on x (no pair) and partners
// touching it exactly (a pair), against brute force, with flush-to-zero and denormals-are-zero
// off and on.
static int test_dense_ftz(void) {
#if defined(__SSE__) || defined(__x86_64__)
    if (!bp_grid_dense_soa_possible()) {
        printf("dense_ftz: no AVX-512 here: skipped\n");
        return 0;
    }
    enum { N = 2000, PARTNERS = 400 };
    const int dim = 3;
    const size_t w = 6;
    float *boxes = bpt_xrealloc(NULL, (N + 2 * PARTNERS) * w * sizeof(float));
    uint64_t R = bpt_seed * 31 + 7;
    double c[3], e[3];
    for (size_t i = 0; i < N; ++i) {
        const double r = exp(uni(&R, log(0.1), log(30.0)));
        for (int a = 0; a < dim; ++a) c[a] = uni(&R, 0.0, 50.0) * 1e-36, e[a] = r * uni(&R, 0.5, 1.0) * 1e-36;
        dense_box(boxes + i * w, dim, c, e);
    }
    for (size_t k = 0; k < 2 * PARTNERS; ++k) {
        const float *b = boxes + (k / 2) * w;
        float *p = boxes + (N + k) * w;
        memcpy(p, b, w * sizeof(float));
        const float width = b[3] - b[0];
        p[0] = k % 2 ? b[3] : nextafterf(b[3], INFINITY);  // touching, or one step clear
        p[3] = p[0] + width;
    }
    const size_t n = N + 2 * PARTNERS;
    const unsigned int csr = _mm_getcsr();
    const unsigned int modes[4] = {0u, 0x8000u, 0x0040u, 0x8040u};  // none, FTZ, DAZ, both
    for (int mode = 0; mode < 4; ++mode) {
        _mm_setcsr((csr & ~0x8040u) | modes[mode]);
        bp_context *g = make_ctx(dim, BP_METHOD_GRID, 0), *b = make_ctx(dim, BP_METHOD_BRUTE, 0);
        CHECK(g && b);
        const unsigned long long sorted_before = bp_grid_sorted_frames;
        size_t pairs = 0;
        const int r = compare_frame(g, b, dim, boxes, n, &pairs);
        const unsigned long long sorted = bp_grid_sorted_frames - sorted_before;
        bp_context_destroy(g);
        bp_context_destroy(b);
        _mm_setcsr(csr);
        CHECK(r == 0);
        CHECK(sorted > 0);  // the frame took the sorted cells (and so the six arrays of codes)
        CHECK(pairs > (size_t)PARTNERS);
    }
    free(boxes);
#else
    printf("dense_ftz: not an x86 build: skipped\n");
#endif
    return 0;
}
#else
static int test_dense(void) {
    printf("dense: skipped (the internal queries need the static library)\n");
    return 0;
}
static int test_dense_ftz(void) {
    printf("dense_ftz: skipped (the internal queries need the static library)\n");
    return 0;
}
#endif

// Two dense clusters 10^6 apart (a shape issue #16's probes found): the grid's keys cannot
// cover that world with the cells its boxes want (2D: 2.6 million cells a side), so its cells
// grow; the spacing that bounds them from below is now the clusters' own, not the 10^6 span's
// (which gave cells of 2,700 in 2D: each cluster in one cell, n^2 / 4 candidates). Pairs equal
// sweep's, 2D and 3D; in 2D the candidates stay under n^2 / 8 (20 million of the 100 million
// before, at n = 20,000). In 3D the cells stay too coarse whatever the spacing (AUTO takes sweep
// there: test_api's auto_rule).
static int test_far_clusters(void) {
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t w = 2 * (size_t)dim, n = 20000;
        float *boxes = bpt_xrealloc(NULL, n * w * sizeof(float));
        uint64_t R = bpt_seed * 13 + (uint64_t)dim;
        // Centres over a cube of side (2 n)^(1/d) per cluster, boxes of 2: a few neighbours each.
        const double side = pow(2.0 * (double)n, 1.0 / dim);
        for (size_t i = 0; i < n; ++i)
            for (int a = 0; a < dim; ++a) {
                const double c = (i % 2 ? 1e6 : 0.0) + uni(&R, 0, side);
                boxes[i * w + a] = (float)(c - 1.0);
                boxes[i * w + dim + a] = (float)(c + 1.0);
            }
        bp_context *g = make_ctx(dim, BP_METHOD_GRID, 0), *ref = make_ctx(dim, BP_METHOD_SWEEP, 0);
        CHECK(g && ref);
        size_t pairs = 0;
        CHECK(compare_frame(g, ref, dim, boxes, n, &pairs) == 0);
        CHECK(pairs > n);
        bp_stats st;
        CHECK_OK(bp_get_stats(g, &st));
        printf("far_clusters %dD: %zu pairs, %llu checks\n", dim, pairs, (unsigned long long)st.checks);
        if (dim == 2) CHECK(st.checks < (uint64_t)n * n / 8);
        bp_context_destroy(g);
        bp_context_destroy(ref);
        free(boxes);
    }
    return 0;
}

// Boxes of 2 along a diagonal band (x = y, width 4, a few neighbours each): the spacing of the
// bulk (its span over sqrt(n)) assumes the boxes fill the square and asked cells of 27 for them
// at n = 20,000 (61 at 100,000: the grid 3x slower than sweep); boxes with an extent now take at
// most twice their own cells that way. Pairs equal sweep's, and under 30 candidates a box.
static int test_diagonal(void) {
    const size_t n = 20000;
    const double len = (double)n / 2;
    float *boxes = bpt_xrealloc(NULL, n * 4 * sizeof(float));
    uint64_t R = bpt_seed * 17 + 5;
    for (size_t i = 0; i < n; ++i) {
        const double t = uni(&R, 5, len + 5), e = uni(&R, -2, 2);
        const double c[2] = {t + e, t - e};
        for (int a = 0; a < 2; ++a) {
            boxes[i * 4 + a] = (float)(c[a] - 1.0);
            boxes[i * 4 + 2 + a] = (float)(c[a] + 1.0);
        }
    }
    bp_context *g = make_ctx(2, BP_METHOD_GRID, 0), *ref = make_ctx(2, BP_METHOD_SWEEP, 0);
    CHECK(g && ref);
    size_t pairs = 0;
    CHECK(compare_frame(g, ref, 2, boxes, n, &pairs) == 0);
    CHECK(pairs > n / 2);
    bp_stats st;
    CHECK_OK(bp_get_stats(g, &st));
    printf("diagonal: %zu pairs, %llu checks\n", pairs, (unsigned long long)st.checks);
    CHECK(st.checks < 30 * (uint64_t)n);
    bp_context_destroy(g);
    bp_context_destroy(ref);
    free(boxes);
    return 0;
}

// Long boxes of two orientations (plates 20 x 0.8, half along x, half along y): where cells as
// long as the plates would hold a few of them, every plate goes to one level of such cells (no
// level queries another: grid_fit_long); crowded ten times as much, they keep cells sized by
// their thickness, long cells for the long plates, each at least as long as a plate (grid_key:
// not 96% in cells a little shorter and 4% in cells twice as long). Pairs as the sweep's.
typedef struct cell_acc {
    float shortest, longest_ratio;  // over the drawn cells (not the window)
    float shortest_long;            // the shortest long edge of a cell 4 times longer than wide
    size_t cells;
} cell_acc;

static void cell_box(const float *lo, const float *hi, int level, void *user) {
    cell_acc *acc = user;
    if (level <= 0) return;
    const float w = hi[0] - lo[0], h = hi[1] - lo[1];
    const float s = w < h ? w : h, l = w < h ? h : w;
    if (s < acc->shortest) acc->shortest = s;
    if (s > 0 && l / s > acc->longest_ratio) acc->longest_ratio = l / s;
    if (l >= 4.0f * s && l < acc->shortest_long) acc->shortest_long = l;
    acc->cells++;
}

// n plates at `density` plates per plate-length square, in the current kernel mode: cells square
// and at least as long as a plate (square), or long cells each at least that long.
static int long_fit_case(const char *name, double density, bool square, int kernels) {
    const size_t n = 20000;
    float *boxes = bpt_xrealloc(NULL, n * 4 * sizeof(float));
    const double W = sqrt((double)n * 400.0 / density);
    uint64_t R = bpt_seed * 31 + (uint64_t)density;
    for (size_t i = 0; i < n; ++i) {
        const int ax = (int)(i & 1);
        for (int a = 0; a < 2; ++a) {
            const double h = a == ax ? 10.0 : 0.4, c = uni(&R, h, W - h);
            boxes[i * 4 + a] = (float)(c - h);
            boxes[i * 4 + 2 + a] = (float)(c + h);
        }
    }
    bp_context_def def = bp_default_context_def();
    def.method = BP_METHOD_GRID;
    def.sort_pairs = true;
    def.grid.kernels = kernels;
    bp_context *g = NULL, *ref = make_ctx(2, BP_METHOD_SWEEP, 0);
    CHECK_OK(bp_context_create(&def, &g));
    CHECK(ref);
    size_t pairs = 0;
    for (int frame = 0; frame < 3; ++frame) CHECK(compare_frame(g, ref, 2, boxes, n, &pairs) == 0);
    CHECK(pairs > n / 4);
    cell_acc acc = {INFINITY, 0.0f, INFINITY, 0};
    bp_debug_draw dd = {cell_box, &acc};
    CHECK_OK(bp_debug_draw_structure(g, &dd));
    printf("long_fit %s: %zu pairs, %zu cells drawn, shortest edge %g, longest ratio %g, shortest long cell %g\n", name,
           pairs, acc.cells, (double)acc.shortest, (double)acc.longest_ratio, (double)acc.shortest_long);
    CHECK(acc.cells > 0);
    if (square) CHECK(acc.shortest >= 20.0f && acc.longest_ratio < 1.01f);
    else CHECK(acc.longest_ratio >= 4.0f && acc.shortest_long >= 20.0f);
    bp_context_destroy(g);
    bp_context_destroy(ref);
    free(boxes);
    return 0;
}

static int test_long_fit(void) {
    CHECK(long_fit_case("sparse", 6.0, true, 0) == 0);
    CHECK(long_fit_case("dense", 60.0, false, 0) == 0);
#if defined(BP_STATIC)
    // In between (about 125 candidates a plate in square cells, like `sticks` 2D), the kernels
    // decide: the AVX-512 ones test 16 candidates a step and take the square cells; AVX2 and the
    // scalar loops keep the long ones.
    const int modes[3] = {DENSE_AUTO, DENSE_AVX2, DENSE_OFF};
    for (int m = 0; m < 3; ++m) {
        const int lanes = bp_grid_dense_lanes(modes[m]);
        char name[32];
        snprintf(name, sizeof name, "medium, %d lanes", lanes);
        CHECK(long_fit_case(name, 24.0, lanes >= 16, modes[m]) == 0);
    }
#endif
    return 0;
}

// The grid's sample statistics by selection (bp_select_double) against a sort: every k of random
// samples of 1 to 64 values, with many ties, all equal, sorted and reversed; the value and the
// partition around it (nothing larger before k, nothing smaller after).
static int test_select(void) {
    uint64_t R = bpt_seed * 977 + 1;
    for (int round = 0; round < 400; ++round) {
        const size_t n = 1 + (size_t)(round % 64);
        double v[64], ref[64];
        for (size_t i = 0; i < n; ++i) {
            R = R * 6364136223846793005ull + 1442695040888963407ull;
            const unsigned kind = (unsigned)(round / 64) % 4;
            const double x = (double)(R >> 40) / (double)(1u << 24);
            ref[i] = kind == 0 ? x : kind == 1 ? floor(x * 4.0) : kind == 2 ? 1.5 : (double)(round % 2 ? i : n - i);
        }
        for (size_t i = 0; i < n; ++i)  // a reference sort
            for (size_t j = i + 1; j < n; ++j)
                if (ref[j] < ref[i]) {
                    const double t = ref[i];
                    ref[i] = ref[j];
                    ref[j] = t;
                }
        for (size_t k = 0; k < n; ++k) {
            const size_t step = n % 37 ? 37 : 41;  // prime to n: a permutation
            for (size_t i = 0; i < n; ++i) v[i] = ref[(i * step + (size_t)round) % n];
            const double got = bp_select_double(v, n, k);
            CHECK(got == ref[k] && v[k] == ref[k]);
            for (size_t i = 0; i < k; ++i) CHECK(v[i] <= got);
            for (size_t i = k + 1; i < n; ++i) CHECK(v[i] >= got);
        }
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------

BPT_INT_CASE(test_scenes)
BPT_INT_CASE(test_random)
BPT_INT_CASE(test_degenerate)
BPT_INT_CASE(test_extreme)
BPT_INT_CASE(test_query)
BPT_INT_CASE(test_between)
BPT_INT_CASE(test_nomem)
BPT_INT_CASE(test_warm)
BPT_INT_CASE(test_stop)
BPT_INT_CASE(test_draw)
BPT_INT_CASE(test_draw_lattice)
BPT_INT_CASE(test_layouts)
BPT_INT_CASE(test_crowding)
BPT_INT_CASE(test_dense)
BPT_INT_CASE(test_dense_ftz)
BPT_INT_CASE(test_far_clusters)
BPT_INT_CASE(test_diagonal)
BPT_INT_CASE(test_long_fit)
BPT_INT_CASE(test_select)

static const bpt_case cases[] = {
    {"scenes", test_scenes_case}, {"random", test_random_case}, {"degenerate", test_degenerate_case},
    {"extreme", test_extreme_case}, {"query", test_query_case}, {"between", test_between_case},
    {"nomem", test_nomem_case}, {"warm", test_warm_case}, {"stop", test_stop_case}, {"draw", test_draw_case},
    {"draw_lattice", test_draw_lattice_case}, {"layouts", test_layouts_case}, {"crowding", test_crowding_case},
    {"dense", test_dense_case}, {"dense_ftz", test_dense_ftz_case}, {"far_clusters", test_far_clusters_case},
    {"diagonal", test_diagonal_case}, {"long_fit", test_long_fit_case}, {"select", test_select_case},
};

int main(int argc, char **argv) {
    if (!bp_method_available(BP_METHOD_GRID)) {
        fprintf(stderr, "grid not available\n");
        return 1;
    }
    return bpt_main_seed(cases, sizeof cases / sizeof cases[0], argc, argv, 1);
}
