// Workers (issue #14): the output of a context must not depend on how many workers it has or on
// how an engine schedules its tasks. Each case runs one script of calls (frames that move, in
// buffer mode, callback mode, bipartite, then region queries and validation) on contexts with 1
// worker (the reference: no thread at all) and with 2, 3 and 7, and compares everything they
// deliver byte for byte: pairs and their order, callback batches, statistics, query results. The
// reference itself is checked against brute force on the smaller frames. Small calls are forced
// onto the workers (parallel_min 1: tiny tasks, many task boundaries).
//
// Usage: test_threads CASE [METHOD DIM]. Cases: same (1/2/3/7 workers, unsorted), sorted (the
// same with sort_pairs), hooks (task hooks: a serial scheduler, one that runs ranges in reverse
// order, one with threads of its own), nomem (allocations refused while workers run: every Nth,
// then at random), stopped (a callback that stops), auto (small calls never reach the workers),
// bad_def, bad_hooks, pool (the pool itself: every task once, who claims which).
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "harness.h"
#include "../src/context.h"  // bp_default_alloc, bp_default_free (case pool)
#include "../src/pool.h"
#if defined(BPT_HAVE_SCENES)
#include "scene.h"
#endif

// ---------------------------------------------------------------------------------------------
// Inputs: sequences of frames (boxes that move between frames, for coherence).

typedef struct input {
    const char *name;
    int dim;
    size_t n;
    size_t frames;
    float *v;  // frames x n boxes
} input;

typedef struct inputs {
    input *in;
    size_t count;
} inputs;

static input *add_input(inputs *s, const char *name, int dim, size_t n, size_t frames) {
    s->in = bpt_xrealloc(s->in, (s->count + 1) * sizeof *s->in);
    input *in = &s->in[s->count++];
    in->name = name;
    in->dim = dim;
    in->n = n;
    in->frames = frames;
    in->v = bpt_xrealloc(NULL, frames * n * (size_t)(2 * dim) * sizeof(float));
    return in;
}

static float *frame_of(const input *in, size_t f) { return in->v + f * in->n * (size_t)(2 * in->dim); }

// Random boxes moving by jiggles; the world sized for a few pairs per box.
static void add_random(inputs *s, const char *name, int dim, size_t n, size_t frames, double hmin, double hmax,
                       uint64_t salt) {
    input *in = add_input(s, name, dim, n, frames);
    bpt_rng r = bpt_rng_make(salt);
    bpt_boxes b = {0};
    const double world = dim == 2 ? sqrt((double)n) * 4.0 * hmax : cbrt((double)n) * 3.0 * hmax;
    bpt_random_boxes(&r, &b, dim, n, world, hmin, hmax);
    for (size_t f = 0; f < frames; ++f) {
        if (f) bpt_jiggle(&r, &b, hmax * 0.3);
        memcpy(frame_of(in, f), b.v, n * (size_t)(2 * dim) * sizeof(float));
    }
    bpt_boxes_free(&b);
}

// Degenerate sets: every box the same (each pair overlaps: many callback batches), boxes on one
// line, a few huge boxes among small ones (the grid's coarse levels, cross-level pairs).
static void add_degenerate(inputs *s, int dim, uint64_t salt, size_t scale) {
    const size_t w = (size_t)(2 * dim);
    input *in = add_input(s, "identical", dim, 400 / scale, 1);
    for (size_t k = 0; k < in->n; ++k)
        for (int a = 0; a < dim; ++a) {
            in->v[k * w + (size_t)a] = 1.0f;
            in->v[k * w + (size_t)(dim + a)] = 2.0f;
        }
    in = add_input(s, "line", dim, 2000 / scale, 2);
    bpt_rng r = bpt_rng_make(salt);
    for (size_t f = 0; f < in->frames; ++f)
        for (size_t k = 0; k < in->n; ++k) {
            float *b = frame_of(in, f) + k * w;
            for (int a = 0; a < dim; ++a) {
                double c = a == 0 ? 50.0 : bpt_uniform(&r, 0.0, 2000.0);
                b[a] = (float)(c - 1.0);
                b[dim + a] = (float)(c + 1.0);
            }
        }
    in = add_input(s, "huge", dim, 3000 / scale, 2);
    bpt_boxes b = {0};
    bpt_random_boxes(&r, &b, dim, in->n, 400.0, 0.5, 2.0);
    for (size_t k = 0; k < in->n; k += 97) {  // every 97th box is huge
        float *box = bpt_box(&b, k);
        for (int a = 0; a < dim; ++a) {
            const float c = 0.5f * (box[a] + box[dim + a]);
            box[a] = c - 60.0f;
            box[dim + a] = c + 60.0f;
        }
    }
    for (size_t f = 0; f < in->frames; ++f) {
        if (f) bpt_jiggle(&r, &b, 0.5);
        memcpy(frame_of(in, f), b.v, in->n * w * sizeof(float));
    }
    bpt_boxes_free(&b);
}

// Boxes whose spread shrinks and grows back from frame to frame (sizes unchanged): the grid's
// table has fewer cells, then more again, so what a frame leaves beyond the next frame's cells
// must be cleared (with workers, by the last band of the link).
static void add_breathing(inputs *s, int dim, size_t n, uint64_t salt) {
    static const double scale[] = {1.0, 0.6, 1.0};
    const size_t frames = sizeof scale / sizeof *scale, w = (size_t)(2 * dim);
    input *in = add_input(s, "breathing", dim, n, frames);
    bpt_rng r = bpt_rng_make(salt);
    bpt_boxes b = {0};
    bpt_random_boxes(&r, &b, dim, n, sqrt((double)n) * 6.0, 0.5, 2.0);
    for (size_t f = 0; f < frames; ++f)
        for (size_t k = 0; k < n; ++k) {
            const float *src = bpt_box(&b, k);
            float *dst = frame_of(in, f) + k * w;
            for (int a = 0; a < dim; ++a) {
                const double half = 0.5 * ((double)src[dim + a] - src[a]);
                const double c = (0.5 * ((double)src[a] + src[dim + a])) * scale[f];
                dst[a] = (float)(c - half);
                dst[dim + a] = (float)(c + half);
            }
        }
    bpt_boxes_free(&b);
}

// Sanitizer builds (BPT_QUICK) run smaller inputs: the same paths, a fraction of the time.
#if defined(BPT_QUICK)
#define Q(full, quick) (quick)
#else
#define Q(full, quick) (full)
#endif

#if defined(BPT_HAVE_SCENES)
// The scenes of docs/scenes.md, a few frames each.
static void add_scene(inputs *s, const char *name, int dim, size_t n) {
    bp_scene sc;
    CHECK_MSG(bp_scene_init(&sc, name, n, dim, 1) == 0, "scene %s", name);
    input *in = add_input(s, name, dim, n, Q(3, 2));
    for (size_t f = 0; f < in->frames; ++f) {
        bp_scene_step(&sc);
        bp_scene_boxes(&sc, frame_of(in, f));
    }
    bp_scene_free(&sc);
}
#endif

// `brute`: smaller sets for brute force (quadratic).
static void make_inputs(inputs *s, int dim, bool brute) {
    add_random(s, "random", dim, Q(1500, 800), Q(3, 2), 0.0, 3.0, 11);
    // Over 8,192 boxes: the load runs in several blocks.
    if (!brute) add_random(s, "blocks", dim, 9000, Q(2, 1), 0.5, 1.5, 12);
    add_degenerate(s, dim, 13, brute ? 2 : Q(1, 2));
    add_breathing(s, dim, brute ? 400 : Q(1500, 600), 14);
#if defined(BPT_HAVE_SCENES)
    if (!brute) {
        add_scene(s, "uniform", dim, Q(4000, 1500));
        add_scene(s, "clustered", dim, Q(3000, 1200));
        add_scene(s, "mixed", dim, Q(4000, 1500));
        if (dim == 2) add_scene(s, "line", dim, Q(1500, 800));
        // 3D crowds of small boxes among large ones: the grid sorts each cell (in tasks cut
        // at cell boundaries) and its runs stop early.
        if (dim == 3) add_scene(s, "sizes", dim, Q(2500, 1000));
    }
    if (dim == 2) add_scene(s, "seed", dim, 500);
#endif
}

static void free_inputs(inputs *s) {
    for (size_t k = 0; k < s->count; ++k) free(s->in[k].v);
    free(s->in);
    memset(s, 0, sizeof *s);
}

// A case's method and dimension (its arguments) and its input scenes.
typedef struct rig {
    bp_method m;
    int dim;
    inputs s;
} rig;

static rig rig_open(int argc, char **argv) {
    rig g = {.m = bpt_method_arg(argc, argv, 0)};
    g.dim = bpt_dim_arg(argc, argv, 1);
    return g;
}

static void rig_close(rig *g) { free_inputs(&g->s); }

// ---------------------------------------------------------------------------------------------
// A log of everything a script delivered, compared byte for byte between configurations. Marks
// (input, frame, step) are logged too, so a difference can be located.

typedef struct tlog {
    uint64_t *w;
    size_t n, cap;
    size_t *marks;  // positions of the marks
    size_t nmarks, mcap;
} tlog;

static void log_word(tlog *l, uint64_t v) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->w = bpt_xrealloc(l->w, l->cap * sizeof *l->w);
    }
    l->w[l->n++] = v;
}

static void log_mark(tlog *l, size_t input, size_t frame, int step) {
    if (l->nmarks == l->mcap) {
        l->mcap = l->mcap ? 2 * l->mcap : 256;
        l->marks = bpt_xrealloc(l->marks, l->mcap * sizeof *l->marks);
    }
    l->marks[l->nmarks++] = l->n;
    log_word(l, 0xFEED000000000000u | ((uint64_t)input << 32) | ((uint64_t)frame << 8) | (uint64_t)step);
}

static void log_pairs(tlog *l, const bp_pair *p, size_t count) {
    log_word(l, count);
    for (size_t k = 0; k < count; ++k) log_word(l, ((uint64_t)p[k].i << 32) | p[k].j);
}

static void log_free(tlog *l) {
    free(l->w);
    free(l->marks);
    memset(l, 0, sizeof *l);
}

static const char *const step_names[] = {"buffer", "callback", "between", "queries", "stats"};

static void log_expect_same(const char *what, const tlog *want, const tlog *got, const inputs *s) {
    size_t k = 0;
    while (k < want->n && k < got->n && want->w[k] == got->w[k]) ++k;
    if (k == want->n && k == got->n) return;
    size_t m = 0;
    while (m + 1 < want->nmarks && want->marks[m + 1] <= k) ++m;
    const uint64_t mark = want->nmarks ? want->w[want->marks[m]] : 0;
    const size_t in = (size_t)((mark >> 32) & 0xFFFF), frame = (size_t)((mark >> 8) & 0xFFFFFF);
    const int step = (int)(mark & 0xFF);
    bpt_fail(__FILE__, __LINE__,
             "%s: output differs from the 1-worker output at word %zu (of %zu / %zu): input %s frame %zu step %s "
             "(word %zu after the mark): want 0x%016llx got 0x%016llx",
             what, k, want->n, got->n, in < s->count ? s->in[in].name : "?", frame,
             step < 5 ? step_names[step] : "?", k - (want->nmarks ? want->marks[m] : 0),
             (unsigned long long)(k < want->n ? want->w[k] : 0), (unsigned long long)(k < got->n ? got->w[k] : 0));
}

// ---------------------------------------------------------------------------------------------
// Test schedulers for the task hooks.

enum { SCHED_NONE, SCHED_SERIAL, SCHED_REVERSE, SCHED_THREADS };
#define SCHED_THREADS_MAX 3

typedef struct sched {
    int kind;
    uint32_t workers;
    atomic_uint enqueues;
} sched;

typedef struct sched_task {
    bp_task_fn *fn;
    uint32_t count, min_range;
    void *ctx;
    uint32_t workers;
    pthread_t threads[SCHED_THREADS_MAX];
    uint32_t nthreads;
    uint32_t id[SCHED_THREADS_MAX];
} sched_task;

typedef struct sched_arg {
    sched_task *t;
    uint32_t worker;
} sched_arg;

static sched_arg sched_args[SCHED_THREADS_MAX];

// Threads scheduler: worker w runs ranges w, w + T, w + 2T, ... of min_range items.
static void *sched_thread(void *arg) {
    sched_arg *a = arg;
    sched_task *t = a->t;
    const uint32_t step = t->min_range ? t->min_range : 1;
    for (uint32_t b = a->worker * step; b < t->count; b += step * t->nthreads) {
        uint32_t e = b + step < t->count ? b + step : t->count;
        t->fn(b, e, a->worker, t->ctx);
    }
    return NULL;
}

static void *sched_enqueue(bp_task_fn *fn, uint32_t count, uint32_t min_range, void *task_context, void *user) {
    sched *s = user;
    atomic_fetch_add(&s->enqueues, 1);
    CHECK(count > 0 && min_range > 0);
    if (s->kind == SCHED_SERIAL) {
        fn(0, count, 0, task_context);  // all at once, inside the enqueue
        return NULL;
    }
    sched_task *t = bpt_xrealloc(NULL, sizeof *t);
    memset(t, 0, sizeof *t);
    t->fn = fn;
    t->count = count;
    t->min_range = min_range;
    t->ctx = task_context;
    t->workers = s->workers;
    if (s->kind == SCHED_THREADS) {
        t->nthreads = s->workers < SCHED_THREADS_MAX ? s->workers : SCHED_THREADS_MAX;
        for (uint32_t w = 0; w < t->nthreads; ++w) {
            sched_args[w].t = t;
            sched_args[w].worker = w;
            CHECK(pthread_create(&t->threads[w], NULL, sched_thread, &sched_args[w]) == 0);
        }
    }
    return t;
}

static void sched_finish(void *handle, void *user) {
    sched *s = user;
    sched_task *t = handle;
    CHECK(t != NULL);
    if (s->kind == SCHED_REVERSE) {
        // One item at a time, last first, worker numbers rotating.
        for (uint32_t i = t->count; i-- > 0;) t->fn(i, i + 1, i % t->workers, t->ctx);
    } else {
        for (uint32_t w = 0; w < t->nthreads; ++w) CHECK(pthread_join(t->threads[w], NULL) == 0);
    }
    free(t);
}

// ---------------------------------------------------------------------------------------------
// The script

typedef struct config {
    int workers;
    bool sorted;
    sched *hooks;       // task hooks, or NULL
    bpt_alloc *alloc;   // a counting allocator, or NULL
    size_t parallel_min;
    bp_grid_layout layout;
    int variant;        // 1: the method's other option (loose quadtree, RDC epsilon, no coherence)
} config;

// A config's task hooks and allocator, where it has them, into a context or world definition
// (DEF, a bp_context_def or a bp_world_def: both name the fields alike).
#define USE_CONFIG_HOOKS(def, c)                                                                   \
    do {                                                                                           \
        if ((c)->hooks) {                                                                          \
            (def).enqueue_task = sched_enqueue;                                                    \
            (def).finish_task = sched_finish;                                                      \
            (def).task_user = (c)->hooks;                                                          \
        }                                                                                          \
        if ((c)->alloc) (def).allocator = bpt_allocator((c)->alloc);                               \
    } while (0)

static bp_context *make_context(bp_method m, int dim, const config *c) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = m;
    def.sort_pairs = c->sorted;
    def.workers = c->workers;
    def.parallel_min = c->parallel_min;
    def.grid.layout = c->layout;
    if (c->variant) {
        def.quadtree.loose = true;
        def.rdc.epsilon = -0.25f;
        def.sweep.coherence = false;
    }
    USE_CONFIG_HOOKS(def, c);
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    return ctx;
}

typedef struct batches {
    tlog *log;
    size_t batches;
} batches;

static bool log_batch(const bp_pair *pairs, size_t count, void *user) {
    batches *b = user;
    log_word(b->log, 0xBA7C4u);
    log_pairs(b->log, pairs, count);
    b->batches++;
    return true;
}

static void log_stats(tlog *l, const bp_context *ctx) {
    bp_stats st;
    CHECK_OK(bp_get_stats(ctx, &st));
    log_word(l, st.n);
    log_word(l, st.checks);
    log_word(l, st.pairs);
    log_word(l, (uint64_t)st.method);
}

// Queries against the last call's structure (answered by the method's own structure).
static void log_queries(tlog *l, bp_context *ctx, const float *v, size_t n, int dim) {
    const size_t w = (size_t)(2 * dim);
    for (size_t q = 0; q < 4 && n; ++q) {
        const float *b = v + (q * 7919 % n) * w;
        float lo[3], hi[3], c[3];
        for (int a = 0; a < dim; ++a) {
            lo[a] = b[a] - 3.0f;
            hi[a] = b[dim + a] + 3.0f;
            c[a] = b[a];
        }
        bp_indices idx;
        CHECK_OK(bp_query_box(ctx, lo, hi, &idx));
        log_word(l, idx.count);
        for (size_t k = 0; k < idx.count; ++k) log_word(l, idx.indices[k]);
        CHECK_OK(bp_query_sphere(ctx, c, 4.0f, &idx));
        log_word(l, idx.count);
        for (size_t k = 0; k < idx.count; ++k) log_word(l, idx.indices[k]);
    }
}

// Every frame of every input: buffer mode (pairs, statistics), callback mode (batches), a
// bipartite call (first third against the rest), queries, validation. `check`: compare the
// buffer-mode pairs with brute force on the smaller frames (the reference run).
static void run_script(bp_method m, int dim, const config *c, const inputs *s, tlog *l, bool check) {
    bp_context *ctx = make_context(m, dim, c);
    bpt_pairs got = {0}, want = {0};
    for (size_t i = 0; i < s->count; ++i) {
        const input *in = &s->in[i];
        if (in->dim != dim) continue;
        for (size_t f = 0; f < in->frames; ++f) {
            const float *v = frame_of(in, f);
            bpt_note("input %s frame %zu, %d workers%s", in->name, f, c->workers, c->sorted ? ", sorted" : "");
            log_mark(l, i, f, 0);
            bp_pairs out;
            CHECK_OK(dim == 2 ? bp_find_pairs2(ctx, bpt_as2(v), in->n, &out) : bp_find_pairs3(ctx, bpt_as3(v), in->n, &out));
            log_pairs(l, out.pairs, out.count);
            log_stats(l, ctx);
            CHECK_OK(bp_validate(ctx));
            if (check && in->n <= 2000) {
                got.n = 0;
                for (size_t k = 0; k < out.count; ++k) bpt_pairs_push(&got, out.pairs[k].i, out.pairs[k].j);
                bpt_check_result(in->name, &got, v, in->n, dim, c->sorted, &want);
            }
            log_mark(l, i, f, 3);
            log_queries(l, ctx, v, in->n, dim);
            log_mark(l, i, f, 1);
            batches b = {l, 0};
            CHECK_OK(dim == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(v), in->n, log_batch, &b)
                              : bp_find_pairs3_cb(ctx, bpt_as3(v), in->n, log_batch, &b));
            log_stats(l, ctx);
            log_mark(l, i, f, 2);
            const size_t na = in->n / 3, w = (size_t)(2 * dim);
            CHECK_OK(dim == 2 ? bp_find_pairs_between2(ctx, bpt_as2(v), na, bpt_as2(v + na * w), in->n - na, &out)
                              : bp_find_pairs_between3(ctx, bpt_as3(v), na, bpt_as3(v + na * w), in->n - na, &out));
            log_pairs(l, out.pairs, out.count);
            log_stats(l, ctx);
            CHECK_OK(bp_validate(ctx));
        }
    }
    bp_context_destroy(ctx);
    bpt_pairs_free(&got);
    bpt_pairs_free(&want);
}

// ---------------------------------------------------------------------------------------------
// Cases

static const int worker_counts[] = {2, 3, 7};

static void compare_layout(bp_method m, int dim, const inputs *s, bool sorted, bp_grid_layout layout, int variant) {
    tlog ref = {0};
    config c = {1, sorted, NULL, NULL, 1, layout, variant};
    // RDC's epsilon changes the overlap rule: no brute-force check there.
    run_script(m, dim, &c, s, &ref, !(variant && m == BP_METHOD_RDC));
    for (size_t k = 0; k < sizeof worker_counts / sizeof worker_counts[0]; ++k) {
        tlog got = {0};
        c.workers = worker_counts[k];
        run_script(m, dim, &c, s, &got, false);
        char what[64];
        snprintf(what, sizeof what, "%d workers%s, grid layout %d, variant %d", c.workers, sorted ? ", sorted" : "",
                 (int)layout, variant);
        log_expect_same(what, &ref, &got, s);
        log_free(&got);
    }
#if !defined(BPT_QUICK)
    // The automatic threshold: these calls stay on the calling thread, same output again.
    tlog got = {0};
    c.workers = 3;
    c.parallel_min = 0;
    run_script(m, dim, &c, s, &got, false);
    log_expect_same("3 workers, automatic parallel_min", &ref, &got, s);
    log_free(&got);
#endif
    log_free(&ref);
}

static void compare_workers(int argc, char **argv, bool sorted) {
    rig g = rig_open(argc, argv);
    make_inputs(&g.s, g.dim, g.m == BP_METHOD_BRUTE);
    compare_layout(g.m, g.dim, &g.s, sorted, BP_GRID_LAYOUT_AUTO, 0);
    // The grid's sorted layout everywhere (AUTO takes the table in small 2D worlds); the loose
    // quadtree, RDC with an epsilon, sweep without coherence.
    if (g.m == BP_METHOD_GRID && g.dim == 2) compare_layout(g.m, g.dim, &g.s, sorted, BP_GRID_LAYOUT_SORTED, 0);
    if ((g.m == BP_METHOD_QUADTREE || g.m == BP_METHOD_RDC || g.m == BP_METHOD_SWEEP) && !sorted && Q(true, g.dim == 2))
        compare_layout(g.m, g.dim, &g.s, sorted, BP_GRID_LAYOUT_AUTO, 1);
    rig_close(&g);
}

static void case_same(int argc, char **argv) { compare_workers(argc, argv, false); }
static void case_sorted(int argc, char **argv) { compare_workers(argc, argv, true); }

static void case_hooks(int argc, char **argv) {
    rig g = rig_open(argc, argv);
    make_inputs(&g.s, g.dim, g.m == BP_METHOD_BRUTE);
    tlog ref = {0};
    config c = {1, false, NULL, NULL, 1, BP_GRID_LAYOUT_AUTO, 0};
    run_script(g.m, g.dim, &c, &g.s, &ref, false);
    static const char *const names[] = {"", "serial scheduler", "reverse scheduler", "threads scheduler"};
    for (int kind = SCHED_SERIAL; kind <= SCHED_THREADS; ++kind) {
        sched sc;
        memset(&sc, 0, sizeof sc);
        sc.kind = kind;
        sc.workers = 3;
        atomic_init(&sc.enqueues, 0);
        c.workers = 3;
        c.hooks = &sc;
        tlog got = {0};
        run_script(g.m, g.dim, &c, &g.s, &got, false);
        log_expect_same(names[kind], &ref, &got, &g.s);
        // The scheduler was used: every call here is large enough (parallel_min 1).
        CHECK_MSG(atomic_load(&sc.enqueues) > 0, "%s: the hooks were never called", names[kind]);
        log_free(&got);
    }
    log_free(&ref);
    rig_close(&g);
}

// Allocations refused while the workers run: every call either succeeds with the right pairs or
// fails with BP_ERR_NOMEM; it then succeeds when retried with allocation allowed; the byte count
// always matches the allocator and nothing is left after destroy. First every Nth allocation in
// turn (N = 1, 2, ... until a whole run needs fewer), then one in five at random.
static void case_nomem(int argc, char **argv) {
    rig g = rig_open(argc, argv);
    // Small: every round runs them all, checked against brute force.
    add_random(&g.s, "random", g.dim, 500, 2, 0.0, 3.0, 21);
    add_degenerate(&g.s, g.dim, 22, 5);
    bpt_pairs got = {0}, want = {0};
    for (int round = 0;; ++round) {
        const bool chaos = round >= 1000;
        bpt_alloc al;
        memset(&al, 0, sizeof al);
        al.rng = bpt_rng_make(777 + (uint64_t)round);
        if (chaos) al.fail_rate = 0.2;
        else al.fail_at = (size_t)round + 1;
        bpt_note("round %d (%s)", round, chaos ? "chaos" : "every Nth");
        const bool sorted = round % 2 == 1;
        bp_context_def def = bp_default_context_def();
        def.dimension = g.dim;
        def.method = g.m;
        def.workers = 3;
        def.parallel_min = 1;
        def.sort_pairs = sorted;
        def.allocator = bpt_allocator(&al);
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(&def, &ctx);
        size_t failures = 0;
        if (st != BP_OK) {
            CHECK_ST(st, BP_ERR_NOMEM);
            CHECK(ctx == NULL);
            CHECK_EQ(al.live_blocks, 0);
            continue;
        }
        for (size_t i = 0; i < g.s.count; ++i) {
            const input *in = &g.s.in[i];
            for (size_t f = 0; f < in->frames; ++f) {
                const float *v = frame_of(in, f);
                for (int mode = 0; mode < 2; ++mode) {
                    for (int attempt = 0; attempt < 2; ++attempt) {
                        const size_t before = al.failures;
                        st = bpt_find(ctx, g.dim, v, in->n, mode ? BPT_CALLBACK : BPT_BUFFER, &got);
                        bpt_check_bytes(ctx, &al);
                        if (st == BP_OK) {
                            bpt_check_result(in->name, &got, v, in->n, g.dim, sorted, &want);
                            break;
                        }
                        CHECK_ST(st, BP_ERR_NOMEM);
                        CHECK(al.failures > before);
                        CHECK_MSG(attempt == 0, "failed with allocation allowed");
                        ++failures;
                        // Again with every allocation allowed: it must succeed.
                        al.fail_at = 0;
                        al.fail_rate = 0.0;
                    }
                    if (chaos) al.fail_rate = 0.2;
                }
            }
        }
        bp_context_destroy(ctx);
        CHECK_EQ(al.live_blocks, 0);
        CHECK_EQ(al.live_bytes, 0);
        if (!chaos && failures == 0 && al.failures == 0) round = 999;  // every N covered: chaos next
        if (chaos && round >= 1008) break;
    }
    bpt_pairs_free(&got);
    bpt_pairs_free(&want);
    rig_close(&g);
}

// A warm context with workers allocates nothing: after a few frames of a moving scene (the
// same n, a similar pair count), further frames, in buffer and callback mode, call no
// allocation hook.
static void case_warm(int argc, char **argv) {
    rig g = rig_open(argc, argv);
    const size_t n = g.m == BP_METHOD_BRUTE ? 1500 : Q(6000, 3000);
    add_random(&g.s, "moving", g.dim, n, 12, 0.5, 1.5, 61);
    const input *in = &g.s.in[0];
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    config c = {3, false, NULL, &al, 1, BP_GRID_LAYOUT_AUTO, 0};
    bp_context *ctx = make_context(g.m, g.dim, &c);
    bpt_pairs got = {0};
    for (size_t f = 0; f < in->frames; ++f) {
        const size_t before = al.allocs;
        bpt_note("frame %zu", f);
        CHECK_OK(bpt_find(ctx, g.dim, frame_of(in, f), n, BPT_BUFFER, &got));
        CHECK_OK(bpt_find(ctx, g.dim, frame_of(in, f), n, BPT_CALLBACK, &got));
        if (f >= 6) CHECK_MSG(al.allocs == before, "a warm frame allocated %zu times", al.allocs - before);
    }
    bp_context_destroy(ctx);
    CHECK_EQ(al.live_blocks, 0);
    bpt_pairs_free(&got);
    rig_close(&g);
}

// Pair counts far above the box count: groups of `group` boxes that all overlap each other, the
// groups far apart on a line along x (group = n: one crowd, as in the seed scene's). Sorted on x,
// a group's boxes are neighbours, so the sweep's rows are runs of hits (whole blocks of 8).
static void crowd_frame(float *v, int dim, size_t n, size_t group, uint64_t salt) {
    bpt_rng r = bpt_rng_make(salt);
    for (size_t k = 0; k < n; ++k) {
        const size_t g = k / group;
        for (int a = 0; a < dim; ++a) {
            const double c = (a == 0 ? 10.0 * (double)g : 0.0) + bpt_uniform(&r, -0.1, 0.1);
            v[k * (size_t)(2 * dim) + (size_t)a] = (float)(c - 0.5);
            v[k * (size_t)(2 * dim) + (size_t)(dim + a)] = (float)(c + 0.5);
        }
    }
}

// Huge outputs with workers. Crowds of 20, then 40 boxes (10, then 20 pairs a box): the workers
// find the pairs (src/par.c); they hold at most one more copy of them than one worker does (each
// task's blocks, before the merge), their pool of blocks grows in frame 1 without being rebuilt,
// and once the count has peaked no frame allocates. At 65,536 boxes, one worker streams its
// output from frame 2 on (over 2^20 pairs: context.c's streamed mode), whose order must be the
// workers'. One crowd of every box (800 pairs a box): the pair pass stays on the calling thread
// after the first frame (BP_PAR_PAIRS_PER_BOX) while the other passes use the workers. Every
// output equals one worker's, byte for byte.
static void crowd_case(bp_method m, int dim, size_t n, bool one, size_t frames) {
    const size_t w = (size_t)(2 * dim);
    float *v = bpt_xrealloc(NULL, n * w * sizeof(float));
    bpt_pairs want = {0}, got = {0};
    bpt_alloc al[2];
    memset(al, 0, sizeof al);
    config c1 = {1, false, NULL, &al[0], 1, BP_GRID_LAYOUT_AUTO, 0};
    config c3 = {3, false, NULL, &al[1], 1, BP_GRID_LAYOUT_AUTO, 0};
    bp_context *ctx1 = make_context(m, dim, &c1), *ctx3 = make_context(m, dim, &c3);
    for (size_t f = 0; f < frames; ++f) {
        const size_t group = one ? (f == 0 ? n / 2 : n) : (f == 0 ? 20 : 40);
        crowd_frame(v, dim, n, group, 71 + f);
        const size_t before = al[1].allocs;
        for (int mode = 0; mode < 2; ++mode) {
            const bpt_delivery d = mode ? BPT_CALLBACK : BPT_BUFFER;
            bpt_note("%s, %zu boxes, frame %zu, %s", one ? "one crowd" : "crowds", n, f, mode ? "callback" : "buffer");
            CHECK_OK(bpt_find(ctx1, dim, v, n, d, &want));
            CHECK_OK(bpt_find(ctx3, dim, v, n, d, &got));
            const size_t full = n / group * (group * (group - 1) / 2), rest = n % group;
            CHECK_EQ(want.n, full + rest * (rest - (rest > 0)) / 2);
            CHECK_EQ(got.n, want.n);
            CHECK(memcmp(got.k, want.k, want.n * sizeof *want.k) == 0);
        }
        if (f >= 2) CHECK_MSG(al[1].allocs == before, "a frame after the most pairs allocated %zu times",
                              al[1].allocs - before);
    }
    // One more copy of the pairs than one worker, a part-filled block of 64 KiB per task (24 at
    // most) and a little per-worker scratch.
    const size_t bound = al[0].peak_bytes + want.n * sizeof(bp_pair) + 24 * 65600 + (1u << 20);
    CHECK_MSG(al[1].peak_bytes <= bound, "3 workers held %zu bytes at most, 1 worker %zu, %zu pairs",
              al[1].peak_bytes, al[0].peak_bytes, want.n);
    bp_context_destroy(ctx1);
    bp_context_destroy(ctx3);
    CHECK_EQ(al[0].live_blocks, 0);
    CHECK_EQ(al[1].live_blocks, 0);
    bpt_pairs_free(&want);
    bpt_pairs_free(&got);
    free(v);
}

static void case_crowd(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int dim = bpt_dim_arg(argc, argv, 1);
    crowd_case(m, dim, m == BP_METHOD_BRUTE ? 4096 : Q(65536, 8192), false, 5);
    crowd_case(m, dim, Q(1600, 800), true, 5);
}

typedef struct stopper {
    tlog *log;
    size_t batches, stop_after;
} stopper;

static bool stop_fn(const bp_pair *pairs, size_t count, void *user) {
    stopper *st = user;
    log_pairs(st->log, pairs, count);
    return ++st->batches < st->stop_after;
}

// A callback that stops after k batches: the same status, pairs and statistics with workers.
static void case_stopped(int argc, char **argv) {
    rig g = rig_open(argc, argv);
    add_degenerate(&g.s, g.dim, 31, 1);  // "identical": 79,800 pairs, 20 batches
    const input *in = &g.s.in[0];
    for (size_t stop_after = 1; stop_after <= 7; stop_after += 3) {
        tlog ref = {0};
        for (int k = -1; k < 3; ++k) {
            config c = {k < 0 ? 1 : worker_counts[k], false, NULL, NULL, 1, BP_GRID_LAYOUT_AUTO, 0};
            tlog got = {0};
            tlog *l = k < 0 ? &ref : &got;
            bp_context *ctx = make_context(g.m, g.dim, &c);
            stopper st = {l, 0, stop_after};
            for (int rep = 0; rep < 2; ++rep) {  // a stopped call leaves the context usable
                st.batches = 0;
                bp_status r = g.dim == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(in->v), in->n, stop_fn, &st)
                                         : bp_find_pairs3_cb(ctx, bpt_as3(in->v), in->n, stop_fn, &st);
                CHECK_ST(r, BP_ERR_STOPPED);
                CHECK_EQ(st.batches, stop_after);
                log_stats(l, ctx);
                CHECK_OK(bp_validate(ctx));
            }
            bp_context_destroy(ctx);
            if (k >= 0) {
                log_expect_same("stopped", &ref, &got, &g.s);
                log_free(&got);
            }
        }
        log_free(&ref);
    }
    rig_close(&g);
}

// Below the automatic threshold (BP_PARALLEL_MIN_AUTO boxes) a call never reaches the workers:
// with task hooks, no task is enqueued; from it on, tasks are.
static void case_auto(int argc, char **argv) {
    (void)argc;
    (void)argv;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int m = BP_METHOD_AUTO; m < BP_METHOD_COUNT; ++m) {
            if (!bp_method_available((bp_method)m) || m == BP_METHOD_BRUTE) continue;
            sched sc;
            memset(&sc, 0, sizeof sc);
            sc.kind = SCHED_SERIAL;
            sc.workers = 4;
            atomic_init(&sc.enqueues, 0);
            config c = {4, false, &sc, NULL, 0, BP_GRID_LAYOUT_AUTO, 0};
            bp_context *ctx = make_context((bp_method)m, dim, &c);
            bpt_rng r = bpt_rng_make(41);
            bpt_boxes b = {0};
            const size_t small = BP_PARALLEL_MIN_AUTO - 1;
            bpt_random_boxes(&r, &b, dim, small, dim == 2 ? 400.0 : 100.0, 0.2, 1.0);
            bpt_pairs got = {0};
            bpt_note("method %s dim %d", bp_method_name((bp_method)m), dim);
            CHECK_OK(bpt_find(ctx, dim, b.v, small, BPT_BUFFER, &got));
            CHECK_EQ(atomic_load(&sc.enqueues), 0);
            bpt_random_boxes(&r, &b, dim, BP_PARALLEL_MIN_AUTO, dim == 2 ? 400.0 : 100.0, 0.2, 1.0);
            CHECK_OK(bpt_find(ctx, dim, b.v, BP_PARALLEL_MIN_AUTO, BPT_BUFFER, &got));
            CHECK(atomic_load(&sc.enqueues) > 0);
            bp_context_destroy(ctx);
            bpt_boxes_free(&b);
            bpt_pairs_free(&got);
        }
    }
}

static void case_bad_def(int argc, char **argv) {
    (void)argc;
    (void)argv;
    bp_context_def def = bp_default_context_def();
    CHECK_EQ(def.workers, 1);
    CHECK(def.enqueue_task == NULL && def.finish_task == NULL && def.parallel_min == 0);
    bp_context *ctx = (bp_context *)(uintptr_t)8;
    def.workers = -1;
    CHECK_ST(bp_context_create(&def, &ctx), BP_ERR_INVALID_ARG);
    CHECK(ctx == NULL);
    def.workers = BP_MAX_WORKERS + 1;
    CHECK_ST(bp_context_create(&def, &ctx), BP_ERR_INVALID_ARG);
    def.workers = 2;
    sched sc;
    memset(&sc, 0, sizeof sc);
    def.enqueue_task = sched_enqueue;  // half the hooks
    def.task_user = &sc;
    CHECK_ST(bp_context_create(&def, &ctx), BP_ERR_INVALID_ARG);
    def.enqueue_task = NULL;
    def.finish_task = sched_finish;
    CHECK_ST(bp_context_create(&def, &ctx), BP_ERR_INVALID_ARG);
    // 0 means 1; the definition reads back resolved; many workers work and are freed.
    def = bp_default_context_def();
    def.workers = 0;
    CHECK_OK(bp_context_create(&def, &ctx));
    bp_context_def got;
    CHECK_OK(bp_context_get_def(ctx, &got));
    CHECK_EQ(got.workers, 1);
    bp_context_destroy(ctx);
    def.workers = BP_MAX_WORKERS;
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    def.allocator = bpt_allocator(&al);
    CHECK_OK(bp_context_create(&def, &ctx));
    bpt_check_bytes(ctx, &al);
    bp_context_destroy(ctx);
    CHECK_EQ(al.live_blocks, 0);
}

// A scheduler that breaks the contract: worker numbers out of range, or items skipped. The call
// fails with BP_ERR_INVALID_ARG (nothing is corrupted) and the context stays usable.
static atomic_int bad_mode;
static void *bad_enqueue(bp_task_fn *fn, uint32_t count, uint32_t min_range, void *task_context, void *user) {
    (void)min_range;
    (void)user;
    if (atomic_load(&bad_mode) == 0) fn(0, count, 99, task_context);  // worker out of range
    else if (count > 1) fn(1, count, 0, task_context);                // item 0 skipped
    else fn(0, count, 0, task_context);
    return NULL;
}
static void bad_finish(void *handle, void *user) {
    (void)handle;
    (void)user;
    CHECK_MSG(false, "finish called for a NULL handle");
}

static void case_bad_hooks(int argc, char **argv) {
    bp_method m = bpt_method_arg(argc, argv, 0);
    int dim = bpt_dim_arg(argc, argv, 1);
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = m;
    def.workers = 4;
    def.parallel_min = 1;
    def.enqueue_task = bad_enqueue;
    def.finish_task = bad_finish;
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    def.allocator = bpt_allocator(&al);
    bp_context *ctx;
    CHECK_OK(bp_context_create(&def, &ctx));
    bpt_rng r = bpt_rng_make(51);
    bpt_boxes b = {0};
    bpt_random_boxes(&r, &b, dim, 3000, 200.0, 0.2, 2.0);
    bpt_pairs got = {0}, want = {0};
    for (int mode = 0; mode < 2; ++mode) {
        atomic_store(&bad_mode, mode);
        CHECK_ST(bpt_find(ctx, dim, b.v, b.n, BPT_BUFFER, &got), BP_ERR_INVALID_ARG);
        bpt_check_bytes(ctx, &al);
        bp_indices idx;
        float p[3] = {0, 0, 0};
        CHECK_ST(bp_query_point(ctx, p, &idx), BP_ERR_NO_BOXES);
    }
    bp_context_destroy(ctx);
    CHECK_EQ(al.live_blocks, 0);
    // The same context type with good hooks after bad calls: correct again.
    def.enqueue_task = sched_enqueue;
    def.finish_task = sched_finish;
    sched sc;
    memset(&sc, 0, sizeof sc);
    sc.kind = SCHED_REVERSE;
    sc.workers = 4;
    def.task_user = &sc;
    CHECK_OK(bp_context_create(&def, &ctx));
    atomic_store(&bad_mode, 0);
    CHECK_OK(bpt_find(ctx, dim, b.v, b.n, BPT_BUFFER, &got));
    bpt_check_result("after", &got, b.v, b.n, dim, false, &want);
    bp_context_destroy(ctx);
    CHECK_EQ(al.live_blocks, 0);
    bpt_boxes_free(&b);
    bpt_pairs_free(&got);
    bpt_pairs_free(&want);
}

// ---------------------------------------------------------------------------------------------
// The persistent world on workers: its probes run in parallel tasks (src/world.c), its rebuilds
// on the context's workers. The events (ids' slots, user values, order) must not depend on the
// worker count or the scheduler; allocation refused while workers run must leave the world as
// it was (the same update then succeeds with the same events as a world that never failed).

#ifdef BPT_QUICK
#define WORLD_PROXIES 12000
#else
#define WORLD_PROXIES 24000
#endif

typedef struct wscript {
    int dim;
    size_t n;
    float *boxes;         // frame 0
    bp_proxy_def *defs;
    double W;
} wscript;

static void wscript_make(wscript *ws, int dim) {
    bpt_rng r = bpt_rng_make(90 + (uint64_t)dim);
    ws->dim = dim;
    ws->n = WORLD_PROXIES;
    ws->W = dim == 2 ? sqrt((double)ws->n * 3.14159265358979323846 / 0.05) : cbrt((double)ws->n * 4.19 / 0.05);
    ws->boxes = bpt_xrealloc(NULL, ws->n * 6 * sizeof(float));
    ws->defs = bpt_xrealloc(NULL, ws->n * sizeof *ws->defs);
    for (size_t k = 0; k < ws->n; ++k) {
        double c[3], h[3];
        for (int a = 0; a < dim; ++a) {
            c[a] = bpt_uniform(&r, 0, ws->W);
            h[a] = bpt_uniform(&r, 0.5, 1.5);
        }
        bpt_set_box(ws->boxes + k * (size_t)(2 * dim), dim, c, h);
        ws->defs[k] = bp_default_proxy_def();
        ws->defs[k].kind = k % 3 == 0 ? BP_PROXY_STATIC : BP_PROXY_MOVING;
        ws->defs[k].category = (uint64_t)1 << (k % 3);
        ws->defs[k].mask = k % 5 == 0 ? 3 : UINT64_MAX;
        ws->defs[k].user = k;
    }
}

static void wscript_free(wscript *ws) {
    free(ws->boxes);
    free(ws->defs);
}

// Frame f's moves: one proxy in 15 (patched, with probes on the workers: over 512 of them), every
// proxy on frames 5 and 6 (rebuilds), each by a
// step that depends only on (f, k), so every run moves the same ones the same way.
static bool wscript_moves(const wscript *ws, int f, size_t k, float *box) {
    const bool all = f == 5 || f == 6;
    if (!all && (k * 7 + (size_t)f) % 15 != 0) return false;  // one in 15: patched, in parallel
    bpt_rng r = bpt_rng_make(((uint64_t)f << 32) ^ k);
    for (int a = 0; a < ws->dim; ++a) {
        const float d = (float)bpt_uniform(&r, -0.6, 0.6);
        box[a] += d;
        box[ws->dim + a] += d;
    }
    return true;
}

static void wlog_events(tlog *l, const bp_world_events *ev) {
    const bp_world_pairs *lists[2] = {&ev->begins, &ev->ends};
    for (int e = 0; e < 2; ++e) {
        log_word(l, lists[e]->count);
        for (size_t q = 0; q < lists[e]->count; ++q) {
            const bp_world_pair *p = &lists[e]->pairs[q];
            log_word(l, (p->a.v >> 32) << 32 | (p->b.v >> 32));  // slots: generations differ by world
            log_word(l, p->user_a);
            log_word(l, p->user_b);
        }
    }
}

// Runs the script on a world of `c`'s workers and hooks, logging every update's events. With
// an allocator that refuses, each failed update is retried with refusals off.
static void wscript_run(const wscript *ws, const config *c, tlog *l) {
    bp_world_def def = bp_default_world_def();
    def.dimension = ws->dim;
    def.workers = c->workers;
    USE_CONFIG_HOOKS(def, c);
    bp_world *w = NULL;
    bp_status st;
    while ((st = bp_world_create(&def, &w)) != BP_OK) CHECK_ST(st, BP_ERR_NOMEM);
    const int dim = ws->dim;
    float *boxes = bpt_xrealloc(NULL, ws->n * 6 * sizeof(float));
    memcpy(boxes, ws->boxes, ws->n * (size_t)(2 * dim) * sizeof(float));
    bp_proxy_id *ids = bpt_xrealloc(NULL, ws->n * sizeof *ids);
    bp_proxy_id *mids = bpt_xrealloc(NULL, ws->n * sizeof *mids);
    float *mb = bpt_xrealloc(NULL, ws->n * 6 * sizeof(float));
    while ((st = dim == 2 ? bp_world_add_batch2(w, bpt_as2(boxes), ws->defs, ws->n, ids)
                          : bp_world_add_batch3(w, bpt_as3(boxes), ws->defs, ws->n, ids)) != BP_OK)
        CHECK_ST(st, BP_ERR_NOMEM);
    for (int f = 0; f < 9; ++f) {
        size_t m = 0;
        for (size_t k = 0; f > 0 && k < ws->n; ++k) {
            float *b = boxes + k * (size_t)(2 * dim);
            if (!wscript_moves(ws, f, k, b)) continue;
            mids[m] = ids[k];
            memcpy(mb + m * (size_t)(2 * dim), b, (size_t)(2 * dim) * sizeof(float));
            ++m;
        }
        while ((st = dim == 2 ? bp_world_move_batch2(w, mids, bpt_as2(mb), m) : bp_world_move_batch3(w, mids, bpt_as3(mb), m)) != BP_OK)
            CHECK_ST(st, BP_ERR_NOMEM);
        bp_world_events ev;
        int tries = 0;
        while ((st = bp_world_update(w, &ev)) != BP_OK) {
            CHECK_ST(st, BP_ERR_NOMEM);
            CHECK_OK(bp_world_validate(w));
            CHECK(++tries < 1000);
        }
        CHECK_OK(bp_world_validate(w));
        log_mark(l, 0, (size_t)f, 0);
        wlog_events(l, &ev);
        bp_world_stats stats;
        CHECK_OK(bp_world_get_stats(w, &stats));
        log_word(l, stats.pairs);
        log_word(l, stats.rebuilt);
    }
    bp_world_destroy(w);
    free(boxes);
    free(ids);
    free(mids);
    free(mb);
}

static void case_world(int argc, char **argv) {
    const int dim = bpt_dim_arg(argc, argv, 0);
    wscript ws;
    wscript_make(&ws, dim);
    inputs none = {0};  // the logs' marks name no input here
    tlog want = {0};
    config one = {0};
    one.workers = 1;
    wscript_run(&ws, &one, &want);
    CHECK(want.n > 1000);  // events to compare
    for (size_t k = 0; k < sizeof worker_counts / sizeof worker_counts[0]; ++k) {
        bpt_note("world: %d workers", worker_counts[k]);
        config c = {0};
        c.workers = worker_counts[k];
        tlog got = {0};
        wscript_run(&ws, &c, &got);
        log_expect_same("world", &want, &got, &none);
        log_free(&got);
    }
    for (int kind = SCHED_SERIAL; kind <= SCHED_THREADS; ++kind) {
        bpt_note("world: scheduler %d", kind);
        sched sc;
        memset(&sc, 0, sizeof sc);
        sc.kind = kind;
        sc.workers = 3;
        config c = {0};
        c.workers = 3;
        c.hooks = &sc;
        tlog got = {0};
        wscript_run(&ws, &c, &got);
        log_expect_same("world (scheduler)", &want, &got, &none);
        CHECK(atomic_load(&sc.enqueues) > 0);  // the probes or the rebuilds used the hooks
        log_free(&got);
    }
    // Refused allocations while 3 workers run: every refused call is retried and the events
    // match the run that never failed; nothing leaks.
    for (int round = 0; round < 3; ++round) {
        bpt_alloc al;
        memset(&al, 0, sizeof al);
        al.rng = bpt_rng_make(500 + (uint64_t)round);
        al.fail_rate = round == 0 ? 0.3 : 0.05;
        config c = {0};
        c.workers = 3;
        c.alloc = &al;
        tlog got = {0};
        bpt_note("world: refusing one allocation in %g", 1.0 / al.fail_rate);
        wscript_run(&ws, &c, &got);
        log_expect_same("world (refusals)", &want, &got, &none);
        CHECK(al.failures > 0);
        CHECK_EQ(al.live_blocks, 0);
        log_free(&got);
    }
    log_free(&want);
    wscript_free(&ws);
}

// The pool (src/pool.c) on its own threads: every task of a job runs once, on a worker number
// below the pool's; worker 1 claims from the job's end and the others from its front, so the
// tasks worker 1 ran are a suffix of the job whatever the timing (the shares it gets in one pass
// are the ones it tends to get in the next); a job of more than BP_POOL_MAX_TASKS is refused
// with nothing run. Task 0 holds its thread until the job's last task has run, so another worker
// always takes part.
typedef struct pool_probe {
    _Atomic uint32_t runs[2048];
    _Atomic uint32_t who[2048];
    uint32_t last;  // task 0 waits (up to 10 s) until this one has run: another worker must come
} pool_probe;

static void pool_probe_task(void *user, uint32_t t, uint32_t worker) {
    pool_probe *pp = user;
    if (t == 0 && pp->last > 0) {
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            sched_yield();
            clock_gettime(CLOCK_MONOTONIC, &now);
        } while (atomic_load(&pp->runs[pp->last]) == 0 && now.tv_sec - t0.tv_sec < 10);
    }
    atomic_store(&pp->who[t], worker);
    atomic_fetch_add(&pp->runs[t], 1);
}

static void case_pool(int argc, char **argv) {
    (void)argc;
    (void)argv;
    const bp_allocator al = {bp_default_alloc, bp_default_free, NULL};
    static pool_probe pp;
    static const uint32_t workers[] = {2, 3, 7};
    static const uint32_t sizes[] = {2, 3, 16, 100, 2048};
    for (size_t w = 0; w < sizeof workers / sizeof workers[0]; ++w) {
        bp_pool *pool = NULL;
        CHECK_OK(bp_pool_create(&al, workers[w], NULL, NULL, NULL, &pool));
        int by1 = 0;  // jobs where worker 1 ran a task
        for (int rep = 0; rep < 200; ++rep) {
            const uint32_t n = sizes[(size_t)rep % (sizeof sizes / sizeof sizes[0])];
            for (uint32_t t = 0; t < n; ++t) {
                atomic_store(&pp.runs[t], 0);
                atomic_store(&pp.who[t], UINT32_MAX);
            }
            pp.last = n - 1;
            CHECK_OK(bp_pool_run(pool, n, pool_probe_task, &pp));
            uint32_t first1 = n;  // the first task worker 1 ran
            for (uint32_t t = 0; t < n; ++t) {
                CHECK_MSG(atomic_load(&pp.runs[t]) == 1, "%u workers, %u tasks: task %u ran %u times", workers[w], n,
                          t, atomic_load(&pp.runs[t]));
                const uint32_t by = atomic_load(&pp.who[t]);
                CHECK_MSG(by < workers[w], "task %u on worker %u", t, by);
                if (by == 1 && first1 == n) first1 = t;
            }
            by1 += first1 < n;
            for (uint32_t t = first1; t < n; ++t)
                CHECK_MSG(atomic_load(&pp.who[t]) == 1, "%u workers, %u tasks: worker 1 ran task %u, not task %u",
                          workers[w], n, first1, t);
        }
        // With 2 workers the last task can only have been worker 1's, task 0 holding the caller.
        if (workers[w] == 2) CHECK_EQ(by1, 200);
        CHECK_EQ(bp_pool_run(pool, BP_POOL_MAX_TASKS + 1, pool_probe_task, &pp), BP_ERR_INVALID_ARG);
        bp_pool_destroy(pool);
    }
}

static const bpt_case cases[] = {
    {"same", case_same},         {"sorted", case_sorted},   {"hooks", case_hooks},
    {"nomem", case_nomem},       {"stopped", case_stopped}, {"auto", case_auto},
    {"bad_def", case_bad_def},   {"bad_hooks", case_bad_hooks}, {"warm", case_warm},
    {"crowd", case_crowd},       {"pool", case_pool},
    {"world", case_world},
};

BPT_MAIN(cases)
