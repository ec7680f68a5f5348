// Method `grid`, table layout (docs/grid.md, "Small worlds"): in a small 2D world the cells are
// linked lists through a table of every level-0 cell, filled in input order.
//
// With few boxes the sorted layout is bound by its fixed cost per box, not by memory: the key
// pass, the merge of the boxes that changed cell, and the cursor that finds the next row (a
// chain of dependent loads from box to box). When level 0 has few cells, so that a table of
// list heads for all of them stays in cache, and every box fits level 0, the grid instead links
// each box into its cell's list: no sort and no order to keep, and the five lists a box meets
// (the rest of its own cell, the next cell, three cells of the next row) are direct loads of
// the table, independent from box to box. Same cells, same keys as the sorted layout.
#include "grid.h"
#include "par.h"

// The key and candidate passes have 16-wide AVX-512 loops, chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BP_NO_AVX512)
#define GRID_AVX512 1
#include <immintrin.h>
#endif

#ifndef GRID_TABLE_MAX_CELLS
#define GRID_TABLE_MAX_CELLS ((uint64_t)1 << 20)  // 4 MiB of list heads
#endif
// Sparser than this many cells per box, the table costs more to keep than the sort it saves.
#define GRID_TABLE_CELLS_PER_BOX 16

// Whether the table can serve this frame (not whether it should: see grid_table_fits).
bool bp_grid_table_possible(const bp_grid *g, const bp_frame *f) {
    const grid_geom *G = &g->geom;
    if (f->dim != 2 || f->n == 0 || f->n >= GRID_EMPTY || G->lv[0].size > GRID_TABLE_MAX_CELLS) return false;
    // Every box must fit level 0 (checked exactly while linking; this spares a wasted pass).
    for (int a = 0; a < 2; ++a)
        if (!((double)f->size_max[a] <= G->cell[a])) return false;
    return true;
}

// AUTO takes the table for sparse cells only: where many boxes share a cell (`clustered` from
// ~10,000 boxes, `seed`, `line`) the lists are walked box by box and the sorted runs are faster
// (docs/grid.md). Crowding is the share of boxes whose cell already held one, measured on the
// last frame by either layout; two thresholds so that a scene near one does not flip-flop
// (each switch to the sorted layout costs it a full sort).
#define GRID_CROWDED_ABOVE 0.30
#define GRID_SPARSE_BELOW 0.20

static bool grid_table_fits(const bp_grid *g, const bp_frame *f) {
    const bp_grid_layout layout = g->layout;
    if (layout == BP_GRID_LAYOUT_SORTED || !bp_grid_table_possible(g, f)) return false;
    if (layout == BP_GRID_LAYOUT_TABLE) return true;
    return !g->table.crowded && g->geom.lv[0].size <= (uint64_t)GRID_TABLE_CELLS_PER_BOX * f->n;
}

// Records this frame's crowding: `shared` of n boxes found their cell occupied.
void bp_grid_note_crowding(bp_grid *g, size_t shared, size_t n) {
    const double frac = n ? (double)shared / (double)n : 0.0;
    g->table.crowded = g->table.crowded ? frac > GRID_SPARSE_BELOW : frac > GRID_CROWDED_ABOVE;
}

static void grid_fill_range(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    uint32_t *BP_RESTRICT head = user;
    for (size_t c = b; c < e; ++c) head[c] = GRID_EMPTY;
}

// Puts the table back to all GRID_EMPTY. A fill of the range the last call used: cheaper than
// clearing its boxes' cells one by one (random stores), as the table has few cells per box.
static void grid_table_clear(bp_grid *g) {
    // A fill cannot fail but through misbehaving task hooks: then serially.
    if (bp_par_for(g->base.ctx, g->table.dirty, 8 * BP_PAR_GRAIN_MAP, grid_fill_range, g->table.head) != BP_OK)
        grid_fill_range(g->table.head, 0, 0, g->table.dirty);
    g->table.dirty = 0;
}

static bp_status grid_table_reserve(bp_grid *g, size_t n) {
    bp_context *ctx = g->base.ctx;
    const size_t cells = (size_t)g->geom.lv[0].size;
    BP_RESERVE_DISCARD(ctx, g->keys, g->keys_cap, n + GRID_PAD);
    BP_RESERVE_DISCARD(ctx, g->table.next, g->table.next_cap, n + 1);
    if (cells > g->table.head_cap) {
        bp_status st = BP_OK;
        uint32_t *h = bp_grow(ctx, g->table.head, &g->table.head_cap, cells, sizeof *h, false, &st);
        if (st != BP_OK) return st;
        g->table.head = h;
        g->table.head_ok = false;
    }
    if (!g->table.head_ok) {
        for (size_t c = 0; c < g->table.head_cap; ++c) g->table.head[c] = GRID_EMPTY;
        g->table.head_ok = true;
    }
    return BP_OK;
}

#if defined(GRID_AVX512)
// The key pass of grid_table_link2 for whole groups of 16 boxes, four to a register, the same
// arithmetic as the SSE loop. Returns the boxes done; ORs (span - 1) > 0 flags into *wide.
__attribute__((target("avx512f"))) static size_t grid_table_keys_avx512(const grid_geom *G, const float *src,
                                                                        size_t n, uint32_t *BP_RESTRICT keys,
                                                                        uint32_t *wide) {
    const __m512 O = _mm512_setr4_ps(G->fo[0], G->fo[1], G->fo[0], G->fo[1]);
    const __m512 I = _mm512_setr4_ps(G->fi[0], G->fi[1], G->fi[0], G->fi[1]);
    const __m512 M = _mm512_setr4_ps(G->fg[0], G->fg[1], G->fg[0], G->fg[1]);
    const int sx = (int)G->lv[0].stride[1];
    // key = x0 + y0 * sx + sx + 1, summed in lane 0 of each box.
    const __m512i mul = _mm512_setr4_epi32(1, sx, 0, 0);
    const __m512i base = _mm512_set1_epi32(sx + 1);
    __m512i span = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m512i key4[4];
        for (int q = 0; q < 4; ++q) {
            const __m512 v = _mm512_loadu_ps(src + 4 * (k + 4 * (size_t)q));
            __m512 t = _mm512_mul_ps(_mm512_sub_ps(v, O), I);
            t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), M);
            const __m512i c = _mm512_cvttps_epi32(t);
            // (x1 - x0, y1 - y0) in lanes 2 and 3: above 1 means a coarser level.
            span = _mm512_or_si512(span, _mm512_sub_epi32(c, _mm512_shuffle_epi32(c, _MM_PERM_BADC)));
            const __m512i p = _mm512_mullo_epi32(c, mul);
            key4[q] = _mm512_add_epi32(p, _mm512_shuffle_epi32(p, _MM_PERM_AAAB));
        }
        // Lane 0 of each box (lanes 0, 4, 8, 12 of each register) into one register of 16.
        const __m512i lo = _mm512_permutex2var_epi32(
            key4[0], _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), key4[1]);
        const __m512i hi = _mm512_permutex2var_epi32(
            key4[2], _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), key4[3]);
        const __m512i all = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
        _mm512_storeu_si512((void *)(keys + k), _mm512_add_epi32(all, base));
    }
    // Only lanes 2 and 3 hold spans (lanes 0 and 1 hold x0 - x1 and y0 - y1, <= 0).
    const __m512i spans = _mm512_and_si512(span, _mm512_setr4_epi32(0, 0, -1, -1));
    *wide |= (uint32_t)_mm512_reduce_or_epi32(_mm512_srli_epi32(spans, 1));
    return k;
}
#endif

// Pushes box k on the list of cell `key`; 1 when the cell already held a box.
static inline unsigned grid_table_push(uint32_t *BP_RESTRICT head, uint32_t *BP_RESTRICT next, uint32_t key,
                                       uint32_t k) {
    const uint32_t h = head[key];
    next[k] = h;
    head[key] = k | (h != GRID_EMPTY ? GRID_MULTI : 0u);
    return h != GRID_EMPTY;
}

// A 2D box's table key (its level-0 cell, past the border of one cell); ORs into *wide a nonzero
// value when it spans more than two cells on an axis (coordinates are monotone: x1 >= x0).
static inline uint32_t grid_table_key(const grid_map2 *map, uint32_t sx, const float *box, uint32_t *wide) {
    int32_t c[4];
    grid_map2_cells(map, box, c);
    const uint32_t x0 = (uint32_t)c[0], y0 = (uint32_t)c[1], x1 = (uint32_t)c[2], y1 = (uint32_t)c[3];
    *wide |= ((x1 - x0) | (y1 - y0)) >> 1;
    return (y0 + 1) * sx + x0 + 1;
}

// The key pass alone over boxes [b, e) (the workers' form of grid_table_link2's first half):
// ORs into *wide as there.
static void grid_table_keys(bp_grid *g, const bp_frame *f, size_t b, size_t e, uint32_t *wide) {
    const grid_geom *G = &g->geom;
    const uint32_t sx = G->lv[0].stride[1];
    uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT src = f->boxes;
    size_t k = b;
#if defined(GRID_AVX512)
    if (bp_cpu_avx512()) k += grid_table_keys_avx512(G, src + 4 * b, e - b, keys + b, wide);
#endif
    const grid_map2 map = grid_map2_make(G);
    for (; k < e; ++k) keys[k] = grid_table_key(&map, sx, src + 4 * k, wide);
}

// With workers the lists are linked by bands of cells instead of in input order: a cell's list
// is its boxes in decreasing index order however they are pushed, as long as each band pushes its
// boxes in input order. The key pass (one task per share of the input) also sorts its share's
// boxes by band, stably, into its part of idx; the link pass (one task per band) clears the
// band's cells and pushes the band's boxes share by share, each box's link going to prev at its
// place in idx (written next[box], the two bands' tasks would share every cache line of next);
// a last pass per share moves its boxes' links to next. All three scale with the workers, and a
// band's cells (at most GRID_TABLE_MAX_CELLS / its tasks) stay in its core's cache between the
// clear and the pushes.
#define GRID_LINK_MAX_BANDS 64

typedef struct grid_link_job {
    bp_grid *g;
    const bp_frame *f;
    size_t n;
    uint32_t tasks;   // shares of the input (the key pass)
    uint32_t bands;   // bands of 2^shift cells (the link pass)
    unsigned shift;
    size_t cells;     // level-0 cells; the last band also clears [cells, fill)
    size_t fill;
    uint32_t *idx;    // per share: its boxes by band, in input order within a band
    uint32_t *bkey;   // keys[idx[q]], at q: the link pass reads it in order (through idx, each
                      // band's pass read nearly every line of keys)
    uint32_t *prev;   // next[idx[q]], at q
    uint32_t *start;  // per share: bands + 1 offsets into its part of idx
    uint32_t *wide;   // per share
    uint32_t *shared; // per band: boxes whose cell already held one
} grid_link_job;

static void grid_table_keys_task(void *user, uint32_t t, size_t b, size_t e) {
    const grid_link_job *j = user;
    uint32_t wide = 0;
    grid_table_keys(j->g, j->f, b, e, &wide);
    j->wide[t] = wide;
    const uint32_t *BP_RESTRICT keys = j->g->keys;
    const unsigned shift = j->shift;
    uint32_t *BP_RESTRICT start = j->start + (size_t)t * (j->bands + 1);
    uint32_t pos[GRID_LINK_MAX_BANDS + 1];
    memset(pos, 0, (j->bands + 1) * sizeof *pos);
    for (size_t k = b; k < e; ++k) ++pos[(keys[k] >> shift) + 1];
    for (uint32_t a = 1; a <= j->bands; ++a) pos[a] += pos[a - 1];
    memcpy(start, pos, (j->bands + 1) * sizeof *pos);
    uint32_t *BP_RESTRICT idx = j->idx + b, *BP_RESTRICT bkey = j->bkey + b;
    for (size_t k = b; k < e; ++k) {
        const uint32_t key = keys[k], q = pos[key >> shift]++;
        idx[q] = (uint32_t)k;
        bkey[q] = key;
    }
}

static void grid_table_band_task(void *user, uint32_t a, uint32_t worker) {
    (void)worker;
    const grid_link_job *j = user;
    uint32_t *BP_RESTRICT head = j->g->table.head, *BP_RESTRICT prev = j->prev;
    const uint32_t *BP_RESTRICT bkey = j->bkey, *BP_RESTRICT idx = j->idx;
    const size_t c0 = (size_t)a << j->shift;
    size_t c1 = c0 + ((size_t)1 << j->shift);
    if (c1 > j->cells) c1 = j->cells;
    if (a + 1 == j->bands && c1 < j->fill) c1 = j->fill;
    for (size_t c = c0; c < c1; ++c) head[c] = GRID_EMPTY;
    size_t shared = 0;
    for (uint32_t t = 0; t < j->tasks; ++t) {
        size_t b, e;
        bp_par_range(j->n, j->tasks, t, &b, &e);
        const uint32_t *start = j->start + (size_t)t * (j->bands + 1);
        for (size_t q = b + start[a]; q < b + start[a + 1]; ++q) {
            const uint32_t k = idx[q], key = bkey[q], h = head[key];
            prev[q] = h;
            head[key] = k | (h != GRID_EMPTY ? GRID_MULTI : 0u);
            shared += h != GRID_EMPTY;
        }
    }
    j->shared[a] = (uint32_t)shared;
}

static void grid_table_next_task(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const grid_link_job *j = user;
    uint32_t *BP_RESTRICT next = j->g->table.next;
    const uint32_t *BP_RESTRICT idx = j->idx, *BP_RESTRICT prev = j->prev;
    for (size_t q = b; q < e; ++q) next[idx[q]] = prev[q];
}

// With workers: keys and links as grid_table_link2 (below), which the table then equals; the
// table's old contents are cleared here, not by the caller. Returns as grid_table_link2 (false:
// the table is still the last call's), or *st = an error of the workers (the same).
static bool grid_table_link2_par(bp_grid *g, const bp_frame *f, size_t n, uint32_t tasks, bp_status *st) {
    bp_context *ctx = g->base.ctx;
    grid_link_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.f = f;
    j.n = n;
    j.tasks = tasks;
    j.cells = (size_t)g->geom.lv[0].size;
    j.fill = g->table.dirty > j.cells ? g->table.dirty : j.cells;
    // As many bands as shares (a few per worker), each a power of two of cells.
    const size_t most = tasks < GRID_LINK_MAX_BANDS ? tasks : GRID_LINK_MAX_BANDS;
    while (((j.cells - 1) >> j.shift) + 1 > most) ++j.shift;
    j.bands = (uint32_t)(((j.cells - 1) >> j.shift) + 1);
    grid_table *T = &g->table;
    T->idx = bp_grow(ctx, T->idx, &T->idx_cap, n, sizeof *T->idx, false, st);
    if (*st != BP_OK) return false;
    j.idx = T->idx;
    T->prev = bp_grow(ctx, T->prev, &T->prev_cap, n, sizeof *T->prev, false, st);
    if (*st != BP_OK) return false;
    j.prev = T->prev;
    T->bkey = bp_grow(ctx, T->bkey, &T->bkey_cap, n, sizeof *T->bkey, false, st);
    if (*st != BP_OK) return false;
    j.bkey = T->bkey;
    const size_t words = (size_t)tasks * (j.bands + 2) + j.bands;
    j.wide = bp_par_scratch(ctx, words * sizeof(uint32_t), st);
    if (*st != BP_OK) return false;
    j.shared = j.wide + tasks;
    j.start = j.shared + j.bands;
    *st = bp_par_split(ctx, tasks, n, grid_table_keys_task, &j);
    if (*st != BP_OK) return false;
    uint32_t wide = 0;
    for (uint32_t t = 0; t < tasks; ++t) wide |= j.wide[t];
    if (wide) return false;
    *st = bp_par_run(ctx, j.bands, grid_table_band_task, &j);
    g->table.dirty = j.fill;  // what a failed pass may have left, to the caller's clear
    if (*st == BP_OK) *st = bp_par_split(ctx, tasks, n, grid_table_next_task, &j);
    if (*st != BP_OK) return false;
    size_t shared = 0;
    for (uint32_t a = 0; a < j.bands; ++a) shared += j.shared[a];
    bp_grid_note_crowding(g, shared, n);
    g->table.dirty = j.cells;
    return true;
}

// Keys in input order, each box pushed on its cell's list. False when a
// box spans more than two cells on an axis (it needs a coarser level): the caller undoes it.
static bool grid_table_link2(bp_grid *g, const bp_frame *f, size_t n) {
    const grid_geom *G = &g->geom;
    const uint32_t sx = G->lv[0].stride[1];
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->table.head, *BP_RESTRICT next = g->table.next;
    const float *BP_RESTRICT src = f->boxes;
    uint32_t wide = 0;
    size_t shared = 0;
    size_t k = 0;
#if defined(GRID_AVX512)
    if (bp_cpu_avx512()) {
        k = grid_table_keys_avx512(G, src, n, keys, &wide);
        for (size_t q = 0; q < k; ++q) shared += grid_table_push(head, next, keys[q], (uint32_t)q);
    }
#endif
    const grid_map2 map = grid_map2_make(G);
    for (; k < n; ++k) {
        const uint32_t key = grid_table_key(&map, sx, src + 4 * k, &wide);
        keys[k] = key;
        shared += grid_table_push(head, next, key, (uint32_t)k);
    }
    bp_grid_note_crowding(g, shared, n);
    g->table.dirty = (size_t)G->lv[0].size;
    return wide == 0;
}

// Whether 2D boxes a and b (min, max: the frame's, not copied) overlap, touching included.
static inline unsigned grid_table_hit(const float *a, const float *b) {
#if defined(__SSE2__)
    // (b min, -b max) <= (a max, -a min), lane by lane.
    const __m128 A = _mm_loadu_ps(a), s = _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f);
    const __m128 P = _mm_xor_ps(_mm_shuffle_ps(A, A, _MM_SHUFFLE(1, 0, 3, 2)), s);
    return _mm_movemask_ps(_mm_cmple_ps(_mm_xor_ps(_mm_loadu_ps(b), s), P)) == 15;
#else
    return (b[0] <= a[2]) & (b[1] <= a[3]) & (a[0] <= b[2]) & (a[1] <= b[3]);
#endif
}

// The pairs of box i with the boxes after the first of the list `link` starts (pass 1 listed
// the first two boxes of every list; this walks on from the second's link).
static bp_status grid_table_rest(const bp_grid *g, const float *boxes, uint32_t i, uint32_t link, bp_sink *sink,
                                 uint64_t *checks) {
    const uint32_t *next = g->table.next;
    for (uint32_t u = next[link & ~GRID_MULTI]; (u & ~GRID_MULTI) != GRID_EMPTY; u = next[u & ~GRID_MULTI]) {
        const uint32_t e = u & ~GRID_MULTI;
        ++*checks;
        if (grid_table_hit(boxes + 4 * (size_t)i, boxes + 4 * (size_t)e)) {
            bp_status st = bp_sink_push(sink, i, e);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}

// The five lists box i meets: the boxes before it in its own cell, the next cell, and the three
// cells of the next row.
static inline void grid_table_links(const bp_grid *g, uint32_t i, uint32_t link[5]) {
    const uint32_t K = g->keys[i], sx = g->geom.lv[0].stride[1];
    link[0] = g->table.next[i];
    link[1] = g->table.head[K + 1];
    link[2] = g->table.head[K + sx - 1];
    link[3] = g->table.head[K + sx];
    link[4] = g->table.head[K + sx + 1];
}

// Boxes per block of the pair passes: the candidate buffers (up to 10 per box) stay in L1.
#define GRID_TABLE_BLOCK 128

// Pass 1 for boxes [i0, i1): appends the candidates to ci/ce (room for 10 per box and 16 more):
// the first box of each list, and its second when the list has two or more. The boxes with a
// list of three or more go to slow. Returns the candidate count.
static size_t grid_table_cands(const bp_grid *g, uint32_t i0, uint32_t i1, uint32_t *BP_RESTRICT ci,
                               uint32_t *BP_RESTRICT ce, uint32_t *BP_RESTRICT slow, size_t *ns_out) {
    const uint32_t *BP_RESTRICT next = g->table.next;
    const uint32_t last = (uint32_t)g->n;  // next[last] is GRID_EMPTY
    size_t nc = 0, ns = 0;
    for (uint32_t i = i0; i < i1; ++i) {
        uint32_t link[5];
        grid_table_links(g, i, link);
        uint32_t deep = 0;
        for (int r = 0; r < 5; ++r) {
            const uint32_t e = link[r] & ~GRID_MULTI;
            ci[nc] = i;
            ce[nc] = e;
            nc += e != GRID_EMPTY;
            const uint32_t l2 = next[e < last ? e : last];
            ci[nc] = i;
            ce[nc] = l2 & ~GRID_MULTI;
            nc += link[r] >> 31;
            deep |= l2;  // flagged only when the list holds three or more
        }
        slow[ns] = i;
        ns += deep >> 31;
    }
    *ns_out = ns;
    return nc;
}

#if defined(GRID_AVX512)
// Pass 1, 16 boxes at a time: the four table links by gathers, each list's candidates appended
// by a compress (to a register, then a full store: the buffers have 16 entries of slack).
// Second boxes, rare on sparse scenes, behind one test per 16 boxes.
__attribute__((target("avx512f,popcnt"))) static size_t grid_table_cands_avx512(
    const bp_grid *g, uint32_t i0, uint32_t i1, uint32_t *BP_RESTRICT ci, uint32_t *BP_RESTRICT ce,
    uint32_t *BP_RESTRICT slow, size_t *ns_out) {
    const uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT head = g->table.head, *BP_RESTRICT next = g->table.next;
    const __m512i sx = _mm512_set1_epi32((int)g->geom.lv[0].stride[1]);
    const __m512i one = _mm512_set1_epi32(1), empty = _mm512_set1_epi32((int)GRID_EMPTY);
    const __m512i multi = _mm512_set1_epi32((int)GRID_MULTI);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    size_t nc = 0, ns = 0;
    for (uint32_t i = i0; i < i1; i += 16) {
        const __mmask16 m = (__mmask16)(i1 - i >= 16 ? 0xFFFFu : (1u << (i1 - i)) - 1u);
        const __m512i I = _mm512_add_epi32(_mm512_set1_epi32((int)i), iota);
        const __m512i K = _mm512_maskz_loadu_epi32(m, keys + i);
        const __m512i row = _mm512_add_epi32(K, sx);
        __m512i l[5];
        l[0] = _mm512_mask_loadu_epi32(empty, m, next + i);
        l[1] = _mm512_mask_i32gather_epi32(empty, m, _mm512_add_epi32(K, one), head, 4);
        l[2] = _mm512_mask_i32gather_epi32(empty, m, _mm512_sub_epi32(row, one), head, 4);
        l[3] = _mm512_mask_i32gather_epi32(empty, m, row, head, 4);
        l[4] = _mm512_mask_i32gather_epi32(empty, m, _mm512_add_epi32(row, one), head, 4);
        for (int r = 0; r < 5; ++r) {
            const __m512i e = _mm512_andnot_si512(multi, l[r]);
            const __mmask16 k = _mm512_cmpneq_epi32_mask(e, empty);
            _mm512_storeu_si512((void *)(ci + nc), _mm512_maskz_compress_epi32(k, I));
            _mm512_storeu_si512((void *)(ce + nc), _mm512_maskz_compress_epi32(k, e));
            nc += (size_t)__builtin_popcount(k);
        }
        __m512i any = _mm512_or_si512(_mm512_or_si512(l[0], l[1]), _mm512_or_si512(l[2], l[3]));
        any = _mm512_or_si512(any, l[4]);
        if (BP_UNLIKELY(_mm512_test_epi32_mask(any, multi))) {
            // Some lists hold two boxes or more: their second boxes too.
            __m512i deep = _mm512_setzero_si512();
            for (int r = 0; r < 5; ++r) {
                const __mmask16 k = _mm512_test_epi32_mask(l[r], multi);
                if (!k) continue;
                const __m512i l2 = _mm512_mask_i32gather_epi32(empty, k, _mm512_andnot_si512(multi, l[r]), next, 4);
                _mm512_storeu_si512((void *)(ci + nc), _mm512_maskz_compress_epi32(k, I));
                _mm512_storeu_si512((void *)(ce + nc), _mm512_maskz_compress_epi32(k, _mm512_andnot_si512(multi, l2)));
                nc += (size_t)__builtin_popcount(k);
                deep = _mm512_or_si512(deep, l2);
            }
            const __mmask16 ms = _mm512_test_epi32_mask(deep, multi);
            _mm512_storeu_si512((void *)(slow + ns), _mm512_maskz_compress_epi32(ms, I));
            ns += (size_t)__builtin_popcount(ms);
        }
    }
    *ns_out = ns;
    return nc;
}

#endif

// Two passes per block of boxes, without a branch on the data: the boxes are in input order, so
// the table and box loads come from all over the cache, and a mispredicted branch waiting on
// them would throw away the work of many boxes in flight. Pass 1 lists the candidates; pass 2
// tests them (about 0.6 per box on `uniform`, against 5 links read), writing every candidate to
// the sink and keeping the hits. Lists of three boxes or more are walked apart.
// Blocks [blk0, blk1) of GRID_TABLE_BLOCK boxes (a task's part with workers: the pairs of
// consecutive blocks, in order, are the pairs of all of them in their order).
typedef struct grid_pairs_job {
    const bp_grid *g;
    const float *boxes;  // the frame's
} grid_pairs_job;

static bp_status grid_table_pairs2(void *user, size_t blk0, size_t blk1, uint32_t worker, bp_sink *sink,
                                   uint64_t *checks) {
    (void)worker;
    const grid_pairs_job *j = user;
    const bp_grid *g = j->g;
    const uint32_t *BP_RESTRICT next = g->table.next;
    const float *BP_RESTRICT nb = j->boxes;
    const uint32_t last = (uint32_t)g->n;
    uint32_t ci[10 * GRID_TABLE_BLOCK + 16], ce[10 * GRID_TABLE_BLOCK + 16], slow[GRID_TABLE_BLOCK + 16];
    uint64_t c = 0;
#if defined(GRID_AVX512)
    const bool avx512 = bp_cpu_avx512();
#endif
    const uint32_t end = blk1 * GRID_TABLE_BLOCK < last ? (uint32_t)(blk1 * GRID_TABLE_BLOCK) : last;
    for (uint32_t i0 = (uint32_t)(blk0 * GRID_TABLE_BLOCK); i0 < end; i0 += GRID_TABLE_BLOCK) {
        const uint32_t i1 = last - i0 > GRID_TABLE_BLOCK ? i0 + GRID_TABLE_BLOCK : last;
        size_t ns;
#if defined(GRID_AVX512)
        const size_t nc = avx512 ? grid_table_cands_avx512(g, i0, i1, ci, ce, slow, &ns)
                                 : grid_table_cands(g, i0, i1, ci, ce, slow, &ns);
#else
        const size_t nc = grid_table_cands(g, i0, i1, ci, ce, slow, &ns);
#endif
        c += nc;
        for (size_t q0 = 0; q0 < nc; q0 += BP_SINK_MIN_ROOM) {
            const size_t q1 = nc - q0 > BP_SINK_MIN_ROOM ? q0 + BP_SINK_MIN_ROOM : nc;
            bp_status st = bp_sink_room(sink, q1 - q0);
            if (st != BP_OK) return st;
            bp_pair_writer w = bp_writer_open(sink);
            for (size_t q = q0; q < q1; ++q) {
                const uint32_t i = ci[q], e = ce[q];
                bp_writer_put(&w, i, e, grid_table_hit(nb + 4 * (size_t)i, nb + 4 * (size_t)e));
            }
            bp_writer_close(sink, &w);
        }
        for (size_t q = 0; q < ns; ++q) {
            const uint32_t i = slow[q];
            uint32_t link[5];
            grid_table_links(g, i, link);
            for (int r = 0; r < 5; ++r) {
                if (!(link[r] & GRID_MULTI)) continue;
                const uint32_t l2 = next[link[r] & ~GRID_MULTI];
                if (!(l2 & GRID_MULTI)) continue;
                bp_status st = grid_table_rest(g, nb, i, l2, sink, &c);  // from the third box on
                if (st != BP_OK) return st;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// The table layout for one call. *done false: the frame does not fit it (the sorted layout runs).
bp_status bp_grid_table_find(bp_grid *g, const bp_frame *f, bp_sink *sink, uint64_t *checks, bool *done) {
    const size_t n = f->n;
    *done = false;
    if (!grid_table_fits(g, f)) {
        grid_table_clear(g);
        return BP_OK;
    }
    bp_status st = grid_table_reserve(g, n);
    if (st != BP_OK) return st;
    // keys are overwritten: the sorted layout's order is gone.
    g->ordered = false;
    g->on_table = false;
    // Linking measured the crowding: under AUTO, a frame that turns out crowded (the first of
    // `line` or `seed`, say) goes to the sorted layout at once rather than walk long lists.
    const uint32_t tasks = bp_par_tasks(g->base.ctx, n, BP_PAR_GRAIN_MAP);
    bool fits;
    if (tasks > 1) {
        fits = grid_table_link2_par(g, f, n, tasks, &st);  // clears the table itself
    } else {
        grid_table_clear(g);
        fits = grid_table_link2(g, f, n);
    }
    if (st != BP_OK) {
        grid_table_clear(g);
        return st;
    }
    if (!fits || (g->table.crowded && g->layout == BP_GRID_LAYOUT_AUTO)) {
        grid_table_clear(g);
        return BP_OK;
    }
    g->table.next[n] = GRID_EMPTY;  // pass 1 reads it for an empty list's second box
    g->n = n;
    g->on_table = true;
    *done = true;
    const size_t blocks = (n + GRID_TABLE_BLOCK - 1) / GRID_TABLE_BLOCK;
    grid_pairs_job pj = {g, f->boxes};
    return bp_par_pairs(g->base.ctx, sink, blocks, BP_PAR_GRAIN_PAIRS / GRID_TABLE_BLOCK, grid_table_pairs2, &pj, checks);
}

// A query's traversal of the lists: a box of level 0 touching the window has its min corner in
// the cells from one before the window's low corner to its high corner.
bp_status bp_grid_table_visit(const bp_grid *g, bp_visitor *q) {
    const grid_geom *G = &g->geom;
    const uint32_t sx = G->lv[0].stride[1];
    const float qb[4] = {q->lo[0], q->lo[1], q->hi[0], q->hi[1]};
    int64_t c0[3], c1[3], lo[3], hi[3];
    grid_cells(G, qb, c0, c1);
    grid_region(G, &G->lv[0], c0, c1, lo, hi);
    for (int64_t y = lo[1]; y <= hi[1]; ++y) {
        for (int64_t x = lo[0]; x <= hi[0]; ++x) {
            const uint32_t key = (uint32_t)(y + 1) * sx + (uint32_t)(x + 1);
            for (uint32_t u = g->table.head[key]; (u & ~GRID_MULTI) != GRID_EMPTY; u = g->table.next[u & ~GRID_MULTI]) {
                const uint32_t e = u & ~GRID_MULTI;
                bp_status st = q->visit(q, e);
                if (st != BP_OK) return st;
            }
        }
    }
    return BP_OK;
}

// Every box in the list of its own cell, once; lists in decreasing index order (so they end),
// flags right; the table empty elsewhere, past the cells too; keys those of the frame.
bp_status bp_grid_table_validate(const bp_grid *g, const bp_frame *f) {
    const grid_geom *G = &g->geom;
    const size_t n = f->n;
    if (g->n != n || f->dim != 2 || !g->have_geom || G->dim != 2 || !g->table.head_ok) return BP_ERR_INVALID_ARG;
    const size_t cells = (size_t)G->lv[0].size;
    if (g->table.dirty != cells || cells > g->table.head_cap) return BP_ERR_INVALID_ARG;
    const uint32_t sx = G->lv[0].stride[1];
    for (size_t i = 0; i < n; ++i) {
        const float *b = bp_frame_box(f, i);
        int64_t c0[3], c1[3];
        grid_cells(G, b, c0, c1);
        if (c1[0] - c0[0] > 1 || c1[1] - c0[1] > 1) return BP_ERR_INVALID_ARG;
        if (g->keys[i] != (uint32_t)(c0[1] + 1) * sx + (uint32_t)(c0[0] + 1)) return BP_ERR_INVALID_ARG;
    }
    if (g->table.next[n] != GRID_EMPTY) return BP_ERR_INVALID_ARG;
    size_t seen = 0;
    for (size_t c = 0; c < cells; ++c) {
        uint32_t u = g->table.head[c], prev = UINT32_MAX;
        for (; (u & ~GRID_MULTI) != GRID_EMPTY; u = g->table.next[u & ~GRID_MULTI]) {
            const uint32_t e = u & ~GRID_MULTI;
            if (e >= n || e >= prev || g->keys[e] != c) return BP_ERR_INVALID_ARG;
            const bool more = (g->table.next[e] & ~GRID_MULTI) != GRID_EMPTY;
            if (((u & GRID_MULTI) != 0) != more) return BP_ERR_INVALID_ARG;
            prev = e;
            ++seen;
        }
        if (u != GRID_EMPTY) return BP_ERR_INVALID_ARG;
    }
    // Past the cells, the table is empty: the next call that clears only its cells relies on it.
    for (size_t c = cells; c < g->table.head_cap; ++c)
        if (g->table.head[c] != GRID_EMPTY) return BP_ERR_INVALID_ARG;
    return seen == n ? BP_OK : BP_ERR_INVALID_ARG;
}

void bp_grid_table_draw(const bp_grid *g, const bp_debug_draw *draw) {
    // Each occupied cell once: where box i heads its cell's list.
    for (size_t i = 0; i < g->n; ++i)
        if ((g->table.head[g->keys[i]] & ~GRID_MULTI) == i) bp_grid_draw_cell(&g->geom, 0, g->keys[i], draw);
}

void bp_grid_table_reset(grid_table *t) {
    t->crowded = false;
    t->head_ok = false;  // wiped whole before its next use
    t->dirty = 0;
}

void bp_grid_table_release(bp_context *ctx, grid_table *t) {
    BP_RELEASE(ctx, t->head, t->head_cap);
    BP_RELEASE(ctx, t->next, t->next_cap);
    BP_RELEASE(ctx, t->idx, t->idx_cap);
    BP_RELEASE(ctx, t->prev, t->prev_cap);
    BP_RELEASE(ctx, t->bkey, t->bkey_cap);
}
