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
#ifndef BROADPHASE_H
#define BROADPHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_VERSION_MAJOR 0
#define BP_VERSION_MINOR 1
#define BP_VERSION_PATCH 0
#define BP_VERSION_STRING "0.1.0"

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
    BP_ERR_NEGATIVE_RADIUS = -11 ///< a query circle/sphere or narrow-test radius is negative
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
/// NULL; `free` receives the size that was asked for. All three zero: the C library.
typedef struct bp_allocator {
    void *(*alloc)(size_t size, size_t align, void *user);
    void (*free)(void *ptr, size_t size, void *user);
    void *user;
} bp_allocator;

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

/// Everything a context is created from. Get it from bp_default_context_def(), then change the
/// fields you care about. Zero in a numeric option means "choose automatically".
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
} bp_context_def;

/// The defaults: dimension 2, AUTO, unsorted pairs, C library allocator, sweep axis automatic
/// with coherence, every other option automatic.
BP_API bp_context_def bp_default_context_def(void);

/// A reusable broad-phase context. Not thread-safe: one thread at a time per context.
typedef struct bp_context bp_context;

/// Creates a context. Errors: BP_ERR_NULL (def or out NULL), BP_ERR_INVALID_ARG (bad dimension,
/// method out of range, half an allocator, bad option), BP_ERR_UNSUPPORTED (method not built),
/// BP_ERR_NOMEM. On error *out is set to NULL.
BP_API bp_status bp_context_create(const bp_context_def *def, bp_context **out);

/// Frees the context and everything it owns. NULL is accepted and ignored.
BP_API void bp_context_destroy(bp_context *ctx);

/// The definition the context was created with (defaults resolved). BP_ERR_NULL on NULL.
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
    uint64_t checks;      ///< candidate box-box tests performed (seed 004's "number of checks")
    uint64_t pairs;       ///< pairs found (delivered, for a call stopped by its callback)
    bp_method method;     ///< the method that ran (what AUTO chose)
    size_t bytes;         ///< memory the context holds now, through its allocator
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

/// Narrow tests, exact for the closed rule (computed in double; touching counts).
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

#ifdef __cplusplus
}
#endif

#endif
