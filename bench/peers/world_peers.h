// The peers as persistent worlds (issue #13): the same libraries as peers.h, driven the way
// their documentation says a game world is driven. Objects are added once and live in the
// peer's structure across frames; a frame tells the peer only what moved, what was removed and
// what was added, then asks for the frame's pairs:
//  - box2d-broadphase: b2BroadPhase (b2DynamicTree with fat AABBs and a move buffer): MoveProxy
//    for the moved proxies only, UpdatePairs, and a contact list kept as b2ContactManager keeps
//    it (contacts created by AddPair with Box2D's filter, destroyed when the fat AABBs part);
//  - bullet-dbvt, bullet-sap: setAabb for the moved proxies only, calculateOverlappingPairs,
//    the persistent pair cache (btHashedOverlappingPairCache) with an overlap filter callback;
//  - chipmunk-bbtree-vel, chipmunk-bbtree, chipmunk-hash: as cpSpace drives its indexes: static
//    objects in a static cpBBTree (reindexed only when one moves), moving ones in the dynamic
//    index (cpBBTree with or without velocity fattening, or cpSpaceHash) that
//    cpSpatialIndexReindexQuery reindexes and queries against the static one.
// Each update then does what each engine does after its broad phase: the exact box test of
// every candidate pair (the narrow phase's place) and the begin/end bookkeeping (Box2D: a
// touching flag per contact; Bullet and Chipmunk: a set of touching pairs stamped each frame,
// as cpSpace's arbiter cache is). The pairs, begins and ends are read after timing and compared
// with the reference world's.
//
// Use, per frame (the timed part is add/move/remove/update):
//
//     void *w = bp_wpeer_create(k, dim, slots, world_lo, world_hi);
//     frame 0: bp_wpeer_add for every object; bp_wpeer_update
//     frame f: bp_wpeer_move / bp_wpeer_remove / bp_wpeer_add; bp_wpeer_update;
//              after timing: bp_wpeer_results(w, &pairs, ...)
//     bp_wpeer_destroy(w);
//
// Objects live in slots (0 .. slots - 1) and carry the caller's 64-bit key, by which results
// name them. A pair counts when the closed boxes overlap, the objects are not both static, and
// (category a & mask b) and (category b & mask a) are non-zero.
#ifndef BP_WORLD_PEERS_H
#define BP_WORLD_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A pair of keys, a < b (the layout of bp_wref_pair).
typedef struct bp_wpeer_pair {
    uint64_t a, b;
} bp_wpeer_pair;

/// Whether peer k (peers.h numbering) has a persistent interface in dimension dim.
bool bp_wpeer_supports(size_t k, int dim);

/// Creates peer k's world for objects in slots 0 .. slots - 1; world_lo/world_hi bound every
/// box (bullet-sap quantizes to them). NULL when not supported or out of memory.
void *bp_wpeer_create(size_t k, int dim, size_t slots, const float *world_lo, const float *world_hi);

/// As bp_peer_set_time_limit: bounds each later call to `seconds` of processor time, after which
/// it returns BP_PEER_TOO_SLOW and the peer only accepts destroy.
void bp_wpeer_set_time_limit(void *w, double seconds);

/// Adds an object to an empty slot (box: 2 * dim floats, min then max). Returns 0, -1 (bad
/// slot, slot in use, out of memory) or BP_PEER_TOO_SLOW.
int bp_wpeer_add(void *w, uint32_t slot, uint64_t key, const float *box, bool is_static, uint64_t category,
                 uint64_t mask);
/// Gives the slot's object a new box; `vel` (dim floats, distance per frame) is its motion, for
/// the peers that fatten by it; NULL: derived from the previous box.
int bp_wpeer_move(void *w, uint32_t slot, const float *box, const float *vel);
/// Removes the slot's object: its touching pairs end at the next update.
int bp_wpeer_remove(void *w, uint32_t slot);
/// The frame's pair search and bookkeeping. Returns 0, -1 or BP_PEER_TOO_SLOW.
int bp_wpeer_update(void *w);

/// After timing: the pairs after the last update and its begins and ends, sorted by (a, b), in
/// buffers owned by the peer (valid until its next call). Returns 0 or -1.
int bp_wpeer_results(void *w, const bp_wpeer_pair **pairs, size_t *npairs, const bp_wpeer_pair **begins,
                     size_t *nbegins, const bp_wpeer_pair **ends, size_t *nends);

/// Candidate pairs the last update looked at (what it handed to its exact test).
size_t bp_wpeer_candidates(const void *w);

void bp_wpeer_destroy(void *w);

#ifdef __cplusplus
}
#endif

#endif
