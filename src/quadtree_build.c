// The linear quadtree's build (quadtree.h): the mapping of boxes to cells, the keys' sort with
// temporal coherence (only the boxes whose key changed are sorted and merged back), and the
// layout of the sorted boxes in runs, one per occupied cell; each with its form for workers.
#include <math.h>

#include "par.h"
#include "quadtree.h"
#include "radix_sort.h"
#include "sort.h"

// Finest cell edge as a multiple of the mean box extent (automatic levels); measured on the
// docs/scenes.md scenes (docs/quadtree.md).
#define QT_CELL_FACTOR_STRICT 2.0
#define QT_CELL_FACTOR_LOOSE 1.0
// About this many boxes per finest cell if they were spread evenly (automatic levels): deeper
// levels only cost key bits and moved keys, since buckets stop the walk where boxes are few.
#define QT_BOXES_PER_CELL 4.0
// Coherence: keep last frame's world while the boxes fit in it and fill at least this fraction
// of it on the widest axis; re-sort in full when more than this fraction of the keys changed.
#define QT_WORLD_KEEP 0.8
#define QT_WORLD_MARGIN (1.0 / 32.0)
// How much wider than the bulk of the boxes (qt_bulk) the bounds must be for the world to be cut
// to it: a few far boxes (outliers) would otherwise make every cell larger than the scene.
#define QT_ROBUST_RATIO 4.0
#define QT_MOVED_MAX 0.5

// Boxes are gathered in sorted order, at random: loads are issued this many boxes ahead.
#define QT_PREFETCH 16
#if defined(__GNUC__)
#define BP_PREFETCH(p) __builtin_prefetch(p)
#else
#define BP_PREFETCH(p) ((void)0)
#endif

// ---------------------------------------------------------------------------------------------
// Mapping

// The bounds of the bulk of the boxes on each axis (bp_bulk_window over a sample). Boxes outside
// land in the border cells (the mapping clamps), so a few far boxes cost a few candidates
// instead of the whole scene falling into one cell (one box 10^6 away from 100,000 in 3D: every
// pair tested, 8.9 s).
static void qt_bulk(const bp_frame *f, double blo[3], double bhi[3]) {
    double cen[BP_SAMPLE], qlo, qhi;
    for (int a = 0; a < f->dim; ++a) {
        const size_t s = bp_sample_centres(f, a, cen);
        bp_sample_quantiles(cen, s, &qlo, &qhi);
        if (s < 2) {
            blo[a] = f->lo[a];
            bhi[a] = f->hi[a];
        } else {
            bp_bulk_window(f->lo[a], f->hi[a], qlo, qhi, &blo[a], &bhi[a]);
        }
    }
}

// Chooses levels and world for this frame. Keeps last frame's mapping when it still fits, so
// that keys (and the sorted order) stay valid between frames.
void bp_qt_choose_mapping(bp_quadtree *q, const bp_frame *f, const bp_context_def *def) {
    const int d = f->dim;
    const bool loose = def->quadtree.loose;
    const unsigned lmax = qt_max_levels(d);
    double lo[3], ext[3], elo[3] = {0, 0, 0}, ehi[3] = {0, 0, 0};  // elo, ehi: what the world must hold
    double widest = 0.0;
    if (def->quadtree.fixed_world) {
        for (int a = 0; a < d; ++a) {
            lo[a] = def->quadtree.world_min[a];
            ext[a] = (double)def->quadtree.world_max[a] - (double)def->quadtree.world_min[a];
            widest = ext[a] > widest ? ext[a] : widest;
        }
    } else {
        // Cubic cells: one extent for every axis, so that "everything on one line" does not make
        // every box span its whole (thin) axis and sit at the root.
        double blo[3], bhi[3], bulk = 0.0;
        qt_bulk(f, blo, bhi);
        for (int a = 0; a < d; ++a) {
            double e = (double)f->hi[a] - (double)f->lo[a];
            widest = e > widest ? e : widest;
            bulk = bhi[a] - blo[a] > bulk ? bhi[a] - blo[a] : bulk;
        }
        // The world is the frame's bounds, or the bulk's where those are far wider (outliers).
        const bool cut = widest > QT_ROBUST_RATIO * bulk;
        for (int a = 0; a < d; ++a) {
            elo[a] = cut ? blo[a] : (double)f->lo[a];
            ehi[a] = cut ? bhi[a] : (double)f->hi[a];
        }
        if (cut) widest = bulk;
        // A margin so that boxes drifting outwards keep last frame's mapping for a while.
        const double margin = widest * QT_WORLD_MARGIN;
        for (int a = 0; a < d; ++a) {
            lo[a] = elo[a] - margin;
            ext[a] = widest + 2.0 * margin;
        }
    }
    unsigned L;
    if (def->quadtree.levels > 0) {
        L = (unsigned)def->quadtree.levels < lmax ? (unsigned)def->quadtree.levels : lmax;
    } else {
        // Finest cell at least QT_CELL_FACTOR mean extents, and about QT_BOXES_PER_CELL boxes
        // per finest cell.
        double mean = 0.0;
        for (int a = 0; a < d; ++a) {
            double m = f->n ? f->size_sum[a] / (double)f->n : 0.0;
            mean = m > mean ? m : mean;
        }
        double cell = (loose ? QT_CELL_FACTOR_LOOSE : QT_CELL_FACTOR_STRICT) * mean;
        double by_n = log2((double)(f->n > 0 ? f->n : 1) / QT_BOXES_PER_CELL) / (double)d;
        double by_size = cell > 0.0 && widest > 0.0 ? log2(widest / cell) : (double)lmax;
        double want = ceil(by_size < by_n ? by_size : by_n);
        L = want <= 0.0 ? 0u : (want >= (double)lmax ? lmax : (unsigned)want);
    }
    if (L == 0) L = 1;  // one level of children keeps the code paths uniform; costs nothing
    // Keep the previous mapping when it still fits: same levels and placement, boxes inside,
    // world not much too large.
    bool keep = q->ordered && q->dim == d && q->levels == L && q->loose == loose;
    for (int a = 0; a < d && keep; ++a) {
        if (def->quadtree.fixed_world) {
            keep = q->origin[a] == lo[a] && q->extent[a] == ext[a];
        } else {
            keep = elo[a] >= q->origin[a] && ehi[a] <= q->origin[a] + q->extent[a] &&
                   ext[a] >= QT_WORLD_KEEP * q->extent[a];
        }
    }
    if (keep) return;
    q->ordered = false;
    q->dim = d;
    q->levels = L;
    q->loose = loose;
    const double cells = (double)((uint32_t)1 << L);
    for (int a = 0; a < d; ++a) {
        q->origin[a] = lo[a];
        q->extent[a] = ext[a];
        // A zero extent (all boxes on one coordinate) maps everything to cell 0.
        q->scale[a] = ext[a] > 0.0 ? cells / ext[a] : 0.0;
        if (!isfinite(q->scale[a])) q->scale[a] = 0.0;
    }
}

// ---------------------------------------------------------------------------------------------
// Sorting and layout with workers: bp_qt_sort's and bp_qt_layout's results, bit for bit. The coherent
// sort's split into kept and moved boxes is two passes (new keys and a moved flag per box, then
// both lists written at offsets from per-task counts), the merge gives each task its kept boxes
// and the moved ones that go before them (ties: the kept box first, as the serial merge).
#define QT_MOVED_BIT 0x80000000u  // box indices stay below 2^30

typedef struct qt_par {
    bp_quadtree *q;
    const bp_frame *f;
    size_t n, w, m;        // boxes, kept, moved
    uint32_t tasks;
    uint64_t *nk;          // new keys (scratch in q->sb)
    uint32_t *nid;         // ids, the moved ones flagged (scratch in q->sb)
    size_t *kept, *moved;  // per task: counts, then offsets
    size_t *at, *jm;       // merge: output offset, first moved box (tasks + 1)
} qt_par;

static void qt_par_keys_task(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const qt_par *j = user;
    bp_quadtree *q = j->q;
    const size_t stride = (size_t)(2 * j->f->dim);
    for (size_t k = b; k < e; ++k) {
        q->ids[k] = (uint32_t)k;
        q->keys[k] = qt_key(q, j->f->boxes + k * stride);
    }
}

static void qt_par_split_task(void *user, uint32_t t, size_t b, size_t e) {
    const qt_par *j = user;
    const bp_quadtree *q = j->q;
    size_t m = 0;
    const size_t stride = (size_t)(2 * j->f->dim);
    for (size_t k = b; k < e; ++k) {
        const uint32_t i = q->ids[k];
        if (k + QT_PREFETCH < e) BP_PREFETCH(j->f->boxes + (size_t)q->ids[k + QT_PREFETCH] * stride);
        const uint64_t key = qt_key(q, j->f->boxes + (size_t)i * stride);
        const bool moved = key != q->keys[k];
        j->nk[k] = key;
        j->nid[k] = i | (moved ? QT_MOVED_BIT : 0u);
        m += moved;
    }
    j->moved[t] = m;
    j->kept[t] = (e - b) - m;
}

static void qt_par_place_task(void *user, uint32_t t, size_t b, size_t e) {
    const qt_par *j = user;
    bp_quadtree *q = j->q;
    size_t w = j->kept[t], m = j->moved[t];
    for (size_t k = b; k < e; ++k) {
        const uint32_t id = j->nid[k];
        if (id & QT_MOVED_BIT) {
            q->tmp_keys[m] = j->nk[k];
            q->tmp_ids[m++] = id & ~QT_MOVED_BIT;
        } else {
            q->keys[w] = j->nk[k];
            q->ids[w++] = id;
        }
    }
}

// Kept boxes [a, b) of task t (keys/ids) with moved boxes jm[t] .. jm[t+1], into nk/nid.
static void qt_par_merge_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const qt_par *j = user;
    const bp_quadtree *q = j->q;
    size_t a, b;
    bp_par_range(j->w, j->tasks, t, &a, &b);
    size_t x = j->jm[t], o = j->at[t];
    const size_t x1 = j->jm[t + 1];
    const uint64_t *keys = q->keys, *mk = q->tmp_keys;
    while (a < b || x < x1) {
        if (a < b && (x == x1 || keys[a] <= mk[x])) {
            j->nk[o] = keys[a];
            j->nid[o++] = q->ids[a++];
        } else {
            j->nk[o] = mk[x];
            j->nid[o++] = q->tmp_ids[x++];
        }
    }
}

static bp_status qt_sort_par(bp_quadtree *q, const bp_frame *f, uint32_t tasks, unsigned bits) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    qt_par j = {.q = q, .f = f, .n = n, .tasks = tasks};
    if (!(q->ordered && q->n == n)) {
        bp_status st = bp_par_split(ctx, tasks, j.n, qt_par_keys_task, &j);
        if (st == BP_OK) st = bp_par_radix64(ctx, q->keys, q->ids, q->tmp_keys, q->tmp_ids, n, bits);
        q->full_sorts++;
        return st;
    }
    // New keys and flagged ids in the sorted boxes' array (free until the layout): 12 bytes a box
    // of its 16 (2D) or 24 (3D).
    j.nk = (uint64_t *)(void *)q->sb;
    j.nid = (uint32_t *)(void *)(q->sb + 2 * n);
    bp_status st = BP_OK;
    size_t *sc = bp_par_scratch(ctx, (4 * (size_t)tasks + 2) * sizeof(size_t), &st);
    if (st != BP_OK) return st;
    j.kept = sc;
    j.moved = sc + tasks;
    j.at = sc + 2 * (size_t)tasks;
    j.jm = j.at + tasks;
    st = bp_par_split(ctx, tasks, j.n, qt_par_split_task, &j);
    if (st != BP_OK) return st;
    for (uint32_t t = 0; t < tasks; ++t) {
        const size_t k = j.kept[t], m = j.moved[t];
        j.kept[t] = j.w;
        j.moved[t] = j.m;
        j.w += k;
        j.m += m;
    }
    q->moved = j.m;
    q->coherent = (double)j.m <= QT_MOVED_MAX * (double)n;
    if (j.m == 0) return BP_OK;  // every key as it was: the order stands
    st = bp_par_split(ctx, tasks, j.n, qt_par_place_task, &j);
    if (st != BP_OK) return st;
    const size_t w = j.w, m = j.m;
    if (!q->coherent) {
        st = bp_par_copy(ctx, q->keys + w, q->tmp_keys, m * sizeof *q->keys);
        if (st == BP_OK) st = bp_par_copy(ctx, q->ids + w, q->tmp_ids, m * sizeof *q->ids);
        if (st == BP_OK) st = bp_par_radix64(ctx, q->keys, q->ids, q->tmp_keys, q->tmp_ids, n, bits);
        q->full_sorts++;
        q->resorts++;
        return st;
    }
    // m <= n / 2: the second half of the scratch is the radix sort's own scratch.
    st = bp_par_radix64(ctx, q->tmp_keys, q->tmp_ids, q->tmp_keys + m, q->tmp_ids + m, m, bits);
    if (st != BP_OK) return st;
    // Task t merges kept boxes [a_t, a_t+1) with the moved ones below a_t's key (the earlier
    // ones went to earlier tasks), into nk/nid from a_t + jm[t]; then the result goes back.
    for (uint32_t t = 0; t < tasks; ++t) {
        size_t a, b;
        bp_par_range(w, tasks, t, &a, &b);
        j.jm[t] = t == 0 ? 0 : (a < w ? bp_lower_bound64(q->tmp_keys, 0, m, q->keys[a]) : m);
        j.at[t] = a + j.jm[t];
    }
    j.jm[tasks] = m;
    j.w = w;
    st = bp_par_run(ctx, tasks, qt_par_merge_task, &j);
    if (st == BP_OK) st = bp_par_copy(ctx, q->keys, j.nk, n * sizeof *q->keys);
    if (st == BP_OK) st = bp_par_copy(ctx, q->ids, j.nid, n * sizeof *q->ids);
    return st;
}

typedef struct qt_layout_job {
    bp_quadtree *q;
    const bp_frame *f;
    size_t n;
    uint32_t tasks;
    size_t *runs;  // per task: runs starting in its share, then their first index
} qt_layout_job;

static void qt_gather(bp_quadtree *q, const bp_frame *f, size_t b, size_t e);

static void qt_layout_gather_task(void *user, uint32_t t, size_t b, size_t e) {
    const qt_layout_job *j = user;
    qt_gather(j->q, j->f, b, e);
    size_t r = 0;
    for (size_t k = b; k < e; ++k) r += k == 0 || j->q->keys[k] != j->q->keys[k - 1];
    j->runs[t] = r;
}

static void qt_layout_runs_task(void *user, uint32_t t, size_t b, size_t e) {
    const qt_layout_job *j = user;
    bp_quadtree *q = j->q;
    size_t r = j->runs[t];
    for (size_t k = b; k < e; ++k) {
        if (k == 0 || q->keys[k] != q->keys[k - 1]) {
            q->run_key[r] = q->keys[k];
            q->run_start[r++] = (uint32_t)k;
        }
    }
}

// Computes the keys and sorts (keys, ids), reusing last frame's order when it can.
bp_status bp_qt_sort(bp_quadtree *q, const bp_frame *f) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    const unsigned bits = (unsigned)f->dim * q->levels + QT_LEVEL_BITS;
    // Reserve everything first: a failure leaves last frame's order intact.
    BP_RESERVE(ctx, q->keys, q->keys_cap, n + 1);
    BP_RESERVE(ctx, q->ids, q->ids_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->tmp_keys, q->tmp_keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->tmp_ids, q->tmp_ids_cap, n + 1);
    const uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP);
    if (tasks > 1) {
        BP_RESERVE_DISCARD(ctx, q->sb, q->sb_cap, n * (size_t)(2 * f->dim) + 1);
        return qt_sort_par(q, f, tasks, bits);
    }
    uint64_t *keys = q->keys, *mk = q->tmp_keys;
    uint32_t *ids = q->ids, *mi = q->tmp_ids;
    const size_t stride = (size_t)(2 * f->dim);
    if (!(q->ordered && q->n == n)) {
        for (size_t k = 0; k < n; ++k) {
            ids[k] = (uint32_t)k;
            keys[k] = qt_key(q, f->boxes + k * stride);
        }
        bp_radix_sort64(keys, ids, mk, mi, n, bits);
        q->full_sorts++;
        return BP_OK;
    }
    // Coherent: boxes whose key is unchanged stay in order (compacted in place); the others
    // are sorted on their own and merged back from the end.
    size_t w = 0, m = 0;
    for (size_t k = 0; k < n; ++k) {
        uint32_t i = ids[k];
        // The boxes are read in last frame's sorted order, at random: fetch ahead.
        if (k + QT_PREFETCH < n) BP_PREFETCH(f->boxes + (size_t)ids[k + QT_PREFETCH] * stride);
        uint64_t key = qt_key(q, f->boxes + (size_t)i * stride);
        if (key == keys[k]) {
            keys[w] = key;
            ids[w++] = i;
        } else {
            mk[m] = key;
            mi[m++] = i;
        }
    }
    q->moved = m;
    q->coherent = (double)m <= QT_MOVED_MAX * (double)n;
    if (m == 0) return BP_OK;
    if (!q->coherent) {
        memcpy(keys + w, mk, m * sizeof *keys);
        memcpy(ids + w, mi, m * sizeof *ids);
        bp_radix_sort64(keys, ids, mk, mi, n, bits);
        q->full_sorts++;
        q->resorts++;
        return BP_OK;
    }
    // m <= n / 2: the second half of the scratch is the radix sort's own scratch.
    bp_radix_sort64(mk, mi, mk + m, mi + m, m, bits);
    size_t i = w, j = m, out = n;
    while (j > 0) {
        if (i > 0 && keys[i - 1] > mk[j - 1]) {
            --out;
            --i;
            keys[out] = keys[i];
            ids[out] = ids[i];
        } else {
            --out;
            --j;
            keys[out] = mk[j];
            ids[out] = mi[j];
        }
    }
    return BP_OK;
}

// The sorted boxes [b, e), stored min then -max.
static void qt_gather(bp_quadtree *q, const bp_frame *f, size_t b, size_t e) {
    const size_t n = f->n, stride = (size_t)(2 * f->dim);
    float *BP_RESTRICT sb = q->sb;
    const float *BP_RESTRICT boxes = f->boxes;
    const size_t ahead = n > QT_PREFETCH ? n - QT_PREFETCH : 0;
    if (stride == 4) {
        for (size_t k = b; k < e; ++k) {
            if (k < ahead) BP_PREFETCH(boxes + 4 * (size_t)q->ids[k + QT_PREFETCH]);
            const float *x = boxes + 4 * (size_t)q->ids[k];
            sb[4 * k] = x[0];
            sb[4 * k + 1] = x[1];
            sb[4 * k + 2] = -x[2];
            sb[4 * k + 3] = -x[3];
        }
    } else {
        for (size_t k = b; k < e; ++k) {
            if (k < ahead) BP_PREFETCH(boxes + 6 * (size_t)q->ids[k + QT_PREFETCH]);
            const float *x = boxes + 6 * (size_t)q->ids[k];
            for (int a = 0; a < 3; ++a) {
                sb[6 * k + (size_t)a] = x[a];
                sb[6 * k + 3 + (size_t)a] = -x[3 + a];
            }
        }
    }
}

// Gathers the boxes in sorted order and cuts the sorted keys into runs (one per cell).
bp_status bp_qt_layout(bp_quadtree *q, const bp_frame *f) {
    bp_context *ctx = q->base.ctx;
    const size_t n = f->n;
    const size_t stride = (size_t)(2 * f->dim);
    BP_RESERVE_DISCARD(ctx, q->sb, q->sb_cap, n * stride + 1);
    // Sized for n (runs <= n), not for this frame's runs, so that a warm frame never grows them.
    BP_RESERVE_DISCARD(ctx, q->run_key, q->run_key_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, q->run_start, q->run_start_cap, n + 1);
    qt_layout_job j = {q, f, n, bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP), NULL};
    if (j.tasks > 1) {
        // With workers: runs counted per task, then written from each task's first index.
        bp_status st = BP_OK;
        j.runs = bp_par_scratch(ctx, j.tasks * sizeof *j.runs, &st);
        if (st == BP_OK) st = bp_par_split(ctx, j.tasks, j.n, qt_layout_gather_task, &j);
        if (st != BP_OK) return st;
        size_t r = 0;
        for (uint32_t t = 0; t < j.tasks; ++t) {
            const size_t c = j.runs[t];
            j.runs[t] = r;
            r += c;
        }
        st = bp_par_split(ctx, j.tasks, j.n, qt_layout_runs_task, &j);
        if (st != BP_OK) return st;
        q->run_start[r] = (uint32_t)n;
        q->nruns = r;
        return BP_OK;
    }
    qt_gather(q, f, 0, n);
    size_t r = 0;
    for (size_t k = 0; k < n; ++k) {
        if (k == 0 || q->keys[k] != q->keys[k - 1]) {
            q->run_key[r] = q->keys[k];
            q->run_start[r++] = (uint32_t)k;
        }
    }
    q->run_start[r] = (uint32_t)n;
    q->nruns = r;
    return BP_OK;
}
