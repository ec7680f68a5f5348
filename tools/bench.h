// `broadphase bench`, shared between its files (private to tools/):
//   bench.c         options, the scene x method loop, tables, CSV, JSON, plots
//   bench_run.c     our stateless methods on the docs/scenes.md scenes (and the timing helpers)
//   bench_peer.c    the peers (bench/peers), each in a forked child with a watchdog
//   bench_world.c   the persistent world: rows `world*` on every scene, and the world scenes
//                   (static, shooter) for every row, the world peers included
//   bench_memory.c  --memory: peak resident memory of a row in a fresh process
#ifndef BP_TOOLS_BENCH_H
#define BP_TOOLS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"
#include "naive_sweep.h"
#include "scene.h"
#include "world_scene.h"

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
// (every method reads every box once); BM_WORLD: the persistent world (bp_world) in `mode`.
typedef enum { BM_LIB, BM_RESORT, BM_NAIVE, BM_LOOSE, BM_SORTED, BM_MEMCPY, BM_WORLD } bm_kind;

typedef struct bm_method {
    const char *name;
    bm_kind kind;
    bp_method method;
    bp_world_mode mode;  // BM_WORLD
} bm_method;

/// Every row of ours in table order (bench.c): the baselines first, the world rows last.
#define BM_METHOD_COUNT 14
extern const bm_method bm_methods[BM_METHOD_COUNT];

bool bm_available(const bm_method *m);
/// Rows that are yardsticks, not methods of ours: never "best ours".
bool bm_is_baseline(const bm_method *m);

// --memory runs each method again for frame 0 and at most this many timed frames.
#define BM_MEMORY_FRAMES 2
// Peers compiled in, at most (bench/peers has 8).
#define BM_PEER_MAX 16
// Rows of a table: our methods, then the peers.
#define BM_ROW_MAX (BM_METHOD_COUNT + BM_PEER_MAX)

// Scenes: docs/scenes.md's stateless scenes (bp_scene_kind), then its world scenes (bp_wscene_kind).
#define BM_SCENE_COUNT (BP_SCENE_COUNT + BP_WSCENE_COUNT)
static inline bool bm_scene_is_world(int scene) { return scene >= BP_SCENE_COUNT; }
static inline bp_wscene_kind bm_wscene(int scene) { return (bp_wscene_kind)(scene - BP_SCENE_COUNT); }
const char *bm_scene_name(int scene);

typedef enum { BM_RAN, BM_SKIPPED, BM_FAILED } bm_outcome;

typedef struct bm_result {
    bm_outcome outcome;
    double mean_ms, median_ms, max_ms;
    double estimate_s;  // skipped: the estimated seconds per frame
    double need_gb;     // skipped for memory (world rows: bm_world_too_big): the estimated gigabytes
    uint64_t pairs, checks;
    // A peer whose exact pairs (world scenes: pairs, begins and ends) differed from ours: the
    // first such frame and its counts.
    bool wrong;
    size_t wrong_frame, missing, extra, wrong_frames;
    // --memory at the largest N: peak resident bytes of a child running the same frames.
    bool peak_known;
    uint64_t peak_bytes;
} bm_result;

typedef struct bm_opts {
    bool scenes[BM_SCENE_COUNT];
    bool scene_given;
    size_t ns[32];
    size_t n_count;
    int dim;
    bool methods[BM_METHOD_COUNT];
    bool peers[BM_PEER_MAX];
    bool method_given, all_peers;
    int frames;
    int frames_at[32];    // --frames F,F,...: one count per --n value
    size_t frames_count;  // 0: every N gets `frames`
    int threads[16];      // --threads T,T,...: worker counts (default 1)
    size_t threads_count;
    int workers;          // the worker count of the runs in progress
    uint64_t parallel_min;  // --parallel-min (bp_context_def.parallel_min; 0: automatic)
    enum { BM_TABLE, BM_CSV, BM_JSON } format;
    uint64_t seed;
    bool check, memory;
    const char *out_dir;
    size_t n_max;  // the largest N of the run (--memory measures there)
} bm_opts;

// One row: method k of bm_methods (k < BM_METHOD_COUNT) or peer k - BM_METHOD_COUNT.
static inline bool bm_row_is_peer(size_t row) { return row >= BM_METHOD_COUNT; }
const char *bm_row_name(size_t row);
bool bm_row_on(const bm_opts *o, size_t row);
/// Rows that run once, single-threaded, whatever --threads: peers and our baselines.
bool bm_row_serial(size_t row);
/// The worker count a row ran with.
int bm_row_threads(const bm_opts *o, size_t row);

// Scratch reused across frames and methods for --check.
typedef struct bm_scratch {
    uint64_t *keys;
    size_t cap;
} bm_scratch;

// Peak memory of a run (bench_memory.c).
typedef struct bm_mem {
    bool hwm;
    uint64_t base;
} bm_mem;
void bm_mem_start(bm_mem *m);
uint64_t bm_mem_peak(const bm_mem *m);

/// Monotonic seconds.
double bm_now(void);
/// Ends frame f of a row (f = 0 the untimed warm-up, then 1..frames), which took t seconds:
/// records the time and returns true when the row is over, either skipped (the first of
/// several timed frames passed BM_SKIP_SECONDS) or finished after its last frame (mean, median
/// and worst of the timed frames, and the peak memory with `mem`, the --memory child).
bool bm_frame_end(bm_result *res, double *times, size_t f, double t, size_t frames, const bm_mem *mem);
/// Whether the row would surely take over BM_SKIP_SECONDS a frame on these boxes
/// (bm_stateless_estimate): then the result is marked skipped with the estimate.
bool bm_skip_estimated(bm_result *res, const bm_method *m, const float *boxes, size_t n, int dim);
/// A reference context for the comparisons (sorted pairs); BP_OK or the error (message printed).
bp_status bm_reference_create(int dim, bp_method method, bp_context **ref);
/// What a peer's step of frame f returned: 0 (goes on), BP_PEER_TOO_SLOW (the result marked
/// skipped; returns 1) or a failure (printed; returns -1).
int bm_peer_outcome(int prc, bm_result *res, const char *peer, const char *scene, size_t n, size_t f);
/// Starts a row on a stateless scene: the result cleared and marked failed until it runs, the
/// scene built. Returns 0, or -1 (message printed).
int bm_scene_start(bm_result *res, bp_scene *scene, const bm_opts *o, bp_scene_kind kind, size_t n);
/// A peer's frame f differed from the reference: the first such frame is kept, all are counted.
void bm_mark_wrong(bm_result *res, size_t f, size_t missing, size_t extra);
bp_status bm_lib_call(bp_context *ctx, int dim, const float *boxes, size_t n, bp_pairs *out);

/// One of our stateless rows (not BM_WORLD) set up for n boxes: a context, the naive sweep, or
/// memcpy's destination. Each step hands it every box of the frame (the timed call).
typedef struct bm_stateless {
    const bm_method *m;
    int dim;
    bp_context *ctx;
    bp_naive_sweep naive;
    float *copy;
} bm_stateless;
/// Returns 0, or -1 with a message printed. `o` gives the worker count and threshold.
int bm_stateless_init(bm_stateless *s, const bm_method *m, const bm_opts *o, size_t n);
/// Finds every overlapping pair of the n boxes (memcpy: copies them, no pairs). Returns BP_OK or
/// the error (naive-sweep: BP_ERR_NOMEM).
bp_status bm_stateless_step(bm_stateless *s, const float *boxes, size_t n, const bp_pair **pairs, size_t *count);
/// bm_stateless_step timed: *t is the seconds of that call alone. On an error prints
/// "ROW on SCENE N = n frame f: STATUS" (n the scene's size, `slots` the boxes) and returns it.
bp_status bm_stateless_timed(bm_stateless *s, const float *boxes, size_t slots, const char *scene, size_t n, size_t f,
                             const bp_pair **pairs, size_t *count, double *t);
/// Candidate checks of the last step.
uint64_t bm_stateless_checks(const bm_stateless *s);
void bm_stateless_free(bm_stateless *s);
/// Seconds per frame the row would surely take on these boxes (brute force, naive sweep), or
/// a negative value when it cannot be told before running.
double bm_stateless_estimate(const bm_method *m, const float *boxes, size_t n, int dim);

/// Our stateless rows on a stateless scene (bench_run.c). Returns 0, 1 when --check found a
/// mismatch (the result is still filled), -1 on a library or memory error (message printed).
/// With `mem` (the --memory child) nothing is checked and the peak memory is measured instead.
int bm_run(const bm_opts *o, bp_scene_kind kind, size_t n, const bm_method *m, bm_result *res, bm_scratch *sc,
           bm_mem *mem);

/// A peer (bench_peer.c) on a stateless scene; on a world scene, its persistent interface
/// (bench_world.c). Returns 0 or -1 (message printed).
int bm_run_peer(const bm_opts *o, int scene, size_t n, size_t pk, bm_result *res, bm_mem *mem);
/// bm_run_peer in a forked child with a processor-time watchdog; a child that dies is failed.
int bm_run_peer_child(const bm_opts *o, int scene, size_t n, size_t pk, bm_result *res);
/// Arms (seconds > 0) or disarms the child's watchdog; a no-op outside the child.
void bm_watchdog_arm(double seconds);

/// The persistent world (bench_world.c): a BM_WORLD row on any scene, or any row of ours on a
/// world scene. Same contract as bm_run.
int bm_run_world(const bm_opts *o, int scene, size_t n, const bm_method *m, bm_result *res, bm_mem *mem);
/// A peer's persistent interface on a world scene (bench_world.c).
int bm_run_world_peer(const bm_opts *o, bp_wscene_kind kind, size_t n, size_t pk, bm_result *res, bm_mem *mem);
/// Whether peer pk runs on this scene in this dimension.
bool bm_peer_applies(int scene, size_t pk, int dim);

/// --memory (bench_memory.c): reruns row `row` in a fresh process and stores its peak in res;
/// the child side runs `name` once and prints its peak.
void bm_measure(const bm_opts *o, int scene, size_t n, size_t row, bm_result *res);
int bm_memory_child(const bm_opts *o, const char *name);

#endif
