// Sorted output: a call's pairs radix-sorted by (i, j), on the context's workers.
#ifndef BP_PAIR_SORT_H
#define BP_PAIR_SORT_H

#include "core.h"

/// Scratch of the sort, kept by the context between calls.
typedef struct bp_pair_sort_scratch {
    uint64_t *keys, *tmp;
    size_t keys_cap, tmp_cap;
} bp_pair_sort_scratch;

/// Sorts pairs[0 .. count) of a buffer of `cap` pairs by (i, j), every index below n: one radix
/// sort of the pairs packed into 64-bit keys. The scratch is sized to `cap`, not to `count`, so
/// that a warm frame with a few more pairs allocates nothing. BP_ERR_NOMEM or the pool's error.
bp_status bp_pair_sort(bp_context *ctx, bp_pair_sort_scratch *sc, bp_pair *pairs, size_t count, size_t cap, size_t n);

/// Frees the scratch.
void bp_pair_sort_release(bp_context *ctx, bp_pair_sort_scratch *sc);

#endif
