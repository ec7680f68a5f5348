// The plain sort-and-sweep of source document 003, the benchmark's baseline: what a careful
// programmer writes first, to measure what the library's methods buy. Bench-only, not the library.
#ifndef BP_BENCH_NAIVE_SWEEP_H
#define BP_BENCH_NAIVE_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"

#ifdef __cplusplus
extern "C" {
#endif

/// State kept between frames: only the arrays (so a warm frame does not allocate), no ordering.
typedef struct bp_naive_sweep {
    uint32_t *order;   // box indices sorted by min x
    uint32_t *next;    // active list links, by sorted position
    size_t cap;
    bp_pair *pairs;    // this frame's pairs, i < j, in discovery order
    size_t count, pair_cap;
    uint64_t checks;   // full box tests this frame
} bp_naive_sweep;

/// A zeroed state is valid; this zeroes it.
void bp_naive_sweep_init(bp_naive_sweep *s);

/// Finds every overlapping pair (closed rule) among n boxes of `dim` (2 or 3) floats each side,
/// laid out like bp_box2/bp_box3 (min[0..dim) then max[0..dim)). Pairs land in s->pairs.
/// Returns 0, or -1 when out of memory (the state stays valid and freeable).
int bp_naive_sweep_run(bp_naive_sweep *s, const float *boxes, size_t n, int dim);

/// Frees the arrays; the state is zeroed.
void bp_naive_sweep_free(bp_naive_sweep *s);

#ifdef __cplusplus
}
#endif

#endif
