// Recursive dimensional clustering (seed 001; Steve Rabin, Game Programming Gems 2). Along one
// axis, sort the boxes' boundaries and cut wherever the count of open intervals falls to zero:
// no box of one group can touch a box of another. Each group is then cut along the next axis,
// and again along the first, until it is small (brute force) or no axis cuts it any more.
//
// Choices, each for a reason (docs/rdc.md has the measurements):
//  - Only the open boundaries (interval mins) are sorted; the close boundaries are carried as a
//    running max during the scan. "The count of open intervals falls to zero before open k" is
//    exactly "min_k > max(max_0 .. max_{k-1})": the same groups as sorting all 2n boundaries
//    with open before close at equal positions (touching boxes stay together: the seed's snap
//    problem), for half the sorting. The sort is the shared radix sort (insertion sort below
//    RDC_RADIX_MIN keys, where its histograms cost more than the sort).
//  - A group cut along axis a is a connected run along a, so it cannot be cut along a again: it
//    goes on with the next axis and one axis already known to fail. When every axis has failed
//    in turn (the set did not change), the group is final: the seed's worst case ends there
//    instead of recursing on. Such a group is brute-forced in its sorted order, stopping each
//    row where the next min passes the row's max (a sweep inside the group): a large group that
//    is one chain of touching boxes (any dense scene) is not quadratic that way.
//  - No recursion: an explicit stack of groups to cut. Groups are kept as contiguous ranges of
//    one permutation; a group's children are contiguous nodes, sorted and disjoint along the
//    split axis, which region queries binary-search.
//  - Two phases: the clustering first (all of it), the pairs second, so that a call stopped by
//    the pair callback leaves a complete structure for queries.
//  - Temporal coherence: the top-level order along each axis is kept between frames and fixed by
//    an insertion sort with a move budget (the radix sort takes over when too much moved).
#include <float.h>
#include <math.h>

#include "method.h"
#include "par.h"
#include "radix_sort.h"
#include "sort.h"
#include "sweep_kernel.h"

// Groups of at most this many boxes are brute-forced when def.rdc.threshold is 0 (tuned on the
// docs/scenes.md scenes, docs/rdc.md).
#define RDC_THRESHOLD_AUTO 8

// Below this many keys a group is sorted by insertion: the radix sort's 3 x 2048-bucket
// histograms cost more than the sort itself.
#define RDC_RADIX_MIN 192

// The coherent insertion sort gives up past this many element moves per box (as sweep.c), and
// then rests this many frames on that axis.
#define RDC_INSERTION_BUDGET 6
#define RDC_INSERTION_REST 8

typedef struct rdc_node {
    float lo[3], hi[3];  // bounds of its boxes (as given, not epsilon-adjusted)
    uint32_t begin, end; // its boxes: order[begin .. end)
    uint32_t first;      // children: nodes[first .. first + count)
    uint32_t count;      // 0: a final group (leaf)
    uint32_t depth;      // 0 for the root
    int32_t axis;        // internal: split axis; leaf: axis its range is sorted on, -1 unsorted
    float size_max;      // sorted leaf: largest extent along axis (query window)
} rdc_node;

// A group's statistics: its bounds and, per axis, its extents (for the no-gap test's buckets
// and the final sweep axis).
typedef struct rdc_stats {
    float lo[3], hi[3];
    float size_max[3];
    double size_sum[3];
} rdc_stats;

typedef struct rdc_task {
    uint32_t node;
    int axis;       // the next axis to cut along
    int fails;      // axes in a row known not to cut this set
    rdc_stats st;   // gathered by the cut that made the group (no extra pass over its boxes)
} rdc_task;

typedef struct bp_rdc {
    bp_algorithm base;
    size_t n;              // boxes of the last call
    int dim;
    const float *src;      // the boxes clustered: the frame's, or `adj` when epsilon is set
    float eps;
    float *adj;            // epsilon-adjusted copy of the boxes
    size_t adj_cap;
    uint32_t *order;       // groups as contiguous ranges of box indices
    uint32_t *keys;        // order's sort keys (a final sorted group keeps them for queries)
    uint32_t *tmp_keys, *tmp_vals;
    size_t order_cap, keys_cap, tmp_keys_cap, tmp_vals_cap;
    uint32_t *root_perm[3];  // last frame's top-level order along each axis (coherence)
    size_t root_perm_cap[3];
    bool root_valid[3];
    unsigned root_rest[3];   // frames the coherent insertion sort still skips, per axis
    size_t root_n;
    rdc_node *nodes;
    size_t nodes_cap, node_count;
    rdc_task *tasks;
    size_t tasks_cap;
    float *soa;            // one final group in structure-of-arrays form, for its pair loop
    size_t soa_cap;
    int32_t *cover;        // bucket coverage counts of the no-gap test
    size_t cover_cap;
    uint32_t *qstack;      // region-query stack of node indices
    size_t qstack_cap;
    // The speed features' counters (bp_stats): the last call's sorts of the whole set and how
    // many of them finished last call's order; sorts of the whole set from scratch; of those, the
    // ones after that order was tried and given up.
    unsigned root_sorts, root_kept;
    uint64_t full_sorts, resorts;
    // Largest needs seen so far (nodes, task stack): each frame reserves them with headroom
    // first, so warm frames allocate nothing.
    size_t nodes_peak, tasks_peak;
    // Workers: each final group's first item in the pair pass (nodes + 1), and per-worker
    // structure-of-arrays copies of the small groups (the large ones share `soa`).
    uint64_t *item_at;
    size_t item_at_cap;
    float *wsoa;
    size_t wsoa_cap;
} bp_rdc;

static void rdc_destroy(bp_algorithm *m) {
    bp_rdc *r = (bp_rdc *)m;
    bp_context *ctx = m->ctx;
    BP_RELEASE(ctx, r->adj, r->adj_cap);
    BP_RELEASE(ctx, r->order, r->order_cap);
    BP_RELEASE(ctx, r->keys, r->keys_cap);
    BP_RELEASE(ctx, r->tmp_keys, r->tmp_keys_cap);
    BP_RELEASE(ctx, r->tmp_vals, r->tmp_vals_cap);
    for (int a = 0; a < 3; ++a) BP_RELEASE(ctx, r->root_perm[a], r->root_perm_cap[a]);
    BP_RELEASE(ctx, r->nodes, r->nodes_cap);
    BP_RELEASE(ctx, r->tasks, r->tasks_cap);
    BP_RELEASE(ctx, r->soa, r->soa_cap);
    BP_RELEASE(ctx, r->qstack, r->qstack_cap);
    BP_RELEASE(ctx, r->cover, r->cover_cap);
    BP_RELEASE(ctx, r->item_at, r->item_at_cap);
    BP_RELEASE(ctx, r->wsoa, r->wsoa_cap);
    bp_free(ctx, r, sizeof *r);
}

static void rdc_reset(bp_algorithm *m) {
    bp_rdc *r = (bp_rdc *)m;
    for (int a = 0; a < 3; ++a) {
        r->root_valid[a] = false;
        r->root_rest[a] = 0;
    }
    r->root_n = 0;
    r->node_count = 0;
    r->n = 0;
}

static uint32_t rdc_threshold(const bp_rdc *r) {
    uint32_t t = bp_context_def_of(r->base.ctx)->rdc.threshold;
    return t ? t : RDC_THRESHOLD_AUTO;
}

// The epsilon-adjusted bound, kept finite so that the +inf sentinels stay above every max.
static inline float rdc_clamp(float v) {
    return v > FLT_MAX ? FLT_MAX : (v < -FLT_MAX ? -FLT_MAX : v);
}

// ---------------------------------------------------------------------------------------------
// Sorting a group

// Fills keys[b .. e) with the sort keys of order[b .. e) along axis a.
static void rdc_gather_keys(bp_rdc *r, const bp_frame *f, size_t b, size_t e, int a) {
    const size_t stride = (size_t)(2 * f->dim);
    const float *src = r->src;
    const uint32_t *order = r->order;
    uint32_t *keys = r->keys;
    for (size_t k = b; k < e; ++k) keys[k] = bp_float_key(src[order[k] * stride + (size_t)a]);
}

// The passes of one group on the workers (the root's: the others are small).
typedef struct rdc_job {
    bp_rdc *r;
    const bp_frame *f;
    size_t b, e;
    uint32_t tasks;
    int a;
    float lo, hi;       // rdc_no_gap: the range, its buckets
    double scale;
    size_t nb, inc;
    int32_t *cover;     // per task: nb + 1 counts
} rdc_job;

static void rdc_keys_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const rdc_job *j = user;
    size_t b, e;
    bp_par_range(j->e - j->b, j->tasks, t, &b, &e);
    rdc_gather_keys(j->r, j->f, j->b + b, j->b + e, j->a);
}

// One box's coverage of the no-gap test's buckets (see rdc_no_gap).
static inline void rdc_cover_box(int32_t *cover, const float *box, int d, int a, float lo, float hi, double scale,
                                 size_t nb) {
    const float x0 = box[a], x1 = box[d + a];
    if (!(x0 <= x1)) return;  // shrunk past empty by epsilon: covers nothing
    // t in [0, nb] up to rounding: signed conversions are exact and branch-free.
    const double t0 = ((double)x0 - (double)lo) * scale, t1 = ((double)x1 - (double)lo) * scale;
    int64_t first = (int64_t)t0 + 2, last = (int64_t)t1 - 1;  // last: one past the last covered
    if (x0 == lo) first = 0;
    if (x1 == hi) last = (int64_t)nb;
    if (last > (int64_t)nb) last = (int64_t)nb;
    if (first >= last) return;
    cover[first]++;
    cover[last]--;
}

// The boxes k = b, b + inc, ... of a share, into the task's own counts.
static void rdc_cover_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const rdc_job *j = user;
    const size_t count = (j->e - j->b + j->inc - 1) / j->inc;
    size_t i0, i1;
    bp_par_range(count, j->tasks, t, &i0, &i1);
    int32_t *cover = j->cover + (size_t)t * (j->nb + 1);
    memset(cover, 0, (j->nb + 1) * sizeof *cover);
    const int d = j->f->dim;
    const size_t stride = (size_t)(2 * d);
    for (size_t i = i0; i < i1; ++i)
        rdc_cover_box(cover, j->r->src + j->r->order[j->b + i * j->inc] * stride, d, j->a, j->lo, j->hi, j->scale,
                      j->nb);
}

// Whether the intervals of order[b .. e) along axis a provably leave no gap in [lo, hi] (their
// adjusted extremes): then no cut exists and the sort can be skipped. Buckets over [lo, hi]
// are marked when some interval covers them whole, with a margin of two buckets at interval
// ends so that rounding in the bucket arithmetic can only lose coverage, never invent it (the
// ends of the range itself are exact: an interval starting at lo covers from bucket 0). A false
// "maybe a gap" only costs the sort it would have cost anyway.
static bp_status rdc_no_gap(bp_rdc *r, const bp_frame *f, size_t b, size_t e, int a, float lo, float hi,
                            double mean_size, bool *proven) {
    const int d = f->dim;
    const size_t stride = (size_t)(2 * d);
    const size_t m = e - b;
    const double extent = (double)hi - (double)lo;
    *proven = !(extent > 0.0);  // every interval is the same point: all touch
    if (*proven) return BP_OK;
    // Buckets of about an eighth of the mean interval: a typical interval covers a few whole.
    double want = 8.0 * extent / (mean_size > 0.0 ? mean_size : extent);
    size_t nb = want < 1.0 ? 1 : (want > (double)(2 * m) ? 2 * m : (size_t)want);
    const double scale = (double)nb / extent;
    BP_RESERVE_DISCARD(r->base.ctx, r->cover, r->cover_cap, nb + 1);
    int32_t *cover = r->cover;
    const float *src = r->src;
    // First every step-th interval, the inner buckets only (the extremes may be skipped): where
    // that sample leaves a hole, a gap is likely and the full pass is not worth it. The step
    // keeps the sample's own coverage (sizes over extent) at 16 or more.
    const size_t step = (size_t)fmin(8.0, fmax(1.0, mean_size * (double)m / extent / 16.0));
    // With workers (a large group): each task counts a share into counts of its own, summed
    // after (integers: the same totals); the tasks' counts take at most two groups' worth.
    uint32_t tasks = bp_par_tasks(r->base.ctx, m, BP_PAR_GRAIN_MAP);
    if (tasks > 1 && (size_t)tasks * (nb + 1) > 4 * m + 2) tasks = (uint32_t)((4 * m + 2) / (nb + 1));
    int32_t *task_cover = NULL;
    if (tasks > 1) {
        bp_status st = BP_OK;
        task_cover = bp_par_scratch(r->base.ctx, (size_t)tasks * (nb + 1) * sizeof *task_cover, &st);
        if (st != BP_OK) return st;
    }
    for (size_t pass = step > 1 ? 0 : 1; pass < 2; ++pass) {
        const size_t inc = pass ? 1 : step;
        if (tasks > 1) {
            rdc_job j = {r, f, b, e, tasks, a, lo, hi, scale, nb, inc, task_cover};
            bp_status st = bp_par_run(r->base.ctx, tasks, rdc_cover_task, &j);
            if (st != BP_OK) return st;
            for (size_t x = 0; x <= nb; ++x) {
                int32_t c = 0;
                for (uint32_t t = 0; t < tasks; ++t) c += task_cover[(size_t)t * (nb + 1) + x];
                cover[x] = c;
            }
        } else {
            memset(cover, 0, (nb + 1) * sizeof *cover);
            for (size_t k = b; k < e; k += inc) rdc_cover_box(cover, src + r->order[k] * stride, d, a, lo, hi, scale, nb);
        }
        const size_t from = pass ? 0 : 2, to = pass ? nb : (nb > 2 ? nb - 2 : 0);
        int32_t run = 0;
        for (size_t k = 0; k < to; ++k) {
            run += cover[k];
            if (run <= 0 && k >= from) return BP_OK;
        }
    }
    *proven = true;
    return BP_OK;
}

// Sorts order[b .. e) by min along axis a (keys included). The whole set (the root) starts from
// last frame's order along a when it has one, and saves its order for the next frame. With
// workers (the root), each step has a parallel form with the serial result and decisions.
static bp_status rdc_sort(bp_rdc *r, const bp_frame *f, size_t b, size_t e, int a, bool root) {
    bp_context *ctx = r->base.ctx;
    const size_t m = e - b;
    bool coherent = false;
    bp_status st = BP_OK;
    if (root && r->root_valid[a]) {
        // After a failed try the insertion sort rests a few frames: in a scene where too much
        // moves each frame it would only waste its budget before the radix sort anyway.
        if (r->root_rest[a]) r->root_rest[a]--;
        else coherent = true;
        if (coherent) st = bp_par_copy(ctx, r->order, r->root_perm[a], m * sizeof *r->order);
    }
    rdc_job j = {r, f, b, e, bp_par_tasks(ctx, m, BP_PAR_GRAIN_MAP), a, 0, 0, 0, 0, 0, NULL};
    if (st == BP_OK) st = bp_par_run(ctx, j.tasks, rdc_keys_task, &j);
    if (st != BP_OK) return st;
    uint32_t *keys = r->keys + b, *vals = r->order + b;
    bool done = false;
    if (coherent) {
        const size_t budget = RDC_INSERTION_BUDGET * m;
        if (bp_par_tasks(ctx, m, BP_PAR_GRAIN_SORT) > 1)
            st = bp_par_insertion32(ctx, keys, vals, r->tmp_keys, r->tmp_vals, m, budget, &done);
        else
            done = bp_insertion_sort32(keys, vals, m, budget) <= budget;
        if (st != BP_OK) return st;
        if (!done) r->root_rest[a] = RDC_INSERTION_REST;
    }
    if (done) {
        // few boxes moved out of order since last frame
    } else if (m < RDC_RADIX_MIN) {
        bp_insertion_sort32(keys, vals, m, SIZE_MAX);
    } else {
        st = bp_par_radix32(ctx, keys, vals, r->tmp_keys, r->tmp_vals, m, 32);
        if (st != BP_OK) return st;
    }
    if (root) {
        r->root_sorts++;
        r->root_kept += done;
        r->full_sorts += !done;
        r->resorts += coherent && !done;
        st = bp_par_copy(ctx, r->root_perm[a], r->order, m * sizeof *r->order);
        r->root_valid[a] = st == BP_OK;
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// The clustering (phase 1)

// Adds a box to running statistics (`first`: start them over from this box).
static inline void rdc_stats_add(rdc_stats *st, const float *box, int d, bool first) {
    for (int x = 0; x < d; ++x) {
        const float mn = box[x], mx = box[d + x], s = mx - mn;
        if (first) {
            st->lo[x] = mn;
            st->hi[x] = mx;
            st->size_max[x] = s;
            st->size_sum[x] = (double)mx - (double)mn;
            continue;
        }
        st->lo[x] = mn < st->lo[x] ? mn : st->lo[x];
        st->hi[x] = mx > st->hi[x] ? mx : st->hi[x];
        st->size_max[x] = s > st->size_max[x] ? s : st->size_max[x];
        st->size_sum[x] += (double)mx - (double)mn;
    }
}

// Counts the runs of order[b .. e) (sorted along axis a): a new run starts at each box whose
// min lies strictly past the max of everything before it (touching stays together: closed rule).
static size_t rdc_count_runs(const bp_rdc *r, const bp_frame *f, uint32_t b, uint32_t e, int a) {
    const size_t stride = (size_t)(2 * f->dim), hi_at = (size_t)(f->dim + a);
    const float *src = r->src;
    const uint32_t *order = r->order, *keys = r->keys;
    float run = src[order[b] * stride + hi_at];
    size_t runs = 1;
    for (uint32_t k = b + 1; k < e; ++k) {
        float lo = bp_key_float(keys[k]);
        float hi = src[order[k] * stride + hi_at];
        runs += lo > run;
        run = lo > run ? hi : (hi > run ? hi : run);
    }
    return runs;
}

// Cuts group `node` along axis a (its range sorted along a): appends its runs as children
// (contiguous nodes, in sorted order) and pushes those of more than one box as tasks. Nodes and
// tasks grow here, by what this cut needs. *children: 0 when nothing was cut (one run).
static bp_status rdc_cut(bp_rdc *r, const bp_frame *f, uint32_t node, int a, size_t *ntask, size_t *children) {
    const int d = f->dim;
    const size_t stride = (size_t)(2 * d), hi_at = (size_t)(d + a);
    const uint32_t b = r->nodes[node].begin, e = r->nodes[node].end;
    *children = 0;
    const size_t runs = rdc_count_runs(r, f, b, e, a);
    if (runs < 2) return BP_OK;
    BP_RESERVE(r->base.ctx, r->nodes, r->nodes_cap, r->node_count + runs);
    BP_RESERVE(r->base.ctx, r->tasks, r->tasks_cap, *ntask + runs);
    if (r->node_count + runs > r->nodes_peak) r->nodes_peak = r->node_count + runs;
    if (*ntask + runs > r->tasks_peak) r->tasks_peak = *ntask + runs;
    const float *src = r->src;
    const uint32_t *order = r->order, *keys = r->keys;
    const uint32_t depth = r->nodes[node].depth + 1;
    const int next = a + 1 == d ? 0 : a + 1;
    const size_t first = r->node_count;
    size_t count = first;
    float run = src[order[b] * stride + hi_at];
    uint32_t start = b;
    rdc_stats st;
    memset(&st, 0, sizeof st);  // the axes past dim stay defined
    rdc_stats_add(&st, bp_frame_box(f, order[b]), d, true);
    for (uint32_t k = b + 1; k <= e; ++k) {
        if (k < e) {
            float lo = bp_key_float(keys[k]);
            float hi = src[order[k] * stride + hi_at];
            if (!(lo > run)) {
                run = hi > run ? hi : run;
                rdc_stats_add(&st, bp_frame_box(f, order[k]), d, false);
                continue;
            }
            run = hi;  // a cut: [start, k) becomes a child
        }
        rdc_node *c = &r->nodes[count++];
        c->begin = start;
        c->end = k;
        c->first = 0;
        c->count = 0;
        c->depth = depth;
        c->axis = -1;
        c->size_max = 0.0f;
        for (int x = 0; x < d; ++x) {
            c->lo[x] = st.lo[x];
            c->hi[x] = st.hi[x];
        }
        if (k - start > 1) {
            rdc_task *t = &r->tasks[(*ntask)++];
            t->node = (uint32_t)(count - 1);
            t->axis = next;
            t->fails = 1;  // a run along a: cutting along a again gives itself
            t->st = st;
        }
        if (k < e) rdc_stats_add(&st, bp_frame_box(f, order[k]), d, true);
        start = k;
    }
    r->node_count = count;
    r->nodes[node].first = (uint32_t)first;
    r->nodes[node].count = (uint32_t)(count - first);
    r->nodes[node].axis = a;
    *children = count - first;
    return BP_OK;
}

static bp_status rdc_cluster(bp_rdc *r, const bp_frame *f) {
    const uint32_t thr = rdc_threshold(r);
    const int d = f->dim;
    const size_t n = f->n;
    const float eps = r->eps;
    r->node_count = 0;
    if (n == 0) return BP_OK;
    BP_RESERVE(r->base.ctx, r->nodes, r->nodes_cap, 1);
    BP_RESERVE(r->base.ctx, r->tasks, r->tasks_cap, 1);
    for (size_t k = 0; k < n; ++k) r->order[k] = (uint32_t)k;
    rdc_node *root = &r->nodes[r->node_count++];
    root->begin = 0;
    root->end = (uint32_t)n;
    root->first = root->count = root->depth = 0;
    root->axis = -1;
    root->size_max = 0.0f;
    // The root's statistics come with the frame; every other group's from the cut that made it.
    size_t ntask = 0;
    rdc_task *rt = &r->tasks[ntask++];
    memset(rt, 0, sizeof *rt);
    rt->node = 0;
    rt->axis = 0;
    rt->fails = 0;
    for (int x = 0; x < d; ++x) {
        root->lo[x] = rt->st.lo[x] = f->lo[x];
        root->hi[x] = rt->st.hi[x] = f->hi[x];
        rt->st.size_max[x] = f->size_max[x];
        rt->st.size_sum[x] = f->size_sum[x];
    }
    while (ntask) {
        const rdc_task t = r->tasks[--ntask];
        const rdc_stats st = t.st;
        rdc_node *nd = &r->nodes[t.node];
        const uint32_t b = nd->begin, e = nd->end, m = e - b;
        const bool is_root = t.node == 0;
        if (m <= thr) continue;  // a small final group: brute-forced unsorted
        // Expected gaps along an axis are about m exp(-coverage) for random intervals: only
        // where that is small is the exact no-gap test worth its pass.
        const double log_m = log((double)m);
        int a = t.axis, fails = t.fails, sorted = -1;
        for (;;) {
            const double mean_size = st.size_sum[a] / m;
            const double extent = (double)st.hi[a] - (double)st.lo[a];
            const bool dense = !(extent > 0.0) || st.size_sum[a] > log_m * extent;
            const float alo = eps != 0.0f ? rdc_clamp(st.lo[a] + eps) : st.lo[a];
            const float ahi = eps != 0.0f ? rdc_clamp(st.hi[a] - eps) : st.hi[a];
            bool no_gap = false;
            if (dense) {
                bp_status s = rdc_no_gap(r, f, b, e, a, alo, ahi, mean_size, &no_gap);
                if (s != BP_OK) return s;
            }
            if (!no_gap) {
                bp_status s = rdc_sort(r, f, b, e, a, is_root);
                if (s != BP_OK) return s;
                sorted = a;
                size_t children = 0;
                s = rdc_cut(r, f, t.node, a, &ntask, &children);
                if (s != BP_OK) return s;
                if (children) break;
            }
            if (++fails < d) {
                a = a + 1 == d ? 0 : a + 1;
                continue;
            }
            // No axis cuts this set: a final group, swept along its best axis (sort.h: the
            // extents over the group's bounds), the one it is sorted on unless another is far better.
            double cost[3];
            for (int x = 0; x < d; ++x) cost[x] = bp_axis_cost(st.size_sum[x], (double)st.hi[x] - (double)st.lo[x]);
            const int best = bp_axis_choose(cost, d, sorted);
            if (best != sorted) {
                bp_status s = rdc_sort(r, f, b, e, best, is_root);
                if (s != BP_OK) return s;
            }
            nd = &r->nodes[t.node];
            nd->axis = best;
            // Extents are rounded to nearest: one step up makes this a true upper bound, so
            // that a query's window [lo - size_max, hi] never cuts off a box that touches it.
            nd->size_max = nextafterf(st.size_max[best], INFINITY);
            break;
        }
    }
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// The pairs (phase 2)

// Brute force of a small unsorted group: all pairs, from a structure-of-arrays copy.
static bp_status rdc_brute(const bp_rdc *r, const bp_frame *f, const rdc_node *nd, float *s, bp_sink *sink,
                           uint64_t *checks) {
    const int d = f->dim;
    const size_t stride = (size_t)(2 * d);
    const size_t m = nd->end - nd->begin;
    const uint32_t *idx = r->order + nd->begin;
    for (size_t k = 0; k < m; ++k) {
        const float *box = r->src + idx[k] * stride;
        for (int x = 0; x < 2 * d; ++x) s[(size_t)x * m + k] = box[x];
    }
    for (size_t i = 0; i + 1 < m; ++i) {
        for (size_t j = i + 1; j < m; ++j) {
            int hit = 1;
            for (int x = 0; x < d; ++x) {
                const float *mn = s + (size_t)x * m, *mx = s + (size_t)(d + x) * m;
                hit &= (mn[j] <= mx[i]) & (mn[i] <= mx[j]);
            }
            if (hit) {
                bp_status st = bp_sink_push(sink, idx[i], idx[j]);
                if (st != BP_OK) return st;
            }
        }
    }
    *checks += (uint64_t)m * (m - 1) / 2;
    return BP_OK;
}

// A final group sorted along its axis, as the sweep reads it: [0] min on that axis (from the
// keys), [1] max on it, then min and max of the other axes, each m + BP_SWEEP_PAD floats.
static void rdc_group_soa(const bp_rdc *r, const bp_frame *f, const rdc_node *nd, float *soa, size_t k0, size_t k1) {
    const int d = f->dim, a = nd->axis;
    const size_t stride = (size_t)(2 * d);
    const size_t m = nd->end - nd->begin, st = m + BP_SWEEP_PAD;
    const uint32_t *idx = r->order + nd->begin, *keys = r->keys + nd->begin;
    const int other[2] = {a == 0 ? 1 : 0, a == 2 ? 1 : 2};
    for (size_t k = k0; k < k1; ++k) {
        const float *box = r->src + idx[k] * stride;
        soa[k] = bp_key_float(keys[k]);
        soa[st + k] = box[d + a];
        for (int o = 0; o < d - 1; ++o) {
            soa[(size_t)(2 + 2 * o) * st + k] = box[other[o]];
            soa[(size_t)(3 + 2 * o) * st + k] = box[d + other[o]];
        }
    }
    if (k1 == m)
        for (size_t x = 0; x < stride; ++x)
            for (size_t q = m; q < st; ++q) soa[x * st + q] = INFINITY;
}

// Rows [k0, k1) of the sweep of a final group along the axis its range is sorted on, from its
// structure of arrays `soa` (rdc_group_soa).
static bp_status rdc_sweep_rows(const bp_rdc *r, const bp_frame *f, const rdc_node *nd, const float *soa, size_t k0,
                                size_t k1, bp_sink *sink, uint64_t *checks) {
    const size_t m = nd->end - nd->begin;
    // check_lo: a positive epsilon shrinks intervals, possibly past empty, so sorted mins no
    // longer imply max[j] >= min[k].
    return bp_sweep_soa_rows(soa, m, m + BP_SWEEP_PAD, f->dim, r->order + nd->begin, r->eps > 0.0f, k0, k1, sink,
                             checks);
}

// Sweeps a final group along the axis its range is sorted on.
static bp_status rdc_sweep_group(bp_rdc *r, const bp_frame *f, const rdc_node *nd, bp_sink *sink,
                                 uint64_t *checks) {
    const size_t m = nd->end - nd->begin;
    rdc_group_soa(r, f, nd, r->soa, 0, m);
    return rdc_sweep_rows(r, f, nd, r->soa, 0, m, sink, checks);
}

// ---------------------------------------------------------------------------------------------
// The pairs with workers: one pass over the final groups, in node order, where a sorted group
// counts as many items as it has rows (a large one is cut across tasks) and an unsorted one as
// one. Groups of more than RDC_PAR_SHARED boxes get their structure of arrays built once,
// beforehand, and shared by the tasks that sweep their rows; smaller ones are built by the task
// in its worker's copy.
#define RDC_PAR_SHARED 2048

typedef struct rdc_pairs_job {
    bp_rdc *r;
    const bp_frame *f;
    uint64_t *item;    // node_count + 1: first item of each node (non-final nodes: none)
    uint64_t *shared;  // node_count: offset of a large group's arrays in r->soa
    size_t wstride;  // floats of one worker's copy
    const rdc_node *nd;  // the shared group being built
    float *soa;
    uint32_t tasks;
} rdc_pairs_job;

static bool rdc_final(const rdc_node *nd) { return nd->count == 0 && nd->end - nd->begin >= 2; }

static void rdc_shared_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const rdc_pairs_job *j = user;
    const size_t m = j->nd->end - j->nd->begin;
    size_t b, e;
    bp_par_range(m, j->tasks, t, &b, &e);
    rdc_group_soa(j->r, j->f, j->nd, j->soa, b, e);
}

static bp_status rdc_pairs_part(void *user, size_t v0, size_t v1, uint32_t worker, bp_sink *sink, uint64_t *checks) {
    const rdc_pairs_job *j = user;
    const bp_rdc *r = j->r;
    const size_t nodes = r->node_count;
    const size_t lo = bp_upper_bound64(j->item + 1, 0, nodes, v0);  // the first node whose items end after v0
    float *own = r->wsoa + (size_t)worker * j->wstride;
    for (size_t i = lo; i < nodes && j->item[i] < v1; ++i) {
        const rdc_node *nd = &r->nodes[i];
        if (!rdc_final(nd)) continue;
        const size_t m = nd->end - nd->begin;
        bp_status st;
        if (nd->axis < 0) {
            st = rdc_brute(r, j->f, nd, own, sink, checks);
        } else {
            const size_t k0 = v0 > j->item[i] ? v0 - j->item[i] : 0;
            const size_t k1 = v1 - j->item[i] < m ? v1 - j->item[i] : m;
            const float *soa = own;
            if (m > RDC_PAR_SHARED) soa = r->soa + j->shared[i];
            else rdc_group_soa(r, j->f, nd, own, 0, m);
            st = rdc_sweep_rows(r, j->f, nd, soa, k0, k1, sink, checks);
        }
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

static bp_status rdc_pairs_par(bp_rdc *r, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_context *ctx = r->base.ctx;
    const size_t nodes = r->node_count;
    const size_t w = (size_t)(2 * f->dim);
    BP_RESERVE_DISCARD(ctx, r->item_at, r->item_at_cap, 2 * nodes + 1);
    rdc_pairs_job j = {r, f, r->item_at, r->item_at + nodes + 1, (RDC_PAR_SHARED + BP_SWEEP_PAD) * w, NULL, NULL, 1};
    size_t items = 0, floats = 0;
    for (size_t i = 0; i < nodes; ++i) {
        const rdc_node *nd = &r->nodes[i];
        j.item[i] = items;
        if (!rdc_final(nd)) continue;
        const size_t m = nd->end - nd->begin;
        items += nd->axis < 0 ? 1 : m;
        if (nd->axis >= 0 && m > RDC_PAR_SHARED) {
            j.shared[i] = floats;
            floats += (m + BP_SWEEP_PAD) * w;
        }
    }
    j.item[nodes] = items;
    BP_RESERVE_DISCARD(ctx, r->soa, r->soa_cap, floats + 1);
    BP_RESERVE_DISCARD(ctx, r->wsoa, r->wsoa_cap, (size_t)bp_par_workers(ctx) * j.wstride);
    for (size_t i = 0; i < nodes; ++i) {
        const rdc_node *nd = &r->nodes[i];
        if (!rdc_final(nd) || nd->axis < 0 || nd->end - nd->begin <= RDC_PAR_SHARED) continue;
        j.nd = nd;
        j.soa = r->soa + j.shared[i];
        j.tasks = bp_par_tasks(ctx, nd->end - nd->begin, BP_PAR_GRAIN_MAP);
        bp_status st = bp_par_run(ctx, j.tasks, rdc_shared_task, &j);
        if (st != BP_OK) return st;
    }
    return bp_par_pairs(ctx, sink, items, BP_PAR_GRAIN_PAIRS, rdc_pairs_part, &j, checks);
}

static bp_status rdc_pairs(bp_rdc *r, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    if (bp_par_tasks(r->base.ctx, f->n, BP_PAR_GRAIN_PAIRS) > 1) return rdc_pairs_par(r, f, sink, checks);
    size_t largest = 0;
    for (size_t i = 0; i < r->node_count; ++i) {
        const rdc_node *nd = &r->nodes[i];
        if (!nd->count && nd->end - nd->begin > largest) largest = nd->end - nd->begin;
    }
    BP_RESERVE_DISCARD(r->base.ctx, r->soa, r->soa_cap, (largest + BP_SWEEP_PAD) * (size_t)(2 * f->dim));
    for (size_t i = 0; i < r->node_count; ++i) {
        const rdc_node *nd = &r->nodes[i];
        if (nd->count || nd->end - nd->begin < 2) continue;
        bp_status st = nd->axis < 0 ? rdc_brute(r, f, nd, r->soa, sink, checks) : rdc_sweep_group(r, f, nd, sink, checks);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

// What to reserve of an array the clustering grows, holding `cap` now: nothing new while it
// holds the largest need seen and a quarter of the absolute bound (clusterings jump: an axis that
// starts to cut can triple the groups from one frame to the next); else half again that need,
// so that a creeping peak does not grow it every frame. Never past the bound.
static inline size_t rdc_ahead(size_t cap, size_t peak, size_t bound) {
    size_t need = peak > bound / 4 ? peak : bound / 4;
    if (need > bound) need = bound;
    if (need <= cap) return cap;
    size_t want = need + need / 2 + 64;
    return want < bound ? want : bound;
}

static bp_status rdc_find_pairs(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks) {
    bp_rdc *r = (bp_rdc *)m;
    bp_context *ctx = m->ctx;
    const size_t n = f->n;
    const int d = f->dim;
    const float eps = bp_context_def_of(ctx)->rdc.epsilon;
    // The per-box arrays, reserved before any persistent state changes: a failure leaves last
    // frame's coherent orders intact. Nodes, tasks and the no-gap buckets grow as the clustering
    // needs them (a dense scene has a handful of groups, a sparse one up to 2n nodes); the
    // structure-of-arrays copy is the size of the largest final group.
    // The sweep kernel reads BP_SWEEP_PAD indices past a group's end (masked out).
    BP_RESERVE_DISCARD(ctx, r->order, r->order_cap, n + BP_SWEEP_PAD);
    BP_RESERVE_DISCARD(ctx, r->keys, r->keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, r->tmp_keys, r->tmp_keys_cap, n + 1);
    BP_RESERVE_DISCARD(ctx, r->tmp_vals, r->tmp_vals_cap, n + 1);
    for (int a = 0; a < d; ++a) BP_RESERVE(ctx, r->root_perm[a], r->root_perm_cap[a], n + 1);
    if (eps != 0.0f) BP_RESERVE_DISCARD(ctx, r->adj, r->adj_cap, n * (size_t)(2 * d) + 1);
    // What the clustering grows on demand, reserved up front (rdc_ahead) within what n boxes
    // can ever need (at most 2n nodes; the no-gap test's buckets and the largest group are bounded
    // by n): a clustering that shifts from frame to frame fits without allocating, and only one
    // far larger than any before grows, as the pair buffer does. Capacity never touched costs
    // address space, not page faults.
    BP_RESERVE(ctx, r->nodes, r->nodes_cap, rdc_ahead(r->nodes_cap, r->nodes_peak, 2 * n + 1));
    BP_RESERVE(ctx, r->tasks, r->tasks_cap, rdc_ahead(r->tasks_cap, r->tasks_peak, 2 * n + 1));
    // The buckets and the group copy are small at their bound (8 and 8 * dim bytes a box): all of it.
    BP_RESERVE_DISCARD(ctx, r->cover, r->cover_cap, 2 * n + 1);
    BP_RESERVE_DISCARD(ctx, r->soa, r->soa_cap, (n + BP_SWEEP_PAD) * (size_t)(2 * d));

    r->dim = d;
    r->eps = eps;
    r->src = f->boxes;
    r->root_sorts = r->root_kept = 0;
    if (eps != 0.0f) {
        // Shrink (> 0) or grow (< 0) every interval: the closed rule on the adjusted boxes.
        const size_t stride = (size_t)(2 * d);
        for (size_t k = 0; k < n; ++k) {
            const float *box = f->boxes + k * stride;
            float *o = r->adj + k * stride;
            for (int x = 0; x < d; ++x) {
                o[x] = rdc_clamp(box[x] + eps);
                o[d + x] = rdc_clamp(box[d + x] - eps);
            }
        }
        r->src = r->adj;
    }
    // Last frame's orders are permutations of last frame's n boxes: useless for another n (an
    // axis not sorted in between would otherwise keep an order of an older n).
    if (r->root_n != n)
        for (int a = 0; a < 3; ++a) r->root_valid[a] = false;
    bp_status st = rdc_cluster(r, f);
    if (st != BP_OK) return st;
    r->n = n;
    r->root_n = n;
    return rdc_pairs(r, f, sink, checks);
}

// ---------------------------------------------------------------------------------------------
// Region queries, debug draw, validation

static inline bool rdc_node_hit(const rdc_node *nd, const bp_visitor *q, int d) {
    for (int x = 0; x < d; ++x)
        if (nd->lo[x] > q->hi[x] || q->lo[x] > nd->hi[x]) return false;
    return true;
}

// The adjusted min of a box whose min is `v` (the same float arithmetic as the clustering), so
// that a window on the boxes' mins maps onto the sorted keys.
static inline float rdc_adjust_min(float v, float eps) { return eps != 0.0f ? rdc_clamp(v + eps) : v; }

// A final group sorted along its axis: only boxes whose min lies in [lo - size_max, hi] of the
// window can touch it, a run of the sorted keys found by binary search.
static bp_status rdc_visit_sorted(const bp_rdc *r, const rdc_node *nd, bp_visitor *q) {
    const int a = nd->axis;
    double from = (double)q->lo[a] - (double)nd->size_max;
    float ffrom = from < -FLT_MAX ? -FLT_MAX : (float)from;
    if ((double)ffrom > from) ffrom = nextafterf(ffrom, -INFINITY);
    if (ffrom < -FLT_MAX) ffrom = -FLT_MAX;
    const uint32_t klo = bp_float_key(rdc_adjust_min(ffrom, r->eps));
    const uint32_t khi = bp_float_key(rdc_adjust_min(q->hi[a], r->eps));
    const uint32_t *keys = r->keys;
    for (size_t k = bp_lower_bound32(keys, nd->begin, nd->end, klo); k < nd->end && keys[k] <= khi; ++k) {
        bp_status st = q->visit(q, r->order[k]);
        if (st != BP_OK) return st;
    }
    return BP_OK;
}

static bp_status rdc_visit(bp_algorithm *m, const bp_frame *f, bp_visitor *q) {
    bp_rdc *r = (bp_rdc *)m;
    if (r->node_count == 0) return BP_OK;
    BP_RESERVE_DISCARD(m->ctx, r->qstack, r->qstack_cap, r->node_count + 1);
    const int d = f->dim;
    uint32_t *stack = r->qstack;
    size_t top = 0;
    stack[top++] = 0;
    while (top) {
        const rdc_node *nd = &r->nodes[stack[--top]];
        if (!rdc_node_hit(nd, q, d)) continue;
        if (nd->count) {
            size_t c0 = nd->first, c1 = nd->first + nd->count;
            if (r->eps == 0.0f) {
                // Children are disjoint and ordered along the split axis: the ones the query
                // reaches are a run; find its start by binary search on their max.
                const int a = nd->axis;
                size_t lo = c0, hi = c1;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (r->nodes[mid].hi[a] < q->lo[a]) lo = mid + 1;
                    else hi = mid;
                }
                for (c0 = lo; c0 < c1 && r->nodes[c0].lo[a] <= q->hi[a]; ++c0) stack[top++] = (uint32_t)c0;
            } else {
                // Epsilon: children are disjoint in adjusted coordinates only; visit them all.
                for (; c0 < c1; ++c0) stack[top++] = (uint32_t)c0;
            }
        } else if (nd->axis >= 0) {
            bp_status st = rdc_visit_sorted(r, nd, q);
            if (st != BP_OK) return st;
        } else {
            for (uint32_t k = nd->begin; k < nd->end; ++k) {
                bp_status st = q->visit(q, r->order[k]);
                if (st != BP_OK) return st;
            }
        }
    }
    return BP_OK;
}

// Final groups at level 0 (the seed's demo draws them green), the groups that were cut further
// at level 1 + their depth (the root is level 1).
static void rdc_debug_draw(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw) {
    const bp_rdc *r = (const bp_rdc *)m;
    (void)f;
    if (!draw->box) return;
    for (size_t i = 0; i < r->node_count; ++i) {
        const rdc_node *nd = &r->nodes[i];
        draw->box(nd->lo, nd->hi, nd->count ? (int)(nd->depth + 1) : 0, draw->user);
    }
}

static bp_status rdc_validate(const bp_algorithm *m, const bp_frame *f) {
    const bp_rdc *r = (const bp_rdc *)m;
    const size_t n = f->n;
    const int d = f->dim;
    const size_t stride = (size_t)(2 * d);
    if (r->n != n) return BP_ERR_INVALID_ARG;
    if (n == 0) return r->node_count == 0 ? BP_OK : BP_ERR_INVALID_ARG;
    if (r->node_count == 0 || r->nodes[0].begin != 0 || r->nodes[0].end != n) return BP_ERR_INVALID_ARG;
    const uint32_t thr = rdc_threshold(r);
    bp_status res = bp_check_permutation(m->ctx, r->order, n);
    if (res != BP_OK) return res;
    for (size_t i = 0; i < r->node_count; ++i) {
        const rdc_node *nd = &r->nodes[i];
        if (nd->begin >= nd->end || nd->end > n) return BP_ERR_INVALID_ARG;
        // Bounds are exactly those of the group's boxes.
        for (int x = 0; x < d; ++x) {
            float lo = FLT_MAX, hi = -FLT_MAX;
            for (uint32_t k = nd->begin; k < nd->end; ++k) {
                const float *box = bp_frame_box(f, r->order[k]);
                lo = box[x] < lo ? box[x] : lo;
                hi = box[d + x] > hi ? box[d + x] : hi;
            }
            if (lo != nd->lo[x] || hi != nd->hi[x]) return BP_ERR_INVALID_ARG;
        }
        if (nd->count) {
            // Children tile the range in order, each a maximal run along the split axis: the
            // next child starts strictly past everything before it (touching stays together).
            const int a = nd->axis;
            if (a < 0 || a >= d || nd->count < 2 || nd->first <= i || nd->first + nd->count > r->node_count)
                return BP_ERR_INVALID_ARG;
            uint32_t at = nd->begin;
            float run = -INFINITY;
            for (uint32_t c = nd->first; c < nd->first + nd->count; ++c) {
                const rdc_node *ch = &r->nodes[c];
                if (ch->begin != at || ch->depth != nd->depth + 1) return BP_ERR_INVALID_ARG;
                float clo = INFINITY, chi = -INFINITY;
                for (uint32_t k = ch->begin; k < ch->end; ++k) {
                    const float *box = r->src + r->order[k] * stride;
                    clo = box[a] < clo ? box[a] : clo;
                    chi = box[d + a] > chi ? box[d + a] : chi;
                }
                if (!(clo > run)) return BP_ERR_INVALID_ARG;
                run = chi > run ? chi : run;
                at = ch->end;
            }
            if (at != nd->end) return BP_ERR_INVALID_ARG;
        } else if (nd->axis >= 0) {
            // A final sorted group: larger than the threshold, keys sorted and matching, and
            // one run along its axis (no cut there).
            const int a = nd->axis;
            if (a >= d || nd->end - nd->begin <= thr) return BP_ERR_INVALID_ARG;
            float run = -INFINITY;
            bool seen = false;
            for (uint32_t k = nd->begin; k < nd->end; ++k) {
                const float *box = r->src + r->order[k] * stride;
                if (r->keys[k] != bp_float_key(box[a])) return BP_ERR_INVALID_ARG;
                if (k > nd->begin && r->keys[k - 1] > r->keys[k]) return BP_ERR_INVALID_ARG;
                // A box that epsilon shrank past empty covers nothing: it can neither open a gap
                // nor close one (the no-gap test skips it too; issue #17's fuzzer).
                if (!(box[a] <= box[d + a])) continue;
                if (seen && box[a] > run) return BP_ERR_INVALID_ARG;
                seen = true;
                run = box[d + a] > run ? box[d + a] : run;
                if (box[d + a] - box[a] > nd->size_max && r->eps == 0.0f) return BP_ERR_INVALID_ARG;
            }
        } else if (nd->end - nd->begin > thr && nd->end - nd->begin > 1) {
            return BP_ERR_INVALID_ARG;  // an unsorted group is small or a single box
        }
    }
    return BP_OK;
}

// Coherent: the call sorted the whole set at least once, each time from last call's order.
static void rdc_counters(const bp_algorithm *m, bp_stats *out) {
    const bp_rdc *r = (const bp_rdc *)m;
    out->coherent = r->root_sorts > 0 && r->root_kept == r->root_sorts;
    out->full_sorts = r->full_sorts;
    out->resorts = r->resorts;
}

const bp_algorithm_class bp_rdc_class = {
    .name = "rdc",
    .frame_sums = true,
    .size = sizeof(bp_rdc),
    .destroy = rdc_destroy,
    .find_pairs = rdc_find_pairs,
    .reset = rdc_reset,
    .visit = rdc_visit,
    .debug_draw = rdc_debug_draw,
    .validate = rdc_validate,
    .stats = rdc_counters,
};
