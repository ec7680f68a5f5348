// The peers: other libraries' broad phases (Chipmunk2D, Box2D, Bullet, CGAL), driven the way
// their own documentation recommends for moving objects, behind one C interface so that
// `broadphase bench --peers` times them on the same frames as our methods (issue #6). Only the
// peers whose library was found at configure time are compiled in. Benchmark code: never part
// of the installed library.
//
// Use, per peer k and per frame:
//
//     void *p = bp_peer_create(k, dim, n, world_lo, world_hi);
//     for each frame: start timer; bp_peer_step(p, boxes, n, vel); stop timer;
//                     bp_peer_exact_pairs(p, boxes, &pairs, &count);  // after timing
//                     bp_peer_compare(pairs, count, ours, our_count, &missing, &extra);
//     bp_peer_destroy(p);
//
// The first step inserts every object (a peer's build cost, like our methods' first call).
// Pairs are uint32_t arrays [i0, j0, i1, j1, ...] with i < j, sorted by (i, j), no duplicates:
// the layout of bp_pair.
#ifndef BP_PEERS_H
#define BP_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Number of peers compiled in (0 when no peer library was found).
size_t bp_peer_count(void);

/// Name of peer k (chipmunk-hash, chipmunk-bbtree, chipmunk-bbtree-vel, chipmunk-sweep1d,
/// box2d-broadphase, bullet-dbvt, bullet-sap, cgal-box), or NULL when k >= bp_peer_count().
const char *bp_peer_name(size_t k);

/// Index of the peer called `name`, or (size_t)-1 when it is not compiled in.
size_t bp_peer_find(const char *name);

/// Whether peer k handles dimension dim (2 or 3). Chipmunk2D and Box2D are 2D only; Bullet runs
/// 2D scenes with a constant z extent; CGAL does both.
bool bp_peer_supports(size_t k, int dim);

/// A known defect of peer k that makes it miss true closed-box pairs, described in one line
/// (e.g. Chipmunk's cpSweep1D compares min < max strictly on x, so boxes that only touch on x
/// are never reported), or NULL when the peer is expected to find every pair. A peer that
/// misses pairs is reported as wrong whatever this says; the text only explains why.
const char *bp_peer_known_defect(size_t k);

/// Creates peer k for n objects in dimension dim. world_lo/world_hi (dim floats each) bound
/// every box of every frame (bullet-sap quantizes to them; the others ignore them). NULL when
/// the dimension is not supported, n is 0 or above 2^30, or memory runs out.
void *bp_peer_create(size_t k, int dim, size_t n, const float *world_lo, const float *world_hi);

/// One frame, the timed call: `boxes` holds the n boxes (2 * dim floats each, min[dim] then
/// max[dim]: bp_box2 / bp_box3); `velocities` (dim floats per object, distance per frame) or
/// NULL, then the peer derives them from the previous frame's boxes. The peer updates its
/// structure as its documentation recommends for moving objects and gathers its candidate
/// pairs. n must be the n of bp_peer_create. Returns 0, -1 (wrong n, out of memory) or
/// BP_PEER_TOO_SLOW; after a failed step the peer only accepts bp_peer_destroy.
int bp_peer_step(void *peer, const float *boxes, size_t n, const float *velocities);

/// bp_peer_step's result when the step ran past the peer's time limit.
#define BP_PEER_TOO_SLOW (-2)

/// Bounds every later step to `seconds` of processor time (0, the default: no limit; processor
/// time so that a loaded machine does not skip a peer for time spent waiting), so that the
/// benchmark can skip a peer that needs more than 5 s per frame without waiting for it: the
/// adapters watch the clock in their long loops (building bullet-sap is O(n) per object;
/// chipmunk-sweep1d is quadratic when every box shares one x) and give up. The step then
/// returns BP_PEER_TOO_SLOW and the peer only accepts bp_peer_destroy.
void bp_peer_set_time_limit(void *peer, double seconds);

/// Candidate pairs the last step reported (fattened boxes, cell neighbours, duplicates: whatever
/// the peer hands to its narrow phase).
size_t bp_peer_candidates(const void *peer);

/// After timing: the candidates of the last step filtered to exact closed-box overlaps of
/// `boxes` (the boxes given to that step), as sorted (i < j) pairs without duplicates in a
/// buffer owned by the peer (valid until its next step or exact_pairs). Returns 0, or -1 (no
/// step yet, a failed step, out of memory).
int bp_peer_exact_pairs(void *peer, const float *boxes, const uint32_t **pairs, size_t *count);

/// Duplicate candidates (the same pair reported more than once) seen by the last exact_pairs.
size_t bp_peer_duplicates(const void *peer);

/// Compares two sorted, duplicate-free pair lists (the layout above): `missing` counts pairs of
/// `reference` absent from `pairs`, `extra` pairs of `pairs` absent from `reference`. Returns
/// true when they are equal. Either count pointer may be NULL.
bool bp_peer_compare(const uint32_t *pairs, size_t count, const uint32_t *reference, size_t ref_count,
                     size_t *missing, size_t *extra);

/// Frees the peer (NULL is accepted).
void bp_peer_destroy(void *peer);

#ifdef __cplusplus
}
#endif

#endif
