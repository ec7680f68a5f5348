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

/// A growable array of box indices (query results).
typedef struct bp_heap bp_heap;  // below

typedef struct bp_index_buf {
    uint32_t *data;
    size_t count, cap;
    bp_heap *heap;
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

typedef struct bp_pool bp_pool;

/// An account of allocations through the user's hooks: the hooks, the live bytes, and the lock
/// that keeps the hooks to one thread at a time while workers run (a pool; NULL: none). What the
/// context and the world allocate through.
typedef struct bp_heap {
    bp_allocator alloc;
    size_t bytes;
    bp_pool *lock;
#ifndef NDEBUG
    // Debug builds: the live blocks, to catch hooks that hand out a block twice (src/alloc.c);
    // tracking stops when more are live than this holds.
    void *debug_live[256];
    uint32_t debug_nlive;
    bool debug_untracked;
#endif
} bp_heap;

typedef struct bp_par_block bp_par_block;  // src/par.c
typedef struct bp_par_seg bp_par_seg;      // src/par.c

/// The workers' state of a context (src/par.c): the pool, whether this call uses it, and what
/// the parallel passes keep between calls.
typedef struct bp_par_state {
    bp_pool *pool;          // NULL without workers
    bool par;               // this call may run in parallel (pool and n >= par_min)
    bool par_pairs;         // and its pair pass too (not when the output bounds it)
    size_t par_min;         // calls with fewer boxes stay serial
    size_t par_grain;       // 0, or the smallest task when def.parallel_min asks for small ones
    bp_par_block **blocks;  // the pair passes' pool of blocks, handed out anew each pass
    size_t nblocks, blocks_cap;
    bp_par_block *blocks_all;  // every block the context holds (some not yet in the pool)
    bp_par_block **order;   // one pass's blocks in output order (the merge's items)
    size_t order_cap;
    bp_par_seg *segs;       // one per task of a pair pass
    size_t segs_cap;
    uint32_t *hist;         // radix histograms, per task
    size_t hist_cap;
    uint64_t *scratch;      // bp_par_scratch
    size_t scratch_cap;
} bp_par_state;

/// What the parts below the entry points share of a context (allocation, the definition, the
/// workers): the first member of bp_context (src/context.h), so that src/alloc.c, src/par.c and
/// the methods reach it from a bp_context pointer without knowing the context's layout.
typedef struct bp_core {
    bp_context_def def;     // as created, defaults resolved
    bp_heap heap;           // the hooks and the live bytes, the context itself included
    bp_par_state par;
} bp_core;

static inline bp_core *bp_core_of(bp_context *ctx) { return (bp_core *)(void *)ctx; }
static inline const bp_core *bp_core_of_const(const bp_context *ctx) { return (const bp_core *)(const void *)ctx; }

/// The context's definition (defaults resolved).
static inline const bp_context_def *bp_context_def_of(const bp_context *ctx) { return &bp_core_of_const(ctx)->def; }


/// Starts an account with hooks `al` (resolved: never NULL) and its owner's block `self` of
/// `size` bytes, allocated through them already (counted, and tracked in debug builds).
void bp_heap_init(bp_heap *h, const bp_allocator *al, void *self, size_t size);

/// Allocation through a heap's hooks, counted. Sizes are bytes; alignment 64.
void *bp_heap_alloc(bp_heap *h, size_t size);
void bp_heap_free(bp_heap *h, void *p, size_t size);

/// Allocation through the context's heap.
void *bp_alloc(bp_context *ctx, size_t size);
void bp_free(bp_context *ctx, void *p, size_t size);

/// Grows an array to at least `need` elements of `elem` bytes; `*cap` counts elements. At least
/// doubles, so a warm caller with the same need allocates nothing. `keep`: copy the old contents.
/// Returns the new array, or on failure `old` unchanged with *st = BP_ERR_NOMEM (and *cap as it
/// was). Use it through BP_RESERVE, which keeps the pointer typed.
void *bp_heap_grow(bp_heap *h, void *old, size_t *cap, size_t need, size_t elem, bool keep, bp_status *st);
/// bp_heap_grow through the context's heap.
void *bp_grow(bp_context *ctx, void *old, size_t *cap, size_t need, size_t elem, bool keep, bp_status *st);

/// For validators: BP_OK when perm[0..n) holds every index below n exactly once,
/// BP_ERR_INVALID_ARG when not, BP_ERR_NOMEM when its bitmap cannot be allocated.
bp_status bp_check_permutation(bp_context *ctx, const uint32_t *perm, size_t n);

// The array macros below take a context or a heap.
#define BP_GROW_IN(h) _Generic((h), bp_heap *: bp_heap_grow, default: bp_grow)
#define BP_FREE_IN(h) _Generic((h), bp_heap *: bp_heap_free, default: bp_free)

/// Reserves `need` elements in typed array `arr` (capacity `cap`), keeping its contents when
/// `keep`; returns the error from the enclosing function on failure.
#define BP_RESERVE_AS(ctx, arr, cap, need, keep)                                               \
    do {                                                                                       \
        bp_status bp_st_ = BP_OK;                                                              \
        (arr) = BP_GROW_IN(ctx)((ctx), (arr), &(cap), (need), sizeof *(arr), (keep), &bp_st_); \
        if (bp_st_ != BP_OK) return bp_st_;                                                    \
    } while (0)

/// Swaps two arrays grown with BP_RESERVE, pointers and capacities (a double buffer's halves).
#define BP_SWAP_ARRAYS(a, acap, b, bcap)  \
    do {                                  \
        void *bp_t_ = (a);                \
        (a) = (b);                        \
        (b) = bp_t_;                      \
        const size_t bp_c_ = (acap);      \
        (acap) = (bcap);                  \
        (bcap) = bp_c_;                   \
    } while (0)

/// BP_RESERVE_AS keeping the contents.
#define BP_RESERVE(ctx, arr, cap, need) BP_RESERVE_AS(ctx, arr, cap, need, true)

/// As BP_RESERVE, but the old contents may be lost (no copy when growing).
#define BP_RESERVE_DISCARD(ctx, arr, cap, need) BP_RESERVE_AS(ctx, arr, cap, need, false)

/// Frees an array grown with BP_RESERVE and zeroes it and its capacity.
#define BP_RELEASE(ctx, arr, cap)                                                              \
    do {                                                                                       \
        BP_FREE_IN(ctx)((ctx), (arr), (cap) * sizeof *(arr));                                  \
        (arr) = NULL;                                                                          \
        (cap) = 0;                                                                             \
    } while (0)


#endif
