// Loading a call's boxes: the validated copy every method and query reads (bp_frame), and the
// statistics AUTO and the methods choose by.
#ifndef BP_LOAD_H
#define BP_LOAD_H

#include "core.h"

/// One block of the load's statistics.
typedef struct bp_load_part {
    float lo[3], hi[3], size_max[3];
    double size_sum[3], center_sum[3], center_sq[3];
    bp_status st;
} bp_load_part;

/// What the load keeps between calls: the copy of the boxes and the blocks' statistics.
typedef struct bp_load_state {
    float *boxes;
    size_t boxes_cap;
    bp_load_part *parts;
    size_t parts_cap;
} bp_load_state;

/// Copies boxes a[0 .. na) then b[0 .. nb) (2 * dim floats each: min, then max) into ls and
/// describes them in f, in blocks of 4,096 on the context's workers. Rejects NaN, infinities
/// (BP_ERR_NONFINITE) and min > max (BP_ERR_INVERTED_BOX), naming the first bad box in input
/// order; -0.0 becomes +0.0. `sums`: the frame's sums (size_sum, center_sum, center_sq) are
/// wanted, else they may be left incomplete. On failure f holds no boxes (f->n == 0).
bp_status bp_load(bp_context *ctx, bp_load_state *ls, bp_frame *f, int dim, const float *a, size_t na, const float *b,
                  size_t nb, bool sums);

/// Frees what the load keeps.
void bp_load_release(bp_context *ctx, bp_load_state *ls);

#endif
