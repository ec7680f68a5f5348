// `broadphase bench`: the SCENES.md benchmark. Each method replays the scene from frame 0 with its
// own warm context, so every method sees the same frames; frame 0 is an untimed warm-up, frames
// 1..F are timed around the broad-phase call only (moving objects and building boxes are not).
// Bench-only baselines: `naive-sweep` (seed 003's plain method, bench/naive_sweep.c) and
// `sweep-resort` (the library's sweep without temporal coherence).
#define _POSIX_C_SOURCE 200809L // clock_gettime(CLOCK_MONOTONIC)

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "naive_sweep.h"
#include "scene.h"

// A method is skipped at a size where a frame would take more than this.
#define BM_SKIP_SECONDS 5.0
// Cost model for methods whose candidate checks can be counted before running them (brute force:
// n^2 / 2; naive-sweep: the pairs overlapping on x, which its active list walks). Measured on the
// development machine (Release, AMD EPYC, gcc 12): brute 0.8-0.9 ns per check, naive-sweep 7-9 ns per
// check with its qsort; rounded so that brute force is skipped from N = 100,000 on.
#define BM_BRUTE_NS_PER_CHECK 1.0
#define BM_NAIVE_NS_PER_CHECK 5.0
// --check compares with brute force up to this many boxes, with sweep above.
#define BM_CHECK_BRUTE_MAX 20000

typedef enum { BM_LIB, BM_RESORT, BM_NAIVE } bm_kind;

typedef struct bm_method {
    const char *name;
    bm_kind kind;
    bp_method method;
} bm_method;

// Every method in table order: the baseline first.
static const bm_method bm_methods[] = {
    {"naive-sweep", BM_NAIVE, BP_METHOD_SWEEP},  {"brute", BM_LIB, BP_METHOD_BRUTE},
    {"sweep", BM_LIB, BP_METHOD_SWEEP},          {"sweep-resort", BM_RESORT, BP_METHOD_SWEEP},
    {"grid", BM_LIB, BP_METHOD_GRID},            {"quadtree", BM_LIB, BP_METHOD_QUADTREE},
    {"rdc", BM_LIB, BP_METHOD_RDC},              {"auto", BM_LIB, BP_METHOD_AUTO},
};
#define BM_METHOD_COUNT (sizeof bm_methods / sizeof bm_methods[0])

static bool bm_available(const bm_method *m) { return m->kind == BM_NAIVE || bp_method_available(m->method); }

typedef enum { BM_RAN, BM_SKIPPED, BM_FAILED } bm_outcome;

typedef struct bm_result {
    bm_outcome outcome;
    double mean_ms, median_ms, max_ms;
    double estimate_s;  // skipped: the estimated seconds per frame
    uint64_t pairs, checks;
} bm_result;

typedef struct bm_opts {
    bool scenes[BP_SCENE_COUNT];
    bool scene_given;
    size_t ns[32];
    size_t n_count;
    int dim;
    bool methods[BM_METHOD_COUNT];
    bool method_given;
    int frames;
    bool csv;
    uint64_t seed;
    bool check;
} bm_opts;

// Scratch reused across frames and methods for --check.
typedef struct bm_scratch {
    uint64_t *keys;
    size_t cap;
} bm_scratch;

static double bm_now(void) {
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
    qsort(sc->keys, ngot, sizeof *sc->keys, bm_cmp_u64);
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

static bp_status bm_lib_call(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    // The floats have exactly the bp_box2/bp_box3 layout (bp_scene_boxes).
    const void *b = boxes;
    return dim == 2 ? bp_find_pairs2(ctx, b, n, out) : bp_find_pairs3(ctx, b, n, out);
}

// Runs one method on one scene/N. Returns 0, or 1 when --check found a mismatch (the result is
// still filled), or -1 on a library or memory error (message printed).
static int bm_run(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_method *m, bm_result *res,
                  bm_scratch *sc) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    const char *sname = bp_scene_name(kind);
    bp_scene scene;
    if (bp_scene_init_kind(&scene, kind, n, o->dim, o->seed) != 0) {
        fprintf(stderr, "broadphase bench: cannot build scene %s with N = %zu (out of memory?)\n", sname, n);
        return -1;
    }
    int rc = -1;
    size_t frames = (size_t)o->frames;
    float *boxes = malloc(n * 2 * (size_t)o->dim * sizeof *boxes);
    double *times = malloc(frames * sizeof *times);
    bp_context *ctx = NULL, *ref = NULL;
    bp_naive_sweep naive;
    bp_naive_sweep_init(&naive);
    if (!boxes || !times) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bp_scene_boxes(&scene, boxes);

    // Skip what would surely take too long, before spending the time.
    double est_checks = -1.0, ns_per_check = 0.0;
    if (m->kind == BM_LIB && m->method == BP_METHOD_BRUTE) {
        est_checks = (double)n * (double)n / 2.0;
        ns_per_check = BM_BRUTE_NS_PER_CHECK;
    } else if (m->kind == BM_NAIVE) {
        est_checks = bm_x_overlaps(boxes, n, o->dim);
        ns_per_check = BM_NAIVE_NS_PER_CHECK;
    }
    if (est_checks >= 0.0 && est_checks * ns_per_check * 1e-9 >= BM_SKIP_SECONDS) {
        res->outcome = BM_SKIPPED;
        res->estimate_s = est_checks * ns_per_check * 1e-9;
        rc = 0;
        goto done;
    }

    bp_status st;
    if (m->kind != BM_NAIVE) {
        bp_context_def def = bp_default_context_def();
        def.dimension = o->dim;
        def.method = m->method;
        if (m->kind == BM_RESORT) def.sweep.coherence = false;
        st = bp_context_create(&def, &ctx);
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: %s: cannot create a context: %s\n", m->name, bp_status_string(st));
            goto done;
        }
    }
    const char *ref_name = n <= BM_CHECK_BRUTE_MAX ? "brute" : "sweep";
    if (o->check) {
        bp_context_def def = bp_default_context_def();
        def.dimension = o->dim;
        def.method = n <= BM_CHECK_BRUTE_MAX ? BP_METHOD_BRUTE : BP_METHOD_SWEEP;
        def.sort_pairs = true;
        st = bp_context_create(&def, &ref);
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: cannot create the reference context: %s\n", bp_status_string(st));
            goto done;
        }
    }

    bool mismatch = false;
    for (size_t f = 0; f <= frames; ++f) {
        if (f > 0) {
            bp_scene_step(&scene);
            bp_scene_boxes(&scene, boxes);
        }
        const bp_pair *pairs;
        size_t count;
        double t0 = bm_now();
        if (m->kind == BM_NAIVE) {
            if (bp_naive_sweep_run(&naive, boxes, n, o->dim) != 0) {
                fprintf(stderr, "broadphase bench: naive-sweep: out of memory\n");
                goto done;
            }
            pairs = naive.pairs;
            count = naive.count;
        } else {
            bp_pairs out;
            st = bm_lib_call(ctx, o->dim, boxes, n, &out);
            if (st != BP_OK) {
                fprintf(stderr, "broadphase bench: %s on %s N = %zu frame %zu: %s\n", m->name, sname, n, f,
                        bp_status_string(st));
                goto done;
            }
            pairs = out.pairs;
            count = out.count;
        }
        double t = bm_now() - t0;
        if (f > 0) times[f - 1] = t * 1e3;
        if (o->check && !mismatch) {
            bp_pairs want;
            st = bm_lib_call(ref, o->dim, boxes, n, &want);
            if (st != BP_OK) {
                fprintf(stderr, "broadphase bench: reference %s: %s\n", ref_name, bp_status_string(st));
                goto done;
            }
            char where[160];
            snprintf(where, sizeof where, "scene %s dim %d N %zu method %s frame %zu", sname, o->dim, n, m->name, f);
            int c = bm_compare(pairs, count, want.pairs, want.count, sc, where, ref_name);
            if (c < 0) {
                fprintf(stderr, "broadphase bench: out of memory in --check\n");
                goto done;
            }
            if (c > 0) mismatch = true;
        }
        if (f == frames) {
            res->pairs = count;
            if (m->kind == BM_NAIVE) {
                res->checks = naive.checks;
            } else {
                bp_stats stats;
                bp_get_stats(ctx, &stats);
                res->checks = stats.checks;
            }
        }
        // A method not caught by the estimate: the first timed frame decides.
        if (f == 1 && t > BM_SKIP_SECONDS && frames > 1) {
            res->outcome = BM_SKIPPED;
            res->estimate_s = t;
            rc = mismatch ? 1 : 0;
            goto done;
        }
    }
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
    rc = mismatch ? 1 : 0;
done:
    bp_context_destroy(ctx);
    bp_context_destroy(ref);
    bp_naive_sweep_free(&naive);
    free(times);
    free(boxes);
    bp_scene_free(&scene);
    return rc;
}

static const char bm_usage[] =
    "usage: broadphase bench [--scene NAME|all] [--n N[,N...]] [--dim 2|3] [--method NAME[,NAME...]|all]\n"
    "                        [--frames F] [--format table|csv] [--seed S] [--check]\n"
    "\n"
    "Times the broad phase on the scenes of SCENES.md: each method replays the scene from frame 0\n"
    "with its own context (frame 0 is an untimed warm-up) and is timed, with a monotonic clock,\n"
    "around the pair-finding call after each of frames 1..F. Reported per method: mean ms per\n"
    "frame (total / F, the headline), median and worst frame, the pairs and the candidate checks\n"
    "at frame F, and (table) the speed-up over naive-sweep in the same run.\n"
    "\n"
    "  --scene NAME   uniform, clustered, mixed, line, seed, or all; a comma list works too\n"
    "                 (default: seed at N = 500 and uniform at N = 100000)\n"
    "  --n N,...      object counts (default: 500 for seed, 100000 for the others)\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --method LIST  comma list of brute, sweep, grid, quadtree, rdc, auto and the bench-only\n"
    "                 naive-sweep (seed 003's plain sort-and-sweep: qsort + active list) and\n"
    "                 sweep-resort (sweep without temporal coherence); 'all' (default) is every\n"
    "                 one this build has\n"
    "  --frames F     timed frames (default 20)\n"
    "  --format FMT   table (default) or csv with the columns\n"
    "                 scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks\n"
    "                 (a skipped method has empty time, pair and check fields)\n"
    "  --seed S       scene seed (default 1)\n"
    "  --check        compare every frame's pair set with brute force (N <= 20000) or sweep;\n"
    "                 a mismatch is printed and makes the exit status 1\n"
    "  --help         this text\n"
    "\n"
    "A method that would take more than 5 s per frame (estimated from its candidate count, or\n"
    "measured on the first frame) is skipped at that size.\n";

static bool bm_parse_scenes(const char *v, bm_opts *o) {
    if (strcmp(v, "all") == 0) {
        for (int k = 0; k < BP_SCENE_COUNT; ++k) o->scenes[k] = true;
        return true;
    }
    char buf[256];
    if (strlen(v) >= sizeof buf) return false;
    strcpy(buf, v);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        bp_scene_kind kind;
        if (bp_scene_from_name(tok, &kind) != 0) {
            fprintf(stderr, "broadphase bench: unknown scene '%s' (uniform, clustered, mixed, line, seed, all)\n", tok);
            return false;
        }
        o->scenes[kind] = true;
    }
    return true;
}

static bool bm_parse_methods(const char *v, bm_opts *o) {
    if (strcmp(v, "all") == 0) {
        for (size_t k = 0; k < BM_METHOD_COUNT; ++k) o->methods[k] = bm_available(&bm_methods[k]);
        return true;
    }
    char buf[256];
    if (strlen(v) >= sizeof buf) return false;
    strcpy(buf, v);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        size_t k = 0;
        while (k < BM_METHOD_COUNT && strcmp(bm_methods[k].name, tok) != 0) ++k;
        if (k == BM_METHOD_COUNT) {
            fprintf(stderr,
                    "broadphase bench: unknown method '%s' (brute, sweep, grid, quadtree, rdc, auto, naive-sweep, "
                    "sweep-resort, all)\n",
                    tok);
            return false;
        }
        if (!bm_available(&bm_methods[k])) {
            fprintf(stderr, "broadphase bench: method '%s' is not available in this build\n", tok);
            return false;
        }
        o->methods[k] = true;
    }
    return true;
}

static bool bm_parse_ns(const char *v, bm_opts *o) {
    char buf[512];
    if (strlen(v) >= sizeof buf) return false;
    strcpy(buf, v);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        uint64_t n;
        if (!bp_parse_u64(tok, &n) || n < 1 || n > BP_MAX_BOXES) {
            fprintf(stderr, "broadphase bench: --n wants counts from 1 to %zu, not '%s'\n", BP_MAX_BOXES, tok);
            return false;
        }
        if (o->n_count == sizeof o->ns / sizeof o->ns[0]) {
            fprintf(stderr, "broadphase bench: too many --n values\n");
            return false;
        }
        o->ns[o->n_count++] = (size_t)n;
    }
    return true;
}

static void bm_print_block(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_result *res) {
    const bm_result *base = NULL;
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k)
        if (o->methods[k] && bm_methods[k].kind == BM_NAIVE && res[k].outcome == BM_RAN) base = &res[k];
    printf("\n%s  %dD  N = %zu  frames %d  seed %llu\n", bp_scene_name(kind), o->dim, n, o->frames,
           (unsigned long long)o->seed);
    printf("%-14s %11s %11s %11s %12s %14s %12s\n", "method", "mean ms", "median ms", "max ms", "pairs", "checks",
           "vs naive");
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k]) continue;
        const bm_result *r = &res[k];
        if (r->outcome == BM_SKIPPED) {
            printf("%-14s skipped (>5 s/frame; about %.3g s)\n", bm_methods[k].name, r->estimate_s);
            continue;
        }
        if (r->outcome == BM_FAILED) {
            printf("%-14s failed\n", bm_methods[k].name);
            continue;
        }
        char ratio[32] = "-";
        if (base && r->mean_ms > 0.0) snprintf(ratio, sizeof ratio, "%.2fx", base->mean_ms / r->mean_ms);
        printf("%-14s %11.3f %11.3f %11.3f %12llu %14llu %12s\n", bm_methods[k].name, r->mean_ms, r->median_ms,
               r->max_ms, (unsigned long long)r->pairs, (unsigned long long)r->checks, ratio);
    }
}

static void bm_print_csv(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_method *m, const bm_result *r) {
    printf("%s,%d,%zu,%s,1,%d,", bp_scene_name(kind), o->dim, n, m->name, o->frames);
    if (r->outcome == BM_RAN)
        printf("%.4f,%.4f,%.4f,%llu,%llu\n", r->mean_ms, r->median_ms, r->max_ms, (unsigned long long)r->pairs,
               (unsigned long long)r->checks);
    else
        printf(",,,,\n");
}

static int bm_block(const bm_opts *o, bp_scene_kind kind, size_t n, bm_scratch *sc, bool *mismatch) {
    bm_result res[BM_METHOD_COUNT];
    memset(res, 0, sizeof res);
    int status = BP_EXIT_OK;
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k]) continue;
        int rc = bm_run(o, kind, n, &bm_methods[k], &res[k], sc);
        if (rc < 0) status = BP_EXIT_FAIL;
        if (rc > 0) *mismatch = true;
        if (o->csv) bm_print_csv(o, kind, n, &bm_methods[k], &res[k]);
        fflush(stdout);
    }
    if (!o->csv) bm_print_block(o, kind, n, res);
    fflush(stdout);
    return status;
}

int bp_cmd_bench(int argc, char **argv) {
    for (int k = 2; k < argc; ++k) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            fputs(bm_usage, stdout);
            return BP_EXIT_OK;
        }
    }
    bm_opts o;
    memset(&o, 0, sizeof o);
    o.dim = 2;
    o.frames = 20;
    o.seed = 1;
    bp_args a = {argc, argv, 2, NULL};
    for (; a.k < argc; ++a.k) {
        const char *s = argv[a.k], *v;
        if (bp_arg_is(&a, "--scene")) {
            if (!(v = bp_arg_value(&a, "--scene")) || !bm_parse_scenes(v, &o)) return BP_EXIT_USAGE;
            o.scene_given = true;
        } else if (bp_arg_is(&a, "--n")) {
            if (!(v = bp_arg_value(&a, "--n")) || !bm_parse_ns(v, &o)) return BP_EXIT_USAGE;
        } else if (bp_arg_is(&a, "--dim")) {
            if (!(v = bp_arg_value(&a, "--dim")) || !bp_parse_dim(v, &o.dim)) return BP_EXIT_USAGE;
        } else if (bp_arg_is(&a, "--method")) {
            if (!(v = bp_arg_value(&a, "--method")) || !bm_parse_methods(v, &o)) return BP_EXIT_USAGE;
            o.method_given = true;
        } else if (bp_arg_is(&a, "--frames")) {
            uint64_t f;
            if (!(v = bp_arg_value(&a, "--frames"))) return BP_EXIT_USAGE;
            if (!bp_parse_u64(v, &f) || f < 1 || f > 1000000) {
                fprintf(stderr, "broadphase bench: --frames wants a count from 1 to 1000000, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
            o.frames = (int)f;
        } else if (bp_arg_is(&a, "--format")) {
            if (!(v = bp_arg_value(&a, "--format"))) return BP_EXIT_USAGE;
            if (strcmp(v, "csv") == 0) o.csv = true;
            else if (strcmp(v, "table") == 0) o.csv = false;
            else {
                fprintf(stderr, "broadphase bench: --format is table or csv, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
        } else if (bp_arg_is(&a, "--seed")) {
            if (!(v = bp_arg_value(&a, "--seed"))) return BP_EXIT_USAGE;
            if (!bp_parse_u64(v, &o.seed)) {
                fprintf(stderr, "broadphase bench: --seed wants an unsigned 64-bit integer, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
        } else if (strcmp(s, "--check") == 0) {
            o.check = true;
        } else {
            fprintf(stderr, "broadphase bench: unknown argument '%s' (see 'broadphase bench --help')\n", s);
            return BP_EXIT_USAGE;
        }
    }
    if (!o.method_given)
        for (size_t k = 0; k < BM_METHOD_COUNT; ++k) o.methods[k] = bm_available(&bm_methods[k]);
    if (!o.scene_given) o.scenes[BP_SCENE_SEED] = o.scenes[BP_SCENE_UNIFORM] = true;

    if (o.csv) printf("scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks\n");
    bm_scratch sc = {NULL, 0};
    bool mismatch = false;
    int status = BP_EXIT_OK;
    // Seed first (the small demo), then the others in SCENES.md order.
    static const bp_scene_kind order[BP_SCENE_COUNT] = {BP_SCENE_SEED, BP_SCENE_UNIFORM, BP_SCENE_CLUSTERED,
                                                        BP_SCENE_MIXED, BP_SCENE_LINE};
    for (int s = 0; s < BP_SCENE_COUNT; ++s) {
        bp_scene_kind kind = order[s];
        if (!o.scenes[kind]) continue;
        size_t def_n = kind == BP_SCENE_SEED ? 500 : 100000;
        size_t count = o.n_count ? o.n_count : 1;
        for (size_t k = 0; k < count; ++k) {
            size_t n = o.n_count ? o.ns[k] : def_n;
            if (bm_block(&o, kind, n, &sc, &mismatch) != BP_EXIT_OK) status = BP_EXIT_FAIL;
        }
    }
    free(sc.keys);
    if (fflush(stdout) != 0) status = BP_EXIT_FAIL;
    if (mismatch) {
        fprintf(stderr, "broadphase bench: --check found mismatches\n");
        status = BP_EXIT_FAIL;
    }
    return status;
}
