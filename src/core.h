// Internal core shared by the context and every method: the frame (validated boxes), the pair
// sink, the index buffer and allocation through the context's hooks. Never installed.
#ifndef BP_CORE_H
#define BP_CORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "broadphase.h"
#include "sort.h"

#if defined(__GNUC__)
#define BP_LIKELY(x) __builtin_expect(!!(x), 1)
#define BP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BP_RESTRICT __restrict__
#else
#define BP_LIKELY(x) (x)
#define BP_UNLIKELY(x) (x)
#define BP_RESTRICT
#endif

// Boxes are read as flat float arrays: min[0..dim) then max[0..dim).
_Static_assert(sizeof(bp_box2) == 4 * sizeof(float) && offsetof(bp_box2, max) == 2 * sizeof(float), "bp_box2 layout");
_Static_assert(sizeof(bp_box3) == 6 * sizeof(float) && offsetof(bp_box3, max) == 3 * sizeof(float), "bp_box3 layout");

/// The boxes of one call, validated and copied into the context. Box k is `2 * dim` floats at
/// `boxes + k * 2 * dim`: min[0..dim), then max[0..dim). Statistics are gathered in the same pass.
typedef struct bp_frame {
    int dim;
    size_t n;
    size_t split;          // bipartite: only pairs (i < split <= j) are wanted; 0 = all pairs
    const float *boxes;
    float lo[3], hi[3];    // bounds of all boxes (valid when n > 0)
    // The sums are computed only for AUTO and for methods whose class sets frame_sums.
    double size_sum[3];    // sum of extents per axis
    double center_sum[3];  // sum of (min + max) / 2 per axis
    double center_sq[3];   // sum of squared centres per axis
    float size_max[3];     // largest extent per axis
    uint64_t frame;        // counts successful calls on the context (1 for the first)
} bp_frame;

static inline const float *bp_frame_box(const bp_frame *f, size_t k) {
    return f->boxes + k * (size_t)(2 * f->dim);
}

/// bp_axis_cost (sort.h) of a frame's boxes on axis a (f->n > 0), from the sums the load gathers
/// when the method's class sets frame_sums (or under AUTO): mean extent over the centres' spread.
static inline double bp_frame_axis_cost(const bp_frame *f, int a) {
    const double n = (double)f->n;
    return bp_axis_cost(f->size_sum[a] / n, bp_axis_spread(n, f->center_sum[a], f->center_sq[a]));
}

// A sample of the frame to judge its shape (the grid's cells, the quadtree's world): box j of
// BP_SAMPLE spread evenly over the input, or every box of a smaller frame.
#define BP_SAMPLE 64
static inline size_t bp_sample_size(const bp_frame *f) { return f->n < BP_SAMPLE ? f->n : BP_SAMPLE; }
static inline const float *bp_sample_box(const bp_frame *f, size_t j) {
    const size_t s = bp_sample_size(f);
    return bp_frame_box(f, s == f->n ? j : (size_t)((uint64_t)j * f->n / s));
}

// The sample's centres on axis a, sorted (cen: BP_SAMPLE entries); returns how many.
static inline size_t bp_sample_centres(const bp_frame *f, int a, double *cen) {
    const size_t s = bp_sample_size(f);
    for (size_t j = 0; j < s; ++j) {
        const float *b = bp_sample_box(f, j);
        cen[j] = 0.5 * ((double)b[a] + (double)b[f->dim + a]);
    }
    bp_sort_doubles(cen, s);
    return s;
}

// The bulk of the boxes on an axis from the sorted sample centres: their 5% and 95% quantiles.
static inline void bp_sample_quantiles(const double *cen, size_t s, double *qlo, double *qhi) {
    *qlo = s ? cen[s / 20] : 0.0;
    *qhi = s ? cen[s - 1 - s / 20] : 0.0;
}

// A window that cuts far boxes (outliers) off: the bulk [qlo, qhi] grown by its span on each
// side, within the frame's bounds [lo, hi].
static inline void bp_bulk_window(double lo, double hi, double qlo, double qhi, double *wlo, double *whi) {
    const double w = qhi - qlo;
    *wlo = fmax(lo, qlo - w);
    *whi = fmin(hi, qhi + w);
}

#if defined(__x86_64__) && defined(__GNUC__)
/// Run-time checks for the SIMD loops compiled with target attributes (src/brute.c,
/// sweep_kernel.c, context.c, grid_table.c): one test of libgcc's CPU model, cheap per call.
static inline bool bp_cpu_avx2(void) { return __builtin_cpu_supports("avx2"); }
static inline bool bp_cpu_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#endif

/// Pairs flow from methods through a sink: a buffer that either grows (buffer mode) or is
/// handed to the user's callback when full (callback mode).
typedef struct bp_sink bp_sink;
struct bp_sink {
    bp_pair *buf;
    size_t count, cap;
    uint32_t split;   // bipartite: drop pairs on one side; 0 = keep all
    bp_status (*flush)(bp_sink *s);  // called when count == cap; makes room or fails
    bp_context *ctx;
    bp_pair_fn *fn;
    void *user;
    uint64_t delivered;
    // Streamed buffer mode (large outputs, context.c): `buf` is a small staging chunk, and whole
    // 64-byte lines of 8 pairs go to `lines` (the pair buffer, 64-byte aligned) at `delivered`,
    // written with non-temporal stores. NULL in the other modes.
    bp_pair *lines;
    size_t lines_cap;
};

/// Streamed mode: makes room for one more line of 8 pairs at lines + delivered.
bp_status bp_sink_grow_lines(bp_sink *s);

/// For pairs found by workers (src/par.c), in order: canonical and filtered already. Buffer mode:
/// makes room for `count` more pairs and returns where they go (the caller writes them, then adds
/// `count` to s->count); NULL in the other modes (or with *st = BP_ERR_NOMEM), where
/// bp_sink_append delivers them instead.
bp_pair *bp_sink_claim(bp_sink *s, size_t count, bp_status *st);

/// Appends `count` such pairs as if they were pushed one by one (callback batches included).
bp_status bp_sink_append(bp_sink *s, const bp_pair *pairs, size_t count);

/// Whether the sink collects every pair of the call (buffer mode: bp_sink_claim works) rather
/// than handing batches to a callback.
bool bp_sink_buffered(const bp_sink *s);

/// Pushes one pair (either orientation). Returns BP_OK or the flush's error, which the method
/// must return at once.
static inline bp_status bp_sink_push(bp_sink *s, uint32_t a, uint32_t b) {
    if (BP_UNLIKELY(s->split) && ((a < s->split) == (b < s->split))) return BP_OK;
    bp_pair p;
    p.i = a < b ? a : b;
    p.j = a < b ? b : a;
    s->buf[s->count++] = p;
    if (BP_UNLIKELY(s->count == s->cap)) return s->flush(s);
    return BP_OK;
}

/// Room a flush always leaves (the callback batch is larger than this).
#define BP_SINK_MIN_ROOM 64

/// Makes room for `k` (at most BP_SINK_MIN_ROOM) more pairs, flushing if needed, so that hot
/// loops can then write with bp_sink_put and no per-pair capacity test. The sink's invariant is
/// count < cap between pushes (bp_sink_push writes first and flushes at cap), so the room kept
/// is k plus one: k unchecked writes that all hit must not leave the buffer full without a flush
/// (issue #17: the grid's table layout filled it to the last slot, and the next push wrote past
/// the end).
static inline bp_status bp_sink_room(bp_sink *s, size_t k) {
    if (BP_UNLIKELY(s->cap - s->count <= k)) return s->flush(s);
    return BP_OK;
}

/// Writes a candidate pair without a capacity test (room reserved with bp_sink_room) and keeps
/// it when `keep` is 1: a branchless way to compact the hits of a SIMD block. The slot is
/// written even when the pair is not kept.
static inline void bp_sink_put(bp_sink *s, uint32_t a, uint32_t b, unsigned keep) {
    bp_pair p;
    p.i = a < b ? a : b;
    p.j = a < b ? b : a;
    s->buf[s->count] = p;
    keep &= (unsigned)(!s->split | ((a < s->split) != (b < s->split)));
    s->count += keep;
}

/// A growable array of box indices (query results).
typedef struct bp_index_buf {
    uint32_t *data;
    size_t count, cap;
    bp_context *ctx;
} bp_index_buf;

bp_status bp_index_grow(bp_index_buf *b);

static inline bp_status bp_index_push(bp_index_buf *b, uint32_t k) {
    if (BP_UNLIKELY(b->count == b->cap)) {
        bp_status st = bp_index_grow(b);
        if (st != BP_OK) return st;
    }
    b->data[b->count++] = k;
    return BP_OK;
}

/// Allocation through the context's hooks, counted. Sizes are bytes; alignment 64.
void *bp_alloc(bp_context *ctx, size_t size);
void bp_free(bp_context *ctx, void *p, size_t size);

/// Grows an array to at least `need` elements of `elem` bytes; `*cap` counts elements. At least
/// doubles, so a warm caller with the same need allocates nothing. `keep`: copy the old contents.
/// Returns the new array, or on failure `old` unchanged with *st = BP_ERR_NOMEM (and *cap as it
/// was). Use it through BP_RESERVE, which keeps the pointer typed.
void *bp_grow(bp_context *ctx, void *old, size_t *cap, size_t need, size_t elem, bool keep, bp_status *st);

/// For validators: BP_OK when perm[0..n) holds every index below n exactly once,
/// BP_ERR_INVALID_ARG when not, BP_ERR_NOMEM when its bitmap cannot be allocated.
bp_status bp_check_permutation(bp_context *ctx, const uint32_t *perm, size_t n);

/// Reserves `need` elements in typed array `arr` (capacity `cap`), keeping its contents; returns
/// the error from the enclosing function on failure.
#define BP_RESERVE(ctx, arr, cap, need)                                                        \
    do {                                                                                       \
        bp_status bp_st_ = BP_OK;                                                              \
        (arr) = bp_grow((ctx), (arr), &(cap), (need), sizeof *(arr), true, &bp_st_);           \
        if (bp_st_ != BP_OK) return bp_st_;                                                    \
    } while (0)

/// As BP_RESERVE, but the old contents may be lost (no copy when growing).
#define BP_RESERVE_DISCARD(ctx, arr, cap, need)                                                \
    do {                                                                                       \
        bp_status bp_st_ = BP_OK;                                                              \
        (arr) = bp_grow((ctx), (arr), &(cap), (need), sizeof *(arr), false, &bp_st_);          \
        if (bp_st_ != BP_OK) return bp_st_;                                                    \
    } while (0)

/// Frees an array grown with BP_RESERVE and zeroes it and its capacity.
#define BP_RELEASE(ctx, arr, cap)                                                              \
    do {                                                                                       \
        bp_free((ctx), (arr), (cap) * sizeof *(arr));                                          \
        (arr) = NULL;                                                                          \
        (cap) = 0;                                                                             \
    } while (0)

/// The context's definition (defaults resolved).
const bp_context_def *bp_context_def_of(const bp_context *ctx);

#endif
