// The demo's simulation: circles of a docs/scenes.md scene and bullets, every one a proxy of one
// persistent world (bp_world), moved, added and removed in batch calls; the world's update
// timed; the exact circle test on its pairs; bullets coloured by their begin and end events.
// No drawing and no platform calls: the desktop demo (demo/demo.c, SDL2) and the browser demo
// (web/web.c, a canvas) both draw this one simulation. See docs/demo.md and docs/web.md.
#ifndef BP_DEMO_SIM_H
#define BP_DEMO_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"
#include "scene.h"

// Largest object count `+` reaches: beyond it a frame is too slow to be a demo.
#define BP_DEMO_MAX_N ((size_t)1 << 22)
// Largest count brute force is given from the keyboard: n^2 / 2 tests must stay interactive.
#define BP_DEMO_MAX_BRUTE_N ((size_t)1 << 14)
// Bullets fired per `b`, how long they live (a second at 60 frames per second), their speed
// range per axis (world units per frame, as the shooter scene's) and the most alive at once.
#define BP_DEMO_BULLETS_PER_SHOT 256
#define BP_DEMO_BULLET_LIFE 60
#define BP_DEMO_BULLET_SPEED 2.0
#define BP_DEMO_MAX_BULLETS ((size_t)1 << 16)
// Categories and masks (docs/scenes.md's shooter): circles are ships (they meet circles and
// bullets), bullets meet circles only.
#define BP_DEMO_CIRCLE_CATEGORY 2u
#define BP_DEMO_CIRCLE_MASK 3u
#define BP_DEMO_BULLET_CATEGORY 1u
#define BP_DEMO_BULLET_MASK 2u
// A proxy's user value: a circle's index, or this bit with a bullet's slot and generation.
#define BP_DEMO_BULLET_USER ((uint64_t)1 << 63)

/// The world's update modes by bp_world_mode: "auto", "incremental", "rebuild".
extern const char *const bp_demo_mode_names[3];

/// A bullet: lives BP_DEMO_BULLET_LIFE frames; `contacts` counts its begin events minus its ends.
typedef struct bp_demo_bullet {
    double p[2], v[2];
    int age;
    int contacts;
    uint32_t gen;           // the slot's generation: an event of a dead bullet is not counted
    bool live, added;       // added: its proxy exists (a bullet fired this frame waits for the update)
    bp_proxy_id id;
} bp_demo_bullet;

/// Zero it, set the four settings, then bp_demo_set_objects; bp_demo_free_objects at the end.
typedef struct bp_demo_sim {
    // Settings (the caller's).
    const char *scene_name; // a docs/scenes.md scene name
    uint64_t seed;          // the generator's seed
    bool check;             // every update checked against all-pairs tests (docs/demo.md)
    double (*seconds)(void);// a monotonic clock: the world's time in the HUD
    bp_method method;       // the world's stateless method (set before bp_demo_set_objects)
    bp_world_mode mode;     // its update mode (likewise)
    bool snap;              // positions rounded to whole pixels of the seed's stage
    long drag;              // circle held by the mouse, -1 when none
    double drag_x, drag_y;  // where the mouse holds it (world units)
    // State.
    bp_scene scene;         // the circles (grown and shrunk by + and -)
    size_t cap;             // room in scene.p/v/r/h and ids
    uint64_t batches;       // circle batches added so far (each drawn from its own seed)
    bp_world *world;
    bp_proxy_id *ids;       // circle k's proxy
    bp_box2 *boxes;         // this frame's boxes: circles, then live bullets
    bp_proxy_id *move_ids;  // the same order
    size_t move_cap;
    double *pos;            // the centres this frame (snapped or not), 2 per circle
    unsigned char *hit;     // narrow-phase result per circle
    unsigned char *oracle;  // check: brute-force result per circle
    bp_demo_bullet *bullets;// slots; live ones anywhere
    size_t bullet_slots;    // slots in use (live or free)
    size_t live_bullets;
    double bullet_r;
    uint64_t rng;           // bullets' draws
    bp_proxy_id *dead_ids;  // bullets to remove at the next update
    size_t ndead;
    bp_proxy_id *add_ids;   // scratch for bullets to add
    bp_box2 *add_boxes;
    bp_proxy_def *add_defs;
    uint32_t *add_slots;
    double rmin;            // the smallest radius
    double drag_v[2];       // the held circle's velocity, given back on release
    // Heads-up figures of the last update.
    double bp_ms, bp_ms_avg;// the world's time (the four calls), last and smoothed
    double bp_ms_total;     // over every update
    long bp_calls;
    uint64_t checks, pairs, hits, begins, ends, last_pairs;
    bool rebuilt;           // the last update rebuilt rather than patched
    char message[64];       // a short note for the HUD
    int message_frames;     // frames it stays (the front end counts them down)
} bp_demo_sim;

/// The box of a circle rounded outward to floats (the broad phase never drops a pair the exact
/// double test accepts).
bp_box2 bp_demo_box(double x, double y, double r);
/// Whether a proxy's user value is a bullet's.
bool bp_demo_is_bullet(uint64_t user);
/// A note for the HUD (shown 120 frames).
void bp_demo_note(bp_demo_sim *d, const char *text);

/// The scene with n circles from frame 0, no bullets, and a new world. False when out of memory.
bool bp_demo_set_objects(bp_demo_sim *d, size_t n);
/// Frees the world and every array (the settings stay).
void bp_demo_free_objects(bp_demo_sim *d);
/// A new world (method, mode) with every circle and live bullet; the old one stays on failure.
bp_status bp_demo_rebuild_world(bp_demo_sim *d, bp_method method, bp_world_mode mode);
/// The world's method switched when built and allowed (brute force refuses many circles); false
/// with a note otherwise.
bool bp_demo_set_method(bp_demo_sim *d, bp_method m);
/// `+` / `-`: the circle count made `want` (1..BP_DEMO_MAX_N): new circles in one add batch
/// (a seed per batch), the newest removed in one remove batch. False with a note when refused.
bool bp_demo_resize(bp_demo_sim *d, size_t want);
/// `b`: a shot of bullets, added at the next update.
void bp_demo_fire(bp_demo_sim *d);
/// One frame of motion (circles, bullets, ages; the dead queued for removal).
void bp_demo_step(bp_demo_sim *d);
/// The world's frame: moves, removes and adds in batches, the update (timed), the narrow phase,
/// the bullets' events; with `check`, BP_ERR_INVALID_ARG on a mismatch with all-pairs tests.
bp_status bp_demo_update(bp_demo_sim *d);
/// The mouse: picks the circle at world point (x, y) (a world point query), or lets it go.
void bp_demo_grab(bp_demo_sim *d, double x, double y);
void bp_demo_release(bp_demo_sim *d);

#endif
