// What every peer adapter sees: the common state (candidate buffer, previous boxes) and the
// table of slots each adapter fills. Adapters may be C or C++; this header is plain C.
#ifndef BP_PEER_IMPL_H
#define BP_PEER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers.h"
#include "world_peers.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The common state of a peer. `impl` is the adapter's own state.
typedef struct bp_peer {
    const struct bp_peer_class *cls;
    int variant;        // which of the class's variants (e.g. Chipmunk's three indexes)
    int dim;
    size_t n;
    float lo[3], hi[3]; // world bounds
    void *impl;
    int steps;          // successful steps so far
    bool failed;        // a step failed: only destroy is allowed
    double time_limit;  // seconds per step, 0 for none
    double step_start;  // seconds (bp_peer_clock) when the current step began
    // Candidate pairs of the last step, two uint32_t per pair, either orientation.
    uint32_t *cand;
    size_t cand_count, cand_cap;  // counts pairs
    // Velocities derived from the previous boxes when the caller gives none.
    float *prev_boxes, *derived_vel;
    // Exact pairs (filled after timing) and counting-sort scratch.
    uint32_t *exact, *scratch, *bucket;
    size_t exact_cap, scratch_cap, bucket_cap;
    size_t exact_count, duplicates;
} bp_peer;

struct bp_wpeer_class;

/// One library's adapter. `create` sets p->impl (0 on success); `step` runs one frame and
/// fills the candidates through bp_peer_push (0 on success); `destroy` frees p->impl. `world`:
/// its persistent interface (world_peers.h), NULL when it has none.
typedef struct bp_peer_class {
    const char *name;
    int variant;
    bool dim2, dim3;
    bool uses_velocity;  // needs velocities (derived from the previous boxes when not given)
    const char *known_defect;
    int (*create)(bp_peer *p);
    int (*step)(bp_peer *p, const float *boxes, const float *vel);
    void (*destroy)(bp_peer *p);
    const struct bp_wpeer_class *world;
} bp_peer_class;

/// The class of peer k, or NULL when k >= bp_peer_count().
const bp_peer_class *bp_peer_class_at(size_t k);

/// The process's processor time in seconds (C clock()).
double bp_peer_clock(void);

/// Whether the current step has run past the time limit. Adapters call it every few thousand
/// iterations of their long loops and return BP_PEER_TOO_SLOW (peers.h) when it is true.
static inline bool bp_peer_over_time(const bp_peer *p) {
    return p->time_limit > 0.0 && bp_peer_clock() - p->step_start > p->time_limit;
}

/// Grows the candidate buffer (1.5x, kept between frames). Returns 0 or -1.
int bp_peer_grow(bp_peer *p);

/// Records candidate pair (a, b). Returns 0, or -1 when out of memory.
static inline int bp_peer_push(bp_peer *p, uint32_t a, uint32_t b) {
    if (p->cand_count == p->cand_cap && bp_peer_grow(p) != 0) return -1;
    p->cand[2 * p->cand_count] = a;
    p->cand[2 * p->cand_count + 1] = b;
    p->cand_count++;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Persistent peers (world_peers.h)

/// A pair of slots or keys in the touching set.
typedef struct bp_wpeer_entry {
    uint64_t a, b;    // keys, a < b
    uint32_t stamp;   // the update that last saw the pair touching
    uint32_t unused;
} bp_wpeer_entry;

/// The common state of a persistent peer: the objects (slots), the set of touching pairs, the
/// events of the current frame.
typedef struct bp_wpeer {
    const bp_peer_class *cls;
    int variant, dim;
    size_t slots;
    float lo[3], hi[3];
    void *impl;
    bool failed;
    double time_limit, step_start;
    // Per slot: the object's key, box (min[3], max[3]), previous box, filter.
    uint64_t *key, *cat, *mask;
    float *box, *prev;
    bool *live, *stat;
    // Touching pairs: dense entries and an index (open addressing on the key pair).
    bp_wpeer_entry *set;
    size_t set_count, set_cap;
    uint32_t *index;
    size_t index_cap;  // a power of two, at least twice set_cap
    uint32_t stamp;
    // This frame's events; results (sorted copies) after timing.
    bp_wpeer_pair *begins, *ends, *pairs;
    size_t nbegins, nends, npairs, begins_cap, ends_cap, pairs_cap;
    bool fresh;        // the last update's events were read: the next call starts a new frame
    size_t candidates; // candidate pairs of the last update
} bp_wpeer;

/// A library's persistent adapter. The common code updates the slot's state (key, box, filter)
/// before `add` and `move` and after `remove`. `update` finds the frame's candidates and reports
/// the touching ones: with `stamps`, through bp_wpeer_touching each frame (the common code then
/// ends the pairs not seen); without, through bp_wpeer_begin and bp_wpeer_end as they change.
typedef struct bp_wpeer_class {
    bool dim2, dim3, stamps;
    int (*create)(bp_wpeer *w);
    int (*add)(bp_wpeer *w, uint32_t slot);
    int (*move)(bp_wpeer *w, uint32_t slot, const float *vel);
    int (*remove)(bp_wpeer *w, uint32_t slot);
    int (*update)(bp_wpeer *w);
    void (*destroy)(bp_wpeer *w);
} bp_wpeer_class;

static inline bool bp_wpeer_over_time(const bp_wpeer *w) {
    return w->time_limit > 0.0 && bp_peer_clock() - w->step_start > w->time_limit;
}

/// Whether the world's rules let slots a and b pair (not both static; each one's category meets
/// the other's mask).
static inline bool bp_wpeer_counts(const bp_wpeer *w, uint32_t a, uint32_t b) {
    if (w->stat[a] && w->stat[b]) return false;
    return (w->cat[a] & w->mask[b]) && (w->cat[b] & w->mask[a]);
}

/// The exact closed-box test of the slots' current boxes (the narrow phase's place).
static inline bool bp_wpeer_overlap(const bp_wpeer *w, uint32_t a, uint32_t b) {
    const float *p = w->box + 6 * (size_t)a, *q = w->box + 6 * (size_t)b;
    for (int k = 0; k < w->dim; ++k)
        if (p[k] > q[3 + k] || q[k] > p[3 + k]) return false;
    return true;
}

/// Stamps model: slots a and b touch this frame (a begin when they did not). 0 or -1.
int bp_wpeer_touching(bp_wpeer *w, uint32_t a, uint32_t b);
/// Direct model: slots a and b began or stopped touching. 0 or -1.
int bp_wpeer_begin(bp_wpeer *w, uint32_t a, uint32_t b);
int bp_wpeer_end(bp_wpeer *w, uint32_t a, uint32_t b);

// The adapters compiled in (bench/peers/CMakeLists.txt defines BP_PEER_HAVE_*).
extern const bp_peer_class bp_peer_chipmunk_hash, bp_peer_chipmunk_bbtree, bp_peer_chipmunk_bbtree_vel,
    bp_peer_chipmunk_sweep1d, bp_peer_box2d, bp_peer_bullet_dbvt, bp_peer_bullet_sap, bp_peer_cgal_box;

#ifdef __cplusplus
}
#endif

#endif
