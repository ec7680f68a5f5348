// Morton codes (Z-order): interleave the bits of integer cell coordinates so that cells close in
// space are mostly close in the code, and every quadtree/octree cell at every level is one
// contiguous range of codes (seed 000's BitSeparate32 / Get2DMortonNumber, for 2D and 3D, 32 and
// 64 bits). Written once for every method that wants a space-filling order.
#ifndef BP_MORTON_H
#define BP_MORTON_H

#include <stdint.h>

/// Spreads the low 16 bits of x to the even bits of the result (bit k goes to bit 2k).
static inline uint32_t bp_morton_spread2_32(uint32_t x) {
    x &= 0x0000ffffu;
    x = (x | (x << 8)) & 0x00ff00ffu;
    x = (x | (x << 4)) & 0x0f0f0f0fu;
    x = (x | (x << 2)) & 0x33333333u;
    x = (x | (x << 1)) & 0x55555555u;
    return x;
}

/// Spreads the low 32 bits of x to the even bits of the result.
static inline uint64_t bp_morton_spread2_64(uint64_t x) {
    x &= 0x00000000ffffffffull;
    x = (x | (x << 16)) & 0x0000ffff0000ffffull;
    x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
    x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
    x = (x | (x << 2)) & 0x3333333333333333ull;
    x = (x | (x << 1)) & 0x5555555555555555ull;
    return x;
}

/// Spreads the low 10 bits of x to every third bit (bit k goes to bit 3k).
static inline uint32_t bp_morton_spread3_32(uint32_t x) {
    x &= 0x000003ffu;
    x = (x | (x << 16)) & 0x030000ffu;
    x = (x | (x << 8)) & 0x0300f00fu;
    x = (x | (x << 4)) & 0x030c30c3u;
    x = (x | (x << 2)) & 0x09249249u;
    return x;
}

/// Spreads the low 21 bits of x to every third bit.
static inline uint64_t bp_morton_spread3_64(uint64_t x) {
    x &= 0x00000000001fffffull;
    x = (x | (x << 32)) & 0x001f00000000ffffull;
    x = (x | (x << 16)) & 0x001f0000ff0000ffull;
    x = (x | (x << 8)) & 0x100f00f00f00f00full;
    x = (x | (x << 4)) & 0x10c30c30c30c30c3ull;
    x = (x | (x << 2)) & 0x1249249249249249ull;
    return x;
}

/// Gathers the even bits of x back into the low half (inverse of bp_morton_spread2_64).
static inline uint64_t bp_morton_compact2_64(uint64_t x) {
    x &= 0x5555555555555555ull;
    x = (x | (x >> 1)) & 0x3333333333333333ull;
    x = (x | (x >> 2)) & 0x0f0f0f0f0f0f0f0full;
    x = (x | (x >> 4)) & 0x00ff00ff00ff00ffull;
    x = (x | (x >> 8)) & 0x0000ffff0000ffffull;
    x = (x | (x >> 16)) & 0x00000000ffffffffull;
    return x;
}

/// Gathers every third bit of x back into the low 21 bits (inverse of bp_morton_spread3_64).
static inline uint64_t bp_morton_compact3_64(uint64_t x) {
    x &= 0x1249249249249249ull;
    x = (x | (x >> 2)) & 0x10c30c30c30c30c3ull;
    x = (x | (x >> 4)) & 0x100f00f00f00f00full;
    x = (x | (x >> 8)) & 0x001f0000ff0000ffull;
    x = (x | (x >> 16)) & 0x001f00000000ffffull;
    x = (x | (x >> 32)) & 0x00000000001fffffull;
    return x;
}

/// 2D code of cell (x, y), x in the even bits: 16 bits per axis in 32 bits.
static inline uint32_t bp_morton2_32(uint32_t x, uint32_t y) {
    return bp_morton_spread2_32(x) | (bp_morton_spread2_32(y) << 1);
}

/// 2D code, 32 bits per axis in 64 bits.
static inline uint64_t bp_morton2_64(uint64_t x, uint64_t y) {
    return bp_morton_spread2_64(x) | (bp_morton_spread2_64(y) << 1);
}

/// 3D code of cell (x, y, z): 10 bits per axis in 32 bits.
static inline uint32_t bp_morton3_32(uint32_t x, uint32_t y, uint32_t z) {
    return bp_morton_spread3_32(x) | (bp_morton_spread3_32(y) << 1) | (bp_morton_spread3_32(z) << 2);
}

/// 3D code, 21 bits per axis in 64 bits.
static inline uint64_t bp_morton3_64(uint64_t x, uint64_t y, uint64_t z) {
    return bp_morton_spread3_64(x) | (bp_morton_spread3_64(y) << 1) | (bp_morton_spread3_64(z) << 2);
}

/// Number of significant bits of x (0 for 0).
static inline unsigned bp_bit_length64(uint64_t x) {
#if defined(__GNUC__)
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
#else
    unsigned b = 0;
    while (x) {
        ++b;
        x >>= 1;
    }
    return b;
#endif
}

/// Seed 000's level rule: two finest-level codes (a box's corners) share the cell of the level
/// whose shift removes every differing bit group. Returns how many levels above the finest the
/// smallest common cell lies (0: the same finest cell), for `dim` bits per group.
static inline unsigned bp_morton_common_up(uint64_t a, uint64_t b, unsigned dim) {
    uint64_t x = a ^ b;
    if (x == 0) return 0;
    return (bp_bit_length64(x) - 1u) / dim + 1u;  // the group of the highest differing bit, + 1
}

/// The seed's linear cell number: cells of all levels in one array, level l starting at
/// (4^l - 1) / 3 in 2D and (8^l - 1) / 7 in 3D; `code` is the l-level Morton code.
static inline uint64_t bp_morton_linear_index(uint64_t code, unsigned level, unsigned dim) {
    uint64_t per = dim == 3 ? 8u : 4u;
    uint64_t first = (((uint64_t)1 << (dim * level)) - 1u) / (per - 1u);
    return first + code;
}

#endif
