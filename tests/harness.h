// The test harness: no framework, a few macros and helpers shared by the library's tests.
//
// Each test executable holds a table of named cases and runs the one named on its command line
// (`test_oracle random sweep 2`), so CTest registers every case on its own and its summary
// counts real tests. A case that needs a method the build lacks exits with BPT_SKIP (CTest's
// SKIP_RETURN_CODE), so it shows as skipped, never as passed.
//
// Randomness comes from the splitmix64 of docs/scenes.md, seeded from $SEED or, by default, from a
// hash of the case's full command line (stable between runs), or from the suite's own fixed seed
// (BPT_MAIN_SEED). The seed is printed on failure: `SEED=<n> ./test_oracle random sweep 2` replays it.
//
// Everything is `static inline` so each test file uses what it needs without unused warnings.
#ifndef BP_TEST_HARNESS_H
#define BP_TEST_HARNESS_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"

#define BPT_SKIP 77

// ---------------------------------------------------------------------------------------------
// Failure reporting

static uint64_t bpt_seed;
static char bpt_case_name[256];
static char bpt_note_buf[512];  // what the test was doing, printed with a failure

/// Records what the test is doing now (trial, n, method), printed if a check fails.
static inline void bpt_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bpt_note_buf, sizeof bpt_note_buf, fmt, ap);
    va_end(ap);
}

// Prints the failure with the seed and leaves at once: _Exit skips the leak checker's report of
// whatever the aborted test still held, which would only bury the message.
static inline void bpt_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  case: %s\n  while: %s\n  replay: SEED=%" PRIu64 " <test> %s\n", bpt_case_name,
            bpt_note_buf[0] ? bpt_note_buf : "-", bpt_seed, bpt_case_name);
    fflush(stderr);
    _Exit(1);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) bpt_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                             \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) bpt_fail(__FILE__, __LINE__, __VA_ARGS__);                                    \
    } while (0)

/// Integer equality with both values printed.
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long bpt_a_ = (long long)(a), bpt_b_ = (long long)(b);                                \
        if (bpt_a_ != bpt_b_)                                                                      \
            bpt_fail(__FILE__, __LINE__, "CHECK_EQ(%s, %s): %lld != %lld", #a, #b, bpt_a_, bpt_b_); \
    } while (0)

/// A bp_status equal to the expected one, both printed by name.
#define CHECK_ST(expr, want)                                                                       \
    do {                                                                                           \
        bp_status bpt_s_ = (expr), bpt_w_ = (want);                                                \
        if (bpt_s_ != bpt_w_)                                                                      \
            bpt_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d (%s)", #expr, (int)bpt_s_, \
                     bp_status_string(bpt_s_), (int)bpt_w_, bp_status_string(bpt_w_));             \
    } while (0)

#define CHECK_OK(expr) CHECK_ST(expr, BP_OK)

// ---------------------------------------------------------------------------------------------
// Cases and main

typedef void bpt_fn(int argc, char **argv);
typedef struct bpt_case {
    const char *name;
    bpt_fn *fn;
} bpt_case;

static inline uint64_t bpt_hash(const char *s) {
    uint64_t h = 1469598103934665603u;  // FNV-1a
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/// Runs the case named by argv[1] with the remaining arguments. The seed (bpt_seed) is $SEED, else
/// `fixed` when it is not 0, else a hash of the command line.
static inline int bpt_main_seed(const bpt_case *cases, size_t count, int argc, char **argv, uint64_t fixed) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASE [ARGS...]\ncases:", argv[0]);
        for (size_t k = 0; k < count; ++k) fprintf(stderr, " %s", cases[k].name);
        fprintf(stderr, "\n");
        return 2;
    }
    size_t len = 0;
    bpt_case_name[0] = '\0';
    for (int a = 1; a < argc && len + 2 < sizeof bpt_case_name; ++a) {
        int w = snprintf(bpt_case_name + len, sizeof bpt_case_name - len, "%s%s", a > 1 ? " " : "", argv[a]);
        if (w < 0) break;
        len += (size_t)w;
        if (len >= sizeof bpt_case_name) len = sizeof bpt_case_name - 1;
    }
    const char *env = getenv("SEED");
    bpt_seed = env && *env ? strtoull(env, NULL, 0) : fixed ? fixed : bpt_hash(bpt_case_name) % 1000000007u;
    for (size_t k = 0; k < count; ++k) {
        if (strcmp(cases[k].name, argv[1]) == 0) {
            cases[k].fn(argc - 2, argv + 2);
            printf("ok: %s (seed %" PRIu64 ")\n", bpt_case_name, bpt_seed);
            return 0;
        }
    }
    fprintf(stderr, "unknown case '%s'\n", argv[1]);
    return 2;
}

static inline int bpt_main(const bpt_case *cases, size_t count, int argc, char **argv) {
    return bpt_main_seed(cases, count, argc, argv, 0);
}

#define BPT_MAIN(cases)                                                                            \
    int main(int argc, char **argv) { return bpt_main(cases, sizeof cases / sizeof cases[0], argc, argv); }

/// A main whose cases draw from one fixed seed unless $SEED is set, for the suites whose inputs
/// were chosen with that seed (test_quadtree, test_rdc and test_grid's bpt_main_seed: 1;
/// test_world_peers: 777; test_world_script: 20260113).
#define BPT_MAIN_SEED(cases, seed)                                                                 \
    int main(int argc, char **argv) { return bpt_main_seed(cases, sizeof cases / sizeof cases[0], argc, argv, seed); }

/// A case written as `int fn(void)` that returns 0, or nonzero after printing why it failed (the
/// form of test_grid.c, whose helpers report a failure by their return value): BPT_INT_CASE(fn)
/// defines `fn_case`, the bpt_fn that runs it and fails when it returns nonzero.
#define BPT_INT_CASE(fn)                                                                           \
    static void fn##_case(int argc, char **argv) {                                                 \
        (void)argc, (void)argv;                                                                    \
        CHECK_MSG(fn() == 0, "%s failed", #fn);                                                    \
    }

/// Parses a method argument; a method this build lacks skips the case (exit BPT_SKIP).
static inline bp_method bpt_method_arg(int argc, char **argv, int k) {
    bp_method m = BP_METHOD_AUTO;
    CHECK_MSG(k < argc, "missing method argument");
    CHECK_MSG(bp_method_from_name(argv[k], &m) == BP_OK, "unknown method '%s'", argv[k]);
    if (!bp_method_available(m)) {
        printf("skipped: method %s is not available in this build\n", argv[k]);
        exit(BPT_SKIP);
    }
    return m;
}

static inline int bpt_dim_arg(int argc, char **argv, int k) {
    CHECK_MSG(k < argc, "missing dimension argument");
    int d = atoi(argv[k]);
    CHECK_MSG(d == 2 || d == 3, "bad dimension '%s'", argv[k]);
    return d;
}

// ---------------------------------------------------------------------------------------------
// Random numbers: splitmix64 (docs/scenes.md)

typedef struct bpt_rng {
    uint64_t s;
} bpt_rng;

static inline uint64_t bpt_next(bpt_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static inline double bpt_u01(bpt_rng *r) { return (double)(bpt_next(r) >> 11) * 0x1.0p-53; }
static inline double bpt_uniform(bpt_rng *r, double a, double b) { return a + (b - a) * bpt_u01(r); }
/// Uniform integer in [0, n) (n > 0).
static inline size_t bpt_below(bpt_rng *r, size_t n) { return (size_t)(bpt_u01(r) * (double)n); }
static inline bool bpt_coin(bpt_rng *r, double p) { return bpt_u01(r) < p; }

static inline bpt_rng bpt_rng_make(uint64_t salt) {
    bpt_rng r = {bpt_seed * 0x9E3779B97F4A7C15u + salt};
    return r;
}

// ---------------------------------------------------------------------------------------------
// Memory that must not fail (the tests' own arrays)

static inline void *bpt_xrealloc(void *p, size_t bytes) {
    void *q = realloc(p, bytes ? bytes : 1);
    CHECK_MSG(q != NULL, "test out of memory (%zu bytes)", bytes);
    return q;
}

// ---------------------------------------------------------------------------------------------
// Boxes: flat floats, min[0..dim) then max[0..dim) per box (the layout of bp_box2 / bp_box3).

typedef struct bpt_boxes {
    float *v;
    size_t n, cap;
    int dim;
} bpt_boxes;

// cap counts floats: the same array serves 2D and 3D boxes in turn.
static inline void bpt_boxes_resize(bpt_boxes *b, int dim, size_t n) {
    b->dim = dim;
    const size_t floats = n * (size_t)(2 * dim);
    if (floats > b->cap) {
        b->v = bpt_xrealloc(b->v, floats * sizeof *b->v);
        b->cap = floats;
    }
    b->n = n;
}

static inline void bpt_boxes_free(bpt_boxes *b) {
    free(b->v);
    memset(b, 0, sizeof *b);
}

static inline float *bpt_box(const bpt_boxes *b, size_t k) { return b->v + k * (size_t)(2 * b->dim); }

static inline const bp_box2 *bpt_as2(const float *v) { return (const bp_box2 *)(const void *)v; }
static inline const bp_box3 *bpt_as3(const float *v) { return (const bp_box3 *)(const void *)v; }

/// The narrow tests in dimension d (2 or 3): boxes (lo then hi) against boxes, round shapes
/// (circle or sphere, by centre and radius) against round shapes and against boxes.
static inline bp_status bpt_test_boxes(int d, const float *a, const float *b, bool *hit) {
    return d == 2 ? bp_test_box2(bpt_as2(a), bpt_as2(b), hit) : bp_test_box3(bpt_as3(a), bpt_as3(b), hit);
}
static inline bp_status bpt_test_round(int d, const float *ca, float ra, const float *cb, float rb, bool *hit) {
    return d == 2 ? bp_test_circle(ca, ra, cb, rb, hit) : bp_test_sphere(ca, ra, cb, rb, hit);
}
static inline bp_status bpt_test_round_box(int d, const float *c, float r, const float *box, bool *hit) {
    return d == 2 ? bp_test_circle_box(c, r, bpt_as2(box), hit) : bp_test_sphere_box(c, r, bpt_as3(box), hit);
}

/// The closed overlap rule, written independently of the library.
static inline bool bpt_overlap(const float *a, const float *b, int d) {
    for (int k = 0; k < d; ++k)
        if (!(a[k] <= b[d + k] && b[k] <= a[d + k])) return false;
    return true;
}

/// Sets box k to the centre c +- half extents h (computed in double, rounded to float, so min
/// <= max always holds).
static inline void bpt_set_box(float *box, int d, const double *c, const double *h) {
    for (int a = 0; a < d; ++a) {
        box[a] = (float)(c[a] - h[a]);
        box[d + a] = (float)(c[a] + h[a]);
        if (box[a] > box[d + a]) box[a] = box[d + a];
    }
}

/// n random boxes in [0, world]^d, half extents log-uniform in [hmin, hmax] per box and axis
/// (hmin 0 gives some points).
static inline void bpt_random_boxes(bpt_rng *r, bpt_boxes *b, int d, size_t n, double world, double hmin,
                                    double hmax) {
    bpt_boxes_resize(b, d, n);
    for (size_t k = 0; k < n; ++k) {
        double c[3], h[3];
        for (int a = 0; a < d; ++a) {
            c[a] = bpt_uniform(r, 0.0, world);
            if (hmin <= 0.0 && bpt_coin(r, 0.05)) h[a] = 0.0;
            else {
                double lo = hmin > 0.0 ? hmin : hmax * 1e-4;
                h[a] = exp(bpt_uniform(r, log(lo), log(hmax)));
            }
        }
        bpt_set_box(bpt_box(b, k), d, c, h);
    }
}

/// Small random moves of every box (temporal coherence): each moves by up to `step` per axis.
static inline void bpt_jiggle(bpt_rng *r, bpt_boxes *b, double step) {
    const int d = b->dim;
    for (size_t k = 0; k < b->n; ++k) {
        float *box = bpt_box(b, k);
        for (int a = 0; a < d; ++a) {
            double m = bpt_uniform(r, -step, step);
            float lo = (float)((double)box[a] + m), hi = (float)((double)box[d + a] + m);
            box[a] = lo <= hi ? lo : hi;
            box[d + a] = hi;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pair sets: pairs packed as (i << 32) | j.

typedef struct bpt_pairs {
    uint64_t *k;
    size_t n, cap;
} bpt_pairs;

static inline void bpt_pairs_push(bpt_pairs *p, uint32_t i, uint32_t j) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->k = bpt_xrealloc(p->k, p->cap * sizeof *p->k);
    }
    p->k[p->n++] = ((uint64_t)i << 32) | j;
}

static inline void bpt_pairs_free(bpt_pairs *p) {
    free(p->k);
    memset(p, 0, sizeof *p);
}

static inline int bpt_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/// Three-way comparison of the key pairs (a0, a1) and (b0, b1), the first key first: the order
/// of pairs (i, j) that qsort and bsearch comparators of pair structs return.
static inline int bpt_cmp_keys(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
    if (a0 != b0) return a0 < b0 ? -1 : 1;
    return (a1 > b1) - (a1 < b1);
}

static inline void bpt_pairs_sort(bpt_pairs *p) {
    if (p->n > 1) qsort(p->k, p->n, sizeof *p->k, bpt_cmp_u64);
}

static inline bool bpt_pairs_sorted(const bpt_pairs *p) {
    for (size_t k = 1; k < p->n; ++k)
        if (p->k[k - 1] >= p->k[k]) return false;
    return true;
}

/// Brute force over all pairs of one set (i < j), the test's own oracle; sorted.
static inline void bpt_brute(const float *v, size_t n, int d, bpt_pairs *out) {
    out->n = 0;
    const size_t s = (size_t)(2 * d);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
            if (bpt_overlap(v + i * s, v + j * s, d)) bpt_pairs_push(out, (uint32_t)i, (uint32_t)j);
}

/// Brute force of A x B: (i, j) with a[i] overlapping b[j]; sorted.
static inline void bpt_brute_between(const float *a, size_t na, const float *b, size_t nb, int d, bpt_pairs *out) {
    out->n = 0;
    const size_t s = (size_t)(2 * d);
    for (size_t i = 0; i < na; ++i)
        for (size_t j = 0; j < nb; ++j)
            if (bpt_overlap(a + i * s, b + j * s, d)) bpt_pairs_push(out, (uint32_t)i, (uint32_t)j);
}

static inline void bpt_print_box(const char *label, const float *box, int d) {
    fprintf(stderr, "  %s: min (", label);
    for (int a = 0; a < d; ++a) fprintf(stderr, "%s%.9g", a ? ", " : "", (double)box[a]);
    fprintf(stderr, ") max (");
    for (int a = 0; a < d; ++a) fprintf(stderr, "%s%.9g", a ? ", " : "", (double)box[d + a]);
    fprintf(stderr, ")\n");
}

/// Compares a result with the oracle (both sorted, duplicates an error) and fails with the first
/// difference and its boxes. `a`/`b` are the two sets the indices refer to (the same for
/// all-pairs calls).
static inline void bpt_pairs_expect(const char *what, const bpt_pairs *want, const bpt_pairs *got, const float *a,
                                    const float *b, int d, const char *file, int line) {
    const size_t s = (size_t)(2 * d);
    for (size_t k = 1; k < got->n; ++k)
        if (got->k[k - 1] == got->k[k])
            bpt_fail(file, line, "%s: pair (%u, %u) reported twice", what, (unsigned)(got->k[k] >> 32),
                     (unsigned)got->k[k]);
    size_t x = 0, y = 0;
    while (x < want->n && y < got->n && want->k[x] == got->k[y]) ++x, ++y;
    if (x == want->n && y == got->n) return;
    bool missing = y == got->n || (x < want->n && want->k[x] < got->k[y]);
    uint64_t p = missing ? want->k[x] : got->k[y];
    uint32_t i = (uint32_t)(p >> 32), j = (uint32_t)p;
    fprintf(stderr, "%s: %zu pairs expected, %zu got; first difference: (%u, %u) %s\n", what, want->n, got->n, i, j,
            missing ? "missing" : "extra (or out of range)");
    bpt_print_box("box i", a + (size_t)i * s, d);
    bpt_print_box("box j", b + (size_t)j * s, d);
    bpt_fail(file, line, "%s: pair sets differ", what);
}

#define BPT_EXPECT_PAIRS(what, want, got, a, b, d) bpt_pairs_expect(what, want, got, a, b, d, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------
// Calling the library in every delivery mode

typedef enum bpt_delivery { BPT_BUFFER, BPT_CALLBACK } bpt_delivery;

typedef struct bpt_collect {
    bpt_pairs *into;
    size_t batches;
    size_t stop_after;  // stop (return false) after this many batches; 0 = never
} bpt_collect;

static inline bool bpt_collect_fn(const bp_pair *pairs, size_t count, void *user) {
    bpt_collect *c = user;
    CHECK(count > 0);
    for (size_t k = 0; k < count; ++k) bpt_pairs_push(c->into, pairs[k].i, pairs[k].j);
    c->batches++;
    return !(c->stop_after && c->batches >= c->stop_after);
}

/// Appends the pairs of a buffered call's result to `got` and returns its status: a failed call
/// must report no pairs, a successful one a buffer wherever it reports any.
static inline bp_status bpt_take_pairs(bp_status st, const bp_pairs *out, bpt_pairs *got) {
    if (st != BP_OK) {
        CHECK_EQ(out->count, 0);
        return st;
    }
    CHECK(out->count == 0 || out->pairs != NULL);
    for (size_t k = 0; k < out->count; ++k) bpt_pairs_push(got, out->pairs[k].i, out->pairs[k].j);
    return st;
}

/// Finds the pairs of n boxes in the given mode, appending them in delivery order to `got`
/// (cleared first).
static inline bp_status bpt_find(bp_context *ctx, int d, const float *v, size_t n, bpt_delivery mode, bpt_pairs *got) {
    got->n = 0;
    if (mode == BPT_BUFFER) {
        bp_pairs out;
        out.pairs = (const bp_pair *)(uintptr_t)1;  // must be overwritten
        out.count = 12345;
        bp_status st = d == 2 ? bp_find_pairs2(ctx, bpt_as2(v), n, &out) : bp_find_pairs3(ctx, bpt_as3(v), n, &out);
        return bpt_take_pairs(st, &out, got);
    }
    bpt_collect c = {got, 0, 0};
    return d == 2 ? bp_find_pairs2_cb(ctx, bpt_as2(v), n, bpt_collect_fn, &c)
                  : bp_find_pairs3_cb(ctx, bpt_as3(v), n, bpt_collect_fn, &c);
}

static inline bp_status bpt_find_between(bp_context *ctx, int d, const float *a, size_t na, const float *b, size_t nb,
                                         bpt_pairs *got) {
    got->n = 0;
    bp_pairs out;
    bp_status st = d == 2 ? bp_find_pairs_between2(ctx, bpt_as2(a), na, bpt_as2(b), nb, &out)
                          : bp_find_pairs_between3(ctx, bpt_as3(a), na, bpt_as3(b), nb, &out);
    return bpt_take_pairs(st, &out, got);
}

/// Checks a delivered all-pairs result against the oracle: every pair has i < j < n, sorted when
/// asked, no duplicates, the same set. Sorts `got`.
static inline void bpt_check_result(const char *what, bpt_pairs *got, const float *v, size_t n, int d, bool sorted,
                                    bpt_pairs *scratch) {
    for (size_t k = 0; k < got->n; ++k) {
        uint32_t i = (uint32_t)(got->k[k] >> 32), j = (uint32_t)got->k[k];
        CHECK_MSG(i < j && j < n, "%s: pair (%u, %u) not canonical or out of range (n = %zu)", what, i, j, n);
    }
    if (sorted) CHECK_MSG(bpt_pairs_sorted(got), "%s: sort_pairs set but the pairs are not sorted", what);
    bpt_pairs_sort(got);
    bpt_brute(v, n, d, scratch);
    BPT_EXPECT_PAIRS(what, scratch, got, v, v, d);
}

/// Creates a context for the method and dimension (and options from `base`, if not NULL).
static inline bp_context *bpt_context(bp_method m, int d, const bp_context_def *base) {
    bp_context_def def = base ? *base : bp_default_context_def();
    def.dimension = d;
    def.method = m;
    bp_context *ctx = NULL;
    CHECK_OK(bp_context_create(&def, &ctx));
    CHECK(ctx != NULL);
    return ctx;
}

// ---------------------------------------------------------------------------------------------
// Debug drawing

/// What bp_debug_draw_structure drew, with bpt_draw_box as the box callback and a bpt_draw (dim
/// set) as its user pointer: the boxes, those at level 0 and the last of them (a grid's window),
/// the deepest level, and whether any box was inverted or not finite or any level negative.
typedef struct bpt_draw {
    int dim;
    size_t boxes, level0;
    int top;
    float wlo[3], whi[3];
    bool bad;
} bpt_draw;

static inline void bpt_draw_box(const float *lo, const float *hi, int level, void *user) {
    bpt_draw *d = user;
    d->boxes++;
    for (int a = 0; a < d->dim; ++a)
        if (!(lo[a] <= hi[a]) || !isfinite(lo[a]) || !isfinite(hi[a])) d->bad = true;
    if (level < 0) d->bad = true;
    if (level > d->top) d->top = level;
    if (level == 0) {
        d->level0++;
        memcpy(d->wlo, lo, (size_t)d->dim * sizeof *lo);
        memcpy(d->whi, hi, (size_t)d->dim * sizeof *hi);
    }
}

// ---------------------------------------------------------------------------------------------
// The counting, failing allocator (fault injection and leak checks)

typedef struct bpt_alloc {
    size_t live_bytes, live_blocks;
    size_t peak_bytes;  // the most live at once
    size_t allocs;      // allocation calls so far (failed ones included)
    size_t fail_at;     // fail the allocation with this number (1-based); 0 = never
    size_t failures;    // allocations refused so far
    double fail_rate;   // chaos: refuse each allocation with this probability (0 = never)
    bpt_rng rng;
} bpt_alloc;

// Each block carries a header with its size and a tag, so a free with the wrong size or a
// foreign pointer is caught at once.
#define BPT_HDR 64
#define BPT_TAG 0xB0A7C0DEu

static inline void *bpt_alloc_fn(size_t size, size_t align, void *user) {
    bpt_alloc *a = user;
    CHECK_MSG(align > 0 && (align & (align - 1)) == 0 && align <= 64, "bad alignment %zu", align);
    CHECK_MSG(size > 0, "zero-size allocation");
    a->allocs++;
    if ((a->fail_at && a->allocs == a->fail_at) || (a->fail_rate > 0.0 && bpt_coin(&a->rng, a->fail_rate))) {
        a->failures++;
        return NULL;
    }
    if (size > SIZE_MAX - 2 * BPT_HDR) return NULL;
    unsigned char *raw = malloc(size + 2 * BPT_HDR);
    if (!raw) return NULL;
    uintptr_t u = ((uintptr_t)raw + BPT_HDR + 63) & ~(uintptr_t)63;
    unsigned char *p = (unsigned char *)raw + (u - (uintptr_t)raw);
    size_t meta[3] = {size, (size_t)BPT_TAG, (size_t)(p - raw)};
    memcpy(p - sizeof meta, meta, sizeof meta);
    a->live_bytes += size;
    a->live_blocks++;
    if (a->live_bytes > a->peak_bytes) a->peak_bytes = a->live_bytes;
    return p;
}

static inline void bpt_free_fn(void *ptr, size_t size, void *user) {
    bpt_alloc *a = user;
    CHECK_MSG(ptr != NULL, "free of NULL through the hook");
    unsigned char *p = ptr;
    size_t meta[3];
    memcpy(meta, p - sizeof meta, sizeof meta);
    CHECK_MSG(meta[1] == (size_t)BPT_TAG, "free of a pointer the hook did not allocate");
    CHECK_MSG(meta[0] == size, "free with size %zu of a block of %zu bytes", size, meta[0]);
    CHECK(a->live_blocks > 0 && a->live_bytes >= size);
    a->live_bytes -= size;
    a->live_blocks--;
    meta[1] = 0;
    memcpy(p - sizeof meta, meta, sizeof meta);
    free(p - meta[2]);
}

static inline bp_allocator bpt_allocator(bpt_alloc *a) {
    bp_allocator al = {bpt_alloc_fn, bpt_free_fn, a};
    return al;
}

/// The context's byte count (bp_get_stats) must equal what the hook has handed out.
static inline void bpt_check_bytes(const bp_context *ctx, const bpt_alloc *a) {
    bp_stats s;
    CHECK_OK(bp_get_stats(ctx, &s));
    CHECK_MSG(s.bytes == a->live_bytes, "bp_get_stats().bytes %zu != allocator live bytes %zu", s.bytes,
              a->live_bytes);
}

#endif
