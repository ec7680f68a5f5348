// What the persistent world's parts (world_cells.c, world_near.c, world_pairs.c, world_groups.c)
// share with the world (world.h): the "none" marker, a dense proxy's bookkeeping, box helpers
// on dim axes, and the layout of an entry. Never installed.
#ifndef BP_WORLD_PARTS_H
#define BP_WORLD_PARTS_H

#include "core.h"

#define WORLD_NONE 0xFFFFFFFFu

/// A dense proxy's bookkeeping, together so that a move touches one line of it: its slot and
/// filter group (the world's), and where its entry is (the cells' locator).
typedef struct world_meta {
    uint32_t slot;
    uint32_t group;
    uint32_t cell;   // its cell in the table, or WORLD_NONE (not in the cells)
    uint32_t place;  // its place in the cell's run
} world_meta;

/// Copies a box of dim axes (min[dim], max[dim]): a loop the compiler unrolls, not a call.
static inline void world_copy_box(float *dst, const float *src, int dim) {
    dst[0] = src[0];
    dst[1] = src[1];
    dst[2] = src[2];
    dst[3] = src[3];
    if (dim == 3) {
        dst[4] = src[4];
        dst[5] = src[5];
    }
}

/// The closed overlap rule on dim axes of two boxes stored min[dim], max[dim].
static inline bool world_overlap(const float *a, const float *b, int dim) {
    for (int k = 0; k < dim; ++k)
        if (!(a[k] <= b[dim + k] && b[k] <= a[dim + k])) return false;
    return true;
}

/// The smallest box holding a and b; DIM a constant where the caller can make it one.
static inline void world_union_dim(const float *a, const float *b, float *out, const int DIM) {
    for (int k = 0; k < DIM; ++k) {
        out[k] = a[k] < b[k] ? a[k] : b[k];
        out[DIM + k] = a[DIM + k] > b[DIM + k] ? a[DIM + k] : b[DIM + k];
    }
}
static inline void world_union(const float *a, const float *b, int dim, float *out) {
    if (dim == 2) world_union_dim(a, b, out, 2);
    else world_union_dim(a, b, out, 3);
}

static inline bool world_bit(const uint64_t *bits, size_t d) { return (bits[d >> 6] >> (d & 63)) & 1u; }
static inline void world_set_bit(uint64_t *bits, size_t d, bool on) {
    const uint64_t bit = (uint64_t)1 << (d & 63);
    bits[d >> 6] = on ? bits[d >> 6] | bit : bits[d >> 6] & ~bit;
}

/// An entry (of the cells' runs and the near lists) is {min[dim], max[dim], word 0, word 1} as
/// floats, the two words bit-cast: 2 * dim + 2 floats.
static inline uint32_t world_entry_word(const float *e, int dim, int which) {
    uint32_t u;
    memcpy(&u, e + 2 * dim + which, sizeof u);
    return u;
}
static inline void world_entry_set_word(float *e, int dim, int which, uint32_t u) {
    memcpy(e + 2 * dim + which, &u, sizeof u);
}

#endif
