// Workers: a fork-join runner of numbered tasks (src/pool.h).
//
// Own threads: a job is published under a mutex with a new generation; the threads and the
// calling thread claim task numbers from one atomic word holding the generation and the range of
// tasks not yet claimed, so a thread that wakes late, after its job ended, can never claim a task
// of the next job (its generation no longer matches), and the caller waits only for the tasks to
// finish, not for every thread to wake. Worker 1 claims from the range's end, the others from its
// front: the passes of a call cut the boxes into the same shares (task t, share t), so the caller
// tends to run the first shares of every pass and worker 1 the last ones, and a pass mostly reads
// what the same core wrote in the pass before (with 2 workers); either takes the other's tasks
// once its own end is done, so a thread that is held up does not hold the job. Between jobs a
// thread spins for a few microseconds (the next job of the same call usually comes at once) and
// then sleeps on a condition variable: idle threads cost nothing while the caller simulates.
//
// Task hooks: a job is one enqueue of the whole task range and one finish; the items run are
// counted, so a scheduler that skips or repeats items, or gives a worker number out of range, is
// reported instead of corrupting per-worker scratch.
#define _POSIX_C_SOURCE 200809L  // pthread_sigmask, clock_gettime

#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define BP_POOL_PAUSE() _mm_pause()
#else
#define BP_POOL_PAUSE() ((void)0)
#endif

// How long an idle thread (or the caller waiting for the last task) spins before sleeping: the
// passes of one call follow each other within microseconds, and a wake-up through the kernel
// costs tens of them. Short enough that threads are asleep soon after a call returns.
#define BP_POOL_SPIN_NS 50000
// Spinning yields the core every this many pauses: when there are more runnable threads than
// cores, the thread the spinner waits for (one holding a task) may be waiting for this core.
#define BP_POOL_YIELD_EVERY 256

typedef struct bp_pool_thread {
    pthread_t thread;
    bp_pool *pool;
    uint32_t id;  // worker number (1 .. workers - 1; the caller is 0)
} bp_pool_thread;

struct bp_pool {
    bp_allocator al;
    size_t bytes;
    uint32_t workers;
    bp_enqueue_task_fn *enqueue;
    bp_finish_task_fn *finish;
    void *task_user;
    pthread_mutex_t shared;  // bp_pool_lock
    // Own threads (none with hooks).
    uint32_t nthreads;
    bp_pool_thread *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake;      // a new job, or stop
    pthread_cond_t finished;  // the last task of a job ended
    // The current job, written under mu before its generation is published.
    bp_pool_fn *fn;
    void *user;
    uint32_t tasks;
    uint32_t gen;
    bool stop;
    bool waiting;             // the caller sleeps on `finished`
    _Alignas(64) _Atomic uint32_t gen_now;  // gen, read without the lock by spinning threads
    _Alignas(64) _Atomic uint64_t claim;    // (gen << 32) | (end << 16) | front: tasks [front, end) unclaimed
    _Alignas(64) _Atomic uint32_t done;     // tasks of the current job that have run
};

static uint64_t bp_pool_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// Claims and runs tasks of job `gen` until none is left (or the job is over).
static void bp_pool_work(bp_pool *p, uint32_t gen, bp_pool_fn *fn, void *user, uint32_t tasks, uint32_t worker) {
    const bool from_end = worker == 1;
    for (;;) {
        uint64_t c = atomic_load(&p->claim);
        uint32_t t, rest;
        do {
            if ((uint32_t)(c >> 32) != gen) return;
            const uint32_t front = (uint32_t)c & 0xFFFFu, end = (uint32_t)(c >> 16) & 0xFFFFu;
            if (front >= end) return;
            t = from_end ? end - 1 : front;
            rest = from_end ? front | t << 16 : (front + 1) | end << 16;
        } while (!atomic_compare_exchange_weak(&p->claim, &c, (uint64_t)gen << 32 | rest));
        fn(user, t, worker);
        if (atomic_fetch_add(&p->done, 1) + 1 == tasks) {
            pthread_mutex_lock(&p->mu);
            if (p->waiting) pthread_cond_signal(&p->finished);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *bp_pool_main(void *arg) {
    bp_pool_thread *self = arg;
    bp_pool *p = self->pool;
    uint32_t seen = 0;
    for (;;) {
        if (atomic_load(&p->gen_now) == seen) {
            const uint64_t t0 = bp_pool_now_ns();
            for (unsigned k = 1; atomic_load(&p->gen_now) == seen; ++k) {
                BP_POOL_PAUSE();
                if (k % BP_POOL_YIELD_EVERY == 0) sched_yield();
                if ((k & 63u) == 0 && bp_pool_now_ns() - t0 > BP_POOL_SPIN_NS) break;
            }
        }
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->stop) pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->gen;
        bp_pool_fn *fn = p->fn;
        void *user = p->user;
        const uint32_t tasks = p->tasks;
        pthread_mutex_unlock(&p->mu);
        bp_pool_work(p, seen, fn, user, tasks, self->id);
    }
}

// Stops and joins the first `started` threads.
static void bp_pool_stop(bp_pool *p, uint32_t started) {
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t k = 0; k < started; ++k) pthread_join(p->threads[k].thread, NULL);
}

bp_status bp_pool_create(const bp_allocator *al, uint32_t workers, bp_enqueue_task_fn *enqueue,
                         bp_finish_task_fn *finish, void *task_user, bp_pool **out) {
    *out = NULL;
    if (workers < 2 || workers > BP_MAX_WORKERS || !enqueue != !finish) return BP_ERR_INVALID_ARG;
    const uint32_t nthreads = enqueue ? 0 : workers - 1;
    const size_t bytes = sizeof(bp_pool) + (size_t)nthreads * sizeof(bp_pool_thread);
    bp_pool *p = al->alloc(bytes, 64, al->user);
    if (!p) return BP_ERR_NOMEM;
    memset(p, 0, sizeof *p);
    p->al = *al;
    p->bytes = bytes;
    p->workers = workers;
    p->enqueue = enqueue;
    p->finish = finish;
    p->task_user = task_user;
    p->threads = (bp_pool_thread *)(void *)(p + 1);
    atomic_init(&p->gen_now, 0);
    atomic_init(&p->claim, 0);
    atomic_init(&p->done, 0);
    bool ok = pthread_mutex_init(&p->shared, NULL) == 0;
    if (ok && pthread_mutex_init(&p->mu, NULL) != 0) {
        pthread_mutex_destroy(&p->shared);
        ok = false;
    }
    if (ok && pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_mutex_destroy(&p->shared);
        ok = false;
    }
    if (ok && pthread_cond_init(&p->finished, NULL) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        pthread_mutex_destroy(&p->shared);
        ok = false;
    }
    if (!ok) {
        al->free(p, bytes, al->user);
        return BP_ERR_NOMEM;
    }
    // The threads take no signals: those are the application's, for its own threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    uint32_t started = 0;
    for (; started < nthreads; ++started) {
        bp_pool_thread *t = &p->threads[started];
        t->pool = p;
        t->id = started + 1;
        if (pthread_create(&t->thread, NULL, bp_pool_main, t) != 0) break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    p->nthreads = started;
    if (started < nthreads) {
        bp_pool_destroy(p);
        return BP_ERR_NOMEM;
    }
    *out = p;
    return BP_OK;
}

void bp_pool_destroy(bp_pool *p) {
    if (!p) return;
    bp_pool_stop(p, p->nthreads);
    pthread_cond_destroy(&p->finished);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->shared);
    bp_allocator al = p->al;
    al.free(p, p->bytes, al.user);
}

uint32_t bp_pool_workers(const bp_pool *p) { return p ? p->workers : 1; }

size_t bp_pool_bytes(const bp_pool *p) { return p ? p->bytes : 0; }

// A job handed to the task hooks.
typedef struct bp_hook_job {
    bp_pool_fn *fn;
    void *user;
    uint32_t workers;
    _Atomic uint32_t ran;  // items run
    _Atomic int bad;       // a worker number out of range
} bp_hook_job;

static void bp_hook_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context) {
    bp_hook_job *j = task_context;
    if (worker >= j->workers || begin > end) {
        atomic_store(&j->bad, 1);
        return;
    }
    for (uint32_t t = begin; t < end; ++t) j->fn(j->user, t, worker);
    atomic_fetch_add(&j->ran, end - begin);
}

bp_status bp_pool_run(bp_pool *p, uint32_t tasks, bp_pool_fn *fn, void *user) {
    if (tasks == 0) return BP_OK;
    if (tasks > BP_POOL_MAX_TASKS) return BP_ERR_INVALID_ARG;
    if (!p || tasks == 1) {
        for (uint32_t t = 0; t < tasks; ++t) fn(user, t, 0);
        return BP_OK;
    }
    if (p->enqueue) {
        bp_hook_job j;
        j.fn = fn;
        j.user = user;
        j.workers = p->workers;
        atomic_init(&j.ran, 0);
        atomic_init(&j.bad, 0);
        void *handle = p->enqueue(bp_hook_task, tasks, 1, &j, p->task_user);
        if (handle) p->finish(handle, p->task_user);
        return atomic_load(&j.bad) || atomic_load(&j.ran) != tasks ? BP_ERR_INVALID_ARG : BP_OK;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->user = user;
    p->tasks = tasks;
    const uint32_t gen = ++p->gen;
    atomic_store(&p->done, 0);
    atomic_store(&p->claim, (uint64_t)gen << 32 | (uint64_t)tasks << 16);
    atomic_store(&p->gen_now, gen);
    pthread_mutex_unlock(&p->mu);
    // After the unlock: a thread woken while the lock is still held would only sleep again on
    // it, and be woken a second time (each a wake-up of an idle core, tens of microseconds).
    pthread_cond_broadcast(&p->wake);
    bp_pool_work(p, gen, fn, user, tasks, 0);
    if (atomic_load(&p->done) != tasks) {
        const uint64_t t0 = bp_pool_now_ns();
        for (unsigned k = 1; atomic_load(&p->done) != tasks; ++k) {
            BP_POOL_PAUSE();
            if (k % BP_POOL_YIELD_EVERY == 0) sched_yield();
            if ((k & 63u) == 0 && bp_pool_now_ns() - t0 > BP_POOL_SPIN_NS) break;
        }
        pthread_mutex_lock(&p->mu);
        p->waiting = true;
        while (atomic_load(&p->done) != tasks) pthread_cond_wait(&p->finished, &p->mu);
        p->waiting = false;
        pthread_mutex_unlock(&p->mu);
    }
    return BP_OK;
}

void bp_pool_lock(bp_pool *p) {
    if (p) pthread_mutex_lock(&p->shared);
}

void bp_pool_unlock(bp_pool *p) {
    if (p) pthread_mutex_unlock(&p->shared);
}
