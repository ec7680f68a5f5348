// GCC 12 wrong code: a 16-lane AVX-512 compare mask taken into an `unsigned`, in a function whose
// target has AVX-512 BW, loses its zero extension when the register allocator keeps that unsigned
// in a stack slot. The compare's pattern (*avx512f_ucmpv16si3_zero_extendsi) is split before
// register allocation into a write of the value's low 16 bits, `kmovw %k, slot`, and the uses
// read the slot with `movl`: bits 16-31 are whatever the slot held. Here, as in
// src/grid_dense.c, the test `in != 0xFFFF` then ends a run after its first 16 lanes.
//
// The value goes to a stack slot when too many values are live across calls for the registers
// that survive a call: the calls ThreadSanitizer puts before every load and store do that
// (grid_dense.c's kernels; docs/grid.md, "Codes"), and so do plain calls in the loop (-DCALLS).
// Without BW in the target (-DNO_BW) that pattern is off, GCC moves the mask with
// `kmovw %k, %r32`, which zero-extends, and the result is right.
//
//   gcc -std=c17 -O2 gcc12_mask_spill.c && ./a.out                        right
//   gcc -std=c17 -O2 -fsanitize=thread gcc12_mask_spill.c && ./a.out      wrong (GCC 12.2)
//   gcc -std=c17 -O2 -DCALLS gcc12_mask_spill.c && ./a.out                wrong (GCC 12.2)
//   add -DNO_BW, or use -O1 or clang 14: right
//
// Needs a CPU with AVX-512 F and BW. Exit status 1 when the compiler got it wrong.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>

#if defined(NO_BW)
#define T __attribute__((target("avx512f")))
#else
#define T __attribute__((target("avx512f,avx512bw")))
#endif

#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

#if defined(CALLS)
NOIPA static void opaque(const void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }
#define CALL(p) opaque(p)
#else
#define CALL(p) ((void)0)
#endif

// The run of sorted keys from j while keys <= lim (and j < end), 16 lanes a step: the ids of
// its lanes whose value is <= x go to out[*count...]; returns the run's length.
T static inline size_t run(const uint32_t *keys, const float *v, const uint32_t *ids, size_t j, size_t end,
                           uint32_t lim, float x, uint32_t *out, size_t *count) {
    const __m512i L = _mm512_set1_epi32((int)lim);
    const __m512 X = _mm512_set1_ps(x);
    size_t len = 0, n = *count;
    for (;; j += 16) {
        CALL(keys + j);
        const unsigned in = _mm512_cmple_epu32_mask(_mm512_loadu_si512(keys + j), L) &
                            (end - j >= 16 ? 0xFFFFu : (1u << (end - j)) - 1u);
        CALL(v + j);
        const unsigned hit = _mm512_cmp_ps_mask(_mm512_loadu_ps(v + j), X, _CMP_LE_OQ) & in;
        CALL(ids + j);
        CALL(out + n);
        _mm512_storeu_si512(out + n, _mm512_maskz_compress_epi32((__mmask16)hit, _mm512_loadu_si512(ids + j)));
        n += (unsigned)__builtin_popcount(hit);
        len += (unsigned)__builtin_popcount(in);
        if (in != 0xFFFFu) break;
    }
    *count = n;
    return len;
}

// Each key p's run from p + 1.
T __attribute__((noinline)) static size_t runs(const uint32_t *keys, const float *v, const uint32_t *ids, size_t np,
                                               uint32_t *out, size_t *count) {
    size_t len = 0;
    for (size_t p = 0; p < np; ++p) len += run(keys, v, ids, p + 1, SIZE_MAX, keys[p], v[p], out, count);
    return len;
}

// Leaves ones in the stack that runs' frame will take (the stale bits the bad reload reads).
NOIPA static void dirty(void) {
    volatile unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; ++i) junk[i] = 0xFF;
}

int main(void) {
    // 64 equal keys and values, then sentinel keys that end every run: key p's run is the 63 - p
    // keys after it, every one a hit.
    enum { N = 64 };
    static uint32_t keys[N + 16], ids[N + 16], out[N * N];
    static float v[N + 16];
    for (int i = 0; i < N + 16; ++i) {
        keys[i] = i < N ? 0 : UINT32_MAX;
        ids[i] = (uint32_t)i;
        v[i] = 1.0f;
    }
    dirty();
    size_t count = 0;
    const size_t len = runs(keys, v, ids, N, out, &count);
    const int want = N * (N - 1) / 2;
    printf("run lengths %zu, hits %zu (want %d, %d): %s\n", len, count, want, want,
           len == (size_t)want && count == (size_t)want ? "right" : "WRONG");
    return len != (size_t)want || count != (size_t)want;
}
