// Workers for any internal component (the context's methods, the persistent world): a fork-join
// runner of numbered tasks, on threads of the pool's own or on an engine's scheduler through the
// public task hooks. Knows nothing of contexts, sinks or methods. Never installed.
#ifndef BP_POOL_H
#define BP_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"

typedef struct bp_pool bp_pool;

/// One task of a job: task numbers run 0 .. tasks - 1, in any order and concurrently; `worker`
/// (below bp_pool_workers) is unique among the tasks running at one moment, so it can index
/// per-worker scratch. Errors are the job's business (its `user` struct records them).
typedef void bp_pool_fn(void *user, uint32_t task, uint32_t worker);

/// Creates a pool of `workers` (2 .. BP_MAX_WORKERS, the calling thread included). With both
/// hooks, tasks go to them and no thread is started; else workers - 1 threads are started now
/// and sleep until a job comes. Memory through `al`. BP_ERR_NOMEM when memory or a thread
/// cannot be had (nothing is left behind).
bp_status bp_pool_create(const bp_allocator *al, uint32_t workers, bp_enqueue_task_fn *enqueue,
                         bp_finish_task_fn *finish, void *task_user, bp_pool **out);

/// Stops and joins the threads, frees the pool. NULL is ignored.
void bp_pool_destroy(bp_pool *pool);

/// Workers of the pool, the calling thread included; 1 for NULL.
uint32_t bp_pool_workers(const bp_pool *pool);

/// Bytes the pool holds through its allocator (0 for NULL).
size_t bp_pool_bytes(const bp_pool *pool);

/// Runs tasks 0 .. tasks - 1 of fn and returns when all have run. The calling thread takes part
/// (as worker 0, with the pool's threads). NULL pool or one task: all of them on the calling
/// thread, in order, as worker 0. BP_ERR_INVALID_ARG when a task hook gave a worker number out of
/// range (that range was not run): the job's results are then incomplete; or for more than
/// BP_POOL_MAX_TASKS tasks (nothing run; the library asks for at most 8 per worker).
#define BP_POOL_MAX_TASKS 0xFFFFu
bp_status bp_pool_run(bp_pool *pool, uint32_t tasks, bp_pool_fn *fn, void *user);

/// A lock for what tasks share (allocation through the user's hooks, which must never be
/// called from two threads at once). No-ops for NULL.
void bp_pool_lock(bp_pool *pool);
void bp_pool_unlock(bp_pool *pool);

#endif
