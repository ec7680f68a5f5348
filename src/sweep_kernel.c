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
// Row k's candidates j .. j + 7: *inside gets the lanes still inside the window on axis 0 (a
// prefix, as above), the result the lanes that overlap.
typedef struct kernel_row8 {
    __m256 lo0, hi0, lo1, hi1, lo2, hi2;
} kernel_row8;

__attribute__((target("avx2"))) static inline kernel_row8 kernel_row8_make(const float *const *mm, size_t k,
                                                                           const int dim) {
    kernel_row8 r;
    r.lo0 = _mm256_set1_ps(mm[0][k]);
    r.hi0 = _mm256_set1_ps(mm[1][k]);
    r.lo1 = _mm256_set1_ps(mm[2][k]);
    r.hi1 = _mm256_set1_ps(mm[3][k]);
    r.lo2 = _mm256_set1_ps(dim == 3 ? mm[4][k] : 0.0f);
    r.hi2 = _mm256_set1_ps(dim == 3 ? mm[5][k] : 0.0f);
    return r;
}

__attribute__((target("avx2"))) static inline unsigned kernel_block8(const float *const *mm, const kernel_row8 *r,
                                                                     size_t j, const int dim, const bool check_lo,
                                                                     unsigned *inside) {
    __m256 in = _mm256_cmp_ps(_mm256_loadu_ps(mm[0] + j), r->hi0, _CMP_LE_OQ);
    *inside = (unsigned)_mm256_movemask_ps(in);
    if (*inside == 0) return 0;
    __m256 ov = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(mm[2] + j), r->hi1, _CMP_LE_OQ),
                              _mm256_cmp_ps(_mm256_loadu_ps(mm[3] + j), r->lo1, _CMP_GE_OQ));
    if (dim == 3)
        ov = _mm256_and_ps(ov, _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(mm[4] + j), r->hi2, _CMP_LE_OQ),
                                             _mm256_cmp_ps(_mm256_loadu_ps(mm[5] + j), r->lo2, _CMP_GE_OQ)));
    if (check_lo) ov = _mm256_and_ps(ov, _mm256_cmp_ps(_mm256_loadu_ps(mm[1] + j), r->lo0, _CMP_GE_OQ));
    return (unsigned)_mm256_movemask_ps(_mm256_and_ps(in, ov));
}

// Pairs (ik, idx[j .. j + 7]) as (min, max), in two halves of four.
__attribute__((target("avx2"))) static inline void kernel_pairs8(uint32_t ik, const uint32_t *idx, __m256i *p0,
                                                                  __m256i *p1) {
    const __m256i va = _mm256_set1_epi32((int)ik);
    const __m256i vb = _mm256_loadu_si256((const __m256i *)(const void *)idx);
    const __m256i lo = _mm256_min_epu32(va, vb), hi = _mm256_max_epu32(va, vb);
    const __m256i ul = _mm256_unpacklo_epi32(lo, hi), uh = _mm256_unpackhi_epi32(lo, hi);
    *p0 = _mm256_permute2x128_si256(ul, uh, 0x20);
    *p1 = _mm256_permute2x128_si256(ul, uh, 0x31);
}

// The same loop, eight candidates per step.
__attribute__((target("avx2"))) static inline bp_status kernel_sweep_avx2(const float *BP_RESTRICT soa, size_t n,
                                                                         size_t st, const int dim,
                                                                         const uint32_t *BP_RESTRICT idx,
                                                                         const bool check_lo, size_t k0, size_t k1,
                                                                         bp_sink *sink, uint64_t *checks) {
    const float *const mm[6] = {soa, soa + st, soa + 2 * st, soa + 3 * st, soa + 4 * st, soa + 5 * st};
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n; ++k) {
        const kernel_row8 row = kernel_row8_make(mm, k, dim);
        const uint32_t ik = idx[k];
        for (size_t j = k + 1;; j += 8) {
            unsigned inside;
            const unsigned hits = kernel_block8(mm, &row, j, dim, check_lo, &inside);
            if (inside == 0) break;
            if (hits) {
                bp_status r = bp_sink_room(sink, 8);
                if (r != BP_OK) return r;
                if (hits == 0xffu && !bp_sink_split(sink)) {
                    // Eight pairs at once, in two stores: dense scenes (`line`: every candidate a
                    // pair) are bound by writing pairs.
                    __m256i p0, p1;
                    kernel_pairs8(ik, idx + j, &p0, &p1);
                    // A large output (streamed buffer mode) and no pair waiting in the chunk: the
                    // block is one whole line of the pair buffer, streamed there directly. Not
                    // past pairs waiting in the chunk: the order must not depend on the mode
                    // (workers have none; see kernel_sweep_stream512).
                    bp_pair *out = bp_sink_line(sink, &r);
                    if (BP_UNLIKELY(r != BP_OK)) return r;
                    if (out) {
                        if (BP_LIKELY(((uintptr_t)out & 31u) == 0)) {
                            _mm256_stream_si256((__m256i *)(void *)out, p0);
                            _mm256_stream_si256((__m256i *)(void *)(out + 4), p1);
                        } else {  // an allocation hook that broke its alignment promise
                            _mm256_storeu_si256((__m256i *)(void *)out, p0);
                            _mm256_storeu_si256((__m256i *)(void *)(out + 4), p1);
                        }
                        bp_sink_line_done(sink);
                    } else {
                        out = bp_sink_at(sink);
                        _mm256_storeu_si256((__m256i *)(void *)out, p0);
                        _mm256_storeu_si256((__m256i *)(void *)(out + 4), p1);
                        bp_sink_advance(sink, 8);
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

#if !defined(BP_NO_AVX512)
#define SWEEP_KERNEL_AVX512 1
#define SWEEP_T512 __attribute__((target("avx2,avx512f,avx512vl,avx512dq,popcnt")))

// Streamed buffer mode (src/sink.c: a large output, no bipartite split) on AVX-512. The pairs that
// do not make a whole line yet wait in a register, and each line is streamed to the pair buffer
// as soon as it fills: the pairs keep the order of the plain modes (direct lines past pairs
// waiting in the chunk would make the order depend on the last call's pair count and differ from
// the workers'), and the streamed stores stay spread over the loop. The alternatives measured on
// `line` 2D at 100,000 (sweep, one worker): everything through the chunk, 1.4x slower than
// direct lines (the chunk's copies come in bursts); lines assembled in the chunk and read back,
// 14x slower (each read of a line part-written by stores still queued behind the streamed ones
// waits for them all).
SWEEP_T512 static inline bp_status kernel_sweep_stream512(const float *BP_RESTRICT soa, size_t n, size_t st,
                                                          const int dim, const uint32_t *BP_RESTRICT idx,
                                                          const bool check_lo, size_t k0, size_t k1, bp_sink *sink,
                                                          uint64_t *checks) {
    // The chunk's pairs come first: its whole lines out, the rest into the register, and the
    // chunk stays empty until the end.
    bp_status r = BP_OK;
    size_t waiting = 0;
    const bp_pair *chunk = bp_sink_stream_take(sink, &waiting, &r);
    if (r != BP_OK) return r;
    unsigned np = (unsigned)waiting;  // pairs waiting in `wait`, under 8
    __m512i wait = _mm512_maskz_loadu_epi64((__mmask8)((1u << np) - 1u), chunk);
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const float *const mm[6] = {soa, soa + st, soa + 2 * st, soa + 3 * st, soa + 4 * st, soa + 5 * st};
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n && r == BP_OK; ++k) {
        const kernel_row8 row = kernel_row8_make(mm, k, dim);
        const uint32_t ik = idx[k];
        for (size_t j = k + 1;; j += 8) {
            unsigned inside;
            const unsigned hits = kernel_block8(mm, &row, j, dim, check_lo, &inside);
            if (inside == 0) break;
            if (hits) {
                __m256i p0, p1;
                kernel_pairs8(ik, idx + j, &p0, &p1);
                __m512i b = _mm512_inserti64x4(_mm512_castsi256_si512(p0), p1, 1);
                if (hits != 0xffu) b = _mm512_maskz_compress_epi64((__mmask8)hits, b);
                // The line: the np waiting pairs, then the block's first 8 - np.
                const __m512i shift = _mm512_set1_epi64(8 - (long long)np);
                const __m512i sel = _mm512_mask_add_epi64(lane, _mm512_cmpge_epu64_mask(lane, _mm512_set1_epi64(np)),
                                                          lane, shift);
                const __m512i line = _mm512_permutex2var_epi64(wait, sel, b);
                const unsigned total = np + (unsigned)__builtin_popcount(hits);
                if (total < 8) {
                    wait = line;
                    np = total;
                } else {
                    bp_pair *out = bp_sink_next_line(sink, &r);
                    if (BP_UNLIKELY(r != BP_OK)) break;
                    if (BP_LIKELY(((uintptr_t)out & 63u) == 0)) _mm512_stream_si512((void *)out, line);
                    else _mm512_storeu_si512((void *)out, line);  // a hook that broke its alignment promise
                    bp_sink_line_done(sink);
                    // What is left of the block: its lanes from 8 - np on.
                    wait = _mm512_permutex2var_epi64(wait, _mm512_add_epi64(lane, _mm512_add_epi64(shift, _mm512_set1_epi64(8))), b);
                    np = total - 8;
                }
            }
            if (inside != 0xffu) {
                c += (uint64_t)__builtin_ctz(inside + 1u);
                break;
            }
            c += 8;
        }
    }
    _mm512_mask_storeu_epi64(bp_sink_stream_back(sink), (__mmask8)((1u << np) - 1u), wait);
    bp_sink_stream_return(sink, np);
    *checks += c;
    return r;
}
#endif

#endif

// Rows of two kinds (bp_sweep_soa_rows_sided): the loops above with a pair of two marked rows
// dropped, as loops of their own so that the sweep's and RDC's keep their code (the loops above
// given the marks as arguments came out 4% slower on `line`, sweep at 100,000 boxes). Without
// AVX2 the plain scalar loop.
static inline bp_status kernel_sided(const float *BP_RESTRICT soa, size_t n, size_t st, const int dim,
                                     const uint32_t *BP_RESTRICT idx, const uint32_t *BP_RESTRICT side, size_t k0,
                                     size_t k1, bp_sink *sink, uint64_t *checks) {
    const float *BP_RESTRICT min0 = soa, *BP_RESTRICT max0 = soa + st;
    const float *BP_RESTRICT min1 = soa + 2 * st, *BP_RESTRICT max1 = soa + 3 * st;
    const float *BP_RESTRICT min2 = soa + 4 * st, *BP_RESTRICT max2 = soa + 5 * st;
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n; ++k) {
        for (size_t j = k + 1; min0[j] <= max0[k]; ++j, ++c) {
            if (min1[j] <= max1[k] && max1[j] >= min1[k] &&
                (dim == 2 || (min2[j] <= max2[k] && max2[j] >= min2[k])) && !(side[k] & side[j])) {
                bp_status r = bp_sink_push(sink, idx[k], idx[j]);
                if (r != BP_OK) return r;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

#if defined(SWEEP_KERNEL_AVX2)
__attribute__((target("avx2"))) static inline bp_status kernel_sided_avx2(const float *BP_RESTRICT soa, size_t n,
                                                                         size_t st, const int dim,
                                                                         const uint32_t *BP_RESTRICT idx,
                                                                         const uint32_t *BP_RESTRICT side, size_t k0,
                                                                         size_t k1, bp_sink *sink, uint64_t *checks) {
    const float *const mm[6] = {soa, soa + st, soa + 2 * st, soa + 3 * st, soa + 4 * st, soa + 5 * st};
    uint64_t c = 0;
    for (size_t k = k0; k < k1 && k + 1 < n; ++k) {
        const kernel_row8 row = kernel_row8_make(mm, k, dim);
        const __m256 mark = _mm256_castsi256_ps(_mm256_set1_epi32((int)side[k]));
        const uint32_t ik = idx[k];
        for (size_t j = k + 1;; j += 8) {
            unsigned inside;
            unsigned hits = kernel_block8(mm, &row, j, dim, false, &inside);
            if (inside == 0) break;
            hits &= ~(unsigned)_mm256_movemask_ps(
                _mm256_and_ps(mark, _mm256_loadu_ps((const float *)(const void *)(side + j))));
            if (hits) {
                bp_status r = bp_sink_room(sink, 8);
                if (r != BP_OK) return r;
                for (unsigned b = 0; b < 8; ++b) bp_sink_put(sink, ik, idx[j + b], (hits >> b) & 1u);
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
#define KERNEL_SIDED(name, loop, attr, DIM)                                                           \
    attr static bp_status name(const float *soa, size_t n, size_t st, const uint32_t *idx,              \
                               const uint32_t *side, size_t k0, size_t k1, bp_sink *sink,             \
                               uint64_t *checks) {                                                    \
        return loop(soa, n, st, DIM, idx, side, k0, k1, sink, checks);                                \
    }
KERNEL_SIDED(kernel_sided_2, kernel_sided, , 2)
KERNEL_SIDED(kernel_sided_3, kernel_sided, , 3)
#if defined(SWEEP_KERNEL_AVX2)
KERNEL_VARIANT(kernel_avx2_2, kernel_sweep_avx2, __attribute__((target("avx2"))), 2, false)
KERNEL_VARIANT(kernel_avx2_2_lo, kernel_sweep_avx2, __attribute__((target("avx2"))), 2, true)
KERNEL_VARIANT(kernel_avx2_3, kernel_sweep_avx2, __attribute__((target("avx2"))), 3, false)
KERNEL_VARIANT(kernel_avx2_3_lo, kernel_sweep_avx2, __attribute__((target("avx2"))), 3, true)
KERNEL_SIDED(kernel_sided_avx2_2, kernel_sided_avx2, __attribute__((target("avx2"))), 2)
KERNEL_SIDED(kernel_sided_avx2_3, kernel_sided_avx2, __attribute__((target("avx2"))), 3)
#endif
#if defined(SWEEP_KERNEL_AVX512)
KERNEL_VARIANT(kernel_s512_2, kernel_sweep_stream512, SWEEP_T512, 2, false)
KERNEL_VARIANT(kernel_s512_2_lo, kernel_sweep_stream512, SWEEP_T512, 2, true)
KERNEL_VARIANT(kernel_s512_3, kernel_sweep_stream512, SWEEP_T512, 3, false)
KERNEL_VARIANT(kernel_s512_3_lo, kernel_sweep_stream512, SWEEP_T512, 3, true)
#endif

#if defined(SWEEP_KERNEL_AVX512)
static bool sweep_stream512(void) {
    return bp_cpu_avx512() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("popcnt");
}
#endif

bp_status bp_sweep_soa_rows(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx, bool check_lo,
                            size_t k0, size_t k1, bp_sink *sink, uint64_t *checks) {
#if defined(SWEEP_KERNEL_AVX512)
    if (bp_sink_streams(sink) && sweep_stream512()) {
        if (dim == 2)
            return (check_lo ? kernel_s512_2_lo : kernel_s512_2)(soa, n, stride, idx, k0, k1, sink, checks);
        return (check_lo ? kernel_s512_3_lo : kernel_s512_3)(soa, n, stride, idx, k0, k1, sink, checks);
    }
#endif
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

// No AVX-512 form: the streamed one serves the sweep's large outputs, not a crowded cell's.
bp_status bp_sweep_soa_rows_sided(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx,
                                  const uint32_t *side, size_t k0, size_t k1, bp_sink *sink, uint64_t *checks) {
#if defined(SWEEP_KERNEL_AVX2)
    if (bp_cpu_avx2())
        return (dim == 2 ? kernel_sided_avx2_2 : kernel_sided_avx2_3)(soa, n, stride, idx, side, k0, k1, sink, checks);
#endif
    return (dim == 2 ? kernel_sided_2 : kernel_sided_3)(soa, n, stride, idx, side, k0, k1, sink, checks);
}
