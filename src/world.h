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
#ifndef BP_WORLD_H
#define BP_WORLD_H

#include "core.h"

#define WORLD_NONE 0xFFFFFFFFu
// Levels of the persistent cells: level L has cells of c0 * 2^L. Enough for a box of extent
// 2 * FLT_MAX over cells of 2^-149 (the smallest float), so every box has a level.
#define WORLD_LEVELS 300
// Cell coordinates are clamped to +-2^30: boxes beyond share the border cells (still tested
// exactly), and coordinates fit int32 with room for the +-1 of neighbour ranges.
#define WORLD_COORD_MAX ((int32_t)1 << 30)
// Cell runs live in blocks of 2, 4, 8 ... entries; a class's free blocks are reused.
#define WORLD_BLOCK_CLASSES 31

/// A filter group: every proxy with the same kind, category and mask shares one, so the cells
/// carry a 4-byte group instead of 17 bytes of filter, and a pair test reads two small entries.
typedef struct world_group {
    uint64_t category, mask;
    uint32_t kind;  // bp_proxy_kind
    uint32_t refs;  // proxies and touched records holding it; 0: free
} world_group;

/// A touched proxy's state at the last update.
typedef struct world_touch {
    uint32_t slot;
    uint32_t old_group;  // WORLD_NONE when the proxy did not exist at the last update
    float old_box[6];
} world_touch;

/// A dense proxy's bookkeeping, together so that a move touches one line of it.
typedef struct world_meta {
    uint32_t slot;
    uint32_t group;
    uint32_t cell;   // its cell in the table, or WORLD_NONE (not in the cells)
    uint32_t place;  // its place in the cell's run
} world_meta;

/// Event keys of an update: ends (0) and begins (1).
typedef struct world_evbuf {
    uint64_t *keys[2];
    size_t count[2], cap[2];
} world_evbuf;

/// Blocks of 2, 4, 8 ... entries (each `stride` floats, world_cells.stride) in one pool, each
/// class with a list of its free blocks (a free block's first word links the next): the runs of
/// the cells and the near lists live in these, reused without allocating once warm.
typedef struct world_blocks {
    float *pool;
    size_t cap, used;  // in entries
    uint32_t free_block[WORLD_BLOCK_CLASSES];
} world_blocks;

/// One persistent cell (empty cells are deleted): a run of entries in a block of the entry pool.
/// Entries are {min[dim], max[dim], dense index, group} as floats (the two words bit-cast).
typedef struct world_cell {
    int32_t c[3];
    uint16_t level;
    uint16_t used;
    uint32_t off, count, cap;
    uint32_t pad;
} world_cell;


/// The persistent cells: a hierarchy of uniform grids in one open-addressing hash table.
typedef struct world_cells {
    bool built;            // false: stale, rebuilt before use
    double c0;             // finest cell edge
    double span[3];        // extent of the proxies when the cells were built (a sample's)
    int dim, stride;       // stride: floats per entry (2 * dim + 2)
    world_cell *table;     // open addressing, linear probing, power-of-two capacity
    size_t table_cap, cells;
    world_blocks blocks;   // the cells' runs of entries
    uint32_t level_proxies[WORLD_LEVELS];
    uint32_t level_cells[WORLD_LEVELS];
    double level_ext[WORLD_LEVELS][3];  // largest extent per axis at each level (an upper bound)
    double level_inv[WORLD_LEVELS];     // 1 / (c0 * 2^L)
    uint16_t levels[WORLD_LEVELS];     // levels holding proxies, ascending
    int level_count;
    uint64_t checks;       // entries tested by queries (stats)
} world_cells;

/// A moving proxy's near list (world_near.c): the static proxies whose boxes met `fat` when it
/// was made, as entries {box, slot, group} in a block of the world's near_blocks. It answers for
/// the static world while `epoch` is the world's near epoch and the proxy's box is inside `fat`.
#define WORLD_NEAR_NOBLOCK 0xFFFFu
typedef struct world_near {
    float fat[6];
    uint32_t epoch;  // the world's near_epoch when made; 0: none (never the epoch)
    uint32_t off;    // its block (when cls != WORLD_NEAR_NOBLOCK); a free record: the next free one
    uint16_t count;
    uint16_t cls;    // its block's class
    float scale;     // of the margin of the slot's next fat box (world_near.c)
} world_near;

/// The pair set as of the last update: a sorted array of keys (slot_a << 32 | slot_b, a < b)
/// and a log of the changes since it was last rewritten, folded in when the log grows past a
/// share of the set (so an update costs time in proportion to its events, amortized).
typedef struct world_pairset {
    uint64_t *keys;
    size_t count, cap;
    uint64_t *log;         // changed keys, in update order
    uint32_t *log_begin;   // 1: began, 0: ended
    size_t log_count, log_cap, log_begin_cap;
    size_t total;          // pairs in the set, log included
    uint64_t *out;         // the folded set is written here, then swapped with keys
    uint64_t *tmp;         // sort scratch
    uint32_t *tmp_vals;
    size_t out_cap, tmp_cap, tmp_vals_cap;
} world_pairset;

struct bp_world {
    bp_world_def def;
    bp_allocator alloc;
    int dim;
    uint32_t salt;           // first generation of every slot: foreign ids are rejected
    bp_context *heap;        // allocation account for the world's arrays; also the rebuild context
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

    // Filter groups.
    world_group *groups;
    size_t group_count, group_cap;  // ids handed out (some may be free)
    uint32_t *group_free;
    size_t group_free_count, group_free_cap;
    uint32_t *group_hash;    // ids, open addressing; WORLD_NONE empty
    size_t group_hash_cap;

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

    // Near lists of moving proxies (world_near.c).
    uint32_t *slot_near;     // per slot: its record, or WORLD_NONE
    size_t slot_near_cap;
    world_near *nears;
    size_t near_count, near_cap;  // records handed out (some free), capacity
    uint32_t near_free;      // free records, linked through `off`
    uint32_t near_epoch;     // moves on whenever a static proxy changes (never 0)
    world_blocks near_blocks;
    float *near_scratch;     // a list being collected (bp_world_near_max() entries)
    size_t near_scratch_cap;

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
    uint32_t *hit_slots;
    size_t hit_cap, hit_users_cap, hit_slots_cap;
    uint32_t *hit_tmp;
    size_t hit_tmp_cap;
    size_t stale_queries;     // queries answered by a scan since the cells went stale

    size_t bad_index;        // bp_world_bad_index
    bp_world_stats stats;
};

/// Whether two filter groups pair: categories against masks both ways, never static with static.
static inline bool world_groups_pair(const world_group *g, const world_group *h) {
    return (g->category & h->mask) != 0 && (h->category & g->mask) != 0 &&
           !(g->kind == BP_PROXY_STATIC && h->kind == BP_PROXY_STATIC);
}

/// Copies a box of dim axes (min[dim], max[dim]): a loop the compiler unrolls, not a call.
static inline void world_copy_box(float *dst, const float *src, int dim) {
    dst[0] = src[0];
    dst[1] = src[1];
    dst[2] = src[2];
    dst[3] = src[3];
    if (dim == 3) {
        dst[4] = src[4];
        dst[5] = src[5];
    }
}

/// The closed overlap rule on dim axes of two boxes stored min[dim], max[dim].
static inline bool world_overlap(const float *a, const float *b, int dim) {
    for (int k = 0; k < dim; ++k)
        if (!(a[k] <= b[dim + k] && b[k] <= a[dim + k])) return false;
    return true;
}

static inline bool world_bit(const uint64_t *bits, size_t d) { return (bits[d >> 6] >> (d & 63)) & 1u; }
static inline void world_set_bit(uint64_t *bits, size_t d, bool on) {
    const uint64_t bit = (uint64_t)1 << (d & 63);
    bits[d >> 6] = on ? bits[d >> 6] | bit : bits[d >> 6] & ~bit;
}
static inline bool world_touched(const bp_world *w, size_t d) { return world_bit(w->tbits, d); }
static inline void world_set_touched(bp_world *w, size_t d, bool on) { world_set_bit(w->tbits, d, on); }
static inline bool world_is_dirty(const bp_world *w, size_t d) { return world_bit(w->dbits, d); }
static inline void world_set_dirty(bp_world *w, size_t d, bool on) { world_set_bit(w->dbits, d, on); }

static inline uint32_t world_slot_state(const bp_world *w, size_t s) { return (uint32_t)w->slot_word[s]; }
static inline uint32_t world_slot_gen(const bp_world *w, size_t s) { return (uint32_t)(w->slot_word[s] >> 32); }
static inline void world_set_slot_state(bp_world *w, size_t s, uint32_t state) {
    w->slot_word[s] = (w->slot_word[s] & ~(uint64_t)UINT32_MAX) | state;
}

static inline uint32_t world_entry_word(const float *e, int dim, int which) {
    uint32_t u;
    memcpy(&u, e + 2 * dim + which, sizeof u);
    return u;
}
static inline void world_entry_set_word(float *e, int dim, int which, uint32_t u) {
    memcpy(e + 2 * dim + which, &u, sizeof u);
}

// world_cells.c
void bp_world_cells_init(world_cells *c, int dim);
void bp_world_cells_free(bp_world *w);
/// Drops every cell (the cells are rebuilt before their next use).
void bp_world_cells_invalidate(bp_world *w);
/// Builds the cells from every live proxy (choosing the cell size when automatic).
bp_status bp_world_cells_build(bp_world *w);
/// Brings proxy d's entry up to date with its box and group (inserting it when it has none).
bp_status bp_world_cells_place(bp_world *w, uint32_t d);
/// Reserves what placing `extra` more entries can need, so that a sync cannot fail halfway.
bp_status bp_world_cells_reserve(bp_world *w, size_t extra);
/// Prefetching for a batch of probes: the table slots the cells around [lo, hi] hash to (stage
/// 0), or, once those are in, the entries of the cells found there (stage 1).
void bp_world_cells_prefetch(const bp_world *w, const float *lo, const float *hi, int stage);
/// Removes proxy d's entry (before d leaves the dense arrays).
void bp_world_cells_remove(bp_world *w, uint32_t d);
/// Proxy `from` moved to dense index `to`: its entry and locator follow.
void bp_world_cells_renumber(bp_world *w, uint32_t from, uint32_t to);
/// Calls fn for every cell whose entries may overlap the box [lo, hi] (`count` entries of
/// `stride` floats from `entries`: a superset, the caller tests each). Returns the first status
/// fn returns that is not BP_OK.
typedef bp_status (*world_visit_fn)(void *user, const float *entries, uint32_t count);
bp_status bp_world_cells_visit(bp_world *w, const float *lo, const float *hi, world_visit_fn fn, void *user);
void bp_world_cells_draw(const bp_world *w, const bp_debug_draw *draw);
bp_status bp_world_cells_validate(const bp_world *w);
/// Whether the cells are built and every touched proxy's entry is up to date.
bool bp_world_cells_synced(const bp_world *w);

// world_cells.c: the block pool
void bp_world_blocks_init(world_blocks *b);
void bp_world_blocks_free(bp_world *w, world_blocks *b);
bp_status bp_world_block_get(bp_world *w, world_blocks *b, unsigned cls, uint32_t *off);
void bp_world_block_put(const bp_world *w, world_blocks *b, uint32_t off, unsigned cls);
bp_status bp_world_blocks_reserve(bp_world *w, world_blocks *b, size_t cap);

// world_near.c
void bp_world_near_init(bp_world *w);
void bp_world_near_free(bp_world *w);
/// Room for every slot's index and for collecting a list (the records grow as lists are made).
bp_status bp_world_near_reserve(bp_world *w);
void bp_world_near_drop(bp_world *w, uint32_t slot);
/// The fat box for slot's next list, its proxy's box gone from old_box (NULL: new) to box.
void bp_world_near_fat(const bp_world *w, uint32_t slot, const float *old_box, const float *box, float *fat);
/// Makes slot's list from `count` collected entries (or none, when too long or out of memory).
void bp_world_near_store(bp_world *w, uint32_t slot, const float *box, const float *fat, float *entries,
                         size_t count);
/// The most entries a list holds.
size_t bp_world_near_max(void);
/// The slot's list when it answers for a proxy going from old_box to box (either NULL when
/// absent), else NULL. DIM a constant where the caller can make it one (the loops unroll).
static inline const world_near *world_near_valid_dim(const bp_world *w, uint32_t slot, const float *old_box,
                                                     const float *box, const int DIM) {
    const uint32_t r = w->slot_near[slot];
    if (r == WORLD_NONE) return NULL;
    const world_near *n = &w->nears[r];
    bool in = n->epoch == w->near_epoch;
    for (int a = 0; a < DIM; ++a) {
        if (old_box) in &= (old_box[a] >= n->fat[a]) & (old_box[DIM + a] <= n->fat[DIM + a]);
        if (box) in &= (box[a] >= n->fat[a]) & (box[DIM + a] <= n->fat[DIM + a]);
    }
    return in ? n : NULL;
}
static inline const world_near *world_near_valid(const bp_world *w, uint32_t slot, const float *old_box,
                                                 const float *box) {
    return w->dim == 2 ? world_near_valid_dim(w, slot, old_box, box, 2) : world_near_valid_dim(w, slot, old_box, box, 3);
}

// world_pairs.c
void bp_world_pairs_free(bp_world *w);
/// Folds the log into the sorted array.
bp_status bp_world_pairs_fold(bp_world *w);
/// Whether the log has grown enough to be folded.
bool bp_world_pairs_fold_due(const bp_world *w);
/// Reserves the log for `extra` more changes (and what folding can need).
bp_status bp_world_pairs_reserve_log(bp_world *w, size_t extra);
/// Appends an update's changes: `ends` and `begins` sorted keys.
void bp_world_pairs_log(bp_world *w, const uint64_t *ends, size_t ne, const uint64_t *begins, size_t nb);
/// Replaces the set with `*keys` (sorted, `count` of them), writing the differences from the
/// old set to w->ev.keys (ends 0, begins 1, reserved by the caller to hold them). The old set
/// must be folded. The arrays are swapped: *keys/*cap receive the old set's buffer.
void bp_world_pairs_replace(bp_world *w, uint64_t **keys, size_t *cap, size_t count);

#endif
