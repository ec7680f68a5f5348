// Chaos allocation (issue #17): allocation hooks that refuse at random, 1 in 3 and 1 in 100
// (seeded: $SEED replays a run; the seed is printed), over long runs of context frames and
// world operations. Every call's status is checked (success or BP_ERR_NOMEM, nothing else); a
// call that succeeds after failures answers exactly as brute force; the counted bytes return
// to zero after destroy. Usage: test_chaos context|world METHOD DIM RATE.
#include <signal.h>

#include "harness.h"

typedef struct chaos {
    bpt_rng rng;
    uint32_t rate;  // refuse one allocation in `rate`
    bool on;        // refusals enabled
    size_t bytes, blocks;
    uint64_t calls, refused;
} chaos;

static void *chaos_alloc(size_t size, size_t align, void *user) {
    chaos *c = (chaos *)user;
    c->calls++;
    if (c->on && bpt_below(&c->rng, c->rate) == 0) {
        c->refused++;
        return NULL;
    }
    const size_t al = align < sizeof(void *) ? sizeof(void *) : align;
    void *p = aligned_alloc(al, size ? (size + al - 1) / al * al : al);
    CHECK(p);
    c->bytes += size;
    c->blocks++;
    return p;
}

static void chaos_free(void *p, size_t size, void *user) {
    chaos *c = (chaos *)user;
    if (!p) return;
    CHECK(c->bytes >= size && c->blocks > 0);
    c->bytes -= size;
    c->blocks--;
    free(p);
}

static chaos chaos_make(int argc, char **argv, int k, uint64_t salt) {
    chaos c;
    memset(&c, 0, sizeof c);
    CHECK_MSG(k < argc, "missing rate argument");
    c.rate = (uint32_t)strtoul(argv[k], NULL, 10);
    CHECK(c.rate >= 2);
    c.rng = bpt_rng_make(salt);
    c.on = true;
    printf("chaos: refusing 1 allocation in %u, SEED=%" PRIu64 "\n", c.rate, bpt_seed);
    return c;
}

// ---------------------------------------------------------------------------------------------
// Context

static bool overlap(const float *a, const float *b, int d) {
    for (int k = 0; k < d; ++k)
        if (!(a[k] <= b[d + k] && b[k] <= a[d + k])) return false;
    return true;
}

typedef struct collected {
    bp_pair *v;
    size_t n, cap;
} collected;

static bool collect(const bp_pair *pairs, size_t count, void *user) {
    collected *c = (collected *)user;
    if (c->n + count > c->cap) {
        c->cap = (c->n + count) * 2;
        c->v = bpt_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    memcpy(c->v + c->n, pairs, count * sizeof *pairs);
    c->n += count;
    return true;
}

static int cmp_pair(const void *x, const void *y) {
    const bp_pair *a = x, *b = y;
    return bpt_cmp_keys(a->i, a->j, b->i, b->j);
}

// The pairs against brute force (between: A = [0, na), B = [na, n), j indexes B).
static void check_pairs(const float *v, size_t n, bool between, size_t na, int d, bp_pair *got, size_t count) {
    if (count) qsort(got, count, sizeof *got, cmp_pair);
    size_t k = 0;
    const size_t w = (size_t)(2 * d);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            if (between && !(i < na && j >= na)) continue;
            if (!overlap(v + w * i, v + w * j, d)) continue;
            const uint32_t gj = (uint32_t)(between ? j - na : j);
            CHECK_MSG(k < count && got[k].i == i && got[k].j == gj, "pair %zu: missing (%zu, %zu)", k, i, j);
            ++k;
        }
    CHECK_EQ(k, count);
}

// Runs CREATE (a create call that stores into HANDLE) until the chaos allocator C lets it
// through, its status in ST: each refusal must leave HANDLE NULL and nothing allocated.
#define CREATE_UNDER_CHAOS(st, create, handle, c)                                                   \
    do {                                                                                           \
        while (((st) = (create)) == BP_ERR_NOMEM) {                                                \
            CHECK((handle) == NULL);                                                               \
            CHECK_EQ((c).bytes, 0);                                                                \
        }                                                                                          \
        CHECK_OK(st);                                                                              \
    } while (0)

static void case_context(int argc, char **argv) {
    const bp_method method = bpt_method_arg(argc, argv, 0);
    const int d = bpt_dim_arg(argc, argv, 1);
    chaos c = chaos_make(argc, argv, 2, 1);
    bpt_rng r = bpt_rng_make(2);
    bpt_boxes boxes = {0};
    collected got = {0};
    uint64_t ok_calls = 0, failed_calls = 0;
    for (int round = 0; round < 4; ++round) {
        bp_context_def def = bp_default_context_def();
        def.dimension = d;
        def.method = method;
        def.sort_pairs = round % 2;
        def.allocator = (bp_allocator){chaos_alloc, chaos_free, &c};
        if (round == 3) {
            def.workers = 3;  // the workers' scratch and arenas refused too
            def.parallel_min = 1;
        }
        bp_context *ctx = NULL;
        bp_status st;
        CREATE_UNDER_CHAOS(st, bp_context_create(&def, &ctx), ctx, c);
        bool have = false;
        for (int frame = 0; frame < 120; ++frame) {
            // n changing, boxes moving a little or all new, now and then a huge box.
            const size_t n = frame % 10 == 0 || boxes.n == 0 ? 1 + bpt_below(&r, 400) : boxes.n;
            if (n != boxes.n || frame % 7 == 0) bpt_random_boxes(&r, &boxes, d, n, 100.0, 0.0, 6.0);
            else bpt_jiggle(&r, &boxes, 0.5);
            if (frame % 13 == 0) {
                float *b = bpt_box(&boxes, bpt_below(&r, n));
                for (int a = 0; a < d; ++a) {
                    b[a] = -1e30f;
                    b[d + a] = 1e30f;
                }
            }
            const int mode = frame % 4;  // buffer, callback, bipartite, buffer
            const size_t na = mode == 2 ? bpt_below(&r, n + 1) : 0;
            bpt_note("chaos context: round %d frame %d, n = %zu, mode %d", round, frame, n, mode);
            got.n = 0;
            bp_pairs out = {NULL, 0};
            const float *v = boxes.v;
            if (mode == 1) {
                st = d == 2 ? bp_find_pairs2_cb(ctx, (const bp_box2 *)(const void *)v, n, collect, &got)
                            : bp_find_pairs3_cb(ctx, (const bp_box3 *)(const void *)v, n, collect, &got);
            } else if (mode == 2) {
                const float *vb = v + (size_t)(2 * d) * na;
                st = d == 2 ? bp_find_pairs_between2(ctx, (const bp_box2 *)(const void *)v, na,
                                                     (const bp_box2 *)(const void *)vb, n - na, &out)
                            : bp_find_pairs_between3(ctx, (const bp_box3 *)(const void *)v, na,
                                                     (const bp_box3 *)(const void *)vb, n - na, &out);
            } else {
                st = d == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)v, n, &out)
                            : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)v, n, &out);
            }
            CHECK_MSG(st == BP_OK || st == BP_ERR_NOMEM, "status %s", bp_status_string(st));
            bp_stats stats;
            CHECK_OK(bp_get_stats(ctx, &stats));
            CHECK_EQ(stats.bytes, c.bytes);
            bp_indices q;
            const float lo[3] = {10, 10, 10}, hi[3] = {40, 30, 50};
            if (st != BP_OK) {
                ++failed_calls;
                CHECK_EQ(out.count, 0);
                CHECK_ST(bp_query_box(ctx, lo, hi, &q), BP_ERR_NO_BOXES);
                have = false;
                continue;
            }
            ++ok_calls;
            have = true;
            if (mode != 1) collect(out.pairs, out.count, &got);
            check_pairs(v, n, mode == 2, na, d, got.v, got.n);
            // A query, with refusals on: it succeeds right or runs out of memory.
            st = bp_query_box(ctx, lo, hi, &q);
            CHECK_MSG(st == BP_OK || st == BP_ERR_NOMEM, "query: %s", bp_status_string(st));
            if (st == BP_OK) {
                size_t m = 0;
                for (size_t k = 0; k < n; ++k) {
                    const float qb[6] = {lo[0], lo[1], d == 3 ? lo[2] : hi[0], d == 3 ? hi[0] : hi[1],
                                         d == 3 ? hi[1] : 0, d == 3 ? hi[2] : 0};
                    if (!overlap(bpt_box(&boxes, k), qb, d)) continue;
                    CHECK(m < q.count && q.indices[m] == k);
                    ++m;
                }
                CHECK_EQ(m, q.count);
            }
        }
        (void)have;
        bp_context_destroy(ctx);
        CHECK_MSG(c.bytes == 0 && c.blocks == 0, "%zu bytes in %zu blocks left after destroy", c.bytes, c.blocks);
    }
    printf("chaos context: %" PRIu64 " calls succeeded, %" PRIu64 " ran out of memory; %" PRIu64
           " of %" PRIu64 " allocations refused\n",
           ok_calls, failed_calls, c.refused, c.calls);
    CHECK(ok_calls > 0 && (c.rate > 10 || failed_calls > 0));
    free(got.v);
    bpt_boxes_free(&boxes);
}

// ---------------------------------------------------------------------------------------------
// World

#define CHAOS_SLOTS 160

typedef struct wproxy {
    bp_proxy_id id;
    bool live;
    float box[6];
    bool is_static;
} wproxy;

typedef struct wpair {
    bp_proxy_id a, b;
} wpair;

static int cmp_wpair(const void *x, const void *y) {
    const wpair *a = x, *b = y;
    return bpt_cmp_keys(a->a.v, a->b.v, b->a.v, b->b.v);
}

static size_t world_brute(const wproxy *p, int d, wpair *out) {
    size_t n = 0;
    for (size_t i = 0; i < CHAOS_SLOTS; ++i)
        for (size_t j = i + 1; j < CHAOS_SLOTS; ++j) {
            if (!p[i].live || !p[j].live || (p[i].is_static && p[j].is_static)) continue;
            if (!overlap(p[i].box, p[j].box, d)) continue;
            out[n].a = p[i].id.v < p[j].id.v ? p[i].id : p[j].id;
            out[n].b = p[i].id.v < p[j].id.v ? p[j].id : p[i].id;
            ++n;
        }
    if (n) qsort(out, n, sizeof *out, cmp_wpair);
    return n;
}

static bool has_pair(const wpair *v, size_t n, wpair x) { return n && bsearch(&x, v, n, sizeof *v, cmp_wpair); }

// The events are the pairs of `in` absent from `out`, in the order of `in` (begins: in = now,
// out = last; ends: the other way).
static void check_events(const wpair *in, size_t nin, const wpair *out, size_t nout, const bp_world_pairs *ev) {
    size_t n = 0;
    for (size_t k = 0; k < nin; ++k) {
        if (has_pair(out, nout, in[k])) continue;
        CHECK(n < ev->count && bp_proxy_equal(ev->pairs[n].a, in[k].a) && bp_proxy_equal(ev->pairs[n].b, in[k].b));
        ++n;
    }
    CHECK_EQ(n, ev->count);
}

static void random_box(bpt_rng *r, int d, float *b) {
    for (int a = 0; a < d; ++a) {
        b[a] = (float)bpt_uniform(r, 0.0, 60.0);
        b[d + a] = b[a] + (float)bpt_uniform(r, 0.0, 5.0);
    }
}

static void case_world(int argc, char **argv) {
    const bp_method method = bpt_method_arg(argc, argv, 0);
    const int d = bpt_dim_arg(argc, argv, 1);
    chaos c = chaos_make(argc, argv, 2, 3);
    bpt_rng r = bpt_rng_make(4);
    static wproxy p[CHAOS_SLOTS];
    static wpair last[CHAOS_SLOTS * CHAOS_SLOTS / 2], now[CHAOS_SLOTS * CHAOS_SLOTS / 2];
    uint64_t ok_ops = 0, failed_ops = 0, updates = 0;
    for (int mode = 0; mode < 3; ++mode) {
        memset(p, 0, sizeof p);
        size_t nlast = 0;
        bp_world_def def = bp_default_world_def();
        def.dimension = d;
        def.method = method;
        def.mode = (bp_world_mode)mode;
        def.allocator = (bp_allocator){chaos_alloc, chaos_free, &c};
        bp_world *w = NULL;
        bp_status st;
        CREATE_UNDER_CHAOS(st, bp_world_create(&def, &w), w, c);
        for (int step = 0; step < 1500; ++step) {
            const size_t s = bpt_below(&r, CHAOS_SLOTS);
            const int op = (int)bpt_below(&r, 10);
            bpt_note("chaos world: mode %d step %d op %d slot %zu", mode, step, op, s);
            if (op <= 2 && !p[s].live) {  // add
                float b[6];
                random_box(&r, d, b);
                bp_proxy_def pd = bp_default_proxy_def();
                pd.kind = bpt_coin(&r, 0.3) ? BP_PROXY_STATIC : BP_PROXY_MOVING;
                bp_proxy_id id;
                st = d == 2 ? bp_world_add2(w, (const bp_box2 *)(const void *)b, &pd, &id)
                            : bp_world_add3(w, (const bp_box3 *)(const void *)b, &pd, &id);
                if (st == BP_OK) {
                    p[s].id = id;
                    p[s].live = true;
                    p[s].is_static = pd.kind == BP_PROXY_STATIC;
                    memcpy(p[s].box, b, sizeof b);
                }
            } else if (op <= 5 && p[s].live) {  // move
                float b[6];
                random_box(&r, d, b);
                st = d == 2 ? bp_world_move2(w, p[s].id, (const bp_box2 *)(const void *)b)
                            : bp_world_move3(w, p[s].id, (const bp_box3 *)(const void *)b);
                if (st == BP_OK) memcpy(p[s].box, b, sizeof b);
            } else if (op == 6 && p[s].live) {  // remove
                st = bp_world_remove(w, p[s].id);
                if (st == BP_OK) p[s].live = false;
            } else if (op == 7 && p[s].live) {  // kind
                const bool to_static = !p[s].is_static;
                st = bp_world_set_kind(w, p[s].id, to_static ? BP_PROXY_STATIC : BP_PROXY_MOVING);
                if (st == BP_OK) p[s].is_static = to_static;
            } else if (op == 8) {  // a batch of moves, all or nothing
                bp_proxy_id ids[8];
                float bs[8 * 6];
                size_t k = 0;
                for (size_t t = 0; t < CHAOS_SLOTS && k < 8; t += 1 + bpt_below(&r, 40))
                    if (p[t].live) {
                        ids[k] = p[t].id;
                        random_box(&r, d, bs + (size_t)(2 * d) * k);
                        ++k;
                    }
                st = d == 2 ? bp_world_move_batch2(w, ids, (const bp_box2 *)(const void *)bs, k)
                            : bp_world_move_batch3(w, ids, (const bp_box3 *)(const void *)bs, k);
                if (st == BP_OK)
                    for (size_t q = 0, t = 0; q < k; ++t)
                        if (p[t].live && bp_proxy_equal(p[t].id, ids[q])) memcpy(p[t].box, bs + (size_t)(2 * d) * q++, sizeof p[t].box);
            } else {  // update: events against brute force
                bp_world_events ev;
                st = bp_world_update(w, &ev);
                if (st == BP_OK) {
                    ++updates;
                    const size_t nnow = world_brute(p, d, now);
                    check_events(now, nnow, last, nlast, &ev.begins);
                    check_events(last, nlast, now, nnow, &ev.ends);
                    memcpy(last, now, nnow * sizeof *now);
                    nlast = nnow;
                }
            }
            CHECK_MSG(st == BP_OK || st == BP_ERR_NOMEM, "status %s", bp_status_string(st));
            if (st == BP_OK) ++ok_ops;
            else ++failed_ops;
            bp_world_stats ws;
            CHECK_OK(bp_world_get_stats(w, &ws));
            CHECK_EQ(ws.bytes, c.bytes);
            if (step % 50 == 0) {
                c.on = false;  // the check itself must not fail
                CHECK_OK(bp_world_validate(w));
                c.on = true;
            }
        }
        bp_world_destroy(w);
        CHECK_MSG(c.bytes == 0 && c.blocks == 0, "%zu bytes in %zu blocks left after destroy", c.bytes, c.blocks);
    }
    printf("chaos world: %" PRIu64 " operations succeeded (%" PRIu64 " updates), %" PRIu64
           " ran out of memory; %" PRIu64 " of %" PRIu64 " allocations refused\n",
           ok_ops, updates, failed_ops, c.refused, c.calls);
    CHECK(updates > 0 && (c.rate > 10 || failed_ops > 0));
}

// ---------------------------------------------------------------------------------------------
// Hooks that break their promise (outside the contract): a debug build must stop at the first
// bad block with an assertion, not carry on corrupting memory. The abort passes the test
// (SIGABRT handler); returning fails it. CTest registers these in Debug builds only.

static _Alignas(64) unsigned char broken_arena[1 << 22];
static size_t broken_used;

static void *broken_alloc(size_t size, size_t align, void *user) {
    const bool twice = *(const bool *)user;
    (void)align;
    if (twice) return broken_arena;  // every block the same
    // Blocks 8 bytes past a 64-byte boundary: aligned for a double, not as asked.
    size = (size + 63) & ~(size_t)63;
    if (broken_used + size + 64 > sizeof broken_arena) return NULL;
    void *p = broken_arena + broken_used + 8;
    broken_used += size + 64;
    return p;
}

static void broken_free(void *p, size_t size, void *user) {
    (void)p;
    (void)size;
    (void)user;
}

// The assertion's abort is the expected outcome: it ends the test successfully.
static void broken_aborted(int sig) {
    (void)sig;
    _Exit(0);
}

static void case_broken(int argc, char **argv) {
    CHECK(argc >= 1);
    signal(SIGABRT, broken_aborted);
    bool twice = strcmp(argv[0], "twice") == 0;
    bp_context_def def = bp_default_context_def();
    def.method = BP_METHOD_SWEEP;
    def.allocator.alloc = broken_alloc;
    def.allocator.free = broken_free;
    def.allocator.user = &twice;
    bp_context *ctx;
    bp_status st = bp_context_create(&def, &ctx);
    if (st == BP_OK) {
        bpt_rng r = bpt_rng_make(5);
        bpt_boxes boxes = {0};
        bpt_random_boxes(&r, &boxes, 2, 100, 50.0, 0.0, 3.0);
        bp_pairs out;
        st = bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes.v, boxes.n, &out);
        bpt_boxes_free(&boxes);
        bp_context_destroy(ctx);
    }
    // Reached only when nothing asserted.
    CHECK_MSG(false, "broken hooks (%s): no assertion (status %s)", argv[0], bp_status_string(st));
}

static const bpt_case cases[] = {{"context", case_context}, {"world", case_world}, {"broken", case_broken}};

BPT_MAIN(cases)
