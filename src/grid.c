// Method `grid`: a uniform grid built by sorting (seeds 003 and 004), with a hierarchy of
// coarser grids for boxes larger than a cell. docs/grid.md explains the choices; in short:
//  - Each box lives in exactly one cell: the cell of its min corner, in the finest level whose
//    cells it spans at most two of per axis. Two such boxes that overlap have min-corner cells
//    at most one apart on every axis, so a cell only meets its 8 (26) neighbours, and looking
//    at the 4 (13) "forward" ones finds every pair once (seed 004).
//  - No array of all cells: boxes are sorted by a row-major cell key with the shared radix sort,
//    and a cell is a run of equal keys. Row-major keys make the forward neighbours of a cell
//    consecutive keys (x-1, x, x+1 of the next row), so the pairs of a box are 2 (5) short key
//    ranges of the sorted array, found by cursors that only move forward.
//  - Temporal coherence: boxes are visited in last frame's order, so the new keys are almost
//    sorted; the few that moved are pulled out, radix-sorted alone and merged back.
//  - Keys are well defined for any finite coordinate: cell coordinates are clamped in double to
//    a bounded window before conversion. Clamping is monotone, so it can only put more boxes in
//    the same cell (more candidate tests), never separate two overlapping boxes.
//  - Boxes too large for the finest cells go to coarser levels (cells 2, 4, 8... times larger);
//    a box of a coarse level meets the finer levels through region queries of its own box.
// That is the sorted layout. Small 2D worlds use the table layout of src/grid_table.c instead
// (same cells and keys, no sort); this file chooses the geometry for both and runs the method.
#include <math.h>

#include "grid.h"
#include "par.h"
#include "radix_sort.h"

// The cell edge is this many times the typical box extent (the 75th percentile of a sample of
// extents, so a few huge boxes do not inflate it). Measured on `uniform` and `clustered` at
// N = 1,000,000 (docs/grid.md): larger cells test more candidates, smaller ones send more boxes
// up the hierarchy; 3D pays more per candidate (13 neighbour cells), so its cells are tighter.
#ifndef GRID_CELL_FACTOR_2D
#define GRID_CELL_FACTOR_2D 1.5
#endif
#ifndef GRID_CELL_FACTOR_3D
#define GRID_CELL_FACTOR_3D 1.25
#endif
// Crowded boxes (the cells of GRID_CELL_FACTOR_* would hold this many boxes or more on average,
// from the extent of the bulk on each axis): cells of this many times the typical extent instead. There the
// time goes to the candidates of a box's runs (4.5 cells' worth, against a pair region of two
// extents squared), not to the cells: `seed` 100,000 tests 380 million candidates for 82
// million pairs with 1.5x cells (docs/grid.md, "Dense cells").
#ifndef GRID_CELL_FACTOR_DENSE
#define GRID_CELL_FACTOR_DENSE 1.05
#endif
#ifndef GRID_DENSE_CELL_BOXES
#define GRID_DENSE_CELL_BOXES 16.0
#endif
// The extent that sizes the cells counts at most this many times the box's smallest extent.
#ifndef GRID_ELONGATION
#define GRID_ELONGATION 4.0
#endif
// Crowded cells whose boxes' median extent is under this share of the cell on every axis: level
// 0's same-level pass in 3D is cut to the cells each box reaches (grid_level_pairs3_reach).
#define GRID_REACH_SMALL 0.5
// Long boxes (above GRID_ELONGATION times their thinnest extent on an axis) that are at least
// 1/GRID_LONG_SHARE_DIV of the sample fit their median length into cells of a power of two
// level-0 cells, with this margin (grid_ideal).
#define GRID_LONG_SHARE_DIV 8
#define GRID_LONG_FIT 1.02
// With points (no extent), cells of this many times the mean spacing of the bulk of the boxes.
#ifndef GRID_SPACING_FACTOR
#define GRID_SPACING_FACTOR 0.35
#endif
#define GRID_SPACING_CAP 2.0
// A gap between sampled centres longer than this many median gaps is empty space (grid_occupied).
#define GRID_GAP_MAX 16.0
// AUTO leaves the grid when its cells must be this many times coarser than it wants (the keys
// cannot cover the world with finer ones) and would then hold GRID_DENSE_CELL_BOXES boxes on
// average where the boxes are (bp_grid_too_coarse).
#define GRID_COARSE_MAX 2.0
// ... or where, that coarse, the last call tested this many candidates a box (bp_grid_was_too_coarse).
#define GRID_COARSE_CHECKS 16
// Keep last frame's grid while the ideal cell stays within this factor of it and the boxes stay
// inside its window: an unchanged grid keeps the keys, hence the order, from frame to frame.
#define GRID_KEEP_RATIO 1.5
// Cells in level 0, padding included; the coarser levels add at most as many again.
#define GRID_MAX_CELLS ((uint64_t)1 << 30)
// Cells per axis: coordinates stay exact in float.
#define GRID_MAX_AXIS 16777000.0
// Marks, in last frame's order, a box that was pulled out to be sorted apart (never a real key).
#define GRID_MOVED (UINT32_MAX - 1)
// The coherent sort gives up (full radix sort) when more than 1/this of the boxes moved.
#define GRID_MOVED_MAX_DIV 4
// Boxes are read in last frame's sorted order, which is random in memory: prefetch this far
// ahead so that many cache (and TLB) misses are in flight at once.
#define GRID_PREFETCH 16
// Debug drawing draws the whole level-0 lattice only up to this many cells (a demo-sized world).
#define GRID_DRAW_CELLS 4096
#if defined(__GNUC__)
#define GRID_PREFETCH_READ(p) __builtin_prefetch((p), 0, 0)
#else
#define GRID_PREFETCH_READ(p) ((void)0)
#endif

static bp_status grid_create(bp_context *ctx, bp_algorithm **out) {
    bp_grid *g = bp_alloc(ctx, sizeof *g);
    if (!g) return BP_ERR_NOMEM;
    memset(g, 0, sizeof *g);
    *out = &g->base;
    return BP_OK;
}

static void grid_destroy(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, g->perm, g->perm_cap);
    BP_RELEASE(ctx, g->keys, g->keys_cap);
    BP_RELEASE(ctx, g->boxes, g->boxes_cap);
    BP_RELEASE(ctx, g->okeys, g->okeys_cap);
    BP_RELEASE(ctx, g->mkeys, g->mkeys_cap);
    BP_RELEASE(ctx, g->mpos, g->mpos_cap);
    BP_RELEASE(ctx, g->perm2, g->perm2_cap);
    BP_RELEASE(ctx, g->oboxes, g->oboxes_cap);
    BP_RELEASE(ctx, g->rows, g->rows_cap);
    BP_RELEASE(ctx, g->head, g->head_cap);
    BP_RELEASE(ctx, g->next, g->next_cap);
    BP_RELEASE(ctx, g->soa, g->soa_cap);
    bp_free(ctx, g, sizeof *g);
}

static void grid_reset(bp_algorithm *m) {
    bp_grid *g = (bp_grid *)m;
    g->ordered = false;
    g->have_geom = false;
    g->table = false;
    g->crowded = false;
    g->head_ok = false;  // wiped whole before its next use
    g->dirty = 0;
    memset(g->rows_ok, 0, sizeof g->rows_ok);
    memset(g->cells_ok, 0, sizeof g->cells_ok);
    memset(g->ext_ok, 0, sizeof g->ext_ok);
    g->n = 0;
    g->xsorted = false;
    for (int l = 0; l < GRID_MAX_LEVELS; ++l) g->geom.lv[l].begin = g->geom.lv[l].end = 0;
    g->geom.levels = 0;
    g->occupied_count = 0;
}

// ---------------------------------------------------------------------------------------------
// Geometry: cell size, window, levels


// The ideal cell per axis and the bulk of the boxes (centre quantiles), from a sample.
// The length the bulk of the sorted sample centres cen[0 .. s) occupies (the span between its
// 5% and 95% quantiles, as qlo and qhi below): its gaps, each counted as at most GRID_GAP_MAX
// times the median gap. Boxes spread evenly have no gap that long (the longest of 57 is about 6
// times the median), so there it is the span; two clusters far apart occupy their own widths.
static double grid_occupied(const double *cen, size_t s) {
    const size_t j0 = s / 20, j1 = s ? s - 1 - s / 20 : 0;
    if (j1 <= j0) return 0.0;
    double gap[BP_SAMPLE];
    size_t ng = 0;
    for (size_t j = j0; j < j1; ++j) gap[ng++] = cen[j + 1] - cen[j];
    double scratch[BP_SAMPLE];
    memcpy(scratch, gap, ng * sizeof *gap);
    const double most = GRID_GAP_MAX * bp_select_double(scratch, ng, ng / 2);
    // Most centres on one coordinate: no typical gap to judge the others by.
    if (!(most > 0.0)) return cen[j1] - cen[j0];
    double len = 0.0;
    for (size_t j = 0; j < ng; ++j) len += gap[j] < most ? gap[j] : most;
    return len;
}

// Boxes per cell on average, for n boxes over lengths `span` (the bulk, or what the sample
// occupies) in cells `cell`: n times the share of the span a cell covers on each axis (all of it
// on an axis where the span is shorter than a cell: `line`).
static double grid_boxes_per_cell(int d, size_t n, const double cell[3], const double span[3]) {
    double per_cell = (double)n;
    for (int a = 0; a < d; ++a)
        if (span[a] > cell[a]) per_cell *= cell[a] / span[a];
    return per_cell;
}

// Cells that hold the long boxes whole on every axis, or 0 for the usual ones (cells sized by
// the boxes' thickness, long boxes in levels of long cells). Long boxes of several orientations,
// or among short boxes, sit in levels that query one another: each querying box costs a region
// and a row or two (about 150 cycles on `plates` 2D, for 7 candidates), while in cells as long
// as the boxes, one level, the whole frame costs under 2 cycles a candidate with the SIMD
// kernels (`plates` 2D 100,000: 2.1 ms for 3.0M; more with the scalar loops: 7.8 -> 5.6 ms
// there against the long cells, `sticks` 2D 8.6 -> 14.5). So cells fit the
// longest axis's median length (GRID_LONG_FIT) on every axis when a box's candidates there,
// about (3^d + 1) / 2 cells' worth of boxes, are at most GRID_FIT_CANDIDATES times the share of
// boxes that would query another level (all but the largest class of orientation, `classes`),
// times what a candidate costs the kernels against a query: GRID_FIT_WIDE with the AVX-512 ones
// (16 a step), 1 with AVX2 (8), 0.75 with the scalar loops; 1.5 times that to keep such cells
// once taken (so that frames near the bound do not change cells, and re-sort, back and forth).
// `plates` 2D 100,000 (half the plates along x, half along y; estimated 36 candidates a box, 30
// tested): 10.6 -> 3.4 ms a frame in a slow spell of the machine. `sticks` 2D (estimated 144,
// 118 tested, against a bound of 58 for its share of 0.48), medians of alternating runs, long
// cells -> square ones: AVX-512 100,000 5.94 -> 3.65 ms (5 runs), 1,000,000 68.7 -> 49.6 (3);
// AVX2 8.5 -> 7.6 (3); scalar 10.5 -> 14.8 (3). 3D: thousands (docs/grid.md).
// *per_cell: the boxes a cell of the fit holds (set where the long boxes have a length to fit).
#define GRID_FIT_CANDIDATES 120.0
#define GRID_FIT_WIDE 3.0
static double grid_fit_long(int d, size_t n, size_t s, const double along[3], const double bulk[3],
                            const size_t classes[4], bool fitted, double *per_cell) {
    double fit = 0.0;
    size_t top = classes[d];
    for (int a = 0; a < d; ++a) {
        if (along[a] * GRID_LONG_FIT > fit) fit = along[a] * GRID_LONG_FIT;
        if (classes[a] > top) top = classes[a];
    }
    if (!(fit > 0.0) || s == 0) return 0.0;
    const double querying = (double)(s - top) / (double)s;
    const double cells[3] = {fit, fit, fit};
    *per_cell = grid_boxes_per_cell(d, n, cells, bulk);
    const double candidates = *per_cell * (d == 2 ? 5.0 : 14.0);
    const int lanes = bp_grid_dense_lanes();
    const double kernel = lanes >= 16 ? GRID_FIT_WIDE : lanes > 0 ? 1.0 : 0.75;
    const double bound = GRID_FIT_CANDIDATES * querying * kernel * (fitted ? 1.5 : 1.0);
    return candidates <= bound ? fit : 0.0;
}

static void grid_ideal(const bp_frame *f, float user_cell, double cell[3], double qlo[3], double qhi[3],
                       double occ[3], bool *small_out, bool *fit_io) {
    const int d = f->dim;
    const size_t n = f->n;
    const size_t s = bp_sample_size(f);
    double ext[BP_SAMPLE], cen[BP_SAMPLE], thin[BP_SAMPLE];
    // Each box's smallest extent: a box's extent on an axis counts at most GRID_ELONGATION times
    // that, so long thin boxes (walls, beams) get cells sized by their thickness and go to levels
    // with long cells on their long axis; boxes of similar extents on every axis are unaffected.
    // And its class for grid_fit_long: the axis it is long on (its longest), or d: not long.
    size_t classes[4] = {0, 0, 0, 0};
    for (size_t j = 0; j < s; ++j) {
        const float *b = bp_sample_box(f, j);
        thin[j] = INFINITY;
        for (int a = 0; a < d; ++a) thin[j] = fmin(thin[j], (double)b[d + a] - (double)b[a]);
        int cls = d;
        double most = GRID_ELONGATION * thin[j];
        for (int a = 0; a < d; ++a) {
            const double e = (double)b[d + a] - (double)b[a];
            if (e > most) {
                most = e;
                cls = a;
            }
        }
        ++classes[cls];
    }
    double typical[3] = {0, 0, 0}, bulk[3] = {0, 0, 0}, along[3] = {0, 0, 0}, median[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a) occ[a] = 0.0;
    for (int a = 0; a < d; ++a) {
        size_t nl = 0;
        for (size_t j = 0; j < s; ++j) {
            const float *b = bp_sample_box(f, j);
            const double e = (double)b[d + a] - (double)b[a];
            if (e > GRID_ELONGATION * thin[j]) cen[nl++] = e;  // (cen as scratch)
            ext[j] = fmin(e, GRID_ELONGATION * thin[j]);
        }
        // The median length of the boxes long on this axis, when they are a real share.
        if (nl * GRID_LONG_SHARE_DIV >= s && nl > 0) along[a] = bp_select_double(cen, nl, nl / 2);
        bp_sample_centres(f, a, cen);
        // The median, then the 75th percentile among the values after it.
        median[a] = s ? bp_select_double(ext, s, s / 2) : 0.0;
        const size_t k3 = (s * 3) / 4;
        typical[a] = k3 > s / 2 ? bp_select_double(ext + s / 2 + 1, s - s / 2 - 1, k3 - s / 2 - 1) : median[a];
        bp_sample_quantiles(cen, s, &qlo[a], &qhi[a]);
        bulk[a] = (qhi[a] - qlo[a]) / 0.9;
        occ[a] = grid_occupied(cen, s) / 0.9;
    }
    // Boxes per cell on average with the usual cells, or with cells that fit the long boxes.
    const double factor = d == 2 ? GRID_CELL_FACTOR_2D : GRID_CELL_FACTOR_3D;
    const double usual[3] = {factor * typical[0], factor * typical[1], factor * typical[2]};
    double per_cell = grid_boxes_per_cell(d, n, usual, bulk), per_fit = 0.0;
    const double fit = grid_fit_long(d, n, s, along, bulk, classes, *fit_io, &per_fit);
    *fit_io = fit > 0.0 && !(user_cell > 0.0f);
    if (*fit_io) per_cell = per_fit;
    const bool crowded = per_cell >= GRID_DENSE_CELL_BOXES;
    *small_out = true;
    for (int a = 0; a < d; ++a) {
        // Points (zero extent) still want a few boxes per cell: the spacing of the bulk where
        // it has boxes (clusters far apart: not the empty space between them). Boxes with an
        // extent take at most GRID_SPACING_CAP times their own cells that way: the spacing
        // assumes they fill the bulk, and boxes along a diagonal band do not (`diag`: cells of
        // 61 for boxes of 2, 120 boxes a cell on the band, 3x slower than cells of 6).
        double spacing = n ? occ[a] / pow((double)n, 1.0 / d) : 0.0;
        double c = (crowded ? GRID_CELL_FACTOR_DENSE : factor) * typical[a];
        const double by_spacing = GRID_SPACING_FACTOR * spacing;
        if (c < by_spacing) c = c > 0.0 ? fmin(by_spacing, GRID_SPACING_CAP * c) : by_spacing;
        // Long boxes go to cells of c 2^k on their long axis: the least k where they span two
        // cells at most, which for a box of length L depends on where it lies when
        // c 2^(k-1) < L <= c 2^k: a share 2 - L / (c 2^(k-1)) of them fits the finer cells.
        // When that splits the long boxes over two levels (between 1/8 and 7/8), each querying
        // the other, c shrinks (by less than half) so that the median length, and a little,
        // is exactly c 2^k: nearly all of them then share one level, with cells barely longer
        // than they are. `sticks` 3D 100,000: cells of 4 put 75% of the sticks in cells of 32
        // and 25% in 64 (six levels): 37.7 ms; 2.6 puts 92% in 41.6: 33 ms. `sticks` 2D keeps
        // its cells (4.8: 96% in 38.4; shrunk to 2.55 it was 4-10% slower).
        if (c > 0.0 && along[a] > c && along[a] < c * 0x1p30) {  // (the shifts stay ints)
            const double fine = ldexp(c, (int)ceil(log2(along[a] / c)) - 1);
            const double share = 2.0 - along[a] / fine;
            if (share > 0.125 && share < 0.875) {
                const double want = along[a] * GRID_LONG_FIT;
                c = want / ldexp(1.0, (int)ceil(log2(want / c)));
            }
        }
        if (*fit_io) c = fit;
        if (user_cell > 0.0f) c = (double)user_cell;
        // Everything identical: any positive cell will do; keep it relative to the coordinates.
        if (!(c > 0.0)) {
            double mag = fabs(qlo[a]) > fabs(qhi[a]) ? fabs(qlo[a]) : fabs(qhi[a]);
            c = mag > 1e-30 ? mag * 1e-6 : 1.0;
        }
        cell[a] = c;
        // Crowds of boxes mostly far smaller than the cells (sizes over decades): most reach
        // no neighbour cell (grid_level_pairs3_reach).
        if (!(crowded && median[a] < GRID_REACH_SMALL * c)) *small_out = false;
    }
}

// The key axes of a level (grid_level.kax). A region query walks one row per cell of the
// level's row and plane axes, so keys should run along the axis on which the querying boxes are
// long. A level of long cells (shifts two or more apart) is queried by the boxes long on the
// other axes (the planner picks the side with fewer rows, grid_plan_cross): its keys run along a
// thin axis, chosen cyclically (cells long on x: along z; on y: along x; on z: along y; in 2D
// the other axis), so that sticks along x query the level of sticks along y, y the z, z the x,
// each through one or two rows, not one per cell of their length (`sticks` 3D: 8.8 rows a
// query before). Other levels keep x, y, z (level 0 always: the key passes' fast path).
static void grid_key_axes(grid_level *L, int d) {
    int hi = 0, lo = 0;
    for (int a = 1; a < d; ++a) {
        if (L->shift[a] > L->shift[hi]) hi = a;
        if (L->shift[a] < L->shift[lo]) lo = a;
    }
    int first = 0;
    L->long_cells = L->shift[hi] - L->shift[lo] >= 2;
    if (L->long_cells) {
        first = (hi + d - 1) % d;
        while (L->shift[first] != L->shift[lo]) first = (first + 1) % d;
    }
    for (int k = 0; k < 3; ++k) L->kax[k] = (uint8_t)(k < d ? (first + k) % d : k);
}

// Fills the levels of a geometry whose level 0 is set: every tuple of per-axis shifts, from 0 to
// the shift where that axis has at most two cells (a box there spans at most two whatever its
// extent). Level index = sum of shift[a] * level_mul[a], x slowest, so (0, 0, 0) is level 0. False
// when the keys do not fit 32 bits or the tuples exceed GRID_MAX_LEVELS.
static bool grid_build_levels(grid_geom *G) {
    const int d = G->dim;
    int count = 1;
    for (int a = 2; a >= 0; --a) {
        int s = 0;
        if (a < d)
            while (((G->g0[a] - 1) >> s) + 1 > 2) ++s;
        G->axis_levels[a] = s + 1;
        G->level_mul[a] = count;
        if (count > GRID_MAX_LEVELS / (s + 1)) return false;
        count *= s + 1;
    }
    uint64_t base = 0;
    for (int l = 0; l < count; ++l) {
        grid_level *L = &G->lv[l];
        uint64_t size = 1, stride[3] = {0, 0, 0};  // 0 past the dimension: those terms vanish
        for (int a = 0; a < 3; ++a) {
            const int sh = (l / G->level_mul[a]) % G->axis_levels[a];
            L->shift[a] = (uint8_t)sh;
            L->g[a] = a < d ? ((G->g0[a] - 1) >> sh) + 1 : 1;
        }
        grid_key_axes(L, d);
        for (int k = 0; k < d; ++k) {
            stride[L->kax[k]] = size;
            size *= (uint64_t)L->g[L->kax[k]] + 2;
        }
        if (base + size >= (uint64_t)GRID_SENTINEL - GRID_PAD) return false;
        for (int a = 0; a < 3; ++a) L->stride[a] = (uint32_t)stride[a];
        for (int k = 0; k < 3; ++k) L->kstride[k] = (uint32_t)stride[L->kax[k]];
        L->base = (uint32_t)base;
        L->size = (uint32_t)size;
        L->begin = L->end = 0;
        base += size;
    }
    G->levels = count;
    G->total = base;
    return true;
}

// Sets level 0 to cover [lo, hi] with cells `cell` (grown until the keys fit).
static void grid_fit(grid_geom *G, int d, const double lo[3], const double hi[3], const double cell_in[3]) {
    double cell[3] = {cell_in[0], cell_in[1], cell_in[2]};
    for (int tries = 0;; ++tries) {
        uint64_t cells = 1;
        bool ok = true;
        for (int a = 0; a < d; ++a) {
            double span = hi[a] - lo[a];
            double g = floor(span / cell[a]) + 1.0;
            if (!(g <= GRID_MAX_AXIS)) {
                ok = false;
                break;
            }
            G->g0[a] = (int64_t)g;
            cells *= (uint64_t)G->g0[a] + 2;
            if (cells > GRID_MAX_CELLS) {
                ok = false;
                break;
            }
        }
        if (ok) {
            G->dim = d;
            for (int a = 0; a < d; ++a) {
                G->origin[a] = lo[a];
                G->cell[a] = cell[a];
                G->inv[a] = 1.0 / cell[a];
                G->fo[a] = (float)lo[a];
                G->fi[a] = (float)G->inv[a];
                G->fg[a] = (float)(G->g0[a] - 1);
                G->wlo[a] = lo[a];
                G->whi[a] = lo[a] + (double)G->g0[a] * cell[a];
            }
            for (int a = d; a < 3; ++a) {
                G->g0[a] = 1;
                G->origin[a] = G->wlo[a] = G->whi[a] = 0.0;
                G->cell[a] = G->inv[a] = 1.0;
                G->fo[a] = G->fg[a] = 0.0f;
                G->fi[a] = 1.0f;
            }
            if (grid_build_levels(G)) return;
        }
        // Too many cells for 32-bit keys: coarser cells.
        for (int a = 0; a < d; ++a) cell[a] *= tries < 64 ? 1.25 : 4.0;
    }
}

// The window of level 0 for cells `cell`: the boxes' bounds with a margin, or, when those would
// need more than GRID_MAX_CELLS cells, cut to the bulk (*robust).
static void grid_window(const bp_frame *f, const double cell[3], const double qlo[3], const double qhi[3],
                        double lo[3], double hi[3], bool *robust) {
    const int d = f->dim;
    uint64_t cells = 1;
    for (int a = 0; a < d; ++a) {
        double span = (double)f->hi[a] - (double)f->lo[a];
        double g0 = floor(span / cell[a]) + 3.0;
        cells = g0 > (double)GRID_MAX_CELLS || cells * (uint64_t)g0 > GRID_MAX_CELLS ? GRID_MAX_CELLS + 1
                                                                                      : cells * (uint64_t)g0;
    }
    *robust = cells > GRID_MAX_CELLS;
    for (int a = 0; a < 3; ++a) lo[a] = hi[a] = 0.0;
    for (int a = 0; a < d; ++a) {
        // A margin so that small motions do not leave the window; when the bounds are far too
        // large for the cells (outliers), cut the window to the bulk of the boxes.
        double l0 = f->lo[a], h0 = f->hi[a];
        if (*robust) bp_bulk_window(f->lo[a], f->hi[a], qlo[a], qhi[a], &l0, &h0);
        double margin = 0.5 * cell[a] + 0.02 * (h0 - l0);
        lo[a] = l0 - margin;
        hi[a] = h0 + margin;
    }
}

static double grid_coarseness(int d, const double want[3], const double got[3]);
static bool grid_crowded_by_sample(int d, size_t n, const double got[3], const double occ[3]);

// Chooses this frame's geometry; keeps last frame's when still good, so that keys (and the
// sorted order) carry over.
static bool grid_choose(bp_grid *g, const bp_frame *f) {
    const int d = f->dim;
    const float user = bp_context_def_of(g->base.ctx)->grid.cell_size;
    double cell[3] = {1, 1, 1}, qlo[3] = {0, 0, 0}, qhi[3] = {0, 0, 0}, occ[3];
    bool small = false, fitted = g->have_geom && g->geom.fitted;
    grid_ideal(f, user, cell, qlo, qhi, occ, &small, &fitted);
    grid_geom *G = &g->geom;
    if (g->have_geom && G->dim == d) {
        bool keep = true;
        for (int a = 0; a < d && keep; ++a) {
            double r = G->cell[a] / cell[a];
            if (user > 0.0f ? r != 1.0 : (r > GRID_KEEP_RATIO || r < 1.0 / GRID_KEEP_RATIO)) keep = false;
            // The window must still hold the boxes (or, when cut to the bulk, the bulk), and
            // not be much larger than needed.
            double lo = G->robust ? qlo[a] : (double)f->lo[a];
            double hi = G->robust ? qhi[a] : (double)f->hi[a];
            if (lo < G->wlo[a] || hi > G->whi[a]) keep = false;
            if ((hi - lo) * 2.0 + 4.0 * G->cell[a] < G->whi[a] - G->wlo[a]) keep = false;
        }
        if (keep) return true;
    }
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool robust = false;
    grid_window(f, cell, qlo, qhi, lo, hi, &robust);
    grid_fit(G, d, lo, hi, cell);
    G->robust = robust;
    G->small = small;
    G->fitted = fitted;
    g->have_geom = true;
    g->coarse = grid_coarseness(d, cell, G->cell);
    g->crowd_sample = grid_crowded_by_sample(d, f->n, G->cell, occ);
    return false;
}

// How much coarser the cells `got` are than the wanted `want` (the keys could not cover the
// window with finer ones): the largest ratio over the axes.
static double grid_coarseness(int d, const double want[3], const double got[3]) {
    double coarse = 1.0;
    for (int a = 0; a < d; ++a)
        if (got[a] > coarse * want[a]) coarse = got[a] / want[a];
    return coarse;
}

// Whether cells `got` hold GRID_DENSE_CELL_BOXES boxes a cell or more on average over the
// lengths the sample's boxes occupy (`occ`). Two clusters of 50,000 boxes 10^6 apart: cells of
// 35 (for the 3 their boxes want), 150 boxes a cell; a sparse world coarsened as much still has
// nearly empty cells.
static bool grid_crowded_by_sample(int d, size_t n, const double got[3], const double occ[3]) {
    return grid_boxes_per_cell(d, n, got, occ) >= GRID_DENSE_CELL_BOXES;
}

static bool bp_grid_too_coarse(const bp_frame *f, float user_cell) {
    const int d = f->dim;
    double cell[3] = {1, 1, 1}, qlo[3] = {0, 0, 0}, qhi[3] = {0, 0, 0}, occ[3], lo[3], hi[3], got[3];
    bool small, robust, fitted = false;
    grid_ideal(f, user_cell, cell, qlo, qhi, occ, &small, &fitted);
    grid_window(f, cell, qlo, qhi, lo, hi, &robust);
    // The cells grid_fit would take, from the cell count alone (the levels' keys may need a
    // little more).
    double cells = 1.0;
    for (int a = 0; a < d; ++a) cells *= floor((hi[a] - lo[a]) / cell[a]) + 3.0;
    const double grow = cells > (double)GRID_MAX_CELLS ? pow(cells / (double)GRID_MAX_CELLS, 1.0 / d) : 1.0;
    for (int a = 0; a < d; ++a) {
        got[a] = cell[a] * grow;
        if ((hi[a] - lo[a]) / got[a] > GRID_MAX_AXIS) got[a] = (hi[a] - lo[a]) / GRID_MAX_AXIS;
    }
    return grid_coarseness(d, cell, got) >= GRID_COARSE_MAX && grid_crowded_by_sample(d, f->n, got, occ);
}

static bool bp_grid_was_too_coarse(const bp_algorithm *m) {
    const bp_grid *g = (const bp_grid *)m;
    // Measured too: a diagonal line or tube fills every axis's span, so the sample cannot see
    // that the coarse cells along it are crowded; the candidates a box of the last call can.
    return g->have_geom && g->coarse >= GRID_COARSE_MAX && (g->crowd_sample || g->crowd_checks);
}

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

// ---------------------------------------------------------------------------------------------
// Building the frame's structure

// Whether this frame sorts its cells (grid_sort_cells): 3D crowds of boxes mostly far smaller
// than the cells, with the AVX-512 kernel.
static bool grid_sorts_cells(const bp_grid *g, size_t n) {
    return g->geom.dim == 3 && g->geom.small && n > 0 && bp_grid_dense_soa_possible();
}

static bp_status grid_reserve(bp_grid *g, size_t n, int d) {
    bp_context *ctx = g->base.ctx;
    const size_t m = n + GRID_PAD;
    const size_t fl = m * (size_t)(2 * d);
    // Everything before the old order is touched, so a failure leaves it intact.
    BP_RESERVE(ctx, g->perm, g->perm_cap, m);
    BP_RESERVE(ctx, g->perm2, g->perm2_cap, m);
    BP_RESERVE_DISCARD(ctx, g->keys, g->keys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->boxes, g->boxes_cap, fl);
    BP_RESERVE_DISCARD(ctx, g->okeys, g->okeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->mkeys, g->mkeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->mpos, g->mpos_cap, m);
    BP_RESERVE_DISCARD(ctx, g->oboxes, g->oboxes_cap, fl);
    // The six arrays of crowded 3D frames (grid_sort_cells), each 64-byte aligned.
    g->soa_stride = (m + 31) & ~(size_t)31;
    if (grid_sorts_cells(g, n)) BP_RESERVE_DISCARD(ctx, g->soa, g->soa_cap, 6 * g->soa_stride);
    return BP_OK;
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
    const uint32_t *BP_RESTRICT perm = g->perm;
    uint32_t *BP_RESTRICT ok = g->okeys;
    float *BP_RESTRICT ob = g->oboxes;
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
    const uint32_t *BP_RESTRICT perm = g->perm;
    uint32_t *BP_RESTRICT ok = g->okeys;
    float *BP_RESTRICT ob = g->oboxes;
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
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT np = g->perm2;
    uint32_t *BP_RESTRICT ok = g->okeys, *BP_RESTRICT mk = g->mkeys, *BP_RESTRICT mp = g->mpos;
    const uint32_t *BP_RESTRICT perm = g->perm;
    const float *BP_RESTRICT ob = g->oboxes;
    float *BP_RESTRICT bx = g->boxes;
    const size_t w = (size_t)(2 * d);
    if (x->old) {
        const size_t nm = x->count;
        g->moved = nm;
        // keys and perm2 are free until the merge: the small sort's buffers.
        bp_radix_sort32(mk, mp, keys, np, nm, g->key_bits);
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
    g->moved = n;
    for (size_t k = 0; k < n; ++k) {
        keys[k] = ok[k];
        mp[k] = (uint32_t)k;
    }
    bp_radix_sort32(keys, mp, mk, np, n, g->key_bits);
    g->resorts++;
    for (size_t o = 0; o < n; ++o) {
        const size_t p = mp[o];
        np[o] = perm[p];
        memcpy(bx + w * o, ob + w * p, w * sizeof(float));  // (first frames only)
    }
}

// First sorted position in level l whose key is >= key: read from the cell index, or searched
// within the key's row when the level has a row index, else in the whole level.
static size_t grid_lower_bound(const bp_grid *g, int l, uint32_t key) {
    const grid_level *L = &g->geom.lv[l];
    if (g->cells_ok[l]) return g->rows[g->roff[l] + (key - L->base)];
    size_t lo = L->begin, hi = L->end;
    if (g->rows_ok[l]) {
        const size_t r = (key - L->base) / L->kstride[1];
        lo = g->rows[g->roff[l] + r];
        hi = g->rows[g->roff[l] + r + 1];
    }
    const uint32_t *keys = g->keys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// grid_region for the query box q (min, max) in level l, tightened by the level's extents where
// known: a box of l that overlaps q starts at or after q's min less the level's largest extent,
// so on an axis where l's boxes are thin against its cells (long cells: sticks), the cell
// before q's is searched only when q starts that close to it, not always (`sticks` 3D: 2.2 thin
// cells a query on each thin axis before). ext is at or above every extent, so q - ext, which
// rounding can move only to a float at or below any float min that is >= the exact difference,
// never misses a box.
static void grid_region_near(const bp_grid *g, int l, const float *q, const int64_t c0[3], const int64_t c1[3],
                             int64_t lo[3], int64_t hi[3]) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    grid_region(G, L, c0, c1, lo, hi);
    if (!g->ext_ok[l]) return;
    const int d = G->dim;
    for (int a = 0; a < d; ++a) {
        const int64_t c = grid_coord(q[a] - g->ext[l][a], G->fo[a], G->fi[a], G->fg[a]) >> L->shift[a];
        if (c > lo[a]) lo[a] = c;
    }
}

// Whether a region query of level L that covers w cells along its rows takes each plane's rows
// as one run of keys: when the boxes the run passes over outside the region, the rest of each
// row, are on average at most GRID_MERGE_SKIP a row (the level's boxes spread over its rows).
// A row costs its lookup and its loop's start and end, at least what 16 candidates in a step cost:
// with 8, the heavy-tailed sizes of docs/grid.md (level 0 of 11 boxes a row, its rows searched
// by a binary search each) took 34 ms a frame in 3D at 100,000, with 16 they take 18 (2D 10.5 ->
// 6.5); the scenes of SCENES.md do not merge either way but `mixed` 3D (100,000: 10.8 -> 8.5).
#define GRID_MERGE_SKIP 16
static bool grid_merge_width(const grid_level *L, int d, uint64_t w) {
    const uint64_t cells = (uint64_t)L->g[L->kax[0]];
    const uint64_t level_rows = (uint64_t)L->g[L->kax[1]] * (d == 3 ? (uint64_t)L->g[L->kax[2]] : 1u);
    const uint64_t boxes = L->end - L->begin;
    return w >= cells || (double)boxes * (double)(cells - w) <= (double)GRID_MERGE_SKIP * (double)level_rows * (double)cells;
}

// Which of two occupied levels queries the other for their cross pairs. The candidates are
// about the same either way; the row lookups are not: a box of level X spans about
// 2^(shift_X - shift_Y + 1) + 1 cells of level Y on an axis where X's cells are larger, 3 where
// they are not, and it looks up one row per cell on Y's row and plane axes (grid_key_axes), or
// one run of keys per plane where the rows merge (grid_merge_width): grid_rows_in. So X queries
// Y when its boxes times their runs in Y are fewer than the other way round (ties: the higher
// level queries): a few large boxes search the fine levels, but many small boxes ask a coarse
// level rather than each large box walking the rows of a much finer one; a box long on x asks
// the level of boxes long on y, through few rows.
static double grid_rows_in(const grid_geom *G, const grid_level *X, const grid_level *Y) {
    double cells[3] = {1.0, 1.0, 1.0};
    for (int k = 0; k < G->dim; ++k) {
        const int a = Y->kax[k];
        cells[k] = X->shift[a] > Y->shift[a] ? ldexp(1.0, X->shift[a] - Y->shift[a] + 1) + 1.0 : 3.0;
    }
    if (grid_merge_width(Y, G->dim, (uint64_t)cells[0])) cells[1] = 1.0;
    return G->dim == 2 ? cells[1] : cells[1] * cells[2];
}

// The row lookups nx boxes make querying a level of ny boxes through rxy rows each: a query
// with rows about as many as the level's boxes scans the level instead.
static double grid_plan_lookups(double nx, double ny, double rxy) { return nx * (2.0 * rxy >= ny ? ny : rxy); }

// Frames whose cells are sorted (grid_sort_cells) take the coarser of two levels to query the
// finer, whatever the rows: in cells that crowded the candidates outweigh the rows, and the
// candidates of a query carry the margins of the level it searches (its cells, its largest
// extent), smaller in the finer level. `sizes` 3D 100,000 (levels of 80,000, 12,000 and 8,000
// boxes): the middle level queried the coarsest, through fewer rows; the coarsest querying it
// instead took the candidates from 105.5M to 93.9M and the frame from 54.4 to 52.5 ms (medians
// of 8 alternating runs).
static void grid_plan_cross(bp_grid *g, bool sorted) {
    const grid_geom *G = &g->geom;
    const int occ = g->occupied_count;
    if (occ > GRID_PLAN_MAX) return;  // the higher level queries the lower (grid_cross_pairs)
    int t = 0;
    for (int x = 0; x < occ; ++x) g->lookups[x] = 0.0;
    for (int x = 0; x < occ; ++x) {
        g->toff[x] = t;
        const grid_level *X = &G->lv[g->occupied[x]];
        const double nx = (double)(X->end - X->begin);
        if (sorted) {
            // Every finer level (the plan of the unplanned case, with its lookups).
            for (int y = 0; y < x; ++y) {
                const grid_level *Y = &G->lv[g->occupied[y]];
                g->targets[t++] = g->occupied[y];
                g->lookups[y] += grid_plan_lookups(nx, (double)(Y->end - Y->begin), grid_rows_in(G, X, Y));
            }
            continue;
        }
        for (int y = 0; y < occ; ++y) {
            if (y == x) continue;
            const grid_level *Y = &G->lv[g->occupied[y]];
            const double ny = (double)(Y->end - Y->begin);
            const double xy = grid_plan_lookups(nx, ny, grid_rows_in(G, X, Y));
            const double yx = grid_plan_lookups(ny, nx, grid_rows_in(G, Y, X));
            if (xy < yx || (xy == yx && x > y)) {
                g->targets[t++] = g->occupied[y];
                g->lookups[y] += xy;
            }
        }
    }
    g->toff[occ] = t;
}

// The largest extent on each axis of level l's boxes (g->ext, g->ext_ok): one pass over them.
static void grid_measure_extent(bp_grid *g, int l) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    const int d = G->dim, w = 2 * d;
    double e[3] = {0.0, 0.0, 0.0};
    for (size_t p = L->begin; p < L->end; ++p) {
        const float *b = g->boxes + (size_t)w * p;  // (min, -max)
        for (int a = 0; a < d; ++a) {
            const double x = -(double)b[d + a] - (double)b[a];
            e[a] = x > e[a] ? x : e[a];
        }
    }
    // Up, past the double rounding of the differences: q - ext in float (grid_region_near)
    // then rounds to a value at or below every float min it bounds (rounding is monotone).
    for (int a = 0; a < 3; ++a) {
        const double up = e[a] + e[a] * 0x1p-40;
        float f = (float)up;
        if ((double)f < up) f = nextafterf(f, INFINITY);
        g->ext[l][a] = f;
    }
    g->ext_ok[l] = true;
}

// Index of the levels that other levels' boxes search: the first sorted position of every cell
// (a region query's row is then two loads, no search) where the budget allows, else of every row
// (each found by a binary search: rows x log n, far less than a pass over the boxes); a level
// beyond both is searched whole. Row indexes first, then cell indexes from the smallest level up
// (a large level that many boxes search must not go without an index). The budget is reserved
// whole, so that the reservation does not change while n does not (no
// allocation once warm).
static bp_status grid_build_rows(bp_grid *g, size_t n) {
    const grid_geom *G = &g->geom;
    const size_t budget = 2 * n + 4096;
    bp_status st = BP_OK;
    g->rows = bp_grow(g->base.ctx, g->rows, &g->rows_cap, budget + 1, sizeof *g->rows, false, &st);
    if (st != BP_OK) return st;
    const bool planned = g->occupied_count <= GRID_PLAN_MAX;
    bool searched[GRID_MAX_LEVELS];
    memset(searched, 0, sizeof searched);
    if (planned) {
        for (int t = 0; t < g->toff[g->occupied_count]; ++t) searched[g->targets[t]] = true;
    } else {
        for (int o = 0; o + 1 < g->occupied_count; ++o) searched[g->occupied[o]] = true;
    }
    // Every searched level gets its row index (small: rows, not cells); then, smallest first,
    // levels searched often trade it for a cell index while the budget lasts.
    size_t total = 0;
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        const grid_level *L = &G->lv[l];
        g->rows_ok[l] = searched[l] && total + L->size / L->kstride[1] + 1 <= budget;
        if (g->rows_ok[l]) total += L->size / L->kstride[1] + 1;
    }
    // A cell index costs a pass over the level's cells each frame: only where the lookups it
    // saves are more than a quarter of its cells.
    bool worth[GRID_MAX_LEVELS];
    memset(worth, 0, sizeof worth);
    for (int o = 0; planned && o < g->occupied_count; ++o)
        worth[g->occupied[o]] = (double)G->lv[g->occupied[o]].size < 4.0 * g->lookups[o];
    for (;;) {
        int best = -1;
        for (int o = 0; o < g->occupied_count; ++o) {
            const int l = g->occupied[o];
            if (g->rows_ok[l] && worth[l] && (best < 0 || G->lv[l].size < G->lv[best].size)) best = l;
        }
        if (best < 0) break;
        const grid_level *L = &G->lv[best];
        const size_t rows = L->size / L->kstride[1] + 1, cells = (size_t)L->size + 1;
        if (total - rows + cells > budget) break;
        total += cells - rows;
        g->rows_ok[best] = false;
        g->cells_ok[best] = true;
    }
    // The extents of the searched levels above 0 (level 0's boxes span two of its cells at most,
    // and it can hold most of the boxes: a pass over them would cost more than it saves), and of
    // the levels of long cells (their same-level pass, grid_level_pairs3_reach).
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        if (l != 0 && (searched[l] || G->lv[l].long_cells)) grid_measure_extent(g, l);
    }
    const uint32_t *keys = g->keys;
    total = 0;
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        if (!g->cells_ok[l] && !g->rows_ok[l]) continue;
        const grid_level *L = &G->lv[l];
        const size_t rows = L->size / L->kstride[1] + 1, cells = (size_t)L->size + 1;
        g->roff[l] = total;
        total += g->cells_ok[l] ? cells : rows;
        uint32_t *out = g->rows + g->roff[l];
        if (g->cells_ok[l]) {
            size_t p = L->begin;
            for (uint32_t c = 0; c <= L->size; ++c) {
                while (p < L->end && keys[p] < L->base + c) ++p;
                out[c] = (uint32_t)p;
            }
            continue;
        }
        size_t p = L->begin;
        for (size_t r = 0; r < rows; ++r) {
            const uint64_t start = (uint64_t)L->base + (uint64_t)r * L->kstride[1];
            size_t hi = L->end;
            while (p < hi) {
                size_t mid = p + (hi - p) / 2;
                if (keys[mid] < start) p = mid + 1;
                else hi = mid;
            }
            out[r] = (uint32_t)p;
        }
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Pairs

// Tests sorted box j against box p (a0..a3 / a) when its key is at most `lim`, and pushes a hit.
// Branch-free but for the (rare) hit: cells hold a box or less on average, so loops that stop
// at the first key past the range would mispredict on almost every box.
#define GRID_TRY2(j, lim)                                                                      \
    do {                                                                                       \
        const float *b_ = bx + 4 * (j);                                                        \
        const int in_ = keys[j] <= (lim);                                                      \
        c += (uint64_t)in_;                                                                    \
        if (BP_UNLIKELY(in_ & grid_hit2(&pr, b_))) {                                           \
            bp_status st_ = bp_sink_push(sink, ids[p], ids[j]);                                \
            if (st_ != BP_OK) return st_;                                                      \
        }                                                                                      \
    } while (0)

// 3D: also within the stop `sp` where `stops` (grid_stop; runs over sorted cells; a constant
// in each specialised copy of the loops).
#define GRID_TRY3(j, lim)                                                                      \
    do {                                                                                       \
        const float *b_ = bx + 6 * (j);                                                        \
        const int in_ = (keys[j] <= (lim)) & (!stops || b_[sp.ax] <= sp.at);                   \
        c += (uint64_t)in_;                                                                    \
        if (BP_UNLIKELY(in_ & grid_hit3(&pr, b_))) {                                           \
            bp_status st_ = bp_sink_push(sink, ids[p], ids[j]);                                \
            if (st_ != BP_OK) return st_;                                                      \
        }                                                                                      \
    } while (0)

// Moves cursor q to the first key >= lo. The distance varies from box to box (about one on
// average), so a plain loop mispredicts; with SSE2 four keys are compared at once and, keys
// being sorted, the ones below lo are a prefix whose length is the count of trailing ones.
#if defined(__SSE2__) && defined(__GNUC__)
#define GRID_ADVANCE(q, lo)                                                                    \
    do {                                                                                       \
        const __m128i bias_ = _mm_set1_epi32((int)0x80000000u);                               \
        const __m128i lim_ = _mm_xor_si128(_mm_set1_epi32((int)(lo)), bias_);                 \
        for (;;) {                                                                             \
            __m128i k_ = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(keys + q)), bias_); \
            unsigned m_ = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(k_, lim_))); \
            q += (size_t)__builtin_ctz(~m_);                                                   \
            if (BP_LIKELY(m_ != 15)) break;                                                    \
        }                                                                                      \
    } while (0)
#else
#define GRID_ADVANCE(q, lo)                                                                    \
    do {                                                                                       \
        q += keys[q] < (lo);                                                                   \
        q += keys[q] < (lo);                                                                   \
        while (BP_UNLIKELY(keys[q] < (lo))) ++q;                                               \
    } while (0)
#endif

// Where a cursor over level L stands for a row that starts at p0 (the first key >= lo): what the
// cursor of a pass started at the level's first box reaches, as it only moves forward to the
// first key >= each box's bound (a task's part starts the pass at p0).
static size_t grid_cursor_at(const bp_grid *g, const grid_level *L, size_t p0, uint32_t lo) {
    if (p0 == L->begin) return L->begin;
    size_t a = L->begin, b = L->end;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (g->keys[mid] < lo) a = mid + 1;
        else b = mid;
    }
    return a;
}

// Crowded cells go to the SIMD kernels of src/grid_dense.c (AVX-512 or AVX2), decided per block of
// this many boxes: a block is crowded when GRID_DENSE_SHARED_NUM / GRID_DENSE_SHARED_DEN of its
// boxes share the cell of the box before (1.5 boxes a cell or more). There a box's runs are
// long (`seed` 100,000: ~2,000 candidates a box) and 16 candidates a compare pay; in sparse
// cells (`uniform`: under one box a cell) the scalar loop's few branch-free tests are cheaper.
// Measured at 1,000,000 (docs/grid.md, "Dense cells"): with every block dense, `uniform` 2D
// 23 -> 33 ms and `mixed` 30 -> 41; with 1/3, `clustered` 42 -> 35 and the others unchanged;
// 1/2 and 3/4 left part of `clustered` scalar.
#define GRID_DENSE_BLOCK 64
#define GRID_DENSE_SHARED_NUM 1
#define GRID_DENSE_SHARED_DEN 3

// Cross-level rows whose starts are looked up together (grid_cross_pairs): a row's start is a
// load of the cell index (or a search of the row index) and then of its keys, likely cache
// misses both; looked up one row at a time, each waited for the last.
#define GRID_ROW_BATCH 32

// Whether the boxes [b, e) are crowded (see GRID_DENSE_BLOCK); always true when forced (tests).
static inline bool grid_block_crowded(const uint32_t *keys, size_t b, size_t e) {
    if (bp_grid_dense_mode >= GRID_DENSE_ALWAYS) return true;
    unsigned shared = 0;
    for (size_t k = b + 1; k < e; ++k) shared += keys[k] == keys[k - 1];
    return (size_t)shared * GRID_DENSE_SHARED_DEN >= (e - b) * GRID_DENSE_SHARED_NUM;
}

// Same-level pairs, 2D: box p meets the rest of its cell and the next cell (keys K, K+1, after
// p) and the three cells of the next row (keys K+S-1 .. K+S+1), found by a cursor. Boxes
// [p0, p1) of the level; crowded blocks of them through bp_grid_dense_pairs2 (same pairs, same
// order).
static bp_status grid_level_pairs2(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, bp_sink *sink,
                                   uint64_t *checks) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    const uint32_t sx = L->kstride[1];
    size_t c1 = p0 < p1 ? grid_cursor_at(g, L, p0, keys[p0] + sx - 1) : p0;
    const bool dense = bp_sink_split(sink) == 0 && bp_grid_dense_available();
    uint64_t c = 0;
    for (size_t p = p0; p < p1;) {
        const size_t pe = p1 - p > GRID_DENSE_BLOCK ? p + GRID_DENSE_BLOCK : p1;
        if (dense && grid_block_crowded(keys, p, pe)) {
            bp_status st = bp_grid_dense_pairs2(g, L, p, pe, &c1, sink, &c);
            if (st != BP_OK) return st;
            p = pe;
            continue;
        }
        for (; p < pe; ++p) {
            const uint32_t K = keys[p];
            const grid_probe pr = grid_probe_make(bx + 4 * p, 2);
            size_t j = p + 1;
            for (;;) {
                GRID_TRY2(j, K + 1);
                GRID_TRY2(j + 1, K + 1);
                if (BP_LIKELY(keys[j + 1] > K + 1)) break;
                j += 2;
            }
            const uint32_t lo = K + sx - 1, hi = K + sx + 1;
            GRID_ADVANCE(c1, lo);
            for (j = c1;; j += 3) {
                GRID_TRY2(j, hi);
                GRID_TRY2(j + 1, hi);
                GRID_TRY2(j + 2, hi);
                if (BP_LIKELY(keys[j + 2] > hi)) break;
            }
        }
    }
    *checks += c;
    return BP_OK;
}

// The 3D same-level runs past a box's own cell: the key offsets of the next row and of the
// previous, same and next row of the next plane, and a cursor into each at box p0.
static void grid_runs3_start(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, uint32_t off[4],
                             size_t cur[4]) {
    const uint32_t sx = L->kstride[1], sxy = L->kstride[2];
    off[0] = sx;
    off[1] = sxy - sx;
    off[2] = sxy;
    off[3] = sxy + sx;
    for (int r = 0; r < 4; ++r) cur[r] = p0 < p1 ? grid_cursor_at(g, L, p0, g->keys[p0] + off[r] - 1) : p0;
}

// Whether the run's next box j (its key at most lim) is still in it: for the unrolled loops.
#define GRID_GOES3(j, lim) (keys[j] <= (lim) && (!stops || bx[6 * (j) + sp.ax] <= sp.at))

// Functions whose loops are specialised on a constant `stops` (with and without the test).
#define GRID_SPECIALISED __attribute__((always_inline)) static inline

// Same-level pairs, 3D: the 13 forward neighbours are four runs of three consecutive keys
// (next row; previous, same and next row of the next plane) besides the next cell. Boxes
// [p0, p1) of the level; crowded blocks through bp_grid_dense_pairs3.
GRID_SPECIALISED bp_status grid_level_pairs3_as(const bp_grid *g, const grid_level *L, size_t p0, size_t p1,
                                               bp_sink *sink, uint64_t *checks, const bool stops) {
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    uint32_t off[4];
    size_t cur[4];
    grid_runs3_start(g, L, p0, p1, off, cur);
    const bool dense = bp_sink_split(sink) == 0 && bp_grid_dense_available();
    const int stop = stops ? L->kax[0] : -1;  // the runs are along rows
    uint64_t c = 0;
    for (size_t p = p0; p < p1;) {
        const size_t pe = p1 - p > GRID_DENSE_BLOCK ? p + GRID_DENSE_BLOCK : p1;
        if (dense && grid_block_crowded(keys, p, pe)) {
            bp_status st = bp_grid_dense_pairs3(g, L, p, pe, cur, sink, &c);
            if (st != BP_OK) return st;
            p = pe;
            continue;
        }
        for (; p < pe; ++p) {
            const uint32_t K = keys[p];
            const grid_probe pr = grid_probe_make(bx + 6 * p, 3);
            const grid_stop sp = grid_stop_make(bx + 6 * p, 3, stop);
            size_t j = p + 1;
            for (;;) {
                GRID_TRY3(j, K + 1);
                GRID_TRY3(j + 1, K + 1);
                if (BP_LIKELY(!GRID_GOES3(j + 1, K + 1))) break;
                j += 2;
            }
            for (int r = 0; r < 4; ++r) {
                const uint32_t lo = K + off[r] - 1, hi = K + off[r] + 1;
                size_t q = cur[r];
                GRID_ADVANCE(q, lo);
                cur[r] = q;
                for (j = q;; j += 3) {
                    GRID_TRY3(j, hi);
                    GRID_TRY3(j + 1, hi);
                    GRID_TRY3(j + 2, hi);
                    if (BP_LIKELY(!GRID_GOES3(j + 2, hi))) break;
                }
            }
        }
    }
    *checks += c;
    return BP_OK;
}

static bp_status grid_level_pairs3(const bp_grid *g, const grid_level *L, size_t p0, size_t p1, bp_sink *sink,
                                   uint64_t *checks) {
    return g->xsorted ? grid_level_pairs3_as(g, L, p0, p1, sink, checks, true)
                      : grid_level_pairs3_as(g, L, p0, p1, sink, checks, false);
}

// Same-level pairs, 3D, where boxes are far smaller than the cells on some axes (levels of long
// cells: sticks 3D, 0.8 in cells of 4; level 0 of crowds of small boxes, G->small: sizes 3D):
// the runs of grid_level_pairs3, each cut to the cells the box can reach. The cell after its
// own is needed only when the box reaches into it, and the cell before only when a box of the
// level starting there can reach this one (the level's largest extent, rounded up:
// grid_measure_extent). Skipped cells hold no box that overlaps, so the pairs and their order
// are those of grid_level_pairs3 (checks of a frame, 100,000 boxes: sticks 3D 9.35M -> 7.88M,
// sizes 3D 128.8M -> 104.6M). Per box it costs eight cell coordinates: on sparse cells the
// cursor loop is faster (level 0 of `mixed` 3D: 8.7 -> 17.6 ms), and where boxes are as large
// as the cells they reach their neighbours anyway (`line` 3D: slower).
GRID_SPECIALISED bp_status grid_level_pairs3_reach_as(const bp_grid *g, int l, size_t p0, size_t p1, bp_sink *sink,
                                                     uint64_t *checks, const bool stops) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    uint32_t off[4];
    size_t cur[4];
    grid_runs3_start(g, L, p0, p1, off, cur);
    const bool dense = bp_sink_split(sink) == 0 && bp_grid_dense_available();
    const int stop = stops ? L->kax[0] : -1;  // the runs are along rows
    uint64_t c = 0;
    for (size_t p = p0; p < p1; ++p) {
        const float *a = bx + 6 * p;  // (min, -max)
        const uint32_t K = keys[p];
        // Per key axis: the box reaches the next cell (up); a box of the level that starts in
        // the cell before can reach this one (down: no run looks at the plane before).
        bool up[3], down[2];
        for (int k = 0; k < 3; ++k) {
            const int ax = L->kax[k], sh = L->shift[ax];
            const int64_t c0 = grid_coord(a[ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh;
            up[k] = (grid_coord(-a[3 + ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh) > c0;
            if (k < 2) down[k] = (grid_coord(a[ax] - g->ext[l][ax], G->fo[ax], G->fi[ax], G->fg[ax]) >> sh) < c0;
        }
        // The runs: the rest of the own cell (and the next), then the next row and the three
        // rows of the next plane, each over the cells before, at and after the box's.
        const bool need[4] = {up[1], down[1] && up[2], up[2], up[1] && up[2]};
        const uint32_t hi0 = up[0] ? 1u : 0u;
        size_t start[5];
        uint32_t lim[5];
        size_t nr = 0;
        start[nr] = p + 1;
        lim[nr++] = K + hi0;
        for (int r = 0; r < 4; ++r) {
            size_t q = cur[r];
            GRID_ADVANCE(q, K + off[r] - 1);
            cur[r] = q;
            if (!need[r]) continue;
            if (!down[0]) GRID_ADVANCE(q, K + off[r]);
            start[nr] = q;
            lim[nr++] = K + off[r] + hi0;
        }
        // The box's runs in one call, its probe built once (with a call and a probe per run,
        // level 0 of `sizes` 3D 100,000 took 16.3M cycles in this pass, 14.0M so).
        if (dense) {
            bp_status st = bp_grid_dense_runs(g, a, ids[p], start, lim, nr, stop, sink, &c);
            if (st != BP_OK) return st;
            continue;
        }
        const grid_probe pr = grid_probe_make(a, 3);
        const grid_stop sp = grid_stop_make(a, 3, stop);
        for (size_t r = 0; r < nr; ++r)
            for (size_t j = start[r]; GRID_GOES3(j, lim[r]); ++j) {
                ++c;
                if (grid_hit3(&pr, bx + 6 * j)) {
                    bp_status st = bp_sink_push(sink, ids[p], ids[j]);
                    if (st != BP_OK) return st;
                }
            }
    }
    *checks += c;
    return BP_OK;
}

static bp_status grid_level_pairs3_reach(const bp_grid *g, int l, size_t p0, size_t p1, bp_sink *sink,
                                        uint64_t *checks) {
    return g->xsorted ? grid_level_pairs3_reach_as(g, l, p0, p1, sink, checks, true)
                      : grid_level_pairs3_reach_as(g, l, p0, p1, sink, checks, false);
}

// Whether a region query of level L over cells [lo, hi] takes each plane's rows as one run of
// keys (grid_cross_pairs).
static bool grid_merge_rows(const grid_level *L, int d, const int64_t lo[3], const int64_t hi[3]) {
    const int a1 = L->kax[1];
    return hi[a1] > lo[a1] && grid_merge_width(L, d, (uint64_t)(hi[L->kax[0]] - lo[L->kax[0]] + 1));
}

// Cross-level pairs: each box of occupied level mo (boxes [p0, p1)) against the levels it
// queries (grid_plan_cross), as a region query of its own box: each pair of boxes in two levels
// is found from the one whose level queries the other's, once.
static bp_status grid_cross_pairs(const bp_grid *g, int mo, size_t p0, size_t p1, bp_sink *sink, uint64_t *checks) {
    const grid_geom *G = &g->geom;
    const int d = G->dim;
    const uint32_t *BP_RESTRICT keys = g->keys;
    const float *BP_RESTRICT bx = g->boxes;
    const uint32_t *BP_RESTRICT ids = g->perm;
    // Rows of boxes sorted by key, as in the same-level pass: the SIMD runs where there.
    const bool dense = bp_sink_split(sink) == 0 && bp_grid_dense_available();
    uint64_t c = 0;
    for (size_t p = p0; p < p1; ++p) {
        const float *a = bx + (size_t)(2 * d) * p;
        const grid_probe pr = grid_probe_make(a, d);
        // The cells of the box itself (its stored max is negated).
        float box[6];
        for (int e = 0; e < d; ++e) {
            box[e] = a[e];
            box[d + e] = -a[d + e];
        }
        int64_t c0[3], c1[3];
        grid_cells(G, box, c0, c1);
        const bool planned = g->occupied_count <= GRID_PLAN_MAX;
        const int t0 = planned ? g->toff[mo] : 0, t1 = planned ? g->toff[mo + 1] : mo;
        for (int t = t0; t < t1; ++t) {
            const int l = planned ? g->targets[t] : g->occupied[t];
            const grid_level *L = &G->lv[l];
            int64_t lo[3], hi[3];
            grid_region_near(g, l, box, c0, c1, lo, hi);
            const int a0 = L->kax[0], a1 = L->kax[1], a2 = L->kax[2];
            const uint64_t rows = (uint64_t)(hi[a1] - lo[a1] + 1) * (uint64_t)(hi[a2] - lo[a2] + 1);
            if (2 * rows >= L->end - L->begin) {
                // Rows about as many as boxes (a box spanning a huge extent, or a level of a few
                // boxes): a search per row would cost in proportion to the extent (issue #17), a
                // scan of the level to its boxes, never more than brute force.
                if (dense && (L->end - L->begin >= GRID_DENSE_ROW_MIN || bp_grid_dense_mode >= GRID_DENSE_ALWAYS)) {
                    bp_status st = bp_grid_dense_run(g, a, ids[p], L->begin, L->end, GRID_SENTINEL - 1, -1, sink, &c);
                    if (st != BP_OK) return st;
                    continue;
                }
                for (size_t j = L->begin; j < L->end; ++j) {
                    const float *b = bx + (size_t)(2 * d) * j;
                    const unsigned hit = (unsigned)(d == 2 ? grid_hit2(&pr, b) : grid_hit3(&pr, b));
                    bp_status st = bp_sink_room(sink, 1);
                    if (BP_UNLIKELY(st != BP_OK)) return st;
                    bp_sink_put(sink, ids[p], ids[j], hit);
                }
                c += L->end - L->begin;
                continue;
            }
            // A plane's rows as one run of keys, from its first row's start to its last row's
            // end, when the boxes that run passes over outside the region (the rest of each row)
            // are few: a box far larger than the level's cells meets thousands of rows of a few
            // boxes each, and a search per row cost more than testing those boxes (grid_merge_rows).
            const uint64_t span = grid_merge_rows(L, d, lo, hi) ? (uint64_t)(hi[a1] - lo[a1] + 1) : 1;
            const uint64_t runs = rows / span;
            // Runs along one row of sorted cells stop at the first box past the query's max.
            const int stop = g->xsorted && span == 1 ? L->kax[0] : -1;
            const grid_stop sp = grid_stop_make(a, d, stop);
            // Rows in batches: first every row's start (independent loads of the index, then
            // prefetches of its first keys and boxes, all in flight at once), then the rows in
            // order, plane axis outer and row axis inner.
            int64_t y = lo[a1], z = lo[a2];
            for (uint64_t r0 = 0; r0 < runs; r0 += GRID_ROW_BATCH) {
                const uint64_t nr = runs - r0 < GRID_ROW_BATCH ? runs - r0 : GRID_ROW_BATCH;
                size_t start[GRID_ROW_BATCH];
                uint32_t last[GRID_ROW_BATCH];
                for (uint64_t r = 0; r < nr; ++r) {
                    const uint64_t plane = L->base + (uint64_t)(z + 1) * L->kstride[2] + (uint64_t)(lo[a0] + 1);
                    const uint32_t klo = (uint32_t)(plane + (uint64_t)(y + 1) * L->kstride[1]);
                    y += (int64_t)span;
                    last[r] = (uint32_t)(plane + (uint64_t)y * L->kstride[1]) + (uint32_t)(hi[a0] - lo[a0]);
                    start[r] = grid_lower_bound(g, l, klo);
                    GRID_PREFETCH_READ(keys + start[r]);
                    GRID_PREFETCH_READ(bx + (size_t)(2 * d) * start[r]);
                    if (y > hi[a1]) {
                        y = lo[a1];
                        ++z;
                    }
                }
                // A batch of short rows only (long boxes' queries into levels of a few boxes a
                // cell: `plates`, `sticks`) is tested here, box by box, as the kernel would
                // (grid_row_long): its call and probe cost more than those few boxes.
                bool steps = dense && bp_grid_dense_mode >= GRID_DENSE_ALWAYS;
                for (uint64_t r = 0; r < nr && dense && !steps; ++r)
                    steps = grid_row_long(keys, start[r], last[r]);
                if (steps) {
                    bp_status st = bp_grid_dense_rows(g, a, ids[p], start, last, (size_t)nr, stop, sink, &c);
                    if (st != BP_OK) return st;
                    continue;
                }
                for (uint64_t r = 0; r < nr; ++r) {
                    bp_status st = stop >= 0 ? grid_row_boxes(g, &pr, &sp, ids[p], start[r], last[r], sink, &c, true)
                                             : grid_row_boxes(g, &pr, &sp, ids[p], start[r], last[r], sink, &c, false);
                    if (st != BP_OK) return st;
                }
            }
        }
    }
    *checks += c;
    return BP_OK;
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
    for (size_t k = b; k < e; ++k) j->g->perm[k] = (uint32_t)k;
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
    const uint32_t *ok = j->g->okeys;
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
    uint32_t *BP_RESTRICT ok = j->g->okeys;
    uint32_t *BP_RESTRICT mk = j->g->mkeys + from, *BP_RESTRICT mp = j->g->mpos + from;
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
    const uint32_t *mk = j->g->mkeys + j->u[t], *mp = j->g->mpos + j->u[t];
    for (size_t i = 0; i < j->moved[t]; ++i) j->g->okeys[mp[i]] = mk[i];
}

// Task t's kept boxes (okeys[u[t] .. u[t+1]) not pulled out) merged with the moved boxes
// jm[t] .. jm[t+1], ties to the kept box: grid_sort_gather's merge, from position at[t]. The
// arrays are read through restrict locals: through g, each box's copy (a memcpy, which may
// write anything) made the compiler load every pointer again for the next box.
static void grid_par_merge_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_par *j = user;
    const bp_grid *g = j->g;
    const uint32_t *BP_RESTRICT ok = g->okeys, *BP_RESTRICT mk = g->mkeys, *BP_RESTRICT mp = g->mpos;
    const uint32_t *BP_RESTRICT perm = g->perm;
    const float *BP_RESTRICT ob = g->oboxes;
    uint32_t *BP_RESTRICT keys = g->keys, *BP_RESTRICT np = g->perm2;
    float *BP_RESTRICT bx = g->boxes;
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
        j->g->keys[k] = j->g->okeys[k];
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
        g->perm2[o] = g->perm[p];
        memcpy(g->boxes + w * o, g->oboxes + w * p, w * sizeof(float));
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
            uint32_t *mk = g->mkeys, *mp = g->mpos;
            size_t at = 0;
            for (uint32_t t = 0; t < j.tasks; ++t) {
                memmove(mk + at, mk + j.u[t], j.moved[t] * sizeof *mk);
                memmove(mp + at, mp + j.u[t], j.moved[t] * sizeof *mp);
                at += j.moved[t];
            }
            g->moved = nm;
            st = bp_par_radix32(ctx, mk, mp, g->keys, g->perm2, nm, g->key_bits);
            if (st != BP_OK) return st;
            mk[nm] = GRID_SENTINEL;
            // Each task's moved boxes: those below its first kept key (none kept: the next's).
            size_t kept_before = 0, next = nm;
            for (uint32_t t = j.tasks; t-- > 0;) {
                size_t i = j.u[t];
                while (i < j.u[t + 1] && g->okeys[i] == GRID_MOVED) ++i;
                if (i < j.u[t + 1]) {
                    size_t a = 0, b = next;
                    while (a < b) {
                        size_t mid = a + (b - a) / 2;
                        if (mk[mid] < g->okeys[i]) a = mid + 1;
                        else b = mid;
                    }
                    next = a;
                }
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
    g->moved = n;
    j.full = g->mpos;
    st = bp_par_run(ctx, j.tasks, grid_par_fill_task, &j);
    if (st == BP_OK) st = bp_par_radix32(ctx, g->keys, g->mpos, g->mkeys, g->perm2, n, g->key_bits);
    g->resorts++;
    if (st == BP_OK) st = bp_par_run(ctx, j.tasks, grid_par_gather_task, &j);
    return st;
}

typedef struct grid_count_job {
    const bp_grid *g;
    size_t n;
    uint32_t tasks;
    size_t *shared;  // per task
} grid_count_job;

static void grid_count_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_count_job *j = user;
    size_t b, e, c = 0;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    for (size_t k = b ? b : 1; k < e; ++k) c += j->g->keys[k] == j->g->keys[k - 1];
    j->shared[t] = c;
}

// A box's queries of the other levels cost many times its own level's pass (row lookups in
// several levels): each counts as this many items when the pair pass is cut into tasks, so that
// the few large boxes of a scene like `mixed` spread over several tasks instead of one (with 2
// workers one task held most of the cross-level work: mixed at 1,000,000 took 22.3 ms a frame
// with weight 1, 19.3 with 16, 18.4 with 64, 32.5 with one worker). Which box goes to which
// task does not change the pairs or their order.
#define GRID_CROSS_WEIGHT 64

// The pair passes as one list of items: per occupied level, its boxes against their own level,
// then (when it queries others) against the levels it queries; a task's part may span several.
typedef struct grid_pairs_job {
    const bp_grid *g;
    int nseg;
    size_t off[2 * GRID_MAX_LEVELS + 1];  // items: a level pass's boxes, GRID_CROSS_WEIGHT per cross box
    int level[2 * GRID_MAX_LEVELS];
    int occ[2 * GRID_MAX_LEVELS];  // the level's place among the occupied ones
    bool cross[2 * GRID_MAX_LEVELS];
} grid_pairs_job;

static bp_status grid_pairs_part(void *user, size_t v0, size_t v1, uint32_t worker, bp_sink *sink,
                                 uint64_t *checks) {
    (void)worker;
    const grid_pairs_job *j = user;
    const bp_grid *g = j->g;
    for (int s = 0; s < j->nseg; ++s) {
        if (j->off[s + 1] <= v0 || j->off[s] >= v1) continue;
        const grid_level *L = &g->geom.lv[j->level[s]];
        // Box b of the segment owns items [off + b w, off + (b + 1) w): a task takes the boxes
        // whose first item is in [v0, v1), so every box is taken once.
        const size_t w = j->cross[s] ? GRID_CROSS_WEIGHT : 1;
        const size_t a0 = v0 > j->off[s] ? v0 - j->off[s] : 0;
        const size_t a1 = (v1 < j->off[s + 1] ? v1 : j->off[s + 1]) - j->off[s];
        const size_t p0 = L->begin + (a0 + w - 1) / w, p1 = L->begin + (a1 + w - 1) / w;
        if (p0 >= p1) continue;
        bp_status st;
        if (j->cross[s]) st = grid_cross_pairs(g, j->occ[s], p0, p1, sink, checks);
        else if (g->geom.dim == 2) st = grid_level_pairs2(g, L, p0, p1, sink, checks);
        else if ((L->long_cells || (j->level[s] == 0 && g->geom.small)) && g->ext_ok[j->level[s]])
            st = grid_level_pairs3_reach(g, j->level[s], p0, p1, sink, checks);
        else st = grid_level_pairs3(g, L, p0, p1, sink, checks);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Sorted cells (crowded 3D frames: bp_grid.xsorted)

_Atomic unsigned long long bp_grid_sorted_frames;

// Sorts the cells among sorted positions [b, e) (whole cells) by their boxes' min on the level's
// key axis kax[0], boxes and ids together: an insertion sort, as the order is last frame's and
// the boxes moved little. Ties keep their order, so the result is the same whatever the tasks.
// Then the six arrays' codes of those positions (grid_code).
static void grid_sort_cells_range(bp_grid *g, size_t b, size_t e) {
    const grid_geom *G = &g->geom;
    const uint32_t *BP_RESTRICT keys = g->keys;
    float *BP_RESTRICT bx = g->boxes;
    uint32_t *BP_RESTRICT ids = g->perm;
    int o = 0;
    for (size_t i = b + 1; i < e; ++i) {
        while (G->lv[g->occupied[o]].end <= i) ++o;
        const int ax = G->lv[g->occupied[o]].kax[0];
        if (keys[i] != keys[i - 1] || !(bx[6 * i + ax] < bx[6 * (i - 1) + ax])) continue;
        float t[6];
        memcpy(t, bx + 6 * i, sizeof t);
        const uint32_t id = ids[i];
        size_t j = i;
        do {
            memcpy(bx + 6 * j, bx + 6 * (j - 1), sizeof t);
            ids[j] = ids[j - 1];
            --j;
        } while (j > b && keys[j - 1] == keys[i] && bx[6 * (j - 1) + ax] > t[ax]);
        memcpy(bx + 6 * j, t, sizeof t);
        ids[j] = id;
    }
    int16_t *BP_RESTRICT out = g->soa;
    const size_t w = g->soa_stride;
    for (int a = 0; a < 6; ++a)
        for (size_t i = b; i < e; ++i) out[(size_t)a * w + i] = grid_code(&g->codes, a, bx[6 * i + a]);
}

// The codes of the frame's six arrays (grid_code): half the window of the cells, about its
// centre (a float), to +-GRID_CODE_SPAN on each axis; -max values about minus the centre.
static void grid_codes_set(bp_grid *g) {
    const grid_geom *G = &g->geom;
    for (int a = 0; a < 3; ++a) {
        const double half = 0.5 * (G->whi[a] - G->wlo[a]);
        const float o = (float)(0.5 * G->wlo[a] + 0.5 * G->whi[a]);
        // s = 0 where the window is empty or beyond doubles: every code equal, the floats decide.
        const double s = half > 0.0 && isfinite(o) ? GRID_CODE_SPAN / half : 0.0;
        g->codes.o[a] = (double)o;
        g->codes.o[3 + a] = -(double)o;
        g->codes.s[a] = g->codes.s[3 + a] = isfinite(s) ? s : 0.0;
    }
}

// The first position at or after i where a cell starts (n at most).
static size_t grid_cell_start(const uint32_t *keys, size_t i, size_t n) {
    while (i > 0 && i < n && keys[i] == keys[i - 1]) ++i;
    return i;
}

typedef struct grid_cells_job {
    bp_grid *g;
    size_t n;
    uint32_t tasks;
} grid_cells_job;

static void grid_sort_cells_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const grid_cells_job *j = user;
    size_t b, e;
    bp_par_range(j->n, j->tasks, t, &b, &e);
    b = grid_cell_start(j->g->keys, b, j->n);
    e = grid_cell_start(j->g->keys, e, j->n);
    if (b < e) grid_sort_cells_range(j->g, b, e);
}

// 3D frames of crowded cells of boxes mostly far smaller than them (G->small: `sizes`) sort
// their cells (bp_grid.xsorted): there a box's runs are long (`sizes` 3D 100,000: 16 boxes a
// level-0 cell, over a hundred in the coarsest level), and a run along a row of a level, sorted
// by the min on its key axis, stops at the first box that starts past the probe instead of at
// the row's end. The same pass writes the six arrays the AVX-512 kernel reads (reserved with
// the frame's arrays whenever it sorts: grid_reserve). Both
// only with AVX-512: the stops alone, on the stored boxes, made `sizes` 3D slower (the stop bits
// are gathered from the compare masks: 61.5 against 58.9 ms), so CPUs without it do not sort
// (every mode of bp_grid_dense_mode sorts alike: the modes give the same pairs). Where cells
// hold a box or two, or the boxes are as large as the cells (`line` 3D), the pass cuts nothing.
// docs/grid.md, "Sorted cells".
static bp_status grid_sort_cells(bp_grid *g, size_t n) {
    g->xsorted = false;
    if (!grid_sorts_cells(g, n)) return BP_OK;
    grid_codes_set(g);
    grid_cells_job j = {g, n, bp_par_tasks(g->base.ctx, n, BP_PAR_GRAIN_MAP)};
    if (j.tasks > 1) {
        const bp_status st = bp_par_run(g->base.ctx, j.tasks, grid_sort_cells_task, &j);
        if (st != BP_OK) return st;
    } else {
        grid_sort_cells_range(g, 0, n);
    }
    // The padding boxes, as in g->boxes (their keys end every run).
    for (int a = 0; a < 6; ++a)
        for (size_t i = n; i < n + GRID_PAD; ++i) g->soa[(size_t)a * g->soa_stride + i] = 0;
    g->xsorted = true;
    atomic_fetch_add_explicit(&bp_grid_sorted_frames, 1, memory_order_relaxed);
    return BP_OK;
}

static bp_status grid_find_pairs_run(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_grid *g = (bp_grid *)m;
    const size_t n = f->n;
    const int d = f->dim;
    // The table (the last call's, if any) is cleared by bp_grid_table_find, whichever layout runs.
    g->table = false;
    g->xsorted = false;
    memset(g->rows_ok, 0, sizeof g->rows_ok);
    memset(g->cells_ok, 0, sizeof g->cells_ok);
    memset(g->ext_ok, 0, sizeof g->ext_ok);
    const bool same_grid = grid_choose(g, f);
    bool done;
    bp_status st = bp_grid_table_find(g, f, sink, checks, &done);
    if (st != BP_OK || done) return st;
    st = grid_reserve(g, n, d);
    if (st != BP_OK) return st;
    grid_geom *G = &g->geom;
    unsigned bits = 1;
    while (bits < 32 && (G->total >> bits) != 0) ++bits;
    g->key_bits = bits;

    const bool coherent = g->ordered && g->n == n && same_grid;
    const bool reset = !(g->ordered && g->n == n);
    for (size_t k = n; k < n + GRID_PAD; ++k) g->perm[k] = 0;  // read by the prefetches
    if (bp_par_tasks(m->ctx, n, BP_PAR_GRAIN_MAP) > 1) {
        st = grid_par_build(g, f, reset, coherent);
        if (st != BP_OK) {
            g->ordered = false;
            return st;
        }
    } else {
        if (reset)
            for (size_t k = 0; k < n; ++k) g->perm[k] = (uint32_t)k;
        grid_extract x = {coherent ? g->keys : NULL, g->mkeys, g->mpos, 0, n / GRID_MOVED_MAX_DIV, 0};
        if (d == 2) grid_keys2(g, f, 0, n, &x);
        else grid_keys3(g, f, 0, n, &x);
        grid_sort_gather(g, n, d, &x);
    }
    // The new order becomes next frame's starting point.
    {
        uint32_t *t = g->perm;
        g->perm = g->perm2;
        g->perm2 = t;
        size_t tc = g->perm_cap;
        g->perm_cap = g->perm2_cap;
        g->perm2_cap = tc;
    }
    for (size_t k = n; k < n + GRID_PAD; ++k) g->keys[k] = GRID_SENTINEL;
    // The dense kernels load 16 ids at a time, past the last box too (ignored lanes).
    for (size_t k = n; k < n + GRID_PAD; ++k) g->perm[k] = 0;
    // The padding boxes are read (and ignored: their keys are past every range) by the tests.
    memset(g->boxes + (size_t)(2 * d) * n, 0, (size_t)(2 * d) * GRID_PAD * sizeof(float));
    g->n = n;
    g->ordered = true;

    // Level ranges in the sorted order.
    int coarse = 0;  // the last non-empty level
    g->occupied_count = 0;
    size_t lo = 0;  // levels are consecutive key ranges: each begins where the last ended
    for (int l = 0; l < G->levels; ++l) {
        grid_level *L = &G->lv[l];
        size_t hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->keys[mid] < L->base) lo = mid + 1;
            else hi = mid;
        }
        L->begin = lo;
        hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->keys[mid] < L->base + L->size) lo = mid + 1;
            else hi = mid;
        }
        L->end = lo;
        if (L->end > L->begin) {
            coarse = l;
            g->occupied[g->occupied_count++] = l;
        }
    }
    grid_plan_cross(g, grid_sorts_cells(g, n));
    st = grid_sort_cells(g, n);
    if (st != BP_OK) return st;
    if (coarse > 0) {
        st = grid_build_rows(g, n);
        if (st != BP_OK) return st;
    }
    // Crowds of small boxes in 3D: level 0's same-level pass cut to reach too.
    if (d == 3 && G->small && G->lv[0].end > G->lv[0].begin && !g->ext_ok[0]) grid_measure_extent(g, 0);
    // Where the table could serve, the crowding that decides between the layouts next frame.
    if (coarse == 0 && bp_grid_table_possible(g, f)) {
        grid_count_job cj = {g, n, bp_par_tasks(m->ctx, n, BP_PAR_GRAIN_MAP), NULL};
        cj.shared = bp_par_scratch(m->ctx, cj.tasks * sizeof *cj.shared, &st);
        if (st == BP_OK) st = bp_par_run(m->ctx, cj.tasks, grid_count_task, &cj);
        if (st != BP_OK) return st;
        size_t shared = 0;
        for (uint32_t t = 0; t < cj.tasks; ++t) shared += cj.shared[t];
        bp_grid_note_crowding(g, shared, n);
    }
    grid_pairs_job pj;
    memset(&pj, 0, sizeof pj);
    pj.g = g;
    size_t items = 0;
    const bool planned = g->occupied_count <= GRID_PLAN_MAX;
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        const grid_level *L = &G->lv[l];
        const bool queries = planned ? g->toff[o + 1] > g->toff[o] : o > 0;
        for (int cross = 0; cross < 1 + queries; ++cross) {
            pj.off[pj.nseg] = items;
            pj.level[pj.nseg] = l;
            pj.occ[pj.nseg] = o;
            pj.cross[pj.nseg++] = cross;
            items += (L->end - L->begin) * (cross ? GRID_CROSS_WEIGHT : 1);
        }
    }
    pj.off[pj.nseg] = items;
    return bp_par_pairs(m->ctx, sink, items, BP_PAR_GRAIN_PAIRS, grid_pairs_part, &pj, checks);
}

// Remembers the candidates a box of the call (bp_grid_was_too_coarse).
static bp_status grid_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_grid *g = (bp_grid *)m;
    const uint64_t before = *checks;
    bp_status st = grid_find_pairs_run(m, f, sink, checks);
    g->crowd_checks = st == BP_OK && *checks - before >= (uint64_t)GRID_COARSE_CHECKS * f->n;
    return st;
}

// ---------------------------------------------------------------------------------------------
// Queries, drawing, validation

static bp_status grid_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *q) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    if (g->table && g->n == f->n) return bp_grid_table_visit(g, q);
    if (g->n != f->n || !g->ordered) return BP_ERR_NO_BOXES;
    float qb[6];
    for (int a = 0; a < d; ++a) {
        qb[a] = q->lo[a];
        qb[d + a] = q->hi[a];
    }
    int64_t c0[3], c1[3];
    grid_cells(G, qb, c0, c1);
    const uint32_t *keys = g->keys, *ids = g->perm;
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        const grid_level *L = &G->lv[l];
        int64_t lo[3], hi[3];
        grid_region_near(g, l, qb, c0, c1, lo, hi);
        const int a0 = L->kax[0], a1 = L->kax[1], a2 = L->kax[2];
        const uint64_t rows = (uint64_t)(hi[a1] - lo[a1] + 1) * (uint64_t)(hi[a2] - lo[a2] + 1);
        if (rows >= L->end - L->begin) {
            // More rows than boxes: scanning the level is cheaper than a search per row.
            for (size_t j = L->begin; j < L->end; ++j) {
                bp_status st = q->visit(q, ids[j]);
                if (st != BP_OK) return st;
            }
            continue;
        }
        for (int64_t z = lo[a2]; z <= hi[a2]; ++z) {
            for (int64_t y = lo[a1]; y <= hi[a1]; ++y) {
                const uint32_t klo = (uint32_t)(L->base + (uint64_t)(z + 1) * L->kstride[2] +
                                                (uint64_t)(y + 1) * L->kstride[1] + (uint64_t)(lo[a0] + 1));
                const uint32_t khi = klo + (uint32_t)(hi[a0] - lo[a0]);
                for (size_t j = grid_lower_bound(g, l, klo); keys[j] <= khi; ++j) {
                    bp_status st = q->visit(q, ids[j]);
                    if (st != BP_OK) return st;
                }
            }
        }
    }
    return BP_OK;
}

// Draws the cell of `key` in level l (coarser levels get smaller level numbers, 1 .. levels).
void bp_grid_draw_cell(const grid_geom *G, int l, uint32_t key, const bp_debug_draw *draw) {
    const int d = G->dim;
    const grid_level *L = &G->lv[l];
    uint64_t local = key - L->base;
    int64_t c[3] = {0, 0, 0};
    for (int k = d - 1; k >= 0; --k) {
        const int a = L->kax[k];
        c[a] = (int64_t)(local / L->stride[a]) - 1;
        local %= L->stride[a];
    }
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) {
        const double scale = ldexp(1.0, L->shift[a]);
        lo[a] = (float)(G->origin[a] + (double)c[a] * scale * G->cell[a]);
        hi[a] = (float)(G->origin[a] + (double)(c[a] + 1) * scale * G->cell[a]);
    }
    draw->box(lo, hi, 1 + (G->levels - 1 - l), draw->user);
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
    if (g->table) {
        bp_grid_table_draw(g, draw);
        return;
    }
    for (int o = 0; o < g->occupied_count; ++o) {
        const int l = g->occupied[o];
        const grid_level *L = &G->lv[l];
        for (size_t j = L->begin; j < L->end; ++j)
            if (j == L->begin || g->keys[j] != g->keys[j - 1]) bp_grid_draw_cell(G, l, g->keys[j], draw);
    }
}

static bp_status grid_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_grid *g = (const bp_grid *)m;
    const grid_geom *G = &g->geom;
    const int d = f->dim;
    const size_t n = f->n;
    if (g->table) return bp_grid_table_validate(g, f);
    if (g->n != n || !g->ordered || !g->have_geom || G->dim != d) return BP_ERR_INVALID_ARG;
    for (size_t k = n; k < n + GRID_PAD; ++k)
        if (g->keys[k] != GRID_SENTINEL) return BP_ERR_INVALID_ARG;
    size_t covered = 0;
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        if (L->begin != covered || L->end < L->begin) return BP_ERR_INVALID_ARG;
        covered = L->end;
        for (size_t j = L->begin; j < L->end; ++j) {
            const uint32_t i = g->perm[j];
            if (i >= n) return BP_ERR_INVALID_ARG;
            if (j > 0 && g->keys[j - 1] > g->keys[j]) return BP_ERR_INVALID_ARG;
            const float *b = bp_frame_box(f, i);
            const float *sb = g->boxes + (size_t)(2 * d) * j;
            for (int e = 0; e < d; ++e)
                if (sb[e] != b[e] || -sb[d + e] != b[d + e]) return BP_ERR_INVALID_ARG;
            int64_t c0[3], c1[3];
            grid_cells(G, b, c0, c1);
            int lev;
            if (grid_key(G, b, c0, c1, &lev) != g->keys[j] || lev != l) return BP_ERR_INVALID_ARG;
            // In its level, the box spans at most two cells per axis.
            for (int a = 0; a < d; ++a)
                if ((c1[a] >> L->shift[a]) - (c0[a] >> L->shift[a]) > 1) return BP_ERR_INVALID_ARG;
        }
    }
    if (covered != n) return BP_ERR_INVALID_ARG;
    // Sorted cells: by min on the level's key axis; the six arrays hold the stored boxes' codes.
    for (int o = 0; g->xsorted && o < g->occupied_count; ++o) {
        const grid_level *L = &G->lv[g->occupied[o]];
        const int ax = L->kax[0];
        for (size_t j = L->begin + 1; j < L->end; ++j)
            if (g->keys[j] == g->keys[j - 1] && g->boxes[6 * j + ax] < g->boxes[6 * (j - 1) + ax]) return BP_ERR_INVALID_ARG;
    }
    for (size_t j = 0; g->xsorted && j < n; ++j)
        for (int a = 0; a < 6; ++a)
            if (g->soa[(size_t)a * g->soa_stride + j] != grid_code(&g->codes, a, g->boxes[6 * j + a]))
                return BP_ERR_INVALID_ARG;
    return bp_check_permutation(m->ctx, g->perm, n);
}

// AUTO's question: cells far coarser than the boxes want, and crowded (see bp_grid_too_coarse).
static bool grid_advise_against(const bp_algorithm *m, const bp_frame *f, const bp_context_def *def) {
    return m ? bp_grid_was_too_coarse(m) : bp_grid_too_coarse(f, def->grid.cell_size);
}

const bp_algorithm_class bp_grid_class = {
    .name = "grid",
    .create = grid_create,
    .destroy = grid_destroy,
    .find_pairs = grid_find_pairs,
    .reset = grid_reset,
    .visit = grid_visit,
    .debug_draw = grid_debug_draw,
    .validate = grid_validate,
    .advise_against = grid_advise_against,
};
