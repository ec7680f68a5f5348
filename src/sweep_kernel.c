// The sort-and-sweep pair loop (sweep_kernel.h). One instantiation per (dim, check_lo) so the
// constants fold and 2D drops the z tests.
#include "sweep_kernel.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// An 8-wide AVX2 loop is compiled alongside and chosen at run time where the CPU has it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX2)
#define SWEEP_KERNEL_AVX2 1
#include <immintrin.h>
#endif

#if defined(__SSE2__)
// Pushes the hits of a 4-wide block: room for four, then branchless writes.
static inline bp_status kernel_emit4(bp_sink *sink, uint32_t pk, const uint32_t *pj, int hits) {
    bp_status r = bp_sink_room(sink, 4);
    if (r != BP_OK) return r;
    bp_sink_put(sink, pk, pj[0], (unsigned)hits & 1u);
    bp_sink_put(sink, pk, pj[1], ((unsigned)hits >> 1) & 1u);
    bp_sink_put(sink, pk, pj[2], ((unsigned)hits >> 2) & 1u);
    bp_sink_put(sink, pk, pj[3], ((unsigned)hits >> 3) & 1u);
    return BP_OK;
}
#endif

static inline bp_status kernel_sweep(const float *BP_RESTRICT soa, size_t n, size_t st, const int dim,
                                     const uint32_t *BP_RESTRICT idx, const bool check_lo, size_t k0, size_t k1,
                                     bp_sink *sink, uint64_t *checks) {
    const float *BP_RESTRICT min0 = soa, *BP_RESTRICT max0 = soa + st;
    const float *BP_RESTRICT min1 = soa + 2 * st, *BP_RESTRICT max1 = soa + 3 * st;
    const float *BP_RESTRICT min2 = soa + 4 * st, *BP_RESTRICT max2 = soa + 5 * st;
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n; ++k) {
        const float lo0 = min0[k], hi0 = max0[k], lo1 = min1[k], hi1 = max1[k];
        const float lo2 = dim == 3 ? min2[k] : 0.0f, hi2 = dim == 3 ? max2[k] : 0.0f;
        size_t j = k + 1;
#if defined(__SSE2__)
        const __m128 vhi0 = _mm_set1_ps(hi0), vlo0 = _mm_set1_ps(lo0);
        const __m128 vlo1 = _mm_set1_ps(lo1), vhi1 = _mm_set1_ps(hi1);
        const __m128 vlo2 = _mm_set1_ps(lo2), vhi2 = _mm_set1_ps(hi2);
        for (;;) {
            // Lanes past the window (or past the end: sentinels) fail the first test; min0 is
            // sorted, so the lanes inside are a prefix: 0b0001, 0b0011, 0b0111 or 0b1111.
            __m128 in = _mm_cmple_ps(_mm_loadu_ps(min0 + j), vhi0);
            int inside = _mm_movemask_ps(in);
            if (inside == 0) break;
            __m128 ov = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(min1 + j), vhi1),
                                   _mm_cmpge_ps(_mm_loadu_ps(max1 + j), vlo1));
            if (dim == 3)
                ov = _mm_and_ps(ov, _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(min2 + j), vhi2),
                                               _mm_cmpge_ps(_mm_loadu_ps(max2 + j), vlo2)));
            if (check_lo) ov = _mm_and_ps(ov, _mm_cmpge_ps(_mm_loadu_ps(max0 + j), vlo0));
            int hits = _mm_movemask_ps(_mm_and_ps(in, ov));
            if (hits) {
                bp_status r = kernel_emit4(sink, idx[k], idx + j, hits);
                if (r != BP_OK) return r;
            }
            if (inside != 15) {
                c += (uint64_t)__builtin_ctz((unsigned)inside + 1u);
                break;
            }
            c += 4;
            j += 4;
        }
#else
        for (; min0[j] <= hi0; ++j, ++c) {
            if (min1[j] <= hi1 && max1[j] >= lo1 && (dim == 2 || (min2[j] <= hi2 && max2[j] >= lo2)) &&
                (!check_lo || max0[j] >= lo0)) {
                bp_status r = bp_sink_push(sink, idx[k], idx[j]);
                if (r != BP_OK) return r;
            }
        }
#endif
    }
    *checks += c;
    return BP_OK;
}

#if defined(SWEEP_KERNEL_AVX2)
// The same loop, eight candidates per step.
__attribute__((target("avx2"))) static inline bp_status kernel_sweep_avx2(const float *BP_RESTRICT soa, size_t n,
                                                                         size_t st, const int dim,
                                                                         const uint32_t *BP_RESTRICT idx,
                                                                         const bool check_lo, size_t k0, size_t k1,
                                                                         bp_sink *sink, uint64_t *checks) {
    const float *BP_RESTRICT min0 = soa, *BP_RESTRICT max0 = soa + st;
    const float *BP_RESTRICT min1 = soa + 2 * st, *BP_RESTRICT max1 = soa + 3 * st;
    const float *BP_RESTRICT min2 = soa + 4 * st, *BP_RESTRICT max2 = soa + 5 * st;
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n; ++k) {
        const __m256 vhi0 = _mm256_set1_ps(max0[k]), vlo0 = _mm256_set1_ps(min0[k]);
        const __m256 vlo1 = _mm256_set1_ps(min1[k]), vhi1 = _mm256_set1_ps(max1[k]);
        const __m256 vlo2 = _mm256_set1_ps(dim == 3 ? min2[k] : 0.0f);
        const __m256 vhi2 = _mm256_set1_ps(dim == 3 ? max2[k] : 0.0f);
        const uint32_t ik = idx[k];
        for (size_t j = k + 1;; j += 8) {
            __m256 in = _mm256_cmp_ps(_mm256_loadu_ps(min0 + j), vhi0, _CMP_LE_OQ);
            unsigned inside = (unsigned)_mm256_movemask_ps(in);
            if (inside == 0) break;
            __m256 ov = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(min1 + j), vhi1, _CMP_LE_OQ),
                                      _mm256_cmp_ps(_mm256_loadu_ps(max1 + j), vlo1, _CMP_GE_OQ));
            if (dim == 3)
                ov = _mm256_and_ps(ov, _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(min2 + j), vhi2, _CMP_LE_OQ),
                                                     _mm256_cmp_ps(_mm256_loadu_ps(max2 + j), vlo2, _CMP_GE_OQ)));
            if (check_lo) ov = _mm256_and_ps(ov, _mm256_cmp_ps(_mm256_loadu_ps(max0 + j), vlo0, _CMP_GE_OQ));
            unsigned hits = (unsigned)_mm256_movemask_ps(_mm256_and_ps(in, ov));
            if (hits) {
                bp_status r = bp_sink_room(sink, 8);
                if (r != BP_OK) return r;
                if (hits == 0xffu && !sink->split) {
                    // Eight pairs at once, (min, max) each, in two stores: dense scenes (`line`:
                    // every candidate a pair) are bound by writing pairs.
                    const __m256i va = _mm256_set1_epi32((int)ik);
                    const __m256i vb = _mm256_loadu_si256((const __m256i *)(const void *)(idx + j));
                    const __m256i lo = _mm256_min_epu32(va, vb), hi = _mm256_max_epu32(va, vb);
                    const __m256i ul = _mm256_unpacklo_epi32(lo, hi), uh = _mm256_unpackhi_epi32(lo, hi);
                    const __m256i p0 = _mm256_permute2x128_si256(ul, uh, 0x20);
                    const __m256i p1 = _mm256_permute2x128_si256(ul, uh, 0x31);
                    if (sink->lines) {
                        // A large output: the block is one whole line of the pair buffer,
                        // streamed there directly (context.c, streamed buffer mode).
                        if (BP_UNLIKELY(sink->delivered + 8 > sink->lines_cap)) {
                            r = bp_sink_grow_lines(sink);
                            if (r != BP_OK) return r;
                        }
                        bp_pair *out = sink->lines + sink->delivered;
                        if (BP_LIKELY(((uintptr_t)out & 31u) == 0)) {
                            _mm256_stream_si256((__m256i *)(void *)out, p0);
                            _mm256_stream_si256((__m256i *)(void *)(out + 4), p1);
                        } else {  // an allocation hook that broke its alignment promise
                            _mm256_storeu_si256((__m256i *)(void *)out, p0);
                            _mm256_storeu_si256((__m256i *)(void *)(out + 4), p1);
                        }
                        sink->delivered += 8;
                    } else {
                        bp_pair *out = sink->buf + sink->count;
                        _mm256_storeu_si256((__m256i *)(void *)out, p0);
                        _mm256_storeu_si256((__m256i *)(void *)(out + 4), p1);
                        sink->count += 8;
                    }
                } else {
                    for (unsigned b = 0; b < 8; ++b) bp_sink_put(sink, ik, idx[j + b], (hits >> b) & 1u);
                }
            }
            if (inside != 0xffu) {
                c += (uint64_t)__builtin_ctz(inside + 1u);
                break;
            }
            c += 8;
        }
    }
    *checks += c;
    return BP_OK;
}

#endif

// One function per (dim, check_lo), each inlining its loop with the constants folded (a single
// function taking them as arguments keeps the tests in the loop: 9% more instructions measured).
#define KERNEL_VARIANT(name, loop, attr, DIM, CHECK_LO)                                               \
    attr static bp_status name(const float *soa, size_t n, size_t st, const uint32_t *idx, size_t k0,    \
                               size_t k1, bp_sink *sink, uint64_t *checks) {                          \
        return loop(soa, n, st, DIM, idx, CHECK_LO, k0, k1, sink, checks);                            \
    }
KERNEL_VARIANT(kernel_2, kernel_sweep, , 2, false)
KERNEL_VARIANT(kernel_2_lo, kernel_sweep, , 2, true)
KERNEL_VARIANT(kernel_3, kernel_sweep, , 3, false)
KERNEL_VARIANT(kernel_3_lo, kernel_sweep, , 3, true)
#if defined(SWEEP_KERNEL_AVX2)
KERNEL_VARIANT(kernel_avx2_2, kernel_sweep_avx2, __attribute__((target("avx2"))), 2, false)
KERNEL_VARIANT(kernel_avx2_2_lo, kernel_sweep_avx2, __attribute__((target("avx2"))), 2, true)
KERNEL_VARIANT(kernel_avx2_3, kernel_sweep_avx2, __attribute__((target("avx2"))), 3, false)
KERNEL_VARIANT(kernel_avx2_3_lo, kernel_sweep_avx2, __attribute__((target("avx2"))), 3, true)
#endif

bp_status bp_sweep_soa_rows(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx, bool check_lo,
                            size_t k0, size_t k1, bp_sink *sink, uint64_t *checks) {
#if defined(SWEEP_KERNEL_AVX2)
    if (bp_cpu_avx2()) {
        if (dim == 2)
            return (check_lo ? kernel_avx2_2_lo : kernel_avx2_2)(soa, n, stride, idx, k0, k1, sink, checks);
        return (check_lo ? kernel_avx2_3_lo : kernel_avx2_3)(soa, n, stride, idx, k0, k1, sink, checks);
    }
#endif
    if (dim == 2) return (check_lo ? kernel_2_lo : kernel_2)(soa, n, stride, idx, k0, k1, sink, checks);
    return (check_lo ? kernel_3_lo : kernel_3)(soa, n, stride, idx, k0, k1, sink, checks);
}

bp_status bp_sweep_soa(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx, bool check_lo,
                       bp_sink *sink, uint64_t *checks) {
    return bp_sweep_soa_rows(soa, n, stride, dim, idx, check_lo, 0, n, sink, checks);
}
