// What every peer adapter sees: the common state (candidate buffer, previous boxes) and the
// table of slots each adapter fills. Adapters may be C or C++; this header is plain C.
#ifndef BP_PEER_IMPL_H
#define BP_PEER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peers.h"

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

/// One library's adapter. `create` sets p->impl (0 on success); `step` runs one frame and
/// fills the candidates through bp_peer_push (0 on success); `destroy` frees p->impl.
typedef struct bp_peer_class {
    const char *name;
    int variant;
    bool dim2, dim3;
    bool uses_velocity;  // needs velocities (derived from the previous boxes when not given)
    const char *known_defect;
    int (*create)(bp_peer *p);
    int (*step)(bp_peer *p, const float *boxes, const float *vel);
    void (*destroy)(bp_peer *p);
} bp_peer_class;

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

// The adapters compiled in (bench/peers/CMakeLists.txt defines BP_PEER_HAVE_*).
extern const bp_peer_class bp_peer_chipmunk_hash, bp_peer_chipmunk_bbtree, bp_peer_chipmunk_bbtree_vel,
    bp_peer_chipmunk_sweep1d, bp_peer_box2d, bp_peer_bullet_dbvt, bp_peer_bullet_sap, bp_peer_cgal_box;

#ifdef __cplusplus
}
#endif

#endif
