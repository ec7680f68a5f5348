// Method `grid`, sorted layout (any world, docs/grid.md): the frame's structure. The boxes sorted
// by cell key (src/grid_keys.c), each level a range of that order; for the levels that other
// levels' boxes search, an index of their rows or cells and their boxes' largest extent; the plan
// of which level queries which; in crowded 3D frames, cells sorted along their rows. The pair
// passes and queries that read it are in src/grid_scan.c.
#include "grid.h"
#include "par.h"

// Whether this frame sorts its cells (grid_sort_cells): 3D crowds of boxes mostly far smaller
// than the cells, with the AVX-512 kernel.
static bool grid_sorts_cells(const bp_grid *g, size_t n) {
    return g->geom.dim == 3 && g->geom.small && n > 0 && g->dense.soa;
}

static bp_status grid_reserve(bp_grid *g, size_t n, int d) {
    bp_context *ctx = g->base.ctx;
    const size_t m = n + GRID_PAD;
    const size_t fl = m * (size_t)(2 * d);
    // Everything before the old order is touched, so a failure leaves it intact.
    BP_RESERVE(ctx, g->sorted.perm, g->sorted.perm_cap, m);
    BP_RESERVE(ctx, g->sorted.perm2, g->sorted.perm2_cap, m);
    BP_RESERVE_DISCARD(ctx, g->keys, g->keys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->sorted.boxes, g->sorted.boxes_cap, fl);
    BP_RESERVE_DISCARD(ctx, g->sorted.okeys, g->sorted.okeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->sorted.mkeys, g->sorted.mkeys_cap, m);
    BP_RESERVE_DISCARD(ctx, g->sorted.mpos, g->sorted.mpos_cap, m);
    BP_RESERVE_DISCARD(ctx, g->sorted.oboxes, g->sorted.oboxes_cap, fl);
    // The six arrays of crowded 3D frames (grid_sort_cells), each 64-byte aligned.
    g->sorted.soa_stride = (m + 31) & ~(size_t)31;
    if (grid_sorts_cells(g, n)) BP_RESERVE_DISCARD(ctx, g->sorted.soa, g->sorted.soa_cap, 6 * g->sorted.soa_stride);
    return BP_OK;
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
    const int occ = g->sorted.occupied_count;
    if (occ > GRID_PLAN_MAX) return;  // the higher level queries the lower (grid_cross_pairs)
    int t = 0;
    for (int x = 0; x < occ; ++x) g->sorted.lookups[x] = 0.0;
    for (int x = 0; x < occ; ++x) {
        g->sorted.toff[x] = t;
        const grid_level *X = &G->lv[g->sorted.occupied[x]];
        const double nx = (double)(X->end - X->begin);
        if (sorted) {
            // Every finer level (the plan of the unplanned case, with its lookups).
            for (int y = 0; y < x; ++y) {
                const grid_level *Y = &G->lv[g->sorted.occupied[y]];
                g->sorted.targets[t++] = g->sorted.occupied[y];
                g->sorted.lookups[y] += grid_plan_lookups(nx, (double)(Y->end - Y->begin), grid_rows_in(G, X, Y));
            }
            continue;
        }
        for (int y = 0; y < occ; ++y) {
            if (y == x) continue;
            const grid_level *Y = &G->lv[g->sorted.occupied[y]];
            const double ny = (double)(Y->end - Y->begin);
            const double xy = grid_plan_lookups(nx, ny, grid_rows_in(G, X, Y));
            const double yx = grid_plan_lookups(ny, nx, grid_rows_in(G, Y, X));
            if (xy < yx || (xy == yx && x > y)) {
                g->sorted.targets[t++] = g->sorted.occupied[y];
                g->sorted.lookups[y] += xy;
            }
        }
    }
    g->sorted.toff[occ] = t;
}

// The largest extent on each axis of level l's boxes (g->sorted.ext, g->sorted.ext_ok): one pass over them.
static void grid_measure_extent(bp_grid *g, int l) {
    const grid_geom *G = &g->geom;
    const grid_level *L = &G->lv[l];
    const int d = G->dim, w = 2 * d;
    double e[3] = {0.0, 0.0, 0.0};
    for (size_t p = L->begin; p < L->end; ++p) {
        const float *b = g->sorted.boxes + (size_t)w * p;  // (min, -max)
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
        g->sorted.ext[l][a] = f;
    }
    g->sorted.ext_ok[l] = true;
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
    grid_sorted *s = &g->sorted;
    s->rows = bp_grow(g->base.ctx, s->rows, &s->rows_cap, budget + 1, sizeof *s->rows, false, &st);
    if (st != BP_OK) return st;
    const bool planned = g->sorted.occupied_count <= GRID_PLAN_MAX;
    bool searched[GRID_MAX_LEVELS];
    memset(searched, 0, sizeof searched);
    if (planned) {
        for (int t = 0; t < g->sorted.toff[g->sorted.occupied_count]; ++t) searched[g->sorted.targets[t]] = true;
    } else {
        for (int o = 0; o + 1 < g->sorted.occupied_count; ++o) searched[g->sorted.occupied[o]] = true;
    }
    // Every searched level gets its row index (small: rows, not cells); then, smallest first,
    // levels searched often trade it for a cell index while the budget lasts.
    size_t total = 0;
    for (int o = 0; o < g->sorted.occupied_count; ++o) {
        const int l = g->sorted.occupied[o];
        const grid_level *L = &G->lv[l];
        g->sorted.rows_ok[l] = searched[l] && total + L->size / L->kstride[1] + 1 <= budget;
        if (g->sorted.rows_ok[l]) total += L->size / L->kstride[1] + 1;
    }
    // A cell index costs a pass over the level's cells each frame: only where the lookups it
    // saves are more than a quarter of its cells.
    bool worth[GRID_MAX_LEVELS];
    memset(worth, 0, sizeof worth);
    for (int o = 0; planned && o < g->sorted.occupied_count; ++o)
        worth[g->sorted.occupied[o]] = (double)G->lv[g->sorted.occupied[o]].size < 4.0 * g->sorted.lookups[o];
    for (;;) {
        int best = -1;
        for (int o = 0; o < g->sorted.occupied_count; ++o) {
            const int l = g->sorted.occupied[o];
            if (g->sorted.rows_ok[l] && worth[l] && (best < 0 || G->lv[l].size < G->lv[best].size)) best = l;
        }
        if (best < 0) break;
        const grid_level *L = &G->lv[best];
        const size_t rows = L->size / L->kstride[1] + 1, cells = (size_t)L->size + 1;
        if (total - rows + cells > budget) break;
        total += cells - rows;
        g->sorted.rows_ok[best] = false;
        g->sorted.cells_ok[best] = true;
    }
    // The extents of the searched levels above 0 (level 0's boxes span two of its cells at most,
    // and it can hold most of the boxes: a pass over them would cost more than it saves), and of
    // the levels of long cells (their same-level pass, grid_level_pairs3_reach).
    for (int o = 0; o < g->sorted.occupied_count; ++o) {
        const int l = g->sorted.occupied[o];
        if (l != 0 && (searched[l] || G->lv[l].long_cells)) grid_measure_extent(g, l);
    }
    const uint32_t *keys = g->keys;
    total = 0;
    for (int o = 0; o < g->sorted.occupied_count; ++o) {
        const int l = g->sorted.occupied[o];
        if (!g->sorted.cells_ok[l] && !g->sorted.rows_ok[l]) continue;
        const grid_level *L = &G->lv[l];
        const size_t rows = L->size / L->kstride[1] + 1, cells = (size_t)L->size + 1;
        g->sorted.roff[l] = total;
        total += g->sorted.cells_ok[l] ? cells : rows;
        uint32_t *out = g->sorted.rows + g->sorted.roff[l];
        if (g->sorted.cells_ok[l]) {
            size_t p = L->begin;
            for (uint32_t c = 0; c <= L->size; ++c) {
                while (p < L->end && keys[p] < L->base + c) ++p;
                out[c] = (uint32_t)p;
            }
            continue;
        }
        size_t p = L->begin;
        for (size_t r = 0; r < rows; ++r) {
            // (Below base + size, the level's keys, < 2^32.)
            p = grid_lower_bound32(keys, p, L->end, (uint32_t)(L->base + (uint64_t)r * L->kstride[1]));
            out[r] = (uint32_t)p;
        }
    }
    return BP_OK;
}

typedef struct grid_count_job {
    const bp_grid *g;
    size_t *shared;  // per task
} grid_count_job;

static void grid_count_range(void *user, uint32_t t, size_t b, size_t e) {
    const grid_count_job *j = user;
    size_t c = 0;
    for (size_t k = b ? b : 1; k < e; ++k) c += j->g->keys[k] == j->g->keys[k - 1];
    j->shared[t] = c;
}


// ---------------------------------------------------------------------------------------------
// Sorted cells (crowded 3D frames: grid_sorted.xsorted)

_Atomic unsigned long long bp_grid_sorted_frames;

// Sorts the cells among sorted positions [b, e) (whole cells) by their boxes' min on the level's
// key axis kax[0], boxes and ids together: an insertion sort, as the order is last frame's and
// the boxes moved little. Ties keep their order, so the result is the same whatever the tasks.
// Then the six arrays' codes of those positions (grid_code).
static void grid_sort_cells_range(bp_grid *g, size_t b, size_t e) {
    const grid_geom *G = &g->geom;
    const uint32_t *BP_RESTRICT keys = g->keys;
    float *BP_RESTRICT bx = g->sorted.boxes;
    uint32_t *BP_RESTRICT ids = g->sorted.perm;
    int o = 0;
    for (size_t i = b + 1; i < e; ++i) {
        while (G->lv[g->sorted.occupied[o]].end <= i) ++o;
        const int ax = G->lv[g->sorted.occupied[o]].kax[0];
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
    int16_t *BP_RESTRICT out = g->sorted.soa;
    const size_t w = g->sorted.soa_stride;
    for (int a = 0; a < 6; ++a)
        for (size_t i = b; i < e; ++i) out[(size_t)a * w + i] = grid_code(&g->sorted.codes, a, bx[6 * i + a]);
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
        g->sorted.codes.o[a] = (double)o;
        g->sorted.codes.o[3 + a] = -(double)o;
        g->sorted.codes.s[a] = g->sorted.codes.s[3 + a] = isfinite(s) ? s : 0.0;
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
} grid_cells_job;

// A task's share, moved to whole cells (each starts at the first cell at or after its share).
static void grid_sort_cells_task(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const grid_cells_job *j = user;
    b = grid_cell_start(j->g->keys, b, j->n);
    e = grid_cell_start(j->g->keys, e, j->n);
    if (b < e) grid_sort_cells_range(j->g, b, e);
}

// 3D frames of crowded cells of boxes mostly far smaller than them (G->small: `sizes`) sort
// their cells (grid_sorted.xsorted): there a box's runs are long (`sizes` 3D 100,000: 16 boxes a
// level-0 cell, over a hundred in the coarsest level), and a run along a row of a level, sorted
// by the min on its key axis, stops at the first box that starts past the probe instead of at
// the row's end. The same pass writes the six arrays the AVX-512 kernel reads (reserved with
// the frame's arrays whenever it sorts: grid_reserve). Both
// only with AVX-512: the stops alone, on the stored boxes, made `sizes` 3D slower (the stop bits
// are gathered from the compare masks: 61.5 against 58.9 ms), so CPUs without it do not sort
// (every choice of kernels sorts alike: they all give the same pairs). Where cells
// hold a box or two, or the boxes are as large as the cells (`line` 3D), the pass cuts nothing.
// docs/grid.md, "Sorted cells".
static bp_status grid_sort_cells(bp_grid *g, size_t n) {
    g->sorted.xsorted = false;
    if (!grid_sorts_cells(g, n)) return BP_OK;
    grid_codes_set(g);
    grid_cells_job j = {g, n};
    const bp_status st = bp_par_for(g->base.ctx, n, BP_PAR_GRAIN_MAP, grid_sort_cells_task, &j);
    if (st != BP_OK) return st;
    // The padding boxes, as in g->sorted.boxes (their keys end every run).
    for (int a = 0; a < 6; ++a)
        for (size_t i = n; i < n + GRID_PAD; ++i) g->sorted.soa[(size_t)a * g->sorted.soa_stride + i] = 0;
    g->sorted.xsorted = true;
    atomic_fetch_add_explicit(&bp_grid_sorted_frames, 1, memory_order_relaxed);
    return BP_OK;
}

// The first and last sorted positions of every level (levels are consecutive key ranges: each
// begins where the last ended) and the occupied levels; returns the last occupied level (0 when
// none).
static int grid_level_ranges(bp_grid *g, size_t n) {
    grid_geom *G = &g->geom;
    grid_sorted *s = &g->sorted;
    int coarse = 0;
    s->occupied_count = 0;
    size_t lo = 0;
    for (int l = 0; l < G->levels; ++l) {
        grid_level *L = &G->lv[l];
        L->begin = lo = grid_lower_bound32(g->keys, lo, n, L->base);
        L->end = lo = grid_lower_bound32(g->keys, lo, n, L->base + L->size);
        if (L->end > L->begin) {
            coarse = l;
            s->occupied[s->occupied_count++] = l;
        }
    }
    return coarse;
}

// Where the table could serve, the crowding that decides between the layouts next frame.
static bp_status grid_note_crowding(bp_grid *g, size_t n) {
    bp_context *ctx = g->base.ctx;
    bp_status st = BP_OK;
    const uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP);
    grid_count_job cj = {g, bp_par_scratch(ctx, tasks * sizeof *cj.shared, &st)};
    if (st == BP_OK) st = bp_par_split(ctx, tasks, n, grid_count_range, &cj);
    if (st != BP_OK) return st;
    size_t shared = 0;
    for (uint32_t t = 0; t < tasks; ++t) shared += cj.shared[t];
    bp_grid_note_crowding(g, shared, n);
    return BP_OK;
}

void bp_grid_sorted_begin(grid_sorted *s) {
    s->xsorted = false;
    memset(s->rows_ok, 0, sizeof s->rows_ok);
    memset(s->cells_ok, 0, sizeof s->cells_ok);
    memset(s->ext_ok, 0, sizeof s->ext_ok);
}

bp_status bp_grid_sorted_build(bp_grid *g, const bp_frame *f, bool same_grid) {
    const size_t n = f->n;
    const int d = f->dim;
    grid_sorted *s = &g->sorted;
    bp_status st = grid_reserve(g, n, d);
    if (st != BP_OK) return st;
    grid_geom *G = &g->geom;
    unsigned bits = 1;
    while (bits < 32 && (G->total >> bits) != 0) ++bits;
    s->key_bits = bits;

    const bool coherent = g->ordered && g->n == n && same_grid;
    const bool reset = !(g->ordered && g->n == n);
    st = bp_grid_sort_frame(g, f, reset, coherent);
    if (st != BP_OK) {
        g->ordered = false;
        return st;
    }
    for (size_t k = n; k < n + GRID_PAD; ++k) g->keys[k] = GRID_SENTINEL;
    // The dense kernels load 16 ids at a time, past the last box too (ignored lanes).
    for (size_t k = n; k < n + GRID_PAD; ++k) s->perm[k] = 0;
    // The padding boxes are read (and ignored: their keys are past every range) by the tests.
    memset(s->boxes + (size_t)(2 * d) * n, 0, (size_t)(2 * d) * GRID_PAD * sizeof(float));
    g->n = n;
    g->ordered = true;

    const int coarse = grid_level_ranges(g, n);
    grid_plan_cross(g, grid_sorts_cells(g, n));
    st = grid_sort_cells(g, n);
    if (st != BP_OK) return st;
    if (coarse > 0) {
        st = grid_build_rows(g, n);
        if (st != BP_OK) return st;
    }
    // Crowds of small boxes in 3D: level 0's same-level pass cut to reach too.
    if (d == 3 && G->small && G->lv[0].end > G->lv[0].begin && !s->ext_ok[0]) grid_measure_extent(g, 0);
    if (coarse == 0 && bp_grid_table_possible(g, f)) return grid_note_crowding(g, n);
    return BP_OK;
}

void bp_grid_sorted_reset(grid_sorted *s) {
    bp_grid_sorted_begin(s);
    s->occupied_count = 0;
}

void bp_grid_sorted_release(bp_context *ctx, grid_sorted *s) {
    BP_RELEASE(ctx, s->perm, s->perm_cap);
    BP_RELEASE(ctx, s->boxes, s->boxes_cap);
    BP_RELEASE(ctx, s->okeys, s->okeys_cap);
    BP_RELEASE(ctx, s->mkeys, s->mkeys_cap);
    BP_RELEASE(ctx, s->mpos, s->mpos_cap);
    BP_RELEASE(ctx, s->perm2, s->perm2_cap);
    BP_RELEASE(ctx, s->oboxes, s->oboxes_cap);
    BP_RELEASE(ctx, s->rows, s->rows_cap);
    BP_RELEASE(ctx, s->soa, s->soa_cap);
}

// Draws every occupied cell, coarser levels with smaller numbers (1 .. levels).
void bp_grid_sorted_draw(const bp_grid *g, const bp_debug_draw *draw) {
    const grid_geom *G = &g->geom;
    for (int o = 0; o < g->sorted.occupied_count; ++o) {
        const int l = g->sorted.occupied[o];
        const grid_level *L = &G->lv[l];
        for (size_t j = L->begin; j < L->end; ++j)
            if (j == L->begin || g->keys[j] != g->keys[j - 1]) bp_grid_draw_cell(G, l, g->keys[j], draw);
    }
}

// Sorted cells: by min on the level's key axis; the six arrays hold the stored boxes' codes.
static bp_status grid_validate_cells(const bp_grid *g, size_t n) {
    const grid_sorted *s = &g->sorted;
    for (int o = 0; o < s->occupied_count; ++o) {
        const grid_level *L = &g->geom.lv[s->occupied[o]];
        const int ax = L->kax[0];
        for (size_t j = L->begin + 1; j < L->end; ++j)
            if (g->keys[j] == g->keys[j - 1] && s->boxes[6 * j + ax] < s->boxes[6 * (j - 1) + ax])
                return BP_ERR_INVALID_ARG;
    }
    for (size_t j = 0; j < n; ++j)
        for (int a = 0; a < 6; ++a)
            if (s->soa[(size_t)a * s->soa_stride + j] != grid_code(&s->codes, a, s->boxes[6 * j + a]))
                return BP_ERR_INVALID_ARG;
    return BP_OK;
}

// Keys sorted with their sentinels, levels consecutive, every box stored as the frame has it
// with the key and level its cells give, spanning at most two cells of its level per axis; the
// sorted cells where there; perm a permutation.
bp_status bp_grid_sorted_validate(const bp_grid *g, const bp_frame *f) {
    const grid_geom *G = &g->geom;
    const grid_sorted *s = &g->sorted;
    const int d = f->dim;
    const size_t n = f->n;
    if (g->n != n || !g->ordered || !g->have_geom || G->dim != d) return BP_ERR_INVALID_ARG;
    for (size_t k = n; k < n + GRID_PAD; ++k)
        if (g->keys[k] != GRID_SENTINEL) return BP_ERR_INVALID_ARG;
    size_t covered = 0;
    for (int l = 0; l < G->levels; ++l) {
        const grid_level *L = &G->lv[l];
        if (L->begin != covered || L->end < L->begin) return BP_ERR_INVALID_ARG;
        covered = L->end;
        for (size_t j = L->begin; j < L->end; ++j) {
            const uint32_t i = s->perm[j];
            if (i >= n) return BP_ERR_INVALID_ARG;
            if (j > 0 && g->keys[j - 1] > g->keys[j]) return BP_ERR_INVALID_ARG;
            const float *b = bp_frame_box(f, i);
            const float *sb = s->boxes + (size_t)(2 * d) * j;
            for (int e = 0; e < d; ++e)
                if (sb[e] != b[e] || -sb[d + e] != b[d + e]) return BP_ERR_INVALID_ARG;
            int64_t c0[3], c1[3];
            grid_cells(G, b, c0, c1);
            int lev;
            if (bp_grid_key(G, b, c0, c1, &lev) != g->keys[j] || lev != l) return BP_ERR_INVALID_ARG;
            // In its level, the box spans at most two cells per axis.
            for (int a = 0; a < d; ++a)
                if ((c1[a] >> L->shift[a]) - (c0[a] >> L->shift[a]) > 1) return BP_ERR_INVALID_ARG;
        }
    }
    if (covered != n) return BP_ERR_INVALID_ARG;
    if (s->xsorted && grid_validate_cells(g, n) != BP_OK) return BP_ERR_INVALID_ARG;
    return bp_check_permutation(g->base.ctx, s->perm, n);
}
