// Allocation through the user's hooks: the default allocator, the heap (counted bp_heap_alloc and
// bp_heap_free, and bp_heap_grow, the one growth policy every array of the library uses), and the
// context's forms of them, which go through the context's heap.
#if defined(__linux__)
#define _DEFAULT_SOURCE
#endif
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core.h"
#include "pool.h"

// Blocks this large get transparent huge pages where the system has them, rounded up to whole
// 2 MiB pages: first touching fresh memory costs a page fault per 4 KiB (measured here: about
// 4 ms per MiB on 4 KiB pages, a quarter of that on 2 MiB pages), a million-box frame touches
// tens of MiB on its first call, and fewer TLB misses made sweep 8-10% faster at 100,000 boxes
// (arrays of 1.2 to 3.2 MiB) for at most 2 MiB of slack per block.
#define BP_HUGE_BLOCK ((size_t)1 << 20)
#define BP_HUGE_ALIGN ((size_t)2 << 20)

void *bp_default_alloc(size_t size, size_t align, void *user) {
    (void)user;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= BP_HUGE_BLOCK) {
        // Whole huge pages: a block that ends inside one would get 4 KiB pages for its tail.
        const size_t whole = (size + BP_HUGE_ALIGN - 1) & ~(BP_HUGE_ALIGN - 1);
        if (whole < size) return NULL;
        void *p = NULL;
        if (posix_memalign(&p, BP_HUGE_ALIGN, whole) != 0) return NULL;
        madvise(p, whole, MADV_HUGEPAGE);  // advice only: failure changes nothing
        return p;
    }
#endif
    // aligned_alloc wants a size that is a multiple of the alignment.
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size) return NULL;
    return aligned_alloc(align, rounded);
}

void bp_default_free(void *p, size_t size, void *user) {
    (void)size;
    (void)user;
    free(p);
}

// With workers, tasks grow their own buffers: the heap's lock keeps the user's hooks (and the
// byte count) to one thread at a time.
//
// Hooks that break their promise (a block not aligned as asked, or one handed out while it is
// still live) are outside the contract (include/broadphase.h); debug builds assert both, as far
// as it is cheap: alignment always, a block given twice among the first 256 live ones.
#ifndef NDEBUG
static void bp_debug_track(bp_heap *h, void *p) {
    assert(((uintptr_t)p & 63) == 0 && "allocation hook broke its promise: block not 64-byte aligned");
    if (h->debug_untracked) return;
    for (uint32_t k = 0; k < h->debug_nlive; ++k)
        assert(h->debug_live[k] != p && "allocation hook broke its promise: a live block handed out again");
    if (h->debug_nlive == sizeof h->debug_live / sizeof h->debug_live[0]) h->debug_untracked = true;
    else h->debug_live[h->debug_nlive++] = p;
}

static void bp_debug_untrack(bp_heap *h, void *p) {
    for (uint32_t k = 0; k < h->debug_nlive; ++k)
        if (h->debug_live[k] == p) {
            h->debug_live[k] = h->debug_live[--h->debug_nlive];
            return;
        }
}
#endif

void bp_heap_init(bp_heap *h, const bp_allocator *al, void *self, size_t size) {
    memset(h, 0, sizeof *h);
    h->alloc = *al;
    h->bytes = size;
#ifndef NDEBUG
    h->debug_live[h->debug_nlive++] = self;  // a hook giving this block out again is caught
#else
    (void)self;
#endif
}

void *bp_heap_alloc(bp_heap *h, size_t size) {
    if (size == 0) size = 1;
    bp_pool_lock(h->lock);
    void *p = h->alloc.alloc(size, 64, h->alloc.user);
    if (p) {
        h->bytes += size;
#ifndef NDEBUG
        bp_debug_track(h, p);
#endif
    }
    bp_pool_unlock(h->lock);
    return p;
}

void bp_heap_free(bp_heap *h, void *p, size_t size) {
    if (!p) return;
    if (size == 0) size = 1;
    bp_pool_lock(h->lock);
#ifndef NDEBUG
    bp_debug_untrack(h, p);
#endif
    h->alloc.free(p, size, h->alloc.user);
    h->bytes -= size;
    bp_pool_unlock(h->lock);
}

void *bp_heap_grow(bp_heap *h, void *old, size_t *cap, size_t need, size_t elem, bool keep, bp_status *st) {
    if (need <= *cap && old) return old;
    // Doubling: fresh pages are expensive to touch, and capacity never touched costs nothing.
    size_t want = *cap * 2;
    if (want < need) want = need;
    if (want < 16) want = 16;
    if (want > SIZE_MAX / elem) want = need;
    if (need > SIZE_MAX / elem) {
        *st = BP_ERR_NOMEM;
        return old;
    }
    void *p = bp_heap_alloc(h, want * elem);
    if (!p) {
        *st = BP_ERR_NOMEM;
        return old;
    }
    if (old) {
        if (keep) memcpy(p, old, *cap * elem);
        bp_heap_free(h, old, *cap * elem);
    }
    *cap = want;
    return p;
}

void *bp_alloc(bp_context *ctx, size_t size) { return bp_heap_alloc(&bp_core_of(ctx)->heap, size); }

void bp_free(bp_context *ctx, void *p, size_t size) { bp_heap_free(&bp_core_of(ctx)->heap, p, size); }

void *bp_grow(bp_context *ctx, void *old, size_t *cap, size_t need, size_t elem, bool keep, bp_status *st) {
    return bp_heap_grow(&bp_core_of(ctx)->heap, old, cap, need, elem, keep, st);
}

bp_status bp_index_grow(bp_index_buf *b) {
    bp_status st = BP_OK;
    b->data = bp_heap_grow(b->heap, b->data, &b->cap, b->count + 1, sizeof *b->data, true, &st);
    return st;
}


bp_status bp_check_permutation(bp_context *ctx, const uint32_t *perm, size_t n) {
    const size_t bytes = n / 8 + 1;  // a bitmap: validation may allocate
    unsigned char *seen = bp_alloc(ctx, bytes);
    if (!seen) return BP_ERR_NOMEM;
    memset(seen, 0, bytes);
    bp_status st = BP_OK;
    for (size_t k = 0; k < n && st == BP_OK; ++k) {
        const uint32_t i = perm[k];
        if (i >= n || (seen[i / 8] & (1u << (i % 8)))) st = BP_ERR_INVALID_ARG;
        else seen[i / 8] |= (unsigned char)(1u << (i % 8));
    }
    bp_free(ctx, seen, bytes);
    return st;
}
