// The algorithm interface: every broad-phase method is one const table of these slots, in its
// own file. A method's state embeds `bp_algorithm` as its first member; slots take the base
// pointer and downcast inside (no function-pointer casts).
#ifndef BP_METHOD_H
#define BP_METHOD_H

#include "broadphase.h"
#include "core.h"
#include "query.h"
#include "sink.h"

typedef struct bp_algorithm_class bp_algorithm_class;

/// Base of every method's state (the public enum is `bp_method`; the running thing is an
/// algorithm).
typedef struct bp_algorithm {
    const bp_algorithm_class *cls;
    bp_context *ctx;  // for allocation (bp_alloc, BP_RESERVE) and the definition
} bp_algorithm;

struct bp_algorithm_class {
    const char *name;
    /// Reads the frame's sums (size_sum, center_sum, center_sq): the load computes them only
    /// when true, or under AUTO.
    bool frame_sums;
    /// The size of the method's state: the context allocates it zeroed through bp_alloc the
    /// first time the method runs, sets the base fields, then calls `init` (NULL: zero is the
    /// state's start). `destroy` frees what the state owns, then the state.
    size_t size;
    void (*init)(bp_algorithm *m);
    /// Frees the state and everything it owns.
    void (*destroy)(bp_algorithm *m);
    /// Finds every overlapping pair of the frame and pushes it to the sink (any order, either
    /// orientation: the sink canonicalises). Adds its candidate tests to stats->checks.
    /// Allocation failures return BP_ERR_NOMEM; the method must stay destroyable and must be
    /// usable again after reset().
    bp_status (*find_pairs)(bp_algorithm *m, const bp_frame *f, bp_sink *sink, uint64_t *checks);
    /// Drops temporal state (after an error, or when the other set of boxes came from elsewhere).
    void (*reset)(bp_algorithm *m);
    /// A query's traversal of the structure of the last successful find_pairs (src/query.h: the
    /// contract every query kind is written on). NULL: the context visits every box.
    bp_status (*visit)(bp_algorithm *m, const bp_frame *f, bp_visitor *v);
    /// Draws the structure of the last call. NULL: nothing to draw.
    void (*debug_draw)(const bp_algorithm *m, const bp_frame *f, const bp_debug_draw *draw);
    /// Checks internal invariants of the last call. NULL: nothing to check.
    bp_status (*validate)(const bp_algorithm *m, const bp_frame *f);
    /// AUTO's question (src/auto.c): would this method do far worse than usual on frame f? With
    /// `m` (its state, which ran the last call) from what it saw; with m NULL from a sample of
    /// f. NULL: never asked (AUTO asks only the grid).
    bool (*advise_against)(const bp_algorithm *m, const bp_frame *f, const bp_context_def *def);
    /// Writes the counters of its speed features into the bp_stats fields they belong to
    /// (sweep_axis, coherent, moved, full_sorts, resorts). NULL: none (the defaults stand).
    void (*stats)(const bp_algorithm *m, bp_stats *out);
};

/// The class of a method (NULL for AUTO and out of range): the registry, src/method.c.
const bp_algorithm_class *bp_method_class(bp_method method);

/// The speed features' fields of bp_stats for the method state that ran the last call (NULL:
/// none did): their defaults, then its class's stats slot. Called by bp_get_stats.
static inline void bp_algorithm_stats(const bp_algorithm *m, bp_stats *out) {
    out->sweep_axis = -1;
    out->coherent = false;
    out->moved = 0;
    out->full_sorts = 0;
    out->resorts = 0;
    if (m && m->cls->stats) m->cls->stats(m, out);
}

extern const bp_algorithm_class bp_brute_class;
extern const bp_algorithm_class bp_sweep_class;
extern const bp_algorithm_class bp_grid_class;
extern const bp_algorithm_class bp_quadtree_class;
extern const bp_algorithm_class bp_rdc_class;

#endif
