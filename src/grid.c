// Method `grid`: a uniform grid built by sorting (seeds 003 and 004), with a hierarchy of
// coarser grids for boxes larger than a cell. docs/grid.md explains the choices; in short:
//  - Each box lives in exactly one cell: the cell of its min corner, in the finest level whose
//    cells it spans at most two of per axis. Two such boxes that overlap have min-corner cells
//    at most one apart on every axis, so a cell only meets its 8 (26) neighbours, and looking
//    at the 4 (13) "forward" ones finds every pair once (seed 004).
//  - Cells are chosen from a sample of the boxes each frame, and kept while they still serve
//    (src/grid_fit.c). Keys are well defined for any finite coordinate: cell coordinates are
//    clamped in float to a bounded window before conversion. Clamping is monotone, so it can
//    only put more boxes in the same cell (more candidate tests), never separate two
//    overlapping boxes.
//  - The sorted layout (any world): no array of all cells; boxes are sorted by a row-major cell
//    key with the shared radix sort, in last frame's order (src/grid_keys.c), and a cell is a run
//    of equal keys (src/grid_sorted.c); the pairs of a box are a few short key ranges, found by
//    cursors that only move forward (src/grid_scan.c), crowded cells by the SIMD kernels
//    (src/grid_dense.c). Boxes too large for the finest cells go to coarser levels (cells 2, 4,
//    8... times larger); a box of a coarse level meets the finer levels through region queries
//    of its own box.
//  - The table layout (small 2D worlds, src/grid_table.c): the same cells and keys, as lists
//    through a table of every cell, no sort.
// This file is the method's entry: it chooses the geometry and the layout of each call.
#include "grid.h"

// Where the cells are coarse (bp_grid_was_too_coarse), the last call tested this many
// candidates a box or more: AUTO leaves the grid.
#define GRID_COARSE_CHECKS 16
// Debug drawing draws the whole level-0 lattice only up to this many cells (a demo-sized world).
#define GRID_DRAW_CELLS 4096

static void grid_init(bp_algorithm *m);
static void grid_destroy(bp_algorithm *m);
static bp_status grid_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks);
static void grid_reset(bp_algorithm *m);
static bp_status grid_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *v);
static void grid_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw);
static bp_status grid_validate(const bp_algorithm *m, const bp_frame *f);
static bool grid_advise_against(const bp_algorithm *m, const bp_frame *f, const bp_context_def *def);
static void grid_stats(const bp_algorithm *m, bp_stats *out);

const bp_algorithm_class bp_grid_class = {
    .name = "grid",
    .size = sizeof(bp_grid),
    .init = grid_init,
    .destroy = grid_destroy,
    .find_pairs = grid_find_pairs,
    .reset = grid_reset,
    .visit = grid_visit,
    .debug_draw = grid_debug_draw,
    .validate = grid_validate,
    .advise_against = grid_advise_against,
    .stats = grid_stats,
};

// One call: the geometry, then the table layout where it can and should serve the frame, else
// the sorted layout. The per-call indexes of the sorted layout are out of date whichever runs,
// and the last call's table is cleared by bp_grid_table_find whichever runs.
static bp_status grid_find_pairs_run(bp_grid *g, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    g->on_table = false;
    bp_grid_sorted_begin(&g->sorted);
    const bool same_grid = bp_grid_choose(g, f);
    bool done;
    bp_status st = bp_grid_table_find(g, f, sink, checks, &done);
    if (st != BP_OK || done) return st;
    st = bp_grid_sorted_build(g, f, same_grid);
    if (st != BP_OK) return st;
    return bp_grid_sorted_pairs(g, sink, checks);
}

// Remembers the candidates a box of the call (bp_grid_was_too_coarse).
static bp_status grid_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_grid *g = (bp_grid *)m;
    const uint64_t before = *checks;
    bp_status st = grid_find_pairs_run(g, f, sink, checks);
    g->crowd_checks = st == BP_OK && *checks - before >= (uint64_t)GRID_COARSE_CHECKS * f->n;
    return st;
}

// The definition's options are read here, once, and the kernels chosen (grid.kernels; an unknown
// value counts as 0, automatic): the CPU does not change, nor the definition.
static void grid_init(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    const bp_context_def *def = bp_context_def_of(m->ctx);
    g->user_cell = def->grid.cell_size;
    g->layout = def->grid.layout;
    int kernels = def->grid.kernels;
    if (kernels < GRID_KERNELS_AUTO || kernels > GRID_KERNELS_AVX2) kernels = GRID_KERNELS_AUTO;
    g->dense.k = bp_grid_kernels_pick(kernels);
    g->dense.always = kernels >= GRID_KERNELS_ALWAYS;
    g->dense.soa = bp_grid_dense_soa_possible();
}

static void grid_destroy(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, g->keys, g->keys_cap);
    bp_grid_sorted_release(ctx, &g->sorted);
    bp_grid_table_release(ctx, &g->table);
    bp_free(ctx, g, sizeof *g);
}

static void grid_reset(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    g->ordered = false;
    g->have_geom = false;
    g->on_table = false;
    g->n = 0;
    bp_grid_sorted_reset(&g->sorted);
    bp_grid_table_reset(&g->table);
    for (int l = 0; l < GRID_MAX_LEVELS; ++l) g->geom.lv[l].begin = g->geom.lv[l].end = 0;
    g->geom.levels = 0;
}

static bp_status grid_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *v) {
    const bp_grid *g = (const bp_grid *)m;
    if (g->on_table && g->n == f->n) return bp_grid_table_visit(g, v);
    return bp_grid_sorted_visit(g, f, v);
}

// The sorted layout's coherence (the table layout sorts nothing: the defaults stand).
static void grid_stats(const bp_algorithm *m, bp_stats *out) {
    const bp_grid *g = (const bp_grid *)m;
    if (g->on_table) return;
    out->coherent = g->sorted.coherent;
    out->moved = g->sorted.moved;
    out->full_sorts = g->sorted.resorts;
    out->resorts = g->sorted.given_up;
}

// AUTO's question: cells far coarser than the boxes want, and crowded (src/grid_fit.c).
static bool grid_advise_against(const bp_algorithm *m, const bp_frame *f, const bp_context_def *def) {
    return m ? bp_grid_was_too_coarse(m) : bp_grid_too_coarse(f, def->grid.cell_size);
}

// Draws the window (level 0); then, when level 0 has at most GRID_DRAW_CELLS cells, every one of
// them, empty or not (level `levels + 1`: the lattice, as in the seeds' pictures); then every
// occupied cell, coarser levels with smaller numbers (1 .. levels).
static void grid_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    if (!draw->box || !g->have_geom) return;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) {
        lo[a] = (float)G->wlo[a];
        hi[a] = (float)G->whi[a];
    }
    draw->box(lo, hi, 0, draw->user);
    uint64_t cells = 1;
    for (int a = 0; a < d; ++a) cells *= (uint64_t)G->g0[a];
    if (cells <= GRID_DRAW_CELLS) {
        for (uint64_t k = 0; k < cells; ++k) {
            uint64_t r = k;
            for (int a = 0; a < d; ++a) {
                const int64_t c = (int64_t)(r % (uint64_t)G->g0[a]);
                r /= (uint64_t)G->g0[a];
                lo[a] = (float)(G->origin[a] + (double)c * G->cell[a]);
                hi[a] = (float)(G->origin[a] + (double)(c + 1) * G->cell[a]);
            }
            draw->box(lo, hi, G->levels + 1, draw->user);
        }
    }
    if (g->on_table) bp_grid_table_draw(g, draw);
    else bp_grid_sorted_draw(g, draw);
}

static bp_status grid_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_grid *g = (const bp_grid *)m;
    if (g->on_table) return bp_grid_table_validate(g, f);
    return bp_grid_sorted_validate(g, f);
}
