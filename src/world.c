// The persistent world (docs/world.md): entry points, argument checks, proxies and their ids,
// the record of what changed, queries. Updates are world_update.c's (the engine).
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

// Queries answered by scanning every proxy while the cells are stale, before they are rebuilt.
#define WORLD_STALE_SCANS 8
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
    bp_heap *h = &w->heap;
    world_cells_free(&w->cells);
    world_near_free(&w->near);
    world_pairs_free(&w->pairs);
    world_groups_free(&w->groups);
    BP_RELEASE(h, w->slot_word, w->slot_cap);
    BP_RELEASE(h, w->free_slots, w->free_cap);
    BP_RELEASE(h, w->freed, w->freed_cap);
    BP_RELEASE(h, w->freed_user, w->freed_user_cap);
    const size_t cap = w->dense_cap, dim = (size_t)w->dim;
    bp_heap_free(h, w->boxes, cap * 2 * dim * sizeof(float));
    bp_heap_free(h, w->meta, cap * sizeof(world_meta));
    bp_heap_free(h, w->user, cap * sizeof(uint64_t));
    bp_heap_free(h, w->tbits, cap / 8);
    bp_heap_free(h, w->dbits, cap / 8);
    BP_RELEASE(h, w->touched, w->touched_cap);
    for (size_t q = 0; q < w->wev_count; ++q) world_evbuf_free(&w->wev[q], h);
    bp_heap_free(h, w->wev, w->wev_count * sizeof *w->wev);
    world_evbuf_free(&w->ev, h);
    for (int k = 0; k < 2; ++k) BP_RELEASE(h, w->ev_out[k], w->ev_out_cap[k]);
    BP_RELEASE(h, w->ev_tmp, w->ev_tmp_cap);
    BP_RELEASE(h, w->scratch_boxes, w->scratch_cap);
    BP_RELEASE(h, w->scratch_index, w->scratch_index_cap);
    BP_RELEASE(h, w->rb_keys, w->rb_cap);
    BP_RELEASE(h, w->move_dense, w->move_dense_cap);
    BP_RELEASE(h, w->pair_out, w->pair_out_cap);
    BP_RELEASE(h, w->hit_ids, w->hit_cap);
    BP_RELEASE(h, w->hit_users, w->hit_users_cap);
    BP_RELEASE(h, w->hits.data, w->hits.cap);
    BP_RELEASE(h, w->hit_tmp, w->hit_tmp_cap);
}

bp_status bp_world_create(const bp_world_def *def, bp_world **out) {
    if (out) *out = NULL;
    bp_status st = bp_def_check(def && out, def ? def->internal_value : 0, def ? def->dimension : 0);
    if (st != BP_OK) return st;
    bp_world_def d = *def;
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
    bp_context *all = NULL, *small = NULL;
    st = bp_context_create(&cd, &all);
    if (st != BP_OK) return st;
    // The changed proxies are few and spread over the whole world (the grid would size its cells
    // for the world): AUTO takes sort-and-sweep for them. One worker: their calls are small.
    if (d.method == BP_METHOD_AUTO) cd.method = BP_METHOD_SWEEP;
    cd.workers = 1;
    cd.enqueue_task = NULL;
    cd.finish_task = NULL;
    st = bp_context_create(&cd, &small);
    if (st != BP_OK) {
        bp_context_destroy(all);
        return st;
    }
    bp_context_get_def(all, &cd);
    al = cd.allocator;  // resolved: never NULL from here
    bp_world *w = al.alloc(sizeof *w, 64, al.user);
    if (!w) {
        bp_context_destroy(small);
        bp_context_destroy(all);
        return BP_ERR_NOMEM;
    }
    memset(w, 0, sizeof *w);
    bp_heap_init(&w->heap, &al, w, sizeof *w);
    w->heap.lock = bp_par_pool(all);  // the workers' probes grow their buffers
    w->def = d;
    w->def.allocator = al;
    w->dim = d.dimension;
    w->all = all;
    w->small = small;
    // Generations start at a value of this world's own, so another world's ids rarely match.
    uint32_t salt = (uint32_t)(atomic_fetch_add(&world_salts, 1) + 1) * 0x9E3779B1u;
    salt ^= salt >> 15;
    w->salt = salt ? salt : 1;
    w->bad_index = SIZE_MAX;
    world_cells_init(&w->cells, &w->heap, w->dim, (double)d.cell_size);
    world_near_init(&w->near, &w->heap, w->dim);
    world_groups_init(&w->groups, &w->heap);
    world_pairs_init(&w->pairs, &w->heap);
    const uint32_t workers = bp_pool_workers(bp_par_pool(all));
    if (workers > 1) {  // each worker's event buffer for the parallel probes
        w->wev = bp_heap_alloc(&w->heap, workers * sizeof *w->wev);
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
    bp_context_destroy(w->all);
    bp_allocator al = w->heap.alloc;
    al.free(w, sizeof *w, al.user);
}

// ---------------------------------------------------------------------------------------------
// Ids, boxes and growth

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
        if ((sizes[k] && cap > SIZE_MAX / sizes[k]) || !(fresh[k] = bp_heap_alloc(&w->heap, bytes))) {
            for (int j = 0; j < k; ++j) bp_heap_free(&w->heap, fresh[j], sizes[j] ? cap * sizes[j] : cap / 8);
            return BP_ERR_NOMEM;
        }
    }
    for (int k = 0; k < ARRAYS; ++k) {
        const size_t used = sizes[k] ? w->n * sizes[k] : w->dense_cap / 8;
        if (used) memcpy(fresh[k], *arrays[k], used);
        if (!sizes[k]) memset((char *)fresh[k] + used, 0, cap / 8 - used);
        bp_heap_free(&w->heap, *arrays[k], sizes[k] ? w->dense_cap * sizes[k] : w->dense_cap / 8);
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
    BP_RESERVE(&w->heap, w->slot_word, w->slot_cap, need);
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// What changed

// Room to record `extra` more changed proxies (nothing to reserve once the world will rebuild).
static bp_status world_reserve_touch(bp_world *w, size_t extra) {
    if (w->def.mode == BP_WORLD_MODE_REBUILD || w->overflow) return BP_OK;
    BP_RESERVE(&w->heap, w->touched, w->touched_cap, w->touched_count + extra);
    return BP_OK;
}

// Records dense proxy d as changed, with its state as it is now (the state of the last update
// when this is its first change since). `existed`: false for a proxy added since.
// The record itself, once the world has room and is recording (a batch decides that up front).
static inline void world_record_now(bp_world *w, uint32_t d, bool existed) {
    world_touch *r = &w->touched[w->touched_count++];
    const uint32_t g = w->meta[d].group;
    if (w->groups.at[g].kind == BP_PROXY_STATIC) w->static_touched |= existed;
    else w->touched_moving++;
    r->slot = w->meta[d].slot;
    r->old_group = WORLD_NONE;
    if (existed) {
        r->old_group = g;
        w->groups.at[g].refs++;
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
    if (st == BP_OK) st = world_groups_reserve(&w->groups, defs ? n : 1);
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
        w->meta[d].group = world_groups_ref(&w->groups, (uint32_t)pd->kind, pd->category, pd->mask);
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
    BP_RESERVE_DISCARD(&w->heap, w->move_dense, w->move_dense_cap, n);
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
    world_cells_renumber(&w->cells, w->meta, from, to);
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
    BP_RESERVE(&w->heap, w->freed, w->freed_cap, w->freed_count + n);
    BP_RESERVE(&w->heap, w->freed_user, w->freed_user_cap, w->freed_count + n);
    for (k = 0; k < n; ++k) {
        const uint32_t d = world_lookup(w, ids[k]);
        const uint32_t slot = w->meta[d].slot;
        world_record(w, d, true);
        if (w->cells.built) world_cells_remove(&w->cells, w->meta, d);
        if (!world_is_static(w, d)) {
            w->moving--;
            if (!w->overflow) w->touched_moving--;  // recorded just above
        }
        world_groups_unref(&w->groups, w->meta[d].group);
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
    const world_group *g = &w->groups.at[w->meta[d].group];
    const uint64_t c = category ? *category : g->category, m = mask ? *mask : g->mask;
    if (g->kind == kind && g->category == c && g->mask == m) return BP_OK;
    bp_status st = world_reserve_touch(w, 1);
    if (st == BP_OK) st = world_groups_reserve(&w->groups, 1);
    if (st != BP_OK) return st;
    world_record(w, d, true);
    const uint32_t old = w->meta[d].group;
    const bool was_static = world_is_static(w, d);
    w->meta[d].group = world_groups_ref(&w->groups, kind, c, m);
    world_groups_unref(&w->groups, old);
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
    return world_refilter(w, id, w->groups.at[w->meta[d].group].kind, &category, &mask);
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
    const world_group *g = &w->groups.at[w->meta[d].group];
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
    bp_status st = world_pairs_fold(&w->pairs);
    if (st != BP_OK) return st;
    const world_pairset *p = &w->pairs;
    BP_RESERVE_DISCARD(&w->heap, w->pair_out, w->pair_out_cap, p->count);
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

// The world's traversal for a query (src/query.h's contract): its cells where they are current,
// else every proxy; it hands over dense indices, whose boxes are world_box.
typedef struct world_cell_walk {
    bp_visitor *v;
    int dim;
} world_cell_walk;

static bp_status world_walk_cell(void *user, const float *entries, uint32_t count) {
    const world_cell_walk *cw = user;
    bp_visitor *v = cw->v;
    const int dim = cw->dim, stride = 2 * dim + 2;
    for (uint32_t s = 0; s < count; ++s) {
        const float *e = entries + (size_t)s * (size_t)stride;
        bool touch = true;
        for (int a = 0; a < dim; ++a) touch &= !(e[a] > v->hi[a] || v->lo[a] > e[dim + a]);
        if (!touch) continue;
        const bp_status st = v->visit(v, world_entry_word(e, dim, 0));
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

static bp_status world_visit(bp_world *w, bp_visitor *v) {
    // Stale cells (after a rebuild, or while too much has changed to record) are rebuilt only
    // once scanning would have cost more than building them.
    const bool use_cells = !w->overflow && (w->cells.built || w->stale_queries >= WORLD_STALE_SCANS);
    if (!use_cells) {
        w->stale_queries++;
        const bp_frame all = {.dim = w->dim, .n = w->n, .boxes = w->boxes};
        return bp_visit_frame(&all, v);
    }
    bp_status st = world_sync(w);
    world_cell_walk cw = {v, w->dim};
    if (st == BP_OK) st = world_cells_visit(&w->cells, v->lo, v->hi, world_walk_cell, &cw);
    return st;
}

// Region queries: the one region visitor (src/query.h), behind the mask.
typedef struct world_query_visitor {
    bp_region_visitor region;  // first: the traversal's pointer is this visitor's
    const bp_world *w;
    uint64_t mask;
} world_query_visitor;

static bp_status world_query_visit(bp_visitor *v, uint32_t d) {
    const world_query_visitor *wv = (const world_query_visitor *)(void *)v;
    if (!(wv->w->groups.at[wv->w->meta[d].group].category & wv->mask)) return BP_OK;
    return bp_region_visit(v, d);
}

static bp_status world_run_query(bp_world *w, const bp_query *q, uint64_t mask, bp_world_hits *out) {
    w->hits.heap = &w->heap;
    w->hits.count = 0;
    world_query_visitor wv;
    bp_region_visitor_init(&wv.region, q, w->boxes, w->dim, &w->hits);
    wv.region.base.visit = world_query_visit;
    wv.w = w;
    wv.mask = mask;
    bp_status st = world_visit(w, &wv.region.base);
    if (st != BP_OK) return st;
    const size_t c = w->hits.count;
    uint32_t *slots = w->hits.data;
    for (size_t k = 0; k < c; ++k) slots[k] = w->meta[slots[k]].slot;
    BP_RESERVE_DISCARD(&w->heap, w->hit_ids, w->hit_cap, c);
    BP_RESERVE_DISCARD(&w->heap, w->hit_users, w->hit_users_cap, c);
    BP_RESERVE_DISCARD(&w->heap, w->hit_tmp, w->hit_tmp_cap, c);
    unsigned bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < w->slots) ++bits;
    bp_radix_sort32(slots, NULL, w->hit_tmp, NULL, c, bits);
    for (size_t k = 0; k < c; ++k) {
        w->hit_ids[k] = world_id(w, slots[k]);
        w->hit_users[k] = w->user[world_slot_state(w, slots[k])];
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
    bp_stats a, s;
    bp_get_stats(w->all, &a);
    bp_get_stats(w->small, &s);
    stats->bytes = w->heap.bytes + a.bytes + s.bytes;
    return BP_OK;
}

bp_status bp_world_debug_draw(bp_world *w, const bp_debug_draw *draw) {
    if (!w || !draw) return BP_ERR_NULL;
    if (w->overflow) return BP_OK;  // nothing kept to draw until the next update
    bp_status st = world_sync(w);
    if (st != BP_OK) return st;
    world_cells_draw(&w->cells, draw);
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
    for (size_t g = 0; g < w->groups.count; ++g) {
        uint32_t refs = 0;
        for (size_t d = 0; d < w->n; ++d) refs += w->meta[d].group == g;
        for (size_t t = 0; t < w->touched_count; ++t) refs += w->touched[t].old_group == g;
        WORLD_CHECK(refs == w->groups.at[g].refs);
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
    bp_status st = world_cells_validate(&w->cells, w->boxes, w->meta, w->dbits, w->n);
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
