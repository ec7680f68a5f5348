// The world scenes of docs/scenes.md ("World scenes"): `static` (1% of the objects move, the rest are
// static) and `shooter` (seed 002: ships and bullets that live 60 frames, with categories and
// masks). Objects live in slots; a bullet that dies is replaced in its slot by a new object
// (a new serial), so a persistent world removes the old proxy and adds a new one. Each step
// says which slots moved and which were replaced, so that a world is told only that.
#ifndef BP_BENCH_WORLD_SCENE_H
#define BP_BENCH_WORLD_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bp_wscene_kind {
    BP_WSCENE_STATIC = 0,
    BP_WSCENE_SHOOTER,
    BP_WSCENE_COUNT
} bp_wscene_kind;

/// A bullet lives this many frames (a second at 60 Hz).
#define BP_WSCENE_BULLET_LIFE 60

/// Categories and masks of the shooter (docs/scenes.md).
#define BP_WSCENE_SHIP_CATEGORY 2u
#define BP_WSCENE_SHIP_MASK 3u
#define BP_WSCENE_BULLET_CATEGORY 1u
#define BP_WSCENE_BULLET_MASK 2u

typedef struct bp_wscene {
    bp_wscene_kind kind;
    int dim;
    size_t count;      ///< the scene's N (static: objects; shooter: bullets)
    size_t n;          ///< slots: static N; shooter S + N
    size_t ships;      ///< shooter: S = ceil(N / 100) ships in slots 0..S-1; static: 0
    uint64_t seed;
    uint64_t rng;      ///< splitmix64 state (respawned bullets keep drawing from it)
    double world;      ///< W (for r = 1 and N = count)
    int frame;
    double *p, *v, *r; ///< n * dim centres and velocities, n radii
    int *age;          ///< shooter: per slot, a bullet's age (ships: 0, unused)
    uint64_t *serial;  ///< the object in each slot: frame 0's are 0..n-1, new ones count on
    uint64_t next_serial;
    /// The slots the last step moved (static: the moving objects; shooter: every object that
    /// survived the step), ascending; and the slots whose object died and was replaced.
    uint32_t *moved, *respawned;
    uint64_t *dead;    ///< for each respawned slot, the serial of the object that died there
    size_t nmoved, nrespawned;
} bp_wscene;

/// "static" / "shooter", NULL out of range.
const char *bp_wscene_name(bp_wscene_kind kind);
/// Returns 0, or -1 for an unknown name.
int bp_wscene_from_name(const char *name, bp_wscene_kind *kind);

/// Frame 0 of the scene with N = count (dim 2 or 3) from `seed`. Returns 0, or -1 for a bad
/// argument (count 0, slots above 2^30) or out of memory (then *s holds nothing).
int bp_wscene_init(bp_wscene *s, bp_wscene_kind kind, size_t count, int dim, uint64_t seed);

/// One frame (docs/scenes.md): moves, then (shooter) ages the bullets and replaces the dead.
void bp_wscene_step(bp_wscene *s);

/// Slot k's box now: 2 * dim floats, min then max, each p -+ r in double rounded to nearest.
void bp_wscene_box(const bp_wscene *s, size_t k, float *out);

/// Slot k's object: static kind, category, mask (as the scene defines them).
bool bp_wscene_is_static(const bp_wscene *s, size_t k);
uint64_t bp_wscene_category(const bp_wscene *s, size_t k);
uint64_t bp_wscene_mask(const bp_wscene *s, size_t k);

/// Whether the scene counts the overlapping pair of slots i and j (the filter rule and "never
/// two static objects").
bool bp_wscene_counts(const bp_wscene *s, size_t i, size_t j);

void bp_wscene_free(bp_wscene *s);

#ifdef __cplusplus
}
#endif

#endif
