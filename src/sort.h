// Small shared algorithms, written once: the insertion sort with a move budget that finishes a
// nearly sorted order (temporal coherence), the lower and upper bounds of sorted key arrays, and
// the choice of a sweep axis. Header-only and inline: each use compiles to the loop it replaced.
#ifndef BP_SORT_H
#define BP_SORT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/// Sorts (keys, vals)[0 .. n) by key, stably, by insertion, and gives up once it has moved more
/// than `budget` elements (SIZE_MAX: never). Returns the moves made: at most `budget` exactly when
/// the sort finished; otherwise the arrays are left a permutation of the input in which equal keys
/// keep their order, so that a stable sort finishes it with the same result. Its moves are the
/// inversions of the input, so a budget of a few moves per key is what makes it cheaper than a
/// radix sort on an order kept from the last frame.
static inline size_t bp_insertion_sort32(uint32_t *BP_RESTRICT keys, uint32_t *BP_RESTRICT vals, size_t n,
                                         size_t budget) {
    size_t moves = 0;
    for (size_t k = 1; k < n; ++k) {
        const uint32_t key = keys[k];
        if (keys[k - 1] <= key) continue;
        const uint32_t val = vals[k];
        size_t j = k;
        do {
            keys[j] = keys[j - 1];
            vals[j] = vals[j - 1];
            --j;
        } while (j > 0 && keys[j - 1] > key);
        keys[j] = key;
        vals[j] = val;
        moves += k - j;
        if (moves > budget) break;
    }
    return moves;
}

// Binary searches of a sorted key array within [lo, hi): one function per key width and bound.
#define BP_BOUND(name, T, before)                                                               \
    static inline size_t name(const T *keys, size_t lo, size_t hi, T key) {                      \
        while (lo < hi) {                                                                        \
            const size_t mid = lo + (hi - lo) / 2;                                               \
            if (keys[mid] before key) lo = mid + 1;                                              \
            else hi = mid;                                                                       \
        }                                                                                        \
        return lo;                                                                               \
    }
/// bp_lower_bound32(keys, lo, hi, key): the first index in [lo, hi) whose key is >= key (hi when
/// none); bp_upper_bound32: the first whose key is > key. bp_*_bound64: the same for 64-bit keys.
BP_BOUND(bp_lower_bound32, uint32_t, <)
BP_BOUND(bp_upper_bound32, uint32_t, <=)
BP_BOUND(bp_lower_bound64, uint64_t, <)
BP_BOUND(bp_upper_bound64, uint64_t, <=)
#undef BP_BOUND

// The sweep axis. A sweep along an axis tests each box against the boxes whose min falls inside
// its interval there: about (mean extent) / (spread of the boxes) of them per box, up to a factor
// common to every axis. The axis with the lowest ratio wins, so that boxes along a line (docs/
// scenes.md `line`) are swept across it instead of going quadratic. The spread is any measure
// taken the same way on every axis: the standard deviation of the centres (the frame's sums,
// sort-and-sweep), or the extent of the group's bounds (RDC's final groups).

/// Keep the current axis unless another promises at most this fraction of its candidates, so that
/// the order kept for coherence (sorted along the current axis) is not thrown away over noise.
#define BP_AXIS_HYSTERESIS 0.75

/// The expected candidates per box of a sweep along an axis, up to a common factor: the boxes'
/// mean extent (or the sum of extents) over their spread on it; +inf when they do not spread
/// (every box on one coordinate: a sweep there tests all pairs). A tiny floor on the extent ranks
/// points (zero extents) by their spread alone.
static inline double bp_axis_cost(double size, double spread) {
    if (!(spread > 0.0)) return INFINITY;
    return (size + 1e-30) / spread;
}

/// The spread used by bp_axis_cost from running sums of n centres (sum, sum of squares): their
/// standard deviation, 0 when it is not positive (rounding can make the variance negative).
static inline double bp_axis_spread(double n, double sum, double sq) {
    const double mean = sum / n, var = sq / n - mean * mean;
    return var > 0.0 ? sqrt(var) : 0.0;
}

/// bp_axis_cost of a frame's boxes on axis a (f->n > 0), from the sums the load gathers when the
/// method's class sets frame_sums (or under AUTO): mean extent over the centres' standard deviation.
static inline double bp_frame_axis_cost(const bp_frame *f, int a) {
    const double n = (double)f->n;
    return bp_axis_cost(f->size_sum[a] / n, bp_axis_spread(n, f->center_sum[a], f->center_sq[a]));
}

/// The axis of lowest cost[0 .. dim) (the first of equals), or `keep` (an axis the boxes are
/// sorted along now; -1 for none) unless that one promises at most BP_AXIS_HYSTERESIS of its cost.
static inline int bp_axis_choose(const double *cost, int dim, int keep) {
    int best = 0;
    for (int a = 1; a < dim; ++a)
        if (cost[a] < cost[best]) best = a;
    if (keep >= 0 && keep < dim && best != keep && !(cost[best] < BP_AXIS_HYSTERESIS * cost[keep])) return keep;
    return best;
}

#endif
