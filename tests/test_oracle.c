// Every method against brute force, pair set for pair set: seeded random inputs (n from 0 to
// 5,000, box sizes from points to larger than the world, several frames per context with small
// moves and with n changing), every delivery mode, and the degenerate inputs that break sweeps,
// grids and trees: exact touching, identical boxes, points, everything on one line, huge
// coordinates, one box covering all; long thin boxes, sizes over decades, giants among specks. Usage: test_oracle CASE METHOD DIM.
#include <float.h>

#include "harness.h"

typedef struct oracle {
    bp_method method;
    int dim;
    bp_grid_layout layout;  // for the grid (and AUTO choosing it): both layouts must agree
    bpt_pairs got, want;
    bpt_boxes boxes;
} oracle;

static void oracle_init(oracle *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->method = bpt_method_arg(argc, argv, 0);
    o->dim = bpt_dim_arg(argc, argv, 1);
}

static void oracle_free(oracle *o) {
    bpt_pairs_free(&o->got);
    bpt_pairs_free(&o->want);
    bpt_boxes_free(&o->boxes);
}

// One call on ctx in the given mode, checked against brute force, plus the method's own
// invariants and the statistics.
static void oracle_frame(oracle *o, bp_context *ctx, const float *v, size_t n, bpt_delivery mode, bool sorted,
                         const char *what) {
    CHECK_OK(bpt_find(ctx, o->dim, v, n, mode, &o->got));
    bp_stats st;
    CHECK_OK(bp_get_stats(ctx, &st));
    CHECK_EQ(st.n, n);
    CHECK_EQ(st.pairs, o->got.n);
    CHECK_OK(bp_validate(ctx));
    bpt_check_result(what, &o->got, v, n, o->dim, sorted, &o->want);
}

static bp_context *oracle_context(const oracle *o, bool sorted, int axis, bool coherence) {
    bp_context_def def = bp_default_context_def();
    def.sort_pairs = sorted;
    def.sweep.axis = axis;
    def.sweep.coherence = coherence;
    def.grid.layout = o->layout;
    return bpt_context(o->method, o->dim, &def);
}

// Runs the boxes through every delivery mode (buffer / callback, sorted or not), twice on the
// same context (the second call reuses the first one's structure), then once after a small move.
// The grid's layouts take turns: automatic, sorted, table, automatic.
static void oracle_all_modes(oracle *o, const char *label) {
    bpt_rng r = bpt_rng_make(bpt_hash(label));
    for (int mode = 0; mode < 4; ++mode) {
        bool sorted = mode & 1;
        bpt_delivery dl = mode & 2 ? BPT_CALLBACK : BPT_BUFFER;
        o->layout = (bp_grid_layout)(mode % 3);
        bpt_note("%s: n = %zu, %s, %s, grid layout %d", label, o->boxes.n, sorted ? "sorted" : "unsorted",
                 dl == BPT_CALLBACK ? "callback" : "buffer", (int)o->layout);
        bp_context *ctx = oracle_context(o, sorted, -1, true);
        for (int rep = 0; rep < 2; ++rep) oracle_frame(o, ctx, o->boxes.v, o->boxes.n, dl, sorted, label);
        // A copy moved a little (the original stays exact for the next mode).
        bpt_boxes moved = {0};
        bpt_boxes_resize(&moved, o->dim, o->boxes.n);
        if (o->boxes.n) memcpy(moved.v, o->boxes.v, o->boxes.n * (size_t)(2 * o->dim) * sizeof(float));
        bpt_jiggle(&r, &moved, 0.01);
        oracle_frame(o, ctx, moved.v, moved.n, dl, sorted, label);
        bpt_boxes_free(&moved);
        bp_context_destroy(ctx);
    }
    o->layout = BP_GRID_LAYOUT_AUTO;
}

// ---------------------------------------------------------------------------------------------
// Random inputs

typedef struct size_class {
    double hmin, hmax;  // half extents, log-uniform; hmin 0: some points
} size_class;

// World of side 100: from points and specks to boxes far larger than the world.
static const size_class size_classes[] = {
    {0.0, 0.05}, {0.5, 2.0}, {1.0, 10.0}, {5.0, 60.0}, {50.0, 500.0}, {0.0, 100.0}, {0.001, 30.0},
};
#define SIZE_CLASSES (sizeof size_classes / sizeof size_classes[0])

static const double offsets[] = {0.0, -50.0, -1.0e4, 1.0e6, -3.0e7};

static void random_scene(bpt_rng *r, bpt_boxes *b, int d, size_t n, const size_class *sc, double off) {
    bpt_random_boxes(r, b, d, n, 100.0, sc->hmin, sc->hmax);
    for (size_t k = 0; k < n * (size_t)(2 * d); ++k) b->v[k] = (float)((double)b->v[k] + off);
    // Offsetting in float may have rounded a min past its max? No: both round the same way
    // (monotone), so min <= max still holds.
}

// Grows or shrinks the set: new boxes come from the same distribution, removed ones from the end.
static void change_n(bpt_rng *r, bpt_boxes *b, size_t n, const size_class *sc, double off) {
    size_t old = b->n;
    if (n <= old) {
        b->n = n;
        return;
    }
    bpt_boxes extra = {0};
    random_scene(r, &extra, b->dim, n - old, sc, off);
    bpt_boxes_resize(b, b->dim, n);
    memcpy(bpt_box(b, old), extra.v, (n - old) * (size_t)(2 * b->dim) * sizeof(float));
    bpt_boxes_free(&extra);
}

// A random n from 0 to 5,000, mostly small: many distinct shapes per second.
static size_t random_n_any(bpt_rng *r) {
    double u = bpt_u01(r);
    if (u < 0.55) return bpt_below(r, 33);
    if (u < 0.92) return 33 + bpt_below(r, 300);
    if (u < 0.97) return 333 + bpt_below(r, 600);
    return 933 + bpt_below(r, 4068);
}

// Keeps the oracle's quadratic work bounded for large boxes (also under the sanitizers).
static size_t random_n_cap(size_t n, const size_class *sc) {
    // Boxes as big as the world: n^2 / 2 pairs, a few hundred boxes suffice.
    if (n > 150 && sc->hmax > 30.0) return 150 + n % 150;
    // Thousands of boxes up to a tenth of the world are ~10^5 pairs; larger ones, millions.
    if (n > 933 && sc->hmax > 10.0) return 333 + n % 600;
    return n;
}

// Thousands of random inputs, each with its own context, options and a few frames.
static void case_random(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(1);
    const int trials = 700;
    for (int t = 0; t < trials; ++t) {
        const size_t n_any = random_n_any(&r);
        const size_class *sc = &size_classes[bpt_below(&r, SIZE_CLASSES)];
        size_t n = random_n_cap(n_any, sc);
        double off = offsets[bpt_below(&r, sizeof offsets / sizeof offsets[0])];
        bool sorted = bpt_coin(&r, 0.5);
        bpt_delivery dl = bpt_coin(&r, 0.5) ? BPT_CALLBACK : BPT_BUFFER;
        int axis = (int)bpt_below(&r, (size_t)o.dim + 1) - 1;
        bool coherence = bpt_coin(&r, 0.8);
        int frames = 1 + (int)bpt_below(&r, 4);
        o.layout = (bp_grid_layout)bpt_below(&r, 3);
        random_scene(&r, &o.boxes, o.dim, n, sc, off);
        bp_context *ctx = oracle_context(&o, sorted, axis, coherence);
        for (int f = 0; f < frames; ++f) {
            bpt_note("trial %d frame %d: n = %zu, sizes [%g, %g], offset %g, %s, %s, axis %d, grid layout %d", t, f,
                     o.boxes.n, sc->hmin, sc->hmax, off, sorted ? "sorted" : "unsorted",
                     dl == BPT_CALLBACK ? "callback" : "buffer", axis, (int)o.layout);
            oracle_frame(&o, ctx, o.boxes.v, o.boxes.n, dl, sorted, "random");
            bpt_jiggle(&r, &o.boxes, sc->hmax * 0.1 + 0.01);
            if (bpt_coin(&r, 0.25)) change_n(&r, &o.boxes, random_n_cap(random_n_any(&r), sc), sc, off);
        }
        bp_context_destroy(ctx);
    }
    oracle_free(&o);
}

// A few large inputs (up to 5,000 boxes) in each size class.
static void case_large(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(2);
    static const size_t sizes[] = {1200, 5000};
    static const size_class classes[] = {{0.05, 0.6}, {0.0, 3.0}, {0.5, 40.0}};
    for (size_t s = 0; s < 2; ++s) {
        for (size_t c = 0; c < 3; ++c) {
            if (s == 1 && c != 1) continue;  // 5,000 boxes once: the oracle is quadratic
            // World side ~ sqrt(n) keeps the pair count moderate whatever n.
            size_t n = sizes[s];
            bpt_random_boxes(&r, &o.boxes, o.dim, n, 100.0 * (o.dim == 2 ? 1.0 : 0.3) * sqrt((double)n / 1000.0),
                             classes[c].hmin, classes[c].hmax);
            bool sorted = c == 1;
            bpt_delivery dl = s == 1 ? BPT_CALLBACK : BPT_BUFFER;
            o.layout = (bp_grid_layout)((s * 3 + c) % 3);
            bp_context *ctx = oracle_context(&o, sorted, -1, true);
            for (int f = 0; f < 2; ++f) {
                bpt_note("large: n = %zu, class %zu, frame %d", n, c, f);
                oracle_frame(&o, ctx, o.boxes.v, o.boxes.n, dl, sorted, "large");
                bpt_jiggle(&r, &o.boxes, 0.2);
            }
            bp_context_destroy(ctx);
        }
    }
    oracle_free(&o);
}

// One context for many frames: small moves (temporal coherence), n changing now and then,
// delivery mode changing between frames, empty frames in between.
static void case_frames(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(3);
    static const size_class sc = {0.2, 3.0};
    for (int sorted = 0; sorted < 2; ++sorted) {
        o.layout = sorted ? BP_GRID_LAYOUT_TABLE : BP_GRID_LAYOUT_AUTO;
        bp_context *ctx = oracle_context(&o, sorted, -1, true);
        random_scene(&r, &o.boxes, o.dim, 400, &sc, 0.0);
        for (int f = 0; f < 120; ++f) {
            bpt_delivery dl = (f / 7) % 2 ? BPT_CALLBACK : BPT_BUFFER;
            bpt_note("frames: frame %d, n = %zu, %s", f, o.boxes.n, sorted ? "sorted" : "unsorted");
            oracle_frame(&o, ctx, o.boxes.v, o.boxes.n, dl, sorted, "frames");
            bpt_jiggle(&r, &o.boxes, f % 20 == 19 ? 30.0 : 0.3);  // now and then a big shake
            if (f % 10 == 9) change_n(&r, &o.boxes, bpt_below(&r, 700), &sc, 0.0);
            if (f % 37 == 36) o.boxes.n = 0;
        }
        bp_context_destroy(ctx);
    }
    oracle_free(&o);
}

// Objects swap places (index order no longer matches spatial order) and the set is reversed:
// coherence must not assume an index keeps its neighbours.
static void case_shuffle(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(4);
    static const size_class sc = {0.1, 2.0};
    bp_context *ctx = oracle_context(&o, false, -1, true);
    random_scene(&r, &o.boxes, o.dim, 300, &sc, 0.0);
    const size_t s = (size_t)(2 * o.dim);
    for (int f = 0; f < 40; ++f) {
        bpt_note("shuffle: frame %d", f);
        oracle_frame(&o, ctx, o.boxes.v, o.boxes.n, BPT_BUFFER, false, "shuffle");
        size_t swaps = f % 2 ? 3 : o.boxes.n;
        for (size_t k = 0; k < swaps; ++k) {
            size_t i = bpt_below(&r, o.boxes.n), j = bpt_below(&r, o.boxes.n);
            float tmp[6];
            memcpy(tmp, bpt_box(&o.boxes, i), s * sizeof(float));
            memcpy(bpt_box(&o.boxes, i), bpt_box(&o.boxes, j), s * sizeof(float));
            memcpy(bpt_box(&o.boxes, j), tmp, s * sizeof(float));
        }
    }
    bp_context_destroy(ctx);
    oracle_free(&o);
}

// ---------------------------------------------------------------------------------------------
// Degenerate inputs

// A lattice of unit boxes [i, i+1] x [j, j+1] (x [k, k+1]): every neighbour touches exactly on a
// face, an edge or a corner, in exact float equality; plus half-offset boxes at the corners.
static void case_touching(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    const int side = o.dim == 2 ? 12 : 6;
    size_t cells = (size_t)side * (size_t)side * (o.dim == 3 ? (size_t)side : 1);
    bpt_boxes_resize(&o.boxes, o.dim, 2 * cells);
    size_t n = 0;
    for (size_t c = 0; c < cells; ++c) {
        int idx[3] = {(int)(c % (size_t)side), (int)(c / (size_t)side % (size_t)side), (int)(c / (size_t)(side * side))};
        float *b = bpt_box(&o.boxes, n++);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = (float)idx[a];
            b[o.dim + a] = (float)(idx[a] + 1);
        }
    }
    // Boxes of side 0.5 touching a lattice corner from inside a cell, and unit boxes shifted by
    // 0.5 (overlapping two rows, touching two more).
    for (size_t c = 0; c < cells; c += 3) {
        float *b = bpt_box(&o.boxes, n++);
        int idx[3] = {(int)(c % (size_t)side), (int)(c / (size_t)side % (size_t)side), (int)(c / (size_t)(side * side))};
        for (int a = 0; a < o.dim; ++a) {
            float base = (float)idx[a] + (c % 2 ? 0.5f : 0.0f);
            b[a] = base + 0.5f;
            b[o.dim + a] = base + 1.0f;
        }
    }
    o.boxes.n = n;
    oracle_all_modes(&o, "touching lattice");
    // Negative lattice, and one of tiny floats (subnormal steps apart).
    for (size_t k = 0; k < n * (size_t)(2 * o.dim); ++k) o.boxes.v[k] = -o.boxes.v[k] - 1.0f;
    for (size_t k = 0; k < n; ++k) {  // negation swapped min and max
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            float t = b[a];
            b[a] = b[o.dim + a];
            b[o.dim + a] = t;
        }
    }
    oracle_all_modes(&o, "negative touching lattice");
    for (size_t k = 0; k < n * (size_t)(2 * o.dim); ++k) o.boxes.v[k] *= 1e-40f;
    for (size_t k = 0; k < n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) CHECK(b[a] <= b[o.dim + a]);
    }
    oracle_all_modes(&o, "subnormal touching lattice");
    oracle_free(&o);
}

static void case_identical(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_boxes_resize(&o.boxes, o.dim, 300);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = 3.0f;
            b[o.dim + a] = 7.5f;
        }
    }
    oracle_all_modes(&o, "identical boxes");
    // Two groups of identical boxes that just touch.
    for (size_t k = 0; k < o.boxes.n; k += 2) {
        float *b = bpt_box(&o.boxes, k);
        b[0] = 7.5f;
        b[o.dim] = 9.0f;
    }
    oracle_all_modes(&o, "two identical groups touching");
    oracle_free(&o);
}

// Crowded cells under every explicit option of the method: n identical points at the origin,
// n identical boxes, n points in one tiny square, for n across the pair buffer's and the
// callback chunk's sizes (1,024 pairs first, then doubling; 4,096 a batch), so that a hot loop
// filling the sink to its last slot is caught (issue #17: 160 points, grid, table layout).
static bool crowded_option(const oracle *o, int k, bp_context_def *def) {
    *def = bp_default_context_def();
    switch (o->method) {
    case BP_METHOD_AUTO:
    case BP_METHOD_GRID: {
        static const float cells[3] = {0.0f, 1e-3f, 1e3f};
        if (k >= 9) return false;
        def->grid.layout = (bp_grid_layout)(k % 3);
        def->grid.cell_size = cells[k / 3];
        return true;
    }
    case BP_METHOD_SWEEP:
        if (k >= 2 * (o->dim + 1)) return false;
        def->sweep.axis = k / 2 - 1;
        def->sweep.coherence = k % 2 == 0;
        return true;
    case BP_METHOD_QUADTREE: {
        static const int levels[3] = {0, 1, 10};
        if (k >= 12) return false;
        def->quadtree.levels = levels[k % 3];
        def->quadtree.loose = (k / 3) % 2;
        def->quadtree.fixed_world = k >= 6;
        for (int a = 0; a < 3; ++a) {
            def->quadtree.world_min[a] = -1.0f;
            def->quadtree.world_max[a] = 2.0f;
        }
        return true;
    }
    case BP_METHOD_RDC: {
        // (A nonzero epsilon changes the pairs on purpose: test_rdc checks it.)
        static const uint32_t thresholds[4] = {0, 1, 2, 1000};
        if (k >= 4) return false;
        def->rdc.threshold = thresholds[k];
        return true;
    }
    default:
        return k == 0;
    }
}

static void case_crowded(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(41);
    static const size_t ns[] = {0, 1, 2, 3, 5, 8, 17, 33, 45, 46, 47, 64, 65, 90, 91, 92, 128, 129,
                                 159, 160, 161, 181, 182, 183, 256, 257, 300};
    const size_t count = sizeof ns / sizeof ns[0];
    for (int shape = 0; shape < 3; ++shape) {
        for (int k = 0;; ++k) {
            bp_context_def def;
            if (!crowded_option(&o, k, &def)) break;
            for (int mode = 0; mode < 4; ++mode) {
                const bool sorted = mode & 1;
                const bpt_delivery dl = mode & 2 ? BPT_CALLBACK : BPT_BUFFER;
                def.sort_pairs = sorted;
                bp_context *ctx = bpt_context(o.method, o.dim, &def);
                // One context for every n: a warm buffer of the previous size, as in an engine.
                for (size_t q = 0; q < count; ++q) {
                    const size_t n = ns[(q * 7 + (size_t)k) % count];
                    bpt_boxes_resize(&o.boxes, o.dim, n);
                    for (size_t b = 0; b < n; ++b) {
                        float *box = bpt_box(&o.boxes, b);
                        for (int a = 0; a < o.dim; ++a) {
                            const float p = shape == 2 ? (float)bpt_uniform(&r, 0.0, 1e-4) : 0.0f;
                            box[a] = p;
                            box[o.dim + a] = shape == 1 ? 1.0f : p;
                        }
                    }
                    bpt_note("crowded: shape %d, option set %d, n = %zu, %s, %s", shape, k, n,
                             sorted ? "sorted" : "unsorted", dl == BPT_CALLBACK ? "callback" : "buffer");
                    oracle_frame(&o, ctx, o.boxes.v, n, dl, sorted, "crowded");
                }
                bp_context_destroy(ctx);
            }
        }
    }
    oracle_free(&o);
}

// Huge extents (issue #17): a box's cost must not grow with the cells it spans. The issue's
// input (ten boxes from y = -27.74 to 1e30 over x in [-27.75, 0], and a point below them) and
// the same tall boxes among 200 small ones, along every axis, with tops from 1e30 to FLT_MAX
// changing between frames, under every explicit option of the method (fixed cells of 1e-3 and
// 1e3, levels, layouts). The work is counted, not timed: the statistics' checks (a grid's
// searched rows included) stay within brute force's, n (n - 1) / 2, plus one per box. Before
// the fix the grid searched every row of its finest level that a tall box spans: 16 million
// rows in the input with cell 4.25 (0.3 s for a frame of eleven boxes).
static void case_extent(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(43);
    static const float tops[3] = {1e30f, 3e38f, FLT_MAX};
    for (int small = 0; small < 2; ++small) {
        for (int axis = 0; axis < o.dim; ++axis) {
            for (int k = 0;; ++k) {
                bp_context_def def;
                if (!crowded_option(&o, k, &def)) break;
                bp_context *ctx = bpt_context(o.method, o.dim, &def);
                const size_t tall = 10, n = tall + 1 + (small ? 200 : 0);
                bpt_boxes_resize(&o.boxes, o.dim, n);
                for (int frame = 0; frame < 4; ++frame) {
                    for (size_t b = 0; b < tall; ++b) {
                        float *box = bpt_box(&o.boxes, b);
                        for (int a = 0; a < o.dim; ++a) {
                            box[a] = a == 1 ? -27.74f : -27.75f;
                            box[o.dim + a] = 0.0f;
                        }
                        box[o.dim + axis] = tops[(b + (size_t)frame) % 3];
                    }
                    float *pt = bpt_box(&o.boxes, tall);
                    for (int a = 0; a < 2 * o.dim; ++a) pt[a] = -27.75f;
                    if (frame % 2) pt[1] = pt[o.dim + 1] = -27.74f;  // now on the tall boxes' edge
                    for (size_t b = tall + 1; b < n; ++b) {
                        float *box = bpt_box(&o.boxes, b);
                        for (int a = 0; a < o.dim; ++a) {
                            box[a] = (float)bpt_uniform(&r, -60.0, 30.0);
                            box[o.dim + a] = box[a] + (float)bpt_uniform(&r, 0.0, 2.0);
                        }
                    }
                    bpt_note("extent: %zu boxes, tall along axis %d, option set %d, frame %d", n, axis, k, frame);
                    oracle_frame(&o, ctx, o.boxes.v, n, BPT_BUFFER, false, "extent");
                    bp_stats st;
                    CHECK_OK(bp_get_stats(ctx, &st));
                    const uint64_t bound = (uint64_t)n * (n - 1) / 2 + n;
                    CHECK_MSG(st.checks <= bound, "%llu checks for %zu boxes (brute force: %llu)",
                              (unsigned long long)st.checks, n, (unsigned long long)(n * (n - 1) / 2));
                }
                bp_context_destroy(ctx);
            }
        }
    }
    oracle_free(&o);
}

// Points (min == max): on a coarse lattice so that many coincide, plus points on box faces.
static void case_points(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(5);
    bpt_boxes_resize(&o.boxes, o.dim, 500);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        bool point = k % 5 != 0;
        for (int a = 0; a < o.dim; ++a) {
            float p = (float)bpt_below(&r, 8);
            b[a] = p;
            b[o.dim + a] = point ? p : p + (float)bpt_below(&r, 3);
        }
    }
    oracle_all_modes(&o, "points on a lattice");
    oracle_free(&o);
}

// Everything on one value of one axis (the sort-and-sweep adversary), boxes and segments.
static void line_case(int argc, char **argv, int axis) {
    oracle o;
    oracle_init(&o, argc, argv);
    if (axis >= o.dim) {
        oracle_free(&o);
        return;
    }
    bpt_rng r = bpt_rng_make(6 + (uint64_t)axis);
    for (int variant = 0; variant < 2; ++variant) {
        bpt_random_boxes(&r, &o.boxes, o.dim, 800, 400.0, 0.0, 1.5);
        for (size_t k = 0; k < o.boxes.n; ++k) {
            float *b = bpt_box(&o.boxes, k);
            b[axis] = variant ? 50.0f : 49.0f;  // segments (a zero extent) or unit-wide boxes
            b[o.dim + axis] = 50.0f;
        }
        oracle_all_modes(&o, variant ? "everything on one line (zero width)" : "everything on one line");
    }
    oracle_free(&o);
}

static void case_line_x(int argc, char **argv) { line_case(argc, argv, 0); }
static void case_line_y(int argc, char **argv) { line_case(argc, argv, 1); }
static void case_line_z(int argc, char **argv) { line_case(argc, argv, 2); }

// Large coordinates: around +-1e7 (float spacing 1), and near +-FLT_MAX, where a naive
// float-to-int conversion or an extent computed in float overflows.
static void case_huge(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(8);
    static const double centres[] = {1.0e7, -1.0e7};
    for (int c = 0; c < 2; ++c) {
        bpt_random_boxes(&r, &o.boxes, o.dim, 400, 200.0, 0.0, 8.0);
        for (size_t k = 0; k < o.boxes.n * (size_t)(2 * o.dim); ++k)
            o.boxes.v[k] = (float)((double)o.boxes.v[k] + centres[c]);
        oracle_all_modes(&o, c ? "around -1e7" : "around +1e7");
    }
    // Both at once: two far clusters, nothing between.
    bpt_random_boxes(&r, &o.boxes, o.dim, 400, 200.0, 0.0, 8.0);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        double shift = k % 2 ? 1.0e7 : -1.0e7;
        for (int a = 0; a < 2 * o.dim; ++a) b[a] = (float)((double)b[a] + shift);
    }
    oracle_all_modes(&o, "clusters at -1e7 and +1e7");

    // Near FLT_MAX: boxes spanning half the float range, points at the extremes, one box
    // [-FLT_MAX, FLT_MAX] on every axis, and ordinary boxes near the origin.
    bpt_boxes_resize(&o.boxes, o.dim, 300);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            float lo, hi;
            switch (bpt_below(&r, 6)) {
            case 0: lo = -FLT_MAX; hi = -FLT_MAX * (float)bpt_uniform(&r, 0.1, 1.0); break;
            case 1: lo = FLT_MAX * (float)bpt_uniform(&r, 0.1, 1.0); hi = FLT_MAX; break;
            case 2: lo = hi = bpt_coin(&r, 0.5) ? FLT_MAX : -FLT_MAX; break;
            case 3: lo = -FLT_MAX * (float)bpt_u01(&r); hi = FLT_MAX * (float)bpt_u01(&r); break;
            default: lo = (float)bpt_uniform(&r, -10.0, 10.0); hi = lo + (float)bpt_uniform(&r, 0.0, 5.0); break;
            }
            b[a] = lo;
            b[o.dim + a] = hi;
        }
    }
    float *all = bpt_box(&o.boxes, 17);
    for (int a = 0; a < o.dim; ++a) {
        all[a] = -FLT_MAX;
        all[o.dim + a] = FLT_MAX;
    }
    oracle_all_modes(&o, "near FLT_MAX");
    oracle_free(&o);
}

// One box covering everything among ordinary ones (it pairs with all of them), in several
// positions of the index order.
static void case_cover(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(9);
    bpt_random_boxes(&r, &o.boxes, o.dim, 600, 100.0, 0.1, 1.0);
    size_t where[3] = {0, 299, 599};
    for (int k = 0; k < 3; ++k) {
        float *b = bpt_box(&o.boxes, where[k]);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = k == 1 ? -1.0f : -1e6f;
            b[o.dim + a] = k == 1 ? 101.0f : 1e6f;
        }
    }
    oracle_all_modes(&o, "boxes covering everything");
    oracle_free(&o);
}

// n = 0, 1, 2, 3 (all combinations of touching / apart / inside), including a context that sees
// n = 0 first and one that goes 5 -> 0 -> 1 -> 5.
static void case_tiny(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(10);
    for (int t = 0; t < 300; ++t) {
        size_t n = bpt_below(&r, 4);
        bpt_boxes_resize(&o.boxes, o.dim, n);
        for (size_t k = 0; k < n; ++k) {
            float *b = bpt_box(&o.boxes, k);
            for (int a = 0; a < o.dim; ++a) {
                b[a] = (float)bpt_below(&r, 4);
                b[o.dim + a] = b[a] + (float)bpt_below(&r, 3);
            }
        }
        bpt_note("tiny trial %d, n = %zu", t, n);
        oracle_all_modes(&o, "tiny");
    }
    bp_context *ctx = oracle_context(&o, false, -1, true);
    static const size_t ns[] = {0, 0, 5, 0, 1, 5, 5, 2, 0};
    bpt_random_boxes(&r, &o.boxes, o.dim, 5, 4.0, 0.5, 2.0);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k) {
        bpt_note("tiny sequence step %zu, n = %zu", k, ns[k]);
        oracle_frame(&o, ctx, o.boxes.v, ns[k], k % 2 ? BPT_CALLBACK : BPT_BUFFER, false, "tiny sequence");
    }
    // NULL boxes with n = 0 is valid.
    CHECK_OK(bpt_find(ctx, o.dim, NULL, 0, BPT_BUFFER, &o.got));
    CHECK_EQ(o.got.n, 0);
    bp_context_destroy(ctx);
    oracle_free(&o);
}

// Everything in one spot: n points at the same place, then n tiny boxes around it.
static void case_one_spot(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_boxes_resize(&o.boxes, o.dim, 250);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < 2 * o.dim; ++a) b[a] = 5.0f;
    }
    oracle_all_modes(&o, "all boxes at one point");
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = k % 3 ? 5.0f : nextafterf(5.0f, 0.0f);
            b[o.dim + a] = k % 2 ? 5.0f : nextafterf(5.0f, 10.0f);
        }
    }
    oracle_all_modes(&o, "all boxes within one ulp of a point");
    // All at the origin: -0.0 and +0.0 must be the same coordinate.
    for (size_t k = 0; k < o.boxes.n; ++k) {
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = k % 2 ? -0.0f : 0.0f;
            b[o.dim + a] = k % 4 < 2 ? -0.0f : 0.0f;
        }
    }
    oracle_all_modes(&o, "signed zeros");
    oracle_free(&o);
}

// Sizes spanning twelve orders of magnitude in one set (hard for grids and trees).
static void case_mixed_scale(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(11);
    bpt_random_boxes(&r, &o.boxes, o.dim, 800, 1000.0, 1e-6, 1e6);
    oracle_all_modes(&o, "sizes from 1e-6 to 1e6");
    oracle_free(&o);
}

// ---------------------------------------------------------------------------------------------
// Bipartite

static void between_check(oracle *o, bp_context *ctx, const bpt_boxes *a, const bpt_boxes *b, bool sorted,
                          const char *what) {
    CHECK_OK(bpt_find_between(ctx, o->dim, a->v, a->n, b->v, b->n, &o->got));
    bp_stats st;
    CHECK_OK(bp_get_stats(ctx, &st));
    CHECK_EQ(st.pairs, o->got.n);
    CHECK_EQ(st.n, a->n + b->n);
    CHECK_OK(bp_validate(ctx));
    for (size_t k = 0; k < o->got.n; ++k) {
        uint32_t i = (uint32_t)(o->got.k[k] >> 32), j = (uint32_t)o->got.k[k];
        CHECK_MSG(i < a->n && j < b->n, "%s: pair (%u, %u) out of range (na %zu, nb %zu)", what, i, j, a->n, b->n);
    }
    if (sorted) CHECK_MSG(bpt_pairs_sorted(&o->got), "%s: sort_pairs set but not sorted", what);
    bpt_pairs_sort(&o->got);
    bpt_brute_between(a->v, a->n, b->v, b->n, o->dim, &o->want);
    BPT_EXPECT_PAIRS(what, &o->want, &o->got, a->v, b->v, o->dim);
}

static void case_between(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(12);
    bpt_boxes a = {0}, b = {0};
    for (int t = 0; t < 200; ++t) {
        size_t na = bpt_coin(&r, 0.15) ? 0 : random_n_any(&r) / 2, nb = bpt_coin(&r, 0.15) ? 0 : random_n_any(&r);
        const size_class *sc = &size_classes[bpt_below(&r, SIZE_CLASSES)];
        na = random_n_cap(na, sc);
        nb = random_n_cap(nb, sc);
        bool sorted = bpt_coin(&r, 0.5);
        random_scene(&r, &a, o.dim, na, sc, 0.0);
        random_scene(&r, &b, o.dim, nb, sc, 0.0);
        bp_context *ctx = oracle_context(&o, sorted, -1, true);
        for (int f = 0; f < 3; ++f) {
            bpt_note("between trial %d frame %d: na = %zu, nb = %zu, sizes [%g, %g]", t, f, a.n, b.n, sc->hmin,
                     sc->hmax);
            between_check(&o, ctx, &a, &b, sorted, "between");
            bpt_jiggle(&r, &a, 0.5);
            bpt_jiggle(&r, &b, 0.5);
            // An all-pairs call in between must not disturb the next bipartite one.
            if (f == 1) oracle_frame(&o, ctx, a.v, a.n, BPT_BUFFER, sorted, "all pairs between bipartite calls");
        }
        bp_context_destroy(ctx);
    }
    // A and B the same set: every box meets its own copy.
    random_scene(&r, &a, o.dim, 200, &size_classes[1], 0.0);
    bp_context *ctx = oracle_context(&o, false, -1, true);
    bpt_note("between: A == B");
    between_check(&o, ctx, &a, &a, false, "between A == B");
    CHECK(o.got.n >= a.n);
    // NULL with a zero count on either side.
    CHECK_OK(bpt_find_between(ctx, o.dim, NULL, 0, a.v, a.n, &o.got));
    CHECK_EQ(o.got.n, 0);
    CHECK_OK(bpt_find_between(ctx, o.dim, a.v, a.n, NULL, 0, &o.got));
    CHECK_EQ(o.got.n, 0);
    bp_context_destroy(ctx);
    bpt_boxes_free(&a);
    bpt_boxes_free(&b);
    oracle_free(&o);
}

// Dense output: over a million pairs. From 2^20 pairs on the previous call (BP_STREAM_PAIRS in
// src/context.c) buffer mode stages pairs and streams whole lines to the pair buffer; every
// delivery mode runs twice on a context (the second call is streamed), then bipartite calls,
// then allocation refused inside the streamed path: BP_ERR_NOMEM, the same call succeeds once
// allowed again, and nothing leaks.
#define DENSE_STREAM_PAIRS ((size_t)1 << 20)

static void case_dense(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(31);
    const size_t n = 2000;
    // Half extents 25-40% of the world: about three boxes in four overlap in 2D, two in three in
    // 3D (over 1.3 million pairs), so a method reporting every pair would fail.
    bpt_random_boxes(&r, &o.boxes, o.dim, n, 100.0, 25.0, 40.0);
    oracle_all_modes(&o, "dense");
    CHECK_MSG(o.got.n >= DENSE_STREAM_PAIRS, "dense: %zu pairs, too few to reach the streamed path", o.got.n);
    CHECK_MSG(o.got.n < n * (n - 1) / 2 * 9 / 10, "dense: %zu pairs, nearly all: too easy", o.got.n);

    // Bipartite, twice on one context (the second streamed), unsorted then sorted.
    bpt_boxes a = {0}, b = {0};
    bpt_random_boxes(&r, &a, o.dim, 1200, 100.0, 25.0, 40.0);
    bpt_random_boxes(&r, &b, o.dim, 1800, 100.0, 25.0, 40.0);
    for (int sorted = 0; sorted < 2; ++sorted) {
        bp_context *ctx = oracle_context(&o, sorted, -1, true);
        for (int rep = 0; rep < 2; ++rep) {
            bpt_note("dense between: %s, call %d", sorted ? "sorted" : "unsorted", rep);
            between_check(&o, ctx, &a, &b, sorted, "dense between");
        }
        CHECK_MSG(o.got.n >= DENSE_STREAM_PAIRS, "dense between: %zu pairs, too few", o.got.n);
        bp_context_destroy(ctx);
    }
    bpt_boxes_free(&a);
    bpt_boxes_free(&b);

    // Out of memory in the streamed path: its staging chunk (first streamed call), then the pair
    // buffer's growth while streaming (more pairs than the last call).
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    bp_context_def def = bp_default_context_def();
    def.dimension = o.dim;
    def.method = o.method;
    def.allocator = bpt_allocator(&al);
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    bpt_boxes more = {0};
    bpt_random_boxes(&r, &more, o.dim, 3000, 100.0, 25.0, 40.0);
    const bpt_boxes *steps[3] = {&o.boxes, &o.boxes, &more};
    for (int k = 0; k < 3; ++k) {
        for (size_t fail = 1;; ++fail) {
            bpt_note("dense out of memory: call %d, refusing allocation %zu after it starts", k, fail);
            al.fail_at = al.allocs + fail;
            const size_t failures = al.failures;
            bp_status st = bpt_find(ctx, o.dim, steps[k]->v, steps[k]->n, BPT_BUFFER, &o.got);
            al.fail_at = 0;
            bpt_check_bytes(ctx, &al);
            if (al.failures == failures) {
                CHECK_OK(st);
                break;
            }
            CHECK_MSG(st == BP_ERR_NOMEM, "refused allocation gave %d (%s)", (int)st, bp_status_string(st));
            CHECK_OK(bpt_find(ctx, o.dim, steps[k]->v, steps[k]->n, BPT_BUFFER, &o.got));
            bpt_check_bytes(ctx, &al);
            bpt_check_result("dense after out of memory", &o.got, steps[k]->v, steps[k]->n, o.dim, false, &o.want);
        }
    }
    bp_context_destroy(ctx);
    CHECK_MSG(al.live_blocks == 0 && al.live_bytes == 0, "dense: %zu blocks leaked", al.live_blocks);
    bpt_boxes_free(&more);
    oracle_free(&o);
}

// ---------------------------------------------------------------------------------------------
// Shapes a grid sized by a typical extent finds hard (issue #16): long thin boxes, sizes over
// decades, a few boxes as large as the world among tiny ones. Each set runs through every
// delivery mode, then for frames on one context with small moves (the methods' coherence).

static void shapes_frames(oracle *o, bpt_rng *r, const char *label, double step) {
    bp_context *ctx = oracle_context(o, false, -1, true);
    for (int f = 0; f < 6; ++f) {
        bpt_note("%s: n = %zu, frame %d", label, o->boxes.n, f);
        oracle_frame(o, ctx, o->boxes.v, o->boxes.n, f % 2 ? BPT_CALLBACK : BPT_BUFFER, false, label);
        bpt_jiggle(r, &o->boxes, step);
    }
    bp_context_destroy(ctx);
}

// Sticks: one axis 50 to 100 times the others. `axis` < 0: each stick's long axis drawn at
// random (the `sticks` scene); otherwise all along that axis.
static void sticks_scene(bpt_rng *r, bpt_boxes *b, int d, size_t n, int axis) {
    const double world = d == 2 ? 100.0 * sqrt((double)n / 1000.0) : 30.0 * cbrt((double)n / 1000.0);
    bpt_boxes_resize(b, d, n);
    for (size_t k = 0; k < n; ++k) {
        const int ax = axis >= 0 ? axis : (int)bpt_below(r, (uint64_t)d);
        const double thin = bpt_uniform(r, 0.05, 0.2);
        double c[3], h[3];
        for (int a = 0; a < d; ++a) {
            h[a] = a == ax ? thin * bpt_uniform(r, 50.0, 100.0) : thin;
            c[a] = bpt_uniform(r, 0.0, world);
        }
        bpt_set_box(bpt_box(b, k), d, c, h);
    }
}

static void case_sticks(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(41);
    for (int axis = -1; axis < o.dim; ++axis) {
        sticks_scene(&r, &o.boxes, o.dim, 1500, axis);
        oracle_all_modes(&o, axis < 0 ? "sticks on every axis" : "sticks along one axis");
    }
    // On an integer lattice: thin extents exactly 1, lengths whole, so that many sticks touch
    // exactly and a query's min less a level's largest extent falls on cell boundaries (the
    // grid's cross-level regions are cut there: one ulp too tight loses pairs).
    bpt_boxes_resize(&o.boxes, o.dim, 3000);
    for (size_t k = 0; k < o.boxes.n; ++k) {
        const int ax = (int)bpt_below(&r, (uint64_t)o.dim);
        float *b = bpt_box(&o.boxes, k);
        for (int a = 0; a < o.dim; ++a) {
            b[a] = (float)bpt_below(&r, o.dim == 2 ? 160 : 48);
            b[o.dim + a] = b[a] + (a == ax ? (float)(30 + bpt_below(&r, 21)) : 1.0f);
        }
    }
    oracle_all_modes(&o, "sticks on an integer lattice");
    sticks_scene(&r, &o.boxes, o.dim, 4000, -1);
    shapes_frames(&o, &r, "sticks, frames", 0.3);
    CHECK_MSG(o.got.n > o.boxes.n / 4, "sticks: %zu pairs for %zu boxes: too sparse to test much", o.got.n,
              o.boxes.n);
    oracle_free(&o);
}

// Half extents log-uniform over three decades (0.05 to 50; the same on every axis, as circles),
// in a world where the median box is small.
static void case_sizes(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(42);
    const size_t n = 2500;
    const double world = 100.0 * (o.dim == 2 ? sqrt((double)n / 1000.0) : cbrt((double)n / 1000.0)) * 2.0;
    bpt_boxes_resize(&o.boxes, o.dim, n);
    for (size_t k = 0; k < n; ++k) {
        double c[3], h[3];
        const double e = exp(bpt_uniform(&r, log(0.05), log(50.0)));
        for (int a = 0; a < o.dim; ++a) {
            h[a] = e;
            c[a] = bpt_uniform(&r, 0.0, world);
        }
        bpt_set_box(bpt_box(&o.boxes, k), o.dim, c, h);
    }
    oracle_all_modes(&o, "sizes over three decades");
    shapes_frames(&o, &r, "sizes, frames", 0.5);
    // Crowded: two decades (0.05 to 5) in a world of 20, most boxes far smaller than the cells
    // sized for the crowd (the grid's 3D level 0 then cuts its runs to the cells a box reaches).
    const size_t m = 3000;
    bpt_boxes_resize(&o.boxes, o.dim, m);
    for (size_t k = 0; k < m; ++k) {
        double c[3], h[3];
        const double e = exp(bpt_uniform(&r, log(0.05), log(5.0)));
        for (int a = 0; a < o.dim; ++a) {
            h[a] = e;
            c[a] = bpt_uniform(&r, 0.0, o.dim == 2 ? 60.0 : 20.0);
        }
        bpt_set_box(bpt_box(&o.boxes, k), o.dim, c, h);
    }
    oracle_all_modes(&o, "crowded sizes over two decades");
    shapes_frames(&o, &r, "crowded sizes, frames", 0.3);
    oracle_free(&o);
}

// A few boxes as large as the world (and one larger) among thousands of tiny ones.
static void case_giants(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(43);
    const size_t n = 3000, giants = 6;
    const double world = 100.0;
    bpt_random_boxes(&r, &o.boxes, o.dim, n, world, 0.05, 0.6);
    for (size_t g = 0; g < giants; ++g) {
        // Spread through the index range, so that they are not all first or last.
        const size_t k = g * (n / giants) + bpt_below(&r, n / giants);
        double c[3], h[3];
        for (int a = 0; a < o.dim; ++a) {
            c[a] = bpt_uniform(&r, 0.0, world);
            h[a] = g == 0 ? world * 3.0 : world * bpt_uniform(&r, 0.3, 0.6);
        }
        bpt_set_box(bpt_box(&o.boxes, k), o.dim, c, h);
    }
    oracle_all_modes(&o, "giants among tiny boxes");
    shapes_frames(&o, &r, "giants, frames", 0.3);
    CHECK_MSG(o.got.n >= n, "giants: %zu pairs, the world-sized boxes should meet every box", o.got.n);
    oracle_free(&o);
}

// Boxes in a small part of a huge world (issue #16's probes of shapes outside SCENES.md, where
// the grid's cells and the quadtree's world once degenerated): two dense clusters 10^6 apart,
// then a tenth of the boxes far; a band (2D) or tube (3D) along the diagonal; a few outliers
// 10^6 away from the rest. AUTO moves between the grid and sweep on these (its coarse-cell rule).
static void case_far(int argc, char **argv) {
    oracle o;
    oracle_init(&o, argc, argv);
    bpt_rng r = bpt_rng_make(44);
    const size_t n = 3000;
    const int d = o.dim;
    const double side = pow(2.0 * (double)n, 1.0 / d);  // a few neighbours a box
    for (int variant = 0; variant < 2; ++variant) {
        bpt_random_boxes(&r, &o.boxes, d, n, side, 0.5, 1.0);
        for (size_t k = 0; k < n; ++k)
            if (variant == 0 ? k % 2 : k % 10 == 3) {
                float *box = bpt_box(&o.boxes, k);
                for (int a = 0; a < 2 * d; ++a) box[a] += 1e6f;
            }
        oracle_all_modes(&o, variant == 0 ? "two clusters 10^6 apart" : "a tenth of the boxes 10^6 away");
        shapes_frames(&o, &r, "far clusters, frames", 0.3);
    }
    // Along the diagonal: centres t + a jitter of 2 on each axis, t over n / 2.
    bpt_boxes_resize(&o.boxes, d, n);
    for (size_t k = 0; k < n; ++k) {
        double c[3], h[3];
        const double t = bpt_uniform(&r, 0.0, (double)n / 2);
        for (int a = 0; a < d; ++a) {
            c[a] = t + bpt_uniform(&r, -2.0, 2.0);
            h[a] = bpt_uniform(&r, 0.5, 1.0);
        }
        bpt_set_box(bpt_box(&o.boxes, k), d, c, h);
    }
    oracle_all_modes(&o, "along the diagonal");
    shapes_frames(&o, &r, "diagonal, frames", 0.3);
    // Outliers: three boxes 10^6 away (two on one side, one on the other) from a dense crowd.
    bpt_random_boxes(&r, &o.boxes, d, n, side, 0.5, 1.0);
    for (size_t k = 0; k < 3; ++k) {
        float *box = bpt_box(&o.boxes, k * (n / 3));
        for (int a = 0; a < 2 * d; ++a) box[a] += k == 1 ? -1e6f : 1e6f;
    }
    oracle_all_modes(&o, "outliers 10^6 away");
    shapes_frames(&o, &r, "outliers, frames", 0.3);
    oracle_free(&o);
}

static const bpt_case cases[] = {
    {"random", case_random},     {"large", case_large},       {"frames", case_frames},
    {"shuffle", case_shuffle},   {"touching", case_touching}, {"identical", case_identical},
    {"points", case_points},     {"line_x", case_line_x},     {"line_y", case_line_y},
    {"line_z", case_line_z},     {"huge", case_huge},         {"cover", case_cover},
    {"tiny", case_tiny},         {"one_spot", case_one_spot}, {"mixed_scale", case_mixed_scale},
    {"between", case_between},   {"dense", case_dense},       {"crowded", case_crowded},
    {"sticks", case_sticks},     {"sizes", case_sizes},       {"giants", case_giants},
    {"extent", case_extent},     {"far", case_far},
};

BPT_MAIN(cases)
