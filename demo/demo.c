// broadphase-demo: circles bouncing in a box turn red while they overlap (the demo of seed 000),
// on the persistent world (issue #13): every circle is a proxy of a bp_world, moved each frame
// in one batch call; `+` and `-` add and remove circles in batches, `b` fires bullets (seed
// 002's shooter) that live a second and are coloured by their begin and end events. Per frame:
// move (the SCENES.md generator), the world's update, the exact circle-circle narrow phase on
// its pairs, draw. See docs/demo.md.
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "broadphase.h"
#include "font.h"
#include "layout.h"
#include "png.h"
#include "scene.h"

// Largest object count `+` reaches: beyond it a frame is too slow to be a demo.
#define DEMO_MAX_N ((size_t)1 << 22)
// Largest count brute force is given from the keyboard: n^2 / 2 tests must stay interactive.
#define DEMO_MAX_BRUTE_N ((size_t)1 << 14)
// Bullets fired per `b`, how long they live (a second at 60 frames per second), their speed
// range per axis (world units per frame, as the shooter scene's) and the most alive at once.
#define DEMO_BULLETS_PER_SHOT 256
#define DEMO_BULLET_LIFE 60
#define DEMO_BULLET_SPEED 2.0
#define DEMO_MAX_BULLETS ((size_t)1 << 16)
// Categories and masks (SCENES.md's shooter): circles are ships (they meet circles and
// bullets), bullets meet circles only.
#define DEMO_CIRCLE_CATEGORY 2u
#define DEMO_CIRCLE_MASK 3u
#define DEMO_BULLET_CATEGORY 1u
#define DEMO_BULLET_MASK 2u
// A proxy's user value: a circle's index, or this bit with a bullet's slot and generation.
#define DEMO_BULLET_USER ((uint64_t)1 << 63)

typedef struct demo_options {
    const char *scene;
    size_t n;               // 0: the scene's default
    uint64_t seed;
    bp_method method;       // the world's stateless method (bp_world_def.method)
    bp_world_mode mode;
    double scale;           // pixels per world unit; 0: fit
    bool partition, snap, paused;
    bool headless, check;
    long frames;            // -1: run until closed
    const char *png;
    const char *script;     // keys pressed one per frame, for tests
} demo_options;

// A bullet: lives DEMO_BULLET_LIFE frames; `contacts` counts its begin events minus its ends.
typedef struct demo_bullet {
    double p[2], v[2];
    int age;
    int contacts;
    uint32_t gen;           // the slot's generation: an event of a dead bullet is not counted
    bool live, added;       // added: its proxy exists (a bullet fired this frame waits for the update)
    bp_proxy_id id;
} demo_bullet;

typedef struct demo {
    demo_options opt;
    bp_scene scene;         // the circles (grown and shrunk by + and -)
    size_t cap;             // room in scene.p/v/r/h and ids
    uint64_t batches;       // circle batches added so far (each drawn from its own seed)
    bp_world *world;
    bp_method method;
    bp_world_mode mode;
    bp_proxy_id *ids;       // circle k's proxy
    bp_box2 *boxes;         // this frame's boxes: circles, then live bullets
    bp_proxy_id *move_ids;  // the same order
    size_t move_cap;
    double *pos;            // the centres this frame (snapped or not), 2 per circle
    unsigned char *hit;     // narrow-phase result per circle
    unsigned char *oracle;  // --check: brute-force result per circle
    demo_bullet *bullets;   // slots; live ones anywhere
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
    SDL_Rect *spans;        // scratch for drawing filled circles
    size_t span_cap;
    double rmin;            // the smallest radius: the circles drawn from the sprites
    SDL_Texture *sprite[2]; // a white and a red circle of radius rmin, pre-drawn
    double sprite_rad;      // their radius in pixels
    int sprite_m;           // their centre pixel (they are 2m+1 pixels wide)
    bool partition, snap, paused;
    long drag;              // circle held by the mouse, -1 when none
    double drag_x, drag_y, drag_v[2];
    double scale;
    int width, height;
    // Heads-up figures of the last frame.
    double bp_ms, bp_ms_avg, fps;
    double bp_ms_total;     // over every frame, for the closing line
    long bp_calls;
    uint64_t checks, pairs, hits, begins, ends, last_pairs;
    bool rebuilt;
    char message[64];       // a short note shown in the HUD for a while
    int message_frames;
} demo;

static const char *const demo_mode_names[] = {"auto", "incremental", "rebuild"};

static void demo_usage(FILE *f) {
    fprintf(f,
            "usage: broadphase-demo [--scene NAME] [--n N] [--seed S] [--method NAME] [--mode MODE]\n"
            "                       [--scale PX] [--partition] [--snap] [--paused] [--frames K]\n"
            "                       [--png FILE] [--headless] [--check] [--script KEYS]\n"
            "  --scene NAME   uniform, clustered, mixed, line or seed (default seed, N = 500)\n"
            "  --n N          number of circles (default 500 for seed, 1000 otherwise)\n"
            "  --method NAME  the world's stateless method (rebuild updates, changed proxies among\n"
            "                 themselves): auto, brute, sweep, grid, quadtree, rdc (those built)\n"
            "  --mode MODE    the world's update mode: auto (default), incremental or rebuild\n"
            "  --scale PX     pixels per world unit (default: the world fits 720 pixels)\n"
            "  --frames K     stop after frame K (frame 0 is the initial state)\n"
            "  --png FILE     write frame K (the window's pixels) to FILE\n"
            "  --headless     no window: SDL's software renderer on a surface (needs --frames)\n"
            "  --check        every frame, compare the world's pairs, events and red set with\n"
            "                 all-pairs tests\n"
            "  --script KEYS  comma-separated keys pressed one per frame (d, s, +, -, b, m, tab,\n"
            "                 space, 1..6, none), as if typed\n"
            "keys: +/- add/remove circles (double/halve), b fire bullets, 1..6 or Tab the world's\n"
            "      method, m its mode, d its cells, s snap, space pause, mouse drags a circle,\n"
            "      Esc or q quits\n");
}

static bool demo_parse_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return false;
    *out = (size_t)v;
    return v == (unsigned long long)*out;
}

// Returns 0 to go on, 1 after --help, 2 for a usage error.

// Returns 0 to go on, 1 after --help, 2 for a usage error.
static int demo_parse(int argc, char **argv, demo_options *o) {
    *o = (demo_options){.scene = "seed", .seed = 1, .method = BP_METHOD_AUTO, .mode = BP_WORLD_MODE_AUTO, .frames = -1};
    for (int k = 1; k < argc; ++k) {
        const char *a = argv[k];
        const char *v = k + 1 < argc ? argv[k + 1] : NULL;
        bool takes = true;
        size_t z;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            demo_usage(stdout);
            return 1;
        } else if (strcmp(a, "--partition") == 0) {
            takes = false, o->partition = true;
        } else if (strcmp(a, "--snap") == 0) {
            takes = false, o->snap = true;
        } else if (strcmp(a, "--paused") == 0) {
            takes = false, o->paused = true;
        } else if (strcmp(a, "--headless") == 0) {
            takes = false, o->headless = true;
        } else if (strcmp(a, "--check") == 0) {
            takes = false, o->check = true;
        } else if (!v) {
            fprintf(stderr, "broadphase-demo: %s needs a value (or is unknown)\n", a);
            return 2;
        } else if (strcmp(a, "--scene") == 0) {
            bp_scene_kind kind;
            if (bp_scene_from_name(v, &kind) != 0) {
                fprintf(stderr, "broadphase-demo: unknown scene '%s'\n", v);
                return 2;
            }
            o->scene = v;
        } else if (strcmp(a, "--n") == 0) {
            if (!demo_parse_size(v, &z) || z == 0 || z > DEMO_MAX_N) {
                fprintf(stderr, "broadphase-demo: --n wants 1..%zu, not '%s'\n", DEMO_MAX_N, v);
                return 2;
            }
            o->n = z;
        } else if (strcmp(a, "--seed") == 0) {
            if (!demo_parse_size(v, &z)) {
                fprintf(stderr, "broadphase-demo: bad --seed '%s'\n", v);
                return 2;
            }
            o->seed = z;
        } else if (strcmp(a, "--method") == 0) {
            if (bp_method_from_name(v, &o->method) != BP_OK) {
                fprintf(stderr, "broadphase-demo: unknown method '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "--mode") == 0) {
            int m = 0;
            while (m < 3 && strcmp(v, demo_mode_names[m]) != 0) ++m;
            if (m == 3) {
                fprintf(stderr, "broadphase-demo: --mode is auto, incremental or rebuild, not '%s'\n", v);
                return 2;
            }
            o->mode = (bp_world_mode)m;
        } else if (strcmp(a, "--frames") == 0) {
            if (!demo_parse_size(v, &z) || z > 100000000) {
                fprintf(stderr, "broadphase-demo: bad --frames '%s'\n", v);
                return 2;
            }
            o->frames = (long)z;
        } else if (strcmp(a, "--scale") == 0) {
            char *end;
            o->scale = strtod(v, &end);
            if (end == v || *end || !(o->scale >= 0.01 && o->scale <= 1000)) {
                fprintf(stderr, "broadphase-demo: --scale wants 0.01..1000, not '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "--png") == 0) {
            o->png = v;
        } else if (strcmp(a, "--script") == 0) {
            o->script = v;
        } else {
            fprintf(stderr, "broadphase-demo: unknown option '%s'\n", a);
            demo_usage(stderr);
            return 2;
        }
        if (takes) ++k;
    }
    if (o->headless && o->frames < 0) {
        fprintf(stderr, "broadphase-demo: --headless needs --frames K\n");
        return 2;
    }
    if (o->png && o->frames < 0) {
        fprintf(stderr, "broadphase-demo: --png needs --frames K\n");
        return 2;
    }
    return 0;
}

static void demo_note(demo *d, const char *text) {
    snprintf(d->message, sizeof d->message, "%s", text);
    d->message_frames = 120;
}

// ---------------------------------------------------------------------------------------------
// The circles, the bullets and the world

// The box of a circle rounded outward to floats, so the broad phase never drops a pair that the
// exact (double) narrow phase accepts.
static float demo_down(double x) {
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -INFINITY) : f;
}

static float demo_up(double x) {
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

static bp_box2 demo_box(double x, double y, double r) {
    return (bp_box2){{demo_down(x - r), demo_down(y - r)}, {demo_up(x + r), demo_up(y + r)}};
}

// The narrow phase, exact up to double rounding: |ca - cb| <= ra + rb (touching counts).
static bool demo_circles_touch(const double *a, double ra, const double *b, double rb) {
    double dx = a[0] - b[0], dy = a[1] - b[1], s = ra + rb;
    return dx * dx + dy * dy <= s * s;
}

static double demo_seconds(void) {
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

static bool demo_is_bullet(uint64_t user) {
    return (user & DEMO_BULLET_USER) != 0;
}

static uint64_t demo_bullet_user(const demo *d, size_t slot) {
    return DEMO_BULLET_USER | (uint64_t)d->bullets[slot].gen << 32 | (uint64_t)slot;
}

// The live bullet a user value names, or NULL (a bullet removed since).
static demo_bullet *demo_bullet_of(demo *d, uint64_t user) {
    size_t slot = (size_t)(user & 0xffffffffu);
    uint32_t gen = (uint32_t)((user & ~DEMO_BULLET_USER) >> 32);
    if (slot >= d->bullet_slots || !d->bullets[slot].live || d->bullets[slot].gen != gen) return NULL;
    return &d->bullets[slot];
}

static bp_proxy_def demo_circle_def(size_t k) {
    bp_proxy_def pd = bp_default_proxy_def();
    pd.category = DEMO_CIRCLE_CATEGORY;
    pd.mask = DEMO_CIRCLE_MASK;
    pd.user = k;
    return pd;
}

// Room for n circles and n + bullets boxes. False when out of memory (nothing lost).
static bool demo_reserve(demo *d, size_t n) {
    if (n > d->cap) {
        size_t cap = n;
        double *p = realloc(d->scene.p, 2 * cap * sizeof *p);
        if (p) d->scene.p = p;
        double *v = realloc(d->scene.v, 2 * cap * sizeof *v);
        if (v) d->scene.v = v;
        double *r = realloc(d->scene.r, cap * sizeof *r);
        if (r) d->scene.r = r;
        double *h = realloc(d->scene.h, 2 * cap * sizeof *h);
        if (h) d->scene.h = h;
        bp_proxy_id *ids = realloc(d->ids, cap * sizeof *ids);
        if (ids) d->ids = ids;
        double *pos = realloc(d->pos, 2 * cap * sizeof *pos);
        if (pos) d->pos = pos;
        unsigned char *hit = realloc(d->hit, cap);
        if (hit) d->hit = hit;
        unsigned char *oracle = realloc(d->oracle, cap);
        if (oracle) d->oracle = oracle;
        if (!p || !v || !r || !h || !ids || !pos || !hit || !oracle) return false;
        d->cap = cap;
    }
    size_t boxes = n + DEMO_MAX_BULLETS;
    if (boxes > d->move_cap) {
        bp_box2 *b = realloc(d->boxes, boxes * sizeof *b);
        if (b) d->boxes = b;
        bp_proxy_id *m = realloc(d->move_ids, boxes * sizeof *m);
        if (m) d->move_ids = m;
        if (!b || !m) return false;
        d->move_cap = boxes;
    }
    return true;
}

static void demo_free_objects(demo *d) {
    bp_world_destroy(d->world);
    d->world = NULL;
    bp_scene_free(&d->scene);
    free(d->ids);
    free(d->boxes);
    free(d->move_ids);
    free(d->pos);
    free(d->hit);
    free(d->oracle);
    free(d->bullets);
    free(d->dead_ids);
    free(d->add_ids);
    free(d->add_boxes);
    free(d->add_defs);
    free(d->add_slots);
    d->ids = d->move_ids = d->dead_ids = d->add_ids = NULL;
    d->boxes = d->add_boxes = NULL;
    d->add_defs = NULL;
    d->add_slots = NULL;
    d->pos = NULL;
    d->hit = d->oracle = NULL;
    d->bullets = NULL;
    d->cap = d->move_cap = d->bullet_slots = d->live_bullets = d->ndead = 0;
}

// The boxes of every circle (snapped or not; the held one at the mouse) and live bullet, in the
// order of move_ids.
static size_t demo_boxes(demo *d) {
    bp_scene *s = &d->scene;
    if (d->drag >= 0) {
        // The held circle follows the mouse, kept inside the world like the walls would.
        size_t i = (size_t)d->drag;
        double r = s->r[i], w = s->world;
        s->p[2 * i] = d->drag_x < r ? r : (d->drag_x > w - r ? w - r : d->drag_x);
        s->p[2 * i + 1] = d->drag_y < r ? r : (d->drag_y > w - r ? w - r : d->drag_y);
    }
    size_t m = 0;
    for (size_t i = 0; i < s->n; ++i) {
        for (int a = 0; a < 2; ++a) {
            double p = s->p[2 * i + a];
            // Snap: whole pixels of the seed's stage, so equal radii give boxes that touch exactly.
            d->pos[2 * i + a] = d->snap ? nearbyint(p) : p;
        }
        d->boxes[m] = demo_box(d->pos[2 * i], d->pos[2 * i + 1], s->r[i]);
        d->move_ids[m++] = d->ids[i];
    }
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        const demo_bullet *b = &d->bullets[k];
        if (!b->live || !b->added) continue;
        d->boxes[m] = demo_box(b->p[0], b->p[1], d->bullet_r);
        d->move_ids[m++] = b->id;
    }
    return m;
}

// A new world (mode, method) holding every circle and live bullet; the old one stays when this
// fails. Bullets' contact counts restart: the first update reports every pair as begun.
static bp_status demo_rebuild_world(demo *d, bp_method method, bp_world_mode mode) {
    bp_world_def def = bp_default_world_def();
    def.method = method;
    def.mode = mode;
    bp_world *w;
    bp_status st = bp_world_create(&def, &w);
    if (st != BP_OK) return st;
    bp_proxy_id *ids = malloc((d->scene.n ? d->scene.n : 1) * sizeof *ids);
    bp_proxy_def *defs = malloc((d->scene.n ? d->scene.n : 1) * sizeof *defs);
    st = ids && defs ? BP_OK : BP_ERR_NOMEM;
    demo_boxes(d);  // this frame's boxes: the circles, then the bullets already in a world
    for (size_t i = 0; i < d->scene.n && st == BP_OK; ++i) defs[i] = demo_circle_def(i);
    if (st == BP_OK) st = bp_world_add_batch2(w, d->boxes, defs, d->scene.n, ids);
    // The bullets' new ids wait in add_ids (scratch between updates) until all are in.
    size_t nb = 0;
    for (size_t k = 0, b = d->scene.n; k < d->bullet_slots && st == BP_OK; ++k) {
        demo_bullet *bu = &d->bullets[k];
        if (!bu->live || !bu->added) continue;
        bp_proxy_def pd = bp_default_proxy_def();
        pd.category = DEMO_BULLET_CATEGORY;
        pd.mask = DEMO_BULLET_MASK;
        pd.user = demo_bullet_user(d, k);
        st = bp_world_add2(w, &d->boxes[b++], &pd, &d->add_ids[nb++]);
    }
    if (st != BP_OK) {
        free(ids);
        free(defs);
        bp_world_destroy(w);
        return st;
    }
    nb = 0;
    for (size_t k = 0; k < d->bullet_slots; ++k)
        if (d->bullets[k].live && d->bullets[k].added) d->bullets[k].id = d->add_ids[nb++];
    memcpy(d->ids, ids, d->scene.n * sizeof *ids);
    free(ids);
    free(defs);
    for (size_t k = 0; k < d->bullet_slots; ++k) d->bullets[k].contacts = 0;
    d->ndead = 0;  // the dead bullets went with the old world
    bp_world_destroy(d->world);
    d->world = w;
    d->method = method;
    d->mode = mode;
    d->last_pairs = 0;
    return BP_OK;
}

// (Re)builds the scene with n circles from frame 0, no bullets, and a new world. False when out
// of memory.
static bool demo_set_objects(demo *d, size_t n) {
    bp_world_destroy(d->world);
    d->world = NULL;
    bp_scene_free(&d->scene);
    d->cap = 0;
    d->drag = -1;
    d->bullet_slots = d->live_bullets = d->ndead = 0;
    if (bp_scene_init(&d->scene, d->opt.scene, n, 2, d->opt.seed) != 0) return false;
    d->cap = n;
    free(d->ids);
    free(d->pos);
    free(d->hit);
    free(d->oracle);
    d->ids = malloc(n * sizeof *d->ids);
    d->pos = malloc(2 * n * sizeof *d->pos);
    d->hit = calloc(n, 1);
    d->oracle = malloc(n);
    if (!d->ids || !d->pos || !d->hit || !d->oracle || !demo_reserve(d, n)) return false;
    if (!d->bullets) {
        d->bullets = calloc(DEMO_MAX_BULLETS, sizeof *d->bullets);
        d->dead_ids = malloc(DEMO_MAX_BULLETS * sizeof *d->dead_ids);
        d->add_ids = malloc(DEMO_MAX_BULLETS * sizeof *d->add_ids);
        d->add_boxes = malloc(DEMO_MAX_BULLETS * sizeof *d->add_boxes);
        d->add_defs = malloc(DEMO_MAX_BULLETS * sizeof *d->add_defs);
        d->add_slots = malloc(DEMO_MAX_BULLETS * sizeof *d->add_slots);
        if (!d->bullets || !d->dead_ids || !d->add_ids || !d->add_boxes || !d->add_defs || !d->add_slots) return false;
    }
    d->rmin = INFINITY;
    for (size_t i = 0; i < n; ++i) d->rmin = d->scene.r[i] < d->rmin ? d->scene.r[i] : d->rmin;
    d->bullet_r = d->rmin / 4.0;
    d->rng = d->opt.seed ^ 0x5DEECE66Du;
    return demo_rebuild_world(d, d->method, d->mode) == BP_OK;
}

// `+`: `count` more circles drawn from the scene's generator (a seed per batch), added to the
// world in one batch call. The circles stay as they were when this fails.
static bool demo_add_circles(demo *d, size_t count) {
    bp_scene extra;
    size_t n = d->scene.n;
    if (!demo_reserve(d, n + count)) return false;
    if (bp_scene_init(&extra, d->opt.scene, count, 2, d->opt.seed + 0x9E3779B97F4A7C15u * ++d->batches) != 0)
        return false;
    bp_proxy_def *defs = malloc(count * sizeof *defs);
    bp_box2 *boxes = malloc(count * sizeof *boxes);
    bp_status st = defs && boxes ? BP_OK : BP_ERR_NOMEM;
    for (size_t k = 0; k < count && st == BP_OK; ++k) {
        defs[k] = demo_circle_def(n + k);
        boxes[k] = demo_box(extra.p[2 * k], extra.p[2 * k + 1], extra.r[k]);
    }
    if (st == BP_OK) st = bp_world_add_batch2(d->world, boxes, defs, count, d->ids + n);
    if (st == BP_OK) {
        memcpy(d->scene.p + 2 * n, extra.p, 2 * count * sizeof *extra.p);
        memcpy(d->scene.v + 2 * n, extra.v, 2 * count * sizeof *extra.v);
        memcpy(d->scene.r + n, extra.r, count * sizeof *extra.r);
        memcpy(d->scene.h + 2 * n, extra.h, 2 * count * sizeof *extra.h);
        memset(d->hit + n, 0, count);
        d->scene.n = n + count;
    }
    free(defs);
    free(boxes);
    bp_scene_free(&extra);
    return st == BP_OK;
}

// `-`: the newest circles removed from the world in one batch call.
static bool demo_remove_circles(demo *d, size_t count) {
    size_t keep = d->scene.n - count;
    if (bp_world_remove_batch(d->world, d->ids + keep, count) != BP_OK) return false;
    if (d->drag >= (long)keep) d->drag = -1;
    d->scene.n = keep;
    return true;
}

// `b`: a shot of bullets (seed 002): from random places in the stage, in random directions, as
// the shooter scene draws them; they join the world at the next update.
static void demo_fire(demo *d) {
    const double w = d->scene.world, r = d->bullet_r;
    size_t fired = 0;
    for (size_t k = 0; k < DEMO_MAX_BULLETS && fired < DEMO_BULLETS_PER_SHOT; ++k) {
        demo_bullet *b = &d->bullets[k];
        if (b->live) continue;
        if (k >= d->bullet_slots) d->bullet_slots = k + 1;
        uint32_t gen = b->gen + 1;
        *b = (demo_bullet){.live = true, .gen = gen};
        for (int a = 0; a < 2; ++a) b->p[a] = bp_scene_uniform(&d->rng, r, w - r);
        for (int a = 0; a < 2; ++a) b->v[a] = bp_scene_uniform(&d->rng, -DEMO_BULLET_SPEED, DEMO_BULLET_SPEED);
        ++fired;
        ++d->live_bullets;
    }
    if (fired < DEMO_BULLETS_PER_SHOT) demo_note(d, "bullets: too many at once");
}

// One frame of motion: circles (the SCENES.md rule), bullets (the same bounce), bullets' ages;
// the dead are queued for removal.
static void demo_step(demo *d) {
    bp_scene_step(&d->scene);
    const double w = d->scene.world, r = d->bullet_r;
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        demo_bullet *b = &d->bullets[k];
        if (!b->live) continue;
        for (int a = 0; a < 2; ++a) {
            b->p[a] += b->v[a];
            if (b->p[a] - r < 0.0) {
                b->p[a] = r;
                b->v[a] = -b->v[a];
            }
            if (b->p[a] + r > w) {
                b->p[a] = w - r;
                b->v[a] = -b->v[a];
            }
        }
        if (++b->age >= DEMO_BULLET_LIFE) {
            if (b->added) d->dead_ids[d->ndead++] = b->id;
            b->live = false;
            --d->live_bullets;
        }
    }
    while (d->bullet_slots > 0 && !d->bullets[d->bullet_slots - 1].live) --d->bullet_slots;
}

// Counts one event for the bullet in it (begin +1, end -1).
static void demo_bullet_event(demo *d, const bp_world_pair *p, int delta) {
    demo_bullet *b;
    if (demo_is_bullet(p->user_a) && (b = demo_bullet_of(d, p->user_a))) b->contacts += delta;
    if (demo_is_bullet(p->user_b) && (b = demo_bullet_of(d, p->user_b))) b->contacts += delta;
}

// --check: every pair and event against all-pairs tests of the same boxes.
static bp_status demo_check(demo *d, size_t nboxes, const bp_world_pairs *pairs, const bp_world_events *ev,
                            uint64_t hits) {
    bp_scene *s = &d->scene;
    const size_t n = s->n;
    memset(d->oracle, 0, n);
    uint64_t box_pairs = 0, circle_pairs = 0;
    for (size_t i = 0; i < nboxes; ++i) {
        for (size_t j = i + 1; j < nboxes; ++j) {
            if (i >= n && j >= n) continue;  // bullets never pair with bullets
            const bp_box2 *a = &d->boxes[i], *b = &d->boxes[j];
            if (a->min[0] <= b->max[0] && b->min[0] <= a->max[0] && a->min[1] <= b->max[1] && b->min[1] <= a->max[1])
                ++box_pairs;
            if (j < n && demo_circles_touch(d->pos + 2 * i, s->r[i], d->pos + 2 * j, s->r[j])) {
                d->oracle[i] = d->oracle[j] = 1;
                ++circle_pairs;
            }
        }
    }
    // The pair count follows from the events: last frame's + begins - ends.
    bool events_ok = d->last_pairs + ev->begins.count - ev->ends.count == pairs->count;
    // Each bullet's colour: its begins minus its ends equal the circles its box overlaps now.
    for (size_t k = 0; k < d->bullet_slots && events_ok; ++k) {
        const demo_bullet *b = &d->bullets[k];
        if (!b->live || !b->added) continue;
        bp_box2 bb = demo_box(b->p[0], b->p[1], d->bullet_r);
        int over = 0;
        for (size_t i = 0; i < n; ++i) {
            const bp_box2 *a = &d->boxes[i];
            over += a->min[0] <= bb.max[0] && bb.min[0] <= a->max[0] && a->min[1] <= bb.max[1] && bb.min[1] <= a->max[1];
        }
        if (over != b->contacts) {
            fprintf(stderr, "broadphase-demo: check failed at frame %d: bullet %zu overlaps %d circles, its events say %d\n",
                    s->frame, k, over, b->contacts);
            events_ok = false;
        }
    }
    if (box_pairs != pairs->count || circle_pairs != hits || memcmp(d->oracle, d->hit, n) != 0 || !events_ok) {
        fprintf(stderr,
                "broadphase-demo: check failed at frame %d: pairs %zu, all-pairs %llu; hits %llu, all-pairs %llu; "
                "%llu + %zu begins - %zu ends\n",
                s->frame, pairs->count, (unsigned long long)box_pairs, (unsigned long long)hits,
                (unsigned long long)circle_pairs, (unsigned long long)d->last_pairs, ev->begins.count,
                ev->ends.count);
        return BP_ERR_INVALID_ARG;
    }
    return BP_OK;
}

// The world's frame: every proxy moved (one batch), the dead bullets removed and the new ones
// added (one batch each), the update (timed together); then the narrow phase on its pairs and
// the bullets' events. Returns BP_OK, or the library's error; with --check, BP_ERR_INVALID_ARG
// for a mismatch.
static bp_status demo_update(demo *d) {
    bp_scene *s = &d->scene;
    size_t nboxes = demo_boxes(d);
    // Bullets fired since the last update: their boxes and definitions.
    size_t nadd = 0;
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        demo_bullet *b = &d->bullets[k];
        if (!b->live || b->added) continue;
        d->add_boxes[nadd] = demo_box(b->p[0], b->p[1], d->bullet_r);
        bp_proxy_def pd = bp_default_proxy_def();
        pd.category = DEMO_BULLET_CATEGORY;
        pd.mask = DEMO_BULLET_MASK;
        pd.user = demo_bullet_user(d, k);
        d->add_defs[nadd] = pd;
        d->add_slots[nadd++] = (uint32_t)k;
    }
    bp_world_events ev;
    double t0 = demo_seconds();
    bp_status st = bp_world_move_batch2(d->world, d->move_ids, d->boxes, nboxes);
    if (st == BP_OK && d->ndead) st = bp_world_remove_batch(d->world, d->dead_ids, d->ndead);
    if (st == BP_OK) d->ndead = 0;
    if (st == BP_OK && nadd) st = bp_world_add_batch2(d->world, d->add_boxes, d->add_defs, nadd, d->add_ids);
    if (st == BP_OK) {
        for (size_t k = 0; k < nadd; ++k) {
            demo_bullet *b = &d->bullets[d->add_slots[k]];
            b->id = d->add_ids[k];
            b->added = true;
        }
        st = bp_world_update(d->world, &ev);
    }
    double t1 = demo_seconds();
    if (st != BP_OK) return st;
    d->bp_ms = (t1 - t0) * 1e3;
    d->bp_ms_total += d->bp_ms;
    ++d->bp_calls;
    d->bp_ms_avg = d->bp_ms_avg > 0 ? 0.9 * d->bp_ms_avg + 0.1 * d->bp_ms : d->bp_ms;
    for (size_t k = 0; k < ev.begins.count; ++k) demo_bullet_event(d, &ev.begins.pairs[k], +1);
    for (size_t k = 0; k < ev.ends.count; ++k) demo_bullet_event(d, &ev.ends.pairs[k], -1);
    d->begins = ev.begins.count;
    d->ends = ev.ends.count;

    // The narrow phase: circle pairs only (a bullet's pairs are its events).
    bp_world_pairs pairs;
    st = bp_world_get_pairs(d->world, &pairs);
    if (st != BP_OK) return st;
    memset(d->hit, 0, s->n);
    uint64_t hits = 0;
    for (size_t k = 0; k < pairs.count; ++k) {
        uint64_t i = pairs.pairs[k].user_a, j = pairs.pairs[k].user_b;
        if (demo_is_bullet(i) || demo_is_bullet(j)) continue;
        if (demo_circles_touch(d->pos + 2 * i, s->r[i], d->pos + 2 * j, s->r[j])) {
            d->hit[i] = d->hit[j] = 1;
            ++hits;
        }
    }
    bp_world_stats stats;
    st = bp_world_get_stats(d->world, &stats);
    if (st != BP_OK) return st;
    d->checks = stats.checks;
    d->rebuilt = stats.rebuilt;
    d->pairs = pairs.count;
    d->hits = hits;
    if (d->opt.check) {
        // demo_boxes' order (circles, then the bullets added before), then the bullets added now.
        memcpy(d->boxes + nboxes, d->add_boxes, nadd * sizeof *d->boxes);
        st = demo_check(d, nboxes + nadd, &pairs, &ev, hits);
        if (st != BP_OK) return st;
    }
    d->last_pairs = pairs.count;
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Drawing

static void demo_color(SDL_Renderer *r, Uint8 red, Uint8 green, Uint8 blue, Uint8 alpha) {
    SDL_SetRenderDrawColor(r, red, green, blue, alpha);
}

// Appends the pixel rows of a filled disc (pixel centres within radius) to d->spans.
static bool demo_disc_spans(demo *d, double cx, double cy, double rad, size_t *count) {
    int y0 = (int)ceil(cy - rad - 0.5), y1 = (int)floor(cy + rad - 0.5);
    int cpx = (int)floor(cx), cpy = (int)floor(cy);
    size_t need = *count + (size_t)(y1 >= y0 ? y1 - y0 + 1 : 0) + 1;
    if (need > d->span_cap) {
        size_t cap = need + need / 2 + 64;
        SDL_Rect *ns = realloc(d->spans, cap * sizeof *ns);
        if (!ns) return false;
        d->spans = ns;
        d->span_cap = cap;
    }
    for (int y = y0; y <= y1; ++y) {
        double dy = y + 0.5 - cy, h2 = rad * rad - dy * dy;
        if (h2 < 0) continue;
        double half = sqrt(h2);
        int x0 = (int)ceil(cx - half - 0.5), x1 = (int)floor(cx + half - 0.5);
        if (x1 >= x0) d->spans[(*count)++] = (SDL_Rect){x0, y, x1 - x0 + 1, 1};
    }
    // The centre pixel always, so even a circle smaller than a pixel shows its colour.
    d->spans[(*count)++] = (SDL_Rect){cpx, cpy, 1, 1};
    return true;
}

static const Uint8 demo_fill[2][3] = {{240, 240, 240}, {235, 45, 45}};  // isolated, hit
static const Uint8 demo_rim[2][3] = {{140, 145, 160}, {150, 20, 25}};

static void demo_free_sprites(demo *d) {
    for (int k = 0; k < 2; ++k) {
        if (d->sprite[k]) SDL_DestroyTexture(d->sprite[k]);
        d->sprite[k] = NULL;
    }
}

// Pre-draws the common circle once per colour: one texture copy per circle is far cheaper than
// dozens of spans, above all for renderers without a GPU. Fails soft: without sprites every
// circle is drawn from spans.
static bool demo_make_sprites(demo *d, SDL_Renderer *r) {
    const double rad = d->rmin * d->scale;
    if (d->sprite[0] && d->sprite[1] && d->sprite_rad == rad) return true;
    demo_free_sprites(d);
    d->sprite_rad = rad;
    if (!(rad > 0 && rad <= 256)) return true;
    const int m = (int)ceil(rad), side = 2 * m + 1;
    for (int k = 0; k < 2; ++k) {
        SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, side, side, 32, SDL_PIXELFORMAT_RGBA32);
        if (!sf) break;
        SDL_FillRect(sf, NULL, SDL_MapRGBA(sf->format, 0, 0, 0, 0));
        size_t count = 0;
        bool ok = true;
        if (rad >= 3) {
            ok = demo_disc_spans(d, m + 0.5, m + 0.5, rad, &count);
            if (ok) SDL_FillRects(sf, d->spans, (int)count, SDL_MapRGBA(sf->format, demo_rim[k][0], demo_rim[k][1], demo_rim[k][2], 255));
            count = 0;
            ok = ok && demo_disc_spans(d, m + 0.5, m + 0.5, rad - 1.25, &count);
        } else {
            ok = demo_disc_spans(d, m + 0.5, m + 0.5, rad, &count);
        }
        if (ok) SDL_FillRects(sf, d->spans, (int)count, SDL_MapRGBA(sf->format, demo_fill[k][0], demo_fill[k][1], demo_fill[k][2], 255));
        d->sprite[k] = ok ? SDL_CreateTextureFromSurface(r, sf) : NULL;
        SDL_FreeSurface(sf);
        if (!d->sprite[k]) break;
        SDL_SetTextureBlendMode(d->sprite[k], SDL_BLENDMODE_BLEND);
    }
    if (!d->sprite[0] || !d->sprite[1]) demo_free_sprites(d);
    d->sprite_m = m;
    return true;
}

typedef struct demo_draw_ctx {
    demo *d;
    SDL_Renderer *r;
} demo_draw_ctx;

// The debug-draw callback: a box is a cell, node or group outline; a box that is flat on one
// axis is an interval (the sweep's), drawn as a bar stacked by its level so the active list
// reads as a staircase.
static void demo_draw_box(const float *lo, const float *hi, int level, void *user) {
    demo_draw_ctx *c = user;
    const double s = c->d->scale;
    static const Uint8 shades[4][3] = {{40, 200, 70}, {90, 235, 120}, {30, 170, 150}, {150, 255, 90}};
    const Uint8 *col = shades[(level < 0 ? -level : level) % 4];
    demo_color(c->r, col[0], col[1], col[2], 190);
    // A cell may reach far outside the stage (a coarse level, a loose bound): clamp before the
    // conversion to int, which would overflow for huge coordinates.
    const double w = c->d->scene.world, pad = w;
    double cl[4] = {lo[0], lo[1], hi[0], hi[1]};
    for (int k = 0; k < 4; ++k) {
        if (isnan(cl[k])) return;
        cl[k] = cl[k] < -pad ? -pad : (cl[k] > w + pad ? w + pad : cl[k]);
    }
    int x0, y0, x1, y1;
    bp_demo_pixel(cl[0], cl[1], s, &x0, &y0);
    bp_demo_pixel(cl[2], cl[3], s, &x1, &y1);
    const int step = 3, lv = level < 0 ? 0 : (level > 4000 ? 4000 : level);
    if (lo[1] == hi[1] && lo[0] < hi[0]) {
        SDL_Rect bar = {x0, BP_DEMO_HUD_H + lv * step, x1 - x0 + 1, step - 1};
        SDL_RenderFillRect(c->r, &bar);
    } else if (lo[0] == hi[0] && lo[1] < hi[1]) {
        SDL_Rect bar = {lv * step, y0, step - 1, y1 - y0 + 1};
        SDL_RenderFillRect(c->r, &bar);
    } else {
        SDL_Rect box = {x0, y0, x1 - x0 + 1, y1 - y0 + 1};
        SDL_RenderDrawRect(c->r, &box);
    }
}


static bool demo_draw(demo *d, SDL_Renderer *r) {
    const bp_scene *s = &d->scene;
    const double sc = d->scale;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    demo_color(r, 24, 26, 34, 255);
    SDL_RenderClear(r);
    demo_color(r, 10, 10, 14, 255);
    SDL_Rect hud = {0, 0, d->width, BP_DEMO_HUD_H};
    SDL_RenderFillRect(r, &hud);

    // The world's cells under the circles (they are many, and the circles are the point).
    if (d->partition) {
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
        demo_draw_ctx c = {d, r};
        bp_debug_draw draw = {.box = demo_draw_box, .user = &c};
        bp_world_debug_draw(d->world, &draw);
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    }

    // Circles: white first, red on top, so a crowd reads as red. The common radius comes from
    // the sprites (centred on the pixel that holds the centre); other sizes are a disc of
    // spans (a darker rim, then the fill) when big enough to show a rim, else one batch.
    demo_make_sprites(d, r);
    for (int pass = 0; pass < 2; ++pass) {
        size_t count = 0;
        for (size_t i = 0; i < s->n; ++i) {
            if (d->hit[i] != pass) continue;
            double cx = d->pos[2 * i] * sc, cy = BP_DEMO_HUD_H + d->pos[2 * i + 1] * sc, rad = s->r[i] * sc;
            if (d->sprite[pass] && s->r[i] == d->rmin) {
                const int m = d->sprite_m;
                SDL_Rect dst = {(int)floor(cx) - m, (int)floor(cy) - m, 2 * m + 1, 2 * m + 1};
                SDL_RenderCopy(r, d->sprite[pass], NULL, &dst);
            } else if (rad >= 3) {
                // Spans after the small circles' batch, which is drawn at the end of the pass.
                size_t rim = count;
                if (!demo_disc_spans(d, cx, cy, rad, &rim)) return false;
                demo_color(r, demo_rim[pass][0], demo_rim[pass][1], demo_rim[pass][2], 255);
                SDL_RenderFillRects(r, d->spans + count, (int)(rim - count));
                size_t fill = count;
                if (!demo_disc_spans(d, cx, cy, rad - 1.25, &fill)) return false;
                demo_color(r, demo_fill[pass][0], demo_fill[pass][1], demo_fill[pass][2], 255);
                SDL_RenderFillRects(r, d->spans + count, (int)(fill - count));
            } else if (!demo_disc_spans(d, cx, cy, rad, &count)) {
                return false;
            }
        }
        if (count) {
            demo_color(r, demo_fill[pass][0], demo_fill[pass][1], demo_fill[pass][2], 255);
            SDL_RenderFillRects(r, d->spans, (int)count);
        }
    }

    // Bullets on top: cyan in flight, amber while they touch a circle (their begin events
    // counted up, their end events down).
    static const Uint8 bullet_col[2][3] = {{90, 205, 255}, {255, 176, 40}};
    for (int touching = 0; touching < 2; ++touching) {
        size_t count = 0;
        for (size_t k = 0; k < d->bullet_slots; ++k) {
            const demo_bullet *b = &d->bullets[k];
            if (!b->live || !b->added || (b->contacts > 0) != touching) continue;
            double rad = d->bullet_r * sc < 1.5 ? 1.5 : d->bullet_r * sc;
            if (!demo_disc_spans(d, b->p[0] * sc, BP_DEMO_HUD_H + b->p[1] * sc, rad, &count)) return false;
        }
        if (count) {
            demo_color(r, bullet_col[touching][0], bullet_col[touching][1], bullet_col[touching][2], 255);
            SDL_RenderFillRects(r, d->spans, (int)count);
        }
    }

    // The heads-up line: mode/method, N, the world's ms, candidate checks, pairs with this
    // frame's begins and ends, hits, bullets, fps.
    char line[256];
    int len = snprintf(line, sizeof line, "world %s/%s%s  N %zu  bp %.3f ms  checks %llu  pairs %llu +%llu -%llu  hits %llu",
                       demo_mode_names[d->mode], bp_method_name(d->method), d->rebuilt ? "*" : "", s->n,
                       d->bp_ms_avg, (unsigned long long)d->checks, (unsigned long long)d->pairs,
                       (unsigned long long)d->begins, (unsigned long long)d->ends, (unsigned long long)d->hits);
    if (len > 0 && (size_t)len < sizeof line && d->live_bullets) {
        char more[32];
        snprintf(more, sizeof more, "  bullets %zu", d->live_bullets);
        strncat(line, more, sizeof line - strlen(line) - 1);
    }
    // Headless frames are not paced by a display: a rate there would mean nothing.
    if (len > 0 && (size_t)len < sizeof line && !d->opt.headless) {
        char fps[32];
        snprintf(fps, sizeof fps, "  %.0f fps", d->fps);
        strncat(line, fps, sizeof line - strlen(line) - 1);
    }
    if (len > 0 && (size_t)len < sizeof line) {
        const char *flags[3] = {d->snap ? "  snap" : "", d->partition ? "  partition" : "", d->paused ? "  paused" : ""};
        for (int k = 0; k < 3; ++k) strncat(line, flags[k], sizeof line - strlen(line) - 1);
    }
    if (d->message_frames > 0) {
        strncat(line, "  ", sizeof line - strlen(line) - 1);
        strncat(line, d->message, sizeof line - strlen(line) - 1);
    }
    int fs = (int)strlen(line) * BP_DEMO_FONT_ADVANCE * 2 + 12 <= d->width ? 2 : 1;
    demo_color(r, 220, 225, 235, 255);
    bp_demo_text(r, 6, (BP_DEMO_HUD_H - 7 * fs) / 2, fs, line);
    return true;
}

// ---------------------------------------------------------------------------------------------
// Input

// Switches the world's stateless method when this build has it; the old world stays when the
// new one fails.
static bool demo_set_method(demo *d, bp_method m) {
    if (m == BP_METHOD_BRUTE && d->scene.n > DEMO_MAX_BRUTE_N && d->world) {
        demo_note(d, "brute: too many circles");
        return false;
    }
    if (!bp_method_available(m)) {
        char note[64];
        snprintf(note, sizeof note, "%s: not built", bp_method_name(m) ? bp_method_name(m) : "?");
        demo_note(d, note);
        return false;
    }
    bp_status st = demo_rebuild_world(d, m, d->mode);
    if (st != BP_OK) {
        char note[64];
        snprintf(note, sizeof note, "%s: %s", bp_method_name(m), bp_status_string(st));
        demo_note(d, note);
        return false;
    }
    return true;
}

// The next (step +1) or previous (-1) method this build has, AUTO included.
static bp_method demo_cycle(bp_method m, int step) {
    for (int k = 1; k <= BP_METHOD_COUNT; ++k) {
        int c = ((int)m + step * k) % BP_METHOD_COUNT;
        if (c < 0) c += BP_METHOD_COUNT;
        if (bp_method_available((bp_method)c)) return (bp_method)c;
    }
    return m;
}

static void demo_key(demo *d, SDL_Keycode key, Uint16 mod, bool *quit) {
    switch (key) {
    case SDLK_ESCAPE:
    case SDLK_q:
        *quit = true;
        break;
    case SDLK_PLUS:
    case SDLK_KP_PLUS:
    case SDLK_EQUALS:  // the unshifted '+' key on most layouts
    case SDLK_MINUS:
    case SDLK_KP_MINUS: {
        bool more = key == SDLK_PLUS || key == SDLK_KP_PLUS || key == SDLK_EQUALS;
        size_t n = d->scene.n;
        size_t want = more ? (n * 2 > DEMO_MAX_N ? DEMO_MAX_N : n * 2) : (n / 2 ? n / 2 : 1);
        if (d->method == BP_METHOD_BRUTE && want > DEMO_MAX_BRUTE_N && want > n) {
            demo_note(d, "brute: too many circles");
            break;
        }
        bool ok = want > n ? demo_add_circles(d, want - n) : (want < n ? demo_remove_circles(d, n - want) : true);
        if (!ok) demo_note(d, "out of memory");
        break;
    }
    case SDLK_b:
        demo_fire(d);
        break;
    case SDLK_m: {
        bp_world_mode next = (bp_world_mode)(((int)d->mode + 1) % 3);
        bp_status st = demo_rebuild_world(d, d->method, next);
        if (st != BP_OK) demo_note(d, bp_status_string(st));
        break;
    }
    case SDLK_TAB:
        demo_set_method(d, demo_cycle(d->method, (mod & KMOD_SHIFT) ? -1 : 1));
        break;
    case SDLK_d:
        d->partition = !d->partition;
        break;
    case SDLK_s:
        d->snap = !d->snap;
        break;
    case SDLK_SPACE:
        d->paused = !d->paused;
        break;
    default:
        if (key >= SDLK_1 && key <= SDLK_6) demo_set_method(d, (bp_method)(key - SDLK_1));
        break;
    }
}

// Picks the circle under the mouse: the nearest centre among the circles whose boxes contain
// the point (a world query with the circles' category; moves since the update count).
static void demo_grab(demo *d, double x, double y) {
    const float pt[2] = {(float)x, (float)y};
    bp_world_hits hits;
    d->drag = -1;
    if (!isfinite(pt[0]) || !isfinite(pt[1]) ||
        bp_world_query_point(d->world, pt, DEMO_CIRCLE_CATEGORY, &hits) != BP_OK)
        return;
    double best = INFINITY;
    for (size_t k = 0; k < hits.count; ++k) {
        uint64_t i = hits.users[k];
        if (demo_is_bullet(i) || i >= d->scene.n) continue;
        double dx = d->pos[2 * i] - x, dy = d->pos[2 * i + 1] - y, r = d->scene.r[i];
        double q = dx * dx + dy * dy;
        if (q <= r * r && q < best) {
            best = q;
            d->drag = (long)i;
        }
    }
    if (d->drag >= 0) {
        size_t i = (size_t)d->drag;
        d->drag_x = x;
        d->drag_y = y;
        d->drag_v[0] = d->scene.v[2 * i];
        d->drag_v[1] = d->scene.v[2 * i + 1];
        d->scene.v[2 * i] = d->scene.v[2 * i + 1] = 0;  // held still while dragged
    }
}

static void demo_release(demo *d) {
    if (d->drag < 0) return;
    size_t i = (size_t)d->drag;
    d->scene.v[2 * i] = d->drag_v[0];
    d->scene.v[2 * i + 1] = d->drag_v[1];
    d->drag = -1;
}

static void demo_event(demo *d, const SDL_Event *e, bool *quit) {
    switch (e->type) {
    case SDL_QUIT:
        *quit = true;
        break;
    case SDL_KEYDOWN:
        // Auto-repeat would run +/- away (each press doubles); one press, one step.
        if (!e->key.repeat) demo_key(d, e->key.keysym.sym, e->key.keysym.mod, quit);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.button == SDL_BUTTON_LEFT)
            demo_grab(d, e->button.x / d->scale, (e->button.y - BP_DEMO_HUD_H) / d->scale);
        break;
    case SDL_MOUSEMOTION:
        d->drag_x = e->motion.x / d->scale;
        d->drag_y = (e->motion.y - BP_DEMO_HUD_H) / d->scale;
        break;
    case SDL_MOUSEBUTTONUP:
        if (e->button.button == SDL_BUTTON_LEFT) demo_release(d);
        break;
    default:
        break;
    }
}

// Queues the script's next key (one per frame) as a real key event. `grab:X:Y` presses the
// mouse at world point (X, Y) and `drag:X:Y` moves it there (tests of the drag).
static bool demo_script_key(demo *d, const char **cursor) {
    const char *s = *cursor;
    if (!s || !*s) return true;
    size_t len = strcspn(s, ",");
    char name[32];
    if (len == 0 || len >= sizeof name) return false;
    memcpy(name, s, len);
    name[len] = 0;
    *cursor = s[len] ? s + len + 1 : s + len;
    SDL_Event e;
    memset(&e, 0, sizeof e);
    double x, y;
    char tail;
    if (sscanf(name, "grab:%lf:%lf%c", &x, &y, &tail) == 2 || sscanf(name, "drag:%lf:%lf%c", &x, &y, &tail) == 2) {
        bool grab = name[0] == 'g';
        e.type = grab ? SDL_MOUSEBUTTONDOWN : SDL_MOUSEMOTION;
        int px = (int)floor(x * d->scale), py = BP_DEMO_HUD_H + (int)floor(y * d->scale);
        if (grab) {
            e.button.button = SDL_BUTTON_LEFT;
            e.button.x = px;
            e.button.y = py;
        } else {
            e.motion.x = px;
            e.motion.y = py;
        }
        return SDL_PushEvent(&e) >= 0;
    }
    SDL_Keycode key;
    if (strcmp(name, "+") == 0) key = SDLK_PLUS;
    else if (strcmp(name, "-") == 0) key = SDLK_MINUS;
    else if (strcmp(name, "tab") == 0) key = SDLK_TAB;
    else if (strcmp(name, "space") == 0) key = SDLK_SPACE;
    else if (strcmp(name, "none") == 0) return true;
    else if (len == 1 && ((name[0] >= '1' && name[0] <= '6') || strchr("dsbm", name[0])))
        key = (SDL_Keycode)name[0];
    else return false;
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    return SDL_PushEvent(&e) >= 0;
}

// ---------------------------------------------------------------------------------------------

static int demo_save(demo *d, SDL_Renderer *r) {
    const size_t stride = (size_t)d->width * 3;
    uint8_t *rgb = malloc(stride * (size_t)d->height);
    int rc = -1;
    if (rgb && SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_RGB24, rgb, (int)stride) == 0)
        rc = bp_demo_png_write(d->opt.png, rgb, d->width, d->height, stride);
    free(rgb);
    if (rc != 0) fprintf(stderr, "broadphase-demo: cannot write %s\n", d->opt.png);
    return rc;
}


static int demo_run(demo *d) {
    SDL_Window *win = NULL;
    SDL_Surface *surface = NULL;
    SDL_Renderer *r = NULL;
    int rc = 1;
    if (d->opt.headless) {
        // No display: the software renderer draws into a plain surface.
        surface = SDL_CreateRGBSurfaceWithFormat(0, d->width, d->height, 32, SDL_PIXELFORMAT_RGBA32);
        r = surface ? SDL_CreateSoftwareRenderer(surface) : NULL;
    } else {
        win = SDL_CreateWindow("broadphase-demo", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, d->width,
                               d->height, 0);
        r = win ? SDL_CreateRenderer(win, -1, SDL_RENDERER_PRESENTVSYNC) : NULL;
        if (win && !r) r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    }
    if (!r) {
        fprintf(stderr, "broadphase-demo: %s\n", SDL_GetError());
        goto done;
    }

    const char *script = d->opt.script;
    bool quit = false;
    double last = demo_seconds();
    for (long frame = 0;; ++frame) {
        // Frame 0 is the initial state; every later frame moves first (unless paused).
        if (!demo_script_key(d, &script)) {
            fprintf(stderr, "broadphase-demo: bad --script key near '%s'\n", script);
            goto done;
        }
        SDL_Event e;
        while (SDL_PollEvent(&e)) demo_event(d, &e, &quit);
        if (quit) break;
        if (frame > 0 && !d->paused) demo_step(d);
        bp_status st = demo_update(d);
        // In a window, a count whose pairs no longer fit in memory (`+` pressed once too often
        // on a small stage) is halved until they do, instead of ending the demo.
        while (st == BP_ERR_NOMEM && !d->opt.headless && d->scene.n > 1) {
            if (!demo_set_objects(d, d->scene.n / 2)) break;
            demo_note(d, "out of memory: circles halved");
            st = demo_update(d);
        }
        if (st != BP_OK) {
            fprintf(stderr, "broadphase-demo: frame %ld: %s\n", frame, bp_status_string(st));
            goto done;
        }
        bool last_frame = d->opt.frames >= 0 && frame >= d->opt.frames;
        if (!d->opt.headless || last_frame) {
            if (!demo_draw(d, r)) {
                fprintf(stderr, "broadphase-demo: out of memory\n");
                goto done;
            }
        }
        if (last_frame && d->opt.png && demo_save(d, r) != 0) goto done;
        if (!d->opt.headless) SDL_RenderPresent(r);
        double now = demo_seconds();
        if (now > last) d->fps = d->fps > 0 ? 0.9 * d->fps + 0.1 / (now - last) : 1.0 / (now - last);
        last = now;
        if (d->message_frames > 0) --d->message_frames;
        if (last_frame) {
            size_t touching = 0;
            for (size_t k = 0; k < d->bullet_slots; ++k)
                touching += d->bullets[k].live && d->bullets[k].added && d->bullets[k].contacts > 0;
            printf("frame %ld method %s n %zu pairs %llu hits %llu checks %llu mean_bp_ms %.4f mode %s bullets %zu "
                   "touching %zu begins %llu ends %llu drag %ld",
                   frame, bp_method_name(d->method), d->scene.n, (unsigned long long)d->pairs,
                   (unsigned long long)d->hits, (unsigned long long)d->checks,
                   d->bp_ms_total / (double)(d->bp_calls ? d->bp_calls : 1), demo_mode_names[d->mode],
                   d->live_bullets, touching, (unsigned long long)d->begins, (unsigned long long)d->ends, d->drag);
            if (d->drag >= 0)
                printf(" at %.2f %.2f", d->scene.p[2 * (size_t)d->drag], d->scene.p[2 * (size_t)d->drag + 1]);
            putchar('\n');
            break;
        }
    }
    rc = 0;
done:
    demo_free_sprites(d);
    if (r) SDL_DestroyRenderer(r);
    if (surface) SDL_FreeSurface(surface);
    if (win) SDL_DestroyWindow(win);
    return rc;
}

int main(int argc, char **argv) {
    demo d;
    memset(&d, 0, sizeof d);
    int prc = demo_parse(argc, argv, &d.opt);
    if (prc) return prc == 1 ? 0 : 2;
    if (!bp_method_available(d.opt.method)) {
        // Methods land one by one: a method this build lacks is a skip for the tests, not a fault.
        printf("broadphase-demo: method %s not built: skipped\n", bp_method_name(d.opt.method));
        return 0;
    }
    d.drag = -1;
    d.partition = d.opt.partition;
    d.snap = d.opt.snap;
    d.paused = d.opt.paused;
    d.method = d.opt.method;
    d.mode = d.opt.mode;
    size_t n = d.opt.n ? d.opt.n : (strcmp(d.opt.scene, "seed") == 0 ? 500 : 1000);
    if (!demo_set_objects(&d, n)) {
        fprintf(stderr, "broadphase-demo: out of memory for %zu objects\n", n);
        demo_free_objects(&d);
        return 1;
    }
    d.scale = bp_demo_scale(d.scene.world, d.opt.scale);
    double side = ceil(d.scene.world * d.scale);
    if (side > 16384) {
        fprintf(stderr, "broadphase-demo: the stage would be %.0f pixels wide; lower --scale\n", side);
        demo_free_objects(&d);
        return 2;
    }
    d.width = (int)side;
    d.height = (int)side + BP_DEMO_HUD_H;
    int rc = 1;
    if (SDL_Init(d.opt.headless ? SDL_INIT_EVENTS : SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
        fprintf(stderr, "broadphase-demo: %s\n", SDL_GetError());
    } else {
        rc = demo_run(&d);
        SDL_Quit();
    }
    demo_free_objects(&d);
    free(d.spans);
    return rc;
}
