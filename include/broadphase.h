/// broadphase: find every overlapping pair among many moving boxes, frame after frame.
///
/// The whole public API is in this header. Every symbol starts with `bp_` (types, functions) or
/// `BP_` (macros, enum values). Every entry point returns a `bp_status`.
///
/// The overlap rule (closed intervals, touching counts): boxes a and b overlap when, on every
/// axis k, a.min[k] <= b.max[k] and b.min[k] <= a.max[k]. A box with min == max on an axis (a
/// point, a segment) is valid. Coordinates are floats; NaN and infinities are rejected.
///
/// Typical use, once per frame:
///
///     bp_context_def def = bp_default_context_def();
///     def.dimension = 2;
///     bp_context *ctx;
///     if (bp_context_create(&def, &ctx) != BP_OK) ...;
///     for (;;) {
///         bp_pairs out;
///         bp_status st = bp_find_pairs2(ctx, boxes, n, &out);
///         for (size_t k = 0; k < out.count; ++k) use(out.pairs[k].i, out.pairs[k].j);
///     }
///     bp_context_destroy(ctx);
///
/// Copyright (c) 2026 The broadphase authors. SPDX-License-Identifier: MIT (see LICENSE).
#ifndef BROADPHASE_H
#define BROADPHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_VERSION_MAJOR 0
#define BP_VERSION_MINOR 3
#define BP_VERSION_PATCH 0
#define BP_VERSION_STRING "0.3.0"

#if defined(BP_STATIC)
#define BP_API
#elif defined(_WIN32)
#if defined(BP_BUILDING)
#define BP_API __declspec(dllexport)
#else
#define BP_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(BP_BUILDING)
#define BP_API __attribute__((visibility("default")))
#else
#define BP_API
#endif

/// The largest number of boxes one call accepts (2^30). Larger counts return BP_ERR_TOO_MANY.
#define BP_MAX_BOXES ((size_t)1 << 30)

/// Result of every entry point. BP_OK is zero; every error is negative.
typedef enum bp_status {
    BP_OK = 0,
    BP_ERR_NULL = -1,            ///< a required pointer argument is NULL
    BP_ERR_INVALID_ARG = -2,     ///< an argument or definition field is out of range
    BP_ERR_NONFINITE = -3,       ///< a coordinate (or radius) is NaN or infinite
    BP_ERR_INVERTED_BOX = -4,    ///< a box has min > max on some axis
    BP_ERR_TOO_MANY = -5,        ///< more boxes than BP_MAX_BOXES
    BP_ERR_NOMEM = -6,           ///< an allocation failed; the context stays usable, nothing leaks
    BP_ERR_UNSUPPORTED = -7,     ///< the method is not available (not built, or not implemented)
    BP_ERR_DIMENSION = -8,       ///< a 2D call on a 3D context or the reverse
    BP_ERR_NO_BOXES = -9,        ///< a query before any successful pair-finding call
    BP_ERR_STOPPED = -10,        ///< the pair callback returned false; delivery stopped early
    BP_ERR_NEGATIVE_RADIUS = -11, ///< a query circle/sphere or narrow-test radius is negative
    BP_ERR_STALE = -12,          ///< a world proxy id that was removed, never issued, or is another world's
    BP_ERR_NULL_PROXY = -13,     ///< a world proxy id is the null id (BP_NULL_PROXY)
    BP_ERR_DEF_NOT_INITIALISED = -14 ///< a definition struct not made by its bp_default_*_def() function
} bp_status;

/// A short, constant, human-readable name for a status ("ok", "out of memory", ...). Never NULL;
/// an unknown value gives "unknown status".
BP_API const char *bp_status_string(bp_status status);

/// The broad-phase algorithms. AUTO picks one per call from n and the boxes' size statistics.
typedef enum bp_method {
    BP_METHOD_AUTO = 0,  ///< choose per call (see docs/methods.md for the rule)
    BP_METHOD_BRUTE,     ///< all pairs, the reference; fastest at small n
    BP_METHOD_SWEEP,     ///< sort-and-sweep on one axis with temporal coherence
    BP_METHOD_GRID,      ///< uniform grid (boxes sorted by cell key), with coarser levels for large boxes
    BP_METHOD_QUADTREE,  ///< linear quadtree (2D) / octree (3D) in Morton order
    BP_METHOD_RDC,       ///< recursive dimensional clustering
    BP_METHOD_COUNT
} bp_method;

/// The command-line name of a method ("auto", "brute", "sweep", "grid", "quadtree", "rdc"), or
/// NULL for a value out of range.
BP_API const char *bp_method_name(bp_method method);

/// Parses a command-line method name. BP_ERR_NULL for NULL pointers, BP_ERR_INVALID_ARG for an
/// unknown name (then *method is left unchanged).
BP_API bp_status bp_method_from_name(const char *name, bp_method *method);

/// Whether this build implements the method (AUTO and BRUTE always are). A method that is not
/// available makes bp_context_create return BP_ERR_UNSUPPORTED.
BP_API bool bp_method_available(bp_method method);

/// A 2D box: min and max corner. Valid when min[k] <= max[k] and all values are finite.
typedef struct bp_box2 {
    float min[2];
    float max[2];
} bp_box2;

/// A 3D box: min and max corner.
typedef struct bp_box3 {
    float min[3];
    float max[3];
} bp_box3;

/// One overlapping pair. From bp_find_pairs*: i < j, box indices. From bp_find_pairs_between*:
/// i indexes set A and j indexes set B.
typedef struct bp_pair {
    uint32_t i;
    uint32_t j;
} bp_pair;

/// Pairs owned by the context: valid until the next call on the same context (or its
/// destruction). `pairs` may be NULL when `count` is 0.
typedef struct bp_pairs {
    const bp_pair *pairs;
    size_t count;
} bp_pairs;

/// Receives pairs in batches during a call (for outputs too large to hold). Return true to go
/// on, false to stop: the call then returns BP_ERR_STOPPED. The batch is only valid during the
/// callback.
typedef bool bp_pair_fn(const bp_pair *pairs, size_t count, void *user);

/// Box indices owned by the context, ascending: valid until the next call on the context.
typedef struct bp_indices {
    const uint32_t *indices;
    size_t count;
} bp_indices;

/// Allocation hooks. `alloc` returns memory aligned to `align` (a power of two, at most 64) or
/// NULL; `free` receives the size that was asked for. All three zero: the C library. With several
/// workers the hooks may be called from any of them, but never from two at once. Hooks that
/// break this promise (a block not aligned as asked, or a block handed out again while it is
/// still in use) are outside the contract: the library's behaviour is then undefined. Debug
/// builds (without NDEBUG) assert both where it is cheap. Returning NULL is always allowed:
/// the call fails with BP_ERR_NOMEM, leaks nothing, and the context or world stays usable.
typedef struct bp_allocator {
    void *(*alloc)(size_t size, size_t align, void *user);
    void (*free)(void *ptr, size_t size, void *user);
    void *user;
} bp_allocator;

/// The most workers a context or world accepts (bp_context_def.workers, bp_world_def.workers).
#define BP_MAX_WORKERS 256

/// Task hooks: run the library's parallel work on an engine's own scheduler instead of threads of
/// its own (the model is Box2D v3's enqueue/finish callbacks). A task body processes items
/// [begin, end) of a task on worker `worker`, 0 <= worker < workers: two ranges that run at the
/// same time must be given different worker numbers (each worker has its own scratch memory).
/// Ranges may run in any order, on any thread, or all on the calling thread: the results are the
/// same. `task_context` is the library's, to be passed back unchanged.
typedef void bp_task_fn(uint32_t begin, uint32_t end, uint32_t worker, void *task_context);

/// Starts `task` over the items [0, count), in ranges of at least `min_range` items (the last may
/// be shorter), and returns a handle for the finish hook; or runs every item itself before
/// returning (for example `task(0, count, 0, task_context)`) and returns NULL, and then the
/// finish hook is not called. `user` is the definition's task_user.
typedef void *bp_enqueue_task_fn(bp_task_fn *task, uint32_t count, uint32_t min_range, void *task_context,
                                 void *user);

/// Waits until every item of the task `handle` (from the enqueue hook) has run.
typedef void bp_finish_task_fn(void *handle, void *user);

/// How method `grid` stores its cells (docs/grid.md). Either way the pairs are the same.
typedef enum bp_grid_layout {
    /// The table in small 2D worlds (at most 16 finest cells per box, 2^20 cells in all) where
    /// every box fits the finest cells and cells are not crowded (measured on the last frame:
    /// below 30% of the boxes sharing a cell); sorted otherwise.
    BP_GRID_LAYOUT_AUTO = 0,
    /// Cells are runs of boxes sorted by cell key, with coarser levels for large boxes: any
    /// world, any sizes, memory proportional to the boxes.
    BP_GRID_LAYOUT_SORTED,
    /// 2D: cells are lists through a table of every finest cell (no sort); used whenever every
    /// box fits the finest cells and the table has at most 2^20 cells, sorted otherwise.
    BP_GRID_LAYOUT_TABLE,
} bp_grid_layout;

/// Definition structs (bp_context_def, bp_world_def, bp_proxy_def; bp_mpi_def in
/// broadphase_mpi.h) follow one rule: get one from its bp_default_*_def() function, then change
/// the fields you care about. The default function sets the hidden field `internal_value`, and
/// every call that takes a definition rejects one without it (zeroed by memset or `= {0}`, or
/// written with designated initialisers) with BP_ERR_DEF_NOT_INITIALISED. A zeroed struct cannot
/// simply mean the defaults: zero is a real setting in some fields (a proxy's category 0 and
/// mask 0 pair with nothing, as they do in bp_world_set_filter; sweep axis 0 is x; coherence
/// false turns it off; an MPI communicator handle is not 0), so it would silently mean other
/// settings than the defaults. Never set `internal_value` yourself.

/// Everything a context is created from. Get it from bp_default_context_def(), then change the
/// fields you care about. Zero means "choose automatically" only in the options that say so.
typedef struct bp_context_def {
    int dimension;           ///< 2 or 3. Default 2.
    bp_method method;        ///< default BP_METHOD_AUTO
    bool sort_pairs;         ///< deliver pairs sorted by (i, j). Default false (method order).
    bp_allocator allocator;  ///< default: malloc/free
    struct {
        int axis;            ///< -1: choose from the boxes' spread each call (default); 0..dim-1 fixed
        bool coherence;      ///< reuse last frame's order (adaptive insertion sort). Default true.
    } sweep;
    struct {
        /// Finest cell edge; 0: automatic, 1.5x (2D) or 1.25x (3D) the 75th percentile of sampled
        /// extents, at least 0.35x the spacing of the boxes (docs/grid.md).
        float cell_size;
        bp_grid_layout layout;  ///< how cells are stored. Default BP_GRID_LAYOUT_AUTO.
        /// For tests: the pair kernels of crowded cells. 0 (default): the widest SIMD kernels the
        /// CPU has, where cells are crowded; 1: the scalar loops only; 2: the SIMD kernels on every
        /// block; 3: as 2 with the AVX2 kernels even where AVX-512 is there. The same pairs in the
        /// same order whatever the value (other values count as 0).
        int kernels;
    } grid;
    struct {
        /// Finest level L (2^L cells per axis); 0: automatic from n and sizes (docs/quadtree.md).
        int levels;
        /// Loose cells (placement by centre and size). Default false: the seed's strict placement,
        /// which tests fewer candidates on every scene measured and is faster on all but the small,
        /// dense `seed` scene (docs/quadtree.md).
        bool loose;
        bool fixed_world;    ///< use world_min/world_max instead of the boxes' bounds
        float world_min[3];
        float world_max[3];
    } quadtree;
    struct {
        uint32_t threshold;  ///< groups of at most this many boxes are brute-forced; 0: automatic (8)
        float epsilon;       ///< shrink (>0) or grow (<0) intervals; 0: closed-interval rule
    } rdc;
    /// Threads one call may use, the calling thread included: 1 (the default; 0 means 1) runs
    /// everything on the calling thread and creates no thread. From 2 to BP_MAX_WORKERS, the
    /// context starts workers - 1 threads of its own when it is created (they sleep between
    /// calls), or, with the task hooks below, hands its tasks to the engine's scheduler. The
    /// pairs, their order and the callback's batches are the same for every worker count; the
    /// callback is always called from the calling thread. Memory: the tasks' pairs are held
    /// once more while they are merged (docs/architecture.md, "Threads").
    int workers;
    /// Optional task hooks (both or neither): with them no thread is created and tasks run on the
    /// engine's scheduler, with worker numbers below `workers`.
    bp_enqueue_task_fn *enqueue_task;
    bp_finish_task_fn *finish_task;
    void *task_user;  ///< given to both hooks
    /// Calls with fewer boxes than this run on the calling thread alone, where waking workers
    /// costs more than they save; 0: automatic (BP_PARALLEL_MIN_AUTO boxes, docs/architecture.md).
    /// A value below the passes' usual task sizes (1,024 to 32,768 items) also makes their tasks
    /// that small: for tests of the parallel paths on small inputs. No effect with 1 worker.
    size_t parallel_min;
    uint32_t internal_value; ///< set by bp_default_context_def(); never set it yourself
} bp_context_def;

/// What parallel_min 0 means: calls with fewer boxes stay on the calling thread.
#define BP_PARALLEL_MIN_AUTO 32768

/// The defaults: dimension 2, AUTO, unsorted pairs, C library allocator, one worker (no thread),
/// sweep axis automatic with coherence, every other option automatic.
BP_API bp_context_def bp_default_context_def(void);

/// A reusable broad-phase context. Not thread-safe: one thread at a time calls a context (which
/// may then use its workers).
typedef struct bp_context bp_context;

/// Creates a context (and, for workers > 1 without task hooks, its threads). Errors: BP_ERR_NULL
/// (def or out NULL), BP_ERR_DEF_NOT_INITIALISED (def not from bp_default_context_def()),
/// BP_ERR_INVALID_ARG (bad dimension, method out of range, half an allocator,
/// half the task hooks, workers out of range, bad option), BP_ERR_UNSUPPORTED (method not built),
/// BP_ERR_NOMEM (memory, or a thread could not be started). On error *out is set to NULL.
BP_API bp_status bp_context_create(const bp_context_def *def, bp_context **out);

/// Frees the context and everything it owns. NULL is accepted and ignored.
BP_API void bp_context_destroy(bp_context *ctx);

/// The definition the context was created with (defaults resolved): a valid definition for
/// bp_context_create. BP_ERR_NULL on NULL.
BP_API bp_status bp_context_get_def(const bp_context *ctx, bp_context_def *def);

/// Hands the context this frame's 2D boxes (box k is object k; keep indices stable between
/// frames so methods can exploit coherence) and finds every overlapping pair, each unordered
/// pair once as (i, j) with i < j, into a buffer the context owns (`out`, valid until the next
/// call). A warm context (same n, similar pair count) allocates nothing.
/// Errors: BP_ERR_NULL (ctx/out NULL, or boxes NULL with n > 0), BP_ERR_DIMENSION (3D context),
/// BP_ERR_TOO_MANY, BP_ERR_NONFINITE, BP_ERR_INVERTED_BOX, BP_ERR_NOMEM. On error *out is empty
/// and the context holds no boxes (queries answer BP_ERR_NO_BOXES until the next success).
BP_API bp_status bp_find_pairs2(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pairs *out);

/// The 3D form of bp_find_pairs2.
BP_API bp_status bp_find_pairs3(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pairs *out);

/// As bp_find_pairs2, but pairs go to `fn` in batches instead of a buffer: memory stays bounded
/// whatever the number of pairs (unless sort_pairs is set, which must see them all first).
/// Additional error: BP_ERR_STOPPED when fn returns false.
BP_API bp_status bp_find_pairs2_cb(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pair_fn *fn,
                                   void *user);

/// The 3D form of bp_find_pairs2_cb.
BP_API bp_status bp_find_pairs3_cb(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pair_fn *fn,
                                   void *user);

/// Bipartite: every pair (i, j) with a[i] overlapping b[j] (bullets against ships); pairs within
/// A or within B are not reported. Afterwards, region queries run against A followed by B
/// (B's box j has index na + j there). Errors as bp_find_pairs2; na + nb counts against
/// BP_MAX_BOXES.
BP_API bp_status bp_find_pairs_between2(bp_context *ctx, const bp_box2 *a, size_t na, const bp_box2 *b,
                                        size_t nb, bp_pairs *out);

/// The 3D form of bp_find_pairs_between2.
BP_API bp_status bp_find_pairs_between3(bp_context *ctx, const bp_box3 *a, size_t na, const bp_box3 *b,
                                        size_t nb, bp_pairs *out);

/// Statistics of the last pair-finding call.
typedef struct bp_stats {
    size_t n;             ///< boxes in the call
    uint64_t checks;      ///< candidate box-box tests performed (seed 004's "number of checks"); 0 after an error
    uint64_t pairs;       ///< pairs found (delivered, for a call stopped by its callback)
    bp_method method;     ///< the method that ran (what AUTO chose)
    size_t bytes;         ///< memory the context holds now, through its allocator
    // The speed features of the method that ran (docs/methods.md), for tests and tuning. A method
    // without the feature leaves its default (-1, false or 0).
    int sweep_axis;       ///< sort-and-sweep: the axis it swept along (0 x, 1 y, 2 z), the one along which the
                          ///< boxes spread most for their size (def.sweep.axis fixes it); -1 for the other methods
    bool coherent;        ///< sort-and-sweep, RDC, quadtree, grid (sorted layout): the call started from the order the last call left and
                          ///< kept it (an insertion sort of a few moves, or the moved boxes merged back): no full sort
    size_t moved;         ///< quadtree, grid (sorted layout): boxes whose cell changed since the last call (sorted
                          ///< and merged back, or all sorted again past a share of the boxes); n when the last
                          ///< order was of no use (first call, another count of boxes, other cells) or given up
    uint64_t full_sorts;  ///< sort-and-sweep, RDC, quadtree, grid (sorted layout): sorts of the whole set from scratch (not from the last
                          ///< call's order), counted over every call of the method on this context
    uint64_t resorts;     ///< of full_sorts, those that came after the last call's order was tried and given up
                          ///< (too many boxes moved past each other, or to other cells)
} bp_stats;

/// Statistics of the last call. BP_ERR_NULL on NULL.
BP_API bp_status bp_get_stats(const bp_context *ctx, bp_stats *stats);

/// Region queries against the boxes of the last successful pair-finding call, answered from the
/// method's own structure where it has one. Results: indices ascending, in a buffer the context
/// owns (valid until the next call). `lo`/`hi`/`center`/`point` hold `dimension` floats.
/// Errors: BP_ERR_NULL, BP_ERR_NO_BOXES (no successful call yet), BP_ERR_NONFINITE,
/// BP_ERR_INVERTED_BOX (lo > hi), BP_ERR_NEGATIVE_RADIUS, BP_ERR_NOMEM.

/// Every box that overlaps the box [lo, hi] (closed rule).
BP_API bp_status bp_query_box(bp_context *ctx, const float *lo, const float *hi, bp_indices *out);

/// Every box within distance `radius` of `center` (a circle in 2D, a sphere in 3D): the exact
/// box-to-point distance, not the circle's bounding box. Distance == radius counts.
BP_API bp_status bp_query_sphere(bp_context *ctx, const float *center, float radius, bp_indices *out);

/// Every box that contains `point` (boundary included).
BP_API bp_status bp_query_point(bp_context *ctx, const float *point, bp_indices *out);

/// Debug drawing: each method draws its partition (cells, nodes, groups, intervals) through
/// these callbacks. `lo`/`hi` have `dimension` floats; `level` is a method-specific depth or
/// kind: sweep, an interval on the sweep axis (flat on the others) raised by its place in the
/// active window; grid, 0 the window, 1 .. L occupied cells from the coarsest level to the
/// finest, L + 1 every finest cell when there are at most 4,096; quadtree, an occupied
/// cell's depth (0 the root); rdc, 0 a final group, 1 + depth a group that was cut further.
/// Any callback may be NULL.
typedef struct bp_debug_draw {
    void (*box)(const float *lo, const float *hi, int level, void *user);
    void *user;
} bp_debug_draw;

/// Draws the structure of the last successful call. BP_ERR_NULL, BP_ERR_NO_BOXES.
BP_API bp_status bp_debug_draw_structure(const bp_context *ctx, const bp_debug_draw *draw);

/// Checks the method's internal invariants for the last call (sorted endpoints, keys consistent
/// with boxes, every object placed once). BP_OK when they hold, BP_ERR_INVALID_ARG when not.
/// For tests; costs O(n) or more.
BP_API bp_status bp_validate(const bp_context *ctx);

/// Narrow tests, exact for the closed rule (in double, and in exact arithmetic where double is
/// too close to call; touching counts).
/// Each returns BP_OK and writes *hit, or BP_ERR_NULL / BP_ERR_NONFINITE /
/// BP_ERR_INVERTED_BOX / BP_ERR_NEGATIVE_RADIUS for bad input.
BP_API bp_status bp_test_box2(const bp_box2 *a, const bp_box2 *b, bool *hit);
BP_API bp_status bp_test_box3(const bp_box3 *a, const bp_box3 *b, bool *hit);
/// Circles (centres c, radii r): |ca - cb| <= ra + rb.
BP_API bp_status bp_test_circle(const float ca[2], float ra, const float cb[2], float rb, bool *hit);
/// Spheres: |ca - cb| <= ra + rb.
BP_API bp_status bp_test_sphere(const float ca[3], float ra, const float cb[3], float rb, bool *hit);
/// Circle against box (seed 002): the distance from the centre to the box is <= r.
BP_API bp_status bp_test_circle_box(const float c[2], float r, const bp_box2 *box, bool *hit);
/// Sphere against box.
BP_API bp_status bp_test_sphere_box(const float c[3], float r, const bp_box3 *box, bool *hit);


/// ===========================================================================================
/// The persistent world (docs/world.md)
///
/// Objects ("proxies") live across frames and are named by ids. Each update tests only what
/// changed since the last one (moved, added, removed, re-filtered proxies) and reports which
/// pairs began and which ended. A proxy that did not move costs nothing; two static proxies are
/// never tested against each other. Typical use, once per frame:
///
///     bp_world_def def = bp_default_world_def();
///     bp_world *world;
///     bp_world_create(&def, &world);
///     bp_proxy_def pd = bp_default_proxy_def();     // moving, category 1, every mask bit
///     pd.user = entity;                            // given back with every pair and hit
///     bp_proxy_id id;
///     bp_world_add2(world, &box, &pd, &id);
///     for (;;) {
///         bp_world_move2(world, id, &new_box);      // only what moved
///         bp_world_events ev;
///         bp_world_update(world, &ev);
///         for (size_t k = 0; k < ev.begins.count; ++k) touch(ev.begins.pairs[k].user_a, ...);
///         for (size_t k = 0; k < ev.ends.count; ++k) untouch(...);
///     }
///     bp_world_destroy(world);
///
/// A pair (a, b) is reported when the boxes overlap (the closed rule above), when
/// (a.category & b.mask) != 0 and (b.category & a.mask) != 0 (Box2D's rule), and when a and b
/// are not both static.
/// ===========================================================================================

/// A proxy id: a handle of its own type, so that an id and a user value, a category or a mask
/// cannot be passed for each other (`bp_world_set_user(w, user, id)` does not compile). `v` is
/// (slot << 32) | generation, never 0 for a proxy: store it, print it, hash it, sort by it
/// (sorting by `v` sorts by slot: the order every world output uses). An id goes stale when its
/// proxy is removed, and using it then returns BP_ERR_STALE, never another proxy's data. Ids of
/// another world are rejected too (generations start at a per-world value: a foreign id matches
/// a live proxy only by a 1 in 2^32 chance).
typedef struct bp_proxy_id {
    uint64_t v;
} bp_proxy_id;

/// The null id, which no proxy ever has: every call that takes an id rejects it with
/// BP_ERR_NULL_PROXY, and the calls that add proxies write it where they fail. `{0}` initialises
/// a bp_proxy_id to it too.
#ifdef __cplusplus
#define BP_NULL_PROXY (bp_proxy_id{0})
#else
#define BP_NULL_PROXY ((bp_proxy_id){0})
#endif

/// The null id, as a function. Whether `id` is the null id. Whether two ids are the same.
static inline bp_proxy_id bp_proxy_null(void) {
    bp_proxy_id id = {0};
    return id;
}
static inline bool bp_proxy_is_null(bp_proxy_id id) { return id.v == 0; }
static inline bool bp_proxy_equal(bp_proxy_id a, bp_proxy_id b) { return a.v == b.v; }

/// How a proxy takes part in pairs. Both kinds can be moved; the kind only decides pairing.
typedef enum bp_proxy_kind {
    BP_PROXY_MOVING = 0,  ///< pairs with every proxy its filter allows
    BP_PROXY_STATIC = 1   ///< never pairs with another static proxy (walls, terrain)
} bp_proxy_kind;

/// A proxy's settings besides its box. Get it from bp_default_proxy_def() (see "Definition
/// structs" above: category 0 and mask 0 are real filters, so a zeroed def is rejected).
typedef struct bp_proxy_def {
    bp_proxy_kind kind;  ///< default BP_PROXY_MOVING
    uint32_t internal_value; ///< set by bp_default_proxy_def(); never set it yourself (fills the padding after kind)
    uint64_t category;   ///< the groups the proxy belongs to; default 1
    uint64_t mask;       ///< the groups it pairs with; default UINT64_MAX (all)
    uint64_t user;       ///< your value, returned with its pairs, events and query hits; default 0
} bp_proxy_def;

/// Moving, category 1, mask UINT64_MAX, user 0.
BP_API bp_proxy_def bp_default_proxy_def(void);

/// How the world finds what changed (docs/world.md). The events are the same either way.
typedef enum bp_world_mode {
    /// Incremental when a small share of the proxies changed since the last update, rebuild
    /// otherwise (the crossover is measured, docs/world.md).
    BP_WORLD_MODE_AUTO = 0,
    /// Always patch the persistent cells: only changed proxies are looked at.
    BP_WORLD_MODE_INCREMENTAL,
    /// Always find every pair again with the stateless method (def.method) and diff the pair
    /// sets: best when nearly everything moves.
    BP_WORLD_MODE_REBUILD,
} bp_world_mode;

/// Everything a world is created from. Get it from bp_default_world_def(). Zero means "choose
/// automatically" in the options that say so.
typedef struct bp_world_def {
    int dimension;          ///< 2 or 3. Default 2.
    bp_allocator allocator; ///< default: malloc/free
    bp_world_mode mode;     ///< default BP_WORLD_MODE_AUTO
    /// Edge of the finest persistent cells; 0: automatic, from the proxies' sizes, re-chosen
    /// when a rebuild finds them changed (docs/world.md).
    float cell_size;
    /// The stateless method used by rebuild updates and for pairs of two changed proxies.
    /// Default BP_METHOD_AUTO.
    bp_method method;
    /// Threads an update may use, the calling thread included, as bp_context_def.workers: 1 (the
    /// default; 0 means 1) creates no thread; the events are the same for every count.
    int workers;
    /// Optional task hooks (both or neither), as in bp_context_def.
    bp_enqueue_task_fn *enqueue_task;
    bp_finish_task_fn *finish_task;
    void *task_user;  ///< given to both hooks
    uint32_t internal_value; ///< set by bp_default_world_def(); never set it yourself
} bp_world_def;

/// Dimension 2, C library allocator, mode AUTO, automatic cell size, method AUTO, one worker.
BP_API bp_world_def bp_default_world_def(void);

/// A persistent world. Not thread-safe: one thread at a time per world.
typedef struct bp_world bp_world;

/// Creates a world. Errors: BP_ERR_NULL, BP_ERR_DEF_NOT_INITIALISED (def not from
/// bp_default_world_def()), BP_ERR_INVALID_ARG (bad dimension, mode, method or cell size, half
/// an allocator), BP_ERR_UNSUPPORTED (method not built), BP_ERR_NOMEM. On error
/// *out is NULL.
BP_API bp_status bp_world_create(const bp_world_def *def, bp_world **out);

/// Frees the world and everything it owns (ids become meaningless). NULL is ignored.
BP_API void bp_world_destroy(bp_world *world);

/// Adds one proxy with box `box` and settings `def` (NULL: bp_default_proxy_def()); *id receives
/// its id. Its pairs begin at the next update. Errors: BP_ERR_NULL, BP_ERR_DIMENSION,
/// BP_ERR_NONFINITE, BP_ERR_INVERTED_BOX, BP_ERR_DEF_NOT_INITIALISED (def not from
/// bp_default_proxy_def()), BP_ERR_INVALID_ARG (kind out of range),
/// BP_ERR_TOO_MANY (BP_MAX_BOXES proxies), BP_ERR_NOMEM. On error nothing is added and *id is
/// BP_NULL_PROXY.
BP_API bp_status bp_world_add2(bp_world *world, const bp_box2 *box, const bp_proxy_def *def, bp_proxy_id *id);
BP_API bp_status bp_world_add3(bp_world *world, const bp_box3 *box, const bp_proxy_def *def, bp_proxy_id *id);

/// Adds n proxies in one call: box k with defs[k] (defs NULL: the defaults for all), its id in
/// ids[k]. All or nothing: when an entry is bad (or memory runs out) nothing is added, every
/// ids[k] is BP_NULL_PROXY, and bp_world_bad_index() names the first bad entry. (BP_ERR_NULL,
/// BP_ERR_DIMENSION and BP_ERR_TOO_MANY are found before ids is written, and leave it alone.)
BP_API bp_status bp_world_add_batch2(bp_world *world, const bp_box2 *boxes, const bp_proxy_def *defs, size_t n,
                                     bp_proxy_id *ids);
BP_API bp_status bp_world_add_batch3(bp_world *world, const bp_box3 *boxes, const bp_proxy_def *defs, size_t n,
                                     bp_proxy_id *ids);

/// Gives proxy `id` a new box. Its pairs change at the next update; queries see the new box at
/// once. Errors: BP_ERR_NULL, BP_ERR_NULL_PROXY, BP_ERR_STALE, BP_ERR_DIMENSION,
/// BP_ERR_NONFINITE, BP_ERR_INVERTED_BOX, BP_ERR_NOMEM. On error nothing changes.
BP_API bp_status bp_world_move2(bp_world *world, bp_proxy_id id, const bp_box2 *box);
BP_API bp_status bp_world_move3(bp_world *world, bp_proxy_id id, const bp_box3 *box);

/// Moves n proxies: ids[k] to boxes[k]. An id given twice takes its last box. All or nothing,
/// as bp_world_add_batch2 (bp_world_bad_index() names the first bad entry).
BP_API bp_status bp_world_move_batch2(bp_world *world, const bp_proxy_id *ids, const bp_box2 *boxes, size_t n);
BP_API bp_status bp_world_move_batch3(bp_world *world, const bp_proxy_id *ids, const bp_box3 *boxes, size_t n);

/// Removes proxy `id`: its id goes stale at once, and every pair it had at the last update is
/// reported as ended by the next one. Errors: BP_ERR_NULL (world NULL), BP_ERR_NULL_PROXY,
/// BP_ERR_STALE (removed already, never issued, another world's), BP_ERR_NOMEM.
BP_API bp_status bp_world_remove(bp_world *world, bp_proxy_id id);

/// Removes n proxies. All or nothing: an id that is stale, or given twice, fails the whole
/// batch with BP_ERR_STALE, a null id with BP_ERR_NULL_PROXY (bp_world_bad_index() names the
/// entry).
BP_API bp_status bp_world_remove_batch(bp_world *world, const bp_proxy_id *ids, size_t n);

/// Changes a proxy's kind, or its category and mask, without removing it: its pairs are
/// re-evaluated at the next update. Errors: BP_ERR_NULL, BP_ERR_NULL_PROXY, BP_ERR_STALE,
/// BP_ERR_INVALID_ARG (kind out of range), BP_ERR_NOMEM.
BP_API bp_status bp_world_set_kind(bp_world *world, bp_proxy_id id, bp_proxy_kind kind);
BP_API bp_status bp_world_set_filter(bp_world *world, bp_proxy_id id, uint64_t category, uint64_t mask);

/// Changes the user value returned with the proxy's pairs and hits (pairs already reported keep
/// the old one). Errors: BP_ERR_NULL, BP_ERR_NULL_PROXY, BP_ERR_STALE.
BP_API bp_status bp_world_set_user(bp_world *world, bp_proxy_id id, uint64_t user);

/// A proxy as it is now.
typedef struct bp_proxy_info {
    float min[3], max[3];  ///< the box (`dimension` floats used)
    bp_proxy_kind kind;
    uint64_t category, mask, user;
} bp_proxy_info;

/// Reads a proxy. Errors: BP_ERR_NULL, BP_ERR_NULL_PROXY, BP_ERR_STALE.
BP_API bp_status bp_world_get_proxy(const bp_world *world, bp_proxy_id id, bp_proxy_info *info);

/// For a batch call that failed on one of its entries: that entry's index. SIZE_MAX when the
/// last call on the world did not fail on an entry (it succeeded, or failed for another reason
/// such as out of memory). BP_ERR_NULL on NULL.
BP_API bp_status bp_world_bad_index(const bp_world *world, size_t *index);

/// One pair of proxies, a.v < b.v, with their user values as they are when the pair is reported (a
/// removed proxy's: its last value).
typedef struct bp_world_pair {
    bp_proxy_id a, b;
    uint64_t user_a, user_b;
} bp_world_pair;

/// Pairs owned by the world, sorted by (a.v, b.v), valid until the next call on the world that
/// changes it (add, move, remove, set_*, update, get_pairs, queries) or its destruction.
typedef struct bp_world_pairs {
    const bp_world_pair *pairs;
    size_t count;
} bp_world_pairs;

/// What an update found: pairs that overlap now and did not at the last update (including the
/// pairs of proxies added since), and pairs that did and do not now (including every pair of a
/// proxy removed since). Each list sorted by (a.v, b.v): the same on every run, whatever the order
/// of the calls that led to it.
typedef struct bp_world_events {
    bp_world_pairs begins;
    bp_world_pairs ends;
} bp_world_events;

/// Finds this frame's pairs from what changed since the last update and reports the events
/// (`events` may be NULL: the world is brought up to date, events are dropped). An update with
/// nothing changed costs next to nothing. Errors: BP_ERR_NULL (world NULL), BP_ERR_NOMEM (the
/// world stays as it was: the changes are kept for the next update).
BP_API bp_status bp_world_update(bp_world *world, bp_world_events *events);

/// Every pair as of the last update, sorted by (a.v, b.v). Costs time in proportion to the pairs
/// (the set is kept as it changes). Errors: BP_ERR_NULL, BP_ERR_NOMEM.
BP_API bp_status bp_world_get_pairs(bp_world *world, bp_world_pairs *out);

/// Query results: ids ascending (by `v`), with each proxy's user value; owned by the world, valid until
/// the next call on it.
typedef struct bp_world_hits {
    const bp_proxy_id *ids;
    const uint64_t *users;
    size_t count;
} bp_world_hits;

/// Region queries against the proxies' current boxes (moves since the last update included).
/// A proxy is a hit when it meets the shape and (its category & mask) != 0. `lo`, `hi`,
/// `center`, `point` hold `dimension` floats. Errors: BP_ERR_NULL, BP_ERR_NONFINITE,
/// BP_ERR_INVERTED_BOX, BP_ERR_NEGATIVE_RADIUS, BP_ERR_NOMEM.
BP_API bp_status bp_world_query_box(bp_world *world, const float *lo, const float *hi, uint64_t mask,
                                    bp_world_hits *out);
/// Every proxy within `radius` of `center` (exact box-to-point distance).
BP_API bp_status bp_world_query_sphere(bp_world *world, const float *center, float radius, uint64_t mask,
                                       bp_world_hits *out);
/// Every proxy whose box contains `point`.
BP_API bp_status bp_world_query_point(bp_world *world, const float *point, uint64_t mask, bp_world_hits *out);

/// Statistics of the world and of its last update.
typedef struct bp_world_stats {
    size_t proxies;        ///< live proxies
    size_t pairs;          ///< pairs as of the last update
    size_t changed;        ///< proxies the last update looked at (moved, added, removed, re-filtered)
    size_t begins, ends;   ///< events of the last update
    uint64_t checks;       ///< candidate box tests of the last update
    bool rebuilt;          ///< the last update rebuilt (rather than patched)
    size_t near_hits;      ///< changed proxies the last update decided from their near lists
                           ///< (docs/world.md: the static proxies they can meet, kept)
    size_t bytes;          ///< memory the world holds now, through its allocator
} bp_world_stats;

/// Statistics. BP_ERR_NULL on NULL.
BP_API bp_status bp_world_get_stats(const bp_world *world, bp_world_stats *stats);

/// Draws the world's cells through the callbacks (`level` is the cell's level, 0 the finest).
/// BP_ERR_NULL on NULL.
BP_API bp_status bp_world_debug_draw(bp_world *world, const bp_debug_draw *draw);

/// Checks the world's invariants (every live proxy in its cell once, ids and slots consistent,
/// the pair count). BP_OK when they hold, BP_ERR_INVALID_ARG when not. For tests; O(n).
BP_API bp_status bp_world_validate(bp_world *world);

#ifdef __cplusplus
}
#endif

#endif
