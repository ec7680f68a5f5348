// The world's pairs (world_pairs.c): the event keys of an update, and the pair set kept between
// updates. Pairs are keys of two slots (slot_a << 32 | slot_b, a < b). Knows nothing of the
// world. Never installed.
#ifndef BP_WORLD_PAIRS_H
#define BP_WORLD_PAIRS_H

#include "core.h"

/// The key of the pair of slots a and b (either order).
static inline uint64_t world_key(uint32_t a, uint32_t b) {
    return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
}

/// Event keys of an update: ends (0) and begins (1).
typedef struct world_evbuf {
    uint64_t *keys[2];
    size_t count[2], cap[2];
} world_evbuf;

/// Makes room for one more key in list `begin` of `buf`.
bp_status world_evbuf_grow(world_evbuf *buf, bp_heap *h, int begin);

/// Appends an event key to `buf`, growing it through the heap (whose lock lets workers grow
/// their own buffers at once).
static inline bp_status world_evbuf_push(world_evbuf *buf, bp_heap *h, int begin, uint64_t key) {
    if (BP_UNLIKELY(buf->count[begin] == buf->cap[begin])) {
        bp_status st = world_evbuf_grow(buf, h, begin);
        if (st != BP_OK) return st;
    }
    buf->keys[begin][buf->count[begin]++] = key;
    return BP_OK;
}

void world_evbuf_free(world_evbuf *buf, bp_heap *h);

/// The pair set as of the last update: a sorted array of keys and a log of the changes since it
/// was last rewritten, folded in when the log grows past a share of the set (so an update costs
/// time in proportion to its events, amortized).
typedef struct world_pairset {
    uint64_t *keys;
    size_t count, cap;
    uint64_t *log;         // changed keys, in update order
    uint32_t *log_begin;   // 1: began, 0: ended
    size_t log_count, log_cap, log_begin_cap;
    size_t total;          // pairs in the set, log included
    uint64_t *out;         // the folded set is written here, then swapped with keys
    uint64_t *tmp;         // sort scratch
    uint32_t *tmp_vals;
    size_t out_cap, tmp_cap, tmp_vals_cap;
    bp_heap *heap;
} world_pairset;

/// An empty set allocating through `heap`.
void world_pairs_init(world_pairset *p, bp_heap *heap);
void world_pairs_free(world_pairset *p);
/// Folds the log into the sorted array.
bp_status world_pairs_fold(world_pairset *p);
/// Whether the log has grown enough to be folded.
bool world_pairs_fold_due(const world_pairset *p);
/// Reserves the log for `extra` more changes (and what folding can need).
bp_status world_pairs_reserve_log(world_pairset *p, size_t extra);
/// Appends an update's changes: `ends` and `begins` sorted keys.
void world_pairs_log(world_pairset *p, const uint64_t *ends, size_t ne, const uint64_t *begins, size_t nb);
/// Replaces the set with `*keys` (sorted, `count` of them), writing the differences from the
/// old set to `ev` (ends 0, begins 1, reserved by the caller to hold them). The old set must be
/// folded. The arrays are swapped: *keys/*cap receive the old set's buffer.
void world_pairs_replace(world_pairset *p, uint64_t **keys, size_t *cap, size_t count, world_evbuf *ev);

#endif
