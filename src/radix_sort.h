// LSD radix sort of integer keys carrying a 32-bit value, written once for every method
// (sweep endpoints, grid cell keys, Morton codes, sorted pair output). Stable.
#ifndef BP_RADIX_SORT_H
#define BP_RADIX_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pool.h"

/// Maps a float to a uint32 whose unsigned order is the float order (negatives reversed,
/// sign bit flipped). -0.0 sorts just before +0.0; NaN never reaches here (rejected on input).
static inline uint32_t bp_float_key(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}

/// The inverse of bp_float_key.
static inline float bp_key_float(uint32_t k) {
    uint32_t u = k ^ (((k >> 31) - 1u) | 0x80000000u);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/// Sorts (keys[k], vals[k]) by key, stably. tmp_keys/tmp_vals: scratch of n elements each.
/// Only the low `key_bits` bits of the keys take part (higher bits must be zero); passes whose
/// digit is the same for every key are skipped. The result is in keys/vals. vals may be NULL
/// (keys only; then tmp_vals may be NULL too).
void bp_radix_sort32(uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits);

/// The same for 64-bit keys (Morton codes, packed pairs). vals may be NULL (keys only; then
/// tmp_vals may be NULL too).
void bp_radix_sort64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits);

/// The parallel forms, for large arrays: the keys cut into `tasks` slices that count and scatter
/// their own keys, run through `pool` (src/pool.h; NULL runs the tasks in turn); the result is
/// the serial sort's, bit for bit. `hist` holds bp_radix_hist_size(tasks, key_bits, wide)
/// counters. tasks < 2: the serial sort. Errors: the pool's (the arrays are then unspecified).
size_t bp_radix_hist_size(uint32_t tasks, unsigned key_bits, bool wide);
bp_status bp_radix_sort32_pool(bp_pool *pool, uint32_t tasks, uint32_t *hist, uint32_t *keys, uint32_t *vals,
                               uint32_t *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits);
bp_status bp_radix_sort64_pool(bp_pool *pool, uint32_t tasks, uint32_t *hist, uint64_t *keys, uint32_t *vals,
                               uint64_t *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits);

#endif
