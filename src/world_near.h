// The world's near lists (world_near.c, docs/world.md "Near lists"): for a moving proxy, the
// static proxies whose boxes met its fat box when the list was made. Lists are made from
// entries the caller collects from the cells (world_near_begin, world_near_collect,
// world_near_store), checked against a proxy's boxes (world_near_valid) and read for its events
// (world_near_events). Knows nothing of the world. Never installed.
#ifndef BP_WORLD_NEAR_H
#define BP_WORLD_NEAR_H

#include "blocks.h"
#include "world_groups.h"
#include "world_pairs.h"

// A list is made from at most WORLD_NEAR_MAX entries collected around the fat box; when they are
// more than WORLD_NEAR_WANT (a crowd, or 3D where the fat box holds more), the fat box shrinks
// towards the box, halving its margin, until they are few enough or the margin has halved three
// times. A list of more entries than WORLD_NEAR_KEEP is not kept: its proxy is decided from the
// cells.
#define WORLD_NEAR_MAX 256
#define WORLD_NEAR_WANT 8
#define WORLD_NEAR_KEEP 64

/// A moving proxy's near list: the static proxies whose boxes met `fat` when it was made, as
/// entries {box, slot, group} in a block of the lists' pool. It answers for the static world
/// while `epoch` is the lists' epoch and the proxy's box is inside `fat`.
#define WORLD_NEAR_NOBLOCK 0xFFFFu
typedef struct world_near {
    float fat[6];
    uint32_t epoch;  // the lists' epoch when made; 0: none (never the epoch)
    uint32_t off;    // its block (when cls != WORLD_NEAR_NOBLOCK); a free record: the next free one
    uint16_t count;
    uint16_t cls;    // its block's class
    float scale;     // of the margin of the slot's next fat box (world_near.c)
} world_near;

/// Every slot's list.
typedef struct world_nears {
    uint32_t *slot_near;     // per slot: its record, or WORLD_NONE
    size_t slot_near_cap;
    world_near *nears;
    size_t count, cap;       // records handed out (some free), capacity
    uint32_t free;           // free records, linked through `off`
    uint32_t epoch;          // moves on whenever a static proxy changes (never 0)
    bp_blocks blocks;        // the lists' entries
    float *scratch;          // the list being made: WORLD_NEAR_MAX entries
    size_t scratch_cap;
    size_t collected;        // entries offered to it (more than WORLD_NEAR_MAX: some not kept)
    int dim;
    size_t stride;           // floats per entry
    bp_heap *heap;
} world_nears;

/// No lists, for boxes of dim axes, allocating through `heap`.
void world_near_init(world_nears *nl, bp_heap *heap, int dim);
void world_near_free(world_nears *nl);
/// Room for `slots` slots' index and for collecting a list (the records grow as lists are made).
bp_status world_near_reserve(world_nears *nl, size_t slots);
/// Every list goes stale (a static proxy changed, or changes went unrecorded).
static inline void world_near_forget(world_nears *nl) {
    if (++nl->epoch == 0) nl->epoch = 1;
}
/// The slot's list goes (its proxy was removed).
void world_near_drop(world_nears *nl, uint32_t slot);
/// The fat box for slot's next list, its proxy's box gone from old_box (NULL: new) to box, in
/// cells of finest edge c0.
void world_near_fat(const world_nears *nl, uint32_t slot, const float *old_box, const float *box, double c0,
                    float *fat);

/// Starts collecting a list.
static inline void world_near_begin(world_nears *nl) { nl->collected = 0; }
/// Adds an entry of the cells (of a static proxy in `slot`, group g, unchanged since the last
/// update, meeting the fat box) to the list being collected.
static inline void world_near_collect(world_nears *nl, const float *e, uint32_t slot, uint32_t g) {
    if (nl->collected++ >= WORLD_NEAR_MAX) return;
    const int dim = nl->dim;
    float *o = nl->scratch + (nl->collected - 1) * nl->stride;
    world_copy_box(o, e, dim);
    world_entry_set_word(o, dim, 0, slot);
    world_entry_set_word(o, dim, 1, g);
}
/// Makes slot's list from the entries collected around `fat` for a proxy whose box is `box`
/// (or none, when too long or out of memory).
void world_near_store(world_nears *nl, uint32_t slot, const float *box, const float *fat);

/// The slot's list when it answers for a proxy going from old_box to box (either NULL when
/// absent), else NULL. DIM a constant where the caller can make it one (the loops unroll).
static inline const world_near *world_near_valid_dim(const world_nears *nl, uint32_t slot, const float *old_box,
                                                     const float *box, const int DIM) {
    const uint32_t r = nl->slot_near[slot];
    if (r == WORLD_NONE) return NULL;
    const world_near *n = &nl->nears[r];
    bool in = n->epoch == nl->epoch;
    for (int a = 0; a < DIM; ++a) {
        if (old_box) in &= (old_box[a] >= n->fat[a]) & (old_box[DIM + a] <= n->fat[DIM + a]);
        if (box) in &= (box[a] >= n->fat[a]) & (box[DIM + a] <= n->fat[DIM + a]);
    }
    return in ? n : NULL;
}
static inline const world_near *world_near_valid(const world_nears *nl, uint32_t slot, const float *old_box,
                                                 const float *box) {
    return nl->dim == 2 ? world_near_valid_dim(nl, slot, old_box, box, 2)
                        : world_near_valid_dim(nl, slot, old_box, box, 3);
}

/// The events of the proxy in `slot` with the static proxies of its list n (which answers for
/// it), its box gone from ob (group old_group) to nb (group now->group), either NULL when absent:
/// each pair that began or ended, as a key pushed to `out` (grown through the lists' heap).
/// Most entries meet neither box (the fat box is larger): one test against their union first;
/// the filter groups are looked up only for entries that meet a box. DIM as world_near_valid_dim.
static inline bp_status world_near_events_dim(const world_nears *nl, const world_near *n, const world_groups *groups,
                                              uint32_t slot, const float *ob, uint32_t old_group, const float *nb,
                                              const world_meta *now, world_evbuf *out, const int DIM) {
    const size_t stride = (size_t)(2 * DIM + 2);
    const float *e = bp_blocks_entry(&nl->blocks, n->off);
    float u[6];
    if (ob && nb) world_union_dim(ob, nb, u, DIM);
    else world_copy_box(u, ob ? ob : nb, DIM);
    const world_group *og = NULL, *ng = NULL;
    for (uint32_t k = 0; k < n->count; ++k, e += stride) {
        if (!world_overlap(u, e, DIM)) continue;
        const bool was = ob && world_overlap(ob, e, DIM);
        const bool is = nb && world_overlap(nb, e, DIM);
        if (!was && !is) continue;
        if (!og && !ng) {
            og = ob ? &groups->at[old_group] : NULL;
            ng = nb ? &groups->at[now->group] : NULL;
        }
        const world_group *g = &groups->at[world_entry_word(e, DIM, 1)];
        const bool before = was && world_groups_pair(og, g);
        const bool after = is && world_groups_pair(ng, g);
        if (before == after) continue;
        bp_status st = world_evbuf_push(out, nl->heap, after, world_key(slot, world_entry_word(e, DIM, 0)));
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

/// Prefetching for a batch: the slot's index, its record, its list's entries.
static inline void world_near_prefetch_slot(const world_nears *nl, uint32_t slot) {
    __builtin_prefetch(&nl->slot_near[slot]);
}
static inline void world_near_prefetch_record(const world_nears *nl, uint32_t slot) {
    const uint32_t q = nl->slot_near[slot];
    if (q != WORLD_NONE) __builtin_prefetch(&nl->nears[q]);
}
static inline void world_near_prefetch_entries(const world_nears *nl, const world_near *n) {
    if (n->count) __builtin_prefetch(bp_blocks_entry(&nl->blocks, n->off));
}

#endif
