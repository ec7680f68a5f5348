// Fuzz target: the context. The bytes choose a definition (dimension, method, every option of
// bp_context_def, workers, an allocator that may refuse an allocation), then a run of calls on
// one context: frames whose n changes, boxes built from extreme floats, duplicates, huge boxes
// among tiny ones and now and then any 32 bits (NaN, infinities, min > max); pairs into the
// buffer, to a callback (which may stop the call), sorted or not, bipartite; the three region
// queries. Every answer is compared with this file's own brute force, bp_validate runs after
// every call, and the allocator's counts return to zero after destroy.
#include <math.h>

#include "fuzz.h"

#define FZ_TARGET "fuzz_context"
#define FZ_MAX_N 240

typedef struct ctx_run {
    int dim;
    bool sorted;
    float eps;  // rdc epsilon in force (0 for the other methods)
    size_t n;
    float boxes[FZ_MAX_N * 6];
    float lo[FZ_MAX_N * 3], hi[FZ_MAX_N * 3];  // the boxes as the method tests them (ctx_brute)
    // Brute force's pairs and the pairs seen from the library, as bits i * FZ_MAX_N + j: a
    // pair set compared in time linear in the pairs, without sorting the library's.
    uint64_t want_bits[FZ_MAX_N * FZ_MAX_N / 64 + 1], seen_bits[FZ_MAX_N * FZ_MAX_N / 64 + 1];
    // Brute force's pairs and the library's, as (i << 32 | j) keys.
    uint64_t *want, *got;
    size_t nwant, capwant, ngot, capgot;
    size_t batches, last_batch;
    bool batch_bad;
    size_t stop_after;  // the callback returns false at this batch (0: never)
} ctx_run;

FZ_NOCOV static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// The box as the method tests it: rdc's epsilon shrinks (> 0) or grows (< 0) every interval
// in float arithmetic, clamped to +-FLT_MAX, and the closed rule applies to the result as it
// is, even to an interval shrunk past empty (docs/rdc.md; tests/test_rdc.c's epsilon case).
FZ_NOCOV static void ctx_adjusted(const ctx_run *r, size_t k, float *lo, float *hi) {
    const float *b = r->boxes + (size_t)(2 * r->dim) * k;
    for (int a = 0; a < r->dim; ++a) {
        float l = b[a], h = b[r->dim + a];
        if (r->eps != 0.0f) {
            l = l + r->eps;
            h = h - r->eps;
            l = l > FLT_MAX ? FLT_MAX : (l < -FLT_MAX ? -FLT_MAX : l);
            h = h > FLT_MAX ? FLT_MAX : (h < -FLT_MAX ? -FLT_MAX : h);
        }
        lo[a] = l;
        hi[a] = h;
    }
}

FZ_NOCOV static bool ctx_overlap(const ctx_run *r, size_t i, size_t j) {
    const float *li = r->lo + 3 * i, *hi_ = r->hi + 3 * i, *lj = r->lo + 3 * j, *hj = r->hi + 3 * j;
    for (int a = 0; a < r->dim; ++a) {
        if (!(li[a] <= hj[a] && lj[a] <= hi_[a])) return false;
    }
    return true;
}

static inline size_t ctx_bit(uint64_t key) { return (size_t)(key >> 32) * FZ_MAX_N + (size_t)(key & 0xffffffffu); }

// The status a call on these boxes must return: any NaN or infinity, or min > max.
static bp_status ctx_expected(const ctx_run *r, bool *either) {
    bool nonfinite = false, inverted = false;
    for (size_t k = 0; k < r->n; ++k) {
        const float *b = r->boxes + (size_t)(2 * r->dim) * k;
        for (int a = 0; a < r->dim; ++a) {
            if (!isfinite(b[a]) || !isfinite(b[r->dim + a])) nonfinite = true;
            else if (b[a] > b[r->dim + a]) inverted = true;
        }
    }
    *either = nonfinite && inverted;
    return nonfinite ? BP_ERR_NONFINITE : inverted ? BP_ERR_INVERTED_BOX : BP_OK;
}

FZ_NOCOV static void ctx_push(ctx_run *r, uint32_t i, uint32_t j) {
    if (r->ngot == r->capgot) {
        r->capgot = r->capgot ? 2 * r->capgot : 1024;
        r->got = realloc(r->got, r->capgot * sizeof *r->got);
        if (!r->got) abort();
    }
    r->got[r->ngot++] = (uint64_t)i << 32 | j;
}

static bool ctx_batch(const bp_pair *pairs, size_t count, void *user) {
    ctx_run *r = (ctx_run *)user;
    // Every batch but the last holds exactly 4,096 pairs (docs/architecture.md).
    if (r->batches && r->last_batch != 4096) r->batch_bad = true;
    if (count == 0 || count > 4096) r->batch_bad = true;
    r->batches++;
    r->last_batch = count;
    for (size_t k = 0; k < count; ++k) ctx_push(r, pairs[k].i, pairs[k].j);
    return !(r->stop_after && r->batches == r->stop_after);
}

// The library's pairs against brute force's (r->want, sorted, and its bits): each pair is one
// of brute force's and comes once; unless the callback stopped the call (a subset), as many as
// brute force's; sorted when asked.
FZ_NOCOV static void ctx_compare(ctx_run *r, bool stopped) {
    if (r->sorted && !stopped)
        for (size_t k = 1; k < r->ngot; ++k) FZ_CHECK(r->got[k - 1] < r->got[k], k, r->ngot);
    memset(r->seen_bits, 0, (r->n * FZ_MAX_N / 64 + 1) * sizeof *r->seen_bits);
    for (size_t k = 0; k < r->ngot; ++k) {
        const uint64_t i = r->got[k] >> 32, j = r->got[k] & 0xffffffffu;
        FZ_CHECK(i < r->n && j < r->n, i, j);
        const size_t b = ctx_bit(r->got[k]);
        FZ_CHECK(r->want_bits[b / 64] >> (b % 64) & 1, i, j);
        FZ_CHECK(!(r->seen_bits[b / 64] >> (b % 64) & 1), i, j);
        r->seen_bits[b / 64] |= (uint64_t)1 << (b % 64);
    }
    if (stopped) return;
    if (getenv("FZ_VERBOSE")) {
        if (r->ngot) qsort(r->got, r->ngot, sizeof *r->got, cmp_u64);
        for (size_t k = 0, w = 0; k < r->ngot; ++k) {
            while (w < r->nwant && r->want[w] < r->got[k]) ++w;
            if (w < r->nwant && r->want[w] == r->got[k]) continue;
            const size_t i = (size_t)(r->got[k] >> 32), j = (size_t)(r->got[k] & 0xffffffffu);
            fprintf(stderr, "extra pair %zu %zu:", i, j);
            for (int e = 0; e < 2 * r->dim; ++e) fprintf(stderr, " %a/%a", r->boxes[2 * r->dim * i + e], r->boxes[2 * r->dim * j + e]);
            fprintf(stderr, "\n");
        }
    }
    FZ_CHECK(r->ngot == r->nwant, r->ngot, r->nwant);
}

// Boxes for a frame: the previous frame's with a few changed (coherence), or new ones.
static void ctx_boxes(ctx_run *r, fz *f, size_t n, bool keep) {
    const int d = r->dim, w = 2 * d;
    const size_t old = r->n;
    for (size_t k = 0; k < n; ++k) {
        float *b = r->boxes + (size_t)w * k;
        if (keep && k < old && (fz_u8(f) & 3) != 0) continue;
        const uint8_t how = fz_u8(f);
        if (how < 24 && k > 0) {
            memcpy(b, r->boxes + (size_t)w * (how % k), (size_t)w * sizeof *b);  // a duplicate
            continue;
        }
        for (int a = 0; a < d; ++a) {
            b[a] = fz_coord(f);
            b[d + a] = how >= 248 ? fz_coord(f) : b[a] + fz_extent(f);  // independent: maybe inverted
        }
    }
    r->n = n;
}

FZ_NOCOV static void ctx_brute(ctx_run *r, size_t na) {
    r->nwant = 0;
    memset(r->want_bits, 0, (r->n * FZ_MAX_N / 64 + 1) * sizeof *r->want_bits);
    for (size_t k = 0; k < r->n; ++k) ctx_adjusted(r, k, r->lo + 3 * k, r->hi + 3 * k);
    for (size_t i = 0; i < r->n; ++i)
        for (size_t j = i + 1; j < r->n; ++j) {
            if (na && !(i < na && j >= na)) continue;
            if (ctx_overlap(r, i, j)) {
                if (r->nwant == r->capwant) {
                    r->capwant = r->capwant ? 2 * r->capwant : 1024;
                    r->want = realloc(r->want, r->capwant * sizeof *r->want);
                    if (!r->want) abort();
                }
                r->want[r->nwant] = na ? (uint64_t)i << 32 | (j - na) : (uint64_t)i << 32 | j;
                const size_t b = ctx_bit(r->want[r->nwant++]);
                r->want_bits[b / 64] |= (uint64_t)1 << (b % 64);
            }
        }
}

// The three region queries, against brute force over the last successful call's boxes.
static void ctx_query(ctx_run *r, bp_context *ctx, fz *f, int have) {
    const int d = r->dim;
    float lo[3], hi[3], c[3];
    for (int a = 0; a < d; ++a) {
        lo[a] = fz_coord(f);
        hi[a] = lo[a] + fz_extent(f);
        c[a] = fz_coord(f);
    }
    const float radius = fz_extent(f) * ((fz_u8(f) & 1) ? 1.0f : -1.0f);
    const int kind = fz_u8(f) % 3;
    bp_indices out;
    bp_status st = kind == 0 ? bp_query_box(ctx, lo, hi, &out)
                 : kind == 1 ? bp_query_sphere(ctx, c, radius, &out)
                             : bp_query_point(ctx, c, &out);
    bool bad = false;
    for (int a = 0; a < d; ++a) {
        const float *v = kind == 0 ? lo : c;
        if (!isfinite(v[a]) || (kind == 0 && !isfinite(hi[a]))) bad = true;
    }
    if (kind == 0)
        for (int a = 0; a < d; ++a)
            if (!bad && lo[a] > hi[a]) {
                FZ_CHECK(st == BP_ERR_INVERTED_BOX || (have != 1 && st == BP_ERR_NO_BOXES), st, a);
                return;
            }
    if (bad) {
        // (A sphere with a bad centre and a negative radius has two errors; either may come.)
        FZ_CHECK(st == BP_ERR_NONFINITE || (have != 1 && st == BP_ERR_NO_BOXES) ||
                     (kind == 1 && radius < 0.0f && st == BP_ERR_NEGATIVE_RADIUS),
                 st, kind);
        return;
    }
    if (kind == 1 && radius < 0.0f) {
        FZ_CHECK(st == BP_ERR_NEGATIVE_RADIUS || (have != 1 && st == BP_ERR_NO_BOXES), st, kind);
        return;
    }
    if (have != 1 && st == BP_ERR_NO_BOXES) return;
    FZ_CHECK(have != 0 || st == BP_ERR_NOMEM, st, kind);
    if (st == BP_ERR_NOMEM) return;
    FZ_CHECK(st == BP_OK, st, kind);
    size_t m = 0;
    for (size_t k = 0; k < r->n; ++k) {
        const float *b = r->boxes + (size_t)(2 * d) * k;
        bool hit = true;
        if (kind == 0) {
            for (int a = 0; a < d; ++a) hit = hit && b[a] <= hi[a] && lo[a] <= b[d + a];
        } else if (kind == 2) {
            for (int a = 0; a < d; ++a) hit = hit && b[a] <= c[a] && c[a] <= b[d + a];
        } else {
            hit = fz_sphere_hit(c, radius, b, d);
        }
        if (hit != (m < out.count && out.indices[m] == k) && getenv("FZ_VERBOSE")) {
            fprintf(stderr, "query kind %d box %zu %s: lo/c", kind, k, hit ? "missing" : "extra");
            for (int a = 0; a < d; ++a) fprintf(stderr, " %a/%a", lo[a], c[a]);
            fprintf(stderr, " hi");
            for (int a = 0; a < d; ++a) fprintf(stderr, " %a", hi[a]);
            fprintf(stderr, " r %a box", radius);
            for (int e = 0; e < 2 * d; ++e) fprintf(stderr, " %a", b[e]);
            fprintf(stderr, "\nhave %d, n %zu:\n", have, r->n);
            for (size_t q = 0; q < r->n; ++q) {
                for (int e = 0; e < 2 * d; ++e) fprintf(stderr, " %a", r->boxes[(size_t)(2 * d) * q + e]);
                fprintf(stderr, "\n");
            }
        }
        if (hit) {
            FZ_CHECK(m < out.count && out.indices[m] == k, m, k);
            ++m;
        }
    }
    FZ_CHECK(m == out.count, m, out.count);
}

static ctx_run g_run;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f = {data, size};
    ctx_run *r = &g_run;
    r->ngot = 0;
    r->n = 0;
    bp_context_def def = bp_default_context_def();
    const uint8_t h0 = fz_u8(&f), h1 = fz_u8(&f), h2 = fz_u8(&f), h3 = fz_u8(&f);
    def.dimension = 2 + (h0 & 1);
    def.method = (bp_method)((h0 >> 1) % BP_METHOD_COUNT);
    def.sort_pairs = (h0 >> 4) & 1;
    def.sweep.axis = (int)((h1 & 3) % (unsigned)(def.dimension + 1)) - 1;
    def.sweep.coherence = (h1 >> 2) & 1;
    static const float cells[8] = {0.0f, 0.0f, 1e-3f, 0.25f, 1.0f, 4.25f, 100.0f, 1e30f};
    def.grid.cell_size = cells[(h1 >> 3) & 7];
    def.grid.layout = (bp_grid_layout)((h1 >> 6) % 3);
    static const int levels[8] = {0, 0, 1, 2, 5, 10, 16, 30};
    def.quadtree.levels = levels[h2 & 7];
    def.quadtree.loose = (h2 >> 3) & 1;
    def.quadtree.fixed_world = (h2 >> 4) & 1;
    for (int a = 0; a < 3; ++a) {
        def.quadtree.world_min[a] = -30.0f;
        def.quadtree.world_max[a] = (h2 >> 5) & 1 ? 1e30f : 30.0f;
    }
    static const uint32_t thresholds[4] = {0, 1, 2, 1000};
    def.rdc.threshold = thresholds[(h2 >> 6) & 3];
    static const float epss[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.25f, -0.25f, 1e-3f, -1e30f};
    def.rdc.epsilon = epss[h3 & 7];
    if ((h3 >> 3) % 8 == 7 && (h2 & 1)) {  // 1 in 16: parallel passes are slower
        def.parallel_min = 1;
        fz_workers(&f, 2 + (h3 >> 7), &def.workers, &def.enqueue_task, &def.finish_task, &def.task_user);
    }
    fz_alloc al = {0, 0, 0, 0, 0};
    if ((h3 >> 6) & 1) {
        al.fail_at = 1 + fz_u8(&f);
        al.fail_every = fz_u8(&f) % 8;
    }
    def.allocator = fz_allocator(&al);
    r->dim = def.dimension;
    r->sorted = def.sort_pairs;
    r->eps = def.method == BP_METHOD_RDC ? def.rdc.epsilon : 0.0f;
    if (!bp_method_available(def.method)) return 0;
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(&def, &ctx);
    if (st == BP_ERR_NOMEM) {
        FZ_CHECK(al.blocks == 0 && al.bytes == 0, al.blocks, al.bytes);
        return 0;
    }
    FZ_CHECK(st == BP_OK, st, 0);
    // 1: the last call succeeded and queries answer against its boxes; 0: it failed (queries
    // answer BP_ERR_NO_BOXES); 2: it was stopped by the callback (either).
    int have = 0;
    for (int call = 0; call < 12 && f.n; ++call) {
        const uint8_t op = fz_u8(&f);
        if (op % 5 == 4) {
            ctx_query(r, ctx, &f, have);
            continue;
        }
        // A frame: n changing, mostly small, now and then up to FZ_MAX_N.
        size_t n = fz_u8(&f);
        if (n >= 248) n = 150 + (n - 248) * 12;  // up to 234: crowded cells, full pair buffers
        else n %= 40;
        if (n > FZ_MAX_N) n = FZ_MAX_N;
        ctx_boxes(r, &f, n, (op >> 3) & 1);
        const int mode = op % 4;  // 0, 1 buffer; 2 callback; 3 bipartite
        size_t na = 0;
        if (mode == 3) na = n ? 1 + fz_u8(&f) % n : 0;
        bool either;
        bp_status want = ctx_expected(r, &either);
        r->ngot = 0;
        r->batches = 0;
        r->batch_bad = false;
        r->stop_after = mode == 2 && ((op >> 4) & 1) ? 1 + (op >> 5) % 3 : 0;
        bp_pairs out = {NULL, 0};
        const float *v = r->boxes;
        if (mode == 2) {
            st = r->dim == 2 ? bp_find_pairs2_cb(ctx, (const bp_box2 *)(const void *)v, n, ctx_batch, r)
                             : bp_find_pairs3_cb(ctx, (const bp_box3 *)(const void *)v, n, ctx_batch, r);
        } else if (mode == 3) {
            const float *vb = v + (size_t)(2 * r->dim) * na;
            st = r->dim == 2 ? bp_find_pairs_between2(ctx, (const bp_box2 *)(const void *)v, na,
                                                      (const bp_box2 *)(const void *)vb, n - na, &out)
                             : bp_find_pairs_between3(ctx, (const bp_box3 *)(const void *)v, na,
                                                      (const bp_box3 *)(const void *)vb, n - na, &out);
        } else {
            st = r->dim == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)v, n, &out)
                             : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)v, n, &out);
        }
        if (want != BP_OK) {
            // (The boxes are checked while they are copied, so a refused allocation may come first.)
            FZ_CHECK(st == want || (either && (st == BP_ERR_NONFINITE || st == BP_ERR_INVERTED_BOX)) ||
                         (st == BP_ERR_NOMEM && al.fail_at),
                     st, want);
            FZ_CHECK(r->ngot == 0, r->ngot, st);
            have = 0;
            continue;
        }
        if (st == BP_ERR_NOMEM) {
            have = 0;
            const bp_status vs = bp_validate(ctx);
            FZ_CHECK(vs == BP_ERR_NO_BOXES || vs == BP_OK || vs == BP_ERR_NOMEM, vs, 0);
            continue;
        }
        const bool stopped = st == BP_ERR_STOPPED;
        FZ_CHECK(st == BP_OK || (stopped && r->stop_after), st, r->stop_after);
        FZ_CHECK(!r->batch_bad || stopped, r->batches, r->last_batch);
        if (mode != 2)
            for (size_t k = 0; k < out.count; ++k) ctx_push(r, out.pairs[k].i, out.pairs[k].j);
        ctx_brute(r, mode == 3 ? na : 0);
        ctx_compare(r, stopped);
        have = stopped ? 2 : 1;
        bp_status vs = bp_validate(ctx);  // (it may allocate: a refused allocation is no finding)
        FZ_CHECK(vs == BP_OK || vs == BP_ERR_NOMEM, vs, st);
        bp_stats stats;
        FZ_CHECK(bp_get_stats(ctx, &stats) == BP_OK, 0, 0);
        FZ_CHECK(stats.n == n, stats.n, n);
        FZ_CHECK(stats.pairs == r->ngot, stats.pairs, r->ngot);
        FZ_CHECK(stats.bytes == al.bytes, stats.bytes, al.bytes);
    }
    bp_context_destroy(ctx);
    FZ_CHECK(al.blocks == 0 && al.bytes == 0, al.blocks, al.bytes);
    return 0;
}
