// The sort-and-sweep pair loop, shared by sort-and-sweep (the whole set) and RDC (each final
// group): written once, SSE2 and, where the CPU has it, AVX2.
#ifndef BP_SWEEP_KERNEL_H
#define BP_SWEEP_KERNEL_H

#include "sink.h"

/// Floats of +inf sentinels each array needs after its last box: the widest block read past it.
#define BP_SWEEP_PAD 8

/// Reports every overlapping pair among n boxes held as a structure of arrays sorted by their
/// min on the sweep axis. `soa` holds 2 * dim arrays of `stride` floats (stride >= n +
/// BP_SWEEP_PAD): min and max on the sweep axis, then min and max of each other axis in turn;
/// every array is +inf from n to n + BP_SWEEP_PAD. idx[k] is the object of row k. Box k meets
/// only the rows j > k with min[j] <= max[k] on the sweep axis (sorted mins: a prefix), so the
/// scan stops at the first min past it. check_lo: also require max[j] >= min[k] on the sweep
/// axis (needed only when the sorted mins are not the boxes' own, e.g. adjusted by an epsilon).
/// Adds the candidates tested to *checks.
bp_status bp_sweep_soa(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx, bool check_lo,
                       bp_sink *sink, uint64_t *checks);

/// The same for rows [k0, k1) only (box k against the rows after it, as above): the pairs of
/// consecutive row ranges, in order, are the pairs of the whole sweep in its order (a parallel
/// pass cuts the rows into tasks).
bp_status bp_sweep_soa_rows(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx, bool check_lo,
                            size_t k0, size_t k1, bp_sink *sink, uint64_t *checks);

/// bp_sweep_soa_rows (check_lo false) for rows of two kinds: a pair of two rows whose side[] are
/// both ~0u is skipped, any other pair reported as usual. side: n + BP_SWEEP_PAD entries, 0 or
/// ~0u. For the quadtree's crowded cells, whose boxes inherited from an ancestor met each other
/// there already. The candidates it counts in *checks include those skipped pairs.
bp_status bp_sweep_soa_rows_sided(const float *soa, size_t n, size_t stride, int dim, const uint32_t *idx,
                                  const uint32_t *side, size_t k0, size_t k1, bp_sink *sink, uint64_t *checks);

#endif
