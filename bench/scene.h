// The benchmark scenes of docs/scenes.md: a deterministic generator shared by
// the CLI's bench, the tests and every engineer's timing runs, so all numbers are comparable.
#ifndef BP_BENCH_SCENE_H
#define BP_BENCH_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The scene kinds of docs/scenes.md: SCENES.md's, then three shapes beyond it that issue #16's
/// probes found hard (docs/scenes.md, "Shapes beyond SCENES.md").
typedef enum bp_scene_kind {
    BP_SCENE_UNIFORM = 0,
    BP_SCENE_CLUSTERED,
    BP_SCENE_MIXED,
    BP_SCENE_LINE,
    BP_SCENE_SEED,
    BP_SCENE_STICKS,
    BP_SCENE_SIZES,
    BP_SCENE_PARETO,
    BP_SCENE_PLATES,
    BP_SCENE_BLOBS,
    BP_SCENE_COUNT
} bp_scene_kind;

/// One scene: objects with centre, velocity and per-axis half extent, all double. Circles and
/// spheres have the half extent r on every axis; `sticks` has 20 on one axis and 0.4 on the
/// others, `plates` 10 and 0.4. Positions, velocities and half extents are stored object-major: p[i * dim + a].
typedef struct bp_scene {
    bp_scene_kind kind;
    int dim;          ///< 2 or 3
    size_t n;         ///< number of objects
    uint64_t seed;    ///< the seed the scene was made from
    uint64_t rng;     ///< splitmix64 state after the initial draws (motion draws nothing)
    double world;     ///< W: the world is [0, W]^dim
    int frame;        ///< frames moved since frame 0
    double *p;        ///< n * dim centres
    double *v;        ///< n * dim velocities
    double *r;        ///< n radii: the largest half extent (the circle's radius)
    double *h;        ///< n * dim half extents: the box is [p - h, p + h]
} bp_scene;

/// The scene name ("uniform", "clustered", "mixed", "line", "seed", "sticks", "sizes", "pareto",
/// "plates", "blobs"), or NULL out of range.
const char *bp_scene_name(bp_scene_kind kind);

/// Parses a scene name. Returns 0 on success, -1 for an unknown name.
int bp_scene_from_name(const char *name, bp_scene_kind *kind);

/// The index of `name` in names[0, count), or -1 (a NULL name too): the lookup behind
/// bp_scene_from_name and bp_wscene_from_name.
int bp_scene_name_index(const char *const *names, int count, const char *name);

/// splitmix64 and the draws of docs/scenes.md, exposed for tests.
uint64_t bp_scene_next(uint64_t *state);
double bp_scene_u01(uint64_t *state);
double bp_scene_uniform(uint64_t *state, double a, double b);
double bp_scene_gauss(uint64_t *state);

/// Builds frame 0 of the scene `name` with n objects in dimension dim (2 or 3) from `seed`
/// (docs/scenes.md's default seed is 1). Returns 0, or -1 for an unknown name, bad dim, n == 0 or
/// n > BP_MAX_BOXES, or out of memory (then *s holds nothing and bp_scene_free is optional).
int bp_scene_init(bp_scene *s, const char *name, size_t n, int dim, uint64_t seed);

/// As bp_scene_init, from a kind.
int bp_scene_init_kind(bp_scene *s, bp_scene_kind kind, size_t n, int dim, uint64_t seed);

/// Moves every object one frame (docs/scenes.md "Objects and motion").
void bp_scene_step(bp_scene *s);

/// docs/scenes.md's move rule on one axis of one object, for every scene and world scene: p += v,
/// then off a wall of [0, w] that the object (half extent r on this axis) crosses, p goes back to
/// touch the wall and v turns. Plain double arithmetic: the check values depend on it.
static inline void bp_scene_move_axis(double *p, double *v, double r, double w) {
    *p += *v;
    if (*p - r < 0.0) {
        *p = r;
        *v = -*v;
    }
    if (*p + r > w) {
        *p = w - r;
        *v = -*v;
    }
}

/// Writes the n boxes of the current frame to `out`: n bp_box2 (dim 2) or bp_box3 (dim 3),
/// i.e. 2 * dim floats per box, min then max, each bound p -+ h computed in double and rounded
/// to the nearest float.
void bp_scene_boxes(const bp_scene *s, float *out);

/// Writes box i of the current frame (2 * dim floats, min then max), as bp_scene_boxes does.
void bp_scene_box(const bp_scene *s, size_t i, float *out);

/// As bp_scene_boxes with a typed destination (the scene's dim must match).
void bp_scene_boxes2(const bp_scene *s, bp_box2 *out);
void bp_scene_boxes3(const bp_scene *s, bp_box3 *out);

/// Frees the scene's arrays; *s is zeroed. Accepts a zeroed or freed scene.
void bp_scene_free(bp_scene *s);

#ifdef __cplusplus
}
#endif

#endif
