// The persistent world's private layout (docs/world.md), shared by world.c (entry points,
// proxies, updates, queries), world_cells.c (the persistent cells) and world_pairs.c (the pair
// set kept between updates). Never installed.
//
// Proxies live in dense arrays (index 0..n, swap-removed), named from outside by slots (the id's
// high half) that map to dense indices. What changed since the last update is a list of
// "touched" records, each with the proxy's state at the last update (box, filter group, user
// value): an incremental update compares, for each touched proxy, its old and new state against
// the untouched proxies found in the persistent cells, and the touched proxies among themselves
// with one call of the stateless context. A rebuild update finds every pair with the context and
// diffs the pair set instead.
// The persistent world's private layout (docs/world.md), shared by world.c (entry points, ids,
// proxies, the record of what changed, queries) and world_update.c (the update engine). Its
// parts know nothing of it: world_cells.c (the persistent cells), world_near.c (the near
// lists), world_pairs.c (the pair set kept between updates), world_groups.c (the filter
// groups). Never installed.
//
// Proxies live in dense arrays (index 0..n, swap-removed), named from outside by slots (the id's
// high half) that map to dense indices. What changed since the last update is a list of
// "touched" records, each with the proxy's state at the last update (box, filter group, user
// value): an incremental update compares, for each touched proxy, its old and new state against
// the untouched proxies found in the persistent cells, and the touched proxies among themselves
// with one call of the stateless context. A rebuild update finds every pair with the context and
// diffs the pair set instead.
#ifndef BP_WORLD_H
#define BP_WORLD_H

#include "core.h"
#include "world_cells.h"
#include "world_groups.h"
#include "world_near.h"
#include "world_pairs.h"

// Slot states: a live proxy's dense index (< WORLD_FREED), WORLD_NONE for a free slot, or
// WORLD_FREED | k for a proxy removed since the last update (k: its place in `freed`): its id is
// stale already, but its pairs end at the next update and the slot is reused only after it.
#define WORLD_FREED 0x80000000u

// AUTO: the share of the proxies that may change before an update rebuilds instead of patching.
// Measured on `static`-like worlds of 100,000 (2D, one proxy in K moving, the rest static):
// patching 0.75 / 2.4 / 5.4 / 6.7 ms against rebuilding 6.3 / 6.4 / 4.2 / 4.1 ms for K = 50 / 20 /
// 10 / 7 (a loaded machine: the ratios hold, the times are high): the crossover is near one in 12.
#define WORLD_PATCH_SHARE 12
#define WORLD_PATCH_MIN 64
// Batches of moves and updates fetch the next proxies' lines ahead in worlds too large for the
// cache (measured: 1,000,000 proxies, 1% moving: 5.7 -> 4.5 ms a frame; at 100,000, where the
// cells stay in the last-level cache, the extra instructions cost more than they save).
#ifndef WORLD_PREFETCH_MIN
#define WORLD_PREFETCH_MIN ((size_t)1 << 18)
#endif

/// A touched proxy's state at the last update.
typedef struct world_touch {
    uint32_t slot;
    uint32_t old_group;  // WORLD_NONE when the proxy did not exist at the last update
    float old_box[6];
} world_touch;

struct bp_world {
    bp_world_def def;
    bp_heap heap;            // the world's allocations through the user's hooks (the world included)
    int dim;
    uint32_t salt;           // first generation of every slot: foreign ids are rejected
    bp_context *all;         // every pair, for a rebuild; its workers run the parallel probes
    bp_context *small;       // pairs among the touched proxies

    // Slots: the ids' high halves. Each slot is one word: generation << 32 | state, the state a
    // dense index, WORLD_NONE when free, WORLD_FREED | k when removed (one load checks an id).
    uint64_t *slot_word;
    size_t slot_cap, slots;  // slots: ever used
    uint32_t *free_slots;    // reusable now
    size_t free_count, free_cap;
    uint32_t *freed;         // removed since the last update: reusable after it
    uint64_t *freed_user;    // their last user values (for end events)
    size_t freed_count, freed_cap, freed_user_cap;

    // Dense proxies.
    float *boxes;            // 2 * dim floats each (contiguous: a rebuild hands them to a context)
    world_meta *meta;        // slot, group and place in the cells: one line for a move
    uint64_t *user;
    uint64_t *tbits;         // bit d: dense proxy d is touched (a bitmap, so that the cells'
                             // probes test it in cache)
    uint64_t *dbits;         // bit d: its cell entry is behind its box or group ("dirty")
    size_t n, dense_cap;
    bool scattered;          // some proxy's dense index is not its slot

    world_groups groups;     // the proxies' filter groups

    // What changed since the last update.
    world_touch *touched;
    size_t touched_count, touched_cap;
    bool overflow;           // too many changes to record: the next update rebuilds
    bool static_touched;     // a static proxy is among them (or was added, or made static)
    size_t touched_moving;   // touched proxies alive and moving now
    size_t moved_since;      // moves (not adds) since the last update

    world_cells cells;
    bool cells_lag;          // some untouched proxy's entry is behind (dirty): caught up before
                             // the cells are read for anything but the static proxies
    size_t moving;           // live proxies of kind moving
    world_pairset pairs;

    world_nears near;        // near lists of moving proxies

    // Scratch of an update, kept between frames.
    world_evbuf ev;          // the update's event keys
    world_evbuf *wev;        // with workers: each worker's, merged into `ev`
    size_t wev_count;
    uint64_t *ev_tmp;
    size_t ev_tmp_cap;
    bp_world_pair *ev_out[2];
    size_t ev_out_cap[2];
    float *scratch_boxes;    // union boxes of the touched proxies
    uint32_t *scratch_index; // their touched records
    size_t scratch_cap, scratch_index_cap;
    uint64_t *rb_keys;       // a rebuild's pairs
    size_t rb_cap;
    uint32_t *move_dense;    // a batch of moves: the dense index of each id
    size_t move_dense_cap;
    bp_world_pair *pair_out;  // bp_world_get_pairs
    size_t pair_out_cap;
    bp_proxy_id *hit_ids;     // queries
    uint64_t *hit_users;
    bp_index_buf hits;      // a query's matches: dense indices, then slots
    size_t hit_cap, hit_users_cap;
    uint32_t *hit_tmp;
    size_t hit_tmp_cap;
    size_t stale_queries;     // queries answered by a scan since the cells went stale

    size_t bad_index;        // bp_world_bad_index
    bp_world_stats stats;
};

static inline bool world_touched(const bp_world *w, size_t d) { return world_bit(w->tbits, d); }
static inline void world_set_touched(bp_world *w, size_t d, bool on) { world_set_bit(w->tbits, d, on); }
static inline bool world_is_dirty(const bp_world *w, size_t d) { return world_bit(w->dbits, d); }
static inline void world_set_dirty(bp_world *w, size_t d, bool on) { world_set_bit(w->dbits, d, on); }

static inline uint32_t world_slot_state(const bp_world *w, size_t s) { return (uint32_t)w->slot_word[s]; }
static inline uint32_t world_slot_gen(const bp_world *w, size_t s) { return (uint32_t)(w->slot_word[s] >> 32); }
static inline void world_set_slot_state(bp_world *w, size_t s, uint32_t state) {
    w->slot_word[s] = (w->slot_word[s] & ~(uint64_t)UINT32_MAX) | state;
}

static inline bp_proxy_id world_id(const bp_world *w, uint32_t slot) {
    const bp_proxy_id id = {((uint64_t)slot << 32) | world_slot_gen(w, slot)};
    return id;
}

// The user value of the proxy in `slot`: live, or removed since the last update.
static inline uint64_t world_slot_user(const bp_world *w, uint32_t slot) {
    const uint32_t d = world_slot_state(w, slot);
    return d < WORLD_FREED ? w->user[d] : w->freed_user[d & ~WORLD_FREED];
}

static inline float *world_box(const bp_world *w, size_t d) { return w->boxes + d * (size_t)(2 * w->dim); }

static inline bool world_is_static(const bp_world *w, uint32_t d) {
    return w->groups.at[w->meta[d].group].kind == BP_PROXY_STATIC;
}

static inline size_t world_patch_limit(const bp_world *w) {
    return (w->n + w->freed_count) / WORLD_PATCH_SHARE + WORLD_PATCH_MIN;
}

// Drops the cells (a cache: rebuilt before their next use): no entry is behind then.
static inline void world_drop_cells(bp_world *w) {
    w->cells_lag = false;
    if (!w->cells.built) return;
    world_cells_invalidate(&w->cells, w->meta, w->n);
    for (size_t i = 0; i < (w->n + 63) / 64; ++i) w->dbits[i] = 0;  // the build places everything
}

// world_update.c: the update engine. The world calls it; it calls nothing of world.c.
/// Stops recording: the next update rebuilds, and the cells are stale until then.
void world_forget_touched(bp_world *w);
/// Brings the cells up to date: built when stale, else every touched proxy placed anew.
bp_status world_sync(bp_world *w);
/// An incremental update: the events of the touched proxies, from the cells and near lists.
bp_status world_update_patch(bp_world *w, bp_world_events *events);
/// A rebuild: every pair found anew and diffed against the pair set.
bp_status world_update_rebuild(bp_world *w, bp_world_events *events);

#endif
