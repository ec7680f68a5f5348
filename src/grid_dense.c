// Method `grid`, sorted layout: the same-level pair pass over crowded cells (docs/grid.md,
// "Dense cells"). Where many boxes share a cell (`seed` past a few thousand circles: hundreds a
// cell) a box meets long contiguous runs of the sorted boxes, and the scalar loop of src/grid_scan.c
// (one box at a time, a branch per hit) spends its time on a compare and a mispredicted branch
// per candidate. Here the runs are tested 16 boxes at a time with AVX-512: boxes are stored
// (min, -max), so a box is a hit when every stored lane is <= the probe's; the hits become a
// mask, and the pairs are compressed in lane order into room reserved in the sink, without a
// branch per hit. Same runs, same candidates, same pairs in the same order as the scalar loop.
// Without AVX-512, an AVX2 variant takes 8 candidates a step (compress by a table of permutes).
#include "grid.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX512)
#define GRID_DENSE_HAVE_512 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX2)
#define GRID_DENSE_HAVE_256 1
#endif
#if defined(GRID_DENSE_HAVE_512) || defined(GRID_DENSE_HAVE_256)
#include <immintrin.h>
#endif

#if defined(GRID_DENSE_HAVE_512)
// What GRID_DENSE_T512 lets the compiler use, in every kernel it marks. Not AVX-512 BW: with it
// in the target, GCC 12 writes `unsigned in = <16-lane compare mask>` to a stack slot with a
// 16-bit kmovw and reads it back with a 32-bit movl (bits 16-31 stale) wherever it keeps that
// value in memory, as the calls of the ThreadSanitizer build make it do (threads.auto.2d.same,
// SEED=124637720, lost 2D pairs); tests/repro/gcc12_mask_spill.c shows it alone. So the six
// arrays' kernel compares its 16-bit codes with AVX2 and gathers the bits with pext.
static bool grid_dense_cpu512(void) {
    return bp_cpu_avx512() && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
}
#endif
#if defined(GRID_DENSE_HAVE_256)
static bool grid_dense_256(void) { return bp_cpu_avx2() && __builtin_cpu_supports("popcnt"); }
#endif

bool bp_grid_dense_soa_possible(void) {
#if defined(GRID_DENSE_HAVE_512)
    return grid_dense_cpu512();
#else
    return false;
#endif
}

#if defined(GRID_DENSE_HAVE_512) || defined(GRID_DENSE_HAVE_256)
// The lanes of the `w` boxes from j that are before position `end` (SIZE_MAX: no bound).
static inline unsigned grid_dense_below(size_t j, size_t end, unsigned w) {
    return end - j >= w ? (1u << w) - 1u : (1u << (end - j)) - 1u;
}

// What the runs read: the sorted frame; in crowded 3D frames the boxes' codes as six arrays
// (grid_sorted.soa); and the axis on which a run's boxes are sorted by their min (grid_sorted.xsorted: a
// run along a row of the level, then stop = the level's kax[0]), where it ends at the first box
// that starts past the probe's max: the boxes after it start further still. -1: no stop.
typedef struct grid_dense_src {
    const uint32_t *BP_RESTRICT keys;
    const float *BP_RESTRICT bx;
    const uint32_t *BP_RESTRICT ids;
    const int16_t *BP_RESTRICT soa;  // NULL: none
    const grid_codes *codes;         // soa's
    size_t stride;
    int stop;
} grid_dense_src;

static inline grid_dense_src grid_dense_src_of(const bp_grid *g, int stop) {
    const grid_sorted *o = &g->sorted;
    grid_dense_src s = {g->keys, o->boxes, o->perm, o->xsorted ? o->soa : NULL, &o->codes, o->soa_stride, stop};
    return s;
}

// The kernels' variants, chosen once per call (pairs, rows) and a constant in each specialised
// copy of the loops: the stored boxes with no stop, with a stop (3D), and the six arrays
// (AVX-512, 3D; stops on x or none, by a mask). A first version chose per run, inside the loops,
// and computed the stop bits whether used or not: frames that never sort got slower (`line` 3D
// 100,000 6.6 -> 8.4 ms, `sticks` 3D 20.4 -> 24.3).
enum { GRID_V_PLAIN = 0, GRID_V_STOP = 1, GRID_V_SOA = 2, GRID_V_SOA_ALL = 3 };
#define GRID_DENSE_INLINE __attribute__((always_inline)) inline
// Sets st to F(args..., v) for the variant v (a value of the caller's), v a constant in each call
// of F.
#define GRID_DENSE_BY_VARIANT(st, v, F, ...)                                                                   \
    switch (v) {                                                                                               \
    case GRID_V_SOA: st = F(__VA_ARGS__, GRID_V_SOA); break;                                                   \
    case GRID_V_SOA_ALL: st = F(__VA_ARGS__, GRID_V_SOA_ALL); break;                                           \
    case GRID_V_STOP: st = F(__VA_ARGS__, GRID_V_STOP); break;                                                 \
    default: st = F(__VA_ARGS__, GRID_V_PLAIN); break;                                                         \
    }

// The same-level loops of src/grid_scan.c over a crowded block, for one instruction set: RUN2/RUN3
// test a run (stored box a, id, from j while keys <= lim and j < end) in variant v, ADV moves a
// cursor to the first key >= lo, VARIANT picks the variant of a source. In 3D, runs stop early
// where the cells are sorted (grid_dense_src).
#define GRID_DENSE_LOOPS(SUF, TARGET, RUN2, RUN3, ADV, VARIANT)                                              \
    TARGET static bp_status grid_dense_pairs2_##SUF(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, \
                                                    size_t *cursor, bp_sink *sink, uint64_t *checks) {         \
        const grid_dense_src src = grid_dense_src_of(g, -1);                                                   \
        const uint32_t *BP_RESTRICT keys = g->keys;                                                            \
        const float *BP_RESTRICT bx = g->sorted.boxes;                                                         \
        const uint32_t *BP_RESTRICT ids = g->sorted.perm;                                                      \
        const uint32_t sx = L->kstride[1];                                                                     \
        size_t c1 = *cursor;                                                                                   \
        uint64_t c = 0;                                                                                        \
        bp_status st = BP_OK;                                                                                  \
        for (size_t p = p0; p < p1 && st == BP_OK; ++p) {                                                      \
            const uint32_t K = keys[p];                                                                        \
            st = RUN2(&src, p + 1, SIZE_MAX, K + 1, bx + 4 * p, ids[p], sink, &c);                             \
            if (BP_UNLIKELY(st != BP_OK)) break;                                                               \
            c1 = ADV(keys, c1, K + sx - 1);                                                                    \
            st = RUN2(&src, c1, SIZE_MAX, K + sx + 1, bx + 4 * p, ids[p], sink, &c);                           \
        }                                                                                                      \
        *cursor = c1;                                                                                          \
        *checks += c;                                                                                          \
        return st;                                                                                             \
    }                                                                                                          \
    TARGET static GRID_DENSE_INLINE bp_status grid_dense_pairs3_as_##SUF(                                      \
        const grid_dense_src *src, const grid_level *L, size_t p0, size_t p1, size_t cursor[4], bp_sink *sink,  \
        uint64_t *checks, const int v) {                                                                       \
        const uint32_t *BP_RESTRICT keys = src->keys;                                                          \
        const float *BP_RESTRICT bx = src->bx;                                                                 \
        const uint32_t *BP_RESTRICT ids = src->ids;                                                            \
        const uint32_t sx = L->kstride[1], sxy = L->kstride[2];                                                 \
        const uint32_t off[4] = {sx, sxy - sx, sxy, sxy + sx};                                                 \
        uint64_t c = 0;                                                                                        \
        bp_status st = BP_OK;                                                                                  \
        for (size_t p = p0; p < p1 && st == BP_OK; ++p) {                                                      \
            const uint32_t K = keys[p];                                                                        \
            st = RUN3(src, p + 1, SIZE_MAX, K + 1, bx + 6 * p, ids[p], sink, &c, v);                           \
            for (int r = 0; r < 4 && st == BP_OK; ++r) {                                                       \
                cursor[r] = ADV(keys, cursor[r], K + off[r] - 1);                                              \
                st = RUN3(src, cursor[r], SIZE_MAX, K + off[r] + 1, bx + 6 * p, ids[p], sink, &c, v);          \
            }                                                                                                  \
        }                                                                                                      \
        *checks += c;                                                                                          \
        return st;                                                                                             \
    }                                                                                                          \
    TARGET static bp_status grid_dense_pairs3_##SUF(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, \
                                                    size_t cursor[4], bp_sink *sink, uint64_t *checks) {       \
        const grid_dense_src src = grid_dense_src_of(g, g->sorted.xsorted ? L->kax[0] : -1);                   \
        const int v = VARIANT(&src);                                                                           \
        bp_status st;                                                                                          \
        GRID_DENSE_BY_VARIANT(st, v, grid_dense_pairs3_as_##SUF, &src, L, p0, p1, cursor, sink, checks);       \
        return st;                                                                                             \
    }

// The rows of a region query of stored box a (id): row r is the sorted boxes from start[r] while
// keys <= last[r] (and, with a stop axis, while they start at or before a's max on it). Rows of
// GRID_DENSE_ROW_MIN boxes or more (keys sorted: one load tells) go 16 (8) candidates a step,
// shorter ones box by box (grid_row_boxes). The probe is built once for all rows (a call and a
// probe per row cost `sizes` 3D 100,000 about 6%). Checks as grid_row_boxes counts them.
#define GRID_DENSE_ROWS(SUF, TARGET, PATT, PAT2, PAT3, SCAN2, SCAN3, VARIANT)                                 \
    TARGET static GRID_DENSE_INLINE bp_status grid_dense_rows_as_##SUF(                                        \
        const bp_grid *g, const grid_dense_src *src, const float *a, uint32_t id, const size_t *start,        \
        const uint32_t *last, size_t nr, bp_sink *sink, uint64_t *checks, const int v) {                       \
        const uint32_t *BP_RESTRICT keys = src->keys;                                                          \
        const float *BP_RESTRICT bx = src->bx;                                                                 \
        const int d = g->geom.dim;                                                                             \
        const PATT pat = d == 2 ? PAT2(a) : PAT3(src, a);                                                      \
        const grid_probe pr = grid_probe_make(a, d);                                                           \
        const grid_stop sp = grid_stop_make(a, d, src->stop);                                                  \
        const bool always = g->dense.always;                                                                   \
        uint64_t c = 0;                                                                                        \
        bp_status st = BP_OK;                                                                                  \
        for (size_t r = 0; r < nr && st == BP_OK; ++r) {                                                       \
            const uint32_t khi = last[r];                                                                      \
            size_t j = start[r];                                                                               \
            if (grid_row_long(keys, j, khi) || always) {                                                      \
                c += !(keys[j] <= khi && grid_stop_in(&sp, bx + (size_t)(2 * d) * j));                         \
                st = d == 2 ? SCAN2(src, j, SIZE_MAX, khi, &pat, id, sink, &c)                                 \
                            : SCAN3(src, j, SIZE_MAX, khi, &pat, id, sink, &c, v);                             \
                continue;                                                                                      \
            }                                                                                                  \
            st = src->stop >= 0 ? grid_row_boxes(g, &pr, &sp, id, j, khi, sink, &c, true)                      \
                                : grid_row_boxes(g, &pr, &sp, id, j, khi, sink, &c, false);                    \
        }                                                                                                      \
        *checks += c;                                                                                          \
        return st;                                                                                             \
    }                                                                                                          \
    TARGET static bp_status grid_dense_rows_##SUF(const bp_grid *g, const float *a, uint32_t id,             \
                                                  const size_t *start, const uint32_t *last, size_t nr,      \
                                                  int stop, bp_sink *sink, uint64_t *checks) {               \
        const grid_dense_src src = grid_dense_src_of(g, stop);                                                 \
        const int v = VARIANT(&src);                                                                           \
        bp_status st;                                                                                          \
        GRID_DENSE_BY_VARIANT(st, v, grid_dense_rows_as_##SUF, g, &src, a, id, start, last, nr, sink, checks); \
        return st;                                                                                             \
    }                                                                                                          \
    TARGET static GRID_DENSE_INLINE bp_status grid_dense_runs_as_##SUF(                                        \
        const bp_grid *g, const grid_dense_src *src, const float *a, uint32_t id, const size_t *start,        \
        const uint32_t *lim, size_t nr, bp_sink *sink, uint64_t *checks, const int v) {                        \
        const int d = g->geom.dim;                                                                             \
        const PATT pat = d == 2 ? PAT2(a) : PAT3(src, a);                                                      \
        uint64_t c = 0;                                                                                        \
        bp_status st = BP_OK;                                                                                  \
        for (size_t r = 0; r < nr && st == BP_OK; ++r)                                                         \
            st = d == 2 ? SCAN2(src, start[r], SIZE_MAX, lim[r], &pat, id, sink, &c)                           \
                        : SCAN3(src, start[r], SIZE_MAX, lim[r], &pat, id, sink, &c, v);                       \
        *checks += c;                                                                                          \
        return st;                                                                                             \
    }                                                                                                          \
    TARGET static bp_status grid_dense_runs_##SUF(const bp_grid *g, const float *a, uint32_t id,             \
                                                  const size_t *start, const uint32_t *lim, size_t nr,       \
                                                  int stop, bp_sink *sink, uint64_t *checks) {               \
        const grid_dense_src src = grid_dense_src_of(g, stop);                                                 \
        const int v = VARIANT(&src);                                                                           \
        bp_status st;                                                                                          \
        GRID_DENSE_BY_VARIANT(st, v, grid_dense_runs_as_##SUF, g, &src, a, id, start, lim, nr, sink, checks);  \
        return st;                                                                                             \
    }
#endif

#if defined(GRID_DENSE_HAVE_512)
#define GRID_DENSE_T512 __attribute__((target("avx512f,bmi2,popcnt")))

// Writes the pairs (id, ids[t]) for the lanes t set in `hit` (16 lanes) at out, in lane order,
// canonical (smaller index first) as bp_sink_put writes them; returns how many. The hits' ids
// are compressed to the front of a register (one compress of 16 dwords; two compresses of 8
// pairs, as before, made `sizes` 3D 100,000 about 10% slower and `seed` 30,000 13%), paired
// with id, and both halves stored whole into the 16 pairs of reserved room; only the hits count. Compressed in a register, then stored: a
// compress to memory is microcoded and slow on some cores (Zen 4).
GRID_DENSE_T512 static inline size_t grid_dense_put16(bp_pair *out, uint32_t id, const uint32_t *ids, unsigned hit) {
    const __m512i idj = _mm512_maskz_compress_epi32((__mmask16)hit, _mm512_loadu_si512((const void *)ids));
    const __m512i idp = _mm512_set1_epi32((int)id);
    const __m512i lo = _mm512_min_epu32(idp, idj), hi = _mm512_max_epu32(idp, idj);
    const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i i1 = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    _mm512_storeu_si512((void *)out, _mm512_permutex2var_epi32(lo, i0, hi));
    _mm512_storeu_si512((void *)(out + 8), _mm512_permutex2var_epi32(lo, i1, hi));
    return (size_t)__builtin_popcount(hit);
}

// The probe of stored box a in the form the runs compare against (built once for all the rows
// of a query: grid_dense_rows): its values repeated to match the stored boxes' layout (v), and
// the values alone (q: max, then -min), which the six arrays of the 3D frame compare against.
typedef struct grid_pat512 {
    __m512 v[3];
    float q[6];
    int16_t c[6];    // the codes of q, where the frame has the six arrays (grid_code)
    grid_probe pr;   // for the boxes whose codes leave the test to the floats
} grid_pat512;

static inline void grid_dense_probe_values(const float *a, int d, float q[6]) {
    for (int e = 0; e < d; ++e) {
        q[e] = -a[d + e];
        q[d + e] = -a[e];
    }
}

GRID_DENSE_T512 static inline grid_pat512 grid_dense_pat2_512(const float *a) {
    const __m128 a4 = _mm_loadu_ps(a);
    grid_pat512 p;
    p.v[0] = _mm512_broadcast_f32x4(_mm_xor_ps(_mm_shuffle_ps(a4, a4, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f)));
    p.v[1] = p.v[2] = p.v[0];
    grid_dense_probe_values(a, 2, p.q);
    p.q[4] = p.q[5] = 0.0f;
    memset(p.c, 0, sizeof p.c);
    p.pr = grid_probe_make(a, 2);
    return p;
}

// The run of sorted boxes j, j+1, ... while keys[j] <= lim and j < end, 16 at a time: the keys
// say which lanes are in the run (sorted, so a prefix; the sentinels after the last box end any
// run), four 16-float compares against the probe (max, -min) of stored box a, repeated in every
// 128-bit lane, which boxes overlap it. A lane is a hit when all four of its compare bits are
// set: AND the mask with itself shifted by 1 and 2, keep every fourth bit. (2D runs never stop
// early: only 3D frames sort their cells.)
GRID_DENSE_T512 static inline bp_status grid_dense_scan2_512(const grid_dense_src *s, size_t j, size_t end, uint32_t lim,
                                                            const grid_pat512 *pat, uint32_t id, bp_sink *sink,
                                                            uint64_t *c) {
    const uint32_t *BP_RESTRICT keys = s->keys, *BP_RESTRICT ids = s->ids;
    const float *BP_RESTRICT bx = s->bx;
    const __m512 probe = pat->v[0];
    const __m512i L = _mm512_set1_epi32((int)lim);
    bp_pair_writer o = bp_writer_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 16) {
        st = bp_writer_room(sink, &o, 16);  // a step writes at most 16 slots
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(keys + j)), L) &
                            grid_dense_below(j, end, 16);
        const float *b = bx + 4 * j;
        const uint64_t m = (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b), probe, _CMP_LE_OQ) |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 16), probe, _CMP_LE_OQ) << 16 |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 32), probe, _CMP_LE_OQ) << 32 |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 48), probe, _CMP_LE_OQ) << 48;
        uint64_t t = m & (m >> 1);
        t &= t >> 2;
        const unsigned hit = (unsigned)_pext_u64(t, 0x1111111111111111ull) & in;
        bp_writer_advance(&o, grid_dense_put16(bp_writer_at(&o), id, ids + j, hit));
        cand += (unsigned)__builtin_popcount(in);
        if (in != 0xFFFFu) break;
    }
    bp_writer_close(sink, &o);
    *c += cand;
    return st;
}

GRID_DENSE_T512 static inline bp_status grid_dense_run2_512(const grid_dense_src *s, size_t j, size_t end, uint32_t lim,
                                                           const float *a, uint32_t id, bp_sink *sink, uint64_t *c) {
    const grid_pat512 pat = grid_dense_pat2_512(a);
    return grid_dense_scan2_512(s, j, end, lim, &pat, id, sink, c);
}

// 3D: 16 boxes are 96 floats, six registers; the probe's 6 floats repeat with period 6, so
// three patterns cover 8 boxes (48 floats). A lane is a hit when its 6 compare bits are set; its
// bit for the min on axis `ax` (a stop's) is returned in *starts.
GRID_DENSE_T512 static inline unsigned grid_dense_hits3_512(const float *b, const __m512 pat[3], int ax,
                                                           unsigned *starts, const bool stops) {
    const uint64_t m = (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b), pat[0], _CMP_LE_OQ) |
                       (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 16), pat[1], _CMP_LE_OQ) << 16 |
                       (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 32), pat[2], _CMP_LE_OQ) << 32;
    const uint64_t t = m & (m >> 1), t4 = t & (t >> 2);
    *starts = stops ? (unsigned)_pext_u64(m, 0x41041041041ull << ax) : 0u;
    return (unsigned)_pext_u64(t4 & (t >> 4), 0x41041041041ull);
}

GRID_DENSE_T512 static inline grid_pat512 grid_dense_pat3_512(const grid_dense_src *s, const float *a) {
    // Float f of a group of 8 boxes compares against probe value f mod 6, the probe being
    // (-a[3], -a[4], -a[5], -a[0], -a[1], -a[2]): permutes of a's 6 floats in a register (built
    // through memory, the 64-byte load waited on six scalar stores).
    const __m512i av = _mm512_xor_si512(_mm512_castps_si512(_mm512_maskz_loadu_ps((__mmask16)0x3F, a)),
                                        _mm512_set1_epi32(INT32_MIN));
    grid_pat512 p;
    p.v[0] = _mm512_castsi512_ps(_mm512_permutexvar_epi32(_mm512_setr_epi32(3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0), av));
    p.v[1] = _mm512_castsi512_ps(_mm512_permutexvar_epi32(_mm512_setr_epi32(1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4), av));
    p.v[2] = _mm512_castsi512_ps(_mm512_permutexvar_epi32(_mm512_setr_epi32(5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2), av));
    grid_dense_probe_values(a, 3, p.q);
    for (int k = 0; k < 6; ++k) p.c[k] = s->soa ? grid_code(s->codes, k, p.q[k]) : 0;
    p.pr = grid_probe_make(a, 3);
    return p;
}

// Of the lanes `lanes` of the 16 stored boxes from j: those that overlap the probe (the test the
// codes left open: equal codes).
static inline unsigned grid_dense_exact(const float *bx, size_t j, unsigned lanes, const grid_probe *pr) {
    unsigned hit = 0;
    for (; lanes; lanes &= lanes - 1) {
        const unsigned l = (unsigned)__builtin_ctz(lanes);
        hit |= (unsigned)grid_hit3(pr, bx + 6 * (j + l)) << l;
    }
    return hit;
}

// The lanes of a 16-lane compare of 16-bit values (each lane all ones or zero): a bit each.
GRID_DENSE_T512 static inline unsigned grid_dense_lanes16(__m256i c) {
    return (unsigned)_pext_u32((uint32_t)_mm256_movemask_epi8(c), 0x55555555u);
}

// Whether stored box t starts (its min x) at or before the probe's max x (qx, code cx): by the
// codes, and by the floats where the codes are equal.
GRID_DENSE_T512 static inline bool grid_dense_starts_in(const int16_t *X, const float *bx, size_t t, int16_t cx, float qx) {
    return X[t] < cx || (X[t] == cx && bx[6 * t] <= qx);
}

// The 3D run over the six arrays of codes (grid_code). A box is a hit when each of its six stored
// values is at or below the probe's. The codes keep the order of the values, so the largest of
// the six code differences (saturated: the sign and zero stay exact) says it for most boxes:
// below 0, every value is below the probe's (a hit); above 0, one is above (not); 0, a value's
// code equals the probe's and the floats decide (grid_dense_exact). Half the bytes of the floats
// a step, and 256-bit operations, which Zen 4 runs in one pass where 512-bit ones take two:
// `sizes` 3D 100,000 went from 51.3 to 44.6 ms (medians of 6 alternating runs) with compares
// into mask registers; these AVX2 compares gathered by pext (grid_dense_cpu512 says why) cost
// 3-5% of that back (docs/grid.md, "Codes"). A step whose last lane is in the run and before the stop has all its lanes there
// (keys and, with a stop, min x sorted): two scalar tests, no mask; the last step of a run takes
// the lanes in the run and before the stop (a prefix) from compares, once. The stop is decided as
// grid_dense_starts_in does, so the run's length, its checks, are the stored boxes' exactly. The
// candidates are counted from the run's length.
GRID_DENSE_T512 static GRID_DENSE_INLINE bp_status grid_dense_scan3_soa_512(const grid_dense_src *s, size_t j, size_t end,
                                                                           uint32_t lim, const grid_pat512 *p, uint32_t id,
                                                                           bp_sink *sink, uint64_t *c, const bool stops) {
    const uint32_t *BP_RESTRICT keys = s->keys, *BP_RESTRICT ids = s->ids;
    const int16_t *BP_RESTRICT X = s->soa;
    const float *BP_RESTRICT bx = s->bx;
    const size_t W = s->stride, j0 = j;
    const int16_t cx = p->c[0];
    const float qx = p->q[0];
    const __m256i q0 = _mm256_set1_epi16(cx), q1 = _mm256_set1_epi16(p->c[1]), q2 = _mm256_set1_epi16(p->c[2]);
    const __m256i q3 = _mm256_set1_epi16(p->c[3]), q4 = _mm256_set1_epi16(p->c[4]), q5 = _mm256_set1_epi16(p->c[5]);
    const __m256i zero = _mm256_setzero_si256();
    bp_pair_writer o = bp_writer_open(sink);
    bp_status st = BP_OK;
    for (;;) {
        st = bp_writer_room(sink, &o, 16);  // a step writes at most 16 slots
        if (BP_UNLIKELY(st != BP_OK)) break;
        // Two bases and the stride address the six arrays.
        const int16_t *P0 = X + j, *P3 = P0 + 3 * W;
#define GRID_DENSE_LD(P) _mm256_loadu_si256((const __m256i *)(const void *)(P))
        const __m256i m = _mm256_max_epi16(
            _mm256_max_epi16(_mm256_max_epi16(_mm256_subs_epi16(GRID_DENSE_LD(P0), q0), _mm256_subs_epi16(GRID_DENSE_LD(P0 + W), q1)),
                             _mm256_max_epi16(_mm256_subs_epi16(GRID_DENSE_LD(P0 + 2 * W), q2), _mm256_subs_epi16(GRID_DENSE_LD(P3), q3))),
            _mm256_max_epi16(_mm256_subs_epi16(GRID_DENSE_LD(P3 + W), q4), _mm256_subs_epi16(GRID_DENSE_LD(P3 + 2 * W), q5)));
#undef GRID_DENSE_LD
        unsigned hit = grid_dense_lanes16(_mm256_cmpgt_epi16(zero, m));
        const unsigned open = grid_dense_lanes16(_mm256_cmpeq_epi16(m, zero));
        const size_t t = j + 15;
        if (keys[t] <= lim && t < end && (!stops || grid_dense_starts_in(X, bx, t, cx, qx))) {
            if (BP_UNLIKELY(open)) hit |= grid_dense_exact(bx, j, open, &p->pr);
            bp_writer_advance(&o, grid_dense_put16(bp_writer_at(&o), id, ids + j, hit));
            j += 16;
            continue;
        }
        unsigned go = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(keys + j)), _mm512_set1_epi32((int)lim));
        if (end != SIZE_MAX) go &= grid_dense_below(j, end, 16);
        if (open & go) hit |= grid_dense_exact(bx, j, open & go, &p->pr);
        bp_writer_advance(&o, grid_dense_put16(bp_writer_at(&o), id, ids + j, hit & go));
        if (stops) {
            // The lanes that start at or before the probe's max x: a prefix (sorted by it).
            const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)P0);
            go &= ~grid_dense_lanes16(_mm256_cmpgt_epi16(x, q0));
            for (unsigned eq = go & grid_dense_lanes16(_mm256_cmpeq_epi16(x, q0)); eq; eq &= eq - 1) {
                const unsigned l = (unsigned)__builtin_ctz(eq);
                if (!(bx[6 * (j + l)] <= qx)) {
                    go &= (1u << l) - 1u;
                    break;
                }
            }
        }
        j += (unsigned)__builtin_popcount(go);
        break;
    }
    bp_writer_close(sink, &o);
    *c += j - j0;
    return st;
}

GRID_DENSE_T512 static GRID_DENSE_INLINE bp_status grid_dense_scan3_aos_512(const grid_dense_src *s, size_t j, size_t end,
                                                                           uint32_t lim, const grid_pat512 *p, uint32_t id,
                                                                           bp_sink *sink, uint64_t *c, const bool stops) {
    const uint32_t *BP_RESTRICT keys = s->keys, *BP_RESTRICT ids = s->ids;
    const float *BP_RESTRICT bx = s->bx;
    const int ax = stops ? s->stop : 0;
    const __m512 pat[3] = {p->v[0], p->v[1], p->v[2]};
    const __m512i L = _mm512_set1_epi32((int)lim);
    bp_pair_writer o = bp_writer_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 16) {
        st = bp_writer_room(sink, &o, 16);  // a step writes at most 16 slots
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(keys + j)), L) &
                            grid_dense_below(j, end, 16);
        const float *b = bx + 6 * j;
        unsigned s0, s1;
        const unsigned hit =
            (grid_dense_hits3_512(b, pat, ax, &s0, stops) | grid_dense_hits3_512(b + 48, pat, ax, &s1, stops) << 8) & in;
        const unsigned go = stops ? in & (s0 | s1 << 8) : in;
        bp_writer_advance(&o, grid_dense_put16(bp_writer_at(&o), id, ids + j, hit));
        cand += (unsigned)__builtin_popcount(go);
        if (go != 0xFFFFu) break;
    }
    bp_writer_close(sink, &o);
    *c += cand;
    return st;
}

GRID_DENSE_T512 static GRID_DENSE_INLINE bp_status grid_dense_scan3_512(const grid_dense_src *s, size_t j, size_t end,
                                                                       uint32_t lim, const grid_pat512 *p, uint32_t id,
                                                                       bp_sink *sink, uint64_t *c, const int v) {
    if (v == GRID_V_SOA) return grid_dense_scan3_soa_512(s, j, end, lim, p, id, sink, c, true);
    if (v == GRID_V_SOA_ALL) return grid_dense_scan3_soa_512(s, j, end, lim, p, id, sink, c, false);
    return grid_dense_scan3_aos_512(s, j, end, lim, p, id, sink, c, v == GRID_V_STOP);
}

GRID_DENSE_T512 static GRID_DENSE_INLINE bp_status grid_dense_run3_512(const grid_dense_src *s, size_t j, size_t end,
                                                                      uint32_t lim, const float *a, uint32_t id,
                                                                      bp_sink *sink, uint64_t *c, const int v) {
    const grid_pat512 pat = grid_dense_pat3_512(s, a);
    return grid_dense_scan3_512(s, j, end, lim, &pat, id, sink, c, v);
}

// The variant for a source: the six arrays where the frame has them (their codes and the
// kernel's integer compares do not depend on MXCSR: grid_code).
static inline int grid_dense_variant_512(const grid_dense_src *s) {
    if (s->soa && s->stop <= 0) return s->stop == 0 ? GRID_V_SOA : GRID_V_SOA_ALL;
    return s->stop >= 0 ? GRID_V_STOP : GRID_V_PLAIN;
}

GRID_DENSE_T512 static bp_status grid_dense_run_512(const bp_grid *g, const float *a, uint32_t id, size_t j, size_t end,
                                                   uint32_t lim, int stop, bp_sink *sink, uint64_t *c) {
    const grid_dense_src src = grid_dense_src_of(g, stop);
    const grid_dense_src *s = &src;
    if (g->geom.dim == 2) return grid_dense_run2_512(s, j, end, lim, a, id, sink, c);
    const int v = grid_dense_variant_512(s);
    bp_status st;
    GRID_DENSE_BY_VARIANT(st, v, grid_dense_run3_512, s, j, end, lim, a, id, sink, c);
    return st;
}

// Moves cursor q to the first key >= lo (keys sorted; q never moves back): 16 keys a compare.
GRID_DENSE_T512 static inline size_t grid_dense_advance_512(const uint32_t *keys, size_t q, uint32_t lo) {
    const __m512i L = _mm512_set1_epi32((int)lo);
    for (;;) {
        const unsigned below = _mm512_cmplt_epu32_mask(_mm512_loadu_si512((const void *)(keys + q)), L);
        q += (size_t)__builtin_ctz(~below);
        if (below != 0xFFFFu) return q;
    }
}

GRID_DENSE_LOOPS(512, GRID_DENSE_T512, grid_dense_run2_512, grid_dense_run3_512, grid_dense_advance_512,
                 grid_dense_variant_512)
GRID_DENSE_ROWS(512, GRID_DENSE_T512, grid_pat512, grid_dense_pat2_512, grid_dense_pat3_512, grid_dense_scan2_512,
                grid_dense_scan3_512, grid_dense_variant_512)
#endif

#if defined(GRID_DENSE_HAVE_256)
#define GRID_DENSE_T256 __attribute__((target("avx2,popcnt")))

// For each 4-bit mask of pairs, the dword indices that move the chosen pairs to the front.
static const int32_t grid_dense_lut[16][8] __attribute__((aligned(32))) = {
{0, 0, 0, 0, 0, 0, 0, 0},
{0, 1, 0, 0, 0, 0, 0, 0},
{2, 3, 0, 0, 0, 0, 0, 0},
{0, 1, 2, 3, 0, 0, 0, 0},
{4, 5, 0, 0, 0, 0, 0, 0},
{0, 1, 4, 5, 0, 0, 0, 0},
{2, 3, 4, 5, 0, 0, 0, 0},
{0, 1, 2, 3, 4, 5, 0, 0},
{6, 7, 0, 0, 0, 0, 0, 0},
{0, 1, 6, 7, 0, 0, 0, 0},
{2, 3, 6, 7, 0, 0, 0, 0},
{0, 1, 2, 3, 6, 7, 0, 0},
{4, 5, 6, 7, 0, 0, 0, 0},
{0, 1, 4, 5, 6, 7, 0, 0},
{2, 3, 4, 5, 6, 7, 0, 0},
{0, 1, 2, 3, 4, 5, 6, 7}
};

// As grid_dense_put16, 8 lanes: two halves of 4 pairs, each compressed by a permute from the table.
GRID_DENSE_T256 static inline size_t grid_dense_put8(bp_pair *out, uint32_t id, const uint32_t *ids, unsigned hit) {
    const __m256i idp = _mm256_set1_epi32((int)id);
    const __m256i idj = _mm256_loadu_si256((const __m256i *)(const void *)ids);
    const __m256i lo = _mm256_min_epu32(idp, idj), hi = _mm256_max_epu32(idp, idj);
    const __m256i a = _mm256_unpacklo_epi32(lo, hi), b = _mm256_unpackhi_epi32(lo, hi);  // pairs 0 1 4 5, 2 3 6 7
    const __m256i x = _mm256_permute2x128_si256(a, b, 0x20), y = _mm256_permute2x128_si256(a, b, 0x31);
    const unsigned h0 = hit & 0xFu, h1 = hit >> 4;
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_permutevar8x32_epi32(x, _mm256_load_si256((const __m256i *)(const void *)grid_dense_lut[h0])));
    const size_t n0 = (size_t)__builtin_popcount(h0);
    _mm256_storeu_si256((__m256i *)(void *)(out + n0),
                        _mm256_permutevar8x32_epi32(y, _mm256_load_si256((const __m256i *)(const void *)grid_dense_lut[h1])));
    return n0 + (size_t)__builtin_popcount(h1);
}

// The lanes of 8 keys from j that are <= lim (no unsigned compare in AVX2: both sides biased).
GRID_DENSE_T256 static inline unsigned grid_dense_keys8(const uint32_t *keys, __m256i lim_biased) {
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    const __m256i k = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)keys), bias);
    return ~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(k, lim_biased))) & 0xFFu;
}

typedef struct grid_pat256 {
    __m256 v;
} grid_pat256;

GRID_DENSE_T256 static inline grid_pat256 grid_dense_pat2_256(const float *a) {
    const __m128 a4 = _mm_loadu_ps(a);
    const __m128 p4 = _mm_xor_ps(_mm_shuffle_ps(a4, a4, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f));
    const grid_pat256 p = {_mm256_set_m128(p4, p4)};
    return p;
}

GRID_DENSE_T256 static inline bp_status grid_dense_scan2_256(const grid_dense_src *s, size_t j, size_t end, uint32_t lim,
                                                            const grid_pat256 *pat, uint32_t id, bp_sink *sink,
                                                            uint64_t *c) {
    const uint32_t *BP_RESTRICT keys = s->keys, *BP_RESTRICT ids = s->ids;
    const float *BP_RESTRICT bx = s->bx;
    const __m256 probe = pat->v;
    const __m256i L = _mm256_set1_epi32((int)(lim ^ 0x80000000u));
    bp_pair_writer o = bp_writer_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 8) {
        st = bp_writer_room(sink, &o, 16);  // a step writes at most 16 slots
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = grid_dense_keys8(keys + j, L) & grid_dense_below(j, end, 8);
        const float *b = bx + 4 * j;
        // Two boxes a compare, 8 bits: a box's 4 bits all set is a hit.
        const uint32_t m = (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(b), probe, _CMP_LE_OQ)) |
                           (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(b + 8), probe, _CMP_LE_OQ)) << 8 |
                           (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(b + 16), probe, _CMP_LE_OQ)) << 16 |
                           (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(b + 24), probe, _CMP_LE_OQ)) << 24;
        uint32_t t = m & (m >> 1);
        t &= (t >> 2) & 0x11111111u;
        // Bits 0, 4, ..., 28 to bits 0 .. 7.
        t = (t | t >> 3) & 0x03030303u;
        t = (t | t >> 6) & 0x000F000Fu;
        t = (t | t >> 12) & 0xFFu;
        bp_writer_advance(&o, grid_dense_put8(bp_writer_at(&o), id, ids + j, t & in));
        cand += (unsigned)__builtin_popcount(in);
        if (in != 0xFFu) break;
    }
    bp_writer_close(sink, &o);
    *c += cand;
    return st;
}

// 3D: one 8-float compare a box (its 6 floats and 2 of the next, which the probe's +infinity
// lanes pass).
GRID_DENSE_T256 static inline grid_pat256 grid_dense_pat3_256(const grid_dense_src *s, const float *a) {
    (void)s;
    const grid_pat256 p = {_mm256_setr_ps(-a[3], -a[4], -a[5], -a[0], -a[1], -a[2], INFINITY, INFINITY)};
    return p;
}

GRID_DENSE_T256 static GRID_DENSE_INLINE bp_status grid_dense_scan3_256(const grid_dense_src *s, size_t j, size_t end,
                                                                       uint32_t lim, const grid_pat256 *pat, uint32_t id,
                                                                       bp_sink *sink, uint64_t *c, const int v) {
    const uint32_t *BP_RESTRICT keys = s->keys, *BP_RESTRICT ids = s->ids;
    const float *BP_RESTRICT bx = s->bx;
    const bool stops = v == GRID_V_STOP;
    const int ax = stops ? s->stop : 0;
    const __m256 probe = pat->v;
    const __m256i L = _mm256_set1_epi32((int)(lim ^ 0x80000000u));
    bp_pair_writer o = bp_writer_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 8) {
        st = bp_writer_room(sink, &o, 16);  // a step writes at most 16 slots
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = grid_dense_keys8(keys + j, L) & grid_dense_below(j, end, 8);
        const float *b = bx + 6 * j;
        unsigned hit = 0, starts = 0;
        for (int k = 0; k < 8; ++k) {
            const unsigned m = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(b + 6 * k), probe, _CMP_LE_OQ));
            hit |= (unsigned)(m == 0xFF) << k;
            if (stops) starts |= (m >> ax & 1u) << k;
        }
        const unsigned go = stops ? in & starts : in;
        bp_writer_advance(&o, grid_dense_put8(bp_writer_at(&o), id, ids + j, hit & in));
        cand += (unsigned)__builtin_popcount(go);
        if (go != 0xFFu) break;
    }
    bp_writer_close(sink, &o);
    *c += cand;
    return st;
}

GRID_DENSE_T256 static inline bp_status grid_dense_run2_256(const grid_dense_src *s, size_t j, size_t end, uint32_t lim,
                                                           const float *a, uint32_t id, bp_sink *sink, uint64_t *c) {
    const grid_pat256 pat = grid_dense_pat2_256(a);
    return grid_dense_scan2_256(s, j, end, lim, &pat, id, sink, c);
}

GRID_DENSE_T256 static GRID_DENSE_INLINE bp_status grid_dense_run3_256(const grid_dense_src *s, size_t j, size_t end,
                                                                      uint32_t lim, const float *a, uint32_t id,
                                                                      bp_sink *sink, uint64_t *c, const int v) {
    const grid_pat256 pat = grid_dense_pat3_256(s, a);
    return grid_dense_scan3_256(s, j, end, lim, &pat, id, sink, c, v);
}

// The variant for a source: the AVX2 kernels read the stored boxes.
static inline int grid_dense_variant_256(const grid_dense_src *s) { return s->stop >= 0 ? GRID_V_STOP : GRID_V_PLAIN; }

GRID_DENSE_T256 static bp_status grid_dense_run_256(const bp_grid *g, const float *a, uint32_t id, size_t j, size_t end,
                                                   uint32_t lim, int stop, bp_sink *sink, uint64_t *c) {
    const grid_dense_src src = grid_dense_src_of(g, stop);
    const grid_dense_src *s = &src;
    if (g->geom.dim == 2) return grid_dense_run2_256(s, j, end, lim, a, id, sink, c);
    const int v = grid_dense_variant_256(s);
    bp_status st;
    GRID_DENSE_BY_VARIANT(st, v, grid_dense_run3_256, s, j, end, lim, a, id, sink, c);
    return st;
}

GRID_DENSE_T256 static inline size_t grid_dense_advance_256(const uint32_t *keys, size_t q, uint32_t lo) {
    const __m256i L = _mm256_set1_epi32((int)((lo - 1u) ^ 0x80000000u));
    if (lo == 0) return q;  // every key is >= 0
    for (;;) {
        const unsigned below = grid_dense_keys8(keys + q, L);  // keys <= lo - 1
        q += (size_t)__builtin_ctz(~below);
        if (below != 0xFFu) return q;
    }
}

GRID_DENSE_LOOPS(256, GRID_DENSE_T256, grid_dense_run2_256, grid_dense_run3_256, grid_dense_advance_256,
                 grid_dense_variant_256)
GRID_DENSE_ROWS(256, GRID_DENSE_T256, grid_pat256, grid_dense_pat2_256, grid_dense_pat3_256, grid_dense_scan2_256,
                grid_dense_scan3_256, grid_dense_variant_256)
#endif

// The kernel table of each instruction set, and the choice among them.
#if defined(GRID_DENSE_HAVE_512)
static const grid_kernels grid_kernels_512 = {
    .lanes = 16,
    .run = grid_dense_run_512,
    .rows = grid_dense_rows_512,
    .runs = grid_dense_runs_512,
    .pairs2 = grid_dense_pairs2_512,
    .pairs3 = grid_dense_pairs3_512,
};
#endif
#if defined(GRID_DENSE_HAVE_256)
static const grid_kernels grid_kernels_256 = {
    .lanes = 8,
    .run = grid_dense_run_256,
    .rows = grid_dense_rows_256,
    .runs = grid_dense_runs_256,
    .pairs2 = grid_dense_pairs2_256,
    .pairs3 = grid_dense_pairs3_256,
};
#endif

const grid_kernels *bp_grid_kernels_pick(int kernels) {
    if (kernels == GRID_KERNELS_SCALAR) return NULL;
#if defined(GRID_DENSE_HAVE_512)
    if (kernels != GRID_KERNELS_AVX2 && grid_dense_cpu512()) return &grid_kernels_512;
#endif
#if defined(GRID_DENSE_HAVE_256)
    if (grid_dense_256()) return &grid_kernels_256;
#endif
    return NULL;
}

int bp_grid_dense_lanes(int kernels) {
    const grid_kernels *k = bp_grid_kernels_pick(kernels);
    return k ? k->lanes : 0;
}
