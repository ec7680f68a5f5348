// Small shared algorithms, written once: the insertion sort with a move budget that finishes a
// nearly sorted order (temporal coherence), the lower and upper bounds of sorted key arrays, the
// choice of a sweep axis, and the sort and selection of a frame's sample (core.h). Header-only and
// inline: each use compiles to the loop it replaced.
#ifndef BP_SORT_H
#define BP_SORT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

// Below the core (core.h includes it): nothing of the project's.
#if defined(__GNUC__)
#define BP_SORT_RESTRICT __restrict__
#else
#define BP_SORT_RESTRICT
#endif

/// Sorts (keys, vals)[0 .. n) by key, stably, by insertion, and gives up once it has moved more
/// than `budget` elements (SIZE_MAX: never). Returns the moves made: at most `budget` exactly when
/// the sort finished; otherwise the arrays are left a permutation of the input in which equal keys
/// keep their order, so that a stable sort finishes it with the same result. Its moves are the
/// inversions of the input, so a budget of a few moves per key is what makes it cheaper than a
/// radix sort on an order kept from the last frame.
static inline size_t bp_insertion_sort32(uint32_t *BP_SORT_RESTRICT keys, uint32_t *BP_SORT_RESTRICT vals, size_t n,
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

/// The axis of lowest cost[0 .. dim) (the first of equals), or `keep` (an axis the boxes are
/// sorted along now; -1 for none) unless that one promises at most BP_AXIS_HYSTERESIS of its cost.
static inline int bp_axis_choose(const double *cost, int dim, int keep) {
    int best = 0;
    for (int a = 1; a < dim; ++a)
        if (cost[a] < cost[best]) best = a;
    if (keep >= 0 && keep < dim && best != keep && !(cost[best] < BP_AXIS_HYSTERESIS * cost[keep])) return keep;
    return best;
}

// Insertion sort of a frame's sample (core.h, bp_sample_centres): a few values.
static inline void bp_sort_doubles(double *v, size_t n) {
    for (size_t k = 1; k < n; ++k) {
        const double x = v[k];
        size_t j = k;
        for (; j > 0 && v[j - 1] > x; --j) v[j] = v[j - 1];
        v[j] = x;
    }
}

// The k-th smallest of v[0 .. n) (k < n), v reordered so that v[k] holds it with nothing larger
// before it and nothing smaller after. Partitions without a branch on the values (a sort of the
// sample's 64 values mispredicted about once a value: the grid's per-frame sample sorts were a
// third of a 1,000-box frame); values equal to the pivot are set apart in a second pass, so a
// sample of identical extents (`uniform`) takes one round.
static inline double bp_select_double(double *v, size_t n, size_t k) {
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        const double pivot = v[mid];
        v[mid] = v[hi - 1];
        v[hi - 1] = pivot;
        size_t less = lo;  // [lo, less) < pivot
        for (size_t i = lo; i + 1 < hi; ++i) {
            const double t = v[i];
            v[i] = v[less];
            v[less] = t;
            less += t < pivot;
        }
        v[hi - 1] = v[less];
        v[less] = pivot;
        size_t same = less + 1;  // [less, same) == pivot
        for (size_t i = less + 1; i < hi; ++i) {
            const double t = v[i];
            v[i] = v[same];
            v[same] = t;
            same += t == pivot;
        }
        if (k < less) hi = less;
        else if (k < same) return pivot;
        else lo = same;
    }
    return v[k];
}

#endif
