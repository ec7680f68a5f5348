// The speed features' counters in bp_stats, each on inputs where it must take a known value: the
// sweep's axis (a line picks the axis it spreads along; hysteresis keeps the axis over a small
// change; def.sweep.axis fixes it), coherence (an identical or slightly moved frame keeps the last
// order with no full sort; a reshuffled frame gives it up and resorts; coherence off sorts every
// frame in full), the quadtree's moved boxes, and the defaults of methods without them.
// Usage: test_stats CASE [METHOD DIM [WORKERS]].
#include "harness.h"

static bpt_pairs got;

// n boxes of half extent h, centres uniform in [0, span[a]] on each axis a.
static void stats_boxes(bpt_rng *r, bpt_boxes *b, int d, size_t n, const double *span, double h) {
    bpt_boxes_resize(b, d, n);
    for (size_t k = 0; k < n; ++k) {
        double c[3], e[3];
        for (int a = 0; a < d; ++a) {
            c[a] = bpt_uniform(r, 0.0, span[a]);
            e[a] = h;
        }
        bpt_set_box(bpt_box(b, k), d, c, e);
    }
}

static bp_stats stats_run(bp_context *ctx, const bpt_boxes *b) {
    bp_stats st;
    CHECK_OK(bpt_find(ctx, b->dim, b->v, b->n, BPT_BUFFER, &got));
    CHECK_OK(bp_get_stats(ctx, &st));
    CHECK_EQ(st.n, b->n);
    CHECK_EQ(st.pairs, got.n);
    return st;
}

// A case's dimension (from its arguments), generator and boxes.
typedef struct stats_rig {
    int d;
    bpt_rng r;
    bpt_boxes b;
} stats_rig;

static stats_rig stats_rig_open(int argc, char **argv, int dim_arg, uint64_t seed) {
    stats_rig g = {bpt_dim_arg(argc, argv, dim_arg), bpt_rng_make(seed), {0}};
    return g;
}

static void stats_rig_close(stats_rig *g) { bpt_boxes_free(&g->b); }

// The sweep's axis: boxes along a line on axis a (wide there, on one coordinate across) are swept
// along a; def.sweep.axis fixes it whatever the boxes.
static void case_axis(int argc, char **argv) {
    stats_rig g = stats_rig_open(argc, argv, 0, 1);
    for (int line = 0; line < g.d; ++line) {
        bpt_note("line along axis %g.d", line);
        double span[3] = {0.0, 0.0, 0.0};
        span[line] = 4000.0;
        stats_boxes(&g.r, &g.b, g.d, 2000, span, 1.0);
        bp_context *ctx = bpt_context(BP_METHOD_SWEEP, g.d, NULL);
        bp_stats st = stats_run(ctx, &g.b);
        CHECK_EQ(st.sweep_axis, line);
        CHECK_EQ(st.method, BP_METHOD_SWEEP);
        bp_context_destroy(ctx);
        // Fixed: the next axis, although the boxes do not spread along it (every pair a candidate).
        bp_context_def def = bp_default_context_def();
        def.sweep.axis = (line + 1) % g.d;
        ctx = bpt_context(BP_METHOD_SWEEP, g.d, &def);
        st = stats_run(ctx, &g.b);
        CHECK_EQ(st.sweep_axis, (line + 1) % g.d);
        CHECK_EQ(st.checks, g.b.n * (g.b.n - 1) / 2);
        bp_context_destroy(ctx);
    }
    stats_rig_close(&g);
}

// Hysteresis: the axis chosen stays while another promises only a little less (spreads 100 and 90:
// ratio 0.9), and changes when another promises at most 3/4 of its candidates (100 and 50).
static void case_hysteresis(int argc, char **argv) {
    stats_rig g = stats_rig_open(argc, argv, 0, 2);
    bp_context *ctx = bpt_context(BP_METHOD_SWEEP, g.d, NULL);
    static const double spans[][3] = {{1000, 900, 900}, {900, 1000, 900}, {500, 1000, 900}, {1000, 500, 900}};
    static const int want[] = {0, 0, 1, 0};
    for (size_t f = 0; f < sizeof want / sizeof want[0]; ++f) {
        bpt_note("frame %zu", f);
        stats_boxes(&g.r, &g.b, g.d, 4000, spans[f], 1.0);
        const bp_stats st = stats_run(ctx, &g.b);
        CHECK_EQ(st.sweep_axis, want[f]);
    }
    bp_context_destroy(ctx);
    stats_rig_close(&g);
}

// Coherence of sweep, RDC and the quadtree over a run of frames: the first sorts in full; an
// identical frame and a frame of small moves keep the order (no full sort, nothing resorted);
// a reshuffled frame tries the order, gives it up and sorts in full (a resort); and with the
// sweep's coherence off every frame sorts in full without trying.
static void case_coherence(int argc, char **argv) {
    stats_rig g = stats_rig_open(argc, argv, 1, 3);
    const bp_method m = bpt_method_arg(argc, argv, 0);
    const int workers = argc > 2 ? atoi(argv[2]) : 1;
    bp_context_def def = bp_default_context_def();
    def.workers = workers;
    def.parallel_min = workers > 1 ? 64 : 0;  // the parallel sorts on a small input
    def.grid.layout = BP_GRID_LAYOUT_SORTED;  // the table layout sorts nothing
    bp_context *ctx = bpt_context(m, g.d, &def);
    const size_t n = 3000;
    // Sparse enough along x for RDC's root to cut there (one sort of the whole set per call).
    const double span[3] = {3000.0, 3000.0, 3000.0};
    stats_boxes(&g.r, &g.b, g.d, n, span, 1.0);

    bpt_note("first frame");
    bp_stats st = stats_run(ctx, &g.b);
    CHECK_EQ(st.method, m);
    CHECK(!st.coherent);
    CHECK_EQ(st.full_sorts, 1);
    CHECK_EQ(st.resorts, 0);
    if (m == BP_METHOD_QUADTREE || m == BP_METHOD_GRID) CHECK_EQ(st.moved, n);
    CHECK_EQ(st.sweep_axis, m == BP_METHOD_SWEEP ? st.sweep_axis : -1);
    if (m == BP_METHOD_SWEEP) CHECK(st.sweep_axis >= 0 && st.sweep_axis < g.d);

    bpt_note("identical frame");
    st = stats_run(ctx, &g.b);
    CHECK(st.coherent);
    CHECK_EQ(st.full_sorts, 1);
    CHECK_EQ(st.resorts, 0);
    if (m == BP_METHOD_QUADTREE || m == BP_METHOD_GRID) CHECK_EQ(st.moved, 0);

    bpt_note("small moves");
    bpt_jiggle(&g.r, &g.b, 0.05);
    st = stats_run(ctx, &g.b);
    CHECK(st.coherent);
    CHECK_EQ(st.full_sorts, 1);
    CHECK_EQ(st.resorts, 0);
    if (m == BP_METHOD_QUADTREE || m == BP_METHOD_GRID) CHECK(st.moved < n / 10);

    bpt_note("reshuffled frame");
    stats_boxes(&g.r, &g.b, g.d, n, span, 1.0);
    st = stats_run(ctx, &g.b);
    CHECK(!st.coherent);
    CHECK_EQ(st.full_sorts, 2);
    CHECK_EQ(st.resorts, 1);
    if (m == BP_METHOD_QUADTREE || m == BP_METHOD_GRID) CHECK(st.moved > n / 2 && st.moved <= n);

    // Another count of boxes: last order is of no use, so a full sort without a try.
    bpt_note("fewer boxes");
    g.b.n = n / 2;
    st = stats_run(ctx, &g.b);
    CHECK(!st.coherent);
    CHECK_EQ(st.full_sorts, 3);
    CHECK_EQ(st.resorts, 1);
    bp_context_destroy(ctx);

    if (m == BP_METHOD_SWEEP) {
        bpt_note("coherence off");
        def.sweep.coherence = false;
        ctx = bpt_context(m, g.d, &def);
        for (uint64_t f = 1; f <= 3; ++f) {
            st = stats_run(ctx, &g.b);
            CHECK(!st.coherent);
            CHECK_EQ(st.full_sorts, f);
            CHECK_EQ(st.resorts, 0);
        }
        bp_context_destroy(ctx);
    }
    stats_rig_close(&g);
}

// The quadtree's moved boxes: k pairs of far-apart boxes swap places (the bounds, and so the
// mapping, stay): each pair moved both or neither (the same cell), so the count is even, at
// most 2k, and not 0 (opposite corners share no cell below the root, where few boxes sit).
static void case_moved(int argc, char **argv) {
    stats_rig g = stats_rig_open(argc, argv, 0, 4);
    bp_context *ctx = bpt_context(BP_METHOD_QUADTREE, g.d, NULL);
    const size_t n = 4000, k = 20;
    const double span[3] = {1000.0, 1000.0, 1000.0};
    stats_boxes(&g.r, &g.b, g.d, n, span, 1.0);
    // Boxes in two opposite corners to swap: the first k inside [0, 100]^g.d, the last k inside
    // [900, 1000]^g.d.
    for (size_t i = 0; i < k; ++i) {
        double c[3], h[3] = {1.0, 1.0, 1.0}, e[3];
        for (int a = 0; a < g.d; ++a) {
            c[a] = bpt_uniform(&g.r, 10.0, 90.0);
            e[a] = 1000.0 - c[a];
        }
        bpt_set_box(bpt_box(&g.b, i), g.d, c, h);
        bpt_set_box(bpt_box(&g.b, n - 1 - i), g.d, e, h);
    }
    bp_stats st = stats_run(ctx, &g.b);
    CHECK_EQ(st.moved, n);
    const size_t w = (size_t)(2 * g.d);
    for (size_t i = 0; i < k; ++i) {
        float t[6];
        memcpy(t, bpt_box(&g.b, i), w * sizeof *t);
        memcpy(bpt_box(&g.b, i), bpt_box(&g.b, n - 1 - i), w * sizeof *t);
        memcpy(bpt_box(&g.b, n - 1 - i), t, w * sizeof *t);
    }
    st = stats_run(ctx, &g.b);
    CHECK(st.coherent);
    CHECK_EQ(st.full_sorts, 1);
    CHECK_MSG(st.moved > 0 && st.moved <= 2 * k && st.moved % 2 == 0, "moved %zu", st.moved);
    bp_context_destroy(ctx);
    stats_rig_close(&g);
}

// Methods without a feature leave its default, and so does a call that failed before any method
// ran (the counters describe the method that ran the last call).
static void case_defaults(int argc, char **argv) {
    stats_rig g = stats_rig_open(argc, argv, 0, 5);
    const double span[3] = {300.0, 300.0, 300.0};
    stats_boxes(&g.r, &g.b, g.d, 500, span, 1.0);
    for (int m = BP_METHOD_BRUTE; m < BP_METHOD_COUNT; ++m) {
        if (!bp_method_available((bp_method)m)) continue;
        bpt_note("method %s", bp_method_name((bp_method)m));
        bp_context *ctx = bpt_context((bp_method)m, g.d, NULL);
        bp_stats st = stats_run(ctx, &g.b);
        st = stats_run(ctx, &g.b);
        if (m != BP_METHOD_SWEEP) CHECK_EQ(st.sweep_axis, -1);
        if (m == BP_METHOD_BRUTE) {
            CHECK(!st.coherent);
            CHECK_EQ(st.full_sorts, 0);
        }
        if (m != BP_METHOD_QUADTREE) CHECK_EQ(st.moved, 0);
        if (m == BP_METHOD_SWEEP) {
            // A failed call: no method ran, every counter at its default.
            float bad[6] = {NAN, 0, 0, 1, 1, 1};
            CHECK_ST(bpt_find(ctx, g.d, bad, 1, BPT_BUFFER, &got), BP_ERR_NONFINITE);
            CHECK_OK(bp_get_stats(ctx, &st));
            CHECK_EQ(st.sweep_axis, -1);
            CHECK(!st.coherent);
            CHECK_EQ(st.full_sorts, 0);
            CHECK_EQ(st.resorts, 0);
        }
        bp_context_destroy(ctx);
    }
    stats_rig_close(&g);
}

static const bpt_case cases[] = {
    {"axis", case_axis},   {"hysteresis", case_hysteresis}, {"coherence", case_coherence},
    {"moved", case_moved}, {"defaults", case_defaults},
};

int main(int argc, char **argv) {
    const int rc = bpt_main(cases, sizeof cases / sizeof cases[0], argc, argv);
    bpt_pairs_free(&got);
    return rc;
}
