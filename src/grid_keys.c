// Method `grid`, sorted layout: the frame's order (seeds 003 and 004, docs/grid.md). Each box's
// cell key (the cell of its min corner in the finest level whose cells it spans at most two of
// per axis), then the boxes sorted by key with the shared radix sort. Temporal coherence: boxes
// are visited in last frame's order, so the new keys are almost sorted; the few that moved are
// pulled out, radix-sorted alone and merged back. Serially or with workers, the same result.
#include "grid.h"
#include "par.h"
#include "radix_sort.h"

// Marks, in last frame's order, a box that was pulled out to be sorted apart (never a real key).
#define GRID_MOVED (UINT32_MAX - 1)
// The coherent sort gives up (full radix sort) when more than 1/this of the boxes moved.
#define GRID_MOVED_MAX_DIV 4
// Boxes are read in last frame's sorted order, which is random in memory: prefetch this far
// ahead so that many cache (and TLB) misses are in flight at once.
#define GRID_PREFETCH 16

// The key of box b (min, max) from its level-0 cell range c0, c1, in the level whose shift on
// each axis is the smallest where the box spans at most two cells: a long thin box gets long thin
// cells. On the axes where a box is long (GRID_ELONGATION times its thinnest extent), the cells
// are at least as long as the box: otherwise boxes of one length, the long boxes of a scene,
// split over two levels by where they lie (a box a little shorter than two cells fits them when
// it lies within two, else takes the next level), and each level's boxes query the other's.
// `sticks` 2D (sticks of 40, cells 4.8 wide): 96% sat in cells 38.4 long, 4% in 76.8, and those
// 4% queried the 96% (a sixth of the frame); all in cells 76.8 long, 100,000: 9.7 -> 8.3 ms
// (medians of 6 alternating runs), 1,000,000: 118 -> 97; `sticks` 3D 100,000: 33.9 -> 29.9.
// (Cells grown to 5.1 x 40.8 so that the sticks fit cells barely longer: 8.9 ms, not kept.)
static inline uint32_t grid_key(const grid_geom *G, const float *b, const int64_t c0[3], const int64_t c1[3],
                                int *level) {
    const int d = G->dim;
    int l = 0, sh[3] = {0, 0, 0}, top = 0;
    // (Not for a box within two level-0 cells on every axis: the key passes' fast path keeps it
    // in level 0.)
    double len[3] = {0, 0, 0}, thin = INFINITY;
    bool fits0 = true;
    for (int a = 0; a < d; ++a) {
        len[a] = (double)b[d + a] - (double)b[a];
        thin = fmin(thin, len[a]);
        fits0 &= c1[a] - c0[a] <= 1;
    }
    for (int a = 0; a < d; ++a) {
        // No shift below bitlen(c1 - c0) - 1 can do: c1 - c0 would still be 2 cells or more.
        const uint64_t span = (uint64_t)(c1[a] - c0[a]);
        if (span > 1) {
            const int least = 63 - __builtin_clzll(span);
            sh[a] = least < G->axis_levels[a] - 1 ? least : G->axis_levels[a] - 1;
        }
        while ((c1[a] >> sh[a]) - (c0[a] >> sh[a]) > 1 && sh[a] + 1 < G->axis_levels[a]) ++sh[a];
        if (!fits0 && len[a] > GRID_ELONGATION * thin)
            while (len[a] > ldexp(G->cell[a], sh[a]) && sh[a] + 1 < G->axis_levels[a]) ++sh[a];
        if (sh[a] > top) top = sh[a];
    }
    // A box about as large on every axis (its shifts within one of the largest) takes the largest
    // on all of them: where cell boundaries fall would otherwise scatter similar boxes over up to
    // 2^d tuples of a few boxes each, and every such level queries the others (`mixed` 3D
    // 100,000: 700 large boxes in 30 levels -> 5; sizes with a heavy tail, 3D: each box queried
    // 30 levels). A box spans at most two cells of any coarser level too. Long boxes keep their
    // long cells. This once held only with few boxes above level 0 (docs/grid.md).
    for (int a = 0; a < d; ++a) {
        if (sh[a] + 1 >= top) sh[a] = top < G->axis_levels[a] ? top : G->axis_levels[a] - 1;
        l += sh[a] * G->level_mul[a];
    }
    const grid_level *L = &G->lv[l];
    uint64_t k = L->base;
    for (int a = 0; a < d; ++a) k += (uint64_t)((c0[a] >> sh[a]) + 1) * L->stride[a];
    *level = l;
    return (uint32_t)k;
}

// Pulling out, during the key pass, the boxes whose new key breaks last frame's order. Kept: a
// non-decreasing subsequence that holds every box whose key did not change (last frame's keys,
// `old`, are sorted) and each changed key that still fits below the next old key. Moved: the
// rest, marked GRID_MOVED in okeys and listed in mkeys/mpos, up to `cap` of them.
typedef struct grid_extract {
    const uint32_t *old;  // NULL: no coherence, nothing is pulled out
    uint32_t *mkeys, *mpos;
    size_t count, cap;
    uint32_t last;
} grid_extract;

static inline uint32_t grid_extract_one(grid_extract *x, size_t k, uint32_t key) {
    if (!x->old) return key;
    if (BP_LIKELY(key >= x->last && key <= x->old[k + 1])) {
        x->last = key;
        return key;
    }
    if (BP_UNLIKELY(x->count == x->cap)) {
        // Too many moved for a merge to pay: give up on coherence for this frame.
        x->old = NULL;
        return key;
    }
    x->mkeys[x->count] = key;
    x->mpos[x->count++] = (uint32_t)k;
    return GRID_MOVED;
}

// Keys and boxes in last frame's order (perm): boxes are read once, in an order close to the
// sorted one, and the gather after the sort reads oboxes almost sequentially.
static void grid_keys2(bp_grid *g, const bp_frame *f, size_t k0, size_t k1, grid_extract *x) {
    const grid_geom *G = &g->geom;
    const uint64_t sx = G->lv[0].stride[1];
    const uint32_t *BP_RESTRICT perm = g->sorted.perm;
    uint32_t *BP_RESTRICT ok = g->sorted.okeys;
    float *BP_RESTRICT ob = g->sorted.oboxes;
    const float *BP_RESTRICT src = f->boxes;
    const grid_map2 map = grid_map2_make(G);
    for (size_t k = k0; k < k1; ++k) {
        GRID_PREFETCH_READ(src + (size_t)perm[k + GRID_PREFETCH] * 4);
        int32_t c[4];
        grid_map2_box(&map, src + (size_t)perm[k] * 4, ob + 4 * k, c);
        const int64_t x0 = c[0], y0 = c[1], x1 = c[2], y1 = c[3];
        uint32_t key;
        if (BP_LIKELY(x1 - x0 <= 1 && y1 - y0 <= 1)) {
            key = (uint32_t)((uint64_t)(y0 + 1) * sx + (uint64_t)(x0 + 1));
        } else {
            int64_t c0[3] = {x0, y0, 0}, c1[3] = {x1, y1, 0};
            int l;
            key = grid_key(G, src + (size_t)perm[k] * 4, c0, c1, &l);
        }
        ok[k] = grid_extract_one(x, k, key);
    }
}

static void grid_keys3(bp_grid *g, const bp_frame *f, size_t k0, size_t k1, grid_extract *x) {
    const grid_geom *G = &g->geom;
    const uint64_t sx = G->lv[0].stride[1], sxy = G->lv[0].stride[2];
    const uint32_t *BP_RESTRICT perm = g->sorted.perm;
    uint32_t *BP_RESTRICT ok = g->sorted.okeys;
    float *BP_RESTRICT ob = g->sorted.oboxes;
    const float *BP_RESTRICT src = f->boxes;
    for (size_t k = k0; k < k1; ++k) {
        GRID_PREFETCH_READ(src + (size_t)perm[k + GRID_PREFETCH] * 6);
        const float *b = src + (size_t)perm[k] * 6;
        float *o = ob + 6 * k;
        for (int e = 0; e < 3; ++e) {
            o[e] = b[e];
            o[3 + e] = -b[3 + e];
        }
        int64_t c0[3], c1[3];
        grid_cells(G, b, c0, c1);
        uint32_t key;
        if (BP_LIKELY(c1[0] - c0[0] <= 1 && c1[1] - c0[1] <= 1 && c1[2] - c0[2] <= 1)) {
            key = (uint32_t)((uint64_t)(c0[2] + 1) * sxy + (uint64_t)(c0[1] + 1) * sx + (uint64_t)(c0[0] + 1));
        } else {
            int l;
            key = grid_key(G, b, c0, c1, &l);
        }
        ok[k] = grid_extract_one(x, k, key);
    }
}

// Writes the sorted frame (keys, boxes, next perm) from last frame's order. Coherent (x->old
// still set): merges the kept boxes (okeys in order, GRID_MOVED skipped) with the moved ones,
// radix-sorted alone. Otherwise: one radix sort of all the keys.
static void grid_sort_gather(bp_grid *g, size_t n, int d, grid_extract *x) {
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT np = g->sorted.perm2;
    uint32_t *BP_RESTRICT ok = g->sorted.okeys, *BP_RESTRICT mk = g->sorted.mkeys, *BP_RESTRICT mp = g->sorted.mpos;
    const uint32_t *BP_RESTRICT perm = g->sorted.perm;
    const float *BP_RESTRICT ob = g->sorted.oboxes;
    float *BP_RESTRICT bx = g->sorted.boxes;
    const size_t w = (size_t)(2 * d);
    if (x->old) {
        const size_t nm = x->count;
        g->sorted.moved = nm;
        // keys and perm2 are free until the merge: the small sort's buffers.
        bp_radix_sort32(mk, mp, keys, np, nm, g->sorted.key_bits);
        mk[nm] = GRID_SENTINEL;
        ok[n] = GRID_SENTINEL;
        size_t i = 0, j = 0;
        for (size_t o = 0; o < n; ++o) {
            while (ok[i] == GRID_MOVED) ++i;
            size_t p;
            // Ties: the kept box first (any order within a cell is valid).
            if (ok[i] <= mk[j]) {
                p = i++;
                keys[o] = ok[p];
            } else {
                p = mp[j];
                keys[o] = mk[j++];
            }
            np[o] = perm[p];
            if (d == 2) memcpy(bx + 4 * o, ob + 4 * p, 4 * sizeof(float));
            else memcpy(bx + 6 * o, ob + 6 * p, 6 * sizeof(float));
        }
        return;
    }
    // If the extraction gave up half-way, the boxes it had pulled out get their keys back.
    for (size_t t = 0; t < x->count; ++t) ok[mp[t]] = mk[t];
    g->sorted.moved = n;
    for (size_t k = 0; k < n; ++k) {
        keys[k] = ok[k];
        mp[k] = (uint32_t)k;
    }
    bp_radix_sort32(keys, mp, mk, np, n, g->sorted.key_bits);
    g->sorted.resorts++;
    for (size_t o = 0; o < n; ++o) {
        const size_t p = mp[o];
        np[o] = perm[p];
        memcpy(bx + w * o, ob + w * p, w * sizeof(float));  // (first frames only)
    }
}

// ---------------------------------------------------------------------------------------------
// The sorted frame with workers (docs/architecture.md, "Threads"): the keys, order and boxes of
// grid_keys2/3 + grid_sort_gather, bit for bit, built in passes that each cut the boxes into
// tasks. The pull-out of boxes that left last frame's order is a scan whose state (the last kept
// key) is known again at every box whose key did not change (it is always kept and becomes the
// last kept key), so each task scans from the first such box of its share to the first of the
// next share. The merge gives each task its kept boxes and the moved boxes that go before them.

typedef struct grid_par {
    bp_grid *g;
    const bp_frame *f;
    size_t n;
    int d;
    uint32_t tasks;
    const uint32_t *old;  // last frame's sorted keys (coherent frames)
    size_t *u;            // tasks + 1: where each task's scan starts (the last: n)
    size_t *moved;        // per task: boxes it pulled out (stored at mkeys/mpos + u[t])
    size_t *at;           // per task: its first output position
    size_t *jm;           // tasks + 1: its first moved box (sorted moved order)
    uint32_t *full;       // full sort: positions by key
} grid_par;

static void grid_par_share(const grid_par *j, uint32_t t, size_t *b, size_t *e) { bp_par_range(j->n, j->tasks, t, b, e); }

static void grid_par_identity_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    size_t b, e;
    grid_par_share(j, t, &b, &e);
    for (size_t k = b; k < e; ++k) j->g->sorted.perm[k] = (uint32_t)k;
}

static void grid_par_keys_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    size_t b, e;
    grid_par_share(j, t, &b, &e);
    grid_extract none = {NULL, NULL, NULL, 0, 0, 0};
    if (j->d == 2) grid_keys2(j->g, j->f, b, e, &none);
    else grid_keys3(j->g, j->f, b, e, &none);
}

// The first box at or after k whose key did not change (n when none).
static size_t grid_par_sync(const grid_par *j, size_t k) {
    const uint32_t *ok = j->g->sorted.okeys;
    while (k < j->n && ok[k] != j->old[k]) ++k;
    return k;
}

// Where task t's scan starts (a pass of its own: the scan writes marks that another task's
// search for its start would read).
static void grid_par_sync_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    size_t b, e;
    grid_par_share(j, t, &b, &e);
    j->u[t] = t == 0 ? 0 : grid_par_sync(j, b);
}

static void grid_par_extract_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    const size_t from = j->u[t], to = j->u[t + 1];
    uint32_t *BP_RESTRICT ok = j->g->sorted.okeys;
    uint32_t *BP_RESTRICT mk = j->g->sorted.mkeys + from, *BP_RESTRICT mp = j->g->sorted.mpos + from;
    const uint32_t *BP_RESTRICT old = j->old;
    size_t m = 0;
    uint32_t last = 0;
    for (size_t k = from; k < to; ++k) {
        const uint32_t key = ok[k];
        if (BP_LIKELY(key >= last && key <= old[k + 1])) {
            last = key;
            continue;
        }
        mk[m] = key;
        mp[m++] = (uint32_t)k;
        ok[k] = GRID_MOVED;
    }
    j->moved[t] = m;
}

// Too many moved (the serial scan gives up at the same count): their keys go back.
static void grid_par_restore_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    const uint32_t *mk = j->g->sorted.mkeys + j->u[t], *mp = j->g->sorted.mpos + j->u[t];
    for (size_t i = 0; i < j->moved[t]; ++i) j->g->sorted.okeys[mp[i]] = mk[i];
}

// Task t's kept boxes (okeys[u[t] .. u[t+1]) not pulled out) merged with the moved boxes
// jm[t] .. jm[t+1], ties to the kept box: grid_sort_gather's merge, from position at[t]. The
// arrays are read through restrict locals: through g, each box's copy (a memcpy, which may
// write anything) made the compiler load every pointer again for the next box.
static void grid_par_merge_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    const bp_grid *g = j->g;
    const uint32_t *BP_RESTRICT ok = g->sorted.okeys, *BP_RESTRICT mk = g->sorted.mkeys;
    const uint32_t *BP_RESTRICT mp = g->sorted.mpos;
    const uint32_t *BP_RESTRICT perm = g->sorted.perm;
    const float *BP_RESTRICT ob = g->sorted.oboxes;
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT np = g->sorted.perm2;
    float *BP_RESTRICT bx = g->sorted.boxes;
    const size_t w = (size_t)(2 * j->d);
    size_t i = j->u[t];
    const size_t i1 = j->u[t + 1], j1 = j->jm[t + 1];
    size_t m = j->jm[t], o = j->at[t];
    for (;; ++o) {
        while (i < i1 && ok[i] == GRID_MOVED) ++i;
        size_t p;
        if (i < i1 && (m == j1 || ok[i] <= mk[m])) {
            p = i;
            keys[o] = ok[i++];
        } else if (m < j1) {
            p = mp[m];
            keys[o] = mk[m++];
        } else {
            break;
        }
        np[o] = perm[p];
        if (w == 4) memcpy(bx + 4 * o, ob + 4 * p, 4 * sizeof(float));
        else memcpy(bx + 6 * o, ob + 6 * p, 6 * sizeof(float));
    }
}

static void grid_par_fill_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    size_t b, e;
    grid_par_share(j, t, &b, &e);
    for (size_t k = b; k < e; ++k) {
        j->g->keys[k] = j->g->sorted.okeys[k];
        j->full[k] = (uint32_t)k;
    }
}

static void grid_par_gather_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    size_t b, e;
    grid_par_share(j, t, &b, &e);
    bp_grid *g = j->g;
    const size_t w = (size_t)(2 * j->d);
    for (size_t o = b; o < e; ++o) {
        const size_t p = j->full[o];
        g->sorted.perm2[o] = g->sorted.perm[p];
        memcpy(g->sorted.boxes + w * o, g->sorted.oboxes + w * p, w * sizeof(float));
    }
}

// The keys, order and boxes of the frame into keys / perm2 / boxes, as the serial passes make
// them. `reset`: perm starts over (identity); `coherent`: pull out and merge.
static bp_status grid_par_build(bp_grid *g, const bp_frame *f, bool reset, bool coherent) {
    bp_context *ctx = g->base.ctx;
    const size_t n = f->n;
    grid_par j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.f = f;
    j.n = n;
    j.d = f->dim;
    j.tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP);
    j.old = g->keys;
    bp_status st = BP_OK;
    size_t *sc = bp_par_scratch(ctx, (4 * (size_t)j.tasks + 2) * sizeof(size_t), &st);
    if (st != BP_OK) return st;
    j.u = sc;
    j.moved = sc + j.tasks + 1;
    j.at = j.moved + j.tasks;
    j.jm = j.at + j.tasks;
    if (reset) st = bp_par_run(ctx, j.tasks, grid_par_identity_task, &j);
    // The prefetches of the key pass read perm up to GRID_PREFETCH past a task's share.
    if (st == BP_OK) st = bp_par_run(ctx, j.tasks, grid_par_keys_task, &j);
    if (st != BP_OK) return st;
    if (coherent) {
        j.u[j.tasks] = n;
        st = bp_par_run(ctx, j.tasks, grid_par_sync_task, &j);
        if (st == BP_OK) st = bp_par_run(ctx, j.tasks, grid_par_extract_task, &j);
        if (st != BP_OK) return st;
        size_t nm = 0;
        for (uint32_t t = 0; t < j.tasks; ++t) nm += j.moved[t];
        if (nm > n / GRID_MOVED_MAX_DIV) {
            st = bp_par_run(ctx, j.tasks, grid_par_restore_task, &j);
            if (st != BP_OK) return st;
            coherent = false;
        } else {
            // The moved lists side by side (each moves down, in order: no overlap with what is
            // still to move), then sorted alone with keys / perm2 as scratch.
            uint32_t *mk = g->sorted.mkeys, *mp = g->sorted.mpos;
            size_t at = 0;
            for (uint32_t t = 0; t < j.tasks; ++t) {
                memmove(mk + at, mk + j.u[t], j.moved[t] * sizeof *mk);
                memmove(mp + at, mp + j.u[t], j.moved[t] * sizeof *mp);
                at += j.moved[t];
            }
            g->sorted.moved = nm;
            st = bp_par_radix32(ctx, mk, mp, g->keys, g->sorted.perm2, nm, g->sorted.key_bits);
            if (st != BP_OK) return st;
            mk[nm] = GRID_SENTINEL;
            // Each task's moved boxes: those below its first kept key (none kept: the next's).
            size_t kept_before = 0, next = nm;
            for (uint32_t t = j.tasks; t-- > 0;) {
                size_t i = j.u[t];
                while (i < j.u[t + 1] && g->sorted.okeys[i] == GRID_MOVED) ++i;
                if (i < j.u[t + 1]) next = grid_lower_bound32(mk, 0, next, g->sorted.okeys[i]);
                j.jm[t] = next;
            }
            j.jm[0] = 0;
            j.jm[j.tasks] = nm;
            for (uint32_t t = 0; t < j.tasks; ++t) {
                j.at[t] = kept_before + j.jm[t];
                kept_before += (j.u[t + 1] - j.u[t]) - j.moved[t];
            }
            return bp_par_run(ctx, j.tasks, grid_par_merge_task, &j);
        }
    }
    g->sorted.moved = n;
    j.full = g->sorted.mpos;
    st = bp_par_run(ctx, j.tasks, grid_par_fill_task, &j);
    if (st == BP_OK)
        st = bp_par_radix32(ctx, g->keys, g->sorted.mpos, g->sorted.mkeys, g->sorted.perm2, n, g->sorted.key_bits);
    g->sorted.resorts++;
    if (st == BP_OK) st = bp_par_run(ctx, j.tasks, grid_par_gather_task, &j);
    return st;
}

uint32_t bp_grid_key(const grid_geom *G, const float *b, const int64_t c0[3], const int64_t c1[3], int *level) {
    return grid_key(G, b, c0, c1, level);
}

bp_status bp_grid_sort_frame(bp_grid *g, const bp_frame *f, bool reset, bool coherent) {
    grid_sorted *s = &g->sorted;
    const size_t n = f->n;
    const uint64_t full = s->resorts;
    for (size_t k = n; k < n + GRID_PAD; ++k) s->perm[k] = 0;  // read by the prefetches
    if (bp_par_tasks(g->base.ctx, n, BP_PAR_GRAIN_MAP) > 1) {
        const bp_status st = grid_par_build(g, f, reset, coherent);
        if (st != BP_OK) return st;
    } else {
        if (reset)
            for (size_t k = 0; k < n; ++k) s->perm[k] = (uint32_t)k;
        grid_extract x = {coherent ? g->keys : NULL, s->mkeys, s->mpos, 0, n / GRID_MOVED_MAX_DIV, 0};
        if (f->dim == 2) grid_keys2(g, f, 0, n, &x);
        else grid_keys3(g, f, 0, n, &x);
        grid_sort_gather(g, n, f->dim, &x);
    }
    s->coherent = s->resorts == full;
    s->given_up += coherent && !s->coherent;
    // The new order becomes next frame's starting point.
    BP_SWAP_ARRAYS(s->perm, s->perm_cap, s->perm2, s->perm2_cap);
    return BP_OK;
}
