// The API around pair finding: statistics, sorted output, callback batches, validation, debug
// drawing, method names, the definition, destroy(NULL), the version, and the list of methods
// the suite covers. Usage: test_api CASE [METHOD DIM | METHOD_LIST].
#include "harness.h"

static bpt_pairs got;

// A case's method and dimension (its arguments), its generator and its boxes.
typedef struct rig {
    bp_method m;
    int d;
    bpt_rng r;
    bpt_boxes b;
} rig;

static rig rig_open(int argc, char **argv, uint64_t salt) {
    rig g = {.m = bpt_method_arg(argc, argv, 0)};
    g.d = bpt_dim_arg(argc, argv, 1);
    g.r = bpt_rng_make(salt);
    return g;
}

static void rig_close(rig *g) { bpt_boxes_free(&g->b); }

// The same pairs in the same order.
static void expect_same_list(const bpt_pairs *want, const bpt_pairs *have) {
    CHECK_EQ(want->n, have->n);
    for (size_t k = 0; k < have->n; ++k) CHECK(want->k[k] == have->k[k]);
}

static void case_stats(int argc, char **argv) {
    rig g = rig_open(argc, argv, 1);
    bp_context *ctx = bpt_context(g.m, g.d, NULL);
    bp_stats st;
    static const size_t ns[] = {0, 1, 2, 10, 64, 65, 500, 3000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k) {
        size_t n = ns[k];
        bpt_note("n = %zu", n);
        bpt_random_boxes(&g.r, &g.b, g.d, n, 10.0 * sqrt((double)n + 1.0), 0.1, 2.0);
        CHECK_OK(bpt_find(ctx, g.d, g.b.v, n, BPT_BUFFER, &got));
        CHECK_OK(bp_get_stats(ctx, &st));
        CHECK_EQ(st.n, n);
        CHECK_EQ(st.pairs, got.n);
        // Every pair needs a test; brute force tests every pair. (A structure may rule out all
        // candidates without a single test, so checks can be 0 with n >= 2 and no pairs.)
        if (st.pairs > 0 || (n >= 2 && st.method == BP_METHOD_BRUTE))
            CHECK_MSG(st.checks > 0, "no checks counted for n = %zu", n);
        CHECK_MSG(st.checks >= st.pairs, "fewer checks (%llu) than pairs (%llu)", (unsigned long long)st.checks,
                  (unsigned long long)st.pairs);
        if (st.method == BP_METHOD_BRUTE) CHECK_EQ(st.checks, n * (n - (n > 0)) / 2);
        if (g.m != BP_METHOD_AUTO) CHECK_EQ(st.method, g.m);
        CHECK(st.method != BP_METHOD_AUTO && bp_method_available(st.method));
        CHECK(st.bytes > 0);
        // Callback delivery counts the same pairs.
        CHECK_OK(bpt_find(ctx, g.d, g.b.v, n, BPT_CALLBACK, &got));
        CHECK_OK(bp_get_stats(ctx, &st));
        CHECK_EQ(st.pairs, got.n);
        // Bipartite: checks at most na * nb for brute force.
        CHECK_OK(bpt_find_between(ctx, g.d, g.b.v, n / 2, bpt_box(&g.b, n / 2), n - n / 2, &got));
        CHECK_OK(bp_get_stats(ctx, &st));
        CHECK_EQ(st.pairs, got.n);
        CHECK_EQ(st.n, n);
        if (st.method == BP_METHOD_BRUTE) CHECK(st.checks <= (uint64_t)(n / 2) * (uint64_t)(n - n / 2));
    }
    // A failed call leaves no pairs in the statistics.
    float bad[6] = {NAN, 0, 0, 1, 1, 1};
    CHECK_ST(bpt_find(ctx, g.d, bad, 1, BPT_BUFFER, &got), BP_ERR_NONFINITE);
    CHECK_OK(bp_get_stats(ctx, &st));
    CHECK_EQ(st.pairs, 0);
    bp_context_destroy(ctx);
    rig_close(&g);
}

// sort_pairs: ascending (i, j) whatever the method, in buffer and callback mode (the batches
// concatenated are sorted too), and the same set as unsorted output.
static void case_sorted(int argc, char **argv) {
    rig g = rig_open(argc, argv, 2);
    bp_context_def def = bp_default_context_def();
    def.sort_pairs = true;
    bp_context *ctx = bpt_context(g.m, g.d, &def);
    bp_context *plain = bpt_context(g.m, g.d, NULL);
    bpt_pairs unsorted = {0};
    for (int t = 0; t < 15; ++t) {
        size_t n = bpt_below(&g.r, 2000);
        bpt_random_boxes(&g.r, &g.b, g.d, n, 12.0 * sqrt((double)n + 1.0), 0.1, 4.0);
        for (int mode = 0; mode < 2; ++mode) {
            bpt_note("trial %d, n = %zu, mode %d", t, n, mode);
            CHECK_OK(bpt_find(ctx, g.d, g.b.v, n, (bpt_delivery)mode, &got));
            CHECK_MSG(bpt_pairs_sorted(&got), "pairs not sorted");
            CHECK_OK(bpt_find(plain, g.d, g.b.v, n, (bpt_delivery)mode, &unsorted));
            bpt_pairs_sort(&unsorted);
            expect_same_list(&unsorted, &got);
        }
    }
    bp_context_destroy(ctx);
    bp_context_destroy(plain);
    rig_close(&g);
    bpt_pairs_free(&unsorted);
}

// Callback batches, concatenated, equal the buffer result (same order for sorted output; the
// same set otherwise); every batch non-empty; many batches for a dense scene.
static void case_batches(int argc, char **argv) {
    rig g = rig_open(argc, argv, 3);
    bpt_pairs buf = {0};
    for (int sorted = 0; sorted < 2; ++sorted) {
        bp_context_def def = bp_default_context_def();
        def.sort_pairs = sorted;
        bp_context *ctx = bpt_context(g.m, g.d, &def);
        for (int t = 0; t < 6; ++t) {
            size_t n = t < 3 ? 1500 : 400;
            bpt_random_boxes(&g.r, &g.b, g.d, n, t < 3 ? 20.0 : 400.0, 0.5, 3.0);  // dense, then sparse
            bpt_note("sorted %d trial %d", sorted, t);
            CHECK_OK(bpt_find(ctx, g.d, g.b.v, n, BPT_BUFFER, &buf));
            bpt_collect c = {&got, 0, 0};
            got.n = 0;
            CHECK_OK(g.d == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(g.b.v), n, bpt_collect_fn, &c)
                              : bp_find_pairs3_cb(ctx, bpt_as3(g.b.v), n, bpt_collect_fn, &c));
            if (t < 3 && g.d == 2) CHECK_MSG(c.batches > 1, "a dense scene came in %zu batch(es)", c.batches);
            if (!sorted) {
                bpt_pairs_sort(&got);
                bpt_pairs_sort(&buf);
            }
            expect_same_list(&buf, &got);
        }
        bp_context_destroy(ctx);
    }
    rig_close(&g);
    bpt_pairs_free(&buf);
}

// Debug drawing runs for every method after every kind of call (a NULL box callback too).
static void case_debug_draw(int argc, char **argv) {
    rig g = rig_open(argc, argv, 4);
    bp_context *ctx = bpt_context(g.m, g.d, NULL);
    static const size_t ns[] = {0, 1, 30, 800};
    size_t total = 0;
    for (size_t k = 0; k < 4; ++k) {
        bpt_random_boxes(&g.r, &g.b, g.d, ns[k], 50.0, 0.1, 3.0);
        for (int call = 0; call < 2; ++call) {
            bpt_note("n = %zu, call %d", ns[k], call);
            const size_t n = g.b.n;
            if (call == 0) CHECK_OK(bpt_find(ctx, g.d, g.b.v, n, BPT_BUFFER, &got));
            else CHECK_OK(bpt_find_between(ctx, g.d, g.b.v, n / 2, bpt_box(&g.b, n / 2), n - n / 2, &got));
            bpt_draw c = {.dim = g.d};
            bp_debug_draw dd = {bpt_draw_box, &c};
            CHECK_OK(bp_debug_draw_structure(ctx, &dd));
            CHECK_MSG(!c.bad, "debug draw gave an inverted or non-finite box or a negative level");
            total += c.boxes;
            bp_debug_draw none = {NULL, NULL};
            CHECK_OK(bp_debug_draw_structure(ctx, &none));
            CHECK_OK(bp_validate(ctx));
        }
    }
    printf("%zu boxes drawn\n", total);
    bp_context_destroy(ctx);
    rig_close(&g);
}

static void case_names(int argc, char **argv) {
    (void)argc, (void)argv;
    static const char *const expect[] = {"auto", "brute", "sweep", "grid", "quadtree", "rdc"};
    CHECK_EQ(sizeof expect / sizeof expect[0], BP_METHOD_COUNT);
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        const char *name = bp_method_name((bp_method)m);
        CHECK(name != NULL);
        CHECK_MSG(strcmp(name, expect[m]) == 0, "method %d is named '%s'", m, name);
        bp_method back = BP_METHOD_COUNT;
        CHECK_OK(bp_method_from_name(name, &back));
        CHECK_EQ(back, m);
    }
    CHECK(bp_method_name(BP_METHOD_COUNT) == NULL);
    CHECK(bp_method_name((bp_method)-1) == NULL);
    bp_method mm = BP_METHOD_GRID;
    CHECK_ST(bp_method_from_name("", &mm), BP_ERR_INVALID_ARG);
    CHECK_ST(bp_method_from_name("Sweep", &mm), BP_ERR_INVALID_ARG);
    CHECK_ST(bp_method_from_name("sweep ", &mm), BP_ERR_INVALID_ARG);
    CHECK_EQ(mm, BP_METHOD_GRID);
    CHECK(bp_method_available(BP_METHOD_AUTO));
    CHECK(bp_method_available(BP_METHOD_BRUTE));
    CHECK(bp_method_available(BP_METHOD_SWEEP));
    CHECK(!bp_method_available(BP_METHOD_COUNT));
    CHECK(!bp_method_available((bp_method)-1));
}

static void *my_alloc(size_t s, size_t a, void *u) {
    bpt_alloc *al = u;
    return bpt_alloc_fn(s, a, al);
}

// The definition comes back as given, defaults resolved.
static void case_def(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_context_def def = bp_default_context_def();
    CHECK_EQ(def.dimension, 2);
    CHECK_EQ(def.method, BP_METHOD_AUTO);
    CHECK(!def.sort_pairs);
    CHECK_EQ(def.sweep.axis, -1);
    CHECK(def.sweep.coherence);
    CHECK(def.allocator.alloc == NULL && def.allocator.free == NULL);
    def.dimension = 3;
    def.method = BP_METHOD_SWEEP;
    def.sort_pairs = true;
    def.sweep.axis = 2;
    def.sweep.coherence = false;
    def.rdc.threshold = 7;
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    def.allocator.alloc = my_alloc;
    def.allocator.free = bpt_free_fn;
    def.allocator.user = &al;
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    bp_context_def back;
    memset(&back, 0xff, sizeof back);
    CHECK_OK(bp_context_get_def(ctx, &back));
    CHECK_EQ(back.dimension, 3);
    CHECK_EQ(back.method, BP_METHOD_SWEEP);
    CHECK(back.sort_pairs);
    CHECK_EQ(back.sweep.axis, 2);
    CHECK(!back.sweep.coherence);
    CHECK_EQ(back.rdc.threshold, 7);
    CHECK(back.allocator.alloc == my_alloc && back.allocator.free == bpt_free_fn && back.allocator.user == &al);
    CHECK(al.live_blocks > 0);
    bp_context_destroy(ctx);
    CHECK_EQ(al.live_blocks, 0);
    // Default allocator: the resolved definition names a real one.
    def = bp_default_context_def();
    CHECK_OK(bp_context_create(&def, &ctx));
    CHECK_OK(bp_context_get_def(ctx, &back));
    CHECK(back.allocator.alloc != NULL && back.allocator.free != NULL);
    bp_context_destroy(ctx);
}

// AUTO's rule (docs/methods.md): brute force for a handful of boxes, the grid from 400 boxes
// (2D) or 2,048 (3D) spread over two axes or more (or alike on every axis, however large the
// boxes: SIZES), in 3D from 1,000 once a call found 2 pairs a box or more (DENSE: the first
// frame, after a sparse case, still sweep), sort-and-sweep for boxes along a line or below the
// grid's size, and for boxes of several sizes (MIXED: 1% of them 25x larger) below 4,096 (2D)
// or 8,192 (3D), in 2D and 3D;
// and it does not flip between frames on the same scene. When the grid is not
// built, sweep instead. Sweep too for two dense clusters 10^6 apart (the grid's cells would be
// far coarser than its boxes want there, and crowded), but the grid for boxes spread thinly over
// the same world (coarse cells, nearly empty).
static void case_auto_rule(int argc, char **argv) {
    (void)argc;
    (void)argv;
    const bp_method grid = bp_method_available(BP_METHOD_GRID) ? BP_METHOD_GRID : BP_METHOD_SWEEP;
    bpt_rng r = bpt_rng_make(11);
    bpt_boxes b = {0};
    bp_stats st;
    for (int d = 2; d <= 3; ++d) {
        bp_context *ctx = bpt_context(BP_METHOD_AUTO, d, NULL);
        enum { SPREAD, LINE, FAR, THIN, TUBE, MIXED, SIZES, DENSE };
        static const char *const shape[] = {"", ", on a line", ", two clusters far apart", ", thinly over 10^6",
                                            ", along the diagonal", ", 1% of them 25x larger",
                                            ", sizes over 2.5 decades in a small world", ", crowded (3D: about 10 pairs a box)"};
        struct {
            size_t n;
            int shape;
            bp_method want;
        } cases[] = {{10, SPREAD, BP_METHOD_BRUTE},       {300, SPREAD, BP_METHOD_SWEEP},
                     {450, SPREAD, d == 2 ? grid : BP_METHOD_SWEEP},
                     {1000, SPREAD, d == 2 ? grid : BP_METHOD_SWEEP}, {1200, DENSE, grid}, {5000, SPREAD, grid},
                     {1000, MIXED, BP_METHOD_SWEEP}, {5000, MIXED, d == 2 ? grid : BP_METHOD_SWEEP},
                     {3000, SIZES, grid},
                     {5000, LINE, d == 2 ? BP_METHOD_SWEEP : grid}, {5000, THIN, grid},
                     {20000, TUBE, d == 2 ? grid : BP_METHOD_SWEEP}, {5000, FAR, BP_METHOD_SWEEP}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            const size_t n = cases[c].n;
            bpt_note("%dD, n = %zu%s", d, n, shape[cases[c].shape]);
            // Unit-size boxes spread over a world of 10 sqrt(n) per axis: centres' spread about
            // 3 sqrt(n) extents, far past AUTO's threshold from a few hundred boxes. FAR: half
            // of them in a cube of side (2 n)^(1/d) (a few neighbours each), half in one 10^6
            // further on every axis; THIN: over 10^6 per axis (nearly no pairs); TUBE: centres
            // on the diagonal x = y (= z), length n / 2, 4 across (3D: the grid's cells coarse
            // for the span and crowded along the tube, which only its candidates show).
            // MIXED: every 100th box 25x larger (mean extent about 2.5, largest 25-75).
            // SIZES: extents 0.2 to 60, log-uniform (mean about 10.5, largest under 6x that), in
            // a world of side 60: the centres' deviation is under 2 mean extents on every axis.
            // DENSE: a world of side sqrt(n) (2D) or (2 n)^(1/3) (3D: about 10 pairs a box),
            // the centres' spread still over 3 extents.
            const double side = cases[c].shape == FAR ? pow(2.0 * (double)n, 1.0 / d)
                                : cases[c].shape == DENSE ? (d == 2 ? sqrt((double)n) : cbrt(2.0 * (double)n))
                                : cases[c].shape == THIN ? 1e6
                                : cases[c].shape == SIZES ? 60.0
                                                         : 10.0 * sqrt((double)n);
            bpt_random_boxes(&r, &b, d, n, side, 0.5, 1.5);
            for (size_t k = 0; k < n; ++k) {
                float *box = bpt_box(&b, k);
                if (cases[c].shape == LINE) {
                    box[0] = 0.0f;
                    box[d] = 1.0f;
                }
                if ((cases[c].shape == MIXED && k % 100 == 0) || cases[c].shape == SIZES) {
                    const double e = cases[c].shape == SIZES ? 0.2 * exp(bpt_uniform(&r, 0.0, log(300.0))) : 0.0;
                    for (int a = 0; a < d; ++a) {
                        const double m = 0.5 * ((double)box[a] + box[d + a]);
                        const double h = cases[c].shape == MIXED ? 12.5 * (box[d + a] - box[a]) : 0.5 * e;
                        box[a] = (float)(m - h);
                        box[d + a] = (float)(m + h);
                    }
                }
                if (cases[c].shape == FAR && k % 2)
                    for (int a = 0; a < 2 * d; ++a) box[a] += 1e6f;
                if (cases[c].shape == TUBE) {
                    const double t = bpt_uniform(&r, 0.0, (double)n / 2);
                    for (int a = 0; a < d; ++a) {
                        const double c0 = t + bpt_uniform(&r, -2.0, 2.0), h = 0.5 * (box[d + a] - box[a]);
                        box[a] = (float)(c0 - h);
                        box[d + a] = (float)(c0 + h);
                    }
                }
            }
            for (int frame = 0; frame < 3; ++frame) {
                CHECK_OK(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got));
                CHECK_OK(bp_get_stats(ctx, &st));
                // Coming from the grid, AUTO reads the grid's last geometry (and, TUBE, candidates):
                // one frame late.
                if ((cases[c].shape == FAR || cases[c].shape == TUBE) && frame == 0) continue;
                // DENSE in 3D: the first frame still has the last case's pairs a box.
                const bp_method want = cases[c].shape == DENSE && d == 3 && frame == 0 ? BP_METHOD_SWEEP : cases[c].want;
                CHECK_MSG(st.method == want, "AUTO chose %s, want %s (frame %d, %zu pairs)", bp_method_name(st.method),
                          bp_method_name(want), frame, (size_t)st.pairs);
                bpt_jiggle(&r, &b, 0.1);
            }
        }
        // Away from the grid because its cells were too coarse (FAR, the last case), AUTO asks
        // again every 16 frames, not every frame: back on the grid within 16 once the boxes
        // spread, and there it stays.
        if (grid == BP_METHOD_GRID) {
            const size_t n = 5000;
            bpt_note("%dD, n = %zu, spread again after two clusters far apart", d, n);
            bpt_random_boxes(&r, &b, d, n, 10.0 * sqrt((double)n), 0.5, 1.5);
            int back = -1;
            for (int frame = 0; frame < 20; ++frame) {
                CHECK_OK(bpt_find(ctx, d, b.v, n, BPT_BUFFER, &got));
                CHECK_OK(bp_get_stats(ctx, &st));
                if (frame == 0) CHECK_MSG(st.method == BP_METHOD_SWEEP, "AUTO asked again at once");
                if (back < 0 && st.method == BP_METHOD_GRID) back = frame;
                if (back >= 0) CHECK_MSG(st.method == BP_METHOD_GRID, "frame %d: %s after the grid", frame,
                                         bp_method_name(st.method));
                bpt_jiggle(&r, &b, 0.1);
            }
            CHECK_MSG(back > 0 && back <= 16, "back on the grid at frame %d", back);
        }
        bp_context_destroy(ctx);
    }
    bpt_boxes_free(&b);
}

static void case_destroy_null(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_context_destroy(NULL);
}

static void case_version(int argc, char **argv) {
    (void)argc, (void)argv;
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", BP_VERSION_MAJOR, BP_VERSION_MINOR, BP_VERSION_PATCH);
    CHECK_MSG(strcmp(v, BP_VERSION_STRING) == 0, "BP_VERSION_STRING %s != %s", BP_VERSION_STRING, v);
}

// The methods the build registered tests for (argv[0], comma-separated) are exactly the
// methods bp_method_available() reports: none untested, none tested that is missing.
static void case_method_list(int argc, char **argv) {
    CHECK_MSG(argc >= 1, "missing method list");
    char list[256];
    snprintf(list, sizeof list, ",%s,", argv[0]);
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        char item[64];
        snprintf(item, sizeof item, ",%s,", bp_method_name((bp_method)m));
        bool listed = strstr(list, item) != NULL;
        bool available = bp_method_available((bp_method)m);
        CHECK_MSG(listed == available, "method %s is %s but the test list (%s) %s it: re-run cmake or fix tests/lib.cmake",
                  bp_method_name((bp_method)m), available ? "available" : "not available", argv[0],
                  listed ? "has" : "lacks");
    }
}

static const bpt_case cases[] = {
    {"stats", case_stats},   {"sorted", case_sorted},         {"batches", case_batches},
    {"debug_draw", case_debug_draw}, {"names", case_names},   {"def", case_def},
    {"destroy_null", case_destroy_null}, {"auto_rule", case_auto_rule}, {"version", case_version}, {"method_list", case_method_list},
};

BPT_MAIN(cases)
