// Parallel passes of one call (src/par.h): task counts, the context's pool, pair passes merged
// in task order, radix sorts with per-task histograms.
#include "par.h"

#include <stdatomic.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "radix_sort.h"
#include "sort.h"

// The context's workers' state, through its core (src/core.h): par.c never sees the context.
static inline bp_par_state *par_of(bp_context *ctx) { return &bp_core_of(ctx)->par; }
static inline const bp_par_state *par_of_c(const bp_context *ctx) { return &bp_core_of_const(ctx)->par; }

// Tasks per worker, at most: enough that a task that runs long (a dense region of a pair pass)
// is balanced by the others, few enough that their dispatch stays negligible.
#define BP_PAR_TASKS_PER_WORKER 8
// Callback mode runs a pair pass in waves of this many tasks per worker: the pairs of one wave
// are all that is held before they go to the callback.
#define BP_PAR_WAVE_PER_WORKER 2
// Merging at least this many pairs, the copies into the pair buffer use non-temporal stores (as
// the serial path's streamed mode, src/sink.c).
#define BP_PAR_STREAM_PAIRS ((size_t)1 << 20)
// Merging fewer pairs than this (256 KiB), the calling thread copies them alone: a fork-join
// costs about as much as copying them.
#define BP_PAR_MERGE_MIN ((size_t)1 << 15)

uint32_t bp_par_workers(const bp_context *ctx) { return bp_pool_workers(par_of_c(ctx)->pool); }

bp_pool *bp_par_pool(const bp_context *ctx) { return par_of_c(ctx)->pool; }

uint32_t bp_par_tasks(const bp_context *ctx, size_t items, size_t grain) {
    if (!par_of_c(ctx)->par) return 1;
    if (par_of_c(ctx)->par_grain && par_of_c(ctx)->par_grain < grain) grain = par_of_c(ctx)->par_grain;
    if (grain == 0) grain = 1;
    const size_t most = (size_t)bp_pool_workers(par_of_c(ctx)->pool) * BP_PAR_TASKS_PER_WORKER;
    size_t tasks = items / grain;
    if (tasks > most) tasks = most;
    return tasks < 2 ? 1 : (uint32_t)tasks;
}

void *bp_par_scratch(bp_context *ctx, size_t bytes, bp_status *st) {
    const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    par_of(ctx)->scratch = bp_grow(ctx, par_of(ctx)->scratch, &par_of(ctx)->scratch_cap, words, sizeof *par_of(ctx)->scratch, false, st);
    return *st == BP_OK ? par_of(ctx)->scratch : NULL;
}

bp_status bp_par_run(bp_context *ctx, uint32_t tasks, bp_pool_fn *fn, void *user) {
    return bp_pool_run(par_of(ctx)->par ? par_of(ctx)->pool : NULL, tasks, fn, user);
}

typedef struct par_split_job {
    bp_par_range_fn *fn;
    void *user;
    size_t items;
    uint32_t tasks;
} par_split_job;

static void par_split_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const par_split_job *j = user;
    size_t b, e;
    bp_par_range(j->items, j->tasks, t, &b, &e);
    j->fn(j->user, t, b, e);
}

bp_status bp_par_split(bp_context *ctx, uint32_t tasks, size_t items, bp_par_range_fn *fn, void *user) {
    par_split_job j = {fn, user, items, tasks};
    return bp_par_run(ctx, tasks, par_split_task, &j);
}

typedef struct par_copy_job {
    char *dst;
    const char *src;
} par_copy_job;

static void par_copy_range(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const par_copy_job *j = user;
    memcpy(j->dst + b, j->src + b, e - b);
}

bp_status bp_par_copy(bp_context *ctx, void *dst, const void *src, size_t bytes) {
    if (bytes == 0) return BP_OK;
    par_copy_job j = {dst, src};
    return bp_par_for(ctx, bytes, 16 * BP_PAR_GRAIN_MAP, par_copy_range, &j);
}

// ---------------------------------------------------------------------------------------------
// Pair passes

// A task's pairs go to a chain of fixed blocks taken from the context's pool: a warm pass (the
// pool as large as the last passes needed) allocates nothing whatever the schedule, and a pass
// that finds more pairs than any before adds blocks without moving or copying the ones it has
// (the earlier design sized a slot per task from its last count, and huge outputs regrew and
// re-touched fresh pages for several frames: issue #14's seed at 100,000, 82 million pairs).
// 64 KiB of pairs: a task's last, part-filled block wastes little, and a block is taken (one
// atomic add) every 8,192 pairs.
#define BP_PAR_BLOCK_PAIRS 8192

struct bp_par_block {
    bp_par_block *next;  // the next block of the same task
    bp_par_block *all;   // the context's list of every block (freed with it)
    size_t count;        // pairs in it
    size_t at;           // where they go in the pass's output
    bool extra;          // allocated by a task this pass; not yet in the pool
    char pad[64 - 2 * sizeof(bp_par_block *) - 2 * sizeof(size_t) - sizeof(bool)];
};
_Static_assert(sizeof(bp_par_block) == 64, "a block's pairs start on a line");

static inline bp_pair *par_block_pairs(bp_par_block *b) { return (bp_pair *)(void *)(b + 1); }

/// Where one task of a parallel pair pass left its pairs (in task order: the output order).
struct bp_par_seg {
    bp_par_block *first;  // its chain of blocks (NULL: it found none or did not run)
    size_t count;
    uint64_t checks;
};

void bp_par_release(bp_context *ctx) {
    for (bp_par_block *b = par_of(ctx)->blocks_all, *next; b; b = next) {
        next = b->all;
        bp_free(ctx, b, sizeof *b + BP_PAR_BLOCK_PAIRS * sizeof(bp_pair));
    }
    par_of(ctx)->blocks_all = NULL;
    par_of(ctx)->nblocks = 0;
    BP_RELEASE(ctx, par_of(ctx)->blocks, par_of(ctx)->blocks_cap);
    BP_RELEASE(ctx, par_of(ctx)->order, par_of(ctx)->order_cap);
    BP_RELEASE(ctx, par_of(ctx)->segs, par_of(ctx)->segs_cap);
    BP_RELEASE(ctx, par_of(ctx)->hist, par_of(ctx)->hist_cap);
    BP_RELEASE(ctx, par_of(ctx)->scratch, par_of(ctx)->scratch_cap);
}

typedef struct par_pair_job {
    bp_context *ctx;
    bp_par_pair_fn *fn;
    void *user;
    size_t items;
    uint32_t tasks;  // of the whole pass
    uint32_t first;  // first task of this wave
    uint32_t split;
    _Atomic size_t next_block;  // the pool's next free block (past nblocks: tasks allocate)
    _Atomic int status;         // the first error of a task (then the others stop early)
} par_pair_job;

// A free block from the pool, or a new one (marked extra) when the pool is spent.
static bp_par_block *par_block_take(par_pair_job *j) {
    bp_context *ctx = j->ctx;
    const size_t k = atomic_fetch_add_explicit(&j->next_block, 1, memory_order_relaxed);
    bp_par_block *b;
    if (k < par_of(ctx)->nblocks) {
        b = par_of(ctx)->blocks[k];
    } else {
        b = bp_alloc(ctx, sizeof *b + BP_PAR_BLOCK_PAIRS * sizeof(bp_pair));
        if (!b) return NULL;
        b->extra = true;
    }
    b->next = NULL;
    b->count = 0;
    return b;
}

// A task's chain of blocks: each full one is closed, and its sink goes on in a new one.
typedef struct par_chain {
    par_pair_job *j;
    bp_par_block *cur;
    size_t done;  // pairs in the task's closed blocks
} par_chain;

static bp_status par_next_block(void *user, size_t filled, bp_pair **buf, size_t *cap) {
    par_chain *ch = user;
    bp_par_block *b = par_block_take(ch->j);
    if (!b) return BP_ERR_NOMEM;
    ch->cur->count = filled;
    ch->done += filled;
    ch->cur->next = b;
    ch->cur = b;
    *buf = par_block_pairs(b);
    *cap = BP_PAR_BLOCK_PAIRS;
    return BP_OK;
}

static void par_pair_task(void *user, uint32_t wt, uint32_t worker) {
    par_pair_job *j = user;
    const uint32_t t = j->first + wt;
    bp_par_seg *seg = &par_of(j->ctx)->segs[t];
    seg->first = NULL;
    seg->count = 0;
    seg->checks = 0;
    if (atomic_load_explicit(&j->status, memory_order_relaxed) != BP_OK) return;
    par_chain ch = {j, NULL, 0};
    ch.cur = seg->first = par_block_take(j);
    bp_status st = BP_ERR_NOMEM;
    if (ch.cur) {
        bp_sink sink;
        bp_sink_open_chain(&sink, j->split, par_block_pairs(ch.cur), BP_PAR_BLOCK_PAIRS, par_next_block, &ch);
        size_t b, e;
        bp_par_range(j->items, j->tasks, t, &b, &e);
        uint64_t checks = 0;
        st = j->fn(j->user, b, e, worker, &sink, &checks);
        ch.cur->count = bp_sink_count(&sink);
        seg->count = ch.done + bp_sink_count(&sink);
        seg->checks = checks;
    }
    if (st != BP_OK) {
        int ok = BP_OK;
        atomic_compare_exchange_strong(&j->status, &ok, (int)st);
    }
}

// After a wave (serially): the blocks its tasks allocated join the context's list (so they are
// freed with it whatever happens next) and, where the pool's array can grow, the pool.
static void par_adopt(bp_context *ctx, uint32_t first, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k)
        for (bp_par_block *b = par_of(ctx)->segs[first + k].first; b; b = b->next) {
            if (!b->extra) continue;
            b->extra = false;
            b->all = par_of(ctx)->blocks_all;
            par_of(ctx)->blocks_all = b;
            bp_status st = BP_OK;
            par_of(ctx)->blocks = bp_grow(ctx, par_of(ctx)->blocks, &par_of(ctx)->blocks_cap, par_of(ctx)->nblocks + 1, sizeof *par_of(ctx)->blocks, true, &st);
            if (st == BP_OK) par_of(ctx)->blocks[par_of(ctx)->nblocks++] = b;  // else kept only for the free
        }
}

// Copies `count` pairs, with non-temporal stores where asked and the destination allows.
static void par_copy(bp_pair *dst, const bp_pair *src, size_t count, bool stream) {
#if defined(__SSE2__)
    if (stream && count >= 8) {
        if ((uintptr_t)dst & 8u) {  // pairs are 8 bytes: one plain store aligns the rest to 16
            *dst++ = *src++;
            --count;
        }
        if (((uintptr_t)dst & 15u) == 0) {
            __m128i *d = (__m128i *)(void *)dst;
            const __m128i *s = (const __m128i *)(const void *)src;
            for (size_t k = 0; k < count / 2; ++k) _mm_stream_si128(d + k, _mm_loadu_si128(s + k));
            if (count & 1) dst[count - 1] = src[count - 1];
            return;
        }
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, count * sizeof *dst);
}

// The merge copies blocks, not tasks: a task that found most of the pairs does not make one
// copy task the long one.
typedef struct par_merge_job {
    bp_pair *dst;  // the wave's output: each block's pairs go to dst + its `at`
    bp_par_block *const *order;
    bool stream;
} par_merge_job;

static void par_merge_range(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const par_merge_job *j = user;
    for (size_t k = b; k < e; ++k) {
        bp_par_block *blk = j->order[k];
        par_copy(j->dst + blk->at, par_block_pairs(blk), blk->count, j->stream);
    }
}

// Sends tasks [first, first + count) of a pass, in order, to the sink.
static bp_status par_deliver(bp_context *ctx, bp_sink *sink, uint32_t first, uint32_t count) {
    size_t total = 0, blocks = 0;
    for (uint32_t k = 0; k < count; ++k) {
        total += par_of(ctx)->segs[first + k].count;
        for (const bp_par_block *b = par_of(ctx)->segs[first + k].first; b; b = b->next) blocks += b->count != 0;
    }
    if (total == 0) return BP_OK;
    bp_status st = BP_OK;
    bp_pair *dst = bp_sink_claim(sink, total, &st);
    if (st != BP_OK) return st;
    if (!dst) {
        for (uint32_t k = 0; k < count && st == BP_OK; ++k)
            for (bp_par_block *b = par_of(ctx)->segs[first + k].first; b && st == BP_OK; b = b->next)
                st = bp_sink_append(sink, par_block_pairs(b), b->count);
        return st;
    }
    BP_RESERVE_DISCARD(ctx, par_of(ctx)->order, par_of(ctx)->order_cap, blocks);
    size_t at = 0, nb = 0;
    for (uint32_t k = 0; k < count; ++k)
        for (bp_par_block *b = par_of(ctx)->segs[first + k].first; b; b = b->next) {
            if (b->count == 0) continue;
            b->at = at;
            at += b->count;
            par_of(ctx)->order[nb++] = b;
        }
    // A few pages of pairs are copied sooner than the workers are woken for them.
    par_merge_job mj = {dst, par_of(ctx)->order, total >= BP_PAR_STREAM_PAIRS};
    if (total < BP_PAR_MERGE_MIN) par_merge_range(&mj, 0, 0, nb);
    else st = bp_par_for(ctx, nb, 1, par_merge_range, &mj);
#if defined(__SSE2__)
    if (mj.stream) _mm_sfence();  // the streamed stores before anything the caller does next
#endif
    if (st == BP_OK) bp_sink_commit(sink, total);
    return st;
}

bp_status bp_par_pairs(bp_context *ctx, bp_sink *sink, size_t items, size_t grain, bp_par_pair_fn *fn, void *user,
                       uint64_t *checks) {
    const uint32_t tasks = bp_par_tasks(ctx, items, grain);
    if (tasks < 2 || !par_of(ctx)->par_pairs) return fn(user, 0, items, 0, sink, checks);
    const uint32_t workers = bp_pool_workers(par_of(ctx)->pool);
    BP_RESERVE_DISCARD(ctx, par_of(ctx)->segs, par_of(ctx)->segs_cap, tasks);
    par_pair_job j;
    j.ctx = ctx;
    j.fn = fn;
    j.user = user;
    j.items = items;
    j.tasks = tasks;
    j.split = bp_sink_split(sink);
    atomic_init(&j.status, BP_OK);
    // Callback mode: waves; buffer mode: one.
    const uint32_t wave = bp_sink_buffered(sink) ? tasks : workers * BP_PAR_WAVE_PER_WORKER;
    bp_status st = BP_OK;
    for (uint32_t first = 0; first < tasks && st == BP_OK; first += wave) {
        const uint32_t count = tasks - first < wave ? tasks - first : wave;
        atomic_init(&j.next_block, 0);  // every block is free again: the last wave was delivered
        j.first = first;
        for (uint32_t k = 0; k < count; ++k) par_of(ctx)->segs[first + k].first = NULL;  // if a task never runs
        st = bp_par_run(ctx, count, par_pair_task, &j);
        par_adopt(ctx, first, count);
        if (st == BP_OK) st = (bp_status)atomic_load(&j.status);
        for (uint32_t k = 0; k < count; ++k) *checks += par_of(ctx)->segs[first + k].checks;
        if (st == BP_OK) st = par_deliver(ctx, sink, first, count);
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// Radix sorts

static bp_status par_radix(bp_context *ctx, bool wide, void *keys, uint32_t *vals, void *tmp_keys, uint32_t *tmp_vals,
                           size_t n, unsigned key_bits) {
    uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_SORT);
    // Even when parallel_min asks for tiny tasks, a task's share should outweigh the 2048-bucket
    // prefix sums it adds per pass.
    if (tasks > n / 512) tasks = (uint32_t)(n / 512);
    if (tasks < 2) {
        if (wide) bp_radix_sort64(keys, vals, tmp_keys, tmp_vals, n, key_bits);
        else bp_radix_sort32(keys, vals, tmp_keys, tmp_vals, n, key_bits);
        return BP_OK;
    }
    BP_RESERVE_DISCARD(ctx, par_of(ctx)->hist, par_of(ctx)->hist_cap, bp_radix_hist_size(tasks, key_bits, wide));
    if (wide) return bp_radix_sort64_pool(par_of(ctx)->pool, tasks, par_of(ctx)->hist, keys, vals, tmp_keys, tmp_vals, n, key_bits);
    return bp_radix_sort32_pool(par_of(ctx)->pool, tasks, par_of(ctx)->hist, keys, vals, tmp_keys, tmp_vals, n, key_bits);
}

bp_status bp_par_radix32(bp_context *ctx, uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals,
                         size_t n, unsigned key_bits) {
    return par_radix(ctx, false, keys, vals, tmp_keys, tmp_vals, n, key_bits);
}

bp_status bp_par_radix64(bp_context *ctx, uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals,
                         size_t n, unsigned key_bits) {
    return par_radix(ctx, true, keys, vals, tmp_keys, tmp_vals, n, key_bits);
}

// ---------------------------------------------------------------------------------------------
// Insertion sort with a budget

typedef struct par_ins_job {
    uint32_t *keys, *vals, *tk, *tv;
    size_t n, budget;
    uint32_t tasks, width;  // merging: groups of `width` shares with the next `width`
    uint64_t *moves;        // per task
} par_ins_job;

static void par_ins_range(void *user, uint32_t t, size_t b, size_t e) {
    const par_ins_job *j = user;
    // Stops once the whole sort is over budget already.
    j->moves[t] = bp_insertion_sort32(j->keys + b, j->vals + b, e - b, j->budget);
}

// Merges shares [g, g + width) with [g + width, g + 2 width) (both sorted), counting the
// inversions between them: only the tail of the first that is greater than the second's head
// and the head of the second that is less than the first's tail move, each of them an inversion
// at least, so the work is bounded by the moves counted.
static void par_merge_runs_task(void *user, uint32_t m, uint32_t worker) {
    (void)worker;
    const par_ins_job *j = user;
    const uint32_t g = m * 2 * j->width;
    size_t a0, a1, b1, dummy;
    bp_par_range(j->n, j->tasks, g, &a0, &dummy);
    bp_par_range(j->n, j->tasks, g + j->width, &a1, &dummy);
    const uint32_t last = g + 2 * j->width < j->tasks ? g + 2 * j->width : j->tasks;
    bp_par_range(j->n, j->tasks, last - 1, &dummy, &b1);
    uint32_t *BP_RESTRICT keys = j->keys, *BP_RESTRICT vals = j->vals;
    uint64_t moves = 0;
    if (a0 < a1 && a1 < b1 && keys[a1 - 1] > keys[a1]) {
        // x: first of A greater than B's head; y: first of B not less than A's tail.
        const size_t x = bp_upper_bound32(keys, a0, a1, keys[a1]);
        const size_t y = bp_lower_bound32(keys, a1, b1, keys[a1 - 1]);
        if ((a1 - x) + (y - a1) <= 2 * j->budget + 2) {
            uint32_t *BP_RESTRICT tk = j->tk, *BP_RESTRICT tv = j->tv;
            memcpy(tk + x, keys + x, (a1 - x) * sizeof *tk);
            memcpy(tv + x, vals + x, (a1 - x) * sizeof *tv);
            size_t i = x, b = a1, w = x;
            while (i < a1 && b < y) {
                if (keys[b] < tk[i]) {  // ties: the first share's key first (stable)
                    moves += a1 - i;
                    keys[w] = keys[b];
                    vals[w++] = vals[b++];
                } else {
                    keys[w] = tk[i];
                    vals[w++] = tv[i++];
                }
            }
            for (; i < a1; ++i, ++w) {
                keys[w] = tk[i];
                vals[w] = tv[i];
            }
        } else {
            moves = (uint64_t)j->budget + 1;  // each of them an inversion: over budget
        }
    }
    j->moves[m] = moves;
}

bp_status bp_par_insertion32(bp_context *ctx, uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals,
                             size_t n, size_t budget, bool *sorted) {
    *sorted = false;
    const uint32_t tasks = bp_par_tasks(ctx, n, BP_PAR_GRAIN_SORT);
    if (tasks < 2) return BP_OK;
    // Per-task move counts in the radix histograms' scratch (unused meanwhile).
    const size_t words = (size_t)tasks * 2 + 2;
    BP_RESERVE_DISCARD(ctx, par_of(ctx)->hist, par_of(ctx)->hist_cap, words);
    par_ins_job j = {keys, vals, tmp_keys, tmp_vals, n, budget, tasks, 0, (uint64_t *)(void *)par_of(ctx)->hist};
    bp_status st = bp_par_split(ctx, tasks, n, par_ins_range, &j);
    if (st != BP_OK) return st;
    uint64_t moves = 0;
    for (uint32_t t = 0; t < tasks; ++t) moves += j.moves[t];
    for (uint32_t width = 1; width < tasks && moves <= budget; width *= 2) {
        j.width = width;
        const uint32_t merges = (tasks - width + 2 * width - 1) / (2 * width);
        st = bp_par_run(ctx, merges, par_merge_runs_task, &j);
        if (st != BP_OK) return st;
        for (uint32_t m = 0; m < merges; ++m) moves += j.moves[m];
    }
    *sorted = moves <= budget;
    return BP_OK;
}
