// broadphase_mpi: distributed pair finding over MPI (docs/mpi.md).
//
// An optional companion of broadphase.h, built when CMake finds MPI; link `broadphase_mpi`
// (which links the core). Every rank of a communicator passes its own objects, boxes plus
// 64-bit global ids; the library finds every overlapping pair in the union of all ranks'
// objects, with the core's closed-interval rule, and reports each pair exactly once:
//
//   the pair {a, b} (global ids, a < b) is reported on the rank that passed object a,
//   the object with the smaller id.
//
// Space is split into one region per rank (a default that balances the objects, or the caller's
// grid). Each box is sent, as a ghost, to the ranks whose regions it overlaps; the caller keeps
// its objects. A pair is found on the one rank whose region holds the lower corner of the two
// boxes' intersection, and handed to the reporting rank if that is another one.
//
// Every function taking a context is collective unless it says "local": all ranks of the
// context's communicator call it, in the same order. Errors are collective too: when any rank
// fails (a bad box, out of memory, a bad argument), every rank returns a status and all return
// the same one (the lowest code among the ranks' failures); no rank waits forever and nothing
// leaks. MPI's own failures follow the communicator's error handler (by default they abort).
#ifndef BROADPHASE_MPI_H
#define BROADPHASE_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"

// Export control, as BP_API in broadphase.h: the shared library is built with hidden visibility
// and BP_MPI_BUILDING, so that only these declarations are exported; a static build defines
// BP_MPI_STATIC (CMake does it for the library's consumers).
#if defined(BP_MPI_STATIC)
#define BP_MPI_API
#elif defined(_WIN32)
#if defined(BP_MPI_BUILDING)
#define BP_MPI_API __declspec(dllexport)
#else
#define BP_MPI_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(BP_MPI_BUILDING)
#define BP_MPI_API __attribute__((visibility("default")))
#else
#define BP_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// One overlapping pair of objects, as their global ids, a < b.
typedef struct bp_mpi_pair {
    uint64_t a;
    uint64_t b;
} bp_mpi_pair;

/// Pairs owned by the context, valid until its next call. `pairs` may be NULL when count is 0.
typedef struct bp_mpi_pairs {
    const bp_mpi_pair *pairs;
    size_t count;
} bp_mpi_pairs;

/// Receives this rank's pairs in batches (at most 4,096 a batch). Return false to stop: the call
/// then returns BP_ERR_STOPPED on every rank.
typedef bool bp_mpi_pair_fn(const bp_mpi_pair *pairs, size_t count, void *user);

/// Everything a context is created from: get it from bp_mpi_default_def(). Every rank must pass
/// the same values (dimension, threshold, sample) except the allocator and the local options.
typedef struct bp_mpi_def {
    MPI_Comm comm;            ///< the ranks taking part; duplicated by create. Default MPI_COMM_WORLD.
    int dimension;            ///< 2 or 3. Default 2.
    bp_method method;         ///< the core method each rank runs on its region. Default AUTO.
    int workers;              ///< the core's workers on each rank (bp_context_def.workers). Default 1.
    bp_allocator allocator;   ///< this rank's allocation hooks. Default: the C library.
    /// The balanced decomposition is recomputed when the most loaded rank holds more than
    /// (1 + threshold) times the mean (boxes on a rank, ghosts included). Default 0.25.
    float rebalance_threshold;
    /// Object centres each rank contributes to the sample the decomposition is cut from
    /// (every rank gets the whole sample: ranks x sample points); 0: automatic,
    /// clamp(65,536 / ranks, 16, 1,024).
    uint32_t sample;
    /// Set by bp_mpi_default_def(); never set it yourself. bp_mpi_create rejects a def without
    /// it (zeroed, or written with designated initialisers) with BP_ERR_DEF_NOT_INITIALISED, as
    /// every definition struct is (broadphase.h, "Definition structs"); like BP_ERR_NULL, before
    /// any collective call.
    uint32_t internal_value;
} bp_mpi_def;

/// The defaults: MPI_COMM_WORLD, 2D, AUTO, one worker, C allocator, threshold 0.25, automatic sample.
BP_MPI_API bp_mpi_def bp_mpi_default_def(void);

typedef struct bp_mpi_context bp_mpi_context;

/// Creates a context on def->comm (collective; MPI must be initialised). Errors: BP_ERR_NULL,
/// BP_ERR_INVALID_ARG (a bad field, or fields that differ between ranks), BP_ERR_UNSUPPORTED,
/// BP_ERR_NOMEM. On error *out is NULL on every rank.
BP_MPI_API bp_status bp_mpi_create(const bp_mpi_def *def, bp_mpi_context **out);

/// Frees the context (collective: it frees its duplicated communicator). NULL is ignored.
BP_MPI_API void bp_mpi_destroy(bp_mpi_context *ctx);

/// This frame's objects of this rank: n boxes and their global ids (unique over all ranks;
/// not checked, which would take a global sort). n may be 0 (boxes and ids may then be NULL).
/// Finds the pairs of the union over the ranks; this rank's share goes to `out` (the pairs whose
/// smaller id is one of this rank's objects), in no particular order. Keep the objects in a
/// stable order between frames (a leaving object replaced by the last one, arrivals appended):
/// the core's temporal coherence follows indices (docs/mpi.md).
/// Errors (the same on every rank): BP_ERR_NULL, BP_ERR_DIMENSION, BP_ERR_TOO_MANY,
/// BP_ERR_NONFINITE, BP_ERR_INVERTED_BOX, BP_ERR_NOMEM. On error *out is empty and the context
/// stays usable (its decomposition is kept).
BP_MPI_API bp_status bp_mpi_find_pairs2(bp_mpi_context *ctx, const bp_box2 *boxes, const uint64_t *ids, size_t n,
                                        bp_mpi_pairs *out);
/// The 3D form of bp_mpi_find_pairs2.
BP_MPI_API bp_status bp_mpi_find_pairs3(bp_mpi_context *ctx, const bp_box3 *boxes, const uint64_t *ids, size_t n,
                                        bp_mpi_pairs *out);
/// As bp_mpi_find_pairs2, with this rank's pairs given to `fn` in batches. Additional error:
/// BP_ERR_STOPPED (on every rank) when fn returned false on some rank.
BP_MPI_API bp_status bp_mpi_find_pairs2_cb(bp_mpi_context *ctx, const bp_box2 *boxes, const uint64_t *ids, size_t n,
                                           bp_mpi_pair_fn *fn, void *user);
/// The 3D form of bp_mpi_find_pairs2_cb.
BP_MPI_API bp_status bp_mpi_find_pairs3_cb(bp_mpi_context *ctx, const bp_box3 *boxes, const uint64_t *ids, size_t n,
                                           bp_mpi_pair_fn *fn, void *user);

/// The caller's decomposition: a grid of counts[0] x counts[1] (x counts[2] in 3D) regions,
/// their product the number of ranks, cut by `cuts`: counts[0] - 1 ascending x cuts, then
/// counts[1] - 1 y cuts, then (3D) counts[2] - 1 z cuts. The region of cell (i, j, k) belongs to
/// rank i + counts[0] * (j + counts[1] * k); a cell holds the points with cut[i-1] <= x < cut[i]
/// on each axis, and the outer cells reach to infinity. The grid stays until the next call of
/// bp_mpi_set_grid; counts NULL returns to the balanced default (recomputed at the next frame).
/// Errors (on every rank): BP_ERR_NULL, BP_ERR_INVALID_ARG (a product other than the rank count,
/// cuts not finite or not ascending, or grids that differ between ranks), BP_ERR_NOMEM.
BP_MPI_API bp_status bp_mpi_set_grid(bp_mpi_context *ctx, const int *counts, const float *cuts);

/// Local: the rank whose region holds `point` (dimension floats), under the current
/// decomposition; for callers that move their objects' ownership with the library's regions.
/// Errors: BP_ERR_NULL, BP_ERR_NONFINITE, BP_ERR_NO_BOXES (no decomposition yet: the balanced
/// default is made by the first find call).
BP_MPI_API bp_status bp_mpi_rank_of(const bp_mpi_context *ctx, const float *point, int *rank);

/// Local: the region of `rank` as lo[dimension], hi[dimension] (half-open, lo <= x < hi;
/// +-infinity at the outer faces). Errors: BP_ERR_NULL, BP_ERR_INVALID_ARG, BP_ERR_NO_BOXES.
BP_MPI_API bp_status bp_mpi_get_region(const bp_mpi_context *ctx, int rank, float *lo, float *hi);

/// What the last find call did, on this rank (the global fields are the same on every rank).
typedef struct bp_mpi_stats {
    size_t objects;            ///< boxes this rank passed
    size_t kept;               ///< of those, boxes that stayed here (they overlap this region)
    size_t ghosts_sent;        ///< box copies sent to other ranks
    size_t ghosts_received;    ///< box copies received (the boxes here: kept + ghosts_received)
    uint64_t pairs_found;      ///< pairs the core found among the boxes here
    uint64_t pairs_forwarded;  ///< pairs found here and sent to the rank that reports them
    uint64_t pairs;            ///< pairs reported on this rank
    uint64_t bytes_sent;       ///< bytes this rank sent (ghosts, forwarded pairs, counts)
    uint64_t bytes_received;   ///< bytes this rank received
    double imbalance;          ///< global: max over ranks of boxes here / mean - 1
    bool rebalanced;           ///< global: this call made a new balanced decomposition
    uint32_t decompositions;   ///< decompositions made so far (balanced or set by the caller)
    double seconds_local;      ///< this rank's time outside MPI calls (sorting out, core, filter)
    double seconds_core;       ///< of which the core's pair finding
    double seconds_mpi;        ///< this rank's time in MPI calls (waiting included)
    size_t bytes;              ///< memory the context holds on this rank (core context included)
} bp_mpi_stats;

/// Local: the statistics of the last find call. BP_ERR_NULL on NULL.
BP_MPI_API bp_status bp_mpi_get_stats(const bp_mpi_context *ctx, bp_mpi_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
