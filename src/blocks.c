// The block pool (blocks.h): blocks of 2 << k entries handed out from one array, and a free list
// per class linked through each free block's first word.
#include "blocks.h"

static inline uint32_t blocks_link(const bp_blocks *b, uint32_t off) {
    uint32_t u;
    memcpy(&u, bp_blocks_entry(b, off), sizeof u);
    return u;
}

void bp_blocks_init(bp_blocks *b, bp_heap *heap, size_t stride) {
    memset(b, 0, sizeof *b);
    b->heap = heap;
    b->stride = stride;
    bp_blocks_clear(b);
}

void bp_blocks_clear(bp_blocks *b) {
    b->used = 0;
    for (int k = 0; k < BP_BLOCK_CLASSES; ++k) b->free_block[k] = BP_BLOCK_NONE;
}

void bp_blocks_free(bp_blocks *b) {
    bp_heap_free(b->heap, b->pool, b->cap * b->stride * sizeof(float));
    bp_blocks_init(b, b->heap, b->stride);
}

bp_status bp_blocks_reserve(bp_blocks *b, size_t cap) {
    const size_t stride = b->stride;
    if (cap < 256) cap = 256;
    if (cap <= b->cap) return BP_OK;
    if (cap > UINT32_MAX || cap > SIZE_MAX / (stride * sizeof(float))) return BP_ERR_NOMEM;
    float *p = bp_heap_alloc(b->heap, cap * stride * sizeof(float));
    if (!p) return BP_ERR_NOMEM;
    if (b->used) memcpy(p, b->pool, b->used * stride * sizeof(float));
    memset(p + b->used * stride, 0, (cap - b->used) * stride * sizeof(float));
    bp_heap_free(b->heap, b->pool, b->cap * stride * sizeof(float));
    b->pool = p;
    b->cap = cap;
    return BP_OK;
}

bp_status bp_blocks_renew(bp_blocks *b, size_t cap) {
    const size_t stride = b->stride;
    bp_blocks_clear(b);
    if (cap <= b->cap) return BP_OK;
    if (cap > UINT32_MAX || cap > SIZE_MAX / (stride * sizeof(float))) return BP_ERR_NOMEM;
    float *p = bp_heap_alloc(b->heap, cap * stride * sizeof(float));
    if (!p) return BP_ERR_NOMEM;
    bp_heap_free(b->heap, b->pool, b->cap * stride * sizeof(float));
    b->pool = p;
    b->cap = cap;
    return BP_OK;
}

bp_status bp_blocks_get(bp_blocks *b, unsigned cls, uint32_t *off) {
    if (b->free_block[cls] != BP_BLOCK_NONE) {
        *off = b->free_block[cls];
        b->free_block[cls] = blocks_link(b, *off);
        return BP_OK;
    }
    const size_t size = (size_t)2 << cls;
    if (b->cap - b->used < size) {
        bp_status st = bp_blocks_reserve(b, b->cap * 2 > b->used + size ? b->cap * 2 : b->used + size);
        if (st != BP_OK) return st;
    }
    *off = (uint32_t)b->used;
    b->used += size;
    return BP_OK;
}

void bp_blocks_put(bp_blocks *b, uint32_t off, unsigned cls) {
    memcpy(bp_blocks_entry(b, off), &b->free_block[cls], sizeof(uint32_t));
    b->free_block[cls] = off;
}

bool bp_blocks_valid(const bp_blocks *b) {
    for (unsigned k = 0; k < BP_BLOCK_CLASSES; ++k) {
        size_t guard = 0;
        for (uint32_t off = b->free_block[k]; off != BP_BLOCK_NONE; off = blocks_link(b, off))
            if ((size_t)off + ((size_t)2 << k) > b->used || ++guard > b->used) return false;
    }
    return true;
}
