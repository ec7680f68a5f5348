// Out of memory: an allocator that refuses the Nth allocation, for N = 1, 2, ... until a whole
// scenario (create, frames of growing n, sorted output, callback delivery, queries, bipartite)
// runs without reaching N. Each refusal must come back as BP_ERR_NOMEM (or a clean failed
// create), the same call must then succeed and match brute force once allocation is allowed
// again, bp_get_stats().bytes must equal the allocator's live bytes throughout, and nothing may
// be left allocated after destroy. A second case refuses one allocation in three at random
// (chaos). Usage: test_nomem CASE [METHOD DIM].
#include "harness.h"

typedef struct scenario {
    bp_method method;
    int dim;
    bpt_alloc al;
    bp_context *a, *b;     // unsorted, sorted
    bpt_boxes set, other;  // the boxes of the current frame (and the B side of bipartite calls)
    bpt_boxes seen[2];     // what contexts a and b hold (the boxes of their last success)
    bool holds[2];         // whether they hold any (a failed call leaves none)
    bpt_rng rng;
    bpt_pairs got, want;
} scenario;

static bp_status create(scenario *s, bp_context **out, bool sorted) {
    bp_context_def def = bp_default_context_def();
    def.dimension = s->dim;
    def.method = s->method;
    def.sort_pairs = sorted;
    def.allocator = bpt_allocator(&s->al);
    bp_context *ctx = (bp_context *)(uintptr_t)8;
    bp_status st = bp_context_create(&def, &ctx);
    if (st != BP_OK) {
        CHECK(ctx == NULL);
        return st;
    }
    *out = ctx;
    return st;
}

// Makes the boxes of a step (deterministic per step, so a retry sees the same input).
static void make_boxes(scenario *s, int step, size_t n, double world) {
    bpt_rng r = bpt_rng_make(1000 + (uint64_t)step);
    bpt_random_boxes(&r, &s->set, s->dim, n, world, 0.2, 2.0);
}

// Records the boxes a context now holds, for the queries that follow.
static void remember(scenario *s, bp_context *ctx) {
    s->holds[ctx == s->a ? 0 : 1] = true;
    bpt_boxes *to = &s->seen[ctx == s->a ? 0 : 1];
    bpt_boxes_resize(to, s->dim, s->set.n);
    if (s->set.n) memcpy(to->v, s->set.v, s->set.n * (size_t)(2 * s->dim) * sizeof(float));
}

// bp_validate may allocate (it is for tests); its allocations are never refused here, so that
// a refusal always belongs to the call under test.
static void validate(scenario *s, bp_context *ctx) {
    size_t fail_at = s->al.fail_at;
    double rate = s->al.fail_rate;
    s->al.fail_at = 0;
    s->al.fail_rate = 0.0;
    CHECK_OK(bp_validate(ctx));
    s->al.fail_at = fail_at;
    s->al.fail_rate = rate;
}

static bp_status frame(scenario *s, bp_context *ctx, size_t n, double world, int step, bpt_delivery mode,
                       bool sorted) {
    make_boxes(s, step, n, world);
    bp_status st = bpt_find(ctx, s->dim, s->set.v, n, mode, &s->got);
    if (st != BP_OK) s->holds[ctx == s->a ? 0 : 1] = false;
    if (st == BP_OK) {
        validate(s, ctx);
        bpt_check_result("frame", &s->got, s->set.v, n, s->dim, sorted, &s->want);
        remember(s, ctx);
    }
    return st;
}

// Queries against the boxes of the last frame (s->set), checked against a scan.
static bp_status queries(scenario *s, bp_context *ctx) {
    const int d = s->dim;
    const bpt_boxes *set = &s->seen[ctx == s->a ? 0 : 1];
    if (!s->holds[ctx == s->a ? 0 : 1]) {  // a fresh context, or one whose last call failed
        bp_indices idx;
        float p[3] = {0, 0, 0};
        CHECK_ST(bp_query_point(ctx, p, &idx), BP_ERR_NO_BOXES);
        return BP_OK;
    }
    float lo[3] = {-1e9f, -1e9f, -1e9f}, hi[3] = {1e9f, 1e9f, 1e9f}, c[3] = {10, 10, 10};
    bp_indices idx;
    bp_status st = bp_query_box(ctx, lo, hi, &idx);
    if (st != BP_OK) return st;
    CHECK_EQ(idx.count, set->n);
    for (size_t k = 0; k < idx.count; ++k) CHECK_EQ(idx.indices[k], k);
    st = bp_query_sphere(ctx, c, 8.0f, &idx);
    if (st != BP_OK) return st;
    size_t want = 0;
    for (size_t k = 0; k < set->n; ++k) {
        bool hit = false;
        const float *b = bpt_box(set, k);
        CHECK_OK(bpt_test_round_box(d, c, 8.0f, b, &hit));
        if (hit) {
            CHECK_MSG(want < idx.count && idx.indices[want] == k, "sphere query misses box %zu", k);
            ++want;
        }
    }
    CHECK_EQ(idx.count, want);
    return bp_query_point(ctx, c, &idx);
}

static bp_status between(scenario *s, bp_context *ctx, int step, bool sorted) {
    make_boxes(s, step, 150, 25.0);
    bpt_rng r = bpt_rng_make(2000 + (uint64_t)step);
    bpt_random_boxes(&r, &s->other, s->dim, 120, 25.0, 0.2, 2.0);
    bp_status st = bpt_find_between(ctx, s->dim, s->set.v, s->set.n, s->other.v, s->other.n, &s->got);
    if (st != BP_OK) {
        s->holds[ctx == s->a ? 0 : 1] = false;
        return st;
    }
    if (sorted) CHECK(bpt_pairs_sorted(&s->got));
    bpt_pairs_sort(&s->got);
    bpt_brute_between(s->set.v, s->set.n, s->other.v, s->other.n, s->dim, &s->want);
    BPT_EXPECT_PAIRS("between", &s->want, &s->got, s->set.v, s->other.v, s->dim);
    // Queries after a bipartite call run over A then B: make the scan see the same.
    size_t na = s->set.n;
    bpt_boxes_resize(&s->set, s->dim, na + s->other.n);
    memcpy(bpt_box(&s->set, na), s->other.v, s->other.n * (size_t)(2 * s->dim) * sizeof(float));
    remember(s, ctx);
    return BP_OK;
}

#define STEPS 16

// One step of the scenario; BP_OK or the failure, results checked on success.
static bp_status step(scenario *s, int k) {
    switch (k) {
    case 0: s->holds[0] = false; return create(s, &s->a, false);
    case 1: return frame(s, s->a, 40, 20.0, k, BPT_BUFFER, false);
    case 2: return frame(s, s->a, 40, 20.0, k, BPT_BUFFER, false);
    case 3: return frame(s, s->a, 300, 40.0, k, BPT_CALLBACK, false);
    case 4: return frame(s, s->a, 400, 40.0, k, BPT_BUFFER, false);
    case 5: return queries(s, s->a);
    case 6: return between(s, s->a, k, false);
    case 7: return queries(s, s->a);
    case 8: s->holds[1] = false; return create(s, &s->b, true);
    case 9: return frame(s, s->b, 300, 30.0, k, BPT_BUFFER, true);
    case 10: return frame(s, s->b, 300, 30.0, k, BPT_CALLBACK, true);
    case 11: return between(s, s->b, k, true);
    case 12: return queries(s, s->b);
    // Dense: thousands of pairs (about 7,000 in 2D), several growths of the pair buffer and
    // two callback batches.
    case 13: return frame(s, s->a, 350, 7.0, k, BPT_BUFFER, false);
    case 14: return frame(s, s->a, 350, 7.0, k, BPT_CALLBACK, false);
    case 15: return frame(s, s->b, 350, 7.0, k, BPT_CALLBACK, true);
    }
    return BP_ERR_INVALID_ARG;
}

static void check_bytes(scenario *s) {
    // With two contexts on one allocator, their sum is what it holds.
    size_t bytes = 0;
    bp_context *ctxs[2] = {s->a, s->b};
    for (int k = 0; k < 2; ++k) {
        if (!ctxs[k]) continue;
        bp_stats st;
        CHECK_OK(bp_get_stats(ctxs[k], &st));
        bytes += st.bytes;
    }
    CHECK_MSG(bytes == s->al.live_bytes, "contexts report %zu bytes, the allocator holds %zu", bytes,
              s->al.live_bytes);
}

// Destroys both contexts: nothing may stay allocated.
static void destroy_contexts(scenario *s) {
    bp_context_destroy(s->a);
    bp_context_destroy(s->b);
    CHECK_MSG(s->al.live_bytes == 0 && s->al.live_blocks == 0, "leak: %zu bytes in %zu blocks after destroy",
              s->al.live_bytes, s->al.live_blocks);
}

static void scenario_free(scenario *s) {
    bpt_pairs_free(&s->got);
    bpt_pairs_free(&s->want);
    bpt_boxes_free(&s->set);
    bpt_boxes_free(&s->other);
    bpt_boxes_free(&s->seen[0]);
    bpt_boxes_free(&s->seen[1]);
}

static void case_scenario(int argc, char **argv) {
    scenario s;
    memset(&s, 0, sizeof s);
    s.method = bpt_method_arg(argc, argv, 0);
    s.dim = bpt_dim_arg(argc, argv, 1);
    size_t refused = 0;
    for (size_t n_fail = 1;; ++n_fail) {
        CHECK_MSG(n_fail < 100000, "the scenario never completes");
        memset(&s.al, 0, sizeof s.al);
        s.al.fail_at = n_fail;
        s.a = s.b = NULL;
        for (int k = 0; k < STEPS; ++k) {
            bpt_note("refusing allocation %zu; step %d", n_fail, k);
            size_t before = s.al.failures;
            bp_status st = step(&s, k);
            if (s.al.failures > before) {
                CHECK_MSG(st == BP_ERR_NOMEM, "allocation %zu refused in step %d, which returned %d (%s)", n_fail,
                          k, (int)st, bp_status_string(st));
                refused++;
                check_bytes(&s);
                // Allowed again: the same step must now succeed (and its results are checked).
                s.al.fail_at = 0;
                bpt_note("step %d again after allocation %zu was refused", k, n_fail);
                st = step(&s, k);
            }
            CHECK_OK(st);
            check_bytes(&s);
        }
        bool done = s.al.allocs < n_fail;  // allocation N was never reached
        destroy_contexts(&s);
        if (done) break;
    }
    printf("%zu allocations refused, each handled\n", refused);
    scenario_free(&s);
}

// One allocation in three refused at random over a long run of mixed operations on two
// contexts; a failed operation is retried (still under chaos a few times, then with allocation
// allowed) and must then succeed.
static void case_chaos(int argc, char **argv) {
    scenario s;
    memset(&s, 0, sizeof s);
    s.method = bpt_method_arg(argc, argv, 0);
    s.dim = bpt_dim_arg(argc, argv, 1);
    s.al.rng = bpt_rng_make(77);
    bpt_rng r = bpt_rng_make(78);
    for (int round = 0; round < 4; ++round) {
        s.al.fail_rate = 1.0 / 3.0;
        s.a = s.b = NULL;
        // Create both contexts (retrying under chaos).
        for (int k = 0; k < 2; ++k) {
            bp_status st;
            int tries = 0;
            do {
                CHECK(++tries < 1000);
                st = step(&s, k == 0 ? 0 : 8);
                CHECK(st == BP_OK || st == BP_ERR_NOMEM);
            } while (st != BP_OK);
        }
        for (int op = 0; op < 60; ++op) {
            // Any step but the creates, in random order.
            int k;
            do k = 1 + (int)bpt_below(&r, STEPS - 1);
            while (k == 8);
            bpt_note("chaos round %d op %d: step %d", round, op, k);
            s.al.fail_rate = 1.0 / 3.0;
            bp_status st = BP_ERR_NOMEM;
            for (int tries = 0; tries < 4 && st != BP_OK; ++tries) {
                size_t before = s.al.failures;
                st = step(&s, k);
                if (st != BP_OK) {
                    CHECK_ST(st, BP_ERR_NOMEM);
                    CHECK_MSG(s.al.failures > before, "BP_ERR_NOMEM without a refused allocation");
                }
                check_bytes(&s);
            }
            if (st != BP_OK) {
                s.al.fail_rate = 0.0;
                CHECK_OK(step(&s, k));
                check_bytes(&s);
            }
        }
        destroy_contexts(&s);
    }
    printf("%zu allocations refused over %zu\n", s.al.failures, s.al.allocs);
    scenario_free(&s);
}

// The context's own allocation refused: a clean failure, nothing held; every method and
// dimension.
static void case_create(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        if (!bp_method_available((bp_method)m)) continue;
        for (int d = 2; d <= 3; ++d) {
            bpt_alloc al;
            memset(&al, 0, sizeof al);
            al.fail_at = 1;
            bp_context_def def = bp_default_context_def();
            def.dimension = d;
            def.method = (bp_method)m;
            def.allocator = bpt_allocator(&al);
            bp_context *ctx = (bp_context *)(uintptr_t)8;
            CHECK_ST(bp_context_create(&def, &ctx), BP_ERR_NOMEM);
            CHECK(ctx == NULL);
            CHECK_EQ(al.live_blocks, 0);
            CHECK_OK(bp_context_create(&def, &ctx));
            bpt_check_bytes(ctx, &al);
            bp_context_destroy(ctx);
            CHECK_EQ(al.live_bytes, 0);
            CHECK_EQ(al.live_blocks, 0);
        }
    }
}

static const bpt_case cases[] = {
    {"scenario", case_scenario},
    {"chaos", case_chaos},
    {"create", case_create},
};

BPT_MAIN(cases)
