// The persistent world (docs/world.md): entry points, argument checks, proxies and their ids,
// filter groups, the record of what changed, updates (incremental or rebuild), queries.
//
// Every call that changes the world reserves all the memory it can need before it changes
// anything, so that BP_ERR_NOMEM leaves the world as it was. The persistent cells are a cache
// of the proxies' boxes: when they cannot be brought up to date they are dropped and rebuilt
// before their next use, which changes no answer.
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "method.h"
#include "par.h"
#include "def.h"
#include "radix_sort.h"
#include "world.h"

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
// Queries answered by scanning every proxy while the cells are stale, before they are rebuilt.
#define WORLD_STALE_SCANS 8
// Batches of moves and updates fetch the next proxies' lines ahead in worlds too large for the
// cache (measured: 1,000,000 proxies, 1% moving: 5.7 -> 4.5 ms a frame; at 100,000, where the
// cells stay in the last-level cache, the extra instructions cost more than they save).
#ifndef WORLD_PREFETCH_MIN
#define WORLD_PREFETCH_MIN ((size_t)1 << 18)
#endif
// The rebuild context's bp_context_def.parallel_min (0: automatic).
#ifndef WORLD_PARALLEL_MIN
#define WORLD_PARALLEL_MIN 0
#endif

bp_proxy_def bp_default_proxy_def(void) {
    bp_proxy_def d;
    memset(&d, 0, sizeof d);
    d.kind = BP_PROXY_MOVING;
    d.category = 1;
    d.mask = UINT64_MAX;
    d.internal_value = BP_DEF_MADE;
    return d;
}

bp_world_def bp_default_world_def(void) {
    bp_world_def d;
    memset(&d, 0, sizeof d);
    d.dimension = 2;
    d.mode = BP_WORLD_MODE_AUTO;
    d.method = BP_METHOD_AUTO;
    d.internal_value = BP_DEF_MADE;
    return d;
}

// ---------------------------------------------------------------------------------------------
// Create / destroy

static atomic_uint_fast32_t world_salts;

static void world_release_all(bp_world *w) {
    bp_context *h = w->heap;
    bp_world_cells_free(w);
    bp_world_near_free(w);
    BP_RELEASE(h, w->near_scratch, w->near_scratch_cap);
    bp_world_pairs_free(w);
    BP_RELEASE(h, w->slot_word, w->slot_cap);
    BP_RELEASE(h, w->free_slots, w->free_cap);
    BP_RELEASE(h, w->freed, w->freed_cap);
    BP_RELEASE(h, w->freed_user, w->freed_user_cap);
    const size_t cap = w->dense_cap, dim = (size_t)w->dim;
    bp_free(h, w->boxes, cap * 2 * dim * sizeof(float));
    bp_free(h, w->meta, cap * sizeof(world_meta));
    bp_free(h, w->user, cap * sizeof(uint64_t));
    bp_free(h, w->tbits, cap / 8);
    bp_free(h, w->dbits, cap / 8);
    BP_RELEASE(h, w->groups, w->group_cap);
    BP_RELEASE(h, w->group_free, w->group_free_cap);
    BP_RELEASE(h, w->group_hash, w->group_hash_cap);
    BP_RELEASE(h, w->touched, w->touched_cap);
    for (size_t q = 0; q < w->wev_count; ++q)
        for (int k = 0; k < 2; ++k) BP_RELEASE(h, w->wev[q].keys[k], w->wev[q].cap[k]);
    bp_free(h, w->wev, w->wev_count * sizeof *w->wev);
    for (int k = 0; k < 2; ++k) {
        BP_RELEASE(h, w->ev.keys[k], w->ev.cap[k]);
        BP_RELEASE(h, w->ev_out[k], w->ev_out_cap[k]);
    }
    BP_RELEASE(h, w->ev_tmp, w->ev_tmp_cap);
    BP_RELEASE(h, w->scratch_boxes, w->scratch_cap);
    BP_RELEASE(h, w->scratch_index, w->scratch_index_cap);
    BP_RELEASE(h, w->rb_keys, w->rb_cap);
    BP_RELEASE(h, w->move_dense, w->move_dense_cap);
    BP_RELEASE(h, w->pair_out, w->pair_out_cap);
    BP_RELEASE(h, w->hit_ids, w->hit_cap);
    BP_RELEASE(h, w->hit_users, w->hit_users_cap);
    BP_RELEASE(h, w->hit_slots, w->hit_slots_cap);
    BP_RELEASE(h, w->hit_tmp, w->hit_tmp_cap);
}

bp_status bp_world_create(const bp_world_def *def, bp_world **out) {
    if (out) *out = NULL;
    if (!def || !out) return BP_ERR_NULL;
    if (!bp_def_made(def->internal_value)) return BP_ERR_DEF_NOT_INITIALISED;
    bp_world_def d = *def;
    if (d.dimension != 2 && d.dimension != 3) return BP_ERR_INVALID_ARG;
    if (d.mode != BP_WORLD_MODE_AUTO && d.mode != BP_WORLD_MODE_INCREMENTAL && d.mode != BP_WORLD_MODE_REBUILD)
        return BP_ERR_INVALID_ARG;
    if ((int)d.method < 0 || d.method >= BP_METHOD_COUNT) return BP_ERR_INVALID_ARG;
    if (!isfinite(d.cell_size)) return BP_ERR_NONFINITE;
    if (!(d.cell_size >= 0.0f)) return BP_ERR_INVALID_ARG;
    bp_allocator al = d.allocator;
    if (!al.alloc != !al.free) return BP_ERR_INVALID_ARG;
    if (d.method != BP_METHOD_AUTO && !bp_method_available(d.method)) return BP_ERR_UNSUPPORTED;

    // The contexts are made with the world's hooks (the defaults when none are given) and its
    // workers: the rebuild context's threads also run the world's own parallel passes (its
    // probes); the context checks the worker count and the hooks.
    bp_context_def cd = bp_default_context_def();
    cd.dimension = d.dimension;
    cd.method = d.method;
    cd.allocator = al;
    cd.workers = d.workers;
    cd.parallel_min = WORLD_PARALLEL_MIN;
    cd.enqueue_task = d.enqueue_task;
    cd.finish_task = d.finish_task;
    cd.task_user = d.task_user;
    bp_context *heap = NULL, *small = NULL;
    bp_status st = bp_context_create(&cd, &heap);
    if (st != BP_OK) return st;
    // The changed proxies are few and spread over the whole world (the grid would size its cells
    // for the world): AUTO takes sort-and-sweep for them. One worker: their calls are small.
    if (d.method == BP_METHOD_AUTO) cd.method = BP_METHOD_SWEEP;
    cd.workers = 1;
    cd.enqueue_task = NULL;
    cd.finish_task = NULL;
    st = bp_context_create(&cd, &small);
    if (st != BP_OK) {
        bp_context_destroy(heap);
        return st;
    }
    bp_context_get_def(heap, &cd);
    al = cd.allocator;  // resolved: never NULL from here
    bp_world *w = al.alloc(sizeof *w, 64, al.user);
    if (!w) {
        bp_context_destroy(small);
        bp_context_destroy(heap);
        return BP_ERR_NOMEM;
    }
    memset(w, 0, sizeof *w);
    w->def = d;
    w->def.allocator = al;
    w->alloc = al;
    w->dim = d.dimension;
    w->heap = heap;
    w->small = small;
    // Generations start at a value of this world's own, so another world's ids rarely match.
    uint32_t salt = (uint32_t)(atomic_fetch_add(&world_salts, 1) + 1) * 0x9E3779B1u;
    salt ^= salt >> 15;
    w->salt = salt ? salt : 1;
    w->bad_index = SIZE_MAX;
    bp_world_cells_init(&w->cells, w->dim);
    bp_world_near_init(w);
    const uint32_t workers = bp_pool_workers(bp_par_pool(heap));
    if (workers > 1) {  // each worker's event buffer for the parallel probes
        w->wev = bp_alloc(heap, workers * sizeof *w->wev);
        if (!w->wev) {
            bp_world_destroy(w);
            return BP_ERR_NOMEM;
        }
        memset(w->wev, 0, workers * sizeof *w->wev);
        w->wev_count = workers;
    }
    *out = w;
    return BP_OK;
}

void bp_world_destroy(bp_world *w) {
    if (!w) return;
    world_release_all(w);
    bp_context_destroy(w->small);
    bp_context_destroy(w->heap);
    bp_allocator al = w->alloc;
    al.free(w, sizeof *w, al.user);
}

// ---------------------------------------------------------------------------------------------
// Ids, boxes and growth

static inline bp_proxy_id world_id(const bp_world *w, uint32_t slot) {
    const bp_proxy_id id = {((uint64_t)slot << 32) | world_slot_gen(w, slot)};
    return id;
}

// The dense index of a live proxy's id, or WORLD_NONE when the id is stale, foreign or null.
static inline uint32_t world_lookup(const bp_world *w, bp_proxy_id id) {
    const uint64_t slot = id.v >> 32;
    const uint32_t gen = (uint32_t)id.v;
    if (slot >= w->slots || gen == 0) return WORLD_NONE;
    const uint64_t word = w->slot_word[slot];
    if ((uint32_t)(word >> 32) != gen) return WORLD_NONE;
    const uint32_t d = (uint32_t)word;
    return d < WORLD_FREED ? d : WORLD_NONE;
}

// Why an id names no live proxy (world_lookup gave WORLD_NONE): null, or stale.
static inline bp_status world_id_error(bp_proxy_id id) { return id.v == 0 ? BP_ERR_NULL_PROXY : BP_ERR_STALE; }

// One chain of comparisons passes every valid box (NaN fails them all); the error is named only
// for a box that fails it. DIM is a constant in each use (world_check_box), so the loop unrolls.
static inline bool world_box_ok(const float *b, const int DIM) {
    bool ok = true;
    for (int a = 0; a < DIM; ++a) ok &= (b[a] >= -3.40282347e38f) & (b[DIM + a] <= 3.40282347e38f) & (b[a] <= b[DIM + a]);
    return ok;
}

static inline bool world_box2_ok(const float *b) {
#if defined(__SSE2__)
    // One register: every value finite (NaN fails both compares), both mins below their maxes.
    const __m128 v = _mm_loadu_ps(b), big = _mm_set1_ps(3.40282347e38f);
    const __m128 finite = _mm_and_ps(_mm_cmple_ps(v, big), _mm_cmpge_ps(v, _mm_xor_ps(big, _mm_set1_ps(-0.0f))));
    const int ordered = _mm_movemask_ps(_mm_cmple_ps(v, _mm_movehl_ps(v, v)));
    return (_mm_movemask_ps(finite) == 15) & ((ordered & 3) == 3);
#else
    return world_box_ok(b, 2);
#endif
}

static bp_status world_check_box(const float *b, int dim) {
    if (BP_LIKELY(dim == 2 ? world_box2_ok(b) : world_box_ok(b, 3))) return BP_OK;
    for (int a = 0; a < 2 * dim; ++a)
        if (!isfinite(b[a])) return BP_ERR_NONFINITE;
    return BP_ERR_INVERTED_BOX;
}

static inline float *world_box(const bp_world *w, size_t d) { return w->boxes + d * (size_t)(2 * w->dim); }

static inline void world_set_box(bp_world *w, size_t d, const float *b) {
    const int dim = w->dim;
    float *o = world_box(w, d);
#if defined(__SSE2__)
    _mm_storeu_ps(o, _mm_add_ps(_mm_loadu_ps(b), _mm_setzero_ps()));  // -0.0 becomes +0.0
#else
    for (int a = 0; a < 4; ++a) o[a] = b[a] + 0.0f;
#endif
    if (dim == 3) {
        o[4] = b[4] + 0.0f;
        o[5] = b[5] + 0.0f;
    }
}

// Grows every dense array to hold `need` proxies, all or nothing.
static bp_status world_reserve_dense(bp_world *w, size_t need) {
    if (need <= w->dense_cap) return BP_OK;
    size_t cap = w->dense_cap * 2;
    if (cap < need) cap = need;
    if (cap < 64) cap = 64;
    const size_t dim = (size_t)w->dim;
    cap = (cap + 63) & ~(size_t)63;  // whole words of the bitmaps
    // Bytes per proxy of each array (0: a bitmap, one 64-bit word per 64 proxies).
    enum { ARRAYS = 5 };
    const size_t sizes[ARRAYS] = {2 * dim * sizeof(float), sizeof(world_meta), sizeof(uint64_t), 0, 0};
    void **arrays[ARRAYS] = {(void **)&w->boxes, (void **)&w->meta, (void **)&w->user, (void **)&w->tbits,
                             (void **)&w->dbits};
    void *fresh[ARRAYS] = {0};
    for (int k = 0; k < ARRAYS; ++k) {
        const size_t bytes = sizes[k] ? cap * sizes[k] : cap / 8;
        if ((sizes[k] && cap > SIZE_MAX / sizes[k]) || !(fresh[k] = bp_alloc(w->heap, bytes))) {
            for (int j = 0; j < k; ++j) bp_free(w->heap, fresh[j], sizes[j] ? cap * sizes[j] : cap / 8);
            return BP_ERR_NOMEM;
        }
    }
    for (int k = 0; k < ARRAYS; ++k) {
        const size_t used = sizes[k] ? w->n * sizes[k] : w->dense_cap / 8;
        if (used) memcpy(fresh[k], *arrays[k], used);
        if (!sizes[k]) memset((char *)fresh[k] + used, 0, cap / 8 - used);
        bp_free(w->heap, *arrays[k], sizes[k] ? w->dense_cap * sizes[k] : w->dense_cap / 8);
        *arrays[k] = fresh[k];
    }
    w->dense_cap = cap;
    return BP_OK;
}

// Room for `extra` new slots beyond the free list.
static bp_status world_reserve_slots(bp_world *w, size_t extra) {
    if (extra <= w->free_count) return BP_OK;
    const size_t need = w->slots + (extra - w->free_count);
    if (need > BP_MAX_BOXES) return BP_ERR_TOO_MANY;
    BP_RESERVE(w->heap, w->slot_word, w->slot_cap, need);
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Filter groups

static inline uint64_t world_group_hash(uint64_t category, uint64_t mask, uint32_t kind) {
    uint64_t h = category * 0x9E3779B97F4A7C15u ^ (mask + 0x632BE59BD9B4E019u) * 0xC2B2AE3D27D4EB4Fu ^ kind;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93u;
    return h ^ (h >> 32);
}

// Room for `extra` new groups (ids and hash table at load <= 1/2).
static bp_status world_reserve_groups(bp_world *w, size_t extra) {
    const size_t live = w->group_count - w->group_free_count;
    BP_RESERVE(w->heap, w->groups, w->group_cap, w->group_count + extra);
    BP_RESERVE(w->heap, w->group_free, w->group_free_cap, w->group_count + extra);
    if (2 * (live + extra) <= w->group_hash_cap) return BP_OK;
    size_t cap = 64;
    while (cap < 4 * (live + extra)) cap *= 2;
    uint32_t *h = bp_alloc(w->heap, cap * sizeof *h);
    if (!h) return BP_ERR_NOMEM;
    for (size_t i = 0; i < cap; ++i) h[i] = WORLD_NONE;
    for (uint32_t g = 0; g < w->group_count; ++g) {
        if (!w->groups[g].refs) continue;
        const world_group *e = &w->groups[g];
        size_t i = (size_t)world_group_hash(e->category, e->mask, e->kind) & (cap - 1);
        while (h[i] != WORLD_NONE) i = (i + 1) & (cap - 1);
        h[i] = g;
    }
    BP_RELEASE(w->heap, w->group_hash, w->group_hash_cap);
    w->group_hash = h;
    w->group_hash_cap = cap;
    return BP_OK;
}

// The group of (kind, category, mask), made if new, with one more reference. Room reserved.
static uint32_t world_group_ref(bp_world *w, uint32_t kind, uint64_t category, uint64_t mask) {
    const size_t m = w->group_hash_cap - 1;
    size_t i = (size_t)world_group_hash(category, mask, kind) & m;
    for (; w->group_hash[i] != WORLD_NONE; i = (i + 1) & m) {
        world_group *g = &w->groups[w->group_hash[i]];
        if (g->category == category && g->mask == mask && g->kind == kind) {
            g->refs++;
            return w->group_hash[i];
        }
    }
    const uint32_t id = w->group_free_count ? w->group_free[--w->group_free_count] : (uint32_t)w->group_count++;
    world_group *g = &w->groups[id];
    g->category = category;
    g->mask = mask;
    g->kind = kind;
    g->refs = 1;
    w->group_hash[i] = id;
    return id;
}

// Drops a reference; a group nobody holds leaves the table (backward-shift deletion).
static void world_group_unref(bp_world *w, uint32_t id) {
    world_group *g = &w->groups[id];
    if (--g->refs) return;
    const size_t m = w->group_hash_cap - 1;
    size_t i = (size_t)world_group_hash(g->category, g->mask, g->kind) & m;
    while (w->group_hash[i] != id) i = (i + 1) & m;
    for (size_t j = (i + 1) & m; w->group_hash[j] != WORLD_NONE; j = (j + 1) & m) {
        const world_group *e = &w->groups[w->group_hash[j]];
        const size_t home = (size_t)world_group_hash(e->category, e->mask, e->kind) & m;
        // Move entry j into the hole i when its home is not in (i, j] (cyclically).
        if (((j - home) & m) >= ((j - i) & m)) {
            w->group_hash[i] = w->group_hash[j];
            i = j;
        }
    }
    w->group_hash[i] = WORLD_NONE;
    w->group_free[w->group_free_count++] = id;
}

// ---------------------------------------------------------------------------------------------
// What changed

static size_t world_patch_limit(const bp_world *w) {
    return (w->n + w->freed_count) / WORLD_PATCH_SHARE + WORLD_PATCH_MIN;
}

// Every near list goes stale (a static proxy changed, or changes went unrecorded).
static void world_near_forget(bp_world *w) {
    if (++w->near_epoch == 0) w->near_epoch = 1;
}

static inline bool world_is_static(const bp_world *w, uint32_t d) {
    return w->groups[w->meta[d].group].kind == BP_PROXY_STATIC;
}

// Drops the touched records (their references to old groups, their proxies' marks).
static void world_clear_touched(bp_world *w) {
    for (size_t t = 0; t < w->touched_count; ++t) {
        const world_touch *r = &w->touched[t];
        if (r->old_group != WORLD_NONE) world_group_unref(w, r->old_group);
        const uint32_t d = world_slot_state(w, r->slot);
        if (d < WORLD_FREED) world_set_touched(w, d, false);
    }
    w->touched_count = 0;
    w->touched_moving = 0;
    if (w->static_touched) world_near_forget(w);
    w->static_touched = false;
}

// Stops recording: the next update rebuilds, and the cells are stale until then.
static void world_forget_touched(bp_world *w) {
    world_clear_touched(w);
    bp_world_cells_invalidate(w);
}

// Room to record `extra` more changed proxies (nothing to reserve once the world will rebuild).
static bp_status world_reserve_touch(bp_world *w, size_t extra) {
    if (w->def.mode == BP_WORLD_MODE_REBUILD || w->overflow) return BP_OK;
    BP_RESERVE(w->heap, w->touched, w->touched_cap, w->touched_count + extra);
    return BP_OK;
}

// Records dense proxy d as changed, with its state as it is now (the state of the last update
// when this is its first change since). `existed`: false for a proxy added since.
// The record itself, once the world has room and is recording (a batch decides that up front).
static inline void world_record_now(bp_world *w, uint32_t d, bool existed) {
    world_touch *r = &w->touched[w->touched_count++];
    const uint32_t g = w->meta[d].group;
    if (w->groups[g].kind == BP_PROXY_STATIC) w->static_touched |= existed;
    else w->touched_moving++;
    r->slot = w->meta[d].slot;
    r->old_group = WORLD_NONE;
    if (existed) {
        r->old_group = g;
        w->groups[g].refs++;
        const float *b = world_box(w, d);
        if (w->dim == 2) {
            memcpy(r->old_box, b, 4 * sizeof(float));
            r->old_box[4] = r->old_box[5] = 0.0f;
        } else {
            memcpy(r->old_box, b, 6 * sizeof(float));
        }
    } else {
        memset(r->old_box, 0, sizeof r->old_box);
    }
    world_set_touched(w, d, true);
}

static void world_record(bp_world *w, uint32_t d, bool existed) {
    if (w->overflow || world_touched(w, d)) return;
    if (w->def.mode == BP_WORLD_MODE_REBUILD ||
        (w->def.mode == BP_WORLD_MODE_AUTO && w->touched_count >= world_patch_limit(w))) {
        w->overflow = true;  // (batches decide this up front: world_will_overflow)
        world_forget_touched(w);
        return;
    }
    world_record_now(w, d, existed);
}

// Proxy d's cell entry is behind: placed anew at the next sync (nothing to do while the cells
// are stale: building them places everything).
static inline void world_dirty(bp_world *w, uint32_t d) {
    if (w->cells.built) world_set_dirty(w, d, true);
}

// AUTO: whether recording `extra` more changes would pass the share that makes the next update
// rebuild; then the world stops recording at once (a batch that moves everything records none).
static bool world_will_overflow(const bp_world *w, size_t extra) {
    return !w->overflow && (w->def.mode == BP_WORLD_MODE_REBUILD ||
                            (w->def.mode == BP_WORLD_MODE_AUTO && w->touched_count + extra > world_patch_limit(w)));
}

static void world_go_overflow(bp_world *w) {
    w->overflow = true;
    world_forget_touched(w);
}

// ---------------------------------------------------------------------------------------------
// Add, move, remove, set

static bp_status world_add(bp_world *w, int dim, const float *boxes, const bp_proxy_def *defs, size_t n,
                           bp_proxy_id *ids) {
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    if (!ids || (!boxes && n)) return BP_ERR_NULL;
    if (dim != w->dim) return BP_ERR_DIMENSION;
    if (n > BP_MAX_BOXES || w->n + w->freed_count + n > BP_MAX_BOXES) return BP_ERR_TOO_MANY;
    for (size_t k = 0; k < n; ++k) ids[k] = BP_NULL_PROXY;
    for (size_t k = 0; k < n; ++k) {
        bp_status st = world_check_box(boxes + k * (size_t)(2 * dim), dim);
        if (st == BP_OK && defs && !bp_def_made(defs[k].internal_value)) st = BP_ERR_DEF_NOT_INITIALISED;
        if (st == BP_OK && defs && defs[k].kind != BP_PROXY_MOVING && defs[k].kind != BP_PROXY_STATIC)
            st = BP_ERR_INVALID_ARG;
        if (st != BP_OK) {
            w->bad_index = k;
            return st;
        }
    }
    bp_status st = world_reserve_slots(w, n);
    if (st == BP_OK) st = world_reserve_dense(w, w->n + n);
    if (st == BP_OK) st = world_reserve_groups(w, defs ? n : 1);
    const bool overflow = world_will_overflow(w, n);
    if (st == BP_OK && !overflow) st = world_reserve_touch(w, n);
    if (st != BP_OK) return st;
    if (overflow) world_go_overflow(w);
    const bp_proxy_def dflt = bp_default_proxy_def();
    for (size_t k = 0; k < n; ++k) {
        const bp_proxy_def *pd = defs ? &defs[k] : &dflt;
        uint32_t slot;
        if (w->free_count) {
            slot = w->free_slots[--w->free_count];
            const uint32_t g = world_slot_gen(w, slot) + 1;
            w->slot_word[slot] = (uint64_t)(g ? g : 1) << 32;
        } else {
            slot = (uint32_t)w->slots++;
            w->slot_word[slot] = (uint64_t)w->salt << 32;
        }
        const uint32_t d = (uint32_t)w->n++;
        w->scattered |= slot != d;
        world_set_slot_state(w, slot, d);
        w->meta[d].slot = slot;
        world_set_box(w, d, boxes + k * (size_t)(2 * dim));
        w->meta[d].group = world_group_ref(w, (uint32_t)pd->kind, pd->category, pd->mask);
        w->user[d] = pd->user;
        world_set_touched(w, d, false);
        world_set_dirty(w, d, false);
        w->meta[d].cell = WORLD_NONE;
        if (pd->kind == BP_PROXY_STATIC) w->static_touched |= !w->overflow;
        else w->moving++;
        world_record(w, d, false);
        world_dirty(w, d);
        ids[k] = world_id(w, slot);
    }
    return BP_OK;
}

bp_status bp_world_add2(bp_world *w, const bp_box2 *box, const bp_proxy_def *def, bp_proxy_id *id) {
    if (id) *id = BP_NULL_PROXY;
    if (w && !box) return BP_ERR_NULL;
    return world_add(w, 2, box ? box->min : NULL, def, 1, id);
}
bp_status bp_world_add3(bp_world *w, const bp_box3 *box, const bp_proxy_def *def, bp_proxy_id *id) {
    if (id) *id = BP_NULL_PROXY;
    if (w && !box) return BP_ERR_NULL;
    return world_add(w, 3, box ? box->min : NULL, def, 1, id);
}
bp_status bp_world_add_batch2(bp_world *w, const bp_box2 *boxes, const bp_proxy_def *defs, size_t n, bp_proxy_id *ids) {
    return world_add(w, 2, boxes ? boxes->min : NULL, defs, n, ids);
}
bp_status bp_world_add_batch3(bp_world *w, const bp_box3 *boxes, const bp_proxy_def *defs, size_t n, bp_proxy_id *ids) {
    return world_add(w, 3, boxes ? boxes->min : NULL, defs, n, ids);
}

// Whether box b (checked) is the one proxy box o holds: its pairs cannot change. Compared as
// floats, so that -0.0 is 0.0 (world_set_box stores it so).
static inline bool world_box_same(const float *o, const float *b, int dim) {
#if defined(__SSE2__)
    // 3D: floats 0-3 and 2-5 (the middle two twice).
    const int last = dim == 2 ? 0 : 2;
    const __m128 x = _mm_cmpeq_ps(_mm_loadu_ps(o), _mm_loadu_ps(b));
    const __m128 y = _mm_cmpeq_ps(_mm_loadu_ps(o + last), _mm_loadu_ps(b + last));
    return _mm_movemask_ps(_mm_and_ps(x, y)) == 0xF;
#else
    bool same = true;
    for (int a = 0; a < 2 * dim; ++a) same &= o[a] == b[a];
    return same;
#endif
}

// A move to the box a proxy already has is no change: not recorded, not counted towards a
// rebuild (an engine that moves every body each frame, resting ones included, pays for the
// ones that moved; a grid of 100,000 resting boxes in 2D: 6.8 -> 0.37 ms a frame).
static bp_status world_move(bp_world *w, int dim, const bp_proxy_id *ids, const float *boxes, size_t n) {
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    if ((!ids || !boxes) && n) return BP_ERR_NULL;
    if (dim != w->dim) return BP_ERR_DIMENSION;
    // The dense indices found while checking, so that the ids are looked up once.
    BP_RESERVE_DISCARD(w->heap, w->move_dense, w->move_dense_cap, n);
    uint32_t *dense = w->move_dense;
    for (size_t k = 0; k < n; ++k) {
        const uint32_t d = world_lookup(w, ids[k]);
        // A null id is told from a stale one only on the way out: in the test just below it, the
        // loop took 4% more instructions (callgrind, `shooter` 20,000).
        bp_status st = d == WORLD_NONE ? BP_ERR_STALE : world_check_box(boxes + k * (size_t)(2 * dim), dim);
        if (st != BP_OK) {
            w->bad_index = k;
            return d == WORLD_NONE ? world_id_error(ids[k]) : st;
        }
        dense[k] = d;
    }
    // Moves to a new box, counted against the boxes before the batch: at least the proxies the
    // batch changes (the first move of a proxy that changes it differs from its old box). The
    // boxes ahead are fetched while one is compared (in the loop above, each waited on its lookup).
    enum { AHEAD = 8 };
    const bool ahead = w->n >= WORLD_PREFETCH_MIN;
    size_t changed = 0;
    for (size_t k = 0; k < n; ++k) {
        if (ahead && k + AHEAD < n) __builtin_prefetch(world_box(w, dense[k + AHEAD]), 1);
        changed += !world_box_same(world_box(w, dense[k]), boxes + k * (size_t)(2 * dim), dim);
    }
    if (changed == 0) return BP_OK;
    const bool overflow = world_will_overflow(w, changed);
    if (!overflow) {
        bp_status st = world_reserve_touch(w, changed);
        if (st != BP_OK) return st;
    }
    // Nothing can fail from here.
    if (overflow) world_go_overflow(w);
    w->moved_since += changed;
    if (w->overflow) {  // nothing to record: the boxes only
        for (size_t k = 0; k < n; ++k) world_set_box(w, dense[k], boxes + k * (size_t)(2 * dim));
        return BP_OK;
    }
    for (size_t k = 0; k < n; ++k) {
        if (ahead && k + AHEAD < n) {  // its box and bookkeeping lines, while this one is written
            __builtin_prefetch(world_box(w, dense[k + AHEAD]), 1);
            __builtin_prefetch(&w->meta[dense[k + AHEAD]], 1);
        }
        const uint32_t d = dense[k];
        const float *b = boxes + k * (size_t)(2 * dim);
        if (world_box_same(world_box(w, d), b, dim)) continue;  // as it is now (earlier moves of the batch included)
        if (!world_touched(w, d)) world_record_now(w, d, true);  // room and share checked above
        world_set_box(w, d, b);
        world_dirty(w, d);
    }
    return BP_OK;
}

bp_status bp_world_move2(bp_world *w, bp_proxy_id id, const bp_box2 *box) {
    if (w && !box) return BP_ERR_NULL;
    return world_move(w, 2, &id, box ? box->min : NULL, 1);
}
bp_status bp_world_move3(bp_world *w, bp_proxy_id id, const bp_box3 *box) {
    if (w && !box) return BP_ERR_NULL;
    return world_move(w, 3, &id, box ? box->min : NULL, 1);
}
bp_status bp_world_move_batch2(bp_world *w, const bp_proxy_id *ids, const bp_box2 *boxes, size_t n) {
    return world_move(w, 2, ids, boxes ? boxes->min : NULL, n);
}
bp_status bp_world_move_batch3(bp_world *w, const bp_proxy_id *ids, const bp_box3 *boxes, size_t n) {
    return world_move(w, 3, ids, boxes ? boxes->min : NULL, n);
}

// Moves dense proxy `from` (the last one) to the hole at `to`.
static void world_renumber(bp_world *w, uint32_t from, uint32_t to) {
    w->scattered = true;
    world_copy_box(world_box(w, to), world_box(w, from), w->dim);
    w->meta[to].slot = w->meta[from].slot;
    w->meta[to].group = w->meta[from].group;
    w->user[to] = w->user[from];
    world_set_touched(w, to, world_touched(w, from));
    world_set_touched(w, from, false);
    world_set_dirty(w, to, world_is_dirty(w, from));
    world_set_dirty(w, from, false);
    bp_world_cells_renumber(w, from, to);
    world_set_slot_state(w, w->meta[to].slot, to);
}

bp_status bp_world_remove_batch(bp_world *w, const bp_proxy_id *ids, size_t n) {
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    if (!ids && n) return BP_ERR_NULL;
    // Stale ids, and ids given twice (marked in their slot field while checking, then unmarked).
    size_t k = 0;
    bp_status st = BP_OK;
    for (; k < n; ++k) {
        const uint32_t d = world_lookup(w, ids[k]);
        if (d == WORLD_NONE || (w->meta[d].slot & WORLD_FREED)) {
            st = d == WORLD_NONE ? world_id_error(ids[k]) : BP_ERR_STALE;
            break;
        }
        w->meta[d].slot |= WORLD_FREED;  // a mark: slots are below 2^30
    }
    for (size_t j = 0; j < k; ++j) w->meta[world_lookup(w, ids[j])].slot &= ~WORLD_FREED;
    if (st != BP_OK) {
        w->bad_index = k;
        return st;
    }
    st = world_reserve_touch(w, n);
    if (st != BP_OK) return st;
    BP_RESERVE(w->heap, w->freed, w->freed_cap, w->freed_count + n);
    BP_RESERVE(w->heap, w->freed_user, w->freed_user_cap, w->freed_count + n);
    for (k = 0; k < n; ++k) {
        const uint32_t d = world_lookup(w, ids[k]);
        const uint32_t slot = w->meta[d].slot;
        world_record(w, d, true);
        if (w->cells.built) bp_world_cells_remove(w, d);
        if (!world_is_static(w, d)) {
            w->moving--;
            if (!w->overflow) w->touched_moving--;  // recorded just above
        }
        world_group_unref(w, w->meta[d].group);
        w->freed[w->freed_count] = slot;
        w->freed_user[w->freed_count] = w->user[d];
        world_set_slot_state(w, slot, WORLD_FREED | (uint32_t)w->freed_count++);
        const uint32_t last = (uint32_t)--w->n;
        if (d != last) world_renumber(w, last, d);
        world_set_touched(w, last, false);  // no bit left past the live proxies (the catch-up
        world_set_dirty(w, last, false);    // scans the dirty bits)
    }
    return BP_OK;
}

bp_status bp_world_remove(bp_world *w, bp_proxy_id id) { return bp_world_remove_batch(w, &id, 1); }

static bp_status world_refilter(bp_world *w, bp_proxy_id id, uint32_t kind, const uint64_t *category,
                                const uint64_t *mask) {
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    const uint32_t d = world_lookup(w, id);
    if (d == WORLD_NONE) return world_id_error(id);
    if (kind != BP_PROXY_MOVING && kind != BP_PROXY_STATIC) return BP_ERR_INVALID_ARG;
    const world_group *g = &w->groups[w->meta[d].group];
    const uint64_t c = category ? *category : g->category, m = mask ? *mask : g->mask;
    if (g->kind == kind && g->category == c && g->mask == m) return BP_OK;
    bp_status st = world_reserve_touch(w, 1);
    if (st == BP_OK) st = world_reserve_groups(w, 1);
    if (st != BP_OK) return st;
    world_record(w, d, true);
    const uint32_t old = w->meta[d].group;
    const bool was_static = world_is_static(w, d);
    w->meta[d].group = world_group_ref(w, kind, c, m);
    world_group_unref(w, old);
    if (was_static != (kind == BP_PROXY_STATIC)) {
        const size_t to_moving = was_static ? 1 : (size_t)-1;  // +1 or -1, wrapping
        w->moving += to_moving;
        if (!w->overflow) w->touched_moving += to_moving;
    }
    if (kind == BP_PROXY_STATIC) w->static_touched |= !w->overflow;
    world_dirty(w, d);
    return BP_OK;
}

bp_status bp_world_set_kind(bp_world *w, bp_proxy_id id, bp_proxy_kind kind) {
    return world_refilter(w, id, (uint32_t)kind, NULL, NULL);
}

bp_status bp_world_set_filter(bp_world *w, bp_proxy_id id, uint64_t category, uint64_t mask) {
    if (!w) return BP_ERR_NULL;
    const uint32_t d = world_lookup(w, id);
    if (d == WORLD_NONE) {
        w->bad_index = SIZE_MAX;
        return world_id_error(id);
    }
    return world_refilter(w, id, w->groups[w->meta[d].group].kind, &category, &mask);
}

bp_status bp_world_set_user(bp_world *w, bp_proxy_id id, uint64_t user) {
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    const uint32_t d = world_lookup(w, id);
    if (d == WORLD_NONE) return world_id_error(id);
    w->user[d] = user;
    return BP_OK;
}

bp_status bp_world_get_proxy(const bp_world *w, bp_proxy_id id, bp_proxy_info *info) {
    if (!w || !info) return BP_ERR_NULL;
    const uint32_t d = world_lookup(w, id);
    if (d == WORLD_NONE) return world_id_error(id);
    memset(info, 0, sizeof *info);
    const float *b = world_box(w, d);
    for (int a = 0; a < w->dim; ++a) {
        info->min[a] = b[a];
        info->max[a] = b[w->dim + a];
    }
    const world_group *g = &w->groups[w->meta[d].group];
    info->kind = (bp_proxy_kind)g->kind;
    info->category = g->category;
    info->mask = g->mask;
    info->user = w->user[d];
    return BP_OK;
}

bp_status bp_world_bad_index(const bp_world *w, size_t *index) {
    if (!w || !index) return BP_ERR_NULL;
    *index = w->bad_index;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Update

// Bits a pair key uses (slot_a << 32 | slot_b): the sorts skip the digits above.
static unsigned world_key_bits(const bp_world *w) {
    unsigned bits = 1;
    while (bits < 30 && ((size_t)1 << bits) < w->slots) ++bits;
    return 32 + bits;
}

static inline uint64_t world_key(uint32_t a, uint32_t b) {
    return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
}

// The user value of the proxy in `slot`: live, or removed since the last update.
static inline uint64_t world_slot_user(const bp_world *w, uint32_t slot) {
    const uint32_t d = world_slot_state(w, slot);
    return d < WORLD_FREED ? w->user[d] : w->freed_user[d & ~WORLD_FREED];
}

// Appends an event key to `buf`, growing it through the hooks (bp_alloc holds the pool's lock,
// so workers may grow their own buffers at once).
static bp_status world_buf_push(bp_world *w, world_evbuf *buf, int begin, uint64_t key) {
    if (BP_UNLIKELY(buf->count[begin] == buf->cap[begin])) {
        bp_status st = BP_OK;
        buf->keys[begin] = bp_grow(w->heap, buf->keys[begin], &buf->cap[begin], buf->count[begin] + 1,
                                   sizeof *buf->keys[begin], true, &st);
        if (st != BP_OK) return st;
    }
    buf->keys[begin][buf->count[begin]++] = key;
    return BP_OK;
}

static bp_status world_push_event(bp_world *w, int begin, uint64_t key) { return world_buf_push(w, &w->ev, begin, key); }

// Places every proxy whose entry is behind since an update that left them so (the near pass
// leaves the moving proxies' entries behind while nothing reads them: docs/world.md).
static bp_status world_catch_up(bp_world *w) {
    if (!w->cells_lag || !w->cells.built) return BP_OK;
    const size_t words = (w->n + 63) / 64;
    size_t behind = 0;
    for (size_t i = 0; i < words; ++i) behind += (size_t)__builtin_popcountll(w->dbits[i]);
    bp_status st = bp_world_cells_reserve(w, behind);
    for (size_t i = 0; i < words && st == BP_OK; ++i) {
        for (uint64_t b = w->dbits[i]; b && st == BP_OK; b &= b - 1) {
            const uint32_t d = (uint32_t)(i * 64 + (size_t)__builtin_ctzll(b));
            st = bp_world_cells_place(w, d);
            if (st == BP_OK) world_set_dirty(w, d, false);
        }
    }
    if (st != BP_OK) {
        bp_world_cells_invalidate(w);  // a cache: rebuilt at its next use
        return st;
    }
    w->cells_lag = false;
    return BP_OK;
}

// Brings the cells up to date: built when stale, else every touched proxy placed anew.
static bp_status world_sync(bp_world *w) {
    if (!w->cells.built) {
        bp_status st = bp_world_cells_build(w);
        if (st != BP_OK) return st;
        w->stale_queries = 0;
        return BP_OK;
    }
    bp_status st = world_catch_up(w);
    if (st != BP_OK) return st;
    st = bp_world_cells_reserve(w, w->touched_count);
    for (size_t t = 0; t < w->touched_count && st == BP_OK; ++t) {
        const uint32_t d = world_slot_state(w, w->touched[t].slot);
        if (d >= WORLD_FREED || !world_is_dirty(w, d)) continue;
        st = bp_world_cells_place(w, d);
        if (st == BP_OK) world_set_dirty(w, d, false);
    }
    if (st != BP_OK) bp_world_cells_invalidate(w);  // a cache: rebuilt at its next use
    return st;
}

// One touched proxy against the untouched entries of the cells it meets.
typedef struct world_probe {
    bp_world *w;
    const float *old_box, *new_box;  // NULL: absent then / now
    const world_group *old_g, *new_g;
    int pass;                        // 0: one visit; 1: entries meeting old_box; 2: the others
    uint32_t slot;
    uint64_t checks;
    world_evbuf *out;                // where its events go
    size_t near_hits;                // changed proxies decided from their near lists
    const float *fat;                // non-NULL: the static entries meeting it are collected
    size_t near_count;               // into w->near_scratch (more than the most: no list)
#if defined(__SSE2__)
    __m128 rhi, rlo;                 // the visited region, for the prefilter (2D)
    __m128 rhi0, rlo0, rlo1;         // (3D)
#endif
    float region[6];
} world_probe;

// An untouched static entry meeting the fat box joins the near list being made (the static
// proxies' entries are up to date whenever lists are made: no static proxy is touched then).
static void world_probe_collect(world_probe *p, const float *e) {
    bp_world *w = p->w;
    const int dim = w->dim;
    const uint32_t x = world_entry_word(e, dim, 0);
    const uint32_t g = world_entry_word(e, dim, 1);
    if (world_touched(w, x) || w->groups[g].kind != BP_PROXY_STATIC || !world_overlap(p->fat, e, dim)) return;
    if (p->near_count++ >= bp_world_near_max()) return;
    float *o = w->near_scratch + (p->near_count - 1) * (size_t)w->cells.stride;
    world_copy_box(o, e, dim);
    world_entry_set_word(o, dim, 0, w->meta[x].slot);
    world_entry_set_word(o, dim, 1, g);
}

// An entry that meets the visited region: decided exactly against the old and new box.
static bp_status world_probe_entry(world_probe *p, const float *e) {
    bp_world *w = p->w;
    const int dim = w->dim;
    if (p->fat && p->pass != 1) world_probe_collect(p, e);
    const bool was = p->old_box && world_overlap(p->old_box, e, dim);
    const bool is = p->new_box && world_overlap(p->new_box, e, dim);
    if (!was && !is) return BP_OK;
    const uint32_t x = world_entry_word(e, dim, 0);
    if (world_touched(w, x)) return BP_OK;  // decided among the touched proxies
    if ((p->pass == 1 && !was) || (p->pass == 2 && was)) return BP_OK;  // the other visit's
    const world_group *g = &w->groups[world_entry_word(e, dim, 1)];
    const bool before = was && world_groups_pair(p->old_g, g);
    const bool now = is && world_groups_pair(p->new_g, g);
    if (before == now) return BP_OK;
    return world_buf_push(w, p->out, now, world_key(p->slot, w->meta[x].slot));
}

// A cell's entries against the visited region: one 4-wide compare per entry (two in 3D), the
// few that meet it decided by world_probe_entry.
static bp_status world_probe_cell(void *user, const float *entries, uint32_t count) {
    world_probe *p = user;
    const int dim = p->w->dim;
    p->checks += count;
#if defined(__SSE2__)
    if (dim == 2) {
        for (uint32_t s = 0; s < count; ++s) {
            const float *e = entries + (size_t)s * 6;
            const __m128 v = _mm_loadu_ps(e);  // min x, min y, max x, max y
            const __m128 ok = _mm_and_ps(_mm_cmple_ps(v, p->rhi), _mm_cmpge_ps(v, p->rlo));
            if (BP_LIKELY(_mm_movemask_ps(ok) != 15)) continue;
            bp_status st = world_probe_entry(p, e);
            if (st != BP_OK) return st;
        }
        return BP_OK;
    }
    for (uint32_t s = 0; s < count; ++s) {
        const float *e = entries + (size_t)s * 8;
        const __m128 v0 = _mm_loadu_ps(e), v1 = _mm_loadu_ps(e + 4);  // min xyz, max x | max yz, words
        const __m128 ok0 = _mm_and_ps(_mm_cmple_ps(v0, p->rhi0), _mm_cmpge_ps(v0, p->rlo0));
        const int m1 = _mm_movemask_ps(_mm_cmpge_ps(v1, p->rlo1)) & 3;  // lanes 2, 3 are the words
        if (BP_LIKELY((_mm_movemask_ps(ok0) != 15) | (m1 != 3))) continue;
        bp_status st = world_probe_entry(p, e);
        if (st != BP_OK) return st;
    }
    return BP_OK;
#else
    for (uint32_t s = 0; s < count; ++s) {
        const float *e = entries + (size_t)s * (size_t)(2 * dim + 2);
        if (!world_overlap(p->region, e, dim)) continue;
        bp_status st = world_probe_entry(p, e);
        if (st != BP_OK) return st;
    }
    return BP_OK;
#endif
}

// Visits the cells around `region` (dim mins, dim maxes) with the probe.
static bp_status world_probe_visit(bp_world *w, world_probe *p, const float *region) {
    const int dim = w->dim;
    world_copy_box(p->region, region, dim);
#if defined(__SSE2__)
    const float inf = INFINITY;
    if (dim == 2) {
        p->rhi = _mm_setr_ps(region[2], region[3], inf, inf);     // entry min <= region max
        p->rlo = _mm_setr_ps(-inf, -inf, region[0], region[1]);   // entry max >= region min
    } else {
        p->rhi0 = _mm_setr_ps(region[3], region[4], region[5], inf);
        p->rlo0 = _mm_setr_ps(-inf, -inf, -inf, region[0]);
        p->rlo1 = _mm_setr_ps(region[1], region[2], -inf, -inf);
    }
#endif
    return bp_world_cells_visit(w, region, region + dim, world_probe_cell, p);
}

static inline void world_union_dim(const float *a, const float *b, float *out, const int DIM) {
    for (int k = 0; k < DIM; ++k) {
        out[k] = a[k] < b[k] ? a[k] : b[k];
        out[DIM + k] = a[DIM + k] > b[DIM + k] ? a[DIM + k] : b[DIM + k];
    }
}
static inline void world_union(const float *a, const float *b, int dim, float *out) {
    if (dim == 2) world_union_dim(a, b, out, 2);
    else world_union_dim(a, b, out, 3);
}

// The events between touched proxies and the rest, then among the touched ones.
// The probe regions of touched record r: its old and new box (NULL when absent), and whether
// they are visited as one region (their union, into u) or apart.
static inline bool world_regions(const bp_world *w, const world_touch *r, uint32_t d, const float **old_box,
                                 const float **new_box, float *u) {
    *old_box = r->old_group != WORLD_NONE ? r->old_box : NULL;
    *new_box = d < WORLD_FREED ? world_box(w, d) : NULL;
    if (!*old_box || !*new_box || !world_overlap(*old_box, *new_box, w->dim)) return false;
    world_union(*old_box, *new_box, w->dim, u);
    return true;
}

// The probe of a changed proxy whose old and new box are set in p: the cells around the old box
// and around `region` (the new box, or a box holding it), as one region when they meet.
static bp_status world_probe_regions(bp_world *w, world_probe *p, const float *region) {
    if (p->old_box && region && world_overlap(p->old_box, region, w->dim)) {
        float u[6] = {0};
        world_union(p->old_box, region, w->dim, u);
        p->pass = 0;
        return world_probe_visit(w, p, u);
    }
    // Apart (or only one of them): each box on its own, every entry decided by exactly one
    // visit (the first takes those meeting the old box).
    bp_status st = BP_OK;
    p->pass = 1;
    if (p->old_box) st = world_probe_visit(w, p, p->old_box);
    p->pass = 2;
    if (st == BP_OK && region) st = world_probe_visit(w, p, region);
    return st;
}

static inline void world_probe_init(world_probe *p, bp_world *w, world_evbuf *out) {
    p->w = w;
    p->checks = 0;
    p->out = out;
    p->fat = NULL;
    p->near_count = 0;
    p->near_hits = 0;
}

// Sets the probe for touched record r: its slot, old and new box and group.
static inline void world_probe_set(bp_world *w, world_probe *p, const world_touch *r, uint32_t d) {
    p->slot = r->slot;
    p->old_g = r->old_group != WORLD_NONE ? &w->groups[r->old_group] : NULL;
    p->new_g = d < WORLD_FREED ? &w->groups[w->meta[d].group] : NULL;
    p->old_box = r->old_group != WORLD_NONE ? r->old_box : NULL;
    p->new_box = d < WORLD_FREED ? world_box(w, d) : NULL;
}

// One changed proxy's probe (its placement is done): the events with the unchanged proxies.
static bp_status world_probe_one(bp_world *w, world_probe *p, const world_touch *r) {
    world_probe_set(w, p, r, world_slot_state(w, r->slot));
    return world_probe_regions(w, p, p->new_box);
}

// Puts a changed proxy's entry where its box now belongs.
static bp_status world_place_one(bp_world *w, const world_touch *r) {
    const uint32_t d = world_slot_state(w, r->slot);
    if (d >= WORLD_FREED || !world_is_dirty(w, d)) return BP_OK;
    bp_status st = bp_world_cells_place(w, d);
    if (st != BP_OK) {
        bp_world_cells_invalidate(w);  // a cache: rebuilt at its next use
        return st;
    }
    world_set_dirty(w, d, false);
    return BP_OK;
}

// Probes of touched records [begin, end), fetching ahead in large worlds.
static bp_status world_probe_range(bp_world *w, world_probe *p, size_t begin, size_t end, bool ahead) {
    const int dim = w->dim;
    enum { NEAR = 4 };
    for (size_t t = begin; t < end; ++t) {
        for (int stage = 0; ahead && stage < 2; ++stage) {  // the cells' table slots, then entries
            const size_t next = t + (stage ? NEAR / 2 : NEAR);
            if (next >= end) continue;
            const world_touch *r = &w->touched[next];
            const float *ob, *nb;
            float u[6] = {0};
            if (world_regions(w, r, world_slot_state(w, r->slot), &ob, &nb, u)) {
                bp_world_cells_prefetch(w, u, u + dim, stage);
            } else {
                if (ob) bp_world_cells_prefetch(w, ob, ob + dim, stage);
                if (nb) bp_world_cells_prefetch(w, nb, nb + dim, stage);
            }
        }
        bp_status st = world_probe_one(w, p, &w->touched[t]);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// The probes on the workers: each task takes a contiguous range of the touched records and
// writes its events to its worker's buffer; the update sorts them all, so the events do not
// depend on the workers. The cells, the proxies and the groups are only read.
typedef struct world_probe_job {
    bp_world *w;
    bp_pool *pool;
    uint32_t tasks;
    bool ahead;
    bp_status st;            // the first error (under the lock)
    uint64_t checks[BP_MAX_WORKERS];
} world_probe_job;

static void world_probe_task(void *user, uint32_t task, uint32_t worker) {
    world_probe_job *j = user;
    bp_world *w = j->w;
    world_probe p;
    world_probe_init(&p, w, &w->wev[worker]);
    const size_t nt = w->touched_count;
    const size_t begin = (size_t)((uint64_t)nt * task / j->tasks), end = (size_t)((uint64_t)nt * (task + 1u) / j->tasks);
    const bp_status st = world_probe_range(w, &p, begin, end, j->ahead);
    j->checks[worker] += p.checks;
    if (st != BP_OK) {
        bp_pool_lock(j->pool);
        if (j->st == BP_OK) j->st = st;
        bp_pool_unlock(j->pool);
    }
}

// Touched records a probe task takes at least (a task must pay for its dispatch). The fuzz build
// sets it (and WORLD_PARALLEL_MIN) small, so that its worlds of a few dozen proxies reach the
// parallel passes (CMakeLists.txt, BP_FUZZ).
#ifndef WORLD_PROBE_GRAIN
#define WORLD_PROBE_GRAIN 256
#endif

static bp_status world_probe_all(bp_world *w, uint64_t *checks, bool ahead) {
    const size_t nt = w->touched_count;
    bp_pool *pool = bp_par_pool(w->heap);
    const uint32_t workers = bp_pool_workers(pool);
    uint32_t tasks = (uint32_t)(nt / WORLD_PROBE_GRAIN);
    if (tasks > 4 * workers) tasks = 4 * workers;
    if (workers < 2 || tasks < 2 || !w->wev) {
        world_probe p;
        world_probe_init(&p, w, &w->ev);
        bp_status st = world_probe_range(w, &p, 0, nt, ahead);
        *checks += p.checks;
        return st;
    }
    world_probe_job j;
    memset(&j, 0, sizeof j);
    j.w = w;
    j.pool = pool;
    j.tasks = tasks;
    j.ahead = ahead;
    for (uint32_t k = 0; k < workers; ++k) w->wev[k].count[0] = w->wev[k].count[1] = 0;
    bp_status st = bp_pool_run(pool, tasks, world_probe_task, &j);
    if (st == BP_OK) st = j.st;
    if (st != BP_OK) return st;
    for (uint32_t k = 0; k < workers; ++k) *checks += j.checks[k];
    // Every worker's events after the serial ones (their order does not matter: they are sorted).
    for (int e = 0; e < 2; ++e) {
        size_t total = w->ev.count[e];
        for (uint32_t k = 0; k < workers; ++k) total += w->wev[k].count[e];
        BP_RESERVE(w->heap, w->ev.keys[e], w->ev.cap[e], total);
        for (uint32_t k = 0; k < workers; ++k) {
            if (!w->wev[k].count[e]) continue;
            memcpy(w->ev.keys[e] + w->ev.count[e], w->wev[k].keys[e], w->wev[k].count[e] * sizeof(uint64_t));
            w->ev.count[e] += w->wev[k].count[e];
        }
    }
    return BP_OK;
}

// The events of the changed proxies with the unchanged ones, from the cells: each changed proxy
// placed anew, then probed.
static bp_status world_patch_cells(bp_world *w, uint64_t *checks) {
    const size_t nt = w->touched_count;
    const bool ahead = w->n >= WORLD_PREFETCH_MIN;
    const bool parallel = bp_pool_workers(bp_par_pool(w->heap)) > 1 && nt >= 2 * WORLD_PROBE_GRAIN;
    if (!ahead && !parallel) {
        // The cells fit the cache: each proxy placed, then probed while its cell is at hand.
        world_probe p;
        world_probe_init(&p, w, &w->ev);
        for (size_t t = 0; t < nt; ++t) {
            bp_status st = world_place_one(w, &w->touched[t]);
            if (st == BP_OK) st = world_probe_one(w, &p, &w->touched[t]);
            if (st != BP_OK) return st;
        }
        *checks += p.checks;
    } else {
        // Placement (it changes the cells: serial), then the probes (they only read: on the
        // workers). Large worlds fetch each pass's lines ahead, a stream of independent cache
        // misses that the loads issued early overlap.
        enum { FAR = 8, NEAR = 4 };
        for (size_t t = 0; t < nt; ++t) {
            if (ahead && t + FAR < nt) {
                const uint32_t a = world_slot_state(w, w->touched[t + FAR].slot);
                if (a < WORLD_FREED) {
                    __builtin_prefetch(&w->meta[a]);
                    __builtin_prefetch(world_box(w, a));
                }
            }
            if (ahead && t + NEAR < nt) {
                const uint32_t a = world_slot_state(w, w->touched[t + NEAR].slot);
                if (a < WORLD_FREED && w->meta[a].cell != WORLD_NONE) __builtin_prefetch(&w->cells.table[w->meta[a].cell]);
            }
            bp_status st = world_place_one(w, &w->touched[t]);
            if (st != BP_OK) return st;
        }
        bp_status st = world_probe_all(w, checks, ahead);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// A changed proxy's events with the static proxies of its near list n (which answers for it):
// the proxy in dense index d (WORLD_FREED and up: removed) of touched record r, its boxes ob and
// nb (NULL when absent). The filter groups are looked up only for entries that meet a box.
static inline bp_status world_near_events(bp_world *w, world_probe *p, const world_near *n, const world_touch *r,
                                          uint32_t d, const float *ob, const float *nb, const int DIM) {
    const size_t stride = (size_t)(2 * DIM + 2);
    const float *e = w->near_blocks.pool + (size_t)n->off * stride;
    // Most entries meet neither box (the fat box is larger): one test against their union first.
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
            og = ob ? &w->groups[r->old_group] : NULL;
            ng = nb ? &w->groups[w->meta[d].group] : NULL;
        }
        const world_group *g = &w->groups[world_entry_word(e, DIM, 1)];
        const bool before = was && world_groups_pair(og, g);
        const bool now = is && world_groups_pair(ng, g);
        if (before == now) continue;
        bp_status st = world_buf_push(w, p->out, now, world_key(r->slot, world_entry_word(e, DIM, 0)));
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// One changed proxy against the static proxies: from its near list when the list answers for
// its old and new box, else from the cells, making its list on the way.
static inline bp_status world_near_one(bp_world *w, world_probe *p, const world_touch *r, const int DIM) {
    const uint32_t d = world_slot_state(w, r->slot);
    const float *ob = r->old_group != WORLD_NONE ? r->old_box : NULL;
    const float *nb = d < WORLD_FREED ? w->boxes + (size_t)d * (size_t)(2 * DIM) : NULL;
    if (!ob && !nb) return BP_OK;  // added and removed since the last update: nothing to decide
    const world_near *n = world_near_valid_dim(w, r->slot, ob, nb, DIM);
    if (BP_LIKELY(n != NULL)) {
        p->checks += n->count;
        p->near_hits++;
        return n->count ? world_near_events(w, p, n, r, d, ob, nb, DIM) : BP_OK;
    }
    world_probe_set(w, p, r, d);
    if (!p->new_box) return world_probe_regions(w, p, NULL);  // removed: its old box alone
    float fat[6] = {0};
    bp_world_near_fat(w, r->slot, p->old_box, p->new_box, fat);
    p->fat = fat;
    p->near_count = 0;
    bp_status st = world_probe_regions(w, p, fat);
    p->fat = NULL;
    if (st == BP_OK) bp_world_near_store(w, r->slot, p->new_box, fat, w->near_scratch, p->near_count);
    return st;
}

// The near pass's fetching ahead for touched record t (see world_patch_near).
static void world_near_prefetch(const bp_world *w, size_t t, size_t nt, size_t far, size_t mid, size_t near,
                                size_t next) {
    if (t + far < nt) {
        const uint32_t slot = w->touched[t + far].slot;
        __builtin_prefetch(&w->slot_word[slot]);
        __builtin_prefetch(&w->slot_near[slot]);
    }
    if (t + mid < nt) {
        const uint32_t slot = w->touched[t + mid].slot;
        const uint32_t a = world_slot_state(w, slot), q = w->slot_near[slot];
        if (a < WORLD_FREED) {
            __builtin_prefetch(w->boxes + (size_t)a * (size_t)(2 * w->dim));
            __builtin_prefetch(&w->meta[a]);
        }
        if (q != WORLD_NONE) __builtin_prefetch(&w->nears[q]);
    }
    for (int stage = 0; stage < 2; ++stage) {
        const size_t u = t + (stage ? next : near);
        if (u >= nt) continue;
        const world_touch *r = &w->touched[u];
        const uint32_t a = world_slot_state(w, r->slot);
        const float *ob = r->old_group != WORLD_NONE ? r->old_box : NULL;
        const float *nb = a < WORLD_FREED ? w->boxes + (size_t)a * (size_t)(2 * w->dim) : NULL;
        const world_near *n = world_near_valid(w, r->slot, ob, nb);
        if (n) {
            if (!stage && n->count) __builtin_prefetch(w->near_blocks.pool + (size_t)n->off * (size_t)w->cells.stride);
            continue;
        }
        float fat[6] = {0};
        if (nb) {
            bp_world_near_fat(w, r->slot, ob, nb, fat);
            nb = fat;
        }
        if (ob && nb && world_overlap(ob, nb, w->dim)) {
            float v[6] = {0};
            world_union(ob, nb, w->dim, v);
            bp_world_cells_prefetch(w, v, v + w->dim, stage);
        } else {
            if (ob) bp_world_cells_prefetch(w, ob, ob + w->dim, stage);
            if (nb) bp_world_cells_prefetch(w, nb, nb + w->dim, stage);
        }
    }
}

// The near pass (docs/world.md): taken when every moving proxy changed and no static one did, so
// that the unchanged proxies are all static and each changed proxy's near list names those it
// can meet. The changed proxies' entries are left behind (nothing reads them until a catch-up).
static bp_status world_patch_near(bp_world *w, uint64_t *checks) {
    const size_t nt = w->touched_count;
    w->cells_lag |= w->cells.built && nt;  // (dirty bits say which: the removed left the cells)
    if (w->moving == w->n) return BP_OK;   // no static proxy: no unchanged one to meet
    world_probe p;
    world_probe_init(&p, w, &w->ev);
    const bool ahead = w->n >= WORLD_PREFETCH_MIN;
    // Large worlds fetch ahead: a changed proxy's slot lines, then its box, bookkeeping and list
    // record, then its list's entries or, when the list must be made again, the cells around it.
    enum { FAR = 32, MID = 16, NEAR = 8, NEXT = 4 };
    for (size_t t = 0; t < nt; ++t) {
        if (ahead) world_near_prefetch(w, t, nt, FAR, MID, NEAR, NEXT);
        bp_status st = w->dim == 2 ? world_near_one(w, &p, &w->touched[t], 2) : world_near_one(w, &p, &w->touched[t], 3);
        if (st != BP_OK) return st;
    }
    *checks += p.checks;
    w->stats.near_hits = p.near_hits;
    return BP_OK;
}

// Among the touched proxies: one stateless call on the union of each one's old and new box lists
// every pair that may have changed.
static bp_status world_patch_touched(bp_world *w, uint64_t *checks) {
    const int dim = w->dim;
    const size_t stride = (size_t)(2 * dim);
    const size_t k = w->touched_count;
    BP_RESERVE_DISCARD(w->heap, w->scratch_boxes, w->scratch_cap, k * stride);
    BP_RESERVE_DISCARD(w->heap, w->scratch_index, w->scratch_index_cap, k);
    size_t m = 0;
    for (size_t t = 0; t < k; ++t) {
        const world_touch *r = &w->touched[t];
        const uint32_t d = world_slot_state(w, r->slot);
        const bool existed = r->old_group != WORLD_NONE, alive = d < WORLD_FREED;
        if (!existed && !alive) continue;
        float *u = w->scratch_boxes + m * stride;
        if (existed && alive) world_union(r->old_box, world_box(w, d), dim, u);
        else memcpy(u, existed ? r->old_box : world_box(w, d), stride * sizeof(float));
        w->scratch_index[m++] = (uint32_t)t;
    }
    if (m < 2) return BP_OK;
    bp_pairs out;
    bp_status st = dim == 2 ? bp_find_pairs2(w->small, (const bp_box2 *)(const void *)w->scratch_boxes, m, &out)
                            : bp_find_pairs3(w->small, (const bp_box3 *)(const void *)w->scratch_boxes, m, &out);
    if (st != BP_OK) return st;
    bp_stats cs;
    bp_get_stats(w->small, &cs);
    *checks += cs.checks;
    for (size_t q = 0; q < out.count; ++q) {
        const world_touch *a = &w->touched[w->scratch_index[out.pairs[q].i]];
        const world_touch *b = &w->touched[w->scratch_index[out.pairs[q].j]];
        const uint32_t da = world_slot_state(w, a->slot), db = world_slot_state(w, b->slot);
        const bool before = a->old_group != WORLD_NONE && b->old_group != WORLD_NONE &&
                            world_overlap(a->old_box, b->old_box, dim) &&
                            world_groups_pair(&w->groups[a->old_group], &w->groups[b->old_group]);
        const bool now = da < WORLD_FREED && db < WORLD_FREED && world_overlap(world_box(w, da), world_box(w, db), dim) &&
                         world_groups_pair(&w->groups[w->meta[da].group], &w->groups[w->meta[db].group]);
        if (before == now) continue;
        st = world_push_event(w, now, world_key(a->slot, b->slot));
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Every pair of the proxies as they are now, as sorted keys in w->rb_keys.
static bp_status world_all_pairs(bp_world *w, size_t *count, uint64_t *checks) {
    *count = 0;
    if (w->group_count - w->group_free_count == 1) {  // one group: pairs only if it pairs with itself
        const world_group *g = w->groups;
        while (!g->refs) ++g;
        if (!world_groups_pair(g, g)) return BP_OK;
    }
    bp_pairs out;
    bp_status st = w->dim == 2 ? bp_find_pairs2(w->heap, (const bp_box2 *)(const void *)w->boxes, w->n, &out)
                               : bp_find_pairs3(w->heap, (const bp_box3 *)(const void *)w->boxes, w->n, &out);
    if (st != BP_OK) return st;
    bp_stats cs;
    bp_get_stats(w->heap, &cs);
    *checks += cs.checks;
    BP_RESERVE_DISCARD(w->heap, w->rb_keys, w->rb_cap, out.count);
    BP_RESERVE_DISCARD(w->heap, w->ev_tmp, w->ev_tmp_cap, out.count);
    size_t m = 0;
    // The pairs come in the method's order, their proxies all over the dense arrays: where every
    // proxy shares one filter group and sits in the slot of its own dense index (no proxy ever
    // removed or re-slotted), the keys are the pairs themselves, with no lookup per pair.
    if (w->group_count - w->group_free_count == 1 && !w->scattered) {
        for (size_t q = 0; q < out.count; ++q) w->rb_keys[q] = ((uint64_t)out.pairs[q].i << 32) | out.pairs[q].j;
        m = out.count;
    } else {
        for (size_t q = 0; q < out.count; ++q) {
            const uint32_t i = out.pairs[q].i, j = out.pairs[q].j;
            if (!world_groups_pair(&w->groups[w->meta[i].group], &w->groups[w->meta[j].group])) continue;
            w->rb_keys[m++] = world_key(w->meta[i].slot, w->meta[j].slot);
        }
    }
    bp_radix_sort64(w->rb_keys, NULL, w->ev_tmp, NULL, m, world_key_bits(w));
    *count = m;
    return BP_OK;
}

// The events' keys as pairs of ids with user values.
static void world_fill_events(bp_world *w, bp_world_events *events) {
    for (int k = 0; k < 2; ++k) {
        bp_world_pair *o = w->ev_out[k];
        for (size_t q = 0; q < w->ev.count[k]; ++q) {
            const uint32_t a = (uint32_t)(w->ev.keys[k][q] >> 32), b = (uint32_t)w->ev.keys[k][q];
            o[q].a = world_id(w, a);
            o[q].b = world_id(w, b);
            o[q].user_a = world_slot_user(w, a);
            o[q].user_b = world_slot_user(w, b);
        }
    }
    if (events) {
        events->ends.pairs = w->ev_out[0];
        events->ends.count = w->ev.count[0];
        events->begins.pairs = w->ev_out[1];
        events->begins.count = w->ev.count[1];
    }
}

// After the events are out: the touched records go, the removed proxies' slots become free.
static void world_settle(bp_world *w) {
    world_clear_touched(w);
    for (size_t k = 0; k < w->freed_count; ++k) {
        bp_world_near_drop(w, w->freed[k]);
        world_set_slot_state(w, w->freed[k], WORLD_NONE);
        w->free_slots[w->free_count++] = w->freed[k];
    }
    w->freed_count = 0;
}

// Reserves what committing `ne` ends and `nb` begins needs.
static bp_status world_reserve_commit(bp_world *w, size_t ne, size_t nb) {
    BP_RESERVE_DISCARD(w->heap, w->ev_out[0], w->ev_out_cap[0], ne);
    BP_RESERVE_DISCARD(w->heap, w->ev_out[1], w->ev_out_cap[1], nb);
    BP_RESERVE(w->heap, w->free_slots, w->free_cap, w->free_count + w->freed_count);
    return BP_OK;
}

// After the cells are built from scratch in an update (a level loading): every moving proxy's
// near list is made then too, so that the frames after it take the near
// pass at once rather than making every list in the first of them. A failure changes nothing
// (the lists not made are made when needed).
static void world_near_build_all(bp_world *w) {
    if (!w->cells.built || w->moving == 0 || w->moving == w->n || bp_world_near_reserve(w) != BP_OK) return;
    world_probe p;
    world_probe_init(&p, w, &w->ev);
    p.old_box = p.new_box = NULL;  // no events: the entries are only collected
    p.old_g = p.new_g = NULL;
    for (uint32_t d = 0; d < w->n; ++d) {
        if (world_is_static(w, d)) continue;
        float fat[6] = {0};
        bp_world_near_fat(w, w->meta[d].slot, NULL, world_box(w, d), fat);
        p.fat = fat;
        p.near_count = 0;
        p.pass = 0;
        if (world_probe_visit(w, &p, fat) != BP_OK) return;
        bp_world_near_store(w, w->meta[d].slot, world_box(w, d), fat, w->near_scratch, p.near_count);
    }
    // Room for the lists to double as they are made again in the frames to come (a wave of
    // them in one frame would otherwise grow the pool in that frame).
    (void)bp_world_blocks_reserve(w, &w->near_blocks, 2 * w->near_blocks.used);
}

static bp_status world_update_patch(bp_world *w, bp_world_events *events) {
    uint64_t checks = 0;
    w->ev.count[0] = w->ev.count[1] = 0;
    w->stats.near_hits = 0;
    // Stale cells are built (every proxy placed); else each touched proxy is placed just before
    // its probe, while its neighbourhood is in cache (the order does not matter: probes skip the
    // touched proxies' entries, and the untouched ones do not change). When every moving proxy
    // changed and no static one did, the near pass decides them from their near lists instead.
    const bool fresh = !w->cells.built;
    bp_status st = fresh ? world_sync(w) : BP_OK;
    if (st != BP_OK) return st;
    bool near = !w->static_touched && w->touched_moving == w->moving;
    if (near) near = bp_world_near_reserve(w) == BP_OK;
    if (near) {
        st = world_patch_near(w, &checks);
    } else {
        st = world_catch_up(w);
        if (st == BP_OK) st = bp_world_cells_reserve(w, w->touched_count);
        if (st == BP_OK) st = world_patch_cells(w, &checks);
    }
    if (st == BP_OK) st = world_patch_touched(w, &checks);
    if (st != BP_OK) return st;
    size_t most = w->ev.count[0] > w->ev.count[1] ? w->ev.count[0] : w->ev.count[1];
    BP_RESERVE_DISCARD(w->heap, w->ev_tmp, w->ev_tmp_cap, most);
    st = world_reserve_commit(w, w->ev.count[0], w->ev.count[1]);
    if (st == BP_OK) st = bp_world_pairs_reserve_log(w, w->ev.count[0] + w->ev.count[1]);
    if (st != BP_OK) return st;
    for (int k = 0; k < 2; ++k) bp_radix_sort64(w->ev.keys[k], NULL, w->ev_tmp, NULL, w->ev.count[k], world_key_bits(w));
    // Committed from here: nothing below can fail.
    bp_world_pairs_log(w, w->ev.keys[0], w->ev.count[0], w->ev.keys[1], w->ev.count[1]);
    world_fill_events(w, events);
    w->moved_since = 0;
    w->stats.changed = w->touched_count;
    w->stats.checks = checks;
    w->stats.rebuilt = false;
    world_settle(w);
    // Fold a log grown past half the set (amortized); failing to is harmless (it stays a log).
    if (bp_world_pairs_fold_due(w)) (void)bp_world_pairs_fold(w);
    if (fresh) world_near_build_all(w);  // the cells were built from scratch: the lists too
    return BP_OK;
}

static bp_status world_update_rebuild(bp_world *w, bp_world_events *events) {
    uint64_t checks = 0;
    size_t count = 0;
    bp_status st = bp_world_pairs_fold(w);
    if (st == BP_OK) st = world_all_pairs(w, &count, &checks);
    if (st != BP_OK) return st;
    const size_t old = w->pairs.count;
    if (w->ev.cap[0] < old) BP_RESERVE_DISCARD(w->heap, w->ev.keys[0], w->ev.cap[0], old);
    if (w->ev.cap[1] < count) BP_RESERVE_DISCARD(w->heap, w->ev.keys[1], w->ev.cap[1], count);
    st = world_reserve_commit(w, old, count);
    if (st != BP_OK) return st;
    // Committed from here.
    bp_world_pairs_replace(w, &w->rb_keys, &w->rb_cap, count);
    world_fill_events(w, events);
    w->stats.changed = w->n + w->freed_count;
    w->stats.checks = checks;
    w->stats.rebuilt = true;
    w->stats.near_hits = 0;
    w->overflow = false;
    world_near_forget(w);  // the static proxies may have changed unrecorded
    world_forget_touched(w);  // none recorded (the world stopped recording); the cells go stale
    world_settle(w);
    w->stale_queries = 0;
    // A rebuild forced by adding many proxies (a level loading, the first frame) rather than by
    // moving them is usually followed by frames where few move: build the cells now, in this
    // frame, rather than in the next one. A failure here changes nothing (they stay stale).
    if (w->def.mode == BP_WORLD_MODE_AUTO && w->moved_since <= world_patch_limit(w) &&
        bp_world_cells_build(w) == BP_OK)
        world_near_build_all(w);
    w->moved_since = 0;
    return BP_OK;
}

bp_status bp_world_update(bp_world *w, bp_world_events *events) {
    if (events) memset(events, 0, sizeof *events);
    if (!w) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    bp_status st;
    if (w->overflow || w->def.mode == BP_WORLD_MODE_REBUILD) {
        st = world_update_rebuild(w, events);
    } else if (w->touched_count == 0 && w->freed_count == 0) {
        w->stats.changed = 0;
        w->stats.checks = 0;
        w->stats.rebuilt = false;
        w->stats.near_hits = 0;
        w->ev.count[0] = w->ev.count[1] = 0;
        st = BP_OK;
    } else {
        st = world_update_patch(w, events);
    }
    if (st != BP_OK) {
        if (events) memset(events, 0, sizeof *events);
        return st;
    }
    w->stats.begins = w->ev.count[1];
    w->stats.ends = w->ev.count[0];
    return BP_OK;
}

bp_status bp_world_get_pairs(bp_world *w, bp_world_pairs *out) {
    if (out) {
        out->pairs = NULL;
        out->count = 0;
    }
    if (!w || !out) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    bp_status st = bp_world_pairs_fold(w);
    if (st != BP_OK) return st;
    const world_pairset *p = &w->pairs;
    BP_RESERVE_DISCARD(w->heap, w->pair_out, w->pair_out_cap, p->count);
    for (size_t q = 0; q < p->count; ++q) {
        const uint32_t a = (uint32_t)(p->keys[q] >> 32), b = (uint32_t)p->keys[q];
        w->pair_out[q].a = world_id(w, a);
        w->pair_out[q].b = world_id(w, b);
        w->pair_out[q].user_a = world_slot_user(w, a);
        w->pair_out[q].user_b = world_slot_user(w, b);
    }
    out->pairs = w->pair_out;
    out->count = p->count;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Queries

typedef struct world_query {
    bp_world *w;
    bp_query q;
    uint64_t mask;
    size_t count;
    bp_status st;
} world_query;

static bp_status world_query_push(world_query *wq, uint32_t slot) {
    bp_world *w = wq->w;
    if (wq->count == w->hit_slots_cap) BP_RESERVE(w->heap, w->hit_slots, w->hit_slots_cap, wq->count + 1);
    w->hit_slots[wq->count++] = slot;
    return BP_OK;
}

static bp_status world_query_cell(void *user, const float *entries, uint32_t count) {
    world_query *wq = user;
    bp_world *w = wq->w;
    const int dim = w->dim, stride = 2 * dim + 2;
    for (uint32_t s = 0; s < count; ++s) {
        const float *e = entries + (size_t)s * (size_t)stride;
        if (!bp_query_hit_box(&wq->q, e, dim)) continue;
        const uint32_t g = world_entry_word(e, dim, 1);
        if (!(w->groups[g].category & wq->mask)) continue;
        bp_status st = world_query_push(wq, w->meta[world_entry_word(e, dim, 0)].slot);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

static bp_status world_run_query(bp_world *w, const bp_query *q, uint64_t mask, bp_world_hits *out) {
    world_query wq;
    memset(&wq, 0, sizeof wq);
    wq.w = w;
    wq.q = *q;
    wq.mask = mask;
    bp_status st = BP_OK;
    // Stale cells (after a rebuild, or while too much has changed to record) are rebuilt only
    // once scanning would have cost more than building them.
    const bool use_cells = !w->overflow && (w->cells.built || w->stale_queries >= WORLD_STALE_SCANS);
    if (use_cells) st = world_sync(w);
    if (st == BP_OK && use_cells) {
        st = bp_world_cells_visit(w, q->lo, q->hi, world_query_cell, &wq);
    } else if (st == BP_OK) {
        w->stale_queries++;
        for (size_t d = 0; d < w->n && st == BP_OK; ++d)
            if (bp_query_hit_box(q, world_box(w, d), w->dim) && (w->groups[w->meta[d].group].category & mask))
                st = world_query_push(&wq, w->meta[d].slot);
    }
    if (st != BP_OK) return st;
    const size_t c = wq.count;
    BP_RESERVE_DISCARD(w->heap, w->hit_ids, w->hit_cap, c);
    BP_RESERVE_DISCARD(w->heap, w->hit_users, w->hit_users_cap, c);
    BP_RESERVE_DISCARD(w->heap, w->hit_tmp, w->hit_tmp_cap, c);
    unsigned bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < w->slots) ++bits;
    bp_radix_sort32(w->hit_slots, NULL, w->hit_tmp, NULL, c, bits);
    for (size_t k = 0; k < c; ++k) {
        w->hit_ids[k] = world_id(w, w->hit_slots[k]);
        w->hit_users[k] = w->user[world_slot_state(w, w->hit_slots[k])];
    }
    out->ids = w->hit_ids;
    out->users = w->hit_users;
    out->count = c;
    return BP_OK;
}

static bp_status world_query_prologue(bp_world *w, bp_world_hits *out) {
    if (out) {
        out->ids = NULL;
        out->users = NULL;
        out->count = 0;
    }
    if (!w || !out) return BP_ERR_NULL;
    w->bad_index = SIZE_MAX;
    return BP_OK;
}

bp_status bp_world_query_box(bp_world *w, const float *lo, const float *hi, uint64_t mask, bp_world_hits *out) {
    bp_status st = world_query_prologue(w, out);
    if (st != BP_OK) return st;
    if (!lo || !hi) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_box(&q, w->dim, lo, hi);
    return st != BP_OK ? st : world_run_query(w, &q, mask, out);
}

bp_status bp_world_query_point(bp_world *w, const float *point, uint64_t mask, bp_world_hits *out) {
    bp_status st = world_query_prologue(w, out);
    if (st != BP_OK) return st;
    if (!point) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_point(&q, w->dim, point);
    return st != BP_OK ? st : world_run_query(w, &q, mask, out);
}

bp_status bp_world_query_sphere(bp_world *w, const float *center, float radius, uint64_t mask, bp_world_hits *out) {
    bp_status st = world_query_prologue(w, out);
    if (st != BP_OK) return st;
    if (!center) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_sphere(&q, w->dim, center, radius);
    return st != BP_OK ? st : world_run_query(w, &q, mask, out);
}

// ---------------------------------------------------------------------------------------------
// Statistics, drawing, validation

bp_status bp_world_get_stats(const bp_world *w, bp_world_stats *stats) {
    if (!w || !stats) return BP_ERR_NULL;
    *stats = w->stats;
    stats->proxies = w->n;
    stats->pairs = w->pairs.total;
    bp_stats h, s;
    bp_get_stats(w->heap, &h);
    bp_get_stats(w->small, &s);
    stats->bytes = sizeof *w + h.bytes + s.bytes;
    return BP_OK;
}

bp_status bp_world_debug_draw(bp_world *w, const bp_debug_draw *draw) {
    if (!w || !draw) return BP_ERR_NULL;
    if (w->overflow) return BP_OK;  // nothing kept to draw until the next update
    bp_status st = world_sync(w);
    if (st != BP_OK) return st;
    bp_world_cells_draw(w, draw);
    return BP_OK;
}

#define WORLD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) return BP_ERR_INVALID_ARG;                                                    \
    } while (0)

bp_status bp_world_validate(bp_world *w) {
    if (!w) return BP_ERR_NULL;
    // Slots and dense proxies.
    size_t live = 0, freed = 0, free_now = 0;
    for (size_t s = 0; s < w->slots; ++s) {
        const uint32_t d = world_slot_state(w, s);
        WORLD_CHECK(world_slot_gen(w, s) != 0);
        if (d < WORLD_FREED) {
            WORLD_CHECK(d < w->n && w->meta[d].slot == s);
            ++live;
        } else if (d != WORLD_NONE) {
            const uint32_t k = d & ~WORLD_FREED;
            WORLD_CHECK(k < w->freed_count && w->freed[k] == s);
            ++freed;
        } else {
            ++free_now;
        }
    }
    WORLD_CHECK(live == w->n && freed == w->freed_count && free_now == w->free_count);
    for (size_t k = 0; k < w->free_count; ++k) WORLD_CHECK(world_slot_state(w, w->free_slots[k]) == WORLD_NONE);
    // Groups: references from proxies and touched records.
    for (size_t g = 0; g < w->group_count; ++g) {
        uint32_t refs = 0;
        for (size_t d = 0; d < w->n; ++d) refs += w->meta[d].group == g;
        for (size_t t = 0; t < w->touched_count; ++t) refs += w->touched[t].old_group == g;
        WORLD_CHECK(refs == w->groups[g].refs);
    }
    // Touched records.
    WORLD_CHECK(!w->overflow || w->touched_count == 0);
    size_t touched_live = 0;
    for (size_t t = 0; t < w->touched_count; ++t) {
        const uint32_t d = world_slot_state(w, w->touched[t].slot);
        WORLD_CHECK(d != WORLD_NONE);
        if (d < WORLD_FREED) {
            WORLD_CHECK(world_touched(w, d));
            ++touched_live;
        }
    }
    size_t marked = 0;
    for (size_t d = 0; d < w->n; ++d) {
        marked += world_touched(w, d);
        WORLD_CHECK(world_check_box(world_box(w, d), w->dim) == BP_OK);
        if (world_is_dirty(w, d)) WORLD_CHECK((world_touched(w, d) || w->cells_lag) && w->cells.built);
    }
    WORLD_CHECK(marked == touched_live);
    bp_status st = bp_world_cells_validate(w);
    if (st != BP_OK) return st;
    // The pair set: sorted keys of two slots each (the log may still end some whose slots are
    // free again), and its count.
    const world_pairset *p = &w->pairs;
    for (size_t q = 0; q < p->count; ++q) {
        const uint32_t a = (uint32_t)(p->keys[q] >> 32), b = (uint32_t)p->keys[q];
        WORLD_CHECK(a < b && b < w->slots);
        WORLD_CHECK(q == 0 || p->keys[q - 1] < p->keys[q]);
    }
    if (!p->log_count)
        for (size_t q = 0; q < p->count; ++q) {
            WORLD_CHECK(world_slot_state(w, p->keys[q] >> 32) != WORLD_NONE);
            WORLD_CHECK(world_slot_state(w, (uint32_t)p->keys[q]) != WORLD_NONE);
        }
    size_t net = p->count;
    for (size_t q = 0; q < p->log_count; ++q) net += p->log_begin[q] ? 1 : (size_t)-1;
    WORLD_CHECK(net == p->total);
    return BP_OK;
}
