// Brute force: every pair tested, the oracle every other method is checked against, and the
// fastest method for a few dozen boxes. The boxes are first split into structure-of-arrays so
// the inner loop streams four (six) float arrays and tests without branches until a hit.
#include <stdlib.h>

#include "method.h"

typedef struct bp_brute {
    bp_algorithm base;
    float *soa;  // 2 * dim arrays of n floats: min[0], ..., min[dim-1], max[0], ...
    size_t soa_cap;
} bp_brute;

static bp_status brute_create(bp_context *ctx, bp_algorithm **out) {
    bp_brute *b = bp_alloc(ctx, sizeof *b);
    if (!b) return BP_ERR_NOMEM;
    memset(b, 0, sizeof *b);
    *out = &b->base;
    return BP_OK;
}

static void brute_destroy(bp_algorithm *m) {
    bp_brute *b = (bp_brute *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, b->soa, b->soa_cap);
    bp_free(ctx, b, sizeof *b);
}

static void brute_reset(bp_algorithm *m) { (void)m; }

// Tests box i against boxes [j0, j1) and pushes the hits.
static inline bp_status brute_row2(const float *BP_RESTRICT s, size_t n, size_t i, size_t j0, size_t j1,
                                   bp_sink *sink) {
    const float *x0 = s, *y0 = s + n, *x1 = s + 2 * n, *y1 = s + 3 * n;
    const float ax0 = x0[i], ay0 = y0[i], ax1 = x1[i], ay1 = y1[i];
    for (size_t j = j0; j < j1; ++j) {
        int hit = (x0[j] <= ax1) & (ax0 <= x1[j]) & (y0[j] <= ay1) & (ay0 <= y1[j]);
        if (BP_UNLIKELY(hit)) {
            bp_status st = bp_sink_push(sink, (uint32_t)i, (uint32_t)j);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

static inline bp_status brute_row3(const float *BP_RESTRICT s, size_t n, size_t i, size_t j0, size_t j1,
                                   bp_sink *sink) {
    const float *x0 = s, *y0 = s + n, *z0 = s + 2 * n, *x1 = s + 3 * n, *y1 = s + 4 * n, *z1 = s + 5 * n;
    const float ax0 = x0[i], ay0 = y0[i], az0 = z0[i], ax1 = x1[i], ay1 = y1[i], az1 = z1[i];
    for (size_t j = j0; j < j1; ++j) {
        int hit = (x0[j] <= ax1) & (ax0 <= x1[j]) & (y0[j] <= ay1) & (ay0 <= y1[j]) & (z0[j] <= az1) &
                  (az0 <= z1[j]);
        if (BP_UNLIKELY(hit)) {
            bp_status st = bp_sink_push(sink, (uint32_t)i, (uint32_t)j);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

static bp_status brute_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_brute *b = (bp_brute *)m;
    const size_t n = f->n;
    const int d = f->dim;
    BP_RESERVE_DISCARD(m->ctx, b->soa, b->soa_cap, n * (size_t)(2 * d) + 1);
    for (size_t k = 0; k < n; ++k) {
        const float *box = bp_frame_box(f, k);
        for (int a = 0; a < 2 * d; ++a) b->soa[(size_t)a * n + k] = box[a];
    }
    // Bipartite: only A (below the split) against B (from the split on).
    const size_t rows = f->split ? f->split : n;
    uint64_t c = 0;
    for (size_t i = 0; i < rows; ++i) {
        const size_t j0 = f->split ? f->split : i + 1;
        bp_status st = d == 2 ? brute_row2(b->soa, n, i, j0, n, sink) : brute_row3(b->soa, n, i, j0, n, sink);
        if (st != BP_OK) return st;
        c += n - j0;
    }
    *checks += c;
    return BP_OK;
}

const bp_algorithm_class bp_brute_class = {
    .name = "brute",
    .create = brute_create,
    .destroy = brute_destroy,
    .find_pairs = brute_find_pairs,
    .reset = brute_reset,
    .query = NULL,  // a scan of every box is what the context does without a structure
    .debug_draw = NULL,
    .validate = NULL,
};
