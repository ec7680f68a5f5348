// The browser demo's C side: the desktop demo's simulation (demo/demo_sim.c) behind a few
// exported calls the page (web/web.js) makes, and the partition (the world's cells, or the
// structure of the world's method) collected into a flat array for the canvas. Built to WebAssembly by scripts/build_web.sh; see
// docs/web.md. Calls return a bp_status (0 is BP_OK) or a number; arrays are handed out as
// pointers into the module's memory, valid until the next call.
#include <stdlib.h>
#include <string.h>

#include <emscripten.h>

#include "demo_sim.h"

static bp_demo_sim web;
static char web_scene_name[16];
// The partition: 5 floats per box (lo x, lo y, hi x, hi y, level), grown by doubling.
static float *web_cells;
static size_t web_ncells, web_cells_cap;
// The context that draws the method's structure, and its method.
static bp_context *web_ctx;
static bp_method web_ctx_method;
// Live bullets: 3 floats each (x, y, 1 while touching a circle).
static float *web_bul;

static double web_seconds(void) {
    return emscripten_get_now() / 1000.0;
}

// (Re)starts the scene `name` with n circles from frame 0 on a new world (method, mode).
EMSCRIPTEN_KEEPALIVE int web_start(const char *name, int n, int method, int mode, double seed) {
    bp_scene_kind kind;
    if (!name || bp_scene_from_name(name, &kind) != 0 || strlen(name) >= sizeof web_scene_name)
        return BP_ERR_INVALID_ARG;
    if (n < 1 || (size_t)n > BP_DEMO_MAX_N || method < 0 || method >= BP_METHOD_COUNT || mode < 0 || mode > 2 ||
        !(seed >= 0 && seed < 18446744073709551616.0))
        return BP_ERR_INVALID_ARG;
    if (!bp_method_available((bp_method)method)) return BP_ERR_UNSUPPORTED;
    bool snap = web.snap;
    bp_demo_free_objects(&web);
    free(web_bul);
    web_bul = NULL;
    memset(&web, 0, sizeof web);
    strcpy(web_scene_name, name);
    web.scene_name = web_scene_name;
    web.seed = (uint64_t)seed;
    web.seconds = web_seconds;
    web.method = (bp_method)method;
    web.mode = (bp_world_mode)mode;
    web.snap = snap;
    web.drag = -1;
    web_bul = malloc(3 * BP_DEMO_MAX_BULLETS * sizeof *web_bul);
    if (!web_bul || !bp_demo_set_objects(&web, (size_t)n)) {
        bp_demo_free_objects(&web);
        return BP_ERR_NOMEM;
    }
    return BP_OK;
}

// One frame: a move (unless paused) and the world's update.
EMSCRIPTEN_KEEPALIVE int web_frame(int move) {
    if (!web.world) return BP_ERR_INVALID_ARG;
    if (move) bp_demo_step(&web);
    if (web.message_frames > 0) --web.message_frames;
    return bp_demo_update(&web);
}

EMSCRIPTEN_KEEPALIVE int web_set_method(int m) {
    if (m < 0 || m >= BP_METHOD_COUNT) return BP_ERR_INVALID_ARG;
    return bp_demo_set_method(&web, (bp_method)m) ? BP_OK : BP_ERR_UNSUPPORTED;
}

EMSCRIPTEN_KEEPALIVE int web_set_mode(int m) {
    if (m < 0 || m > 2) return BP_ERR_INVALID_ARG;
    return bp_demo_rebuild_world(&web, web.method, (bp_world_mode)m);
}

EMSCRIPTEN_KEEPALIVE int web_resize(int n) {
    if (n < 1) return BP_ERR_INVALID_ARG;
    return bp_demo_resize(&web, (size_t)n) ? BP_OK : BP_ERR_NOMEM;
}

EMSCRIPTEN_KEEPALIVE void web_fire(void) { bp_demo_fire(&web); }
EMSCRIPTEN_KEEPALIVE void web_snap(int on) { web.snap = on != 0; }
EMSCRIPTEN_KEEPALIVE void web_grab(double x, double y) { bp_demo_grab(&web, x, y); }
EMSCRIPTEN_KEEPALIVE void web_drag(double x, double y) { web.drag_x = x, web.drag_y = y; }
EMSCRIPTEN_KEEPALIVE void web_release(void) { bp_demo_release(&web); }

// The scene as drawn: circles (this frame's centres, radii, narrow-phase hits), the stage.
EMSCRIPTEN_KEEPALIVE int web_n(void) { return (int)web.scene.n; }
EMSCRIPTEN_KEEPALIVE double *web_pos(void) { return web.pos; }
EMSCRIPTEN_KEEPALIVE double *web_radius(void) { return web.scene.r; }
EMSCRIPTEN_KEEPALIVE unsigned char *web_hit(void) { return web.hit; }
EMSCRIPTEN_KEEPALIVE double web_world_size(void) { return web.scene.world; }
EMSCRIPTEN_KEEPALIVE int web_frame_number(void) { return web.scene.frame; }
EMSCRIPTEN_KEEPALIVE double web_bullet_radius(void) { return web.bullet_r; }

// The heads-up figures of the last update.
EMSCRIPTEN_KEEPALIVE double web_ms(void) { return web.bp_ms; }
EMSCRIPTEN_KEEPALIVE double web_ms_smooth(void) { return web.bp_ms_avg; }
EMSCRIPTEN_KEEPALIVE double web_ms_mean(void) { return web.bp_calls ? web.bp_ms_total / (double)web.bp_calls : 0; }
EMSCRIPTEN_KEEPALIVE double web_pairs(void) { return (double)web.pairs; }
EMSCRIPTEN_KEEPALIVE double web_hits(void) { return (double)web.hits; }
EMSCRIPTEN_KEEPALIVE double web_checks(void) { return (double)web.checks; }
EMSCRIPTEN_KEEPALIVE double web_begins(void) { return (double)web.begins; }
EMSCRIPTEN_KEEPALIVE double web_ends(void) { return (double)web.ends; }
EMSCRIPTEN_KEEPALIVE int web_rebuilt(void) { return web.rebuilt; }
EMSCRIPTEN_KEEPALIVE int web_method(void) { return (int)web.method; }
EMSCRIPTEN_KEEPALIVE int web_mode(void) { return (int)web.mode; }
EMSCRIPTEN_KEEPALIVE int web_dragged(void) { return (int)web.drag; }
EMSCRIPTEN_KEEPALIVE const char *web_message(void) { return web.message_frames > 0 ? web.message : ""; }
EMSCRIPTEN_KEEPALIVE const char *web_method_name(int m) { return bp_method_name((bp_method)m); }
EMSCRIPTEN_KEEPALIVE int web_method_available(int m) { return bp_method_available((bp_method)m); }
EMSCRIPTEN_KEEPALIVE int web_method_count(void) { return BP_METHOD_COUNT; }

// Live bullets into web_bul; returns how many.
EMSCRIPTEN_KEEPALIVE int web_bullets(void) {
    size_t m = 0;
    for (size_t k = 0; k < web.bullet_slots && web_bul; ++k) {
        const bp_demo_bullet *b = &web.bullets[k];
        if (!b->live || !b->added) continue;
        web_bul[3 * m] = (float)b->p[0];
        web_bul[3 * m + 1] = (float)b->p[1];
        web_bul[3 * m + 2] = b->contacts > 0 ? 1.0f : 0.0f;
        ++m;
    }
    return (int)m;
}
EMSCRIPTEN_KEEPALIVE float *web_bullet_data(void) { return web_bul; }

static void web_cell(const float *lo, const float *hi, int level, void *user) {
    (void)user;
    if (web_ncells == web_cells_cap) {
        size_t cap = web_cells_cap ? 2 * web_cells_cap : 1024;
        float *c = realloc(web_cells, 5 * cap * sizeof *c);
        if (!c) return;  // out of memory: the partition is drawn in part; the demo goes on
        web_cells = c;
        web_cells_cap = cap;
    }
    float *c = web_cells + 5 * web_ncells++;
    c[0] = lo[0], c[1] = lo[1], c[2] = hi[0], c[3] = hi[1], c[4] = (float)level;
}

// The partition into web_cells; returns how many boxes. kind 1: the world's cells (the desktop
// demo's `d`, bp_world_debug_draw). kind 2: the structure the world's method builds over the
// circles (bp_debug_draw_structure after one stateless call of that method on this frame's
// circle boxes; untimed): the sweep's intervals, the grid's cells, the quadtree's nodes, RDC's
// groups. The context is kept, so a warm frame allocates nothing.
EMSCRIPTEN_KEEPALIVE int web_partition(int kind) {
    web_ncells = 0;
    if (!web.world) return 0;
    bp_debug_draw draw = {.box = web_cell, .user = NULL};
    if (kind == 1) return bp_world_debug_draw(web.world, &draw) == BP_OK ? (int)web_ncells : 0;
    if (kind != 2 || web.scene.n == 0) return 0;
    if (!web_ctx || web_ctx_method != web.method) {
        bp_context_destroy(web_ctx);
        web_ctx = NULL;
        bp_context_def def = bp_default_context_def();
        def.method = web.method;
        if (bp_context_create(&def, &web_ctx) != BP_OK) return 0;
        web_ctx_method = web.method;
    }
    // The circles' boxes of this frame come first in web.boxes (bullets after them).
    bp_pairs pairs;
    if (bp_find_pairs2(web_ctx, web.boxes, web.scene.n, &pairs) != BP_OK) return 0;
    return bp_debug_draw_structure(web_ctx, &draw) == BP_OK ? (int)web_ncells : 0;
}
EMSCRIPTEN_KEEPALIVE float *web_partition_data(void) { return web_cells; }
