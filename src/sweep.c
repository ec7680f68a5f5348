// Sort-and-sweep (seed 003): sort the boxes by their min on one axis, then every box meets only
// the boxes whose min lies inside its own interval on that axis. Three things make it fast:
//  - the sort is a radix sort of order-preserving float keys, started from last frame's order;
//    when few boxes moved out of order an insertion sort finishes it for less (it gives up,
//    and the radix sort takes over, once it has moved more than a few elements per box);
//  - the sweep axis is the one along which the boxes are most spread relative to their size,
//    so that everything on one x (docs/scenes.md `line`) does not go quadratic;
//  - the sweep reads structure-of-arrays copies in sorted order, 4 or 8 boxes at a time
//    (sweep_kernel.c, shared with RDC).
#include <math.h>

#include "method.h"
#include "par.h"
#include "radix_sort.h"
#include "sort.h"
#include "sweep_kernel.h"

// Insertion sort gives up past this many element moves per box; the radix sort costs about as
// much as this many moves (three passes over keys and values plus histograms).
#define SWEEP_INSERTION_BUDGET 6

typedef struct bp_sweep {
    bp_algorithm base;
    int axis;          // sweep axis of the last call, -1 before the first
    size_t n;          // boxes of the last call
    bool ordered;      // perm holds a valid order of the last call (for coherence)
    uint32_t *perm;    // sorted position -> object index
    uint32_t *keys;    // sort keys in sorted order
    uint32_t *tmp_keys, *tmp_perm;
    size_t perm_cap, keys_cap, tmp_keys_cap, tmp_perm_cap;
    // Sorted structure of arrays: [0] min on the sweep axis, [1] max on it, then min and max of
    // each other axis. Each array has n + BP_SWEEP_PAD floats: +inf sentinels end every scan and
    // let the 4-wide loads run past the last box.
    float *soa;
    size_t soa_cap, stride;
    // The speed features' counters (bp_stats): whether the last call finished last call's order
    // with the insertion sort; calls that sorted in full (radix); of those, the ones where that
    // order was tried and given up.
    bool coherent;
    uint64_t full_sorts, resorts;
} bp_sweep;

static void sweep_init(bp_algorithm *m) { ((bp_sweep *)m)->axis = -1; }

static void sweep_destroy(bp_algorithm *m) {
    bp_sweep *s = (bp_sweep *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, s->perm, s->perm_cap);
    BP_RELEASE(ctx, s->keys, s->keys_cap);
    BP_RELEASE(ctx, s->tmp_keys, s->tmp_keys_cap);
    BP_RELEASE(ctx, s->tmp_perm, s->tmp_perm_cap);
    BP_RELEASE(ctx, s->soa, s->soa_cap);
    bp_free(ctx, s, sizeof *s);
}

static void sweep_reset(bp_algorithm *m) {
    bp_sweep *s = (bp_sweep *)m;
    s->ordered = false;
    s->n = 0;
}

// The axis of fewest candidates (sort.h), from the frame's sums.
static int sweep_choose_axis(const bp_sweep *s, const bp_frame *f, int fixed) {
    if (fixed >= 0) return fixed;
    if (f->n < 2) return s->axis >= 0 ? s->axis : 0;
    double cost[3];
    for (int a = 0; a < f->dim; ++a) cost[a] = bp_frame_axis_cost(f, a);
    return bp_axis_choose(cost, f->dim, s->axis);
}

// Whether last frame's order is so far from sorted that the insertion sort would lose to a
// radix sort: a probe of up to 64 evenly spread neighbours in that order. Fast movers (most
// game scenes at 100,000 boxes move past dozens of neighbours per frame) go straight to the radix
// sort, read in index order; slow scenes keep their order and pay a few moves.
static bool sweep_mostly_unsorted(const bp_frame *f, const uint32_t *perm, int axis) {
    const size_t n = f->n, stride = (size_t)(2 * f->dim);
    if (n < 2) return false;
    const size_t step = n / 64 + 1;
    size_t probes = 0, descents = 0;
    for (size_t k = 0; k + 1 < n; k += step) {
        ++probes;
        descents += f->boxes[perm[k] * stride + (size_t)axis] > f->boxes[perm[k + 1] * stride + (size_t)axis];
    }
    return descents * 8 > probes;
}

// The passes over the boxes in sorted order, each a range of positions (a task's share with
// workers): the sort keys, and the sorted structure of arrays.
typedef struct sweep_job {
    bp_sweep *s;
    const bp_frame *f;
    size_t n;
    uint32_t tasks;
    int axis;
    bool identity;  // the keys pass starts the order over
} sweep_job;

static void sweep_keys_task(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const sweep_job *j = user;
    uint32_t *BP_RESTRICT perm = j->s->perm, *BP_RESTRICT keys = j->s->keys;
    const float *BP_RESTRICT boxes = j->f->boxes;
    const size_t stride = (size_t)(2 * j->f->dim), axis = (size_t)j->axis;
    if (j->identity)
        for (size_t k = b; k < e; ++k) perm[k] = (uint32_t)k;
    for (size_t k = b; k < e; ++k) keys[k] = bp_float_key(boxes[perm[k] * stride + axis]);
}

static void sweep_gather_task(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const sweep_job *j = user;
    const bp_sweep *s = j->s;
    const bp_frame *f = j->f;
    const size_t stride = s->stride;
    const int d = f->dim, axis = s->axis;
    float *soa = s->soa;
    int other[2] = {axis == 0 ? 1 : 0, axis == 2 ? 1 : 2};
    for (size_t k = b; k < e; ++k) {
        const float *box = bp_frame_box(f, s->perm[k]);
        soa[k] = bp_key_float(s->keys[k]);
        soa[stride + k] = box[d + axis];
        for (int o = 0; o < d - 1; ++o) {
            soa[(size_t)(2 + 2 * o) * stride + k] = box[other[o]];
            soa[(size_t)(3 + 2 * o) * stride + k] = box[d + other[o]];
        }
    }
}

// Orders the boxes by min on `axis` into s->perm / s->keys: a stable sort of last frame's order
// (or of the index order), so the result is the same whichever sort ran, serially or not.
static bp_status sweep_sort(bp_sweep *s, const bp_frame *f, int axis, bool coherent) {
    bp_context *ctx = s->base.ctx;
    const size_t n = f->n;
    bool reuse = coherent && s->ordered && s->n == n && s->axis == axis;
    // Reserve everything before touching the old order, so a failure leaves it intact.
    BP_RESERVE(ctx, s->perm, s->perm_cap, n + BP_SWEEP_PAD);
    BP_RESERVE_DISCARD(ctx, s->keys, s->keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, s->tmp_keys, s->tmp_keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, s->tmp_perm, s->tmp_perm_cap, n + 1);
    uint32_t *perm = s->perm, *keys = s->keys;
    const bool tried = reuse;
    if (reuse && sweep_mostly_unsorted(f, perm, axis)) reuse = false;
    // The blocked sweep reads perm past the end (results discarded): keep it defined.
    for (size_t k = n; k < n + BP_SWEEP_PAD; ++k) perm[k] = 0;
    sweep_job j = {s, f, n, bp_par_tasks(ctx, n, BP_PAR_GRAIN_MAP), axis, !reuse};
    bp_status st = bp_par_split(ctx, j.tasks, n, sweep_keys_task, &j);
    if (st != BP_OK) return st;
    bool sorted = false;
    if (reuse) {
        const size_t budget = SWEEP_INSERTION_BUDGET * n;
        if (bp_par_tasks(ctx, n, BP_PAR_GRAIN_SORT) > 1)
            st = bp_par_insertion32(ctx, keys, perm, s->tmp_keys, s->tmp_perm, n, budget, &sorted);
        else
            sorted = bp_insertion_sort32(keys, perm, n, budget) <= budget;
    }
    if (st == BP_OK && !sorted) {
        st = bp_par_radix32(ctx, keys, perm, s->tmp_keys, s->tmp_perm, n, 32);
        s->full_sorts++;
        s->resorts += tried;
    }
    if (st != BP_OK) return st;
    s->coherent = sorted;
    s->n = n;
    s->axis = axis;
    s->ordered = true;
    return BP_OK;
}

// Gathers the sorted structure of arrays.
static bp_status sweep_gather(bp_sweep *s, const bp_frame *f) {
    const size_t n = f->n, stride = n + BP_SWEEP_PAD;
    const int d = f->dim;
    BP_RESERVE_DISCARD(s->base.ctx, s->soa, s->soa_cap, stride * (size_t)(2 * d));
    s->stride = stride;
    sweep_job j = {s, f, n, bp_par_tasks(s->base.ctx, n, BP_PAR_GRAIN_MAP), s->axis, false};
    bp_status st = bp_par_split(s->base.ctx, j.tasks, n, sweep_gather_task, &j);
    for (int a = 0; a < 2 * d; ++a)
        for (size_t p = n; p < stride; ++p) s->soa[(size_t)a * stride + p] = INFINITY;
    return st;
}

// Rows [begin, end) of the sweep (a task's share with workers).
static bp_status sweep_rows(void *user, size_t begin, size_t end, uint32_t worker, bp_sink *sink, uint64_t *checks) {
    (void)worker;
    const bp_sweep *s = user;
    return bp_sweep_soa_rows(s->soa, s->n, s->stride, bp_context_def_of(s->base.ctx)->dimension, s->perm, false,
                             begin, end, sink, checks);
}

static bp_status sweep_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_sweep *s = (bp_sweep *)m;
    const bp_context_def *def = bp_context_def_of(m->ctx);
    int axis = sweep_choose_axis(s, f, def->sweep.axis);
    s->coherent = false;
    bp_status st = sweep_sort(s, f, axis, def->sweep.coherence);
    if (st == BP_OK) st = sweep_gather(s, f);
    if (st != BP_OK) {
        s->ordered = false;
        return st;
    }
    return bp_par_pairs(m->ctx, sink, s->n, BP_PAR_GRAIN_PAIRS, sweep_rows, s, checks);
}

// A query's traversal from the sorted order: a box can touch the window only if its min on the
// sweep axis lies in [lo - largest extent, hi], a contiguous run found by binary search on the
// sort keys (order-preserving: the loaded boxes have no -0.0, and + 0.0f takes it off the bound).
static bp_status sweep_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *v) {
    const bp_sweep *s = (const bp_sweep *)m;
    const int a = s->axis;
    const float *min0 = s->soa;
    double from = (double)v->lo[a] - (double)f->size_max[a];
    float ffrom = (float)from;
    if ((double)ffrom > from) ffrom = nextafterf(ffrom, -INFINITY);
    size_t k = bp_lower_bound32(s->keys, 0, s->n, bp_float_key(ffrom + 0.0f));
    for (; k < s->n && min0[k] <= v->hi[a]; ++k) {
        bp_status st = v->visit(v, s->perm[k]);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// Draws every box's interval on the sweep axis, its level the number of intervals that began
// since the oldest one still open when it began: the window the sweep tests it against (the
// open intervals and any closed ones between them), the picture of the active list.
static void sweep_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw) {
    const bp_sweep *s = (const bp_sweep *)m;
    if (!draw->box || s->n == 0) return;
    const int a = s->axis, d = f->dim;
    const float *min0 = s->soa, *max0 = s->soa + s->stride;
    size_t first = 0;  // first sorted box whose interval may still be open
    for (size_t k = 0; k < s->n; ++k) {
        while (first < k && max0[first] < min0[k]) ++first;
        float lo[3], hi[3];
        for (int e = 0; e < d; ++e) lo[e] = hi[e] = f->lo[e];
        lo[a] = min0[k];
        hi[a] = max0[k];
        draw->box(lo, hi, (int)(k - first), draw->user);
    }
}

static bp_status sweep_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_sweep *s = (const bp_sweep *)m;
    if (s->n != f->n) return BP_ERR_INVALID_ARG;
    const int d = f->dim, a = s->axis;
    for (size_t k = 0; k < s->n; ++k) {
        uint32_t i = s->perm[k];
        if (i >= f->n) return BP_ERR_INVALID_ARG;
        const float *b = bp_frame_box(f, i);
        if (s->soa[k] != b[a] || s->soa[s->stride + k] != b[d + a]) return BP_ERR_INVALID_ARG;
        if (k > 0 && s->soa[k - 1] > s->soa[k]) return BP_ERR_INVALID_ARG;
    }
    return bp_check_permutation(m->ctx, s->perm, s->n);
}

static void sweep_stats(const bp_algorithm *m, bp_stats *out) {
    const bp_sweep *s = (const bp_sweep *)m;
    out->sweep_axis = s->axis;
    out->coherent = s->coherent;
    out->full_sorts = s->full_sorts;
    out->resorts = s->resorts;
}

const bp_algorithm_class bp_sweep_class = {
    .name = "sweep",
    .frame_sums = true,
    .size = sizeof(bp_sweep),
    .init = sweep_init,
    .destroy = sweep_destroy,
    .find_pairs = sweep_find_pairs,
    .reset = sweep_reset,
    .visit = sweep_visit,
    .debug_draw = sweep_debug_draw,
    .validate = sweep_validate,
    .stats = sweep_stats,
};
