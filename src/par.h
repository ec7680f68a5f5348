// Parallel passes of one call, for the context and its methods (docs/architecture.md,
// "Threads"): how many tasks a pass gets, running them on the context's pool (src/pool.h), pair
// passes whose per-worker output is merged in task order, and the radix sorts. Every helper gives
// the result of its serial form exactly, whatever the workers: a pass is cut into tasks that each
// produce what the serial loop produces for their range, and outputs are joined in range order.
#ifndef BP_PAR_H
#define BP_PAR_H

#include "core.h"
#include "pool.h"
#include "sink.h"

/// Items a task of each kind of pass gets at least (unless def.parallel_min asks for less): a
/// task must pay for its dispatch (about a microsecond) and, for the radix sort, for its own
/// histograms (3 x 2048 counters).
#define BP_PAR_GRAIN_PAIRS 1024   // rows of a pair pass
#define BP_PAR_GRAIN_MAP 8192     // boxes of a key or gather pass
#define BP_PAR_GRAIN_SORT 32768   // keys of a radix sort

/// How many tasks to cut `items` into, each of at least `grain` items: 1 (run it serially, on the
/// calling thread, exactly as without workers) when the call is serial or the pass too small.
uint32_t bp_par_tasks(const bp_context *ctx, size_t items, size_t grain);

/// Task t's share [*begin, *end) of `items` cut into `tasks` (contiguous, in order).
static inline void bp_par_range(size_t items, uint32_t tasks, uint32_t t, size_t *begin, size_t *end) {
    *begin = (size_t)((uint64_t)items * t / tasks);
    *end = (size_t)((uint64_t)items * (t + 1u) / tasks);
}

/// Runs fn for tasks 0 .. tasks - 1 on the context's workers (serially for one task). Returns
/// BP_OK, or BP_ERR_INVALID_ARG when the task hooks misbehaved (see bp_pool_run).
bp_status bp_par_run(bp_context *ctx, uint32_t tasks, bp_pool_fn *fn, void *user);

/// A task of bp_par_for / bp_par_split: items [begin, end) of the pass, task `task` of them (for
/// per-task outputs).
typedef void bp_par_range_fn(void *user, uint32_t task, size_t begin, size_t end);

/// Runs fn over [0, items) cut into `tasks` (as bp_par_range: contiguous, in order), through
/// bp_par_run: one indirect call per task, never per item. Returns bp_par_run's status.
bp_status bp_par_split(bp_context *ctx, uint32_t tasks, size_t items, bp_par_range_fn *fn, void *user);

/// bp_par_split with bp_par_tasks(ctx, items, grain) tasks.
static inline bp_status bp_par_for(bp_context *ctx, size_t items, size_t grain, bp_par_range_fn *fn, void *user) {
    return bp_par_split(ctx, bp_par_tasks(ctx, items, grain), items, fn, user);
}

/// Workers of the context's pool (1 without).
uint32_t bp_par_workers(const bp_context *ctx);

/// The context's pool (NULL without workers), for a component that runs jobs of its own on the
/// context's threads between its calls (the persistent world's probes).
bp_pool *bp_par_pool(const bp_context *ctx);

/// Scratch of at least `bytes` (64-byte aligned) for the per-task values of a pass (sync points,
/// counts), kept by the context: valid until the next bp_par_scratch call. NULL and
/// *st = BP_ERR_NOMEM when it cannot grow.
void *bp_par_scratch(bp_context *ctx, size_t bytes, bp_status *st);

/// memcpy on the workers (serial for small copies). Errors: the pool's.
bp_status bp_par_copy(bp_context *ctx, void *dst, const void *src, size_t bytes);

/// A pair pass over items [begin, end) of `items` (rows of a sweep, boxes of a grid...): pushes
/// to `sink` exactly what the serial loop over those items pushes, adds its candidate tests to
/// *checks. `worker` (0 when serial) may index per-worker scratch, reserved before the pass; it
/// may allocate only through the sink (or that scratch's growth, through bp_alloc).
typedef bp_status bp_par_pair_fn(void *user, size_t begin, size_t end, uint32_t worker, bp_sink *sink,
                                 uint64_t *checks);

/// Runs a pair pass over [0, items): serially into `sink` when bp_par_tasks gives one task or the
/// call keeps its pair pass on one thread (a large output: context.c, BP_PAR_PAIRS_PER_BOX), else
/// in tasks whose pairs go to blocks kept by the context and then to `sink` in task order, so the
/// sink receives the same pairs in the same order either way. In callback mode the tasks run in
/// waves (a few per worker), each delivered before the next starts, so that memory stays bounded.
/// Errors: a task's (BP_ERR_NOMEM; the other tasks stop early), the sink's (BP_ERR_STOPPED,
/// BP_ERR_NOMEM), the pool's.
bp_status bp_par_pairs(bp_context *ctx, bp_sink *sink, size_t items, size_t grain, bp_par_pair_fn *fn, void *user,
                       uint64_t *checks);

/// Frees what the parallel passes keep (pair blocks, histograms, scratch), at the context's destroy.
void bp_par_release(bp_context *ctx);

/// bp_radix_sort32 / bp_radix_sort64 on the workers: the same result (a stable sort), with
/// histograms per task. Serial when the call is. BP_ERR_NOMEM (histograms) or the pool's error.
bp_status bp_par_radix32(bp_context *ctx, uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals,
                         size_t n, unsigned key_bits);
bp_status bp_par_radix64(bp_context *ctx, uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals,
                         size_t n, unsigned key_bits);

/// The insertion sort of (keys, vals) that gives up past `budget` element moves, on the workers:
/// each task sorts its share, then neighbouring shares are merged, counting the moves across
/// them. *sorted is true, and (keys, vals) sorted stably, exactly when the serial insertion sort
/// would have finished within the budget (its moves are the inversions of the input, which this
/// counts exactly); otherwise (keys, vals) are left a permutation of the input in which equal keys
/// keep their order, so that a stable sort (the radix sort) finishes it with the same result.
/// tmp_keys/tmp_vals: scratch of n. Serial callers keep their own loop (tasks < 2: *sorted false
/// and nothing done is not a valid answer, so call it only when bp_par_tasks gives 2 or more).
bp_status bp_par_insertion32(bp_context *ctx, uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals,
                             size_t n, size_t budget, bool *sorted);

#endif
