// Drives a bp_world through a scene, frame by frame, as a game would: frame 0 adds every object
// in one batch; each later frame moves what moved, removes what died and adds what was born,
// each as one batch call, then updates. Preparing a frame's batches (untimed) is separate from
// applying them (the part the benchmark times). The proxy's user value is the object's serial,
// so events can be compared with the reference world (world_ref.h), which is keyed by serials.
#ifndef BP_BENCH_WORLD_DRIVE_H
#define BP_BENCH_WORLD_DRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"
#include "scene.h"
#include "world_ref.h"
#include "world_scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_wdrive {
    bp_world *world;
    int dim;
    size_t n;                 ///< slots
    bp_proxy_id *ids;         ///< the proxy in each slot
    // The frame's batches (bp_wdrive_prepare_*), applied by bp_wdrive_apply.
    bp_proxy_id *move_ids;
    float *move_boxes;        ///< 2 * dim floats per move
    size_t nmove;
    bp_proxy_id *remove_ids;
    size_t nremove;
    float *add_boxes;
    bp_proxy_def *add_defs;
    bp_proxy_id *add_ids;
    uint32_t *add_slots;      ///< where each added proxy goes
    size_t nadd;
    bp_world_events events;   ///< of the last apply
    bp_status failed;         ///< the call that failed in the last apply (BP_OK when none)
    const char *failed_call;
} bp_wdrive;

/// Creates the world from `def` (its dimension is used) and the arrays for n slots. Returns
/// BP_OK or the error (then the driver holds nothing).
bp_status bp_wdrive_init(bp_wdrive *d, const bp_world_def *def, size_t n);
void bp_wdrive_free(bp_wdrive *d);

/// Frame 0 of a world scene: every slot added (kinds, filters and serials as the scene says).
void bp_wdrive_prepare_wscene_start(bp_wdrive *d, const bp_wscene *s);
/// After bp_wscene_step: the moved slots' new boxes, the dead removed, the born added.
void bp_wdrive_prepare_wscene_step(bp_wdrive *d, const bp_wscene *s);
/// A stateless scene through the world: frame 0 adds every object (moving, default filter,
/// serial = index); later frames move every object.
void bp_wdrive_prepare_scene_start(bp_wdrive *d, const bp_scene *s);
void bp_wdrive_prepare_scene_step(bp_wdrive *d, const bp_scene *s);

/// Applies the prepared batches (move, remove, add, each one call when not empty) and updates:
/// the timed part. Returns BP_OK or the first error (d->failed_call names the call).
bp_status bp_wdrive_apply(bp_wdrive *d);

/// After a successful apply: records the added proxies' ids in their slots.
void bp_wdrive_commit(bp_wdrive *d);

/// The world's events or pairs as sorted pairs of user values (serials) into *buf (grown as
/// needed, *cap in pairs). Returns the count, or (size_t)-1 when out of memory.
size_t bp_wdrive_user_pairs(const bp_world_pairs *pairs, bp_wref_pair **buf, size_t *cap);

/// Feeds the reference world the same frame (by serials) and updates it. Returns 0 or -1.
int bp_wdrive_ref_wscene_start(bp_wref *ref, const bp_wscene *s);
int bp_wdrive_ref_wscene_step(bp_wref *ref, const bp_wscene *s);
int bp_wdrive_ref_scene_start(bp_wref *ref, const bp_scene *s);
int bp_wdrive_ref_scene_step(bp_wref *ref, const bp_scene *s);

#ifdef __cplusplus
}
#endif

#endif
