// LSD radix sort with 11-bit digits: three passes cover a 32-bit key, all histograms come from
// one read of the keys, and a pass whose digit is constant is skipped (common for small
// worlds or nearly equal keys).
#include "radix_sort.h"

#define DIGIT_BITS 11u
#define BUCKETS (1u << DIGIT_BITS)
#define MAX_PASSES 6u  // 64 bits / 11, rounded up

// Below this many keys an insertion sort is faster than clearing the histograms (8 KiB per
// pass): the world sorts a few events per update.
#define SMALL_SORT 48

#define INSERTION_SORT(KEY_T)                                                                      \
    for (size_t i = 1; i < n; ++i) {                                                               \
        const KEY_T k = keys[i];                                                                   \
        const uint32_t v = vals ? vals[i] : 0;                                                     \
        size_t j = i;                                                                              \
        for (; j > 0 && keys[j - 1] > k; --j) {                                                    \
            keys[j] = keys[j - 1];                                                                 \
            if (vals) vals[j] = vals[j - 1];                                                       \
        }                                                                                          \
        keys[j] = k;                                                                               \
        if (vals) vals[j] = v;                                                                     \
    }

void bp_radix_sort32(uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits) {
    if (n < 2) return;
    if (n < SMALL_SORT) {  // stable too: equal keys never pass each other
        INSERTION_SORT(uint32_t)
        return;
    }
    if (key_bits == 0 || key_bits > 32) key_bits = 32;
    const unsigned passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    static const unsigned max32 = 3;
    uint32_t hist[3][BUCKETS];
    memset(hist, 0, sizeof hist);
    for (size_t k = 0; k < n; ++k) {
        uint32_t key = keys[k];
        hist[0][key & (BUCKETS - 1)]++;
        hist[1][(key >> DIGIT_BITS) & (BUCKETS - 1)]++;
        hist[2][key >> (2 * DIGIT_BITS)]++;
    }
    uint32_t *sk = keys, *sv = vals, *dk = tmp_keys, *dv = tmp_vals;
    for (unsigned p = 0; p < passes && p < max32; ++p) {
        uint32_t *h = hist[p];
        const unsigned shift = p * DIGIT_BITS;
        if (h[(sk[0] >> shift) & (BUCKETS - 1)] == n) continue;  // one digit value: nothing moves
        uint32_t sum = 0;
        for (unsigned b = 0; b < BUCKETS; ++b) {
            uint32_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        if (sv) {
            for (size_t k = 0; k < n; ++k) {
                uint32_t key = sk[k];
                uint32_t pos = h[(key >> shift) & (BUCKETS - 1)]++;
                dk[pos] = key;
                dv[pos] = sv[k];
            }
            uint32_t *t = sv; sv = dv; dv = t;
        } else {
            for (size_t k = 0; k < n; ++k) {
                uint32_t key = sk[k];
                dk[h[(key >> shift) & (BUCKETS - 1)]++] = key;
            }
        }
        uint32_t *t = sk; sk = dk; dk = t;
    }
    if (sk != keys) {
        memcpy(keys, sk, n * sizeof *keys);
        if (vals) memcpy(vals, sv, n * sizeof *vals);
    }
}

void bp_radix_sort64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits) {
    if (n < 2) return;
    if (n < SMALL_SORT) {
        INSERTION_SORT(uint64_t)
        return;
    }
    if (key_bits == 0 || key_bits > 64) key_bits = 64;
    const unsigned passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    uint32_t hist[MAX_PASSES][BUCKETS];
    memset(hist, 0, (size_t)passes * sizeof hist[0]);
    for (size_t k = 0; k < n; ++k) {
        uint64_t key = keys[k];
        for (unsigned p = 0; p < passes; ++p) hist[p][(key >> (p * DIGIT_BITS)) & (BUCKETS - 1)]++;
    }
    uint64_t *sk = keys, *dk = tmp_keys;
    uint32_t *sv = vals, *dv = tmp_vals;
    for (unsigned p = 0; p < passes; ++p) {
        uint32_t *h = hist[p];
        const unsigned shift = p * DIGIT_BITS;
        if (h[(sk[0] >> shift) & (BUCKETS - 1)] == n) continue;
        uint32_t sum = 0;
        for (unsigned b = 0; b < BUCKETS; ++b) {
            uint32_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        if (sv) {
            for (size_t k = 0; k < n; ++k) {
                uint64_t key = sk[k];
                uint32_t pos = h[(key >> shift) & (BUCKETS - 1)]++;
                dk[pos] = key;
                dv[pos] = sv[k];
            }
            uint32_t *t = sv; sv = dv; dv = t;
        } else {
            for (size_t k = 0; k < n; ++k) {
                uint64_t key = sk[k];
                dk[h[(key >> shift) & (BUCKETS - 1)]++] = key;
            }
        }
        uint64_t *t = sk; sk = dk; dk = t;
    }
    if (sk != keys) {
        memcpy(keys, sk, n * sizeof *keys);
        if (vals) memcpy(vals, sv, n * sizeof *vals);
    }
}
