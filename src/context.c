// The context: entry points, argument checks, the validated copy of the boxes, dispatch to the
// method table, the pair sink and buffer, sorted output, region queries.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The 2D load has an AVX2 loop, chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX2)
#define BP_LOAD_AVX2 1
#include <immintrin.h>
#endif

#include "context.h"
#include "par.h"
#include "radix_sort.h"

// Below this many boxes AUTO uses brute force: its tight loop beats any structure's set-up.
// Measured with `broadphase bench` (docs/methods.md).
#define BP_AUTO_BRUTE_MAX 192
// From this many boxes AUTO considers the grid: in 2D its table layout is ahead of sweep from
// about 500 boxes (2x at 500 to 1,000 on `uniform` and `clustered`, even on `mixed`); in 3D the
// two are even near 2,000, the grid ahead above.
#define BP_AUTO_GRID_MIN_2D 400
#define BP_AUTO_GRID_MIN_3D 2048
// In 3D the grid from BP_AUTO_DENSE_MIN_3D boxes already when the last call found at least
// BP_AUTO_DENSE_PAIRS pairs a box: long boxes, sizes over decades or a line (`sticks`, `sizes`,
// `line` 3D at 1,000: grid 0.22 / 0.20 / 0.086 ms against sweep 0.27 / 0.30 / 0.12), where
// sweep's active lists run long and its candidates overlap on every axis; `uniform` and
// `clustered` (0.4 pairs a box) stay on sweep, which is ahead there up to 2,000.
#define BP_AUTO_DENSE_MIN_3D 1000
#define BP_AUTO_DENSE_PAIRS 2
// Boxes of several sizes (the largest extent above BP_AUTO_LARGE mean extents on an axis: `mixed`,
// 1% of boxes up to 25x the rest) put the grid in its sorted layout with levels that query each
// other, which costs more than sweep below these counts (docs/methods.md).
#define BP_AUTO_LARGE 8.0
#define BP_AUTO_LEVELS_MIN_2D 4096
#define BP_AUTO_LEVELS_MIN_3D 8192
// Centre spread, in mean extents, that makes an axis count as spread for AUTO. It only has to
// tell a line (no spread on an axis: sweep picks another) from boxes spread on two axes: since
// the grid's levels take long and large boxes, it is ahead of sweep even where a few large boxes
// make the mean extent large (sticks, sizes 3D: spread 4-6 mean extents) and in dense crowds
// (seed, 4.3 mean extents: grid 0.58 against sweep 0.75 ms at 3,000 circles, 39 against 69 at
// 30,000; CPU time, docs/methods.md).
#define BP_AUTO_SPREAD 2.0
// An axis also counts as spread when its centres' deviation is at least this share of the
// largest axis's: a few boxes as large as a small world make the mean extent large on every
// axis (`sizes` and `sticks` 3D at 2,000-4,000 boxes: 2-3 mean extents), yet the boxes are
// spread alike on all axes and the grid is ahead; a line has no deviation on its axis.
#define BP_AUTO_ALIKE 0.25
// Away from the grid because its cells were too coarse, AUTO asks again every this many frames.
#define BP_AUTO_COARSE_RETRY 16

// Pairs handed to a callback per batch: every batch but the last has exactly this many, whatever
// the method and the workers (the chunk holds BP_SINK_MIN_ROOM + 1 more, carried to the next).
#define BP_CHUNK_PAIRS 4096
#define BP_CHUNK_CAP (BP_CHUNK_PAIRS + BP_SINK_MIN_ROOM + 1)
// Boxes per block of the load: statistics are summed per block, then the blocks in order, so
// they come out bit for bit the same whether the blocks ran on one thread or on many.
#define BP_LOAD_BLOCK 4096
// From this many pairs (the last call's count: 8 MiB, more than a core's cache) buffer mode
// stages pairs in the chunk and appends each full chunk to the pair buffer with non-temporal
// stores: such an output leaves the cache anyway, and streaming stores do not read every line
// before writing it. Measured on the benchmark machine: 64 MiB written at 19.7 GB/s streamed
// against 9 GB/s with plain stores; sort-and-sweep on `line` 2D (every candidate a pair) from
// 10.6 to 5.7 ms at 100,000 boxes (8 million pairs), from 283 to 139 ms at 1,000,000.
#define BP_STREAM_PAIRS ((size_t)1 << 20)
// From this many pairs per box (the last call's), the pair pass runs on the calling thread even
// with workers (the other passes still use them): each pair a worker finds is written to its
// block and copied to the output, three times the memory traffic of one thread's streamed
// stores, so outputs this large were slower with 2 workers than with one (line 2D at 100,000,
// 80 pairs a box, sweep: 11.8 against 5.1 ms; seed at 100,000, 820 a box, grid: about even).
#define BP_PAR_PAIRS_PER_BOX 32

static const bp_algorithm_class *const bp_classes[BP_METHOD_COUNT] = {
    [BP_METHOD_AUTO] = NULL,
    [BP_METHOD_BRUTE] = &bp_brute_class,
    [BP_METHOD_SWEEP] = &bp_sweep_class,
    [BP_METHOD_GRID] = &bp_grid_class,
    [BP_METHOD_QUADTREE] = &bp_quadtree_class,
    [BP_METHOD_RDC] = &bp_rdc_class,
};
_Static_assert(sizeof bp_classes / sizeof bp_classes[0] == BP_METHOD_COUNT, "one class per method");

static const char *const bp_method_names[BP_METHOD_COUNT] = {
    [BP_METHOD_AUTO] = "auto",   [BP_METHOD_BRUTE] = "brute",       [BP_METHOD_SWEEP] = "sweep",
    [BP_METHOD_GRID] = "grid",   [BP_METHOD_QUADTREE] = "quadtree", [BP_METHOD_RDC] = "rdc",
};

const char *bp_status_string(bp_status status) {
    switch (status) {
    case BP_OK: return "ok";
    case BP_ERR_NULL: return "a required pointer is NULL";
    case BP_ERR_INVALID_ARG: return "invalid argument";
    case BP_ERR_NONFINITE: return "coordinate is NaN or infinite";
    case BP_ERR_INVERTED_BOX: return "box has min > max";
    case BP_ERR_TOO_MANY: return "too many boxes";
    case BP_ERR_NOMEM: return "out of memory";
    case BP_ERR_UNSUPPORTED: return "method not supported";
    case BP_ERR_DIMENSION: return "dimension mismatch";
    case BP_ERR_NO_BOXES: return "no boxes yet (no successful pair-finding call)";
    case BP_ERR_STOPPED: return "stopped by the pair callback";
    case BP_ERR_NEGATIVE_RADIUS: return "negative radius";
    case BP_ERR_STALE: return "stale or unknown proxy id";
    }
    return "unknown status";
}

const char *bp_method_name(bp_method method) {
    if ((int)method < 0 || method >= BP_METHOD_COUNT) return NULL;
    return bp_method_names[method];
}

bp_status bp_method_from_name(const char *name, bp_method *method) {
    if (!name || !method) return BP_ERR_NULL;
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        if (strcmp(name, bp_method_names[m]) == 0) {
            *method = (bp_method)m;
            return BP_OK;
        }
    }
    return BP_ERR_INVALID_ARG;
}

bool bp_method_available(bp_method method) {
    if (method == BP_METHOD_AUTO) return true;
    if ((int)method < 0 || method >= BP_METHOD_COUNT) return false;
    return bp_classes[method]->find_pairs != NULL;
}

bp_context_def bp_default_context_def(void) {
    bp_context_def d;
    memset(&d, 0, sizeof d);
    d.dimension = 2;
    d.method = BP_METHOD_AUTO;
    d.workers = 1;
    d.sweep.axis = -1;
    d.sweep.coherence = true;
    return d;
}

const bp_context_def *bp_context_def_of(const bp_context *ctx) { return &ctx->def; }

// ---------------------------------------------------------------------------------------------
// Create / destroy

bp_status bp_context_create(const bp_context_def *def, bp_context **out) {
    if (out) *out = NULL;
    if (!def || !out) return BP_ERR_NULL;
    bp_context_def d = *def;
    if (d.dimension == 0) d.dimension = 2;
    if (d.dimension != 2 && d.dimension != 3) return BP_ERR_INVALID_ARG;
    if ((int)d.method < 0 || d.method >= BP_METHOD_COUNT) return BP_ERR_INVALID_ARG;
    if (d.sweep.axis < -1 || d.sweep.axis >= d.dimension) return BP_ERR_INVALID_ARG;
    if (!(d.grid.cell_size >= 0.0f) || !isfinite(d.grid.cell_size)) return BP_ERR_INVALID_ARG;
    if (d.grid.layout != BP_GRID_LAYOUT_AUTO && d.grid.layout != BP_GRID_LAYOUT_SORTED &&
        d.grid.layout != BP_GRID_LAYOUT_TABLE)
        return BP_ERR_INVALID_ARG;
    if (d.quadtree.levels < 0) return BP_ERR_INVALID_ARG;
    if (d.quadtree.fixed_world) {
        for (int a = 0; a < d.dimension; ++a) {
            if (!isfinite(d.quadtree.world_min[a]) || !isfinite(d.quadtree.world_max[a]))
                return BP_ERR_NONFINITE;
            if (!(d.quadtree.world_min[a] < d.quadtree.world_max[a])) return BP_ERR_INVALID_ARG;
        }
    }
    if (!isfinite(d.rdc.epsilon)) return BP_ERR_NONFINITE;
    if (d.workers == 0) d.workers = 1;
    if (d.workers < 1 || d.workers > BP_MAX_WORKERS) return BP_ERR_INVALID_ARG;
    if (!d.enqueue_task != !d.finish_task) return BP_ERR_INVALID_ARG;
    bp_allocator al = d.allocator;
    if (!al.alloc && !al.free) {
        al.alloc = bp_default_alloc;
        al.free = bp_default_free;
        al.user = NULL;
    } else if (!al.alloc || !al.free) {
        return BP_ERR_INVALID_ARG;
    }
    if (d.method != BP_METHOD_AUTO && !bp_method_available(d.method)) return BP_ERR_UNSUPPORTED;

    bp_context *ctx = al.alloc(sizeof *ctx, 64, al.user);
    if (!ctx) return BP_ERR_NOMEM;
    memset(ctx, 0, sizeof *ctx);
#ifndef NDEBUG
    ctx->debug_live[ctx->debug_nlive++] = ctx;  // a hook giving this block out again is caught
#endif
    ctx->def = d;
    ctx->def.allocator = al;
    ctx->alloc = al;
    ctx->bytes = sizeof *ctx;
    ctx->dim = d.dimension;
    ctx->last = BP_METHOD_AUTO;
    ctx->par_min = d.parallel_min ? d.parallel_min : BP_PARALLEL_MIN_AUTO;
    ctx->par_grain = d.parallel_min;
    if (d.workers > 1) {
        bp_status st = bp_pool_create(&al, (uint32_t)d.workers, d.enqueue_task, d.finish_task, d.task_user, &ctx->pool);
        if (st != BP_OK) {
            al.free(ctx, sizeof *ctx, al.user);
            return st;
        }
        ctx->bytes += bp_pool_bytes(ctx->pool);
    }
    *out = ctx;
    return BP_OK;
}

void bp_context_destroy(bp_context *ctx) {
    if (!ctx) return;
    for (int m = 0; m < BP_METHOD_COUNT; ++m)
        if (ctx->methods[m]) ctx->methods[m]->cls->destroy(ctx->methods[m]);
    BP_RELEASE(ctx, ctx->boxes, ctx->boxes_cap);
    BP_RELEASE(ctx, ctx->pairs, ctx->pair_cap);
    BP_RELEASE(ctx, ctx->chunk, ctx->chunk_cap);
    BP_RELEASE(ctx, ctx->sort_keys, ctx->sort_cap);
    BP_RELEASE(ctx, ctx->sort_tmp, ctx->sort_tmp_cap);
    BP_RELEASE(ctx, ctx->query.data, ctx->query.cap);
    BP_RELEASE(ctx, ctx->query_tmp, ctx->query_tmp_cap);
    bp_par_release(ctx);
    BP_RELEASE(ctx, ctx->hist, ctx->hist_cap);
    BP_RELEASE(ctx, ctx->parts, ctx->parts_cap);
    BP_RELEASE(ctx, ctx->scratch, ctx->scratch_cap);
    bp_pool_destroy(ctx->pool);  // last: bp_free takes its lock
    ctx->pool = NULL;
    bp_allocator al = ctx->alloc;
    al.free(ctx, sizeof *ctx, al.user);
}

bp_status bp_context_get_def(const bp_context *ctx, bp_context_def *def) {
    if (!ctx || !def) return BP_ERR_NULL;
    *def = ctx->def;
    return BP_OK;
}

bp_status bp_get_stats(const bp_context *ctx, bp_stats *stats) {
    if (!ctx || !stats) return BP_ERR_NULL;
    *stats = ctx->stats;
    stats->bytes = ctx->bytes;
    bp_algorithm_stats(ctx->methods[ctx->stats.method], stats);
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Loading boxes: validate and copy in one pass, gathering the statistics methods choose by.

// Classifies a bad box for the error code; called only once a pass has found one.
static bp_status bp_classify_box(const float *b, int dim) {
    for (int a = 0; a < 2 * dim; ++a)
        if (!isfinite(b[a])) return BP_ERR_NONFINITE;
    return BP_ERR_INVERTED_BOX;
}

// Copies n boxes of DIM axes (2 * DIM floats each) to dst in one pass, checking every value and
// gathering statistics into f. -0.0 becomes +0.0 so that float keys and comparisons agree.
// DIM is a constant in each instantiation so the axis loops unroll. Compiled everywhere, used
// only where there is no SSE2 (clang warns of an unused function otherwise).
#if defined(__GNUC__)
__attribute__((unused))
#endif
static inline bp_status bp_load_dim(bp_frame *f, float *BP_RESTRICT dst, const float *BP_RESTRICT src, size_t n,
                                    const int DIM) {
    double ssum[3] = {0}, csum[3] = {0}, csq[3] = {0};
    float lo[3], hi[3], smax[3];
    for (int a = 0; a < DIM; ++a) {
        lo[a] = f->lo[a];
        hi[a] = f->hi[a];
        smax[a] = f->size_max[a];
    }
    int bad = 0;
    for (size_t k = 0; k < n; ++k) {
        const float *in = src + k * (size_t)(2 * DIM);
        float *out = dst + k * (size_t)(2 * DIM);
        for (int a = 0; a < DIM; ++a) {
            float mn = in[a] + 0.0f, mx = in[DIM + a] + 0.0f;
            // One comparison chain rejects NaN (all comparisons false), infinities and min > max.
            bad |= !(mn >= -3.40282347e38f && mx <= 3.40282347e38f && mn <= mx);
            out[a] = mn;
            out[DIM + a] = mx;
            lo[a] = mn < lo[a] ? mn : lo[a];
            hi[a] = mx > hi[a] ? mx : hi[a];
            float sz = mx - mn;  // may round up to +inf for the widest boxes: still an upper bound
            smax[a] = sz > smax[a] ? sz : smax[a];
            double dmn = mn, dmx = mx, c = 0.5 * (dmn + dmx);
            ssum[a] += dmx - dmn;
            csum[a] += c;
            csq[a] += c * c;
        }
    }
    if (bad) {
        for (size_t k = 0; k < n; ++k) {
            const float *b = src + k * (size_t)(2 * DIM);
            for (int e = 0; e < DIM; ++e)
                if (!(b[e] >= -3.40282347e38f && b[DIM + e] <= 3.40282347e38f && b[e] <= b[DIM + e]))
                    return bp_classify_box(b, DIM);
        }
    }
    for (int a = 0; a < DIM; ++a) {
        f->lo[a] = lo[a];
        f->hi[a] = hi[a];
        f->size_max[a] = smax[a];  // made an upper bound by bp_set_boxes
        f->size_sum[a] += ssum[a];
        f->center_sum[a] += csum[a];
        f->center_sq[a] += csq[a];
    }
    return BP_OK;
}

#if defined(__SSE2__)
// bp_load_dim for 2D, one box per 4-lane register: [min x, min y, max x, max y]. The same
// arithmetic lane by lane (the double sums come out bit for bit equal), a quarter of the
// instructions: the load was a fifth of a 10,000-box frame's work. Also the tail of the AVX2 loop.
static bp_status bp_load2_sse(bp_frame *f, float *BP_RESTRICT dst, const float *BP_RESTRICT src, size_t n) {
    const __m128 zero = _mm_setzero_ps();
    const __m128 fmax = _mm_set1_ps(3.40282347e38f), fmin = _mm_set1_ps(-3.40282347e38f);
    // Lanes 0 and 1 of lo and smax, lanes 2 and 3 of hi carry the result.
    __m128 lo = _mm_setr_ps(f->lo[0], f->lo[1], f->lo[0], f->lo[1]);
    __m128 hi = _mm_setr_ps(f->hi[0], f->hi[1], f->hi[0], f->hi[1]);
    __m128 smax = _mm_setr_ps(f->size_max[0], f->size_max[1], f->size_max[0], f->size_max[1]);
    __m128 ok = _mm_cmpeq_ps(zero, zero);
    __m128d ssum = _mm_setzero_pd(), csum = _mm_setzero_pd(), csq = _mm_setzero_pd();
    const __m128d half = _mm_set1_pd(0.5);
    for (size_t k = 0; k < n; ++k) {
        const __m128 v = _mm_add_ps(_mm_loadu_ps(src + 4 * k), zero);  // -0.0 becomes +0.0
        _mm_storeu_ps(dst + 4 * k, v);
        const __m128 vmax = _mm_movehl_ps(v, v);  // [max x, max y, max x, max y]
        // All four values finite and min <= max (NaN fails every comparison).
        const __m128 finite = _mm_and_ps(_mm_cmpge_ps(v, fmin), _mm_cmple_ps(v, fmax));
        ok = _mm_and_ps(ok, _mm_and_ps(finite, _mm_cmple_ps(v, vmax)));
        lo = _mm_min_ps(lo, v);
        hi = _mm_max_ps(hi, v);
        smax = _mm_max_ps(smax, _mm_sub_ps(vmax, v));
        const __m128d dmn = _mm_cvtps_pd(v), dmx = _mm_cvtps_pd(vmax);
        ssum = _mm_add_pd(ssum, _mm_sub_pd(dmx, dmn));
        const __m128d c = _mm_mul_pd(half, _mm_add_pd(dmn, dmx));
        csum = _mm_add_pd(csum, c);
        csq = _mm_add_pd(csq, _mm_mul_pd(c, c));
    }
    if (_mm_movemask_ps(ok) != 0xf) {
        for (size_t k = 0; k < n; ++k) {
            const float *b = src + 4 * k;
            for (int e = 0; e < 2; ++e)
                if (!(b[e] >= -3.40282347e38f && b[2 + e] <= 3.40282347e38f && b[e] <= b[2 + e]))
                    return bp_classify_box(b, 2);
        }
    }
    float l[4], h[4], m[4];
    double ss[2], cs[2], cq[2];
    _mm_storeu_ps(l, lo);
    _mm_storeu_ps(h, hi);
    _mm_storeu_ps(m, smax);
    _mm_storeu_pd(ss, ssum);
    _mm_storeu_pd(cs, csum);
    _mm_storeu_pd(cq, csq);
    for (int a = 0; a < 2; ++a) {
        f->lo[a] = l[a];
        f->hi[a] = h[2 + a];
        f->size_max[a] = m[a];
        f->size_sum[a] += ss[a];
        f->center_sum[a] += cs[a];
        f->center_sq[a] += cq[a];
    }
    return BP_OK;
}
#endif

#if defined(__SSE2__)
// bp_load_dim for 3D: a box is two overlapping 4-lane loads, [min x, min y, min z, max x] and
// [min z, max x, max y, max z]; lanes 0..2 of the mins and of the shuffled maxs are the axes.
// The same arithmetic lane by lane as bp_load_dim, a third of the instructions.
static bp_status bp_load3_sse(bp_frame *f, float *BP_RESTRICT dst, const float *BP_RESTRICT src, size_t n) {
    const __m128 zero = _mm_setzero_ps();
    const __m128 fmax = _mm_set1_ps(3.40282347e38f), fmin = _mm_set1_ps(-3.40282347e38f);
    __m128 lo = _mm_setr_ps(f->lo[0], f->lo[1], f->lo[2], 0.0f);
    __m128 hi = _mm_setr_ps(f->hi[0], f->hi[1], f->hi[2], 0.0f);
    __m128 smax = _mm_setr_ps(f->size_max[0], f->size_max[1], f->size_max[2], 0.0f);
    __m128 ok = _mm_cmpeq_ps(zero, zero);
    __m128d ssum01 = _mm_setzero_pd(), csum01 = _mm_setzero_pd(), csq01 = _mm_setzero_pd();
    __m128d ssum2 = _mm_setzero_pd(), csum2 = _mm_setzero_pd(), csq2 = _mm_setzero_pd();
    const __m128d half = _mm_set1_pd(0.5);
    for (size_t k = 0; k < n; ++k) {
        const __m128 a = _mm_add_ps(_mm_loadu_ps(src + 6 * k), zero);      // -0.0 becomes +0.0
        const __m128 b = _mm_add_ps(_mm_loadu_ps(src + 6 * k + 2), zero);
        _mm_storeu_ps(dst + 6 * k, a);
        _mm_storeu_ps(dst + 6 * k + 2, b);
        const __m128 mx = _mm_shuffle_ps(b, b, _MM_SHUFFLE(3, 3, 2, 1));  // [max x, max y, max z, max z]
        const __m128 finite = _mm_and_ps(_mm_cmpge_ps(a, fmin), _mm_cmple_ps(mx, fmax));
        ok = _mm_and_ps(ok, _mm_and_ps(finite, _mm_cmple_ps(a, mx)));
        lo = _mm_min_ps(lo, a);
        hi = _mm_max_ps(hi, mx);
        smax = _mm_max_ps(smax, _mm_sub_ps(mx, a));
        const __m128d mn01 = _mm_cvtps_pd(a), mx01 = _mm_cvtps_pd(mx);
        const __m128d mn2 = _mm_cvtps_pd(_mm_movehl_ps(a, a)), mx2 = _mm_cvtps_pd(_mm_movehl_ps(mx, mx));
        ssum01 = _mm_add_pd(ssum01, _mm_sub_pd(mx01, mn01));
        ssum2 = _mm_add_pd(ssum2, _mm_sub_pd(mx2, mn2));
        const __m128d c01 = _mm_mul_pd(half, _mm_add_pd(mn01, mx01)), c2 = _mm_mul_pd(half, _mm_add_pd(mn2, mx2));
        csum01 = _mm_add_pd(csum01, c01);
        csum2 = _mm_add_pd(csum2, c2);
        csq01 = _mm_add_pd(csq01, _mm_mul_pd(c01, c01));
        csq2 = _mm_add_pd(csq2, _mm_mul_pd(c2, c2));
    }
    // Lane 3 compares max x with max z: not a condition; only lanes 0..2 count.
    if ((_mm_movemask_ps(ok) & 7) != 7) {
        for (size_t k = 0; k < n; ++k) {
            const float *b = src + 6 * k;
            for (int e = 0; e < 3; ++e)
                if (!(b[e] >= -3.40282347e38f && b[3 + e] <= 3.40282347e38f && b[e] <= b[3 + e]))
                    return bp_classify_box(b, 3);
        }
    }
    float l[4], h[4], m[4];
    double ss[4], cs[4], cq[4];
    _mm_storeu_ps(l, lo);
    _mm_storeu_ps(h, hi);
    _mm_storeu_ps(m, smax);
    _mm_storeu_pd(ss, ssum01);
    _mm_storeu_pd(ss + 2, ssum2);
    _mm_storeu_pd(cs, csum01);
    _mm_storeu_pd(cs + 2, csum2);
    _mm_storeu_pd(cq, csq01);
    _mm_storeu_pd(cq + 2, csq2);
    for (int x = 0; x < 3; ++x) {
        f->lo[x] = l[x];
        f->hi[x] = h[x];
        f->size_max[x] = m[x];
        f->size_sum[x] += ss[x];
        f->center_sum[x] += cs[x];
        f->center_sq[x] += cq[x];
    }
    return BP_OK;
}
#endif

#if defined(BP_LOAD_AVX2)
// The 2D load, four boxes per iteration, two to a 256-bit register: half the instructions of the
// SSE loop, and two sets of double sums so that their additions (4 cycles each) do not chain
// from box to box. The sums are added in another order than bp_load_dim's, so they may differ
// in the last bits (they are statistics for the heuristics). Returns the boxes done (a multiple
// of 4); the caller loads the rest with bp_load2_sse.
__attribute__((target("avx2"))) static inline size_t bp_load2_avx2_loop(bp_frame *f, float *BP_RESTRICT dst,
                                                                       const float *BP_RESTRICT src, size_t n,
                                                                       bool *bad, const bool SUMS) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 fmax = _mm256_set1_ps(3.40282347e38f), fmin = _mm256_set1_ps(-3.40282347e38f);
    // Lanes 0, 1 (and 4, 5) of lo and smax, lanes 2, 3 (and 6, 7) of hi carry the result.
    __m256 lo = _mm256_setr_ps(f->lo[0], f->lo[1], f->lo[0], f->lo[1], f->lo[0], f->lo[1], f->lo[0], f->lo[1]);
    __m256 hi = _mm256_setr_ps(f->hi[0], f->hi[1], f->hi[0], f->hi[1], f->hi[0], f->hi[1], f->hi[0], f->hi[1]);
    __m256 smax = _mm256_setr_ps(f->size_max[0], f->size_max[1], 0, 0, f->size_max[0], f->size_max[1], 0, 0);
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    __m256d ss[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256d cs[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256d cq[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d half = _mm256_set1_pd(0.5);
    size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        for (int q = 0; q < 2; ++q) {
            const __m256 v = _mm256_add_ps(_mm256_loadu_ps(src + 4 * k + 8 * q), zero);  // -0.0 to +0.0
            _mm256_storeu_ps(dst + 4 * k + 8 * q, v);
            const __m256 vmax = _mm256_permute_ps(v, 0xEE);  // [max x, max y, max x, max y] per box
            const __m256 finite = _mm256_and_ps(_mm256_cmp_ps(v, fmin, _CMP_GE_OQ), _mm256_cmp_ps(v, fmax, _CMP_LE_OQ));
            ok = _mm256_and_ps(ok, _mm256_and_ps(finite, _mm256_cmp_ps(v, vmax, _CMP_LE_OQ)));
            lo = _mm256_min_ps(lo, v);
            hi = _mm256_max_ps(hi, v);
            smax = _mm256_max_ps(smax, _mm256_sub_ps(vmax, v));
            if (!SUMS) continue;
            // Both boxes in double: [min x, min y] of each, then [max x, max y] of each.
            const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
            const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
            const __m256d dmn = _mm256_permute2f128_pd(a, b, 0x20), dmx = _mm256_permute2f128_pd(a, b, 0x31);
            ss[q] = _mm256_add_pd(ss[q], _mm256_sub_pd(dmx, dmn));
            const __m256d c = _mm256_mul_pd(half, _mm256_add_pd(dmn, dmx));
            cs[q] = _mm256_add_pd(cs[q], c);
            cq[q] = _mm256_add_pd(cq[q], _mm256_mul_pd(c, c));
        }
    }
    *bad = _mm256_movemask_ps(ok) != 0xff;
    float l[8], h[8], m[8];
    double s4[4], c4[4], q4[4];
    _mm256_storeu_ps(l, lo);
    _mm256_storeu_ps(h, hi);
    _mm256_storeu_ps(m, smax);
    _mm256_storeu_pd(s4, _mm256_add_pd(ss[0], ss[1]));
    _mm256_storeu_pd(c4, _mm256_add_pd(cs[0], cs[1]));
    _mm256_storeu_pd(q4, _mm256_add_pd(cq[0], cq[1]));
    for (int a = 0; a < 2; ++a) {
        f->lo[a] = l[a] < l[4 + a] ? l[a] : l[4 + a];
        f->hi[a] = h[2 + a] > h[6 + a] ? h[2 + a] : h[6 + a];
        f->size_max[a] = m[a] > m[4 + a] ? m[a] : m[4 + a];
        f->size_sum[a] += s4[a] + s4[2 + a];
        f->center_sum[a] += c4[a] + c4[2 + a];
        f->center_sq[a] += q4[a] + q4[2 + a];
    }
    return k;
}

// One instantiation with the sums, one without (bounds, size_max and checks only).
__attribute__((target("avx2"))) static size_t bp_load2_avx2(bp_frame *f, float *BP_RESTRICT dst,
                                                             const float *BP_RESTRICT src, size_t n, bool *bad) {
    return bp_load2_avx2_loop(f, dst, src, n, bad, true);
}
__attribute__((target("avx2"))) static size_t bp_load2_avx2_bounds(bp_frame *f, float *BP_RESTRICT dst,
                                                                    const float *BP_RESTRICT src, size_t n,
                                                                    bool *bad) {
    return bp_load2_avx2_loop(f, dst, src, n, bad, false);
}

#endif

// `sums`: the frame's sums are wanted (else they may be left incomplete).
static bp_status bp_load(bp_frame *f, float *dst, const float *src, size_t n, int dim, bool sums) {
    (void)sums;  // the other loops always compute them
#if defined(BP_LOAD_AVX2)
    if (dim == 2 && bp_cpu_avx2()) {
        bool bad = false;
        const size_t k = sums ? bp_load2_avx2(f, dst, src, n, &bad) : bp_load2_avx2_bounds(f, dst, src, n, &bad);
        if (bad) return bp_load2_sse(f, dst, src, k);  // finds and names the bad box
        return bp_load2_sse(f, dst + 4 * k, src + 4 * k, n - k);
    }
#endif
#if defined(__SSE2__)
    return dim == 2 ? bp_load2_sse(f, dst, src, n) : bp_load3_sse(f, dst, src, n);
#else
    return dim == 2 ? bp_load_dim(f, dst, src, n, 2) : bp_load_dim(f, dst, src, n, 3);
#endif
}

// One block of the load: its boxes, its statistics from scratch.
static void bp_load_block(bp_context *ctx, const float *a, size_t na, const float *b, size_t block, bool sums) {
    const int dim = ctx->dim;
    const size_t w = (size_t)(2 * dim);
    const size_t blocks_a = (na + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK;
    // Blocks of set A, then of set B (bipartite): a block never spans both.
    const bool in_b = block >= blocks_a;
    const size_t first = in_b ? (block - blocks_a) * BP_LOAD_BLOCK : block * BP_LOAD_BLOCK;
    const size_t total = in_b ? ctx->frame.n - na : na;  // frame.n holds na + nb while loading
    const size_t count = total - first < BP_LOAD_BLOCK ? total - first : BP_LOAD_BLOCK;
    const float *src = (in_b ? b : a) + first * w;
    float *dst = ctx->boxes + ((in_b ? na : 0) + first) * w;
    bp_frame f;
    memset(&f, 0, sizeof f);
    for (int k = 0; k < 3; ++k) {
        f.lo[k] = 3.40282347e38f;
        f.hi[k] = -3.40282347e38f;
    }
    bp_load_part *p = &ctx->parts[block];
    p->st = bp_load(&f, dst, src, count, dim, sums);
    for (int k = 0; k < 3; ++k) {
        p->lo[k] = f.lo[k];
        p->hi[k] = f.hi[k];
        p->size_max[k] = f.size_max[k];
        p->size_sum[k] = f.size_sum[k];
        p->center_sum[k] = f.center_sum[k];
        p->center_sq[k] = f.center_sq[k];
    }
}

typedef struct bp_load_job {
    bp_context *ctx;
    const float *a, *b;
    size_t na, blocks;
    uint32_t tasks;
    bool sums;
} bp_load_job;

static void bp_load_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const bp_load_job *j = user;
    size_t b0, b1;
    bp_par_range(j->blocks, j->tasks, t, &b0, &b1);
    for (size_t k = b0; k < b1; ++k) bp_load_block(j->ctx, j->a, j->na, j->b, k, j->sums);
}

static bp_status bp_set_boxes(bp_context *ctx, const float *a, size_t na, const float *b, size_t nb, bool sums) {
    ctx->have_boxes = false;
    const int dim = ctx->dim;
    const size_t n = na + nb;
    BP_RESERVE_DISCARD(ctx, ctx->boxes, ctx->boxes_cap, n * (size_t)(2 * dim) + 1);
    const size_t blocks = (na + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK + (nb + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK;
    BP_RESERVE_DISCARD(ctx, ctx->parts, ctx->parts_cap, blocks + 1);
    bp_frame *f = &ctx->frame;
    f->dim = dim;
    f->n = n;  // read by the blocks; the frame holds no boxes until the end
    f->split = 0;
    f->boxes = ctx->boxes;
    bp_load_job j = {ctx, a, b, na, blocks, bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP * 2), sums};
    if (j.tasks > blocks) j.tasks = (uint32_t)blocks;
    bp_status st = bp_par_run(ctx, j.tasks, bp_load_task, &j);
    f->n = 0;
    if (st != BP_OK) return st;
    for (int k = 0; k < 3; ++k) {
        f->lo[k] = 3.40282347e38f;
        f->hi[k] = -3.40282347e38f;
        f->size_sum[k] = f->center_sum[k] = f->center_sq[k] = 0.0;
        f->size_max[k] = 0.0f;
    }
    // In block order: the first bad box names the error, as a single pass would.
    for (size_t k = 0; k < blocks; ++k) {
        const bp_load_part *p = &ctx->parts[k];
        if (p->st != BP_OK) return p->st;
        for (int x = 0; x < dim; ++x) {
            f->lo[x] = p->lo[x] < f->lo[x] ? p->lo[x] : f->lo[x];
            f->hi[x] = p->hi[x] > f->hi[x] ? p->hi[x] : f->hi[x];
            f->size_max[x] = p->size_max[x] > f->size_max[x] ? p->size_max[x] : f->size_max[x];
            f->size_sum[x] += p->size_sum[x];
            f->center_sum[x] += p->center_sum[x];
            f->center_sq[x] += p->center_sq[x];
        }
    }
    // Each extent was rounded to nearest in float, possibly down by half an ulp; one step up
    // makes size_max a true upper bound, so that query windows [lo - size_max, hi] built from it
    // never cut off a box that touches the query.
    for (int k = 0; k < dim; ++k) f->size_max[k] = nextafterf(f->size_max[k], INFINITY);
    if (n == 0)
        for (int k = 0; k < 3; ++k) f->lo[k] = f->hi[k] = 0.0f;
    f->n = n;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Choosing and running a method

// AUTO's rule, from what the benchmark measured (docs/methods.md): brute force for a handful of
// boxes; the uniform grid from BP_AUTO_GRID_MIN_2D/3D boxes up when they spread over at least two
// axes (2-5x faster than sweep on `uniform`, `clustered` and `mixed` at 10^4..10^6, in 2D and 3D);
// sort-and-sweep otherwise: boxes along a line (the grid degenerates to one column there while
// sweep picks the other axis) and small or very dense sets. An axis is spread when the standard
// deviation of the centres exceeds BP_AUTO_SPREAD mean extents; a margin of 25% either way keeps
// the choice steady (each switch loses the methods' frame-to-frame coherence). And sweep where the
// grid's cells would be far coarser than its boxes want, and crowded (bp_grid_too_coarse: boxes
// in a small part of a huge world, such as two clusters far apart, whose empty space its keys
// must cover too; sweep does not care): asked of the grid's last geometry and candidates while
// it runs, of a sample of the boxes when AUTO comes to it from another method, and again every
// BP_AUTO_COARSE_RETRY frames while away for that reason, once the boxes' count or bounds have
// changed 2x (a diagonal tube looks fine to the sample: asking it sooner would come back).
static void bp_auto_remember(bp_context *ctx, const bp_frame *f) {
    ctx->auto_n = f->n;
    for (int a = 0; a < f->dim; ++a) ctx->auto_span[a] = f->hi[a] - f->lo[a];
}

static bool bp_auto_changed(const bp_context *ctx, const bp_frame *f) {
    if (f->n > 2 * ctx->auto_n || 2 * f->n < ctx->auto_n) return true;
    for (int a = 0; a < f->dim; ++a) {
        const float span = f->hi[a] - f->lo[a], was = ctx->auto_span[a];
        if (span > 2.0f * was || 2.0f * span < was) return true;
    }
    return false;
}

static bp_method bp_auto_choose(bp_context *ctx, const bp_frame *f) {
    if (f->n <= BP_AUTO_BRUTE_MAX) return BP_METHOD_BRUTE;
    const size_t grid_min = f->dim == 2 ? BP_AUTO_GRID_MIN_2D : BP_AUTO_GRID_MIN_3D;
    const bool dense = f->dim == 3 && f->n >= BP_AUTO_DENSE_MIN_3D && ctx->last_pairs >= BP_AUTO_DENSE_PAIRS * f->n;
    if ((f->n < grid_min && !dense) || !bp_method_available(BP_METHOD_GRID)) return BP_METHOD_SWEEP;
    const double factor = ctx->last == BP_METHOD_GRID ? BP_AUTO_SPREAD / 1.25 : BP_AUTO_SPREAD * 1.25;
    const double n = (double)f->n;
    int spread = 0;
    double var[3] = {0.0, 0.0, 0.0}, widest = 0.0;
    bool large = false;
    for (int a = 0; a < f->dim; ++a) {
        const double mean = f->center_sum[a] / n;
        var[a] = f->center_sq[a] / n - mean * mean;
        widest = var[a] > widest ? var[a] : widest;
    }
    for (int a = 0; a < f->dim; ++a) {
        const double size = f->size_sum[a] / n;
        if (var[a] > 0.0 && (var[a] > factor * factor * size * size || var[a] >= BP_AUTO_ALIKE * BP_AUTO_ALIKE * widest))
            ++spread;
        large |= (double)f->size_max[a] > BP_AUTO_LARGE * size;
    }
    if (spread < 2) return BP_METHOD_SWEEP;
    if (large && f->n < (f->dim == 2 ? BP_AUTO_LEVELS_MIN_2D : BP_AUTO_LEVELS_MIN_3D)) return BP_METHOD_SWEEP;
    const bp_algorithm *grid = ctx->methods[BP_METHOD_GRID];
    if (ctx->last == BP_METHOD_GRID && grid) ctx->auto_coarse = bp_grid_was_too_coarse(grid);
    else if (!ctx->auto_coarse || (f->frame % BP_AUTO_COARSE_RETRY == 0 && bp_auto_changed(ctx, f)))
        ctx->auto_coarse = bp_grid_too_coarse(f, ctx->def.grid.cell_size);
    else return BP_METHOD_SWEEP;
    if (ctx->auto_coarse) bp_auto_remember(ctx, f);
    return ctx->auto_coarse ? BP_METHOD_SWEEP : BP_METHOD_GRID;
}

static bp_status bp_algorithm_get(bp_context *ctx, bp_method m, bp_algorithm **out) {
    if (!ctx->methods[m]) {
        bp_algorithm *s = NULL;
        bp_status st = bp_classes[m]->create(ctx, &s);
        if (st != BP_OK) return st;
        s->cls = bp_classes[m];
        s->ctx = ctx;
        ctx->methods[m] = s;
    }
    *out = ctx->methods[m];
    return BP_OK;
}

// Buffer mode: grow the context's pair buffer.
static bp_status bp_flush_grow(bp_sink *s) {
    bp_context *ctx = s->ctx;
    bp_status st = BP_OK;
    ctx->pairs = bp_grow(ctx, ctx->pairs, &ctx->pair_cap, s->cap + 1, sizeof *ctx->pairs, true, &st);
    if (st != BP_OK) return st;
    s->buf = ctx->pairs;
    s->cap = ctx->pair_cap;
    return BP_OK;
}

// Copies `count` pairs (a multiple of 8: whole 64-byte lines) with non-temporal stores where
// the destination allows them.
static void bp_stream_copy(bp_pair *dst, const bp_pair *src, size_t count) {
#if defined(__SSE2__)
    if (((uintptr_t)dst & 15u) == 0) {
        __m128i *d = (__m128i *)(void *)dst;
        const __m128i *s = (const __m128i *)(const void *)src;
        for (size_t k = 0; k < count / 2; ++k) _mm_stream_si128(d + k, _mm_loadu_si128(s + k));
        return;
    }
#endif
    memcpy(dst, src, count * sizeof *dst);
}

// Streamed buffer mode: the pair buffer holds at least `need` pairs, old ones kept.
static bp_status bp_sink_reserve_lines(bp_sink *s, size_t need) {
    bp_context *ctx = s->ctx;
    bp_status st = BP_OK;
    ctx->pairs = bp_grow(ctx, ctx->pairs, &ctx->pair_cap, need, sizeof *ctx->pairs, true, &st);
    s->lines = ctx->pairs;
    s->lines_cap = ctx->pair_cap;
    return st;
}

bp_status bp_sink_grow_lines(bp_sink *s) { return bp_sink_reserve_lines(s, s->delivered + 8); }

// Streamed buffer mode: s->buf is the chunk, s->delivered the pairs already in the pair
// buffer (always whole lines, so every append starts on a line boundary). Appends the chunk's
// whole lines (8 pairs each) and moves the rest to the chunk's front.
static bp_status bp_flush_stream(bp_sink *s) {
    const size_t whole = s->count & ~(size_t)7;
    bp_status st = bp_sink_reserve_lines(s, s->delivered + whole);
    if (st != BP_OK) return st;
    bp_stream_copy(s->lines + s->delivered, s->buf, whole);
    s->delivered += whole;
    memmove(s->buf, s->buf + whole, (s->count - whole) * sizeof *s->buf);
    s->count -= whole;
    return BP_OK;
}

// Ends streamed buffer mode: the chunk's rest goes to the pair buffer, which the sink then
// describes as in plain buffer mode. The fence orders the streamed stores before any later
// store, so another thread that the caller hands the pairs to sees them.
static bp_status bp_stream_finish(bp_sink *s) {
    const size_t total = s->delivered + s->count;
    bp_status st = bp_sink_reserve_lines(s, total);
    if (st != BP_OK) return st;
    memcpy(s->lines + s->delivered, s->buf, s->count * sizeof *s->buf);
#if defined(__SSE2__)
    _mm_sfence();
#endif
    s->buf = s->lines;
    s->cap = s->lines_cap;
    s->count = total;
    s->delivered = 0;
    s->lines = NULL;
    s->lines_cap = 0;
    s->flush = bp_flush_grow;
    return BP_OK;
}

static bp_status bp_deliver(bp_sink *s, bp_pair *pairs, size_t count) {
    if (count == 0) return BP_OK;
    if (s->split)
        for (size_t k = 0; k < count; ++k) pairs[k].j -= s->split;
    bool go_on = s->fn(pairs, count, s->user);
    s->delivered += count;
    return go_on ? BP_OK : BP_ERR_STOPPED;
}

// Callback mode: hands the first BP_CHUNK_PAIRS pairs (or all, at the end) to the user and keeps
// the rest for the next batch. The chunk holds BP_CHUNK_CAP pairs and a flush comes only when
// fewer than BP_SINK_MIN_ROOM + 1 are free, so every batch but the last is exactly
// BP_CHUNK_PAIRS long: the batches depend on the pairs only, not on how a method asked for room.
static bp_status bp_flush_deliver(bp_sink *s) {
    const size_t c = s->count < BP_CHUNK_PAIRS ? s->count : BP_CHUNK_PAIRS;
    bp_status st = bp_deliver(s, s->buf, c);
    memmove(s->buf, s->buf + c, (s->count - c) * sizeof *s->buf);
    s->count -= c;
    return st;
}

// The end of a callback-mode call: what the chunk still holds, in whole batches.
static bp_status bp_flush_last(bp_sink *s) {
    bp_status st = BP_OK;
    while (s->count && st == BP_OK) st = bp_flush_deliver(s);
    return st;
}

bool bp_sink_buffered(const bp_sink *s) { return s->flush == bp_flush_grow; }

bp_pair *bp_sink_claim(bp_sink *s, size_t count, bp_status *st) {
    if (!bp_sink_buffered(s)) return NULL;
    bp_context *ctx = s->ctx;
    if (s->cap - s->count <= count) {  // count < cap holds after the caller's writes
        // A quarter more than asked: the next frame's merge, a few pairs larger, must not double
        // the buffer onto fresh pages (line 2D at 100,000 with 2 workers: a 157 ms frame).
        const size_t need = s->count + count + 1, want = need + need / 4;
        ctx->pairs = bp_grow(ctx, ctx->pairs, &ctx->pair_cap, want > need ? want : need, sizeof *ctx->pairs,
                             s->count > 0, st);
        if (*st != BP_OK) return NULL;
        s->buf = ctx->pairs;
        s->cap = ctx->pair_cap;
    }
    return s->buf + s->count;
}

bp_status bp_sink_append(bp_sink *s, const bp_pair *pairs, size_t count) {
    while (count) {
        size_t room = s->cap - s->count;  // >= 1 between pushes
        size_t c = count < room ? count : room;
        memcpy(s->buf + s->count, pairs, c * sizeof *pairs);
        s->count += c;
        pairs += c;
        count -= c;
        if (s->count == s->cap) {
            bp_status st = s->flush(s);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

// Packing pairs into sort keys and back, over a range (a task's share with workers).
typedef struct bp_pack_job {
    bp_pair *pairs;
    uint64_t *keys;
    size_t count;
    uint32_t tasks;
    unsigned bits;
    bool unpack;
} bp_pack_job;

static void bp_pack_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const bp_pack_job *j = user;
    size_t b, e;
    bp_par_range(j->count, j->tasks, t, &b, &e);
    bp_pair *BP_RESTRICT p = j->pairs;
    uint64_t *BP_RESTRICT keys = j->keys;
    const unsigned bits = j->bits;
    if (!j->unpack) {
        for (size_t k = b; k < e; ++k) keys[k] = ((uint64_t)p[k].i << bits) | p[k].j;
        return;
    }
    const uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (size_t k = b; k < e; ++k) {
        p[k].i = (uint32_t)(keys[k] >> bits);
        p[k].j = (uint32_t)(keys[k] & mask);
    }
}

// Sorts ctx->pairs[0..count) by (i, j) with one radix sort of packed keys.
static bp_status bp_sort_pairs(bp_context *ctx, size_t count, size_t n) {
    if (count < 2) return BP_OK;
    // Sized to the pair buffer (which grows by 1.5x), not to this frame's count: otherwise the
    // first sorted frame fixes the capacity exactly and a warm frame with a few more pairs
    // allocates.
    BP_RESERVE_DISCARD(ctx, ctx->sort_keys, ctx->sort_cap, ctx->pair_cap);
    BP_RESERVE_DISCARD(ctx, ctx->sort_tmp, ctx->sort_tmp_cap, ctx->pair_cap);
    unsigned bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < n) ++bits;
    bp_pack_job j = {ctx->pairs, ctx->sort_keys, count, bp_par_tasks(ctx, count, BP_PAR_GRAIN_MAP), bits, false};
    bp_status st = bp_par_run(ctx, j.tasks, bp_pack_task, &j);
    if (st == BP_OK) st = bp_par_radix64(ctx, ctx->sort_keys, NULL, ctx->sort_tmp, NULL, count, 2 * bits);
    j.unpack = true;
    if (st == BP_OK) st = bp_par_run(ctx, j.tasks, bp_pack_task, &j);
    return st;
}

// The common body of every pair-finding entry point. `fn` NULL: buffer mode into *out.
static bp_status bp_run(bp_context *ctx, int dim, const float *a, size_t na, const float *b, size_t nb,
                        bool bipartite, bp_pairs *out, bp_pair_fn *fn, void *user) {
    if (out) {
        out->pairs = NULL;
        out->count = 0;
    }
    if (!ctx) return BP_ERR_NULL;
    memset(&ctx->stats, 0, sizeof ctx->stats);
    // Every failed call leaves the context without boxes (the header's contract), argument
    // errors included, not only those found while loading.
    ctx->have_boxes = false;
    if ((!out && !fn) || (!a && na) || (!b && nb)) return BP_ERR_NULL;
    if (dim != ctx->dim) return BP_ERR_DIMENSION;
    if (na > BP_MAX_BOXES || nb > BP_MAX_BOXES || na + nb > BP_MAX_BOXES) return BP_ERR_TOO_MANY;

    // Workers only for calls large enough to pay for them (docs/architecture.md, "Threads"), and
    // the pair pass on them only where it is not bound by writing pairs.
    ctx->par = ctx->pool && na + nb >= ctx->par_min;
    ctx->par_pairs = ctx->par && ctx->last_pairs / BP_PAR_PAIRS_PER_BOX < na + nb;
    const bool sums = ctx->def.method == BP_METHOD_AUTO || bp_classes[ctx->def.method]->frame_sums;
    bp_status st = bp_set_boxes(ctx, a, na, b, nb, sums);
    if (st != BP_OK) return st;
    bp_frame *f = &ctx->frame;
    // Bipartite: pairs must cross the split. With one side empty, put the split past every box
    // so that nothing crosses (the structure is still built, for queries).
    f->split = bipartite ? (na && nb ? na : na + nb) : 0;
    f->frame++;

    bp_method m = ctx->def.method == BP_METHOD_AUTO ? bp_auto_choose(ctx, f) : ctx->def.method;
    bp_algorithm *state = NULL;
    st = bp_algorithm_get(ctx, m, &state);
    if (st != BP_OK) return st;

    bp_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.ctx = ctx;
    sink.split = (uint32_t)f->split;
    // Set in both modes: sorted output to a callback is collected in buffer mode and then
    // delivered through bp_deliver, which calls fn.
    sink.fn = fn;
    sink.user = user;
    const bool buffer_mode = fn == NULL || ctx->def.sort_pairs;
    // Streamed: not when workers find the pairs, whose merge streams its copies itself (src/par.c).
    bool streamed = buffer_mode && !ctx->par_pairs && ctx->pair_count >= BP_STREAM_PAIRS && ctx->pairs &&
                    ((uintptr_t)ctx->pairs & 63u) == 0;  // whole lines: needs the hooks' alignment
    if ((streamed || !buffer_mode) && !ctx->chunk) {
        bp_status gs = BP_OK;
        ctx->chunk = bp_grow(ctx, ctx->chunk, &ctx->chunk_cap, BP_CHUNK_CAP, sizeof *ctx->chunk, false, &gs);
        if (gs != BP_OK) return gs;
    }
    if (streamed) {
        sink.buf = ctx->chunk;
        sink.cap = ctx->chunk_cap;
        sink.flush = bp_flush_stream;
        sink.lines = ctx->pairs;
        sink.lines_cap = ctx->pair_cap;
    } else if (buffer_mode) {
        if (!ctx->pairs) {
            bp_status gs = BP_OK;
            ctx->pairs = bp_grow(ctx, ctx->pairs, &ctx->pair_cap, 1024, sizeof *ctx->pairs, false, &gs);
            if (gs != BP_OK) return gs;
        }
        sink.buf = ctx->pairs;
        sink.cap = ctx->pair_cap;
        sink.flush = bp_flush_grow;
    } else {
        sink.buf = ctx->chunk;
        sink.cap = BP_CHUNK_CAP;
        sink.flush = bp_flush_deliver;
    }
    uint64_t checks = 0;
    st = state->cls->find_pairs(state, f, &sink, &checks);
    if (st == BP_OK && streamed) {
        st = bp_stream_finish(&sink);
        streamed = false;
    }
    if (st == BP_OK && buffer_mode) {
        ctx->pair_count = sink.count;
        if (ctx->def.sort_pairs) st = bp_sort_pairs(ctx, sink.count, f->n);
        if (st == BP_OK && fn) {
            // sorted delivery to a callback: in chunks from the sorted buffer
            for (size_t k = 0; k < sink.count && st == BP_OK; k += BP_CHUNK_PAIRS) {
                size_t c = sink.count - k < BP_CHUNK_PAIRS ? sink.count - k : BP_CHUNK_PAIRS;
                st = bp_deliver(&sink, ctx->pairs + k, c);
            }
        } else if (st == BP_OK && sink.split) {
            for (size_t k = 0; k < sink.count; ++k) ctx->pairs[k].j -= sink.split;
        }
    } else if (st == BP_OK) {
        st = bp_flush_last(&sink);
    }
    ctx->stats.n = f->n;
    // A call that stopped or failed counts none: how far its tests got depends on the workers.
    ctx->stats.checks = st == BP_OK ? checks : 0;
    ctx->stats.method = m;
    ctx->last = m;
    if (st != BP_OK) {
        ctx->stats.pairs = streamed ? 0 : sink.delivered;  // streamed: pairs held back, none delivered
        ctx->pair_count = 0;
        if (st != BP_ERR_STOPPED) state->cls->reset(state);
        // A stopped call still built its structure: queries stay valid.
        ctx->have_boxes = st == BP_ERR_STOPPED;
        return st;
    }
    ctx->stats.pairs = fn ? sink.delivered : sink.count;
    ctx->last_pairs = ctx->stats.pairs;
    ctx->have_boxes = true;
    if (out) {
        out->pairs = ctx->pairs;
        out->count = ctx->pair_count;
    }
    return BP_OK;
}

bp_status bp_find_pairs2(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pairs *out) {
    return bp_run(ctx, 2, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, out, NULL, NULL);
}

bp_status bp_find_pairs3(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pairs *out) {
    return bp_run(ctx, 3, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, out, NULL, NULL);
}

bp_status bp_find_pairs2_cb(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pair_fn *fn, void *user) {
    if (!fn) return BP_ERR_NULL;
    return bp_run(ctx, 2, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, NULL, fn, user);
}

bp_status bp_find_pairs3_cb(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pair_fn *fn, void *user) {
    if (!fn) return BP_ERR_NULL;
    return bp_run(ctx, 3, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, NULL, fn, user);
}

bp_status bp_find_pairs_between2(bp_context *ctx, const bp_box2 *a, size_t na, const bp_box2 *b, size_t nb,
                                 bp_pairs *out) {
    return bp_run(ctx, 2, a ? (const float *)(const void *)a : NULL, na, b ? (const float *)(const void *)b : NULL, nb, true, out, NULL, NULL);
}

bp_status bp_find_pairs_between3(bp_context *ctx, const bp_box3 *a, size_t na, const bp_box3 *b, size_t nb,
                                 bp_pairs *out) {
    return bp_run(ctx, 3, a ? (const float *)(const void *)a : NULL, na, b ? (const float *)(const void *)b : NULL, nb, true, out, NULL, NULL);
}

// ---------------------------------------------------------------------------------------------
// Region queries

static bp_status bp_run_query(bp_context *ctx, bp_query *q, bp_indices *out) {
    bp_frame *f = &ctx->frame;
    bp_algorithm *m = ctx->methods[ctx->last];
    ctx->query.ctx = ctx;
    ctx->query.count = 0;
    bp_status st = BP_OK;
    if (m && m->cls->query) {
        st = m->cls->query(m, f, q, &ctx->query);
    } else {
        for (size_t k = 0; k < f->n && st == BP_OK; ++k)
            if (bp_query_hit(q, f, k)) st = bp_index_push(&ctx->query, (uint32_t)k);
    }
    if (st != BP_OK) {
        ctx->query.count = 0;
        return st;
    }
    size_t c = ctx->query.count;
    if (c > 1) {
        BP_RESERVE_DISCARD(ctx, ctx->query_tmp, ctx->query_tmp_cap, c);
        unsigned bits = 1;
        while (bits < 32 && ((size_t)1 << bits) < f->n) ++bits;
        bp_radix_sort32(ctx->query.data, NULL, ctx->query_tmp, NULL, c, bits);
    }
    out->indices = ctx->query.data;
    out->count = c;
    return BP_OK;
}

static bp_status bp_query_prologue(bp_context *ctx, bp_indices *out) {
    if (out) {
        out->indices = NULL;
        out->count = 0;
    }
    if (!ctx || !out) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    return BP_OK;
}

bp_status bp_query_box(bp_context *ctx, const float *lo, const float *hi, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!lo || !hi) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_box(&q, ctx->dim, lo, hi);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

bp_status bp_query_point(bp_context *ctx, const float *point, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!point) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_point(&q, ctx->dim, point);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

bp_status bp_query_sphere(bp_context *ctx, const float *center, float radius, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!center) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_sphere(&q, ctx->dim, center, radius);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

// ---------------------------------------------------------------------------------------------
// Debug drawing and validation

bp_status bp_debug_draw_structure(const bp_context *ctx, const bp_debug_draw *draw) {
    if (!ctx || !draw) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    const bp_algorithm *m = ctx->methods[ctx->last];
    if (m && m->cls->debug_draw) m->cls->debug_draw(m, &ctx->frame, draw);
    return BP_OK;
}

bp_status bp_validate(const bp_context *ctx) {
    if (!ctx) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    const bp_algorithm *m = ctx->methods[ctx->last];
    if (m && m->cls->validate) return m->cls->validate(m, &ctx->frame);
    return BP_OK;
}
