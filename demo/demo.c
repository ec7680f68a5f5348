// broadphase-demo: circles bouncing in a box turn red while they overlap (the demo of seed 000),
// with every method the library has built. Per frame: move (the SCENES.md generator), broad
// phase through the public API, exact circle-circle narrow phase, draw. See docs/demo.md.
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

typedef struct demo_options {
    const char *scene;
    size_t n;               // 0: the scene's default
    uint64_t seed;
    bp_method method;
    double scale;           // pixels per world unit; 0: fit
    bool partition, snap, paused;
    bool headless, check;
    long frames;            // -1: run until closed
    const char *png;
    const char *script;     // keys pressed one per frame, for tests
} demo_options;

typedef struct demo {
    demo_options opt;
    bp_scene scene;
    bp_context *ctx;
    bp_method method;
    bp_box2 *boxes;
    double *pos;            // the centres this frame (snapped or not), 2 per object
    unsigned char *hit;     // narrow-phase result per object
    unsigned char *oracle;  // --check: brute-force result per object
    SDL_Rect *spans;        // scratch for drawing filled circles
    size_t span_cap;
    double rmin;            // the smallest radius: the circles drawn from the sprites
    SDL_Texture *sprite[2]; // a white and a red circle of radius rmin, pre-drawn
    double sprite_rad;      // their radius in pixels
    int sprite_m;           // their centre pixel (they are 2m+1 pixels wide)
    bool partition, snap, paused;
    long drag;              // object held by the mouse, -1 when none
    double drag_x, drag_y, drag_v[2];
    double scale;
    int width, height;
    // Heads-up figures of the last frame.
    double bp_ms, bp_ms_avg, fps;
    double bp_ms_total;     // over every frame, for the closing line
    long bp_calls;
    uint64_t checks, pairs, hits;
    bp_method ran;
    char message[64];       // a short note shown in the HUD for a while
    int message_frames;
} demo;

static void demo_usage(FILE *f) {
    fprintf(f,
            "usage: broadphase-demo [--scene NAME] [--n N] [--seed S] [--method NAME] [--scale PX]\n"
            "                       [--partition] [--snap] [--paused] [--frames K] [--png FILE]\n"
            "                       [--headless] [--check] [--script KEYS]\n"
            "  --scene NAME   uniform, clustered, mixed, line or seed (default seed, N = 500)\n"
            "  --n N          number of circles (default 500 for seed, 1000 otherwise)\n"
            "  --method NAME  auto, brute, sweep, grid, quadtree, rdc (those built; default auto)\n"
            "  --scale PX     pixels per world unit (default: the world fits 720 pixels)\n"
            "  --frames K     stop after frame K (frame 0 is the initial state)\n"
            "  --png FILE     write frame K (the window's pixels) to FILE\n"
            "  --headless     no window: SDL's software renderer on a surface (needs --frames)\n"
            "  --check        every frame, compare the red set with all-pairs circle tests\n"
            "  --script KEYS  comma-separated keys pressed one per frame (d, s, +, -, tab,\n"
            "                 space, 1..6), as if typed\n"
            "keys: +/- double/halve N, 1..6 or Tab method, d partition, s snap, space pause,\n"
            "      mouse drags a circle, Esc or q quits\n");
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
static int demo_parse(int argc, char **argv, demo_options *o) {
    *o = (demo_options){.scene = "seed", .seed = 1, .method = BP_METHOD_AUTO, .frames = -1};
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
// Simulation: scene, context, one frame of broad + narrow phase

static void demo_free_objects(demo *d) {
    bp_scene_free(&d->scene);
    free(d->boxes);
    free(d->pos);
    free(d->hit);
    free(d->oracle);
    d->boxes = NULL;
    d->pos = NULL;
    d->hit = d->oracle = NULL;
}

// (Re)builds the scene with n objects from frame 0. Returns false when out of memory.
static bool demo_set_objects(demo *d, size_t n) {
    demo_free_objects(d);
    d->drag = -1;
    if (bp_scene_init(&d->scene, d->opt.scene, n, 2, d->opt.seed) != 0) return false;
    d->boxes = malloc(n * sizeof *d->boxes);
    d->pos = malloc(2 * n * sizeof *d->pos);
    d->hit = malloc(n);
    d->oracle = malloc(n);
    d->rmin = INFINITY;
    for (size_t i = 0; i < n; ++i) d->rmin = d->scene.r[i] < d->rmin ? d->scene.r[i] : d->rmin;
    return d->boxes && d->pos && d->hit && d->oracle;
}

// Switches to `m` when this build has it; the old context stays when the new one fails.
static bool demo_set_method(demo *d, bp_method m) {
    if (m == BP_METHOD_BRUTE && d->scene.n > DEMO_MAX_BRUTE_N && d->ctx) {
        demo_note(d, "brute: too many circles");
        return false;
    }
    if (!bp_method_available(m)) {
        char note[64];
        snprintf(note, sizeof note, "%s: not built", bp_method_name(m) ? bp_method_name(m) : "?");
        demo_note(d, note);
        return false;
    }
    bp_context_def def = bp_default_context_def();
    def.dimension = 2;
    def.method = m;
    bp_context *ctx;
    bp_status st = bp_context_create(&def, &ctx);
    if (st != BP_OK) {
        char note[64];
        snprintf(note, sizeof note, "%s: %s", bp_method_name(m), bp_status_string(st));
        demo_note(d, note);
        return false;
    }
    bp_context_destroy(d->ctx);
    d->ctx = ctx;
    d->method = m;
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

// The narrow phase, exact up to double rounding: |ca - cb| <= ra + rb (touching counts).
static bool demo_circles_touch(const double *a, double ra, const double *b, double rb) {
    double dx = a[0] - b[0], dy = a[1] - b[1], s = ra + rb;
    return dx * dx + dy * dy <= s * s;
}

static double demo_seconds(void) {
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

// Returns BP_OK, or the library's error; with --check, BP_ERR_INVALID_ARG for a mismatch.
static bp_status demo_update(demo *d) {
    bp_scene *s = &d->scene;
    const size_t n = s->n;
    if (d->drag >= 0) {
        // The held circle follows the mouse, kept inside the world like the walls would.
        size_t i = (size_t)d->drag;
        double r = s->r[i], w = s->world;
        double x = d->drag_x < r ? r : (d->drag_x > w - r ? w - r : d->drag_x);
        double y = d->drag_y < r ? r : (d->drag_y > w - r ? w - r : d->drag_y);
        s->p[2 * i] = x;
        s->p[2 * i + 1] = y;
    }
    for (size_t i = 0; i < n; ++i) {
        for (int a = 0; a < 2; ++a) {
            double p = s->p[2 * i + a];
            // Snap: whole pixels of the seed's stage, so equal radii give boxes that touch exactly.
            d->pos[2 * i + a] = d->snap ? nearbyint(p) : p;
        }
        double r = s->r[i];
        d->boxes[i] = (bp_box2){{demo_down(d->pos[2 * i] - r), demo_down(d->pos[2 * i + 1] - r)},
                                {demo_up(d->pos[2 * i] + r), demo_up(d->pos[2 * i + 1] + r)}};
    }

    bp_pairs out;
    double t0 = demo_seconds();
    bp_status st = bp_find_pairs2(d->ctx, d->boxes, n, &out);
    double t1 = demo_seconds();
    if (st != BP_OK) return st;
    d->bp_ms = (t1 - t0) * 1e3;
    d->bp_ms_total += d->bp_ms;
    ++d->bp_calls;
    d->bp_ms_avg = d->bp_ms_avg > 0 ? 0.9 * d->bp_ms_avg + 0.1 * d->bp_ms : d->bp_ms;

    memset(d->hit, 0, n);
    uint64_t hits = 0;
    for (size_t k = 0; k < out.count; ++k) {
        uint32_t i = out.pairs[k].i, j = out.pairs[k].j;
        if (demo_circles_touch(d->pos + 2 * i, s->r[i], d->pos + 2 * j, s->r[j])) {
            d->hit[i] = d->hit[j] = 1;
            ++hits;
        }
    }
    bp_stats stats;
    st = bp_get_stats(d->ctx, &stats);
    if (st != BP_OK) return st;
    d->checks = stats.checks;
    d->pairs = out.count;
    d->hits = hits;
    d->ran = stats.method;

    if (d->opt.check) {
        // All pairs, the oracle: the same circles, the same test, and the box pair count.
        memset(d->oracle, 0, n);
        uint64_t box_pairs = 0, circle_pairs = 0;
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = i + 1; j < n; ++j) {
                const bp_box2 *a = &d->boxes[i], *b = &d->boxes[j];
                if (a->min[0] <= b->max[0] && b->min[0] <= a->max[0] && a->min[1] <= b->max[1] &&
                    b->min[1] <= a->max[1])
                    ++box_pairs;
                if (demo_circles_touch(d->pos + 2 * i, s->r[i], d->pos + 2 * j, s->r[j])) {
                    d->oracle[i] = d->oracle[j] = 1;
                    ++circle_pairs;
                }
            }
        }
        if (box_pairs != out.count || circle_pairs != hits || memcmp(d->oracle, d->hit, n) != 0) {
            fprintf(stderr,
                    "broadphase-demo: check failed at frame %d (%s): pairs %zu, all-pairs %llu; "
                    "hits %llu, all-pairs %llu\n",
                    s->frame, bp_method_name(d->ran), out.count, (unsigned long long)box_pairs,
                    (unsigned long long)hits, (unsigned long long)circle_pairs);
            return BP_ERR_INVALID_ARG;
        }
    }
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

    if (d->partition) {
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
        demo_draw_ctx c = {d, r};
        bp_debug_draw draw = {.box = demo_draw_box, .user = &c};
        bp_debug_draw_structure(d->ctx, &draw);
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    }

    // The heads-up line: method, N, broad-phase ms, candidate checks, pairs, hits, fps.
    char line[256], name[32];
    if (d->method == BP_METHOD_AUTO) snprintf(name, sizeof name, "auto>%s", bp_method_name(d->ran));
    else snprintf(name, sizeof name, "%s", bp_method_name(d->method));
    int len = snprintf(line, sizeof line, "%s  N %zu  bp %.3f ms  checks %llu  pairs %llu  hits %llu", name,
                       s->n, d->bp_ms_avg, (unsigned long long)d->checks, (unsigned long long)d->pairs,
                       (unsigned long long)d->hits);
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
        if (want != n && !demo_set_objects(d, want)) {
            // Out of memory for the new count: go back to the old one.
            demo_note(d, "out of memory");
            if (!demo_set_objects(d, n)) *quit = true;
        }
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

// Picks the circle under the mouse: the nearest centre among the boxes that contain the point.
static void demo_grab(demo *d, double x, double y) {
    const float pt[2] = {(float)x, (float)y};
    bp_indices idx;
    d->drag = -1;
    if (!isfinite(pt[0]) || !isfinite(pt[1]) || bp_query_point(d->ctx, pt, &idx) != BP_OK) return;
    double best = INFINITY;
    for (size_t k = 0; k < idx.count; ++k) {
        uint32_t i = idx.indices[k];
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

// Queues the script's next key (one per frame) as a real key event.
static bool demo_script_key(const char **cursor) {
    const char *s = *cursor;
    if (!s || !*s) return true;
    size_t len = strcspn(s, ",");
    char name[16];
    if (len == 0 || len >= sizeof name) return false;
    memcpy(name, s, len);
    name[len] = 0;
    *cursor = s[len] ? s + len + 1 : s + len;
    SDL_Keycode key;
    if (strcmp(name, "+") == 0) key = SDLK_PLUS;
    else if (strcmp(name, "-") == 0) key = SDLK_MINUS;
    else if (strcmp(name, "tab") == 0) key = SDLK_TAB;
    else if (strcmp(name, "space") == 0) key = SDLK_SPACE;
    else if (strcmp(name, "none") == 0) return true;
    else if (len == 1 && ((name[0] >= '1' && name[0] <= '6') || name[0] == 'd' || name[0] == 's'))
        key = (SDL_Keycode)name[0];
    else return false;
    SDL_Event e;
    memset(&e, 0, sizeof e);
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
        if (!demo_script_key(&script)) {
            fprintf(stderr, "broadphase-demo: bad --script key near '%s'\n", script);
            goto done;
        }
        SDL_Event e;
        while (SDL_PollEvent(&e)) demo_event(d, &e, &quit);
        if (quit) break;
        if (frame > 0 && !d->paused) bp_scene_step(&d->scene);
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
            printf("frame %ld method %s n %zu pairs %llu hits %llu checks %llu mean_bp_ms %.4f\n", frame,
                   bp_method_name(d->ran), d->scene.n, (unsigned long long)d->pairs,
                   (unsigned long long)d->hits, (unsigned long long)d->checks,
                   d->bp_ms_total / (double)(d->bp_calls ? d->bp_calls : 1));
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
    if (!demo_set_method(&d, d.opt.method)) {
        fprintf(stderr, "broadphase-demo: %s\n", d.message);
    } else if (SDL_Init(d.opt.headless ? SDL_INIT_EVENTS : SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
        fprintf(stderr, "broadphase-demo: %s\n", SDL_GetError());
    } else {
        rc = demo_run(&d);
        SDL_Quit();
    }
    bp_context_destroy(d.ctx);
    demo_free_objects(&d);
    free(d.spans);
    return rc;
}
