// A reference persistent world: the oracle that `broadphase world`, the world scenes of the
// benchmark and the peers are checked against. It shares no code with the library's world
// (src/world*.c): every update finds every pair of every live object again (its own all-pairs
// loop up to BP_WREF_BRUTE_MAX objects, the library's stateless sweep above), filters them by
// the world's rules and diffs the sorted pair set with the previous one. Slow by design;
// simple enough to be right.
//
// Objects are named by the caller's 64-bit keys (a script's ids, a scene's object serials).
// Rules, as in include/broadphase.h: a pair (a, b) counts when the closed boxes overlap, a and
// b are not both static, and (a.category & b.mask) != 0 and (b.category & a.mask) != 0.
#ifndef BP_BENCH_WORLD_REF_H
#define BP_BENCH_WORLD_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Up to this many live objects, update tests all pairs itself; above, it asks the library's
/// stateless sweep (checked against brute force by the library's tests) for the overlaps.
#define BP_WREF_BRUTE_MAX 3000

/// One pair of keys, a < b.
typedef struct bp_wref_pair {
    uint64_t a, b;
} bp_wref_pair;

typedef struct bp_wref bp_wref;

/// A reference world of dimension dim (2 or 3); NULL when out of memory or dim is bad.
bp_wref *bp_wref_create(int dim);
void bp_wref_destroy(bp_wref *w);

/// Adds object `key` with box (2 * dim floats: min then max). Returns 0, -1 when the key is
/// live already, -2 out of memory.
int bp_wref_add(bp_wref *w, uint64_t key, const float *box, bool is_static, uint64_t category, uint64_t mask);
/// Returns 0, or -1 when the key is not live.
int bp_wref_move(bp_wref *w, uint64_t key, const float *box);
int bp_wref_remove(bp_wref *w, uint64_t key);
int bp_wref_set_kind(bp_wref *w, uint64_t key, bool is_static);
int bp_wref_set_filter(bp_wref *w, uint64_t key, uint64_t category, uint64_t mask);
bool bp_wref_has(const bp_wref *w, uint64_t key);
/// Live objects.
size_t bp_wref_count(const bp_wref *w);

/// Finds the pairs of the current boxes; begins are the pairs absent at the previous update,
/// ends the pairs then that are absent now (a removed object's included). Returns 0, or -2
/// when out of memory (the previous pair set is kept).
int bp_wref_update(bp_wref *w);

/// The pairs, begins and ends of the last update, sorted by (a, b). Valid until the next update.
const bp_wref_pair *bp_wref_pairs(const bp_wref *w, size_t *count);
const bp_wref_pair *bp_wref_begins(const bp_wref *w, size_t *count);
const bp_wref_pair *bp_wref_ends(const bp_wref *w, size_t *count);

/// The keys, ascending, of the objects whose current box overlaps [lo, hi] (closed) and whose
/// category & mask is non-zero. Valid until the next call on w. Returns 0 or -2.
int bp_wref_query_box(bp_wref *w, const float *lo, const float *hi, uint64_t mask, const uint64_t **keys,
                      size_t *count);

/// Compares two sorted pair lists; `missing` counts pairs of `want` absent from `got`, `extra`
/// the reverse (either may be NULL). True when equal.
bool bp_wref_compare(const bp_wref_pair *got, size_t ngot, const bp_wref_pair *want, size_t nwant, size_t *missing,
                     size_t *extra);

/// Sorts pairs by (a, b) in place.
void bp_wref_sort(bp_wref_pair *pairs, size_t count);

#ifdef __cplusplus
}
#endif

#endif
