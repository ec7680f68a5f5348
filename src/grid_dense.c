// Method `grid`, sorted layout: the same-level pair pass over crowded cells (docs/grid.md,
// "Dense cells"). Where many boxes share a cell (`seed` past a few thousand circles: hundreds a
// cell) a box meets long contiguous runs of the sorted boxes, and the scalar loop of src/grid.c
// (one box at a time, a branch per hit) spends its time on a compare and a mispredicted branch
// per candidate. Here the runs are tested 16 boxes at a time with AVX-512: boxes are stored
// (min, -max), so a box is a hit when every stored lane is <= the probe's; the hits become a
// mask, and the pairs are compressed in lane order into room reserved in the sink, without a
// branch per hit. Same runs, same candidates, same pairs in the same order as the scalar loop.
#include "grid.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX512)
#define GRID_DENSE_AVX512 1
#include <immintrin.h>
#endif

int bp_grid_dense_mode = GRID_DENSE_AUTO;

bool bp_grid_dense_available(void) {
#if defined(GRID_DENSE_AVX512)
    return bp_grid_dense_mode != GRID_DENSE_OFF && bp_cpu_avx512() && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
#else
    return false;
#endif
}

#if defined(GRID_DENSE_AVX512)
#define GRID_DENSE_TARGET __attribute__((target("avx512f,bmi2,popcnt")))

// Writes the pairs (id_p, ids[j + t]) for the lanes t set in `hit` (16 lanes) at out, in lane
// order, canonical (smaller index first) as bp_sink_put writes them; returns how many. Room for
// 16 pairs (plus the one the sink keeps free) is reserved: each half is stored whole, 8 pairs,
// and only the hits count.
GRID_DENSE_TARGET static inline size_t grid_dense_put(bp_pair *out, __m512i idp, const uint32_t *ids, unsigned hit) {
    const __m512i idj = _mm512_loadu_si512((const void *)ids);
    const __m512i lo = _mm512_min_epu32(idp, idj), hi = _mm512_max_epu32(idp, idj);
    const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i i1 = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const unsigned h0 = hit & 0xFFu, h1 = hit >> 8;
    // Compress into a register, then a full store: a compress to memory is microcoded and slow
    // on some cores (Zen 4).
    _mm512_storeu_si512((void *)out, _mm512_maskz_compress_epi64((__mmask8)h0, _mm512_permutex2var_epi32(lo, i0, hi)));
    const size_t n0 = (size_t)__builtin_popcount(h0);
    _mm512_storeu_si512((void *)(out + n0), _mm512_maskz_compress_epi64((__mmask8)h1, _mm512_permutex2var_epi32(lo, i1, hi)));
    return n0 + (size_t)__builtin_popcount(h1);
}

// The sink's buffer and count held in registers through a run (the pair stores could alias the
// sink's fields, so through the pointer every step would reload them and wait on the last
// step's count): written back before a flush and at the end.
typedef struct grid_dense_out {
    bp_pair *buf;
    size_t count, cap;
} grid_dense_out;

static inline grid_dense_out grid_dense_open(const bp_sink *sink) {
    grid_dense_out o = {sink->buf, sink->count, sink->cap};
    return o;
}

// bp_sink_room(sink, 16) on the held copy.
static inline bp_status grid_dense_room(bp_sink *sink, grid_dense_out *o) {
    if (BP_LIKELY(o->cap - o->count > 16)) return BP_OK;
    sink->count = o->count;
    const bp_status st = sink->flush(sink);
    *o = grid_dense_open(sink);
    return st;
}

// The lanes of the 16 boxes from j that are before position `end` (SIZE_MAX: no bound).
static inline unsigned grid_dense_below(size_t j, size_t end) {
    return end - j >= 16 ? 0xFFFFu : (1u << (end - j)) - 1u;
}

// The run of sorted boxes j, j+1, ... while keys[j] <= lim and j < end, 16 at a time: the keys say which
// lanes are in the run (sorted, so a prefix; the sentinels after the last box end any run),
// four 4-float compares which boxes overlap the probe. A lane is a hit when all four of its
// compare bits are set: AND the mask with itself shifted by 1 and 2, keep every fourth bit.
GRID_DENSE_TARGET static inline bp_status grid_dense_run2(const uint32_t *BP_RESTRICT keys, const float *BP_RESTRICT bx,
                                                           const uint32_t *BP_RESTRICT ids, size_t j, size_t end,
                                                           uint32_t lim, __m512 probe, __m512i idp, bp_sink *sink,
                                                           uint64_t *c) {
    const __m512i L = _mm512_set1_epi32((int)lim);
    grid_dense_out o = grid_dense_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 16) {
        st = grid_dense_room(sink, &o);
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(keys + j)), L) &
                            grid_dense_below(j, end);
        const float *b = bx + 4 * j;
        const uint64_t m = (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b), probe, _CMP_LE_OQ) |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 16), probe, _CMP_LE_OQ) << 16 |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 32), probe, _CMP_LE_OQ) << 32 |
                           (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 48), probe, _CMP_LE_OQ) << 48;
        uint64_t a = m & (m >> 1);
        a &= a >> 2;
        const unsigned hit = (unsigned)_pext_u64(a, 0x1111111111111111ull) & in;
        o.count += grid_dense_put(o.buf + o.count, idp, ids + j, hit);
        cand += (unsigned)__builtin_popcount(in);
        if (in != 0xFFFFu) break;
    }
    sink->count = o.count;
    *c += cand;
    return st;
}

// 3D: 16 boxes are 96 floats, six registers; the probe's 6 floats repeat with period 6, so
// three patterns cover 8 boxes (48 floats). A lane is a hit when its 6 compare bits are set.
GRID_DENSE_TARGET static inline unsigned grid_dense_hits3(const float *b, const __m512 pat[3]) {
    const uint64_t m = (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b), pat[0], _CMP_LE_OQ) |
                       (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 16), pat[1], _CMP_LE_OQ) << 16 |
                       (uint64_t)_mm512_cmp_ps_mask(_mm512_loadu_ps(b + 32), pat[2], _CMP_LE_OQ) << 32;
    const uint64_t a = m & (m >> 1), a4 = a & (a >> 2);
    return (unsigned)_pext_u64(a4 & (a >> 4), 0x41041041041ull);
}

GRID_DENSE_TARGET static inline bp_status grid_dense_run3(const uint32_t *BP_RESTRICT keys, const float *BP_RESTRICT bx,
                                                           const uint32_t *BP_RESTRICT ids, size_t j, size_t end,
                                                           uint32_t lim, const __m512 pat[3], __m512i idp,
                                                           bp_sink *sink, uint64_t *c) {
    const __m512i L = _mm512_set1_epi32((int)lim);
    grid_dense_out o = grid_dense_open(sink);
    uint64_t cand = 0;
    bp_status st = BP_OK;
    for (;; j += 16) {
        st = grid_dense_room(sink, &o);
        if (BP_UNLIKELY(st != BP_OK)) break;
        const unsigned in = _mm512_cmple_epu32_mask(_mm512_loadu_si512((const void *)(keys + j)), L) &
                            grid_dense_below(j, end);
        const float *b = bx + 6 * j;
        const unsigned hit = (grid_dense_hits3(b, pat) | grid_dense_hits3(b + 48, pat) << 8) & in;
        o.count += grid_dense_put(o.buf + o.count, idp, ids + j, hit);
        cand += (unsigned)__builtin_popcount(in);
        if (in != 0xFFFFu) break;
    }
    sink->count = o.count;
    *c += cand;
    return st;
}

// Moves cursor q to the first key >= lo (keys sorted; q never moves back): 16 keys a compare.
GRID_DENSE_TARGET static inline size_t grid_dense_advance(const uint32_t *keys, size_t q, uint32_t lo) {
    const __m512i L = _mm512_set1_epi32((int)lo);
    for (;;) {
        const unsigned below = _mm512_cmplt_epu32_mask(_mm512_loadu_si512((const void *)(keys + q)), L);
        q += (size_t)__builtin_ctz(~below);
        if (below != 0xFFFFu) return q;
    }
}

// The probe of stored box a (min, -max): (max, -min), in every 128-bit lane (grid_probe_make).
GRID_DENSE_TARGET static inline __m512 grid_dense_probe2(const float *a) {
    const __m128 a4 = _mm_loadu_ps(a);
    return _mm512_broadcast_f32x4(_mm_xor_ps(_mm_shuffle_ps(a4, a4, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f)));
}

// 3D: float f of a group of 8 boxes compares against probe value f mod 6.
GRID_DENSE_TARGET static inline void grid_dense_probe3(const float *a, __m512 pat[3]) {
    const float t[16] = {-a[3], -a[4], -a[5], -a[0], -a[1], -a[2]};
    const __m512 pv = _mm512_loadu_ps(t);
    pat[0] = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3), pv);
    pat[1] = _mm512_permutexvar_ps(_mm512_setr_epi32(4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1), pv);
    pat[2] = _mm512_permutexvar_ps(_mm512_setr_epi32(2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5), pv);
}

GRID_DENSE_TARGET bp_status bp_grid_dense_run(const bp_grid *g, const float *a, uint32_t id, size_t j, size_t end,
                                              uint32_t lim, bp_sink *sink, uint64_t *checks) {
    const __m512i idp = _mm512_set1_epi32((int)id);
    if (g->geom.dim == 2) return grid_dense_run2(g->keys, g->boxes, g->perm, j, end, lim, grid_dense_probe2(a), idp, sink, checks);
    __m512 pat[3];
    grid_dense_probe3(a, pat);
    return grid_dense_run3(g->keys, g->boxes, g->perm, j, end, lim, pat, idp, sink, checks);
}

GRID_DENSE_TARGET bp_status bp_grid_dense_pairs2(const bp_grid *g, const grid_level *L, size_t p0, size_t p1,
                                                 size_t *cursor, bp_sink *sink, uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const uint32_t sx = L->stride[1];
    size_t c1 = *cursor;
    uint64_t c = 0;
    bp_status st = BP_OK;
    for (size_t p = p0; p < p1; ++p) {
        const uint32_t K = keys[p];
        const __m512 probe = grid_dense_probe2(bx + 4 * p);
        const __m512i idp = _mm512_set1_epi32((int)ids[p]);
        st = grid_dense_run2(keys, bx, ids, p + 1, SIZE_MAX, K + 1, probe, idp, sink, &c);
        if (BP_UNLIKELY(st != BP_OK)) break;
        c1 = grid_dense_advance(keys, c1, K + sx - 1);
        st = grid_dense_run2(keys, bx, ids, c1, SIZE_MAX, K + sx + 1, probe, idp, sink, &c);
        if (BP_UNLIKELY(st != BP_OK)) break;
    }
    *cursor = c1;
    *checks += c;
    return st;
}

GRID_DENSE_TARGET bp_status bp_grid_dense_pairs3(const bp_grid *g, const grid_level *L, size_t p0, size_t p1,
                                                 size_t cursor[4], bp_sink *sink, uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const uint32_t sx = L->stride[1], sxy = L->stride[2];
    const uint32_t off[4] = {sx, sxy - sx, sxy, sxy + sx};
    uint64_t c = 0;
    bp_status st = BP_OK;
    for (size_t p = p0; p < p1 && st == BP_OK; ++p) {
        const uint32_t K = keys[p];
        __m512 pat[3];
        grid_dense_probe3(bx + 6 * p, pat);
        const __m512i idp = _mm512_set1_epi32((int)ids[p]);
        st = grid_dense_run3(keys, bx, ids, p + 1, SIZE_MAX, K + 1, pat, idp, sink, &c);
        for (int r = 0; r < 4 && st == BP_OK; ++r) {
            cursor[r] = grid_dense_advance(keys, cursor[r], K + off[r] - 1);
            st = grid_dense_run3(keys, bx, ids, cursor[r], SIZE_MAX, K + off[r] + 1, pat, idp, sink, &c);
        }
    }
    *checks += c;
    return st;
}
#else
bp_status bp_grid_dense_run(const bp_grid *g, const float *a, uint32_t id, size_t j, size_t end, uint32_t lim,
                            bp_sink *sink, uint64_t *checks) {
    (void)g, (void)a, (void)id, (void)j, (void)end, (void)lim, (void)sink, (void)checks;
    return BP_ERR_INVALID_ARG;  // never called: bp_grid_dense_available() is false
}

bp_status bp_grid_dense_pairs2(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, size_t *cursor,
                               bp_sink *sink, uint64_t *checks) {
    (void)g, (void)L, (void)p0, (void)p1, (void)cursor, (void)sink, (void)checks;
    return BP_ERR_INVALID_ARG;  // never called: bp_grid_dense_available() is false
}

bp_status bp_grid_dense_pairs3(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, size_t cursor[4],
                               bp_sink *sink, uint64_t *checks) {
    (void)g, (void)L, (void)p0, (void)p1, (void)cursor, (void)sink, (void)checks;
    return BP_ERR_INVALID_ARG;
}
#endif
