// Brute force: every pair tested, the oracle every other method is checked against, and the
// fastest method for a few dozen boxes. The boxes are first split into structure-of-arrays so
// the inner loop streams four (six) float arrays, 4 or 8 boxes per step (SSE2, AVX2 at run time),
// and tests without branches until a hit.
#include <math.h>
#include <stdlib.h>

#include "method.h"
#include "par.h"

typedef struct bp_brute {
    bp_algorithm base;
    float *soa;  // 2 * dim arrays of n + BRUTE_PAD floats: min[0], ..., min[dim-1], max[0], ...
    size_t soa_cap;
} bp_brute;

static void brute_destroy(bp_algorithm *m) {
    bp_brute *b = (bp_brute *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, b->soa, b->soa_cap);
    bp_free(ctx, b, sizeof *b);
}

static void brute_reset(bp_algorithm *m) { (void)m; }

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX2)
#define BRUTE_AVX2 1
#include <immintrin.h>
#endif

// The soa arrays hold n boxes and then BRUTE_PAD boxes that meet nothing (min = +inf), so that
// rows are tested in whole blocks of 4 or 8 with no tail loop.
#define BRUTE_PAD 8

// Rows [r0, r1) against [j0, n) each, j0 = split (bipartite) or i + 1. DIM is a constant in each
// instantiation. The tests are branch-free; a block's hits go out through bp_sink_put.
static inline bp_status brute_rows(const float *BP_RESTRICT s, size_t st, size_t n, size_t r0, size_t r1,
                                   size_t split, const int DIM, bp_sink *sink) {
    for (size_t i = r0; i < r1; ++i) {
        const size_t j0 = split ? split : i + 1;
#if defined(__SSE2__)
        __m128 amin[3], amax[3];
        for (int a = 0; a < DIM; ++a) {
            amin[a] = _mm_set1_ps(s[(size_t)a * st + i]);
            amax[a] = _mm_set1_ps(s[(size_t)(DIM + a) * st + i]);
        }
        for (size_t j = j0; j < n; j += 4) {
            __m128 m = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(s + j), amax[0]),
                                  _mm_cmple_ps(amin[0], _mm_loadu_ps(s + (size_t)DIM * st + j)));
            for (int a = 1; a < DIM; ++a)
                m = _mm_and_ps(m, _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(s + (size_t)a * st + j), amax[a]),
                                             _mm_cmple_ps(amin[a], _mm_loadu_ps(s + (size_t)(DIM + a) * st + j))));
            const unsigned hits = (unsigned)_mm_movemask_ps(m);
            if (BP_UNLIKELY(hits)) {
                bp_status r = bp_sink_room(sink, 4);
                if (r != BP_OK) return r;
                for (unsigned b = 0; b < 4; ++b) bp_sink_put(sink, (uint32_t)i, (uint32_t)(j + b), (hits >> b) & 1u);
            }
        }
#else
        for (size_t j = j0; j < n; ++j) {
            int hit = 1;
            for (int a = 0; a < DIM; ++a)
                hit &= (s[(size_t)a * st + j] <= s[(size_t)(DIM + a) * st + i]) &
                       (s[(size_t)a * st + i] <= s[(size_t)(DIM + a) * st + j]);
            if (BP_UNLIKELY(hit)) {
                bp_status r = bp_sink_push(sink, (uint32_t)i, (uint32_t)j);
                if (r != BP_OK) return r;
            }
        }
#endif
    }
    return BP_OK;
}

#if defined(BRUTE_AVX2)
// The same rows, eight boxes per step.
__attribute__((target("avx2"))) static inline bp_status brute_rows_avx2(const float *BP_RESTRICT s, size_t st,
                                                                       size_t n, size_t r0, size_t r1, size_t split,
                                                                       const int DIM, bp_sink *sink) {
    for (size_t i = r0; i < r1; ++i) {
        const size_t j0 = split ? split : i + 1;
        __m256 amin[3], amax[3];
        for (int a = 0; a < DIM; ++a) {
            amin[a] = _mm256_set1_ps(s[(size_t)a * st + i]);
            amax[a] = _mm256_set1_ps(s[(size_t)(DIM + a) * st + i]);
        }
        for (size_t j = j0; j < n; j += 8) {
            __m256 m = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(s + j), amax[0], _CMP_LE_OQ),
                                     _mm256_cmp_ps(amin[0], _mm256_loadu_ps(s + (size_t)DIM * st + j), _CMP_LE_OQ));
            for (int a = 1; a < DIM; ++a)
                m = _mm256_and_ps(
                    m, _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(s + (size_t)a * st + j), amax[a], _CMP_LE_OQ),
                                     _mm256_cmp_ps(amin[a], _mm256_loadu_ps(s + (size_t)(DIM + a) * st + j),
                                                   _CMP_LE_OQ)));
            const unsigned hits = (unsigned)_mm256_movemask_ps(m);
            if (BP_UNLIKELY(hits)) {
                bp_status r = bp_sink_room(sink, 8);
                if (r != BP_OK) return r;
                for (unsigned b = 0; b < 8; ++b) bp_sink_put(sink, (uint32_t)i, (uint32_t)(j + b), (hits >> b) & 1u);
            }
        }
    }
    return BP_OK;
}

__attribute__((target("avx2"))) static bp_status brute_avx2_2(const float *s, size_t st, size_t n, size_t r0,
                                                             size_t r1, size_t split, bp_sink *sink) {
    return brute_rows_avx2(s, st, n, r0, r1, split, 2, sink);
}
__attribute__((target("avx2"))) static bp_status brute_avx2_3(const float *s, size_t st, size_t n, size_t r0,
                                                             size_t r1, size_t split, bp_sink *sink) {
    return brute_rows_avx2(s, st, n, r0, r1, split, 3, sink);
}
#endif

typedef struct brute_job {
    const float *soa;
    size_t st, n, rows, split;
    int dim;
} brute_job;

// Row where the share x of the pair tests begins: all-pairs rows get shorter (row i tests n - i -
// 1 boxes), so equal shares of the work are rows n - sqrt(n (n - x)) for x in [0, n); bipartite
// rows all test the same boxes.
static size_t brute_row_at(const brute_job *j, size_t x) {
    if (x == 0) return 0;
    if (x >= j->n) return j->rows;
    if (j->split) return x * j->rows / j->n;
    const double n = (double)j->n;
    const double r = n - sqrt(n * (n - (double)x));
    size_t row = (size_t)r;
    return row < j->rows ? row : j->rows;
}

// The rows of work shares [x0, x1) of n (a task's part with workers).
static bp_status brute_part(void *user, size_t x0, size_t x1, uint32_t worker, bp_sink *sink, uint64_t *checks) {
    (void)worker;
    const brute_job *j = user;
    const size_t r0 = brute_row_at(j, x0), r1 = brute_row_at(j, x1);
    uint64_t c = 0;
    for (size_t i = r0; i < r1; ++i) c += j->n - (j->split ? j->split : i + 1);
    *checks += c;
#if defined(BRUTE_AVX2)
    if (bp_cpu_avx2())
        return j->dim == 2 ? brute_avx2_2(j->soa, j->st, j->n, r0, r1, j->split, sink)
                           : brute_avx2_3(j->soa, j->st, j->n, r0, r1, j->split, sink);
#endif
    return j->dim == 2 ? brute_rows(j->soa, j->st, j->n, r0, r1, j->split, 2, sink)
                       : brute_rows(j->soa, j->st, j->n, r0, r1, j->split, 3, sink);
}

static bp_status brute_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_brute *b = (bp_brute *)m;
    const size_t n = f->n;
    const int d = f->dim;
    const size_t st = n + BRUTE_PAD;
    BP_RESERVE_DISCARD(m->ctx, b->soa, b->soa_cap, st * (size_t)(2 * d));
    float *soa = b->soa;
    for (size_t k = 0; k < n; ++k) {
        const float *box = bp_frame_box(f, k);
        for (int a = 0; a < 2 * d; ++a) soa[(size_t)a * st + k] = box[a];
    }
    for (int a = 0; a < 2 * d; ++a)
        for (size_t k = n; k < st; ++k) soa[(size_t)a * st + k] = a < d ? INFINITY : -INFINITY;
    // Bipartite: only A (below the split) against B (from the split on).
    brute_job j = {soa, st, n, f->split ? f->split : n, f->split, d};
    return bp_par_pairs(m->ctx, sink, n, BP_PAR_GRAIN_PAIRS / 4, brute_part, &j, checks);
}

const bp_algorithm_class bp_brute_class = {
    .name = "brute",
    .size = sizeof(bp_brute),
    .destroy = brute_destroy,
    .find_pairs = brute_find_pairs,
    .reset = brute_reset,
    .visit = NULL,  // every box is what the context visits without a structure
    .debug_draw = NULL,
    .validate = NULL,
};
