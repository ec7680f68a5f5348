// The persistent world's update engine (docs/world.md): an incremental update decides the
// events of the changed ("touched") proxies from the persistent cells, or from their near lists
// when every moving proxy changed and no static one did, and among themselves with one call of
// the stateless context; a rebuild finds every pair with the context and diffs the pair set.
// It keeps the cells in step with the proxies (placing the changed ones) and clears the record
// of changes once the events are out. world.c calls it; it calls nothing of world.c.
//
// An update reserves all the memory it can need before it commits anything, so that
// BP_ERR_NOMEM leaves the world as it was; the cells and near lists are caches, dropped and
// made again when they cannot be brought up to date, which changes no answer.
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "par.h"
#include "radix_sort.h"
#include "world.h"

// Touched records a probe task takes at least (a task must pay for its dispatch). The fuzz build
// sets it (and WORLD_PARALLEL_MIN, world.c) small, so that its worlds of a few dozen proxies
// reach the parallel passes (CMakeLists.txt, BP_FUZZ).
#ifndef WORLD_PROBE_GRAIN
#define WORLD_PROBE_GRAIN 256
#endif

// ---------------------------------------------------------------------------------------------
// The record of changes

// Drops the touched records (their references to old groups, their proxies' marks).
static void world_clear_touched(bp_world *w) {
    for (size_t t = 0; t < w->touched_count; ++t) {
        const world_touch *r = &w->touched[t];
        if (r->old_group != WORLD_NONE) world_groups_unref(&w->groups, r->old_group);
        const uint32_t d = world_slot_state(w, r->slot);
        if (d < WORLD_FREED) world_set_touched(w, d, false);
    }
    w->touched_count = 0;
    w->touched_moving = 0;
    if (w->static_touched) world_near_forget(&w->near);
    w->static_touched = false;
}

void world_forget_touched(bp_world *w) {
    world_clear_touched(w);
    world_drop_cells(w);
}

// ---------------------------------------------------------------------------------------------
// The cells in step with the proxies

// Places every proxy whose entry is behind since an update that left them so (the near pass
// leaves the moving proxies' entries behind while nothing reads them: docs/world.md).
static bp_status world_catch_up(bp_world *w) {
    if (!w->cells_lag || !w->cells.built) return BP_OK;
    const size_t words = (w->n + 63) / 64;
    size_t behind = 0;
    for (size_t i = 0; i < words; ++i) behind += (size_t)__builtin_popcountll(w->dbits[i]);
    bp_status st = world_cells_reserve(&w->cells, w->meta, behind);
    for (size_t i = 0; i < words && st == BP_OK; ++i) {
        for (uint64_t b = w->dbits[i]; b && st == BP_OK; b &= b - 1) {
            const uint32_t d = (uint32_t)(i * 64 + (size_t)__builtin_ctzll(b));
            st = world_cells_place(&w->cells, w->boxes, w->meta, d);
            if (st == BP_OK) world_set_dirty(w, d, false);
        }
    }
    if (st != BP_OK) {
        world_drop_cells(w);  // a cache: rebuilt at its next use
        return st;
    }
    w->cells_lag = false;
    return BP_OK;
}

// Builds the cells from every live proxy.
static bp_status world_build_cells(bp_world *w) {
    world_drop_cells(w);
    return world_cells_build(&w->cells, w->boxes, w->meta, w->n);
}

bp_status world_sync(bp_world *w) {
    if (!w->cells.built) {
        bp_status st = world_build_cells(w);
        if (st != BP_OK) return st;
        w->stale_queries = 0;
        return BP_OK;
    }
    bp_status st = world_catch_up(w);
    if (st != BP_OK) return st;
    st = world_cells_reserve(&w->cells, w->meta, w->touched_count);
    for (size_t t = 0; t < w->touched_count && st == BP_OK; ++t) {
        const uint32_t d = world_slot_state(w, w->touched[t].slot);
        if (d >= WORLD_FREED || !world_is_dirty(w, d)) continue;
        st = world_cells_place(&w->cells, w->boxes, w->meta, d);
        if (st == BP_OK) world_set_dirty(w, d, false);
    }
    if (st != BP_OK) world_drop_cells(w);  // a cache: rebuilt at its next use
    return st;
}

// ---------------------------------------------------------------------------------------------
// Probes: the changed proxies against the unchanged ones in the cells

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
                                     // into the near list being made
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
    if (world_touched(w, x) || w->groups.at[g].kind != BP_PROXY_STATIC || !world_overlap(p->fat, e, dim)) return;
    world_near_collect(&w->near, e, w->meta[x].slot, g);
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
    const world_group *g = &w->groups.at[world_entry_word(e, dim, 1)];
    const bool before = was && world_groups_pair(p->old_g, g);
    const bool now = is && world_groups_pair(p->new_g, g);
    if (before == now) return BP_OK;
    return world_evbuf_push(p->out, &w->heap, now, world_key(p->slot, w->meta[x].slot));
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
    return world_cells_visit(&w->cells, region, region + dim, world_probe_cell, p);
}

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
    p->near_hits = 0;
}

// Sets the probe for touched record r: its slot, old and new box and group.
static inline void world_probe_set(bp_world *w, world_probe *p, const world_touch *r, uint32_t d) {
    p->slot = r->slot;
    p->old_g = r->old_group != WORLD_NONE ? &w->groups.at[r->old_group] : NULL;
    p->new_g = d < WORLD_FREED ? &w->groups.at[w->meta[d].group] : NULL;
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
    bp_status st = world_cells_place(&w->cells, w->boxes, w->meta, d);
    if (st != BP_OK) {
        world_drop_cells(w);  // a cache: rebuilt at its next use
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
                world_cells_prefetch(&w->cells, u, u + dim, stage);
            } else {
                if (ob) world_cells_prefetch(&w->cells, ob, ob + dim, stage);
                if (nb) world_cells_prefetch(&w->cells, nb, nb + dim, stage);
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

static bp_status world_probe_all(bp_world *w, uint64_t *checks, bool ahead) {
    const size_t nt = w->touched_count;
    bp_pool *pool = bp_par_pool(w->all);
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
        BP_RESERVE(&w->heap, w->ev.keys[e], w->ev.cap[e], total);
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
    const bool parallel = bp_pool_workers(bp_par_pool(w->all)) > 1 && nt >= 2 * WORLD_PROBE_GRAIN;
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
                if (a < WORLD_FREED && w->meta[a].cell != WORLD_NONE) world_cells_prefetch_cell(&w->cells, w->meta[a].cell);
            }
            bp_status st = world_place_one(w, &w->touched[t]);
            if (st != BP_OK) return st;
        }
        bp_status st = world_probe_all(w, checks, ahead);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// The near pass

// One changed proxy against the static proxies: from its near list when the list answers for
// its old and new box, else from the cells, making its list on the way.
static inline bp_status world_near_one(bp_world *w, world_probe *p, const world_touch *r, const int DIM) {
    const uint32_t d = world_slot_state(w, r->slot);
    const float *ob = r->old_group != WORLD_NONE ? r->old_box : NULL;
    const float *nb = d < WORLD_FREED ? w->boxes + (size_t)d * (size_t)(2 * DIM) : NULL;
    if (!ob && !nb) return BP_OK;  // added and removed since the last update: nothing to decide
    const world_near *n = world_near_valid_dim(&w->near, r->slot, ob, nb, DIM);
    if (BP_LIKELY(n != NULL)) {
        p->checks += n->count;
        p->near_hits++;
        if (!n->count) return BP_OK;
        return world_near_events_dim(&w->near, n, &w->groups, r->slot, ob, r->old_group, nb,
                                     nb ? &w->meta[d] : NULL, p->out, DIM);
    }
    world_probe_set(w, p, r, d);
    if (!p->new_box) return world_probe_regions(w, p, NULL);  // removed: its old box alone
    float fat[6] = {0};
    world_near_fat(&w->near, r->slot, p->old_box, p->new_box, w->cells.c0, fat);
    p->fat = fat;
    world_near_begin(&w->near);
    bp_status st = world_probe_regions(w, p, fat);
    p->fat = NULL;
    if (st == BP_OK) world_near_store(&w->near, r->slot, p->new_box, fat);
    return st;
}

// The near pass's fetching ahead for touched record t (see world_patch_near).
static void world_near_prefetch(const bp_world *w, size_t t, size_t nt, size_t far, size_t mid, size_t near,
                                size_t next) {
    if (t + far < nt) {
        const uint32_t slot = w->touched[t + far].slot;
        __builtin_prefetch(&w->slot_word[slot]);
        world_near_prefetch_slot(&w->near, slot);
    }
    if (t + mid < nt) {
        const uint32_t slot = w->touched[t + mid].slot;
        const uint32_t a = world_slot_state(w, slot);
        if (a < WORLD_FREED) {
            __builtin_prefetch(w->boxes + (size_t)a * (size_t)(2 * w->dim));
            __builtin_prefetch(&w->meta[a]);
        }
        world_near_prefetch_record(&w->near, slot);
    }
    for (int stage = 0; stage < 2; ++stage) {
        const size_t u = t + (stage ? next : near);
        if (u >= nt) continue;
        const world_touch *r = &w->touched[u];
        const uint32_t a = world_slot_state(w, r->slot);
        const float *ob = r->old_group != WORLD_NONE ? r->old_box : NULL;
        const float *nb = a < WORLD_FREED ? w->boxes + (size_t)a * (size_t)(2 * w->dim) : NULL;
        const world_near *n = world_near_valid(&w->near, r->slot, ob, nb);
        if (n) {
            if (!stage) world_near_prefetch_entries(&w->near, n);
            continue;
        }
        float fat[6] = {0};
        if (nb) {
            world_near_fat(&w->near, r->slot, ob, nb, w->cells.c0, fat);
            nb = fat;
        }
        if (ob && nb && world_overlap(ob, nb, w->dim)) {
            float v[6] = {0};
            world_union(ob, nb, w->dim, v);
            world_cells_prefetch(&w->cells, v, v + w->dim, stage);
        } else {
            if (ob) world_cells_prefetch(&w->cells, ob, ob + w->dim, stage);
            if (nb) world_cells_prefetch(&w->cells, nb, nb + w->dim, stage);
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

// ---------------------------------------------------------------------------------------------
// Pairs among the changed proxies, every pair, committing the events

// Among the touched proxies: one stateless call on the union of each one's old and new box lists
// every pair that may have changed.
static bp_status world_patch_touched(bp_world *w, uint64_t *checks) {
    const int dim = w->dim;
    const size_t stride = (size_t)(2 * dim);
    const size_t k = w->touched_count;
    BP_RESERVE_DISCARD(&w->heap, w->scratch_boxes, w->scratch_cap, k * stride);
    BP_RESERVE_DISCARD(&w->heap, w->scratch_index, w->scratch_index_cap, k);
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
                            world_groups_pair(&w->groups.at[a->old_group], &w->groups.at[b->old_group]);
        const bool now = da < WORLD_FREED && db < WORLD_FREED && world_overlap(world_box(w, da), world_box(w, db), dim) &&
                         world_groups_pair(&w->groups.at[w->meta[da].group], &w->groups.at[w->meta[db].group]);
        if (before == now) continue;
        st = world_evbuf_push(&w->ev, &w->heap, now, world_key(a->slot, b->slot));
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Bits a pair key uses (slot_a << 32 | slot_b): the sorts skip the digits above.
static unsigned world_key_bits(const bp_world *w) {
    unsigned bits = 1;
    while (bits < 30 && ((size_t)1 << bits) < w->slots) ++bits;
    return 32 + bits;
}

// Every pair of the proxies as they are now, as sorted keys in w->rb_keys.
static bp_status world_all_pairs(bp_world *w, size_t *count, uint64_t *checks) {
    *count = 0;
    if (world_groups_live(&w->groups) == 1) {  // one group: pairs only if it pairs with itself
        const world_group *g = w->groups.at;
        while (!g->refs) ++g;
        if (!world_groups_pair(g, g)) return BP_OK;
    }
    bp_pairs out;
    bp_status st = w->dim == 2 ? bp_find_pairs2(w->all, (const bp_box2 *)(const void *)w->boxes, w->n, &out)
                               : bp_find_pairs3(w->all, (const bp_box3 *)(const void *)w->boxes, w->n, &out);
    if (st != BP_OK) return st;
    bp_stats cs;
    bp_get_stats(w->all, &cs);
    *checks += cs.checks;
    BP_RESERVE_DISCARD(&w->heap, w->rb_keys, w->rb_cap, out.count);
    BP_RESERVE_DISCARD(&w->heap, w->ev_tmp, w->ev_tmp_cap, out.count);
    size_t m = 0;
    // The pairs come in the method's order, their proxies all over the dense arrays: where every
    // proxy shares one filter group and sits in the slot of its own dense index (no proxy ever
    // removed or re-slotted), the keys are the pairs themselves, with no lookup per pair.
    if (world_groups_live(&w->groups) == 1 && !w->scattered) {
        for (size_t q = 0; q < out.count; ++q) w->rb_keys[q] = ((uint64_t)out.pairs[q].i << 32) | out.pairs[q].j;
        m = out.count;
    } else {
        for (size_t q = 0; q < out.count; ++q) {
            const uint32_t i = out.pairs[q].i, j = out.pairs[q].j;
            if (!world_groups_pair(&w->groups.at[w->meta[i].group], &w->groups.at[w->meta[j].group])) continue;
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
        world_near_drop(&w->near, w->freed[k]);
        world_set_slot_state(w, w->freed[k], WORLD_NONE);
        w->free_slots[w->free_count++] = w->freed[k];
    }
    w->freed_count = 0;
}

// Reserves what committing `ne` ends and `nb` begins needs.
static bp_status world_reserve_commit(bp_world *w, size_t ne, size_t nb) {
    BP_RESERVE_DISCARD(&w->heap, w->ev_out[0], w->ev_out_cap[0], ne);
    BP_RESERVE_DISCARD(&w->heap, w->ev_out[1], w->ev_out_cap[1], nb);
    BP_RESERVE(&w->heap, w->free_slots, w->free_cap, w->free_count + w->freed_count);
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// The two updates

// After the cells are built from scratch in an update (a level loading): every moving proxy's
// near list is made then too, so that the frames after it take the near
// pass at once rather than making every list in the first of them. A failure changes nothing
// (the lists not made are made when needed).
static void world_near_build_all(bp_world *w) {
    if (!w->cells.built || w->moving == 0 || w->moving == w->n || world_near_reserve(&w->near, w->slot_cap) != BP_OK)
        return;
    world_probe p;
    world_probe_init(&p, w, &w->ev);
    p.old_box = p.new_box = NULL;  // no events: the entries are only collected
    p.old_g = p.new_g = NULL;
    for (uint32_t d = 0; d < w->n; ++d) {
        if (world_is_static(w, d)) continue;
        float fat[6] = {0};
        world_near_fat(&w->near, w->meta[d].slot, NULL, world_box(w, d), w->cells.c0, fat);
        p.fat = fat;
        world_near_begin(&w->near);
        p.pass = 0;
        if (world_probe_visit(w, &p, fat) != BP_OK) return;
        world_near_store(&w->near, w->meta[d].slot, world_box(w, d), fat);
    }
    // Room for the lists to double as they are made again in the frames to come (a wave of
    // them in one frame would otherwise grow the pool in that frame).
    (void)bp_blocks_reserve(&w->near.blocks, 2 * w->near.blocks.used);
}

bp_status world_update_patch(bp_world *w, bp_world_events *events) {
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
    if (near) near = world_near_reserve(&w->near, w->slot_cap) == BP_OK;
    if (near) {
        st = world_patch_near(w, &checks);
    } else {
        st = world_catch_up(w);
        if (st == BP_OK) st = world_cells_reserve(&w->cells, w->meta, w->touched_count);
        if (st == BP_OK) st = world_patch_cells(w, &checks);
    }
    if (st == BP_OK) st = world_patch_touched(w, &checks);
    if (st != BP_OK) return st;
    size_t most = w->ev.count[0] > w->ev.count[1] ? w->ev.count[0] : w->ev.count[1];
    BP_RESERVE_DISCARD(&w->heap, w->ev_tmp, w->ev_tmp_cap, most);
    st = world_reserve_commit(w, w->ev.count[0], w->ev.count[1]);
    if (st == BP_OK) st = world_pairs_reserve_log(&w->pairs, w->ev.count[0] + w->ev.count[1]);
    if (st != BP_OK) return st;
    for (int k = 0; k < 2; ++k) bp_radix_sort64(w->ev.keys[k], NULL, w->ev_tmp, NULL, w->ev.count[k], world_key_bits(w));
    // Committed from here: nothing below can fail.
    world_pairs_log(&w->pairs, w->ev.keys[0], w->ev.count[0], w->ev.keys[1], w->ev.count[1]);
    world_fill_events(w, events);
    w->moved_since = 0;
    w->stats.changed = w->touched_count;
    w->stats.checks = checks;
    w->stats.rebuilt = false;
    world_settle(w);
    // Fold a log grown past half the set (amortized); failing to is harmless (it stays a log).
    if (world_pairs_fold_due(&w->pairs)) (void)world_pairs_fold(&w->pairs);
    if (fresh) world_near_build_all(w);  // the cells were built from scratch: the lists too
    return BP_OK;
}

bp_status world_update_rebuild(bp_world *w, bp_world_events *events) {
    uint64_t checks = 0;
    size_t count = 0;
    bp_status st = world_pairs_fold(&w->pairs);
    if (st == BP_OK) st = world_all_pairs(w, &count, &checks);
    if (st != BP_OK) return st;
    const size_t old = w->pairs.count;
    if (w->ev.cap[0] < old) BP_RESERVE_DISCARD(&w->heap, w->ev.keys[0], w->ev.cap[0], old);
    if (w->ev.cap[1] < count) BP_RESERVE_DISCARD(&w->heap, w->ev.keys[1], w->ev.cap[1], count);
    st = world_reserve_commit(w, old, count);
    if (st != BP_OK) return st;
    // Committed from here.
    world_pairs_replace(&w->pairs, &w->rb_keys, &w->rb_cap, count, &w->ev);
    world_fill_events(w, events);
    w->stats.changed = w->n + w->freed_count;
    w->stats.checks = checks;
    w->stats.rebuilt = true;
    w->stats.near_hits = 0;
    w->overflow = false;
    world_near_forget(&w->near);  // the static proxies may have changed unrecorded
    world_forget_touched(w);  // none recorded (the world stopped recording); the cells go stale
    world_settle(w);
    w->stale_queries = 0;
    // A rebuild forced by adding many proxies (a level loading, the first frame) rather than by
    // moving them is usually followed by frames where few move: build the cells now, in this
    // frame, rather than in the next one. A failure here changes nothing (they stay stale).
    if (w->def.mode == BP_WORLD_MODE_AUTO && w->moved_since <= world_patch_limit(w) &&
        world_build_cells(w) == BP_OK)
        world_near_build_all(w);
    w->moved_since = 0;
    return BP_OK;
}

