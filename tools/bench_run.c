// `broadphase bench`: our stateless methods on the docs/scenes.md scenes. Each method replays the scene
// from frame 0 with its own warm context, so every method sees the same frames; frame 0 is an
// untimed warm-up, frames 1..F are timed around the broad-phase call only (moving objects and
// building boxes are not). Bench-only baselines: `naive-sweep` (seed 003's plain method,
// bench/naive_sweep.c), `sweep-resort` (the library's sweep without temporal coherence),
// `grid-sorted`, `quadtree-loose` and `memcpy` (one copy of the boxes: the floor).
#define _POSIX_C_SOURCE 200809L // clock_gettime(CLOCK_MONOTONIC)

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "peers.h"

double bm_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int bm_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bm_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct bm_span {
    float lo, hi;
} bm_span;

static int bm_cmp_span(const void *a, const void *b) {
    float x = ((const bm_span *)a)->lo, y = ((const bm_span *)b)->lo;
    return (x > y) - (x < y);
}

// Pairs overlapping on x: what the naive sweep tests (its active list holds exactly those).
// Returns -1 when out of memory.
static double bm_x_overlaps(const float *boxes, size_t n, int dim) {
    bm_span *s = malloc(n * sizeof *s);
    if (!s) return -1.0;
    size_t stride = 2 * (size_t)dim;
    for (size_t k = 0; k < n; ++k) {
        s[k].lo = boxes[k * stride];
        s[k].hi = boxes[k * stride + (size_t)dim];
    }
    qsort(s, n, sizeof *s, bm_cmp_span);
    double total = 0.0;
    for (size_t k = 0; k < n; ++k) {
        // Boxes after k in min order that start within box k's interval.
        size_t lo = k + 1, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].lo <= s[k].hi) lo = mid + 1;
            else hi = mid;
        }
        total += (double)(lo - k - 1);
    }
    free(s);
    return total;
}

static bool bm_reserve(bm_scratch *s, size_t need) {
    if (need <= s->cap) return true;
    size_t cap = need + need / 2;
    uint64_t *k = realloc(s->keys, cap * sizeof *k);
    if (!k) return false;
    s->keys = k;
    s->cap = cap;
    return true;
}

// Compares a method's pairs (any order) with the reference (sorted). Prints the first
// difference. Returns 1 on mismatch, 0 on match, -1 when out of memory.
static int bm_compare(const bp_pair *got, size_t ngot, const bp_pair *ref, size_t nref, bm_scratch *sc,
                      const char *where, const char *ref_name) {
    if (!bm_reserve(sc, ngot)) return -1;
    for (size_t k = 0; k < ngot; ++k) {
        uint32_t i = got[k].i, j = got[k].j;
        if (i >= j) {
            fprintf(stderr, "MISMATCH %s: pair (%u, %u) is not i < j\n", where, (unsigned)i, (unsigned)j);
            return 1;
        }
        sc->keys[k] = (uint64_t)i << 32 | j;
    }
    if (ngot > 1) qsort(sc->keys, ngot, sizeof *sc->keys, bm_cmp_u64); // never qsort(NULL, 0)
    size_t a = 0, b = 0;
    while (a < ngot || b < nref) {
        uint64_t rk = b < nref ? ((uint64_t)ref[b].i << 32 | ref[b].j) : UINT64_MAX;
        uint64_t gk = a < ngot ? sc->keys[a] : UINT64_MAX;
        if (gk == rk) {
            ++a;
            ++b;
            continue;
        }
        uint64_t k = gk < rk ? gk : rk;
        fprintf(stderr, "MISMATCH %s: %zu pairs, %s has %zu; first difference: (%u, %u) %s\n", where, ngot, ref_name, nref,
               (unsigned)(k >> 32), (unsigned)(k & 0xffffffffu),
               gk < rk ? "reported but not overlapping" : "missing");
        return 1;
    }
    return 0;
}

bp_status bm_lib_call(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    // The floats have exactly the bp_box2/bp_box3 layout (bp_scene_boxes).
    const void *b = boxes;
    return dim == 2 ? bp_find_pairs2(ctx, b, n, out) : bp_find_pairs3(ctx, b, n, out);
}

// Mean, median and worst of the timed frames (sorts `times`).
static void bm_finish(bm_result *res, double *times, size_t frames) {
    double total = 0.0, worst = 0.0;
    for (size_t f = 0; f < frames; ++f) {
        total += times[f];
        if (times[f] > worst) worst = times[f];
    }
    qsort(times, frames, sizeof *times, bm_cmp_double);
    res->mean_ms = total / (double)frames;
    res->median_ms = frames % 2 ? times[frames / 2] : (times[frames / 2 - 1] + times[frames / 2]) / 2.0;
    res->max_ms = worst;
    res->outcome = BM_RAN;
}

bool bm_frame_end(bm_result *res, double *times, size_t f, double t, size_t frames, const bm_mem *mem) {
    if (f > 0) times[f - 1] = t * 1e3;
    // A row not caught by an estimate: the first timed frame decides.
    if (f == 1 && t > BM_SKIP_SECONDS && frames > 1) {
        res->outcome = BM_SKIPPED;
        res->estimate_s = t;
        return true;
    }
    if (f < frames) return false;
    bm_finish(res, times, frames);
    if (mem) {
        res->peak_bytes = bm_mem_peak(mem);
        res->peak_known = true;
    }
    return true;
}

bool bm_skip_estimated(bm_result *res, const bm_method *m, const float *boxes, size_t n, int dim) {
    double estimate = bm_stateless_estimate(m, boxes, n, dim);
    if (estimate < BM_SKIP_SECONDS) return false;
    res->outcome = BM_SKIPPED;
    res->estimate_s = estimate;
    return true;
}

bp_status bm_reference_create(int dim, bp_method method, bp_context **ref) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = method;
    def.sort_pairs = true;  // bm_compare and bp_peer_compare want (i, j) order
    bp_status st = bp_context_create(&def, ref);
    if (st != BP_OK)
        fprintf(stderr, "broadphase bench: cannot create the reference context: %s\n", bp_status_string(st));
    return st;
}

int bm_peer_outcome(int prc, bm_result *res, const char *peer, const char *scene, size_t n, size_t f) {
    if (prc == 0) return 0;
    if (prc == BP_PEER_TOO_SLOW) {
        res->outcome = BM_SKIPPED;
        res->estimate_s = 0.0;  // stopped at the limit: only "over 5 s" is known
        return 1;
    }
    fprintf(stderr, "broadphase bench: %s on %s N = %zu frame %zu failed (out of memory?)\n", peer, scene, n, f);
    return -1;
}

int bm_scene_start(bm_result *res, bp_scene *scene, const bm_opts *o, bp_scene_kind kind, size_t n) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    if (bp_scene_init_kind(scene, kind, n, o->dim, o->seed) == 0) return 0;
    fprintf(stderr, "broadphase bench: cannot build scene %s with N = %zu (out of memory?)\n", bp_scene_name(kind), n);
    return -1;
}

void bm_mark_wrong(bm_result *res, size_t f, size_t missing, size_t extra) {
    if (!res->wrong) {
        res->wrong = true;
        res->wrong_frame = f;
        res->missing = missing;
        res->extra = extra;
    }
    ++res->wrong_frames;
}

bool bm_available(const bm_method *m) {
    return m->kind == BM_NAIVE || m->kind == BM_MEMCPY || bp_method_available(m->method);
}

bool bm_is_baseline(const bm_method *m) {
    return m->kind == BM_NAIVE || m->kind == BM_MEMCPY;
}

int bm_stateless_init(bm_stateless *s, const bm_method *m, const bm_opts *o, size_t n) {
    const int dim = o->dim;
    memset(s, 0, sizeof *s);
    s->m = m;
    s->dim = dim;
    bp_naive_sweep_init(&s->naive);
    if (m->kind == BM_MEMCPY) {
        s->copy = malloc(n * (size_t)(2 * dim) * sizeof *s->copy + 1);
        if (!s->copy) {
            fprintf(stderr, "broadphase bench: out of memory\n");
            return -1;
        }
    } else if (m->kind != BM_NAIVE) {
        bp_context_def def = bp_default_context_def();
        def.dimension = dim;
        def.method = m->method;
        if (m->kind == BM_RESORT) def.sweep.coherence = false;
        if (m->kind == BM_LOOSE) def.quadtree.loose = true;
        if (m->kind == BM_SORTED) def.grid.layout = BP_GRID_LAYOUT_SORTED;
        def.workers = o->workers;
        def.parallel_min = (size_t)o->parallel_min;
        bp_status st = bp_context_create(&def, &s->ctx);
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: %s: cannot create a context: %s\n", m->name, bp_status_string(st));
            return -1;
        }
    }
    return 0;
}

bp_status bm_stateless_step(bm_stateless *s, const float *boxes, size_t n, const bp_pair **pairs, size_t *count) {
    if (s->m->kind == BM_MEMCPY) {
        memcpy(s->copy, boxes, n * (size_t)(2 * s->dim) * sizeof *s->copy);
        *pairs = NULL;
        *count = 0;
        return BP_OK;
    }
    if (s->m->kind == BM_NAIVE) {
        if (bp_naive_sweep_run(&s->naive, boxes, n, s->dim) != 0) return BP_ERR_NOMEM;
        *pairs = s->naive.pairs;
        *count = s->naive.count;
        return BP_OK;
    }
    bp_pairs out;
    bp_status st = bm_lib_call(s->ctx, s->dim, boxes, n, &out);
    *pairs = out.pairs;
    *count = out.count;
    return st;
}

bp_status bm_stateless_timed(bm_stateless *s, const float *boxes, size_t slots, const char *scene, size_t n, size_t f,
                             const bp_pair **pairs, size_t *count, double *t) {
    double t0 = bm_now();
    bp_status st = bm_stateless_step(s, boxes, slots, pairs, count);
    *t = bm_now() - t0;
    if (st != BP_OK)
        fprintf(stderr, "broadphase bench: %s on %s N = %zu frame %zu: %s\n", s->m->name, scene, n, f,
                bp_status_string(st));
    return st;
}

uint64_t bm_stateless_checks(const bm_stateless *s) {
    if (s->m->kind == BM_NAIVE) return s->naive.checks;
    if (s->m->kind == BM_MEMCPY) return 0;
    bp_stats stats;
    if (bp_get_stats(s->ctx, &stats) != BP_OK) return 0;
    return stats.checks;
}

void bm_stateless_free(bm_stateless *s) {
    bp_context_destroy(s->ctx);
    bp_naive_sweep_free(&s->naive);
    free(s->copy);
    memset(s, 0, sizeof *s);
}

double bm_stateless_estimate(const bm_method *m, const float *boxes, size_t n, int dim) {
    if (m->kind == BM_LIB && m->method == BP_METHOD_BRUTE)
        return (double)n * (double)n / 2.0 * BM_BRUTE_NS_PER_CHECK * 1e-9;
    if (m->kind == BM_NAIVE) {
        double checks = bm_x_overlaps(boxes, n, dim);
        return checks < 0.0 ? -1.0 : checks * BM_NAIVE_NS_PER_CHECK * 1e-9;
    }
    return -1.0;
}

// --check of frame f: the reference's pairs against the method's. Returns 0, 1 on a mismatch
// (printed), -1 on an error (message printed).
static int bm_check_frame(const bm_opts *o, bp_context *ref, const char *sname, size_t n, const bm_method *m, size_t f,
                          const float *boxes, const bp_pair *pairs, size_t count, bm_scratch *sc) {
    const char *ref_name = n <= BM_CHECK_BRUTE_MAX ? "brute" : "sweep";
    bp_pairs want;
    bp_status st = bm_lib_call(ref, o->dim, boxes, n, &want);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase bench: reference %s: %s\n", ref_name, bp_status_string(st));
        return -1;
    }
    char where[160];
    snprintf(where, sizeof where, "scene %s dim %d N %zu method %s frame %zu", sname, o->dim, n, m->name, f);
    int c = bm_compare(pairs, count, want.pairs, want.count, sc, where, ref_name);
    if (c < 0) fprintf(stderr, "broadphase bench: out of memory in --check\n");
    return c;
}

// The frames of bm_run: frame 0 untimed, then each step timed around the method's call alone.
// `ref` (--check) or NULL. Returns as bm_run.
static int bm_run_frames(const bm_opts *o, bp_scene *scene, size_t n, bm_stateless *run, bp_context *ref,
                         float *boxes, double *times, bm_result *res, bm_scratch *sc, bm_mem *mem) {
    const char *sname = bp_scene_name(scene->kind);
    const size_t frames = (size_t)o->frames;
    bool mismatch = false;
    for (size_t f = 0;; ++f) {
        if (f > 0) {
            bp_scene_step(scene);
            bp_scene_boxes(scene, boxes);
        }
        const bp_pair *pairs;
        size_t count;
        double t;
        if (bm_stateless_timed(run, boxes, n, sname, n, f, &pairs, &count, &t) != BP_OK) return -1;
        if (ref && !mismatch) {
            int c = bm_check_frame(o, ref, sname, n, run->m, f, boxes, pairs, count, sc);
            if (c < 0) return -1;
            mismatch = c > 0;
        }
        if (f == frames) {
            res->pairs = count;
            res->checks = bm_stateless_checks(run);
        }
        if (bm_frame_end(res, times, f, t, frames, mem)) return mismatch ? 1 : 0;
    }
}

// Runs one stateless method on one stateless scene/N (bench.h).
int bm_run(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_method *m, bm_result *res, bm_scratch *sc,
           bm_mem *mem) {
    bp_scene scene;
    if (bm_scene_start(res, &scene, o, kind, n) != 0) return -1;
    int rc = -1;
    size_t frames = (size_t)o->frames;
    float *boxes = malloc(n * 2 * (size_t)o->dim * sizeof *boxes);
    double *times = malloc(frames * sizeof *times);
    bp_context *ref = NULL;
    bm_stateless run;
    memset(&run, 0, sizeof run);
    if (!boxes || !times) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bp_scene_boxes(&scene, boxes);
    if (mem) bm_mem_start(mem);

    // Skip what would surely take too long, before spending the time.
    if (bm_skip_estimated(res, m, boxes, n, o->dim)) {
        rc = 0;
        goto done;
    }
    if (bm_stateless_init(&run, m, o, n) != 0) goto done;
    bool check = o->check && !mem && m->kind != BM_MEMCPY;  // memcpy finds no pairs
    if (check && bm_reference_create(o->dim, n <= BM_CHECK_BRUTE_MAX ? BP_METHOD_BRUTE : BP_METHOD_SWEEP, &ref) != BP_OK)
        goto done;
    rc = bm_run_frames(o, &scene, n, &run, ref, boxes, times, res, sc, mem);
done:
    bm_stateless_free(&run);
    bp_context_destroy(ref);
    free(times);
    free(boxes);
    bp_scene_free(&scene);
    return rc;
}
