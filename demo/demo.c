// broadphase-demo: circles bouncing in a box turn red while they overlap (the demo of seed 000),
// on the persistent world (issue #13): every circle is a proxy of a bp_world, moved each frame
// in one batch call; `+` and `-` add and remove circles in batches, `b` fires bullets (seed
// 002's shooter) that live a second and are coloured by their begin and end events. Per frame:
// move (the docs/scenes.md generator), the world's update, the exact circle-circle narrow phase on
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
#include "demo_sim.h"
#include "png.h"
#include "scene.h"

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

typedef struct demo {
    demo_options opt;
    bp_demo_sim sim;        // circles, bullets, the world (demo_sim.h)
    SDL_Rect *spans;        // scratch for drawing filled circles
    size_t span_cap;
    SDL_Texture *sprite[2]; // a white and a red circle of radius rmin, pre-drawn
    double sprite_rad;      // their radius in pixels
    int sprite_m;           // their centre pixel (they are 2m+1 pixels wide)
    bool partition, paused;
    double scale;
    int width, height;
    double fps;             // frames per second, smoothed (the HUD)
} demo;

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
            if (!demo_parse_size(v, &z) || z == 0 || z > BP_DEMO_MAX_N) {
                fprintf(stderr, "broadphase-demo: --n wants 1..%zu, not '%s'\n", BP_DEMO_MAX_N, v);
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
            while (m < 3 && strcmp(v, bp_demo_mode_names[m]) != 0) ++m;
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

// ---------------------------------------------------------------------------------------------
// Drawing

static double demo_seconds(void) {
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

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
    const double rad = d->sim.rmin * d->scale;
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
    const double w = c->d->sim.scene.world, pad = w;
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
    const bp_scene *s = &d->sim.scene;
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
        bp_world_debug_draw(d->sim.world, &draw);
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    }

    // Circles: white first, red on top, so a crowd reads as red. The common radius comes from
    // the sprites (centred on the pixel that holds the centre); other sizes are a disc of
    // spans (a darker rim, then the fill) when big enough to show a rim, else one batch.
    demo_make_sprites(d, r);
    for (int pass = 0; pass < 2; ++pass) {
        size_t count = 0;
        for (size_t i = 0; i < s->n; ++i) {
            if (d->sim.hit[i] != pass) continue;
            double cx = d->sim.pos[2 * i] * sc, cy = BP_DEMO_HUD_H + d->sim.pos[2 * i + 1] * sc, rad = s->r[i] * sc;
            if (d->sprite[pass] && s->r[i] == d->sim.rmin) {
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
        for (size_t k = 0; k < d->sim.bullet_slots; ++k) {
            const bp_demo_bullet *b = &d->sim.bullets[k];
            if (!b->live || !b->added || (b->contacts > 0) != touching) continue;
            double rad = d->sim.bullet_r * sc < 1.5 ? 1.5 : d->sim.bullet_r * sc;
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
                       bp_demo_mode_names[d->sim.mode], bp_method_name(d->sim.method), d->sim.rebuilt ? "*" : "", s->n,
                       d->sim.bp_ms_avg, (unsigned long long)d->sim.checks, (unsigned long long)d->sim.pairs,
                       (unsigned long long)d->sim.begins, (unsigned long long)d->sim.ends, (unsigned long long)d->sim.hits);
    if (len > 0 && (size_t)len < sizeof line && d->sim.live_bullets) {
        char more[32];
        snprintf(more, sizeof more, "  bullets %zu", d->sim.live_bullets);
        strncat(line, more, sizeof line - strlen(line) - 1);
    }
    // Headless frames are not paced by a display: a rate there would mean nothing.
    if (len > 0 && (size_t)len < sizeof line && !d->opt.headless) {
        char fps[32];
        snprintf(fps, sizeof fps, "  %.0f fps", d->fps);
        strncat(line, fps, sizeof line - strlen(line) - 1);
    }
    if (len > 0 && (size_t)len < sizeof line) {
        const char *flags[3] = {d->sim.snap ? "  snap" : "", d->partition ? "  partition" : "", d->paused ? "  paused" : ""};
        for (int k = 0; k < 3; ++k) strncat(line, flags[k], sizeof line - strlen(line) - 1);
    }
    if (d->sim.message_frames > 0) {
        strncat(line, "  ", sizeof line - strlen(line) - 1);
        strncat(line, d->sim.message, sizeof line - strlen(line) - 1);
    }
    int fs = (int)strlen(line) * BP_DEMO_FONT_ADVANCE * 2 + 12 <= d->width ? 2 : 1;
    demo_color(r, 220, 225, 235, 255);
    bp_demo_text(r, 6, (BP_DEMO_HUD_H - 7 * fs) / 2, fs, line);
    return true;
}

// ---------------------------------------------------------------------------------------------
// Input
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
        bp_demo_resize(&d->sim, d->sim.scene.n * 2);
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        bp_demo_resize(&d->sim, d->sim.scene.n / 2);
        break;
    case SDLK_b:
        bp_demo_fire(&d->sim);
        break;
    case SDLK_m: {
        bp_world_mode next = (bp_world_mode)(((int)d->sim.mode + 1) % 3);
        bp_status st = bp_demo_rebuild_world(&d->sim, d->sim.method, next);
        if (st != BP_OK) bp_demo_note(&d->sim, bp_status_string(st));
        break;
    }
    case SDLK_TAB:
        bp_demo_set_method(&d->sim, demo_cycle(d->sim.method, (mod & KMOD_SHIFT) ? -1 : 1));
        break;
    case SDLK_d:
        d->partition = !d->partition;
        break;
    case SDLK_s:
        d->sim.snap = !d->sim.snap;
        break;
    case SDLK_SPACE:
        d->paused = !d->paused;
        break;
    default:
        if (key >= SDLK_1 && key <= SDLK_6) bp_demo_set_method(&d->sim, (bp_method)(key - SDLK_1));
        break;
    }
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
            bp_demo_grab(&d->sim, e->button.x / d->scale, (e->button.y - BP_DEMO_HUD_H) / d->scale);
        break;
    case SDL_MOUSEMOTION:
        d->sim.drag_x = e->motion.x / d->scale;
        d->sim.drag_y = (e->motion.y - BP_DEMO_HUD_H) / d->scale;
        break;
    case SDL_MOUSEBUTTONUP:
        if (e->button.button == SDL_BUTTON_LEFT) bp_demo_release(&d->sim);
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
        if (frame > 0 && !d->paused) bp_demo_step(&d->sim);
        bp_status st = bp_demo_update(&d->sim);
        // In a window, a count whose pairs no longer fit in memory (`+` pressed once too often
        // on a small stage) is halved until they do, instead of ending the demo.
        while (st == BP_ERR_NOMEM && !d->opt.headless && d->sim.scene.n > 1) {
            if (!bp_demo_set_objects(&d->sim, d->sim.scene.n / 2)) break;
            bp_demo_note(&d->sim, "out of memory: circles halved");
            st = bp_demo_update(&d->sim);
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
        if (d->sim.message_frames > 0) --d->sim.message_frames;
        if (last_frame) {
            size_t touching = 0;
            for (size_t k = 0; k < d->sim.bullet_slots; ++k)
                touching += d->sim.bullets[k].live && d->sim.bullets[k].added && d->sim.bullets[k].contacts > 0;
            printf("frame %ld method %s n %zu pairs %llu hits %llu checks %llu mean_bp_ms %.4f mode %s bullets %zu "
                   "touching %zu begins %llu ends %llu drag %ld",
                   frame, bp_method_name(d->sim.method), d->sim.scene.n, (unsigned long long)d->sim.pairs,
                   (unsigned long long)d->sim.hits, (unsigned long long)d->sim.checks,
                   d->sim.bp_ms_total / (double)(d->sim.bp_calls ? d->sim.bp_calls : 1), bp_demo_mode_names[d->sim.mode],
                   d->sim.live_bullets, touching, (unsigned long long)d->sim.begins, (unsigned long long)d->sim.ends, d->sim.drag);
            if (d->sim.drag >= 0)
                printf(" at %.2f %.2f", d->sim.scene.p[2 * (size_t)d->sim.drag], d->sim.scene.p[2 * (size_t)d->sim.drag + 1]);
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
    d.sim.scene_name = d.opt.scene;
    d.sim.seed = d.opt.seed;
    d.sim.check = d.opt.check;
    d.sim.seconds = demo_seconds;
    d.sim.drag = -1;
    d.partition = d.opt.partition;
    d.sim.snap = d.opt.snap;
    d.paused = d.opt.paused;
    d.sim.method = d.opt.method;
    d.sim.mode = d.opt.mode;
    size_t n = d.opt.n ? d.opt.n : (strcmp(d.opt.scene, "seed") == 0 ? 500 : 1000);
    if (!bp_demo_set_objects(&d.sim, n)) {
        fprintf(stderr, "broadphase-demo: out of memory for %zu objects\n", n);
        bp_demo_free_objects(&d.sim);
        return 1;
    }
    d.scale = bp_demo_scale(d.sim.scene.world, d.opt.scale);
    double side = ceil(d.sim.scene.world * d.scale);
    if (side > 16384) {
        fprintf(stderr, "broadphase-demo: the stage would be %.0f pixels wide; lower --scale\n", side);
        bp_demo_free_objects(&d.sim);
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
    bp_demo_free_objects(&d.sim);
    free(d.spans);
    return rc;
}
