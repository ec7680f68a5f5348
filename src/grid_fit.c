// Method `grid`, the geometry (docs/grid.md): the cell size from a sample of the boxes (the
// typical extent, the spacing of the bulk, long boxes fitted whole or in long cells), the window
// the cells cover, the levels of coarser cells, and whether last frame's geometry still serves.
// AUTO asks here whether the cells would be too coarse for the grid (bp_grid_too_coarse).
#include <math.h>

#include "grid.h"

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
// Keep last frame's grid while the ideal cell stays within this factor of it and the boxes stay
// inside its window: an unchanged grid keeps the keys, hence the order, from frame to frame.
#define GRID_KEEP_RATIO 1.5
// Cells in level 0, padding included; the coarser levels add at most as many again.
#define GRID_MAX_CELLS ((uint64_t)1 << 30)
// Cells per axis: coordinates stay exact in float.
#define GRID_MAX_AXIS 16777000.0

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
                            const size_t classes[4], bool fitted, int lanes, double *per_cell) {
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
    const double kernel = lanes >= 16 ? GRID_FIT_WIDE : lanes > 0 ? 1.0 : 0.75;
    const double bound = GRID_FIT_CANDIDATES * querying * kernel * (fitted ? 1.5 : 1.0);
    return candidates <= bound ? fit : 0.0;
}

static void grid_ideal(const bp_frame *f, float user_cell, int lanes, double cell[3], double qlo[3], double qhi[3],
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
    const double fit = grid_fit_long(d, n, s, along, bulk, classes, *fit_io, lanes, &per_fit);
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
bool bp_grid_choose(bp_grid *g, const bp_frame *f) {
    const int d = f->dim;
    const float user = g->user_cell;
    double cell[3] = {1, 1, 1}, qlo[3] = {0, 0, 0}, qhi[3] = {0, 0, 0}, occ[3];
    bool small = false, fitted = g->have_geom && g->geom.fitted;
    grid_ideal(f, user, g->dense.k ? g->dense.k->lanes : 0, cell, qlo, qhi, occ, &small, &fitted);
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

bool bp_grid_too_coarse(const bp_frame *f, float user_cell) {
    const int d = f->dim;
    double cell[3] = {1, 1, 1}, qlo[3] = {0, 0, 0}, qhi[3] = {0, 0, 0}, occ[3], lo[3], hi[3], got[3];
    bool small, robust, fitted = false;
    grid_ideal(f, user_cell, bp_grid_dense_lanes(GRID_KERNELS_AUTO), cell, qlo, qhi, occ, &small, &fitted);
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

bool bp_grid_was_too_coarse(const bp_algorithm *m) {
    const bp_grid *g = (const bp_grid *)m;
    // Measured too: a diagonal line or tube fills every axis's span, so the sample cannot see
    // that the coarse cells along it are crowded; the candidates a box of the last call can.
    return g->have_geom && g->coarse >= GRID_COARSE_MAX && (g->crowd_sample || g->crowd_checks);
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

