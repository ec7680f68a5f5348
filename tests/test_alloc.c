// Allocation through the hook: a warm context allocates nothing (same n, small moves), and the
// context's byte count (bp_get_stats().bytes) always equals what the hook has handed out, with
// every block freed with the size it was allocated with. Usage: test_alloc CASE METHOD DIM.
#include "harness.h"

// The `uniform` scene of docs/scenes.md (r = 1, 5% coverage), moved one step per frame.
typedef struct scene {
    int dim;
    size_t n;
    double w;
    double *p, *v;
} scene;

static void scene_init(scene *s, int d, size_t n, uint64_t seed) {
    s->dim = d;
    s->n = n;
    s->w = d == 2 ? sqrt((double)n * 3.14159265358979 / 0.05) : cbrt((double)n * 4.0 / 3.0 * 3.14159265358979 / 0.05);
    s->p = bpt_xrealloc(NULL, n * 3 * sizeof *s->p);
    s->v = bpt_xrealloc(NULL, n * 3 * sizeof *s->v);
    bpt_rng r = {seed};
    for (size_t k = 0; k < n; ++k) {
        for (int a = 0; a < d; ++a) s->p[k * 3 + (size_t)a] = bpt_uniform(&r, 1.0, s->w - 1.0);
        for (int a = 0; a < d; ++a) s->v[k * 3 + (size_t)a] = bpt_uniform(&r, -0.5, 0.5);
    }
}

static void scene_boxes(const scene *s, bpt_boxes *b) {
    bpt_boxes_resize(b, s->dim, s->n);
    for (size_t k = 0; k < s->n; ++k) {
        float *box = bpt_box(b, k);
        for (int a = 0; a < s->dim; ++a) {
            box[a] = (float)(s->p[k * 3 + (size_t)a] - 1.0);
            box[s->dim + a] = (float)(s->p[k * 3 + (size_t)a] + 1.0);
        }
    }
}

static void scene_step(scene *s) {
    for (size_t k = 0; k < s->n; ++k) {
        for (int a = 0; a < s->dim; ++a) {
            double *p = &s->p[k * 3 + (size_t)a], *v = &s->v[k * 3 + (size_t)a];
            *p += *v;
            if (*p - 1.0 < 0.0) *p = 1.0, *v = -*v;
            if (*p + 1.0 > s->w) *p = s->w - 1.0, *v = -*v;
        }
    }
}

static void scene_free(scene *s) {
    free(s->p);
    free(s->v);
}

static bool count_fn(const bp_pair *p, size_t c, void *u) {
    (void)p;
    *(size_t *)u += c;
    return true;
}

// Two frames to warm up, then eight more that must not allocate, in every delivery mode; the
// pair count is checked against brute force on the last frame.
static void case_warm(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int d = bpt_dim_arg(argc, argv, 1);
    static const size_t sizes[] = {300, 2000};
    bpt_pairs want = {0};
    for (size_t si = 0; si < 2; ++si) {
        for (int mode = 0; mode < 4; ++mode) {
            bool sorted = mode & 1, callback = mode & 2;
            bpt_alloc al;
            memset(&al, 0, sizeof al);
            bp_context_def def = bp_default_context_def();
            def.sort_pairs = sorted;
            def.allocator = bpt_allocator(&al);
            bp_context *ctx = bpt_context(m, d, &def);
            scene s;
            scene_init(&s, d, sizes[si], 1 + (uint64_t)mode);
            bpt_boxes b = {0};
            size_t warm_allocs = 0, pairs = 0;
            for (int f = 0; f < 10; ++f) {
                if (f == 2) warm_allocs = al.allocs;
                scene_step(&s);
                scene_boxes(&s, &b);
                bpt_note("n = %zu, %s, %s, frame %d", s.n, sorted ? "sorted" : "unsorted",
                         callback ? "callback" : "buffer", f);
                pairs = 0;
                if (callback) {
                    CHECK_OK(d == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(b.v), b.n, count_fn, &pairs)
                                    : bp_find_pairs3_cb(ctx, bpt_as3(b.v), b.n, count_fn, &pairs));
                } else {
                    bp_pairs out;
                    CHECK_OK(d == 2 ? bp_find_pairs2(ctx, bpt_as2(b.v), b.n, &out)
                                    : bp_find_pairs3(ctx, bpt_as3(b.v), b.n, &out));
                    pairs = out.count;
                }
                if (getenv("BPT_VERBOSE")) printf("frame %d: %zu pairs, %zu allocations so far\n", f, pairs, al.allocs);
                CHECK_MSG(f < 2 || al.allocs == warm_allocs, "warm frame %d allocated %zu times (%zu pairs)", f,
                          al.allocs - warm_allocs, pairs);
                bpt_check_bytes(ctx, &al);
            }
            bpt_brute(b.v, b.n, d, &want);
            CHECK_EQ(pairs, want.n);
            bp_context_destroy(ctx);
            CHECK_EQ(al.live_bytes, 0);
            CHECK_EQ(al.live_blocks, 0);
            bpt_boxes_free(&b);
            scene_free(&s);
        }
    }
    bpt_pairs_free(&want);
}

static void draw_box(const float *lo, const float *hi, int level, void *user) {
    (void)lo, (void)hi, (void)level;
    ++*(size_t *)user;
}

// Byte accounting through every kind of call, growing and shrinking n.
static void case_bytes(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int d = bpt_dim_arg(argc, argv, 1);
    bpt_rng r = bpt_rng_make(1);
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    for (int sorted = 0; sorted < 2; ++sorted) {
        bp_context_def def = bp_default_context_def();
        def.sort_pairs = sorted;
        def.allocator = bpt_allocator(&al);
        bp_context *ctx = bpt_context(m, d, &def);
        bpt_check_bytes(ctx, &al);
        bpt_boxes b = {0};
        bpt_pairs got = {0};
        static const size_t ns[] = {0, 10, 100, 3000, 50, 3000, 1};
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k) {
            bpt_note("n = %zu, sorted %d", ns[k], sorted);
            bpt_random_boxes(&r, &b, d, ns[k], 60.0, 0.1, 2.0);
            CHECK_OK(bpt_find(ctx, d, b.v, b.n, k % 2 ? BPT_CALLBACK : BPT_BUFFER, &got));
            bpt_check_bytes(ctx, &al);
            CHECK_OK(bp_validate(ctx));
            bpt_check_bytes(ctx, &al);
            float lo[3] = {0, 0, 0}, hi[3] = {60, 60, 60};
            bp_indices idx;
            CHECK_OK(bp_query_box(ctx, lo, hi, &idx));
            CHECK_OK(bp_query_sphere(ctx, lo, 30.0f, &idx));
            CHECK_OK(bp_query_point(ctx, hi, &idx));
            bpt_check_bytes(ctx, &al);
            size_t drawn = 0;
            bp_debug_draw dd = {draw_box, &drawn};
            CHECK_OK(bp_debug_draw_structure(ctx, &dd));
            bpt_check_bytes(ctx, &al);
            CHECK_OK(bpt_find_between(ctx, d, b.v, b.n / 2, b.v, b.n - b.n / 2, &got));
            bpt_check_bytes(ctx, &al);
        }
        bp_stats st;
        CHECK_OK(bp_get_stats(ctx, &st));
        CHECK(st.bytes > 0);
        bp_context_destroy(ctx);
        CHECK_EQ(al.live_bytes, 0);
        CHECK_EQ(al.live_blocks, 0);
        bpt_boxes_free(&b);
        bpt_pairs_free(&got);
    }
}

static const bpt_case cases[] = {
    {"warm", case_warm},
    {"bytes", case_bytes},
};

BPT_MAIN(cases)
