// The world's persistent cells (world_cells.c): a hierarchy of uniform grids over boxes that the
// caller keeps (box d is 2 * dim floats at boxes + d * 2 * dim), each box's entry found through
// its locator (world_meta's cell and place), which the cells keep up to date. The cells know
// nothing of the world: they take its boxes and bookkeeping as arguments. Never installed.
#ifndef BP_WORLD_CELLS_H
#define BP_WORLD_CELLS_H

#include "blocks.h"
#include "world_parts.h"

// Levels of the persistent cells: level L has cells of c0 * 2^L. Enough for a box of extent
// 2 * FLT_MAX over cells of 2^-149 (the smallest float), so every box has a level.
#define WORLD_LEVELS 300
// Cell coordinates are clamped to +-2^30: boxes beyond share the border cells (still tested
// exactly), and coordinates fit int32 with room for the +-1 of neighbour ranges.
#define WORLD_COORD_MAX ((int32_t)1 << 30)

/// One persistent cell (empty cells are deleted): a run of entries in a block of the entry pool.
/// Entries are {min[dim], max[dim], dense index, group} (world_parts.h).
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
    double cell_size;      // the edge asked for (0: automatic)
    double span[3];        // extent of the proxies when the cells were built (a sample's)
    int dim, stride;       // stride: floats per entry (2 * dim + 2)
    bp_heap *heap;
    world_cell *table;     // open addressing, linear probing, power-of-two capacity
    size_t table_cap, cells;
    bp_blocks blocks;      // the cells' runs of entries
    uint32_t level_proxies[WORLD_LEVELS];
    uint32_t level_cells[WORLD_LEVELS];
    double level_ext[WORLD_LEVELS][3];  // largest extent per axis at each level (an upper bound)
    double level_inv[WORLD_LEVELS];     // 1 / (c0 * 2^L)
    uint16_t levels[WORLD_LEVELS];     // levels holding proxies, ascending
    int level_count;
} world_cells;

/// Empty cells for boxes of dim axes, with cells of `cell_size` (0: chosen at each build),
/// allocating through `heap`.
void world_cells_init(world_cells *c, bp_heap *heap, int dim, double cell_size);
void world_cells_free(world_cells *c);
/// Drops every cell (the cells are rebuilt before their next use); the n boxes' locators follow.
void world_cells_invalidate(world_cells *c, world_meta *meta, size_t n);
/// Builds the cells from boxes 0 .. n (choosing the cell size when automatic).
bp_status world_cells_build(world_cells *c, const float *boxes, world_meta *meta, size_t n);
/// Brings box d's entry up to date with its box and group (inserting it when it has none).
bp_status world_cells_place(world_cells *c, const float *boxes, world_meta *meta, uint32_t d);
/// Reserves what placing `extra` more entries can need, so that a sync cannot fail halfway.
bp_status world_cells_reserve(world_cells *c, world_meta *meta, size_t extra);
/// Prefetching for a batch of probes: the table slots the cells around [lo, hi] hash to (stage
/// 0), or, once those are in, the entries of the cells found there (stage 1).
void world_cells_prefetch(const world_cells *c, const float *lo, const float *hi, int stage);
/// Prefetches the table slot of cell `cell` (a locator's).
static inline void world_cells_prefetch_cell(const world_cells *c, uint32_t cell) {
    __builtin_prefetch(&c->table[cell]);
}
/// Removes box d's entry (before d leaves the dense arrays).
void world_cells_remove(world_cells *c, world_meta *meta, uint32_t d);
/// Box `from` moved to dense index `to` (its bookkeeping copied already): its entry follows.
void world_cells_renumber(world_cells *c, world_meta *meta, uint32_t from, uint32_t to);
/// Calls fn for every cell whose entries may overlap the box [lo, hi] (`count` entries of
/// `stride` floats from `entries`: a superset, the caller tests each). Returns the first status
/// fn returns that is not BP_OK.
typedef bp_status (*world_visit_fn)(void *user, const float *entries, uint32_t count);
bp_status world_cells_visit(const world_cells *c, const float *lo, const float *hi, world_visit_fn fn, void *user);
void world_cells_draw(const world_cells *c, const bp_debug_draw *draw);
/// Checks the cells against boxes 0 .. n; boxes marked in `behind` may have entries behind.
bp_status world_cells_validate(const world_cells *c, const float *boxes, const world_meta *meta,
                               const uint64_t *behind, size_t n);

#endif
