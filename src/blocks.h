// A pool of blocks of 2, 4, 8 ... entries of `stride` floats each, in one array, each size class
// with a list of its free blocks: runs that grow and shrink (the world's cells, its near lists)
// reuse their blocks and allocate nothing once warm. Knows nothing of what the entries hold.
// Never installed.
#ifndef BP_BLOCKS_H
#define BP_BLOCKS_H

#include "core.h"

// Block classes: class k holds blocks of 2 << k entries.
#define BP_BLOCK_CLASSES 31
#define BP_BLOCK_NONE 0xFFFFFFFFu

typedef struct bp_blocks {
    float *pool;
    size_t cap, used;  // in entries
    size_t stride;     // floats per entry
    bp_heap *heap;
    uint32_t free_block[BP_BLOCK_CLASSES];  // a free block's first word links the next
} bp_blocks;

/// An empty pool of entries of `stride` floats, allocating through `heap`.
void bp_blocks_init(bp_blocks *b, bp_heap *heap, size_t stride);
/// Frees the pool (the pool is empty and usable again).
void bp_blocks_free(bp_blocks *b);
/// Forgets every block, keeping the memory.
void bp_blocks_clear(bp_blocks *b);
/// Forgets every block and makes the pool at least `cap` entries, its contents not kept (for a
/// caller about to lay every block out again).
bp_status bp_blocks_renew(bp_blocks *b, size_t cap);
/// Makes the pool at least `cap` entries (and 256), keeping the blocks; the new room is written
/// once, so that its pages are the system's before a frame needs them.
bp_status bp_blocks_reserve(bp_blocks *b, size_t cap);
/// A block of class `cls` at entry *off: a free one of the class, else from the pool's end.
bp_status bp_blocks_get(bp_blocks *b, unsigned cls, uint32_t *off);
/// A block of class `cls` from the pool's end, where bp_blocks_renew made room for it: a
/// caller laying out many blocks at once, in order.
static inline uint32_t bp_blocks_take(bp_blocks *b, unsigned cls) {
    const uint32_t off = (uint32_t)b->used;
    b->used += (size_t)2 << cls;
    return off;
}
/// Gives the block of class `cls` at entry `off` back.
void bp_blocks_put(bp_blocks *b, uint32_t off, unsigned cls);
/// Whether every free block lies inside the used part of the pool (for validators).
bool bp_blocks_valid(const bp_blocks *b);

/// The class of a block of `cap` entries (a power of two, at least 2).
static inline unsigned bp_blocks_class(uint32_t cap) { return (unsigned)__builtin_ctz(cap) - 1u; }

/// Entry `k` of the pool.
static inline float *bp_blocks_entry(const bp_blocks *b, size_t k) { return b->pool + k * b->stride; }

#endif
