// The hash index of the reference world (world_ref.c) and of the peers' world adapter
// (peers/world_peers.c): a power-of-two table of uint32_t entry numbers, open addressing with
// linear probing, deletion by backward shift (no tombstones, so probes stay short).
#ifndef BP_BENCH_PROBE_H
#define BP_BENCH_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/// An empty position.
#define BP_PROBE_EMPTY UINT32_MAX

/// A table of `cap` empty positions, or NULL.
static inline uint32_t *bp_probe_table(size_t cap) {
    uint32_t *t = malloc(cap * sizeof *t);
    if (t)
        for (size_t k = 0; k < cap; ++k) t[k] = BP_PROBE_EMPTY;
    return t;
}

/// Empties position `at` of t (mask = capacity - 1) and moves the following cluster back over it;
/// hash(ctx, e) is the hash of entry e, whose home is hash & mask.
static inline void bp_probe_unlink(uint32_t *t, size_t mask, size_t at, uint64_t (*hash)(const void *ctx, uint32_t e),
                                   const void *ctx) {
    size_t hole = at, k = at;
    t[hole] = BP_PROBE_EMPTY;
    for (;;) {
        k = (k + 1) & mask;
        if (t[k] == BP_PROBE_EMPTY) return;
        size_t home = (size_t)hash(ctx, t[k]) & mask;
        // Moves back when its home is not in (hole, k] cyclically.
        bool between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!between) {
            t[hole] = t[k];
            t[k] = BP_PROBE_EMPTY;
            hole = k;
        }
    }
}

#endif
