// The decomposition: one region per rank, as a tree of axis cuts (internal.h).
#include <math.h>
#include <string.h>

#include "internal.h"

// Points are reordered in place by a deterministic quickselect: every rank runs it on the same
// gathered sample and must cut the same tree, so nothing here may depend on the rank.
static void select_kth(float *pts, size_t m, int dim, int axis, size_t k) {
    size_t lo = 0, hi = m;  // the k-th lies in [lo, hi)
    float tmp[3];
    const size_t sz = (size_t)dim * sizeof(float);
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        float a = pts[lo * dim + axis], b = pts[mid * dim + axis], c = pts[(hi - 1) * dim + axis];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        // Three-way partition: [lo, lt) < pivot, [lt, gt) == pivot, [gt, hi) > pivot.
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            float x = pts[i * dim + axis];
            if (x < pivot) {
                memcpy(tmp, pts + lt * dim, sz), memcpy(pts + lt * dim, pts + i * dim, sz), memcpy(pts + i * dim, tmp, sz);
                ++lt, ++i;
            } else if (x > pivot) {
                --gt;
                memcpy(tmp, pts + gt * dim, sz), memcpy(pts + gt * dim, pts + i * dim, sz), memcpy(pts + i * dim, tmp, sz);
            } else {
                ++i;
            }
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return;
    }
}

// Splits ranks [r0, r1) over the m points; lo/hi are the current cell, narrowed for the children.
static int32_t rcb(bpm_decomp *d, float *pts, size_t m, int r0, int r1, float *lo, float *hi) {
    const int dim = d->dim;
    if (r1 - r0 == 1) {
        memcpy(d->lo + 3 * r0, lo, 3 * sizeof(float));
        memcpy(d->hi + 3 * r0, hi, 3 * sizeof(float));
        return bpm_leaf(r0);
    }
    const int nl = (r1 - r0) / 2;
    int axis = 0;
    float cut = 0.0f;
    size_t split = 0;
    if (m > 0) {
        float bmin[3], bmax[3];
        for (int a = 0; a < dim; ++a) bmin[a] = bmax[a] = pts[a];
        for (size_t i = 1; i < m; ++i)
            for (int a = 0; a < dim; ++a) {
                float x = pts[i * dim + a];
                if (x < bmin[a]) bmin[a] = x;
                if (x > bmax[a]) bmax[a] = x;
            }
        for (int a = 1; a < dim; ++a)
            if (bmax[a] - bmin[a] > bmax[axis] - bmin[axis]) axis = a;
        const size_t k = (size_t)((double)m * nl / (r1 - r0));
        select_kth(pts, m, dim, axis, k);
        cut = pts[k * dim + axis];
        // After the selection, [0, k) <= cut <= (k, m); the left child takes the points < cut.
        size_t i = 0, j = k;
        float tmp[3];
        while (i < j) {
            if (pts[i * dim + axis] < cut) ++i;
            else {
                --j;
                memcpy(tmp, pts + i * dim, (size_t)dim * sizeof(float));
                memcpy(pts + i * dim, pts + j * dim, (size_t)dim * sizeof(float));
                memcpy(pts + j * dim, tmp, (size_t)dim * sizeof(float));
            }
        }
        split = i;
    } else {
        // No points: cut the cell in the middle where it is finite, so regions stay disjoint.
        cut = isfinite(lo[0]) && isfinite(hi[0]) ? lo[0] + (hi[0] - lo[0]) * 0.5f
              : isfinite(lo[0])                 ? lo[0]
              : isfinite(hi[0])                 ? hi[0]
                                                : 0.0f;
    }
    const int32_t id = d->used++;
    d->nodes[id].axis = axis;
    d->nodes[id].cut = cut;
    float save = hi[axis];
    hi[axis] = cut;
    d->nodes[id].child[0] = rcb(d, pts, split, r0, r0 + nl, lo, hi);
    hi[axis] = save;
    save = lo[axis];
    lo[axis] = cut;
    d->nodes[id].child[1] = rcb(d, pts + split * dim, m - split, r0 + nl, r1, lo, hi);
    lo[axis] = save;
    return id;
}

void bpm_decomp_rcb(bpm_decomp *d, float *points, size_t m) {
    float lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    d->used = 0;
    d->root = rcb(d, points, m, 0, d->ranks, lo, hi);
}

// Cells [c0[a], c1[a]) of the grid; splits the first axis with more than one cell in the middle.
static int32_t grid(bpm_decomp *d, const int *counts, const float *const *cuts, int *c0, int *c1, float *lo,
                    float *hi) {
    int axis = -1;
    for (int a = 0; a < d->dim && axis < 0; ++a)
        if (c1[a] - c0[a] > 1) axis = a;
    if (axis < 0) {
        int rank = c0[0] + counts[0] * (c0[1] + counts[1] * (d->dim == 3 ? c0[2] : 0));
        memcpy(d->lo + 3 * rank, lo, 3 * sizeof(float));
        memcpy(d->hi + 3 * rank, hi, 3 * sizeof(float));
        return bpm_leaf(rank);
    }
    const int mid = c0[axis] + (c1[axis] - c0[axis]) / 2;
    const float cut = cuts[axis][mid - 1];
    const int32_t id = d->used++;
    d->nodes[id].axis = axis;
    d->nodes[id].cut = cut;
    int save = c1[axis];
    float fsave = hi[axis];
    c1[axis] = mid, hi[axis] = cut;
    d->nodes[id].child[0] = grid(d, counts, cuts, c0, c1, lo, hi);
    c1[axis] = save, hi[axis] = fsave;
    save = c0[axis], fsave = lo[axis];
    c0[axis] = mid, lo[axis] = cut;
    d->nodes[id].child[1] = grid(d, counts, cuts, c0, c1, lo, hi);
    c0[axis] = save, lo[axis] = fsave;
    return id;
}

void bpm_decomp_grid(bpm_decomp *d, const int *counts, const float *cuts) {
    const float *axis_cuts[3] = {cuts, cuts + (counts[0] - 1), NULL};
    if (d->dim == 3) axis_cuts[2] = axis_cuts[1] + (counts[1] - 1);
    int c0[3] = {0, 0, 0}, c1[3] = {counts[0], counts[1], d->dim == 3 ? counts[2] : 1};
    float lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    d->used = 0;
    d->root = grid(d, counts, axis_cuts, c0, c1, lo, hi);
}

int bpm_decomp_locate(const bpm_decomp *d, const float *p) {
    int32_t at = d->root;
    while (at >= 0) {
        const bpm_node *nd = &d->nodes[at];
        at = nd->child[p[nd->axis] < nd->cut ? 0 : 1];
    }
    return -at - 1;
}

int bpm_decomp_overlaps(const bpm_decomp *d, const float *min, const float *max, int32_t *out) {
    int32_t stack[64];  // depth <= log2(ranks) + 1 for the bisection; the grid's is the same
    int top = 0, count = 0;
    stack[top++] = d->root;
    while (top > 0) {
        int32_t at = stack[--top];
        if (at < 0) {
            out[count++] = -at - 1;
            continue;
        }
        const bpm_node *nd = &d->nodes[at];
        // Right first, so that the ranks come out in tree order (low halves first).
        if (max[nd->axis] >= nd->cut) stack[top++] = nd->child[1];
        if (min[nd->axis] < nd->cut) stack[top++] = nd->child[0];
    }
    return count;
}
