// AUTO: which method a call runs, from the frame's statistics and what the last call saw. The
// constants are the benchmark's measurements (docs/methods.md); a method is asked about itself
// only through its class (advise_against), never by name.
#include "auto.h"

// Below this many boxes AUTO uses brute force: its tight loop beats any structure's set-up.
// Measured with `broadphase bench` (docs/methods.md).
#define BP_AUTO_BRUTE_MAX 192
// From this many boxes AUTO considers the grid: in 2D its table layout is ahead of sweep from
// about 500 boxes (2x at 500 to 1,000 on `uniform` and `clustered`, even on `mixed`); in 3D the
// two are even near 2,000, the grid ahead above.
#define BP_AUTO_GRID_MIN_2D 400
#define BP_AUTO_GRID_MIN_3D 2048
// In 3D the grid from BP_AUTO_DENSE_MIN_3D boxes already when the last call found at least
// BP_AUTO_DENSE_PAIRS pairs a box: long boxes, sizes over decades or a line (`sticks`, `sizes`,
// `line` 3D at 1,000: grid 0.22 / 0.20 / 0.086 ms against sweep 0.27 / 0.30 / 0.12), where
// sweep's active lists run long and its candidates overlap on every axis; `uniform` and
// `clustered` (0.4 pairs a box) stay on sweep, which is ahead there up to 2,000.
#define BP_AUTO_DENSE_MIN_3D 1000
#define BP_AUTO_DENSE_PAIRS 2
// Boxes of several sizes (the largest extent above BP_AUTO_LARGE mean extents on an axis: `mixed`,
// 1% of boxes up to 25x the rest) put the grid in its sorted layout with levels that query each
// other, which costs more than sweep below these counts (docs/methods.md).
#define BP_AUTO_LARGE 8.0
#define BP_AUTO_LEVELS_MIN_2D 4096
#define BP_AUTO_LEVELS_MIN_3D 8192
// Centre spread, in mean extents, that makes an axis count as spread for AUTO. It only has to
// tell a line (no spread on an axis: sweep picks another) from boxes spread on two axes: since
// the grid's levels take long and large boxes, it is ahead of sweep even where a few large boxes
// make the mean extent large (sticks, sizes 3D: spread 4-6 mean extents) and in dense crowds
// (seed, 4.3 mean extents: grid 0.58 against sweep 0.75 ms at 3,000 circles, 39 against 69 at
// 30,000; CPU time, docs/methods.md).
#define BP_AUTO_SPREAD 2.0
// An axis also counts as spread when its centres' deviation is at least this share of the
// largest axis's: a few boxes as large as a small world make the mean extent large on every
// axis (`sizes` and `sticks` 3D at 2,000-4,000 boxes: 2-3 mean extents), yet the boxes are
// spread alike on all axes and the grid is ahead; a line has no deviation on its axis.
#define BP_AUTO_ALIKE 0.25
// Away from the grid because its cells were too coarse, AUTO asks again every this many frames.
#define BP_AUTO_COARSE_RETRY 16

// AUTO's rule, from what the benchmark measured (docs/methods.md): brute force for a handful of
// boxes; the uniform grid from BP_AUTO_GRID_MIN_2D/3D boxes up when they spread over at least two
// axes (2-5x faster than sweep on `uniform`, `clustered` and `mixed` at 10^4..10^6, in 2D and 3D);
// sort-and-sweep otherwise: boxes along a line (the grid degenerates to one column there while
// sweep picks the other axis) and small or very dense sets. An axis is spread when the standard
// deviation of the centres exceeds BP_AUTO_SPREAD mean extents; a margin of 25% either way keeps
// the choice steady (each switch loses the methods' frame-to-frame coherence). And sweep where the
// grid's cells would be far coarser than its boxes want, and crowded (the grid's advise_against slot: boxes
// in a small part of a huge world, such as two clusters far apart, whose empty space its keys
// must cover too; sweep does not care): asked of the grid's last geometry and candidates while
// it runs, of a sample of the boxes when AUTO comes to it from another method, and again every
// BP_AUTO_COARSE_RETRY frames while away for that reason, once the boxes' count or bounds have
// changed 2x (a diagonal tube looks fine to the sample: asking it sooner would come back).
static void auto_remember(bp_auto *au, const bp_frame *f) {
    au->n = f->n;
    for (int a = 0; a < f->dim; ++a) au->span[a] = f->hi[a] - f->lo[a];
}

static bool auto_changed(const bp_auto *au, const bp_frame *f) {
    if (f->n > 2 * au->n || 2 * f->n < au->n) return true;
    for (int a = 0; a < f->dim; ++a) {
        const float span = f->hi[a] - f->lo[a], was = au->span[a];
        if (span > 2.0f * was || 2.0f * span < was) return true;
    }
    return false;
}

// How many axes the centres spread over (see BP_AUTO_SPREAD and BP_AUTO_ALIKE), and whether a
// box is far larger than the mean on some axis (BP_AUTO_LARGE).
static int auto_spread(const bp_frame *f, bool near_grid, bool *large) {
    const double factor = near_grid ? BP_AUTO_SPREAD / 1.25 : BP_AUTO_SPREAD * 1.25;
    const double n = (double)f->n;
    int spread = 0;
    double var[3] = {0.0, 0.0, 0.0}, widest = 0.0;
    *large = false;
    for (int a = 0; a < f->dim; ++a) {
        const double mean = f->center_sum[a] / n;
        var[a] = f->center_sq[a] / n - mean * mean;
        widest = var[a] > widest ? var[a] : widest;
    }
    for (int a = 0; a < f->dim; ++a) {
        const double size = f->size_sum[a] / n;
        if (var[a] > 0.0 && (var[a] > factor * factor * size * size || var[a] >= BP_AUTO_ALIKE * BP_AUTO_ALIKE * widest))
            ++spread;
        *large |= (double)f->size_max[a] > BP_AUTO_LARGE * size;
    }
    return spread;
}

bp_method bp_auto_choose(bp_auto *au, const bp_frame *f, bp_method last, size_t last_pairs, const bp_algorithm *grid,
                         const bp_context_def *def) {
    if (f->n <= BP_AUTO_BRUTE_MAX) return BP_METHOD_BRUTE;
    const size_t grid_min = f->dim == 2 ? BP_AUTO_GRID_MIN_2D : BP_AUTO_GRID_MIN_3D;
    const bool dense = f->dim == 3 && f->n >= BP_AUTO_DENSE_MIN_3D && last_pairs >= BP_AUTO_DENSE_PAIRS * f->n;
    const bp_algorithm_class *gc = bp_method_class(BP_METHOD_GRID);
    if ((f->n < grid_min && !dense) || !bp_method_available(BP_METHOD_GRID)) return BP_METHOD_SWEEP;
    bool large;
    if (auto_spread(f, last == BP_METHOD_GRID, &large) < 2) return BP_METHOD_SWEEP;
    if (large && f->n < (f->dim == 2 ? BP_AUTO_LEVELS_MIN_2D : BP_AUTO_LEVELS_MIN_3D)) return BP_METHOD_SWEEP;
    if (last == BP_METHOD_GRID && grid) au->coarse = gc->advise_against(grid, f, def);
    else if (!au->coarse || (f->frame % BP_AUTO_COARSE_RETRY == 0 && auto_changed(au, f)))
        au->coarse = gc->advise_against(NULL, f, def);
    else return BP_METHOD_SWEEP;
    if (au->coarse) auto_remember(au, f);
    return au->coarse ? BP_METHOD_SWEEP : BP_METHOD_GRID;
}
