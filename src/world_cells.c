// The world's persistent cells (docs/world.md): a hierarchy of uniform grids, level L with
// cells of edge c0 * 2^L, stored in one open-addressing hash table keyed by (level, cell).
//
// A proxy lives at the finest level whose cell edge is at least its largest extent, in the one
// cell that holds its min corner, as an entry {box, dense index, group} inside its cell's run:
// a query reads a cell's candidates from one or two cache lines, with their boxes and filter
// groups, without touching the proxies themselves. A proxy that moves within its cell rewrites
// its entry; one that changes cell leaves its run (the last entry fills the hole) and joins
// another. Runs live in blocks of 2, 4, 8 ... entries; a full run moves to a block of the next
// class and its old block goes to that class's free list, and a cell that empties is deleted
// (its table slot by backward shift, its block freed). So a warm world reuses its blocks and
// allocates nothing: the pool grows only when no free block fits, the table only with the
// number of cells.
//
// A query for [lo, hi] at level L visits the cells from the one holding lo - (the largest extent
// at L) to the one holding hi, per axis; when that range has many more cells than the level
// holds, one walk over the table serves it instead, so a query costs at most a few times the
// cells that exist, however large its box (issue #17: no cost in proportion to the cells a huge
// box spans).
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "world_cells.h"

void world_cells_init(world_cells *c, bp_heap *heap, int dim, double cell_size) {
    memset(c, 0, sizeof *c);
    c->dim = dim;
    c->stride = 2 * dim + 2;
    c->cell_size = cell_size;
    c->heap = heap;
    bp_blocks_init(&c->blocks, heap, (size_t)c->stride);
}

void world_cells_free(world_cells *c) {
    bp_heap_free(c->heap, c->table, c->table_cap * sizeof *c->table);
    bp_blocks_free(&c->blocks);
    world_cells_init(c, c->heap, c->dim, c->cell_size);
}

// The cells emptied (the table cleared, the pool and levels forgotten).
static void cells_reset(world_cells *c) {
    c->built = false;
    if (c->table) memset(c->table, 0, c->table_cap * sizeof *c->table);
    c->cells = 0;
    bp_blocks_clear(&c->blocks);  // (the pool kept)
    memset(c->level_proxies, 0, sizeof c->level_proxies);
    memset(c->level_cells, 0, sizeof c->level_cells);
    memset(c->level_ext, 0, sizeof c->level_ext);
    c->level_count = 0;
}

// While the cells are not built, no proxy is in a cell: dropping stale cells again costs nothing
// (a world that rebuilds every frame does not walk its proxies for it).
void world_cells_invalidate(world_cells *c, world_meta *meta, size_t n) {
    if (!c->built) return;
    cells_reset(c);
    for (size_t d = 0; d < n; ++d) meta[d].cell = WORLD_NONE;
}

// ---------------------------------------------------------------------------------------------
// Geometry

static inline uint64_t cells_hash(unsigned level, const int32_t *k) {
    uint64_t h = (uint64_t)(uint32_t)k[0] * 0x9E3779B97F4A7C15u;
    h ^= (uint64_t)(uint32_t)k[1] * 0xC2B2AE3D27D4EB4Fu;
    h ^= (uint64_t)(uint32_t)k[2] * 0x165667B19E3779F9u;
    h ^= (uint64_t)level * 0x27D4EB2F165667C5u;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9u;
    return h ^ (h >> 29);
}

// An extent rounded up: the difference of two floats in double can round (far-apart exponents);
// the margin is more than that rounding error, without a libm call.
static inline double cells_extent(float lo, float hi) {
    const double e = (double)hi - (double)lo;
    return e + e * 0x1p-50;
}

// The level of a box: the smallest L with every extent <= c0 * 2^L.
static unsigned cells_level(const world_cells *c, const float *box) {
    double ext = 0.0;
    for (int a = 0; a < c->dim; ++a) {
        const double e = (double)box[c->dim + a] - (double)box[a];
        ext = e > ext ? e : ext;
    }
    if (!(ext > c->c0)) return 0;
    int e = 0;
    frexp(ext / c->c0, &e);  // ext / c0 < 2^e
    int L = e > 1 ? e - 1 : 0;
    while (L < WORLD_LEVELS - 1 && ext > ldexp(c->c0, L)) ++L;
    return (unsigned)L;
}

static inline double cells_inv(const world_cells *c, unsigned level) { return c->level_inv[level]; }
static inline double cells_range(const world_cells *c, unsigned level, const float *lo, const float *hi,
                                 int32_t *k0, int32_t *k1);

// The cell coordinate of x at the level whose inverse edge is inv: floor(x * inv), clamped.
// Monotone in x, which is all that queries need for their ranges to be conservative.
static inline int32_t cells_coord(double x, double inv) {
    const double q = x * inv;
    if (!(q > -(double)WORLD_COORD_MAX)) return -WORLD_COORD_MAX;
    if (q >= (double)WORLD_COORD_MAX) return WORLD_COORD_MAX;
    // floor without a libm call (baseline x86-64 has no rounding instruction): truncate, then
    // step down for negative non-integers.
    int32_t i = (int32_t)q;
    i -= (double)i > q;
    return i;
}

static void cells_key(const world_cells *c, const float *box, unsigned level, int32_t k[3]) {
    const double inv = cells_inv(c, level);
    k[0] = k[1] = k[2] = 0;
    for (int a = 0; a < c->dim; ++a) k[a] = cells_coord((double)box[a], inv);
}

// ---------------------------------------------------------------------------------------------
// The table

static inline bool cells_match(const world_cell *e, unsigned level, const int32_t *k) {
    return e->level == level && e->c[0] == k[0] && e->c[1] == k[1] && e->c[2] == k[2];
}

static size_t cells_find(const world_cells *c, unsigned level, const int32_t *k) {
    const size_t mask = c->table_cap - 1;
    for (size_t i = (size_t)cells_hash(level, k) & mask;; i = (i + 1) & mask) {
        const world_cell *e = &c->table[i];
        if (!e->used) return WORLD_NONE;
        if (cells_match(e, level, k)) return i;
    }
}

// Finds or makes the cell; the table has room (world_cells_reserve keeps its load <= 1/2).
static size_t cells_get(world_cells *c, unsigned level, const int32_t *k) {
    const size_t mask = c->table_cap - 1;
    size_t i = (size_t)cells_hash(level, k) & mask;
    for (;; i = (i + 1) & mask) {
        const world_cell *e = &c->table[i];
        if (!e->used) break;
        if (cells_match(e, level, k)) return i;
    }
    world_cell *e = &c->table[i];
    memset(e, 0, sizeof *e);
    e->c[0] = k[0];
    e->c[1] = k[1];
    e->c[2] = k[2];
    e->level = (uint16_t)level;
    e->used = 1;
    c->cells++;
    c->level_cells[level]++;
    return i;
}

static inline float *cells_entry(const world_cells *c, const world_cell *e, uint32_t s) {
    return bp_blocks_entry(&c->blocks, (size_t)e->off + s);
}

static void cells_level_add(world_cells *c, unsigned level) {
    if (c->level_proxies[level]++) return;
    int i = c->level_count++;
    while (i > 0 && c->levels[i - 1] > level) {
        c->levels[i] = c->levels[i - 1];
        --i;
    }
    c->levels[i] = (uint16_t)level;
}

static void cells_level_sub(world_cells *c, unsigned level) {
    if (--c->level_proxies[level]) return;
    int i = 0;
    while (c->levels[i] != level) ++i;
    for (; i + 1 < c->level_count; ++i) c->levels[i] = c->levels[i + 1];
    c->level_count--;
}

static inline void cells_note_extent(world_cells *c, unsigned level, const float *box) {
    for (int a = 0; a < c->dim; ++a) {
        const double e = cells_extent(box[a], box[c->dim + a]);
        if (BP_UNLIKELY(e > c->level_ext[level][a])) c->level_ext[level][a] = e;
    }
}

// ---------------------------------------------------------------------------------------------
// Blocks of the entry pool

// The class of a block of `cap` entries (a power of two, at least 2; a cell without a block has
// cap 0 and no class).
static inline unsigned cells_class(uint32_t cap) {
    assert(cap >= 2 && (cap & (cap - 1)) == 0);
    return bp_blocks_class(cap);
}

// The smallest class that holds `count` entries with a quarter to spare.
static unsigned cells_class_for(size_t count) {
    unsigned cls = 0;
    while (((size_t)2 << cls) < count + count / 4 + 1) ++cls;
    return cls;
}

// ---------------------------------------------------------------------------------------------
// Growing the table, deleting cells

static size_t cells_pow2(size_t need) {
    size_t cap = 64;
    while (cap < need) cap *= 2;
    return cap;
}

// Points the locators of cell i's proxies at i.
static void cells_relocate(const world_cells *c, world_meta *meta, size_t i) {
    const world_cell *e = &c->table[i];
    for (uint32_t s = 0; s < e->count; ++s) meta[world_entry_word(cells_entry(c, e, s), c->dim, 0)].cell = (uint32_t)i;
}

// A table of `cap` slots (a power of two) holding the same cells; the locators follow.
static bp_status cells_rehash(world_cells *c, world_meta *meta, size_t cap) {
    if (cap > SIZE_MAX / sizeof(world_cell)) return BP_ERR_NOMEM;
    world_cell *table = bp_heap_alloc(c->heap, cap * sizeof *table);
    if (!table) return BP_ERR_NOMEM;
    memset(table, 0, cap * sizeof *table);
    world_cell *old = c->table;
    const size_t old_cap = c->table_cap;
    c->table = table;
    c->table_cap = cap;
    for (size_t i = 0; i < old_cap; ++i) {
        if (!old[i].used) continue;
        size_t j = (size_t)cells_hash(old[i].level, old[i].c) & (cap - 1);
        while (table[j].used) j = (j + 1) & (cap - 1);
        table[j] = old[i];
        cells_relocate(c, meta, j);
    }
    bp_heap_free(c->heap, old, old_cap * sizeof *old);
    return BP_OK;
}

// Room in the table for `extra` new cells at a load of at most one half.
bp_status world_cells_reserve(world_cells *c, world_meta *meta, size_t extra) {
    if (extra > SIZE_MAX / 8 - c->cells) return BP_ERR_NOMEM;
    if (2 * (c->cells + extra) <= c->table_cap) return BP_OK;
    return cells_rehash(c, meta, cells_pow2(4 * (c->cells + extra)));
}

// Deletes empty cell i: its block is freed, and the cells after it in its probe run move back
// into the hole where their probe allows (backward shift), their proxies' locators with them.
static void cells_delete(world_cells *c, world_meta *meta, size_t i) {
    world_cell *t = c->table;
    const size_t m = c->table_cap - 1;
    // A cell made in this update whose first block could not be had (out of memory) has none.
    if (t[i].cap) bp_blocks_put(&c->blocks, t[i].off, cells_class(t[i].cap));
    c->cells--;
    c->level_cells[t[i].level]--;
    for (size_t j = (i + 1) & m; t[j].used; j = (j + 1) & m) {
        const size_t home = (size_t)cells_hash(t[j].level, t[j].c) & m;
        if (((j - home) & m) >= ((j - i) & m)) {
            t[i] = t[j];
            cells_relocate(c, meta, i);
            i = j;
        }
    }
    memset(&t[i], 0, sizeof t[i]);
}

static inline void cells_write(const world_cells *c, float *e, const float *box, uint32_t d, uint32_t word) {
    world_copy_box(e, box, c->dim);
    world_entry_set_word(e, c->dim, 0, d);
    world_entry_set_word(e, c->dim, 1, word);
}

// Appends proxy d to cell k (a new cell has no block yet; a full run moves to a larger block).
static bp_status cells_push(world_cells *c, const float *boxes, world_meta *meta, size_t k, uint32_t d) {
    world_cell *e = &c->table[k];
    if (e->count == e->cap) {
        const unsigned cls = e->cap ? cells_class(e->cap) + 1 : 0;
        if (cls >= BP_BLOCK_CLASSES) return BP_ERR_NOMEM;
        uint32_t off;
        bp_status st = bp_blocks_get(&c->blocks, cls, &off);
        if (st != BP_OK) {
            if (!e->count) cells_delete(c, meta, k);  // never leave an empty cell behind
            return st;
        }
        const size_t stride = (size_t)c->stride;
        if (e->count) {
            memcpy(bp_blocks_entry(&c->blocks, off), cells_entry(c, e, 0), (size_t)e->count * stride * sizeof(float));
            bp_blocks_put(&c->blocks, e->off, cells_class(e->cap));
        }
        e->off = off;
        e->cap = (uint32_t)2 << cls;
    }
    const uint32_t s = e->count++;
    const float *box = boxes + (size_t)d * (size_t)(2 * c->dim);
    cells_write(c, cells_entry(c, e, s), box, d, meta[d].group);
    meta[d].cell = (uint32_t)k;
    meta[d].place = s;
    cells_level_add(c, e->level);
    cells_note_extent(c, e->level, box);
    return BP_OK;
}

void world_cells_remove(world_cells *c, world_meta *meta, uint32_t d) {
    const uint32_t k = meta[d].cell;
    if (k == WORLD_NONE) return;
    world_cell *e = &c->table[k];
    const uint32_t s = meta[d].place, last = e->count - 1;
    if (s != last) {
        float *dst = cells_entry(c, e, s);
        const float *src = cells_entry(c, e, last);
        for (int q = 0; q < c->stride; ++q) dst[q] = src[q];
        meta[world_entry_word(dst, c->dim, 0)].place = s;
    }
    e->count = last;
    cells_level_sub(c, e->level);
    meta[d].cell = WORLD_NONE;
    if (!last) cells_delete(c, meta, k);
}

bp_status world_cells_place(world_cells *c, const float *boxes, world_meta *meta, uint32_t d) {
    const int dim = c->dim;
    const float *box = boxes + (size_t)d * (size_t)(2 * dim);
    const unsigned level = cells_level(c, box);
    int32_t key[3];
    cells_key(c, box, level, key);
    const uint32_t k = meta[d].cell;
    if (k != WORLD_NONE) {
        world_cell *e = &c->table[k];
        if (cells_match(e, level, key)) {  // the common case: it stays in its cell
            float *en = cells_entry(c, e, meta[d].place);
            world_copy_box(en, box, dim);
            world_entry_set_word(en, dim, 1, meta[d].group);
            cells_note_extent(c, level, box);
            return BP_OK;
        }
        world_cells_remove(c, meta, d);
    }
    return cells_push(c, boxes, meta, cells_get(c, level, key), d);
}

void world_cells_prefetch(const world_cells *c, const float *lo, const float *hi, int stage) {
    const size_t mask = c->table_cap - 1;
    for (int li = 0; li < c->level_count; ++li) {
        const unsigned level = c->levels[li];
        int32_t k0[3], k1[3];
        if (cells_range(c, level, lo, hi, k0, k1) > 8.0) continue;  // a large query: no guessing
        int32_t q[3] = {0, 0, 0};
        for (q[2] = k0[2]; q[2] <= k1[2]; ++q[2])
            for (q[1] = k0[1]; q[1] <= k1[1]; ++q[1])
                for (q[0] = k0[0]; q[0] <= k1[0]; ++q[0]) {
                    if (stage == 0) {
                        __builtin_prefetch(&c->table[(size_t)cells_hash(level, q) & mask]);
                        continue;
                    }
                    const size_t i = cells_find(c, level, q);
                    if (i != WORLD_NONE) __builtin_prefetch(cells_entry(c, &c->table[i], 0));
                }
    }
}

void world_cells_renumber(world_cells *c, world_meta *meta, uint32_t from, uint32_t to) {
    meta[to].cell = meta[from].cell;
    meta[to].place = meta[from].place;
    meta[from].cell = WORLD_NONE;
    if (meta[to].cell == WORLD_NONE) return;
    world_entry_set_word(cells_entry(c, &c->table[meta[to].cell], meta[to].place), c->dim, 0, to);
}


// ---------------------------------------------------------------------------------------------
// Building from scratch

static int cells_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The automatic finest cell edge: twice the 75th percentile of the proxies' largest extents
// (sampled), so that a typical query meets one or two cells per axis, and at least twice the
// proxies' spacing, so that a cell holds a few entries (measured on `static` 100,000: 1, 1.5,
// 2, 3, 4 and 6 spacings, 2 to 4 equal within the noise, 2 the fewest instructions). Kept
// within [2^-100, 2^100].
static double cells_choose_c0(world_cells *c, const float *boxes, size_t n) {
    const int dim = c->dim;
    enum { SAMPLES = 1024 };
    double ext[SAMPLES];
    size_t m = 0;
    const size_t step = n > SAMPLES ? n / SAMPLES : 1;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t d = 0; d < n && m < SAMPLES; d += step) {
        const float *b = boxes + d * (size_t)(2 * dim);
        double e = 0.0;
        for (int a = 0; a < dim; ++a) {
            const double x = (double)b[dim + a] - (double)b[a];
            e = x > e ? x : e;
            lo[a] = b[a] < lo[a] ? b[a] : lo[a];
            hi[a] = b[dim + a] > hi[a] ? b[dim + a] : hi[a];
        }
        ext[m++] = e;
    }
    double c0 = 0.0;
    for (int a = 0; a < 3; ++a) c->span[a] = a < dim && hi[a] > lo[a] ? hi[a] - lo[a] : 0.0;
    if (c->cell_size > 0.0) return c->cell_size;
    if (m) {
        qsort(ext, m, sizeof ext[0], cells_cmp_double);
        c0 = 2.0 * ext[(m * 3) / 4];
        // Sparse proxies: cells of a few proxies each (a probe costs a cache miss, a few more
        // entries in the same cell next to nothing).
        double vol = 1.0;
        for (int a = 0; a < dim; ++a) vol *= hi[a] > lo[a] ? hi[a] - lo[a] : 1.0;
        const double spacing = pow(vol / (double)n, 1.0 / dim);
        if (isfinite(spacing) && c0 < 2.0 * spacing) c0 = 2.0 * spacing;
    }
    if (!(c0 >= 0x1p-100)) c0 = c0 > 0.0 ? 0x1p-100 : 1.0;
    if (!(c0 <= 0x1p100)) c0 = 0x1p100;
    return c0;
}

// Replaces the table by one of `cap` slots holding the same cells; nothing else is touched (for
// the build's first pass, before any proxy points at a cell).
static bp_status cells_grow_bare(world_cells *c, size_t cap) {
    if (cap > SIZE_MAX / sizeof(world_cell)) return BP_ERR_NOMEM;
    world_cell *table = bp_heap_alloc(c->heap, cap * sizeof *table);
    if (!table) return BP_ERR_NOMEM;
    memset(table, 0, cap * sizeof *table);
    for (size_t i = 0; i < c->table_cap; ++i) {
        if (!c->table[i].used) continue;
        size_t j = (size_t)cells_hash(c->table[i].level, c->table[i].c) & (cap - 1);
        while (table[j].used) j = (j + 1) & (cap - 1);
        table[j] = c->table[i];
    }
    bp_heap_free(c->heap, c->table, c->table_cap * sizeof *c->table);
    c->table = table;
    c->table_cap = cap;
    return BP_OK;
}

bp_status world_cells_build(world_cells *c, const float *boxes, world_meta *meta, size_t n) {
    world_cells_invalidate(c, meta, n);
    cells_reset(c);
    c->c0 = cells_choose_c0(c, boxes, n);
    for (unsigned L = 0; L < WORLD_LEVELS; ++L) c->level_inv[L] = ldexp(1.0 / c->c0, -(int)L);
    // A table for the cells expected at load 1/2 (no more cells than proxies, nor than the
    // bounds hold), grown if they turn out more. Sized to the cells, not the proxies: a table
    // that fits the cache is what queries read first.
    double expect = 1.0;
    for (int a = 0; a < c->dim; ++a) expect *= c->span[a] / c->c0 + 2.0;
    if (!(expect < (double)n)) expect = (double)n;
    size_t cap = cells_pow2(2 * (size_t)expect + 2);
    if (cap != c->table_cap) {
        world_cell *t = bp_heap_alloc(c->heap, cap * sizeof *t);
        if (!t) return BP_ERR_NOMEM;
        bp_heap_free(c->heap, c->table, c->table_cap * sizeof *c->table);
        c->table = t;
        c->table_cap = cap;
    }
    memset(c->table, 0, cap * sizeof *c->table);
    // Pass 1: the cells and their counts.
    for (size_t d = 0; d < n; ++d) {
        if (2 * (c->cells + 1) > c->table_cap) {
            bp_status st = cells_grow_bare(c, 2 * c->table_cap);
            if (st != BP_OK) {
                cells_reset(c);
                return st;
            }
        }
        const float *box = boxes + d * (size_t)(2 * c->dim);
        const unsigned level = cells_level(c, box);
        int32_t key[3];
        cells_key(c, box, level, key);
        c->table[cells_get(c, level, key)].count++;
        cells_level_add(c, level);
        cells_note_extent(c, level, box);
    }
    // Blocks with a quarter to spare, laid out in table order, in a pool with an eighth more.
    size_t need = 0;
    for (size_t i = 0; i < c->table_cap; ++i)
        if (c->table[i].used) need += (size_t)2 << cells_class_for(c->table[i].count);
    need += need / 8 + 256;
    if (bp_blocks_renew(&c->blocks, need) != BP_OK) {
        cells_reset(c);
        return BP_ERR_NOMEM;
    }
    for (size_t i = 0; i < c->table_cap; ++i) {
        world_cell *e = &c->table[i];
        if (!e->used) continue;
        const unsigned cls = cells_class_for(e->count);
        e->off = bp_blocks_take(&c->blocks, cls);
        e->cap = (uint32_t)2 << cls;
        e->count = 0;
    }
    // Pass 2: the entries.
    for (size_t d = 0; d < n; ++d) {
        const float *box = boxes + d * (size_t)(2 * c->dim);
        const unsigned level = cells_level(c, box);
        int32_t key[3];
        cells_key(c, box, level, key);
        const size_t k = cells_find(c, level, key);
        world_cell *e = &c->table[k];
        meta[d].cell = (uint32_t)k;
        const uint32_t s = e->count++;
        cells_write(c, cells_entry(c, e, s), box, (uint32_t)d, meta[d].group);
        meta[d].place = s;
    }
    c->built = true;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Queries

static bp_status cells_visit_range(const world_cells *c, unsigned level, const int32_t *k0, const int32_t *k1,
                                   world_visit_fn fn, void *user) {
    int32_t k[3] = {0, 0, 0};
    for (k[2] = k0[2]; k[2] <= k1[2]; ++k[2]) {
        for (k[1] = k0[1]; k[1] <= k1[1]; ++k[1]) {
            for (k[0] = k0[0]; k[0] <= k1[0]; ++k[0]) {
                const size_t i = cells_find(c, level, k);
                if (i == WORLD_NONE || !c->table[i].count) continue;
                bp_status st = fn(user, cells_entry(c, &c->table[i], 0), c->table[i].count);
                if (st != BP_OK) return st;
            }
        }
    }
    return BP_OK;
}

// Per level, the query's cell range is probed cell by cell when it is no more than four times
// the cells the level has (plus a few); the levels where it is more are served together by one
// walk over the table, when their ranges add up to more than the table. Either way a query costs
// at most a few times the cells that exist, whatever the size of its box.
// The query's cell range at a level, and its number of cells.
static inline double cells_range(const world_cells *c, unsigned level, const float *lo, const float *hi,
                                 int32_t *k0, int32_t *k1) {
    const double inv = c->level_inv[level];
    double cells = 1.0;
    k0[0] = k0[1] = k0[2] = k1[0] = k1[1] = k1[2] = 0;
    for (int a = 0; a < c->dim; ++a) {
        // lo - extent, rounded down (by more than its rounding error) without a libm call.
        const double x = (double)lo[a] - c->level_ext[level][a];
        const double from = x - (x < 0 ? -x : x) * 0x1p-50 - 0x1p-1022;
        k0[a] = cells_coord(from, inv);
        k1[a] = cells_coord((double)hi[a], inv);
        cells *= (double)k1[a] - (double)k0[a] + 1.0;
    }
    return cells;
}

bp_status world_cells_visit(const world_cells *c, const float *lo, const float *hi, world_visit_fn fn, void *user) {
    const int dim = c->dim;
    uint64_t walk[(WORLD_LEVELS + 63) / 64] = {0};  // levels served by the table walk
    double walk_cells = 0.0;
    bool any = false;
    for (int li = 0; li < c->level_count; ++li) {
        const unsigned level = c->levels[li];
        int32_t k0[3], k1[3];
        const double cells = cells_range(c, level, lo, hi, k0, k1);
        if (cells > 4.0 * (double)c->level_cells[level] + 8.0) {
            walk[level >> 6] |= (uint64_t)1 << (level & 63);
            walk_cells += cells;
            any = true;
            continue;
        }
        bp_status st = cells_visit_range(c, level, k0, k1, fn, user);
        if (st != BP_OK) return st;
    }
    if (!any) return BP_OK;
    if (walk_cells <= (double)c->table_cap) {
        // Their ranges are smaller than the table after all: probe them.
        for (int li = 0; li < c->level_count; ++li) {
            const unsigned level = c->levels[li];
            if (!((walk[level >> 6] >> (level & 63)) & 1u)) continue;
            int32_t k0[3], k1[3];
            cells_range(c, level, lo, hi, k0, k1);
            bp_status st = cells_visit_range(c, level, k0, k1, fn, user);
            if (st != BP_OK) return st;
        }
        return BP_OK;
    }
    // One pass over the table for every level whose range exceeds its cells.
    unsigned last = WORLD_LEVELS;
    int32_t k0[3] = {0, 0, 0}, k1[3] = {0, 0, 0};
    for (size_t i = 0; i < c->table_cap; ++i) {
        const world_cell *e = &c->table[i];
        if (!e->used || !((walk[e->level >> 6] >> (e->level & 63)) & 1u)) continue;
        if (e->level != last) {
            last = e->level;
            cells_range(c, last, lo, hi, k0, k1);
        }
        bool in = true;
        for (int a = 0; a < dim; ++a) in &= e->c[a] >= k0[a] && e->c[a] <= k1[a];
        if (!in) continue;
        bp_status st = fn(user, cells_entry(c, e, 0), e->count);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Drawing and validation

void world_cells_draw(const world_cells *c, const bp_debug_draw *draw) {
    if (!c->built || !draw->box) return;
    for (size_t i = 0; i < c->table_cap; ++i) {
        const world_cell *e = &c->table[i];
        if (!e->used || !e->count) continue;
        const double edge = ldexp(c->c0, e->level);
        float lo[3], hi[3];
        for (int a = 0; a < c->dim; ++a) {
            lo[a] = (float)((double)e->c[a] * edge);
            hi[a] = (float)((double)(e->c[a] + 1) * edge);
        }
        draw->box(lo, hi, e->level, draw->user);
    }
}

bp_status world_cells_validate(const world_cells *c, const float *boxes, const world_meta *meta,
                               const uint64_t *behind, size_t n) {
    if (!c->built) {
        for (size_t d = 0; d < n; ++d)
            if (meta[d].cell != WORLD_NONE) return BP_ERR_INVALID_ARG;
        return BP_OK;
    }
    const int dim = c->dim;
    size_t entries = 0, cells = 0;
    uint32_t per_level[WORLD_LEVELS];
    memset(per_level, 0, sizeof per_level);
    for (size_t i = 0; i < c->table_cap; ++i) {
        const world_cell *e = &c->table[i];
        if (!e->used) continue;
        ++cells;
        if (!e->count || e->count > e->cap || (e->cap & (e->cap - 1)) || e->cap < 2) return BP_ERR_INVALID_ARG;
        if ((size_t)e->off + e->cap > c->blocks.used) return BP_ERR_INVALID_ARG;
        if (cells_find(c, e->level, e->c) != i) return BP_ERR_INVALID_ARG;
        for (uint32_t s = 0; s < e->count; ++s) {
            const float *en = cells_entry(c, e, s);
            const uint32_t d = world_entry_word(en, dim, 0);
            if (d >= n || meta[d].cell != i || meta[d].place != s) return BP_ERR_INVALID_ARG;
            per_level[e->level]++;
            ++entries;
            if (world_bit(behind, d)) continue;  // its entry catches up at the next sync
            const float *box = boxes + (size_t)d * (size_t)(2 * dim);
            if (memcmp(en, box, (size_t)(2 * dim) * sizeof(float)) != 0) return BP_ERR_INVALID_ARG;
            const uint32_t word = world_entry_word(en, dim, 1);
            if (word != meta[d].group) return BP_ERR_INVALID_ARG;
            const unsigned level = cells_level(c, box);
            int32_t key[3];
            cells_key(c, box, level, key);
            if (!cells_match(e, level, key)) return BP_ERR_INVALID_ARG;
            for (int a = 0; a < dim; ++a)
                if (cells_extent(box[a], box[dim + a]) > c->level_ext[level][a]) return BP_ERR_INVALID_ARG;
        }
    }
    if (cells != c->cells) return BP_ERR_INVALID_ARG;
    if (!bp_blocks_valid(&c->blocks)) return BP_ERR_INVALID_ARG;  // the free blocks: inside the pool
    size_t placed = 0;
    for (size_t d = 0; d < n; ++d) placed += meta[d].cell != WORLD_NONE;
    if (placed != entries) return BP_ERR_INVALID_ARG;
    int levels = 0;
    for (unsigned L = 0; L < WORLD_LEVELS; ++L) {
        if (per_level[L] != c->level_proxies[L]) return BP_ERR_INVALID_ARG;
        if (per_level[L]) {
            if (levels >= c->level_count || c->levels[levels] != L) return BP_ERR_INVALID_ARG;
            ++levels;
        }
    }
    return levels == c->level_count ? BP_OK : BP_ERR_INVALID_ARG;
}
