// Bad input gives its specific status, never a crash, and leaves the context usable: NULL
// pointers, NaN and infinities in every coordinate slot, min > max, too many boxes (checked
// before any read), wrong dimension, bad definitions, queries before any call, bad query
// arguments, a callback that stops. Usage: test_errors CASE [METHOD DIM].
#include <float.h>

#include "harness.h"

static bpt_pairs got, want;

// A valid call after an error must succeed and match brute force.
static void expect_works(bp_context *ctx, int d, bpt_rng *r, size_t n) {
    bpt_boxes b = {0};
    bpt_random_boxes(r, &b, d, n, 20.0, 0.1, 2.0);
    CHECK_OK(bpt_find(ctx, d, b.v, b.n, BPT_BUFFER, &got));
    CHECK_OK(bp_validate(ctx));
    bp_context_def def;
    CHECK_OK(bp_context_get_def(ctx, &def));
    bpt_check_result("valid call after an error", &got, b.v, b.n, d, def.sort_pairs, &want);
    bpt_boxes_free(&b);
}

static bp_status find_between(bp_context *ctx, int d, const float *a, size_t na, const float *b, size_t nb) {
    bp_pairs out;
    return d == 2 ? bp_find_pairs_between2(ctx, bpt_as2(a), na, bpt_as2(b), nb, &out)
                  : bp_find_pairs_between3(ctx, bpt_as3(a), na, bpt_as3(b), nb, &out);
}

static bool keep_going(const bp_pair *p, size_t c, void *u) {
    (void)p, (void)c, (void)u;
    return true;
}

// A NULL context, boxes, output or callback to each pair-finding call of dimension D (2 or 3):
// BP_ERR_NULL. One list for both dimensions; a failure names the call it checked.
#define CHECK_NULL_ARGS(D, ctx, v, out)                                                                  \
    do {                                                                                                 \
        CHECK_ST(bp_find_pairs##D(NULL, bpt_as##D(v), 10, &(out)), BP_ERR_NULL);                         \
        CHECK_ST(bp_find_pairs##D((ctx), NULL, 10, &(out)), BP_ERR_NULL);                                \
        CHECK_ST(bp_find_pairs##D((ctx), bpt_as##D(v), 10, NULL), BP_ERR_NULL);                          \
        CHECK_ST(bp_find_pairs##D##_cb(NULL, bpt_as##D(v), 10, keep_going, NULL), BP_ERR_NULL);          \
        CHECK_ST(bp_find_pairs##D##_cb((ctx), NULL, 10, keep_going, NULL), BP_ERR_NULL);                 \
        CHECK_ST(bp_find_pairs##D##_cb((ctx), bpt_as##D(v), 10, NULL, NULL), BP_ERR_NULL);               \
        CHECK_ST(bp_find_pairs_between##D(NULL, bpt_as##D(v), 5, bpt_as##D(v), 5, &(out)), BP_ERR_NULL); \
        CHECK_ST(bp_find_pairs_between##D((ctx), bpt_as##D(v), 5, bpt_as##D(v), 5, NULL), BP_ERR_NULL);  \
    } while (0)

static void case_null_args(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(1);
    bp_context_def def = bp_default_context_def();
    bp_context *ctx = (bp_context *)(uintptr_t)8;  // create must clear it on error
    CHECK_ST(bp_context_create(NULL, &ctx), BP_ERR_NULL);
    CHECK(ctx == NULL);
    CHECK_ST(bp_context_create(&def, NULL), BP_ERR_NULL);
    for (int d = 2; d <= 3; ++d) {
        ctx = bpt_context(BP_METHOD_AUTO, d, NULL);
        bpt_boxes b = {0};
        bpt_random_boxes(&r, &b, d, 10, 5.0, 0.5, 1.0);
        bp_pairs out;
        const float *v = b.v;
        if (d == 2) {
            CHECK_NULL_ARGS(2, ctx, v, out);
        } else {
            CHECK_NULL_ARGS(3, ctx, v, out);
        }
        CHECK_ST(find_between(ctx, d, NULL, 5, v, 5), BP_ERR_NULL);
        CHECK_ST(find_between(ctx, d, v, 5, NULL, 5), BP_ERR_NULL);
        // n = 0 with NULL boxes is fine.
        CHECK_OK(bpt_find(ctx, d, NULL, 0, BPT_BUFFER, &got));
        CHECK_OK(bpt_find(ctx, d, NULL, 0, BPT_CALLBACK, &got));
        CHECK_OK(find_between(ctx, d, NULL, 0, NULL, 0));
        // Queries, statistics, definition, drawing, validation.
        CHECK_OK(bpt_find(ctx, d, v, 10, BPT_BUFFER, &got));
        float p[3] = {1, 1, 1};
        bp_indices idx;
        CHECK_ST(bp_query_box(NULL, p, p, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_box(ctx, NULL, p, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_box(ctx, p, NULL, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_box(ctx, p, p, NULL), BP_ERR_NULL);
        CHECK_ST(bp_query_sphere(NULL, p, 1.0f, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_sphere(ctx, NULL, 1.0f, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_sphere(ctx, p, 1.0f, NULL), BP_ERR_NULL);
        CHECK_ST(bp_query_point(NULL, p, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_point(ctx, NULL, &idx), BP_ERR_NULL);
        CHECK_ST(bp_query_point(ctx, p, NULL), BP_ERR_NULL);
        bp_stats st;
        CHECK_ST(bp_get_stats(NULL, &st), BP_ERR_NULL);
        CHECK_ST(bp_get_stats(ctx, NULL), BP_ERR_NULL);
        CHECK_ST(bp_context_get_def(NULL, &def), BP_ERR_NULL);
        CHECK_ST(bp_context_get_def(ctx, NULL), BP_ERR_NULL);
        bp_debug_draw dd = {NULL, NULL};
        CHECK_ST(bp_debug_draw_structure(NULL, &dd), BP_ERR_NULL);
        CHECK_ST(bp_debug_draw_structure(ctx, NULL), BP_ERR_NULL);
        CHECK_ST(bp_validate(NULL), BP_ERR_NULL);
        expect_works(ctx, d, &r, 40);
        bp_context_destroy(ctx);
        bpt_boxes_free(&b);
    }
    bp_method m = BP_METHOD_SWEEP;
    CHECK_ST(bp_method_from_name(NULL, &m), BP_ERR_NULL);
    CHECK_ST(bp_method_from_name("sweep", NULL), BP_ERR_NULL);
    CHECK_ST(bp_method_from_name("no such method", &m), BP_ERR_INVALID_ARG);
    CHECK_EQ(m, BP_METHOD_SWEEP);  // unchanged on error
}

// NaN, +inf and -inf in every coordinate slot of one box among many, in every position: the
// call fails with BP_ERR_NONFINITE, the output is empty, queries answer BP_ERR_NO_BOXES, and the
// next valid call works.
static void bad_value_case(bp_method m, int d, bp_status want_st, bool inverted) {
    bpt_rng r = bpt_rng_make(2);
    bp_context *ctx = bpt_context(m, d, NULL);
    bpt_boxes b = {0};
    const float values[3] = {NAN, INFINITY, -INFINITY};
    for (int slot = 0; slot < 2 * d; ++slot) {
        for (int vk = 0; vk < (inverted ? 1 : 3); ++vk) {
            for (int where = 0; where < 3; ++where) {
                size_t n = where == 0 ? 1 : 100;
                bpt_random_boxes(&r, &b, d, n, 20.0, 0.1, 2.0);
                size_t k = where == 0 ? 0 : where == 1 ? n - 1 : bpt_below(&r, n);
                float *box = bpt_box(&b, k);
                if (inverted) {
                    int a = slot % d;  // min above max on axis a
                    box[a] = box[d + a] + (slot < d ? 1.0f : 1e-3f);
                } else {
                    box[slot] = values[vk];
                }
                bpt_note("slot %d value %d box %zu of %zu", slot, vk, k, n);
                for (int mode = 0; mode < 3; ++mode) {
                    if (mode < 2) {
                        CHECK_ST(bpt_find(ctx, d, b.v, n, (bpt_delivery)mode, &got), want_st);
                        CHECK_EQ(got.n, 0);  // callback mode: nothing delivered before the check
                    } else {
                        CHECK_ST(find_between(ctx, d, b.v, n / 2, b.v + n / 2 * (size_t)(2 * d), n - n / 2),
                                 want_st);
                    }
                    bp_indices idx;
                    float p[3] = {0, 0, 0};
                    CHECK_ST(bp_query_point(ctx, p, &idx), BP_ERR_NO_BOXES);
                    CHECK_EQ(idx.count, 0);
                    CHECK_ST(bp_validate(ctx), BP_ERR_NO_BOXES);
                }
                expect_works(ctx, d, &r, 60);
            }
        }
    }
    bpt_boxes_free(&b);
    bp_context_destroy(ctx);
}

static void case_nonfinite(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int d = 2; d <= 3; ++d) bad_value_case(BP_METHOD_AUTO, d, BP_ERR_NONFINITE, false);
}

static void case_inverted(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int d = 2; d <= 3; ++d) bad_value_case(BP_METHOD_AUTO, d, BP_ERR_INVERTED_BOX, true);
    // NaN wins over an inverted box elsewhere? Not specified; but a box both inverted and NaN is
    // a nonfinite one.
    bp_context *ctx = bpt_context(BP_METHOD_AUTO, 2, NULL);
    bp_box2 b = {{NAN, 5.0f}, {1.0f, 1.0f}};
    bp_pairs out;
    CHECK_ST(bp_find_pairs2(ctx, &b, 1, &out), BP_ERR_NONFINITE);
    bp_context_destroy(ctx);
}

// More boxes than BP_MAX_BOXES with a pointer to one valid box: the count is checked before any
// read (under ASan, a read past the box would be caught).
static void case_too_many(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(3);
    static const size_t counts[] = {BP_MAX_BOXES + 1, BP_MAX_BOXES * 2, SIZE_MAX, SIZE_MAX / 2 + 1};
    for (int d = 2; d <= 3; ++d) {
        bp_context *ctx = bpt_context(BP_METHOD_AUTO, d, NULL);
        float one[6] = {0, 0, 0, 1, 1, 1};
        float one2[4] = {0, 0, 1, 1};
        const float *v = d == 2 ? one2 : one;
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
            size_t n = counts[k];
            bpt_note("n = %zu", n);
            CHECK_ST(bpt_find(ctx, d, v, n, BPT_BUFFER, &got), BP_ERR_TOO_MANY);
            CHECK_ST(bpt_find(ctx, d, v, n, BPT_CALLBACK, &got), BP_ERR_TOO_MANY);
            CHECK_ST(find_between(ctx, d, v, n, v, 1), BP_ERR_TOO_MANY);
            CHECK_ST(find_between(ctx, d, v, 1, v, n), BP_ERR_TOO_MANY);
        }
        // Each side within the limit, the sum over it (and a sum that wraps around).
        CHECK_ST(find_between(ctx, d, v, BP_MAX_BOXES, v, 1), BP_ERR_TOO_MANY);
        CHECK_ST(find_between(ctx, d, v, BP_MAX_BOXES / 2 + 1, v, BP_MAX_BOXES / 2), BP_ERR_TOO_MANY);
        expect_works(ctx, d, &r, 50);
        bp_context_destroy(ctx);
    }
}

static void case_dimension(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(4);
    bpt_boxes b[2] = {{0}, {0}};  // valid 2D and 3D boxes
    bpt_random_boxes(&r, &b[0], 2, 20, 5.0, 0.5, 1.0);
    bpt_random_boxes(&r, &b[1], 3, 20, 5.0, 0.5, 1.0);
    for (int d = 2; d <= 3; ++d) {
        bp_context *ctx = bpt_context(BP_METHOD_AUTO, d, NULL);
        CHECK_OK(bpt_find(ctx, d, b[d - 2].v, 10, BPT_BUFFER, &got));
        int other = 5 - d;
        const float *v = b[other - 2].v;  // well-formed boxes of the other dimension
        CHECK_ST(bpt_find(ctx, other, v, 10, BPT_BUFFER, &got), BP_ERR_DIMENSION);
        CHECK_ST(bpt_find(ctx, other, v, 10, BPT_CALLBACK, &got), BP_ERR_DIMENSION);
        CHECK_ST(find_between(ctx, other, v, 5, v, 5), BP_ERR_DIMENSION);
        CHECK_ST(bpt_find(ctx, other, NULL, 0, BPT_BUFFER, &got), BP_ERR_DIMENSION);
        bp_indices idx;
        float p[3] = {0, 0, 0};
        CHECK_ST(bp_query_point(ctx, p, &idx), BP_ERR_NO_BOXES);
        expect_works(ctx, d, &r, 30);
        bp_context_destroy(ctx);
    }
    bpt_boxes_free(&b[0]);
    bpt_boxes_free(&b[1]);
}

static void *dummy_alloc(size_t s, size_t a, void *u) {
    (void)s, (void)a, (void)u;
    return NULL;
}
static void dummy_free(void *p, size_t s, void *u) { (void)p, (void)s, (void)u; }

static void expect_bad_def(const bp_context_def *def, bp_status want, const char *what) {
    bp_context *ctx = (bp_context *)(uintptr_t)8;
    bpt_note("definition: %s", what);
    CHECK_ST(bp_context_create(def, &ctx), want);
    CHECK_MSG(ctx == NULL, "%s: *out not cleared on error", what);
}

static void case_bad_def(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_context_def def;
    static const int dims[] = {1, 4, -1, -2, 100};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; ++k) {
        def = bp_default_context_def();
        def.dimension = dims[k];
        expect_bad_def(&def, BP_ERR_INVALID_ARG, "bad dimension");
    }
    def = bp_default_context_def();
    def.method = BP_METHOD_COUNT;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "method = BP_METHOD_COUNT");
    def.method = (bp_method)-1;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "method = -1");
    def.method = (bp_method)1000;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "method = 1000");
    def = bp_default_context_def();
    def.allocator.alloc = dummy_alloc;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "alloc without free");
    def = bp_default_context_def();
    def.allocator.free = dummy_free;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "free without alloc");
    for (int d = 2; d <= 3; ++d) {
        static const int axes[] = {-2, 3, 100, -100};
        for (size_t k = 0; k < sizeof axes / sizeof axes[0]; ++k) {
            def = bp_default_context_def();
            def.dimension = d;
            def.sweep.axis = axes[k];
            expect_bad_def(&def, BP_ERR_INVALID_ARG, "sweep axis out of range");
        }
        def.sweep.axis = d;
        expect_bad_def(&def, BP_ERR_INVALID_ARG, "sweep axis == dimension");
        def.sweep.axis = d - 1;  // the last valid axis
        bp_context *ctx = NULL;
        CHECK_OK(bp_context_create(&def, &ctx));
        bp_context_destroy(ctx);
    }
    def = bp_default_context_def();
    def.grid.cell_size = -1.0f;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "negative cell size");
    def.grid.cell_size = NAN;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "NaN cell size");
    def.grid.cell_size = INFINITY;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "infinite cell size");
    def = bp_default_context_def();
    def.quadtree.levels = -1;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "negative levels");
    def = bp_default_context_def();
    def.quadtree.fixed_world = true;
    def.quadtree.world_min[0] = def.quadtree.world_min[1] = 10.0f;
    def.quadtree.world_max[0] = def.quadtree.world_max[1] = 10.0f;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "empty fixed world");
    def.quadtree.world_max[0] = NAN;
    expect_bad_def(&def, BP_ERR_NONFINITE, "NaN fixed world");
    def = bp_default_context_def();
    def.rdc.epsilon = NAN;
    expect_bad_def(&def, BP_ERR_NONFINITE, "NaN epsilon");
    // A method this build lacks.
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        def = bp_default_context_def();
        def.method = (bp_method)m;
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(&def, &ctx);
        if (bp_method_available((bp_method)m)) {
            CHECK_OK(st);
            CHECK(ctx != NULL);
            bp_context_destroy(ctx);
        } else {
            CHECK_ST(st, BP_ERR_UNSUPPORTED);
            CHECK(ctx == NULL);
        }
    }
    def = bp_default_context_def();
    def.dimension = 0;
    expect_bad_def(&def, BP_ERR_INVALID_ARG, "dimension 0");
    // Definitions not made by bp_default_context_def() (include/broadphase.h, "Definition
    // structs"): zeroed, filled with another byte, or written field by field.
    memset(&def, 0, sizeof def);
    expect_bad_def(&def, BP_ERR_DEF_NOT_INITIALISED, "zeroed definition");
    memset(&def, 0xff, sizeof def);
    expect_bad_def(&def, BP_ERR_DEF_NOT_INITIALISED, "definition of 0xff bytes");
    const bp_context_def written = {.dimension = 2, .method = BP_METHOD_SWEEP, .sweep = {.axis = -1, .coherence = true}};
    expect_bad_def(&written, BP_ERR_DEF_NOT_INITIALISED, "designated initialisers");
    CHECK(strcmp(bp_status_string(BP_ERR_DEF_NOT_INITIALISED), "unknown status") != 0);
    // What bp_context_get_def returns is a definition made so: it creates a context again.
    def = bp_default_context_def();
    def.dimension = 3;
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    bp_context_def got_def;
    CHECK_OK(bp_context_get_def(ctx, &got_def));
    bp_context_destroy(ctx);
    CHECK_OK(bp_context_create(&got_def, &ctx));
    CHECK_OK(bp_context_get_def(ctx, &got_def));
    CHECK_EQ(got_def.dimension, 3);
    bp_context_destroy(ctx);
}

static void case_no_boxes(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        if (!bp_method_available((bp_method)m)) continue;
        for (int d = 2; d <= 3; ++d) {
            bpt_note("method %s, %dD", bp_method_name((bp_method)m), d);
            bp_context *ctx = bpt_context((bp_method)m, d, NULL);
            float p[3] = {0, 0, 0}, q[3] = {1, 1, 1};
            bp_indices idx;
            CHECK_ST(bp_query_box(ctx, p, q, &idx), BP_ERR_NO_BOXES);
            CHECK_ST(bp_query_sphere(ctx, p, 1.0f, &idx), BP_ERR_NO_BOXES);
            CHECK_ST(bp_query_point(ctx, p, &idx), BP_ERR_NO_BOXES);
            bp_debug_draw dd = {NULL, NULL};
            CHECK_ST(bp_debug_draw_structure(ctx, &dd), BP_ERR_NO_BOXES);
            CHECK_ST(bp_validate(ctx), BP_ERR_NO_BOXES);
            bp_stats st;
            CHECK_OK(bp_get_stats(ctx, &st));
            CHECK_EQ(st.n, 0);
            CHECK_EQ(st.pairs, 0);
            // After an empty successful call, queries answer (nothing).
            CHECK_OK(bpt_find(ctx, d, NULL, 0, BPT_BUFFER, &got));
            CHECK_OK(bp_query_point(ctx, p, &idx));
            CHECK_EQ(idx.count, 0);
            CHECK_OK(bp_validate(ctx));
            bp_context_destroy(ctx);
        }
    }
}

static void case_bad_query(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(5);
    for (int d = 2; d <= 3; ++d) {
        bp_context *ctx = bpt_context(BP_METHOD_AUTO, d, NULL);
        bpt_boxes b = {0};
        bpt_random_boxes(&r, &b, d, 100, 10.0, 0.1, 1.0);
        CHECK_OK(bpt_find(ctx, d, b.v, b.n, BPT_BUFFER, &got));
        const float bad[3] = {NAN, INFINITY, -INFINITY};
        bp_indices idx;
        for (int a = 0; a < d; ++a) {
            for (int k = 0; k < 3; ++k) {
                float lo[3] = {0, 0, 0}, hi[3] = {5, 5, 5}, c[3] = {1, 1, 1};
                bpt_note("axis %d value %d", a, k);
                lo[a] = bad[k];
                CHECK_ST(bp_query_box(ctx, lo, hi, &idx), BP_ERR_NONFINITE);
                CHECK_EQ(idx.count, 0);
                lo[a] = 0;
                hi[a] = bad[k];
                CHECK_ST(bp_query_box(ctx, lo, hi, &idx), BP_ERR_NONFINITE);
                c[a] = bad[k];
                CHECK_ST(bp_query_sphere(ctx, c, 1.0f, &idx), BP_ERR_NONFINITE);
                CHECK_ST(bp_query_point(ctx, c, &idx), BP_ERR_NONFINITE);
            }
            float lo[3] = {0, 0, 0}, hi[3] = {5, 5, 5};
            lo[a] = 6;
            CHECK_ST(bp_query_box(ctx, lo, hi, &idx), BP_ERR_INVERTED_BOX);
            lo[a] = nextafterf(5.0f, 10.0f);
            CHECK_ST(bp_query_box(ctx, lo, hi, &idx), BP_ERR_INVERTED_BOX);
            lo[a] = 5.0f;  // a flat query box is fine
            CHECK_OK(bp_query_box(ctx, lo, hi, &idx));
        }
        float c[3] = {1, 1, 1};
        CHECK_ST(bp_query_sphere(ctx, c, -1.0f, &idx), BP_ERR_NEGATIVE_RADIUS);
        CHECK_ST(bp_query_sphere(ctx, c, -FLT_MIN, &idx), BP_ERR_NEGATIVE_RADIUS);
        CHECK_ST(bp_query_sphere(ctx, c, NAN, &idx), BP_ERR_NONFINITE);
        CHECK_ST(bp_query_sphere(ctx, c, INFINITY, &idx), BP_ERR_NONFINITE);
        CHECK_OK(bp_query_sphere(ctx, c, 0.0f, &idx));
        CHECK_OK(bp_query_sphere(ctx, c, -0.0f, &idx));
        // Queries still work after the bad ones, and so does the context.
        float lo[3] = {-1e9f, -1e9f, -1e9f}, hi[3] = {1e9f, 1e9f, 1e9f};
        CHECK_OK(bp_query_box(ctx, lo, hi, &idx));
        CHECK_EQ(idx.count, b.n);
        expect_works(ctx, d, &r, 80);
        bpt_boxes_free(&b);
        bp_context_destroy(ctx);
    }
}

static void case_statuses(int argc, char **argv) {
    (void)argc, (void)argv;
    const char *names[15];
    for (int s = 0; s >= -14; --s) {
        const char *n = bp_status_string((bp_status)s);
        CHECK_MSG(n != NULL && n[0] != '\0', "status %d has no name", s);
        CHECK_MSG(strcmp(n, "unknown status") != 0, "status %d is unnamed", s);
        for (int t = 0; t > s; --t) CHECK_MSG(strcmp(n, names[-t]) != 0, "statuses %d and %d share a name", s, t);
        names[-s] = n;
    }
    CHECK(strcmp(bp_status_string(BP_OK), "ok") == 0);
    CHECK(strcmp(bp_status_string(BP_ERR_NOMEM), "out of memory") == 0);
    CHECK(strcmp(bp_status_string((bp_status)-15), "unknown status") == 0);
    CHECK(strcmp(bp_status_string((bp_status)1), "unknown status") == 0);
    CHECK(strcmp(bp_status_string((bp_status)-1000), "unknown status") == 0);
}

// Per method: every kind of failed call in turn, each followed by a valid call that must match
// brute force (structures and temporal state survive errors), same n and varying n.
static void case_recover(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int d = bpt_dim_arg(argc, argv, 1);
    bpt_rng r = bpt_rng_make(6);
    for (int sorted = 0; sorted < 2; ++sorted) {
        bp_context_def def = bp_default_context_def();
        def.sort_pairs = sorted;
        bp_context *ctx = bpt_context(m, d, &def);
        bpt_boxes b = {0};
        for (int round = 0; round < 40; ++round) {
            size_t n = round % 3 == 0 ? 150 : 20 + bpt_below(&r, 400);
            bpt_random_boxes(&r, &b, d, n, 30.0, 0.05, 2.0);
            CHECK_OK(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got));
            bpt_note("round %d (n = %zu)", round, n);
            float *box = bpt_box(&b, bpt_below(&r, n));
            int slot = (int)bpt_below(&r, (size_t)(2 * d));
            float saved[6];
            memcpy(saved, box, (size_t)(2 * d) * sizeof(float));
            switch (round % 6) {
            case 0: box[slot] = NAN; CHECK_ST(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got), BP_ERR_NONFINITE); break;
            case 1: box[slot] = -INFINITY; CHECK_ST(bpt_find(ctx, d, b.v, n, BPT_CALLBACK, &got), BP_ERR_NONFINITE); break;
            case 2:
                box[slot % d] = box[d + slot % d] + 1.0f;
                CHECK_ST(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got), BP_ERR_INVERTED_BOX);
                break;
            case 3: CHECK_ST(bpt_find(ctx, 5 - d, b.v, n / 2, BPT_BUFFER, &got), BP_ERR_DIMENSION); break;
            case 4: CHECK_ST(bpt_find(ctx, d, b.v, BP_MAX_BOXES + 1, BPT_BUFFER, &got), BP_ERR_TOO_MANY); break;
            default: CHECK_ST(find_between(ctx, d, b.v, n / 2, NULL, 3), BP_ERR_NULL); break;
            }
            memcpy(box, saved, (size_t)(2 * d) * sizeof(float));
            // The same boxes again (coherent state from before the error), then other ones.
            CHECK_OK(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got));
            CHECK_OK(bp_validate(ctx));
            bpt_check_result("same boxes after an error", &got, b.v, n, d, sorted, &want);
            expect_works(ctx, d, &r, round % 2 ? n : 10 + bpt_below(&r, 300));
        }
        bpt_boxes_free(&b);
        bp_context_destroy(ctx);
    }
}

typedef struct stopper {
    size_t calls, stop_at, seen;
} stopper;

static bool stop_fn(const bp_pair *p, size_t c, void *u) {
    stopper *s = u;
    (void)p;
    s->calls++;
    s->seen += c;
    return s->calls < s->stop_at;
}

// A callback that returns false stops delivery with BP_ERR_STOPPED; stats count what was
// delivered; the context keeps working; queries, if they answer, answer right.
static void case_stopped(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int d = bpt_dim_arg(argc, argv, 1);
    bpt_rng r = bpt_rng_make(7);
    bpt_boxes b = {0};
    // Identical boxes: n(n-1)/2 pairs, several callback batches.
    size_t n = 200;
    bpt_boxes_resize(&b, d, n);
    for (size_t k = 0; k < n; ++k) {
        float *box = bpt_box(&b, k);
        for (int a = 0; a < d; ++a) {
            box[a] = (float)(k % 7);
            box[d + a] = 10.0f;
        }
    }
    for (int sorted = 0; sorted < 2; ++sorted) {
        for (size_t stop_at = 1; stop_at <= 3; ++stop_at) {
            bp_context_def def = bp_default_context_def();
            def.sort_pairs = sorted;
            bp_context *ctx = bpt_context(m, d, &def);
            stopper s = {0, stop_at, 0};
            bp_status st = d == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(b.v), n, stop_fn, &s)
                                  : bp_find_pairs3_cb(ctx, bpt_as3(b.v), n, stop_fn, &s);
            bpt_note("sorted %d, stop at batch %zu: %zu batches, %zu pairs", sorted, stop_at, s.calls, s.seen);
            CHECK_ST(st, BP_ERR_STOPPED);
            CHECK_EQ(s.calls, stop_at);
            bp_stats stats;
            CHECK_OK(bp_get_stats(ctx, &stats));
            CHECK_EQ(stats.pairs, s.seen);
            CHECK(s.seen < n * (n - 1) / 2);
            float p[3] = {8, 8, 8};  // inside every box
            bp_indices idx;
            bp_status qs = bp_query_point(ctx, p, &idx);
            CHECK(qs == BP_OK || qs == BP_ERR_NO_BOXES);
            if (qs == BP_OK) CHECK_EQ(idx.count, n);
            // Stopping on the last batch (nothing left to deliver) is still STOPPED.
            expect_works(ctx, d, &r, 100);
            bp_context_destroy(ctx);
        }
    }
    bpt_boxes_free(&b);
}

static const bpt_case cases[] = {
    {"null_args", case_null_args}, {"nonfinite", case_nonfinite}, {"inverted", case_inverted},
    {"too_many", case_too_many},   {"dimension", case_dimension}, {"bad_def", case_bad_def},
    {"no_boxes", case_no_boxes},   {"bad_query", case_bad_query}, {"statuses", case_statuses},
    {"recover", case_recover},     {"stopped", case_stopped},
};

BPT_MAIN(cases)
