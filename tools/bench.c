// `broadphase bench`: the SCENES.md benchmark. Each method replays the scene from frame 0 with its
// own warm context, so every method sees the same frames; frame 0 is an untimed warm-up, frames
// 1..F are timed around the broad-phase call only (moving objects and building boxes are not).
// Bench-only baselines: `naive-sweep` (seed 003's plain method, bench/naive_sweep.c) and
// `sweep-resort` (the library's sweep without temporal coherence). With --peers (or peer names in
// --method) the peers of bench/peers (docs/peers.md) run on the same frames under the same rules,
// their exact pairs compared with ours every frame (issue #6).
#define _POSIX_C_SOURCE 200809L // clock_gettime(CLOCK_MONOTONIC), fork, pipe

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "naive_sweep.h"
#include "peers.h"
#include "scene.h"

// A method is skipped at a size where a frame would take more than this.
#define BM_SKIP_SECONDS 5.0
// Cost model for methods whose candidate checks can be counted before running them (brute force:
// n^2 / 2; naive-sweep: the pairs overlapping on x, which its active list walks). Measured on the
// development machine (Release, AMD EPYC, gcc 12): brute 0.12-0.23 ns per check (8 boxes per
// AVX2 step; 10,000 boxes of `uniform` and `line`), naive-sweep 7-9 ns per check with its qsort.
#define BM_BRUTE_NS_PER_CHECK 0.15
#define BM_NAIVE_NS_PER_CHECK 5.0
// --check compares with brute force up to this many boxes, with sweep above.
#define BM_CHECK_BRUTE_MAX 20000
// Peers are always compared, so with the cheaper reference sooner: brute force up to this many
// boxes, sweep above (sweep itself equals brute force: tests/test_oracle.c, --check).
#define BM_PEER_BRUTE_MAX 2000

// BM_LOOSE: the quadtree with loose cells; BM_SORTED: the grid with its sorted layout only (no
// table in small worlds); BM_MEMCPY: one copy of the frame's boxes, the floor under any method
// (every method reads every box once).
typedef enum { BM_LIB, BM_RESORT, BM_NAIVE, BM_LOOSE, BM_SORTED, BM_MEMCPY } bm_kind;

typedef struct bm_method {
    const char *name;
    bm_kind kind;
    bp_method method;
} bm_method;

// Every method in table order: the baseline first.
static const bm_method bm_methods[] = {
    {"memcpy", BM_MEMCPY, BP_METHOD_BRUTE},
    {"naive-sweep", BM_NAIVE, BP_METHOD_SWEEP},  {"brute", BM_LIB, BP_METHOD_BRUTE},
    {"sweep", BM_LIB, BP_METHOD_SWEEP},          {"sweep-resort", BM_RESORT, BP_METHOD_SWEEP},
    {"grid", BM_LIB, BP_METHOD_GRID},            {"grid-sorted", BM_SORTED, BP_METHOD_GRID},
    {"quadtree", BM_LIB, BP_METHOD_QUADTREE},
    {"quadtree-loose", BM_LOOSE, BP_METHOD_QUADTREE},
    {"rdc", BM_LIB, BP_METHOD_RDC},              {"auto", BM_LIB, BP_METHOD_AUTO},
};
#define BM_METHOD_COUNT (sizeof bm_methods / sizeof bm_methods[0])

static bool bm_available(const bm_method *m) {
    return m->kind == BM_NAIVE || m->kind == BM_MEMCPY || bp_method_available(m->method);
}

// Rows that are yardsticks, not methods of ours: never "best ours".
static bool bm_is_baseline(const bm_method *m) { return m->kind == BM_NAIVE || m->kind == BM_MEMCPY; }

static bool bm_row_serial(size_t row) { return row >= BM_METHOD_COUNT || bm_is_baseline(&bm_methods[row]); }

// --memory runs each method again for frame 0 and at most this many timed frames.
#define BM_MEMORY_FRAMES 2
// Peers compiled in, at most (bench/peers has 8).
#define BM_PEER_MAX 16
// Rows of a table: our methods, then the peers.
#define BM_ROW_MAX (BM_METHOD_COUNT + BM_PEER_MAX)

typedef enum { BM_RAN, BM_SKIPPED, BM_FAILED } bm_outcome;

typedef struct bm_result {
    bm_outcome outcome;
    double mean_ms, median_ms, max_ms;
    double estimate_s;  // skipped: the estimated seconds per frame
    uint64_t pairs, checks;
    // A peer whose exact pairs differed from ours: the first such frame and its counts.
    bool wrong;
    size_t wrong_frame, missing, extra, wrong_frames;
    // --memory at the largest N: peak resident bytes of a child running the same frames.
    bool peak_known;
    uint64_t peak_bytes;
} bm_result;

typedef struct bm_opts {
    bool scenes[BP_SCENE_COUNT];
    bool scene_given;
    size_t ns[32];
    size_t n_count;
    int dim;
    bool methods[BM_METHOD_COUNT];
    bool peers[BM_PEER_MAX];
    bool method_given, all_peers;
    int frames;
    int frames_at[32];    // --frames F,F,...: one count per --n value
    int threads[16];      // --threads T,T,...: worker counts (default 1)
    size_t threads_count;
    int workers;          // the worker count of the runs in progress
    uint64_t parallel_min;  // --parallel-min (bp_context_def.parallel_min; 0: automatic)
    size_t frames_count;  // 0: every N gets `frames`
    enum { BM_TABLE, BM_CSV, BM_JSON } format;
    uint64_t seed;
    bool check, memory;
    const char *out_dir;
    size_t n_max;  // the largest N of the run (--memory measures there)
} bm_opts;

// One row: method k of bm_methods (k < BM_METHOD_COUNT) or peer k - BM_METHOD_COUNT.
static bool bm_row_is_peer(size_t row) { return row >= BM_METHOD_COUNT; }
static const char *bm_row_name(size_t row) {
    return bm_row_is_peer(row) ? bp_peer_name(row - BM_METHOD_COUNT) : bm_methods[row].name;
}
static bool bm_row_on(const bm_opts *o, size_t row) {
    return bm_row_is_peer(row) ? o->peers[row - BM_METHOD_COUNT] : o->methods[row];
}
// Rows that run once, single-threaded, whatever --threads: peers and our baselines.
static bool bm_row_serial(size_t row);
// The worker count a row ran with.
static int bm_row_threads(const bm_opts *o, size_t row) { return bm_row_serial(row) ? 1 : o->workers; }

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

static bp_status bm_lib_call(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out) {
    // The floats have exactly the bp_box2/bp_box3 layout (bp_scene_boxes).
    const void *b = boxes;
    return dim == 2 ? bp_find_pairs2(ctx, b, n, out) : bp_find_pairs3(ctx, b, n, out);
}

// Peak memory of a run (--memory), measured inside a child process: the resident high-water mark
// (VmHWM, reset through /proc/self/clear_refs once the scene is built) minus the resident size
// then. Where clear_refs is missing, getrusage's ru_maxrss stands in for both.
typedef struct bm_mem {
    bool hwm;
    uint64_t base;
} bm_mem;

// A "Key:   123 kB" line of /proc/self/status, in bytes; 0 when absent.
static uint64_t bm_status_bytes(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    uint64_t v = 0;
    size_t len = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, len) == 0) {
            v = strtoull(line + len, NULL, 10) * 1024u;
            break;
        }
    }
    fclose(f);
    return v;
}

static uint64_t bm_maxrss_bytes(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

static void bm_mem_start(bm_mem *m) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    m->hwm = false;
    if (f) {
        bool ok = fputs("5", f) >= 0;
        m->hwm = fclose(f) == 0 && ok;
    }
    m->base = m->hwm ? bm_status_bytes("VmRSS:") : 0;
    if (m->base == 0) {
        m->hwm = false;
        m->base = bm_maxrss_bytes();
    }
}

static uint64_t bm_mem_peak(const bm_mem *m) {
    uint64_t now = m->hwm ? bm_status_bytes("VmHWM:") : bm_maxrss_bytes();
    return now > m->base ? now - m->base : 0;
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

// Runs one method on one scene/N. Returns 0, or 1 when --check found a mismatch (the result is
// still filled), or -1 on a library or memory error (message printed). With `mem` (the --memory
// child) nothing is checked and the peak memory is measured instead.
static int bm_run(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_method *m, bm_result *res,
                  bm_scratch *sc, bm_mem *mem) {
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
    float *copy = NULL;  // memcpy's destination
    bp_naive_sweep naive;
    bp_naive_sweep_init(&naive);
    if (!boxes || !times) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bp_scene_boxes(&scene, boxes);
    if (mem) bm_mem_start(mem);

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
    if (m->kind == BM_MEMCPY) {
        copy = malloc(n * (size_t)(2 * o->dim) * sizeof *copy + 1);
        if (!copy) {
            fprintf(stderr, "broadphase bench: out of memory\n");
            goto done;
        }
    } else if (m->kind != BM_NAIVE) {
        bp_context_def def = bp_default_context_def();
        def.dimension = o->dim;
        def.method = m->method;
        if (m->kind == BM_RESORT) def.sweep.coherence = false;
        if (m->kind == BM_LOOSE) def.quadtree.loose = true;
        if (m->kind == BM_SORTED) def.grid.layout = BP_GRID_LAYOUT_SORTED;
        def.workers = o->workers;
        def.parallel_min = (size_t)o->parallel_min;
        st = bp_context_create(&def, &ctx);
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: %s: cannot create a context: %s\n", m->name, bp_status_string(st));
            goto done;
        }
    }
    const char *ref_name = n <= BM_CHECK_BRUTE_MAX ? "brute" : "sweep";
    bool check = o->check && !mem && m->kind != BM_MEMCPY;  // memcpy finds no pairs
    if (check) {
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
        if (m->kind == BM_MEMCPY) {
            memcpy(copy, boxes, n * (size_t)(2 * o->dim) * sizeof *copy);
            pairs = NULL;
            count = 0;
        } else if (m->kind == BM_NAIVE) {
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
        if (check && !mismatch) {
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
            } else if (m->kind == BM_MEMCPY) {
                res->checks = 0;
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
    bm_finish(res, times, frames);
    if (mem) {
        res->peak_bytes = bm_mem_peak(mem);
        res->peak_known = true;
    }
    rc = mismatch ? 1 : 0;
done:
    bp_context_destroy(ctx);
    bp_context_destroy(ref);
    bp_naive_sweep_free(&naive);
    free(copy);
    free(times);
    free(boxes);
    bp_scene_free(&scene);
    return rc;
}

// The peers run in a forked child (bm_run_peer_child) with a watchdog: a processor-time timer
// armed around each step. The adapters stop themselves at 5 s in their own loops, but not inside
// every loop of the peer library (Box2D's tree queries in UpdatePairs, for one, take half a
// minute at N = 1,000,000); the timer's handler reports "skipped" through the pipe and ends the
// child. bm_watchdog_fd is the pipe's write end in the child, -1 elsewhere.
static int bm_watchdog_fd = -1;
typedef struct bm_child_msg {
    int rc;
    bm_result res;
} bm_child_msg;
static bm_child_msg bm_watchdog_msg;  // "skipped", filled before arming: the handler only writes it

static void bm_on_watchdog(int sig) {
    (void)sig;
    ssize_t w = write(bm_watchdog_fd, &bm_watchdog_msg, sizeof bm_watchdog_msg);
    _exit(w == (ssize_t)sizeof bm_watchdog_msg ? 0 : 1);
}

// Arms (seconds > 0) or disarms the processor-time watchdog.
static void bm_watchdog(double seconds) {
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_PROF, &it, NULL);
}

// Runs peer pk on one scene/N under the same rules as bm_run: frame 0 (the peer's build) untimed,
// frames 1..F timed around bp_peer_step with the same clock. Its exact pairs are compared with
// ours (brute force up to BM_PEER_BRUTE_MAX boxes, sweep above) every frame, after timing; a
// difference marks it wrong (the first one is kept). A step past 5 s of processor time (the
// adapters' limit, so the build counts too) or a first timed frame past 5 s skips it. Returns 0,
// or -1 on an error (message printed). With `mem`: no comparison, peak memory measured.
static int bm_run_peer(const bm_opts *o, bp_scene_kind kind, size_t n, size_t pk, bm_result *res, bm_mem *mem) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    const char *sname = bp_scene_name(kind), *pname = bp_peer_name(pk);
    bp_scene scene;
    if (bp_scene_init_kind(&scene, kind, n, o->dim, o->seed) != 0) {
        fprintf(stderr, "broadphase bench: cannot build scene %s with N = %zu (out of memory?)\n", sname, n);
        return -1;
    }
    int rc = -1;
    size_t frames = (size_t)o->frames, d = (size_t)o->dim;
    float *boxes = malloc(n * 2 * d * sizeof *boxes);
    float *vel = malloc(n * d * sizeof *vel);
    double *times = malloc(frames * sizeof *times);
    bp_context *ref = NULL;
    void *peer = NULL;
    if (!boxes || !vel || !times) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bp_scene_boxes(&scene, boxes);
    for (size_t i = 0; i < n * d; ++i) vel[i] = (float)scene.v[i];  // resident before the baseline
    if (mem) bm_mem_start(mem);
    bp_status st;
    if (!mem) {
        bp_context_def def = bp_default_context_def();
        def.dimension = o->dim;
        def.method = n <= BM_PEER_BRUTE_MAX ? BP_METHOD_BRUTE : BP_METHOD_SWEEP;
        def.sort_pairs = true;  // bp_peer_compare wants (i, j) order
        st = bp_context_create(&def, &ref);
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: cannot create the reference context: %s\n", bp_status_string(st));
            goto done;
        }
    }
    // The scene's objects stay in [0, W]^dim (SCENES.md); bullet-sap quantizes to these bounds.
    float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3];
    for (int a = 0; a < 3; ++a) hi[a] = (float)scene.world;
    peer = bp_peer_create(pk, o->dim, n, lo, hi);
    if (!peer) {
        fprintf(stderr, "broadphase bench: %s: cannot create it for N = %zu in %dD\n", pname, n, o->dim);
        goto done;
    }
    bp_peer_set_time_limit(peer, BM_SKIP_SECONDS);
    for (size_t f = 0; f <= frames; ++f) {
        if (f > 0) bp_scene_step(&scene);
        bp_scene_boxes(&scene, boxes);
        for (size_t i = 0; i < n * d; ++i) vel[i] = (float)scene.v[i];
        if (bm_watchdog_fd >= 0) bm_watchdog(BM_SKIP_SECONDS);
        double t0 = bm_now();
        int prc = bp_peer_step(peer, boxes, n, vel);
        double t = bm_now() - t0;
        if (bm_watchdog_fd >= 0) bm_watchdog(0.0);
        if (prc == BP_PEER_TOO_SLOW) {
            res->outcome = BM_SKIPPED;
            res->estimate_s = 0.0;  // stopped at the limit: only "over 5 s" is known
            rc = 0;
            goto done;
        }
        if (prc != 0) {
            fprintf(stderr, "broadphase bench: %s on %s N = %zu frame %zu failed (out of memory?)\n", pname, sname, n,
                    f);
            goto done;
        }
        if (f > 0) times[f - 1] = t * 1e3;
        if (!mem) {
            const uint32_t *got;
            size_t count, missing = 0, extra = 0;
            bp_pairs want;
            if (bp_peer_exact_pairs(peer, boxes, &got, &count) != 0) {
                fprintf(stderr, "broadphase bench: %s: out of memory filtering its pairs\n", pname);
                goto done;
            }
            st = bm_lib_call(ref, o->dim, boxes, n, &want);
            if (st != BP_OK) {
                fprintf(stderr, "broadphase bench: reference: %s\n", bp_status_string(st));
                goto done;
            }
            // bp_pair is two uint32_t: the peers' pair layout (peers.h).
            if (!bp_peer_compare(got, count, (const uint32_t *)(const void *)want.pairs, want.count, &missing,
                                 &extra)) {
                if (!res->wrong) {
                    res->wrong = true;
                    res->wrong_frame = f;
                    res->missing = missing;
                    res->extra = extra;
                }
                ++res->wrong_frames;
            }
            if (f == frames) res->pairs = count;
        }
        if (f == frames) res->checks = bp_peer_candidates(peer);
        if (f == 1 && t > BM_SKIP_SECONDS && frames > 1) {
            res->outcome = BM_SKIPPED;
            res->estimate_s = t;
            rc = 0;
            goto done;
        }
    }
    bm_finish(res, times, frames);
    if (mem) {
        res->peak_bytes = bm_mem_peak(mem);
        res->peak_known = true;
    }
    rc = 0;
done:
    bp_peer_destroy(peer);
    bp_context_destroy(ref);
    free(times);
    free(vel);
    free(boxes);
    bp_scene_free(&scene);
    return rc;
}

// bm_run_peer in a forked child with the watchdog (above); same contract. A child that dies
// (a peer crashing) is reported as failed.
static int bm_run_peer_child(const bm_opts *o, bp_scene_kind kind, size_t n, size_t pk, bm_result *res) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    fflush(stdout);
    fflush(stderr);
    int fd[2];
    if (pipe(fd) != 0) return bm_run_peer(o, kind, n, pk, res, NULL);  // no isolation, no watchdog
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return bm_run_peer(o, kind, n, pk, res, NULL);
    }
    if (pid == 0) {
        close(fd[0]);
        bm_watchdog_fd = fd[1];
        memset(&bm_watchdog_msg, 0, sizeof bm_watchdog_msg);
        bm_watchdog_msg.res.outcome = BM_SKIPPED;  // estimate 0: "stopped at 5 s of processor time"
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = bm_on_watchdog;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGPROF, &sa, NULL) != 0) bm_watchdog_fd = -1;
        bm_child_msg msg;
        memset(&msg, 0, sizeof msg);
        msg.rc = bm_run_peer(o, kind, n, pk, &msg.res, NULL);
        bm_watchdog(0.0);
        ssize_t w = write(fd[1], &msg, sizeof msg);
        fflush(stderr);
        _exit(w == (ssize_t)sizeof msg ? 0 : 1);  // no atexit handlers, no second stdio flush
    }
    close(fd[1]);
    bm_child_msg msg;
    char *buf = (char *)&msg;
    size_t len = 0;
    while (len < sizeof msg) {
        ssize_t got = read(fd[0], buf + len, sizeof msg - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
    }
    close(fd[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
    }
    if (len != sizeof msg) {
        fprintf(stderr, "broadphase bench: %s on %s N = %zu: the child process died%s\n", bp_peer_name(pk),
                bp_scene_name(kind), n, WIFSIGNALED(wst) ? " on a signal" : "");
        return -1;
    }
    *res = msg.res;
    return msg.rc;
}

// --memory: runs row `row` again in a fresh process (this program re-executed with the hidden
// option --memory-child, so that its heap starts empty: a forked child would reuse pages the
// parent had already touched and show no growth) and stores its peak in res. Leaves
// res->peak_known false when that fails.
static void bm_measure(const bm_opts *o, bp_scene_kind kind, size_t n, size_t row, bm_result *res) {
    char nbuf[32], dbuf[8], sbuf[32], fbuf[32], tbuf[16], pbuf[32];
    snprintf(tbuf, sizeof tbuf, "%d", o->workers);
    snprintf(pbuf, sizeof pbuf, "%llu", (unsigned long long)o->parallel_min);
    snprintf(nbuf, sizeof nbuf, "%zu", n);
    snprintf(dbuf, sizeof dbuf, "%d", o->dim);
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)o->seed);
    // The build (frame 0) and two timed frames: where the peak is reached (structures at full
    // size, a pair output of a moved frame), at a third of the time of 5 frames at N = 1,000,000.
    snprintf(fbuf, sizeof fbuf, "%d", o->frames < BM_MEMORY_FRAMES ? o->frames : BM_MEMORY_FRAMES);
    char *args[] = {"broadphase", "bench", "--memory-child", (char *)bm_row_name(row), "--scene",
                    (char *)bp_scene_name(kind), "--n", nbuf, "--dim", dbuf, "--seed", sbuf, "--frames", fbuf,
                    "--threads", tbuf, "--parallel-min", pbuf, NULL};
    fflush(stdout);
    fflush(stderr);
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0) _exit(126);
        close(fd[1]);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(fd[1]);
    char buf[64];
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
        if (len == sizeof buf - 1) break;
    }
    buf[len] = '\0';
    close(fd[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
    }
    uint64_t v;
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && bp_parse_u64(buf, &v)) {
        res->peak_known = true;
        res->peak_bytes = v;
    }
}

// The child side of bm_measure: runs `name` once with the measurement on and prints its peak.
static int bm_memory_child(const bm_opts *o, const char *name) {
    bp_scene_kind kind = BP_SCENE_UNIFORM;
    for (int s = 0; s < BP_SCENE_COUNT; ++s)
        if (o->scenes[s]) kind = (bp_scene_kind)s;
    size_t n = o->n_count ? o->ns[0] : 1000;
    size_t row = 0;
    while (row < BM_ROW_MAX && (bm_row_name(row) == NULL || strcmp(bm_row_name(row), name) != 0)) ++row;
    if (row == BM_ROW_MAX) return BP_EXIT_USAGE;
    bm_result r;
    bm_scratch sc = {NULL, 0};
    bm_mem mem;
    int rc = bm_row_is_peer(row) ? bm_run_peer(o, kind, n, row - BM_METHOD_COUNT, &r, &mem)
                                 : bm_run(o, kind, n, &bm_methods[row], &r, &sc, &mem);
    free(sc.keys);
    if (rc != 0 || r.outcome != BM_RAN || !r.peak_known) return BP_EXIT_FAIL;
    printf("%llu\n", (unsigned long long)r.peak_bytes);
    return fflush(stdout) == 0 ? BP_EXIT_OK : BP_EXIT_FAIL;
}

static const char bm_usage[] =
    "usage: broadphase bench [--scene NAME|all] [--n N[,N...]] [--dim 2|3] [--method NAME[,NAME...]|all]\n"
    "                        [--peers] [--frames F[,F...]] [--format table|csv|json] [--seed S] [--check]\n"
    "                        [--memory] [--out DIR] [--threads T[,T...]] [--parallel-min N]\n"
    "\n"
    "Times the broad phase on the scenes of SCENES.md: each method replays the scene from frame 0\n"
    "with its own context (frame 0 is an untimed warm-up) and is timed, with a monotonic clock,\n"
    "around the pair-finding call after each of frames 1..F. Reported per method: mean ms per\n"
    "frame (total / F, the headline), median and worst frame, the pairs and the candidate checks\n"
    "at frame F, and (table) the speed-up over naive-sweep and over sweep in the same run\n"
    "(mean over mean; above 1 is faster). With several N, a table per scene follows: methods and\n"
    "peers as rows, N as columns, mean ms per frame, and the ratio best peer / our best method.\n"
    "\n"
    "  --scene NAME   uniform, clustered, mixed, line, seed, or all; a comma list works too\n"
    "                 (default: seed at N = 500 and uniform at N = 100000)\n"
    "  --n N,...      object counts (default: 500 for seed, 100000 for the others)\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --method LIST  comma list of brute, sweep, grid, quadtree, rdc, auto, the bench-only\n"
    "                 naive-sweep (seed 003's plain sort-and-sweep: qsort + active list),\n"
    "                 sweep-resort (sweep without temporal coherence), grid-sorted (the grid\n"
    "                 without its table for small worlds), quadtree-loose (the quadtree with\n"
    "                 loose cells), memcpy (one copy of the boxes: the floor under any method,\n"
    "                 finds no pairs), and peer names; 'all'\n"
    "                 (default) is every method of ours this build has, no peer\n"
    "  --peers        add every peer this build has that handles --dim (docs/peers.md):\n"
    "                 chipmunk-hash, chipmunk-bbtree, chipmunk-bbtree-vel, chipmunk-sweep1d,\n"
    "                 box2d-broadphase, bullet-dbvt, bullet-sap, cgal-box. Each peer's update\n"
    "                 and pair search is timed; its exact pairs are compared with ours (brute\n"
    "                 force at N <= 2000, sweep above) every frame after timing, and a peer that\n"
    "                 differs is shown as WRONG (first differing frame: pairs missing/extra)\n"
    ;

// ISO C caps string literals at 4,095 characters: the usage is printed in two parts.
static const char bm_usage2[] =
    "  --frames F     timed frames (default 20); F,F,... gives each --n value its own count\n"
    "                 (e.g. --n 10000,100000,1000000 --frames 20,20,5)\n"
    "  --format FMT   table (default), csv with the columns\n"
    "                 scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks,\n"
    "                 kind,status,peak_bytes (kind ours|peer; status ok|skipped|wrong|failed; a skipped\n"
    "                 run has empty time, pair and check fields), or json: an array of one object\n"
    "                 per run with the same fields (null where empty) plus missing and extra\n"
    "  --seed S       scene seed (default 1)\n"
    "  --threads T,.. worker counts (bp_context_def.workers, the calling thread included;\n"
    "                 default 1): each of our methods runs once per count, and with several a\n"
    "                 table per scene gives each method's time per count and its speed-up over\n"
    "                 the first count. Baselines and peers run once, single-threaded\n"
    "  --parallel-min N  calls with fewer boxes stay on one thread (bp_context_def.parallel_min;\n"
    "                 default 0: the library's measured threshold): to time workers on small N\n"
    "  --check        compare every frame's pair set of our methods with brute force\n"
    "                 (N <= 20000) or sweep; a mismatch is printed and makes the exit status 1.\n"
    "                 A wrong peer never changes the exit status: it is a finding about another\n"
    "                 library, shown in the output\n"
    "  --memory       at the largest N, run each method and peer again (frame 0 and 2 timed\n"
    "                 frames) in a fresh process and report its peak memory: the resident\n"
    "                 high-water mark (VmHWM, reset after building the scene) minus the resident\n"
    "                 size then, in bytes per object\n"
    "  --out DIR      also write DIR/bench.csv and, with gnuplot, a log-log plot per scene of\n"
    "                 mean ms per frame against N (DIR/bench-SCENE.png, bench-SCENE-3d.png)\n"
    "  --help         this text\n"
    "\n"
    "A method that would take more than 5 s per frame (estimated from its candidate count, or\n"
    "measured on the first frame) is skipped at that size; a peer also when its build or any\n"
    "step passes 5 s of processor time.\n";

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
        size_t pk = bp_peer_find(tok);
        if (k == BM_METHOD_COUNT && pk < BM_PEER_MAX) {
            o->peers[pk] = true;
            continue;
        }
        if (k == BM_METHOD_COUNT) {
            fprintf(stderr,
                    "broadphase bench: unknown method '%s' (brute, sweep, grid, quadtree, rdc, auto, naive-sweep, "
                    "sweep-resort, grid-sorted, quadtree-loose, memcpy, all, or a peer this build has: %zu compiled in)\n",
                    tok, bp_peer_count());
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

// --frames F or F,F,... (one per --n value, e.g. fewer frames at the largest N).
static bool bm_parse_frames(const char *v, bm_opts *o) {
    char buf[512];
    if (strlen(v) >= sizeof buf) return false;
    strcpy(buf, v);
    o->frames_count = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        uint64_t f;
        if (!bp_parse_u64(tok, &f) || f < 1 || f > 1000000) {
            fprintf(stderr, "broadphase bench: --frames wants counts from 1 to 1000000, not '%s'\n", tok);
            return false;
        }
        if (o->frames_count == sizeof o->frames_at / sizeof o->frames_at[0]) {
            fprintf(stderr, "broadphase bench: too many --frames values\n");
            return false;
        }
        o->frames_at[o->frames_count++] = (int)f;
    }
    o->frames = o->frames_at[0];
    if (o->frames_count == 1) o->frames_count = 0;
    return true;
}

// "20" or "20/20/5": the frames of a scene's columns, for titles.
static void bm_frames_text(const bm_opts *o, char *buf, size_t size) {
    if (!o->frames_count) {
        snprintf(buf, size, "%d", o->frames);
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < o->frames_count && len < size; ++k) {
        int w = snprintf(buf + len, size - len, "%s%d", k ? "/" : "", o->frames_at[k]);
        if (w < 0) break;
        len += (size_t)w;
    }
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

// --threads T or T,T,... (worker counts).
static bool bm_parse_threads(const char *v, bm_opts *o) {
    char buf[256];
    if (strlen(v) >= sizeof buf) return false;
    strcpy(buf, v);
    o->threads_count = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        uint64_t t;
        if (!bp_parse_u64(tok, &t) || t < 1 || t > BP_MAX_WORKERS) {
            fprintf(stderr, "broadphase bench: --threads wants worker counts from 1 to %d, not '%s'\n", BP_MAX_WORKERS,
                    tok);
            return false;
        }
        if (o->threads_count == sizeof o->threads / sizeof o->threads[0]) {
            fprintf(stderr, "broadphase bench: too many --threads values\n");
            return false;
        }
        o->threads[o->threads_count++] = (int)t;
    }
    return true;
}

// Speed-up of r over the baseline b ("-" when either did not run).
static void bm_ratio(char *buf, size_t size, const bm_result *b, const bm_result *r) {
    if (b && b->outcome == BM_RAN && r->mean_ms > 0.0) snprintf(buf, size, "%.2fx", b->mean_ms / r->mean_ms);
    else snprintf(buf, size, "-");
}

static const char *bm_status_name(const bm_result *r) {
    if (r->outcome == BM_SKIPPED) return "skipped";
    if (r->outcome == BM_FAILED) return "failed";
    return r->wrong ? "wrong" : "ok";
}

static void bm_print_block(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_result *res) {
    // Ratios: naive-sweep (the baseline of the source documents) and the library's sweep (what
    // every other method has to beat), each from this same run.
    const bm_result *naive = NULL, *sweep = NULL;
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k]) continue;
        if (bm_methods[k].kind == BM_NAIVE) naive = &res[k];
        if (bm_methods[k].kind == BM_LIB && bm_methods[k].method == BP_METHOD_SWEEP) sweep = &res[k];
    }
    printf("\n%s  %dD  N = %zu  frames %d  seed %llu", bp_scene_name(kind), o->dim, n, o->frames,
           (unsigned long long)o->seed);
    if (o->threads_count > 1 || o->workers != 1) printf("  threads %d", o->workers);
    putchar('\n');
    printf("%-19s %11s %11s %11s %12s %14s %10s %10s\n", "method", "mean ms", "median ms", "max ms", "pairs",
           "checks", "vs naive", "vs sweep");
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        const bm_result *r = &res[k];
        const char *name = bm_row_name(k);
        if (r->outcome == BM_SKIPPED) {
            if (r->estimate_s > 0.0) printf("%-19s skipped (>5 s/frame; about %.3g s)\n", name, r->estimate_s);
            else printf("%-19s skipped (>5 s/frame: stopped at 5 s of processor time)\n", name);
            continue;
        }
        if (r->outcome == BM_FAILED) {
            printf("%-19s failed\n", name);
            continue;
        }
        char vs_naive[32], vs_sweep[32];
        bm_ratio(vs_naive, sizeof vs_naive, naive, r);
        bm_ratio(vs_sweep, sizeof vs_sweep, sweep, r);
        if (k < BM_METHOD_COUNT && bm_methods[k].kind == BM_MEMCPY) {
            // A copy finds no pairs: a speed-up over a method means nothing.
            snprintf(vs_naive, sizeof vs_naive, "-");
            snprintf(vs_sweep, sizeof vs_sweep, "-");
        }
        printf("%-19s %11.3f %11.3f %11.3f %12llu %14llu %10s %10s", name, r->mean_ms, r->median_ms, r->max_ms,
               (unsigned long long)r->pairs, (unsigned long long)r->checks, vs_naive, vs_sweep);
        if (r->wrong)
            printf("  WRONG: frame %zu: %zu pairs missing, %zu extra (%zu of %d frames differ)", r->wrong_frame,
                   r->missing, r->extra, r->wrong_frames, o->frames + 1);
        putchar('\n');
        if (r->wrong && bp_peer_known_defect(k - BM_METHOD_COUNT))
            printf("%-19s   known defect: %s\n", "", bp_peer_known_defect(k - BM_METHOD_COUNT));
    }
}

// One CSV line: scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks (issue #2's
// columns, in its order), then kind,status,peak_bytes (added by the peers and --memory).
static void bm_csv_line(FILE *f, const bm_opts *o, bp_scene_kind kind, size_t n, size_t row, const bm_result *r) {
    fprintf(f, "%s,%d,%zu,%s,%d,%d,", bp_scene_name(kind), o->dim, n, bm_row_name(row), bm_row_threads(o, row),
            o->frames);
    if (r->outcome == BM_RAN)
        fprintf(f, "%.4f,%.4f,%.4f,%llu,%llu,", r->mean_ms, r->median_ms, r->max_ms, (unsigned long long)r->pairs,
                (unsigned long long)r->checks);
    else
        fprintf(f, ",,,,,");
    fprintf(f, "%s,%s,", bm_row_is_peer(row) ? "peer" : "ours", bm_status_name(r));
    if (r->peak_known) fprintf(f, "%llu", (unsigned long long)r->peak_bytes);
    fputc('\n', f);
}

static const char bm_csv_header[] =
    "scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks,kind,status,peak_bytes\n";

static void bm_json_object(const bm_opts *o, bp_scene_kind kind, size_t n, size_t row, const bm_result *r,
                           bool first) {
    printf("%s{\"scene\": \"%s\", \"dim\": %d, \"n\": %zu, \"method\": \"%s\", \"kind\": \"%s\", \"threads\": %d, \"frames\": %d, ",
           first ? "" : ",\n", bp_scene_name(kind), o->dim, n, bm_row_name(row),
           bm_row_is_peer(row) ? "peer" : "ours", bm_row_threads(o, row), o->frames);
    if (r->outcome == BM_RAN)
        printf("\"mean_ms\": %.4f, \"median_ms\": %.4f, \"max_ms\": %.4f, \"pairs\": %llu, \"checks\": %llu, ",
               r->mean_ms, r->median_ms, r->max_ms, (unsigned long long)r->pairs, (unsigned long long)r->checks);
    else
        printf("\"mean_ms\": null, \"median_ms\": null, \"max_ms\": null, \"pairs\": null, \"checks\": null, ");
    printf("\"status\": \"%s\", \"missing\": %zu, \"extra\": %zu, \"peak_bytes\": ", bm_status_name(r), r->missing,
           r->extra);
    if (r->peak_known) printf("%llu}", (unsigned long long)r->peak_bytes);
    else printf("null}");
}

typedef struct bm_sink {
    FILE *csv;        // --out DIR/bench.csv, or NULL
    bool json_first;  // no JSON object printed yet
} bm_sink;

// Runs every selected row at one scene/N into res[BM_ROW_MAX].
static int bm_block(const bm_opts *o, bp_scene_kind kind, size_t n, bm_scratch *sc, bool *mismatch, bm_result *res,
                    bm_sink *sink) {
    int status = BP_EXIT_OK;
    // Long runs say what they are doing, on a terminal only (never in captured output).
    bool progress = isatty(STDERR_FILENO) == 1;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        if (progress) fprintf(stderr, "\r\033[K%s N = %zu: %s...", bp_scene_name(kind), n, bm_row_name(k));
        int rc = bm_row_is_peer(k) ? bm_run_peer_child(o, kind, n, k - BM_METHOD_COUNT, &res[k])
                                   : bm_run(o, kind, n, &bm_methods[k], &res[k], sc, NULL);
        if (rc == 0 && o->memory && n == o->n_max && res[k].outcome == BM_RAN) {
            if (progress) fprintf(stderr, "\r\033[K%s N = %zu: %s memory...", bp_scene_name(kind), n, bm_row_name(k));
            bm_measure(o, kind, n, k, &res[k]);
        }
        if (progress) fprintf(stderr, "\r\033[K");
        if (rc < 0) status = BP_EXIT_FAIL;
        if (rc > 0) *mismatch = true;  // our methods only: a wrong peer is a finding, not a failure
        if (o->format == BM_CSV) bm_csv_line(stdout, o, kind, n, k, &res[k]);
        if (o->format == BM_JSON) {
            bm_json_object(o, kind, n, k, &res[k], sink->json_first);
            sink->json_first = false;
        }
        if (sink->csv) bm_csv_line(sink->csv, o, kind, n, k, &res[k]);
        fflush(stdout);
    }
    if (o->format == BM_TABLE) bm_print_block(o, kind, n, res);
    fflush(stdout);
    return status;
}

// A table cell: mean ms, or why there is none.
static void bm_cell(char *buf, size_t size, const bm_result *r) {
    if (r->outcome == BM_SKIPPED) snprintf(buf, size, "skipped >5s");
    else if (r->outcome == BM_FAILED) snprintf(buf, size, "failed");
    else if (r->wrong) snprintf(buf, size, "WRONG -%zu/+%zu", r->missing, r->extra);
    else if (r->mean_ms >= 100.0) snprintf(buf, size, "%.0f", r->mean_ms);
    else if (r->mean_ms >= 1.0) snprintf(buf, size, "%.2f", r->mean_ms);
    else snprintf(buf, size, "%.3f", r->mean_ms);
}

// The best row among ours (library methods: not naive-sweep, seed 003's baseline) or among the
// peers that ran and agreed with us; BM_ROW_MAX when none.
static size_t bm_best(const bm_opts *o, const bm_result *res, bool peer) {
    size_t best = BM_ROW_MAX;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k) || bm_row_is_peer(k) != peer) continue;
        if (!peer && bm_is_baseline(&bm_methods[k])) continue;
        const bm_result *r = &res[k];
        if (r->outcome != BM_RAN || r->wrong) continue;
        if (best == BM_ROW_MAX || r->mean_ms < res[best].mean_ms) best = k;
    }
    return best;
}

// Whether peers ran at this N and every one of them was skipped (over 5 s per frame).
static bool bm_all_peers_skipped(const bm_opts *o, const bm_result *res) {
    bool any = false;
    for (size_t k = BM_METHOD_COUNT; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        if (res[k].outcome != BM_SKIPPED) return false;
        any = true;
    }
    return any;
}

static bool bm_any_peer(const bm_opts *o) {
    for (size_t k = 0; k < BM_PEER_MAX; ++k)
        if (o->peers[k]) return true;
    return false;
}

// The table of one scene: rows = methods then peers, columns = N, mean ms per frame; with peers,
// the best of each side and their ratio; with --memory, bytes per object at the largest N.
static void bm_print_summary(const bm_opts *o, bp_scene_kind kind, const size_t *ns, size_t count,
                             const bm_result *all) {
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    printf("\n%s %dD: mean ms per frame (frames %s, seed %llu)\n", bp_scene_name(kind), o->dim, ftext,
           (unsigned long long)o->seed);
    printf("%-22s", "method");
    for (size_t c = 0; c < count; ++c) printf(" %16zu", ns[c]);
    putchar('\n');
    char cell[64];
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        printf("%-22s", bm_row_name(k));
        for (size_t c = 0; c < count; ++c) {
            bm_cell(cell, sizeof cell, &all[c * BM_ROW_MAX + k]);
            printf(" %16s", cell);
        }
        putchar('\n');
    }
    if (bm_any_peer(o)) {
        static const char *labels[3] = {"best ours", "best peer", "best peer / best ours"};
        for (int line = 0; line < 3; ++line) {
            printf("%-22s", labels[line]);
            for (size_t c = 0; c < count; ++c) {
                const bm_result *res = &all[c * BM_ROW_MAX];
                size_t ours = bm_best(o, res, false), peer = bm_best(o, res, true);
                if (line == 0) snprintf(cell, sizeof cell, "%s", ours < BM_ROW_MAX ? bm_row_name(ours) : "-");
                else if (line == 1) snprintf(cell, sizeof cell, "%s", peer < BM_ROW_MAX ? bm_row_name(peer) : "-");
                else if (ours < BM_ROW_MAX && peer < BM_ROW_MAX && res[ours].mean_ms > 0.0)
                    snprintf(cell, sizeof cell, "%.1fx", res[peer].mean_ms / res[ours].mean_ms);
                else if (ours < BM_ROW_MAX && bm_all_peers_skipped(o, res) && res[ours].mean_ms > 0.0)
                    // Every peer over 5 s per frame: a lower bound.
                    snprintf(cell, sizeof cell, ">%.0fx", BM_SKIP_SECONDS * 1e3 / res[ours].mean_ms);
                else snprintf(cell, sizeof cell, "-");
                printf(" %16s", cell);
            }
            putchar('\n');
        }
    }
    if (o->memory) {
        size_t c = count - 1;
        while (c > 0 && ns[c] != o->n_max) --c;
        printf("\n%s %dD: peak memory at N = %zu, bytes per object (resident high-water of a fresh process\n"
               "running frames 0 to 2 again, minus its resident size after building the scene)\n",
               bp_scene_name(kind), o->dim, ns[c]);
        for (size_t k = 0; k < BM_ROW_MAX; ++k) {
            if (!bm_row_on(o, k)) continue;
            const bm_result *r = &all[c * BM_ROW_MAX + k];
            if (r->peak_known) printf("%-22s %16.1f\n", bm_row_name(k), (double)r->peak_bytes / (double)ns[c]);
            else printf("%-22s %16s\n", bm_row_name(k), r->outcome == BM_RAN ? "unknown" : bm_status_name(r));
        }
    }
}

// --threads with several counts: each method's mean ms per frame per count, and its speed-up
// over the first count (mean over mean; above 1 is faster). `all` is [count][N][row].
static void bm_print_threads(const bm_opts *o, bp_scene_kind kind, const size_t *ns, size_t count,
                             const bm_result *all) {
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    printf("\n%s %dD: mean ms per frame by worker count (frames %s, seed %llu)\n", bp_scene_name(kind), o->dim,
           ftext, (unsigned long long)o->seed);
    printf("%-16s %9s", "method", "N");
    for (size_t t = 0; t < o->threads_count; ++t) printf(" %8d thr", o->threads[t]);
    for (size_t t = 1; t < o->threads_count; ++t) printf(" %6s %d/%d", "", o->threads[0], o->threads[t]);
    putchar('\n');
    char cell[64];
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k] || bm_row_serial(k)) continue;
        for (size_t c = 0; c < count; ++c) {
            printf("%-16s %9zu", bm_row_name(k), ns[c]);
            const bm_result *base = &all[c * BM_ROW_MAX + k];
            for (size_t t = 0; t < o->threads_count; ++t) {
                bm_cell(cell, sizeof cell, &all[(t * count + c) * BM_ROW_MAX + k]);
                printf(" %12s", cell);
            }
            for (size_t t = 1; t < o->threads_count; ++t) {
                const bm_result *r = &all[(t * count + c) * BM_ROW_MAX + k];
                if (base->outcome == BM_RAN && r->outcome == BM_RAN && r->mean_ms > 0.0)
                    snprintf(cell, sizeof cell, "%.2fx", base->mean_ms / r->mean_ms);
                else
                    snprintf(cell, sizeof cell, "-");
                printf(" %11s", cell);
            }
            putchar('\n');
        }
    }
}

// One colour per row (ours, then peers), so that no two lines share one.
static const char *const bm_colors[] = {"#7f7f7f", "#bcbd22", "#1f77b4", "#17becf", "#2ca02c", "#9467bd",
                                        "#d62728", "#000000", "#ff7f0e", "#8c564b", "#e377c2", "#aec7e8",
                                        "#98df8a", "#ff9896", "#c5b0d5", "#c49c94"};

// --out: a gnuplot script per scene (inline data) run in DIR. Returns false when gnuplot could
// not be started (not installed); a plot gnuplot itself fails on is reported and skipped.
static bool bm_plot(const bm_opts *o, bp_scene_kind kind, const size_t *ns, size_t count, const bm_result *all) {
    char base[64], path[4200];
    snprintf(base, sizeof base, "bench-%s%s", bp_scene_name(kind), o->dim == 3 ? "-3d" : "");
    snprintf(path, sizeof path, "%s/%s.gp", o->out_dir, base);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "broadphase bench: cannot write %s\n", path);
        return true;
    }
    fprintf(f, "set terminal pngcairo noenhanced size 960,640\nset output '%s.png'\n", base);
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    fprintf(f, "set title '%s %dD: mean ms per frame (frames %s, seed %llu)'\n", bp_scene_name(kind), o->dim,
            ftext, (unsigned long long)o->seed);
    fprintf(f, "set logscale xy\nset xlabel 'N (objects)'\nset ylabel 'mean ms per frame'\nset grid\n"
               "set key outside right top\nset format x '%%.0s%%c'\n");
    size_t lo = ns[0], hi = ns[0];
    for (size_t c = 0; c < count; ++c) {
        if (ns[c] < lo) lo = ns[c];
        if (ns[c] > hi) hi = ns[c];
    }
    fprintf(f, "set xrange [%g:%g]\n", (double)lo / 1.5, (double)hi * 1.5);
    // One series per row with at least one timed point; peers dashed, wrong peers say so.
    bool any = false;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        bool has = false, wrong = false;
        for (size_t c = 0; c < count; ++c) {
            has = has || all[c * BM_ROW_MAX + k].outcome == BM_RAN;
            wrong = wrong || all[c * BM_ROW_MAX + k].wrong;
        }
        if (!has) continue;
        fprintf(f, "%s'-' using 1:2 with linespoints lw 2 lc rgb '%s' dashtype %d title '%s%s%s'",
                any ? ", \\\n     " : "plot ", bm_colors[k % (sizeof bm_colors / sizeof bm_colors[0])],
                bm_row_is_peer(k) ? 2 : 1, bm_row_is_peer(k) ? "peer " : "", bm_row_name(k), wrong ? " (WRONG)" : "");
        any = true;
    }
    fputc('\n', f);
    for (size_t k = 0; k < BM_ROW_MAX && any; ++k) {
        if (!bm_row_on(o, k)) continue;
        bool has = false;
        for (size_t c = 0; c < count; ++c) has = has || all[c * BM_ROW_MAX + k].outcome == BM_RAN;
        if (!has) continue;
        for (size_t c = 0; c < count; ++c) {
            const bm_result *r = &all[c * BM_ROW_MAX + k];
            if (r->outcome == BM_RAN) fprintf(f, "%zu %.6g\n", ns[c], r->mean_ms > 1e-6 ? r->mean_ms : 1e-6);
        }
        fprintf(f, "e\n");
    }
    bool ok = fclose(f) == 0;
    if (!ok || !any) return true;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return true;
    if (pid == 0) {
        // gnuplot's own messages go to stderr; stdout stays the table/csv/json.
        if (chdir(o->out_dir) != 0) _exit(126);
        snprintf(path, sizeof path, "%s.gp", base);
        execlp("gnuplot", "gnuplot", path, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return true;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return false;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "broadphase bench: gnuplot failed on %s/%s.gp\n", o->out_dir, base);
    return true;
}

int bp_cmd_bench(int argc, char **argv) {
    for (int k = 2; k < argc; ++k) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            fputs(bm_usage, stdout);
            fputs(bm_usage2, stdout);
            return BP_EXIT_OK;
        }
    }
    bm_opts o;
    memset(&o, 0, sizeof o);
    o.dim = 2;
    o.frames = 20;
    o.seed = 1;
    o.threads[0] = 1;
    o.threads_count = 1;
    const char *mem_child = NULL;  // --memory-child NAME: bm_measure's re-executed child
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
            if (!(v = bp_arg_value(&a, "--frames")) || !bm_parse_frames(v, &o)) return BP_EXIT_USAGE;
        } else if (bp_arg_is(&a, "--format")) {
            if (!(v = bp_arg_value(&a, "--format"))) return BP_EXIT_USAGE;
            if (strcmp(v, "csv") == 0) o.format = BM_CSV;
            else if (strcmp(v, "json") == 0) o.format = BM_JSON;
            else if (strcmp(v, "table") == 0) o.format = BM_TABLE;
            else {
                fprintf(stderr, "broadphase bench: --format is table, csv or json, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
        } else if (bp_arg_is(&a, "--threads")) {
            if (!(v = bp_arg_value(&a, "--threads")) || !bm_parse_threads(v, &o)) return BP_EXIT_USAGE;
        } else if (bp_arg_is(&a, "--parallel-min")) {
            if (!(v = bp_arg_value(&a, "--parallel-min"))) return BP_EXIT_USAGE;
            if (!bp_parse_u64(v, &o.parallel_min) || o.parallel_min > BP_MAX_BOXES) {
                fprintf(stderr, "broadphase bench: --parallel-min wants a box count, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
        } else if (bp_arg_is(&a, "--seed")) {
            if (!(v = bp_arg_value(&a, "--seed"))) return BP_EXIT_USAGE;
            if (!bp_parse_u64(v, &o.seed)) {
                fprintf(stderr, "broadphase bench: --seed wants an unsigned 64-bit integer, not '%s'\n", v);
                return BP_EXIT_USAGE;
            }
        } else if (bp_arg_is(&a, "--out")) {
            if (!(v = bp_arg_value(&a, "--out"))) return BP_EXIT_USAGE;
            if (!*v || strlen(v) > 4000) {
                fprintf(stderr, "broadphase bench: --out wants a directory name\n");
                return BP_EXIT_USAGE;
            }
            o.out_dir = v;
        } else if (bp_arg_is(&a, "--memory-child")) {
            if (!(v = bp_arg_value(&a, "--memory-child"))) return BP_EXIT_USAGE;
            mem_child = v;
        } else if (strcmp(s, "--check") == 0) {
            o.check = true;
        } else if (strcmp(s, "--peers") == 0) {
            o.all_peers = true;
        } else if (strcmp(s, "--memory") == 0) {
            o.memory = true;
        } else {
            fprintf(stderr, "broadphase bench: unknown argument '%s' (see 'broadphase bench --help')\n", s);
            return BP_EXIT_USAGE;
        }
    }
    if (!o.method_given)
        for (size_t k = 0; k < BM_METHOD_COUNT; ++k) o.methods[k] = bm_available(&bm_methods[k]);
    if (!o.scene_given) o.scenes[BP_SCENE_SEED] = o.scenes[BP_SCENE_UNIFORM] = true;
    if (o.all_peers && bp_peer_count() == 0)
        fprintf(stderr, "broadphase bench: --peers: no peer library was found when this was built\n");
    for (size_t k = 0; k < BM_PEER_MAX && k < bp_peer_count(); ++k) {
        if (o.all_peers && bp_peer_supports(k, o.dim)) o.peers[k] = true;
        if (o.peers[k] && !bp_peer_supports(k, o.dim)) {
            fprintf(stderr, "broadphase bench: %s does not handle %dD scenes: left out\n", bp_peer_name(k), o.dim);
            o.peers[k] = false;
        }
    }
    for (size_t k = 0; k < o.n_count; ++k)
        if (o.ns[k] > o.n_max) o.n_max = o.ns[k];
    if (o.frames_count && o.frames_count != o.n_count) {
        fprintf(stderr, "broadphase bench: --frames has %zu counts for %zu --n values\n", o.frames_count, o.n_count);
        return BP_EXIT_USAGE;
    }
    o.workers = o.threads[0];
    if (mem_child) return bm_memory_child(&o, mem_child);

    bm_sink sink = {NULL, true};
    if (o.out_dir) {
        char path[4200];
        if (mkdir(o.out_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "broadphase bench: cannot create %s: %s\n", o.out_dir, strerror(errno));
            return BP_EXIT_FAIL;
        }
        snprintf(path, sizeof path, "%s/bench.csv", o.out_dir);
        sink.csv = fopen(path, "w");
        if (!sink.csv) {
            fprintf(stderr, "broadphase bench: cannot write %s: %s\n", path, strerror(errno));
            return BP_EXIT_FAIL;
        }
        fputs(bm_csv_header, sink.csv);
    }
    if (o.format == BM_CSV) fputs(bm_csv_header, stdout);
    if (o.format == BM_JSON) fputs("[\n", stdout);
    bm_scratch sc = {NULL, 0};
    bool mismatch = false, gnuplot = true;
    int status = BP_EXIT_OK;
    size_t count = o.n_count ? o.n_count : 1;
    // [thread count][N][row]: the first count's slice is what the summary and plots show.
    const size_t tc = o.threads_count;
    bm_result *all = calloc(tc * count * BM_ROW_MAX, sizeof *all);
    if (!all) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        if (sink.csv) fclose(sink.csv);
        return BP_EXIT_FAIL;
    }
    // Seed first (the small demo), then the others in SCENES.md order.
    static const bp_scene_kind order[BP_SCENE_COUNT] = {BP_SCENE_SEED, BP_SCENE_UNIFORM, BP_SCENE_CLUSTERED,
                                                        BP_SCENE_MIXED, BP_SCENE_LINE};
    for (int s = 0; s < BP_SCENE_COUNT; ++s) {
        bp_scene_kind kind = order[s];
        if (!o.scenes[kind]) continue;
        size_t def_n = kind == BP_SCENE_SEED ? 500 : 100000;
        size_t ns[32];
        for (size_t k = 0; k < count; ++k) ns[k] = o.n_count ? o.ns[k] : def_n;
        bm_opts os = o;
        if (!o.n_count) os.n_max = def_n;
        memset(all, 0, tc * count * BM_ROW_MAX * sizeof *all);
        for (size_t k = 0; k < count; ++k) {
            if (o.frames_count) os.frames = o.frames_at[k];
            for (size_t t = 0; t < tc; ++t) {
                // Peers and baselines are single-threaded: they run with the first count only.
                bm_opts ot = os;
                ot.workers = o.threads[t];
                if (t > 0) {
                    for (size_t r = 0; r < BM_METHOD_COUNT; ++r)
                        if (bm_row_serial(r)) ot.methods[r] = false;
                    memset(ot.peers, 0, sizeof ot.peers);
                }
                if (bm_block(&ot, kind, ns[k], &sc, &mismatch, &all[(t * count + k) * BM_ROW_MAX], &sink) != BP_EXIT_OK)
                    status = BP_EXIT_FAIL;
            }
        }
        // The per-scene table: with several N, with peers, or with --memory (one N alone is the block above).
        if (o.format == BM_TABLE && (count > 1 || bm_any_peer(&o) || o.memory))
            bm_print_summary(&os, kind, ns, count, all);
        if (o.format == BM_TABLE && tc > 1) bm_print_threads(&os, kind, ns, count, all);
        if (o.out_dir && gnuplot) gnuplot = bm_plot(&os, kind, ns, count, all);
        fflush(stdout);
    }
    if (o.format == BM_JSON) fputs("\n]\n", stdout);
    free(all);
    free(sc.keys);
    if (sink.csv && fclose(sink.csv) != 0) {
        fprintf(stderr, "broadphase bench: writing %s/bench.csv failed\n", o.out_dir);
        status = BP_EXIT_FAIL;
    }
    if (o.out_dir && !gnuplot)
        fprintf(stderr, "broadphase bench: gnuplot not found: wrote %s/bench.csv only, no plot\n", o.out_dir);
    if (fflush(stdout) != 0) status = BP_EXIT_FAIL;
    if (mismatch) {
        fprintf(stderr, "broadphase bench: --check found mismatches\n");
        status = BP_EXIT_FAIL;
    }
    return status;
}
