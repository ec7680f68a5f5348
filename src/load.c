// Loading a call's boxes (src/load.h): validate and copy in one pass, gathering the statistics
// methods choose by; 2D and 3D loops in scalar, SSE2 and AVX2 forms, blocks on the workers.
#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The 2D load has an AVX2 loop, chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX2)
#define BP_LOAD_AVX2 1
#include <immintrin.h>
#endif

#include "load.h"
#include "par.h"

// Boxes per block of the load: statistics are summed per block, then the blocks in order, so
// they come out bit for bit the same whether the blocks ran on one thread or on many.
#define BP_LOAD_BLOCK 4096

// The error of the first bad box of src[0, n) (2 * dim floats each: NaN or infinity, else min >
// max), BP_OK if none; called only once a pass has found one.
static bp_status bp_first_bad_box(const float *src, size_t n, int dim) {
    for (size_t k = 0; k < n; ++k) {
        const float *b = src + k * (size_t)(2 * dim);
        for (int e = 0; e < dim; ++e) {
            if (b[e] >= -3.40282347e38f && b[dim + e] <= 3.40282347e38f && b[e] <= b[dim + e]) continue;
            for (int a = 0; a < 2 * dim; ++a)
                if (!isfinite(b[a])) return BP_ERR_NONFINITE;
            return BP_ERR_INVERTED_BOX;
        }
    }
    return BP_OK;
}

// Ends a pass over boxes that started from f's statistics: its bounds and largest sizes replace
// f's, its sums add to f's, on `dim` axes.
static inline void bp_load_put(bp_frame *f, int dim, const float *lo, const float *hi, const float *smax,
                               const double *ssum, const double *csum, const double *csq) {
    for (int a = 0; a < dim; ++a) {
        f->lo[a] = lo[a];
        f->hi[a] = hi[a];
        f->size_max[a] = smax[a];  // made an upper bound by bp_load
        f->size_sum[a] += ssum[a];
        f->center_sum[a] += csum[a];
        f->center_sq[a] += csq[a];
    }
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
        const bp_status st = bp_first_bad_box(src, n, DIM);
        if (st != BP_OK) return st;
    }
    bp_load_put(f, DIM, lo, hi, smax, ssum, csum, csq);
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
        const bp_status st = bp_first_bad_box(src, n, 2);
        if (st != BP_OK) return st;
    }
    float l[4], h[4], m[4];
    double ss[2], cs[2], cq[2];
    _mm_storeu_ps(l, lo);
    _mm_storeu_ps(h, hi);
    _mm_storeu_ps(m, smax);
    _mm_storeu_pd(ss, ssum);
    _mm_storeu_pd(cs, csum);
    _mm_storeu_pd(cq, csq);
    bp_load_put(f, 2, l, h + 2, m, ss, cs, cq);
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
        const bp_status st = bp_first_bad_box(src, n, 3);
        if (st != BP_OK) return st;
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
    bp_load_put(f, 3, l, h, m, ss, cs, cq);
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
static bp_status load_boxes(bp_frame *f, float *dst, const float *src, size_t n, int dim, bool sums) {
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

typedef struct bp_load_job {
    bp_load_state *ls;
    bp_frame *f;
    const float *a, *b;
    size_t na;
    bool sums;
} bp_load_job;

// One block of the load: its boxes, its statistics from scratch.
static void bp_load_block(const bp_load_job *j, size_t block) {
    const int dim = j->f->dim;
    const size_t w = (size_t)(2 * dim), na = j->na;
    const size_t blocks_a = (na + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK;
    // Blocks of set A, then of set B (bipartite): a block never spans both.
    const bool in_b = block >= blocks_a;
    const size_t first = in_b ? (block - blocks_a) * BP_LOAD_BLOCK : block * BP_LOAD_BLOCK;
    const size_t total = in_b ? j->f->n - na : na;  // frame.n holds na + nb while loading
    const size_t count = total - first < BP_LOAD_BLOCK ? total - first : BP_LOAD_BLOCK;
    const float *src = (in_b ? j->b : j->a) + first * w;
    float *dst = j->ls->boxes + ((in_b ? na : 0) + first) * w;
    bp_frame f;
    memset(&f, 0, sizeof f);
    for (int k = 0; k < 3; ++k) {
        f.lo[k] = 3.40282347e38f;
        f.hi[k] = -3.40282347e38f;
    }
    bp_load_part *p = &j->ls->parts[block];
    p->st = load_boxes(&f, dst, src, count, dim, j->sums);
    for (int k = 0; k < 3; ++k) {
        p->lo[k] = f.lo[k];
        p->hi[k] = f.hi[k];
        p->size_max[k] = f.size_max[k];
        p->size_sum[k] = f.size_sum[k];
        p->center_sum[k] = f.center_sum[k];
        p->center_sq[k] = f.center_sq[k];
    }
}

static void bp_load_range(void *user, uint32_t t, size_t b0, size_t b1) {
    (void)t;
    const bp_load_job *j = user;
    for (size_t k = b0; k < b1; ++k) bp_load_block(j, k);
}

// The frame's statistics from its blocks, in block order: the first bad box names the error, as
// a single pass would.
static bp_status bp_load_join(const bp_load_state *ls, bp_frame *f, size_t blocks) {
    for (int k = 0; k < 3; ++k) {
        f->lo[k] = 3.40282347e38f;
        f->hi[k] = -3.40282347e38f;
        f->size_sum[k] = f->center_sum[k] = f->center_sq[k] = 0.0;
        f->size_max[k] = 0.0f;
    }
    for (size_t k = 0; k < blocks; ++k) {
        const bp_load_part *p = &ls->parts[k];
        if (p->st != BP_OK) return p->st;
        for (int x = 0; x < f->dim; ++x) {
            f->lo[x] = p->lo[x] < f->lo[x] ? p->lo[x] : f->lo[x];
            f->hi[x] = p->hi[x] > f->hi[x] ? p->hi[x] : f->hi[x];
            f->size_max[x] = p->size_max[x] > f->size_max[x] ? p->size_max[x] : f->size_max[x];
            f->size_sum[x] += p->size_sum[x];
            f->center_sum[x] += p->center_sum[x];
            f->center_sq[x] += p->center_sq[x];
        }
    }
    return BP_OK;
}

bp_status bp_load(bp_context *ctx, bp_load_state *ls, bp_frame *f, int dim, const float *a, size_t na, const float *b,
                  size_t nb, bool sums) {
    const size_t n = na + nb;
    BP_RESERVE_DISCARD(ctx, ls->boxes, ls->boxes_cap, n * (size_t)(2 * dim) + 1);
    const size_t blocks = (na + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK + (nb + BP_LOAD_BLOCK - 1) / BP_LOAD_BLOCK;
    BP_RESERVE_DISCARD(ctx, ls->parts, ls->parts_cap, blocks + 1);
    f->dim = dim;
    f->n = n;  // read by the blocks; the frame holds no boxes until the end
    f->split = 0;
    f->boxes = ls->boxes;
    bp_load_job j = {ls, f, a, b, na, sums};
    uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP * 2);
    if (tasks > blocks) tasks = (uint32_t)blocks;
    bp_status st = bp_par_split(ctx, tasks, blocks, bp_load_range, &j);
    f->n = 0;
    if (st == BP_OK) st = bp_load_join(ls, f, blocks);
    if (st != BP_OK) return st;
    // Each extent was rounded to nearest in float, possibly down by half an ulp; one step up
    // makes size_max a true upper bound, so that query windows [lo - size_max, hi] built from it
    // never cut off a box that touches the query.
    for (int k = 0; k < dim; ++k) f->size_max[k] = nextafterf(f->size_max[k], INFINITY);
    if (n == 0)
        for (int k = 0; k < 3; ++k) f->lo[k] = f->hi[k] = 0.0f;
    f->n = n;
    return BP_OK;
}

void bp_load_release(bp_context *ctx, bp_load_state *ls) {
    BP_RELEASE(ctx, ls->boxes, ls->boxes_cap);
    BP_RELEASE(ctx, ls->parts, ls->parts_cap);
}
