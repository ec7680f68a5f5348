// The demo's simulation, shared by the desktop demo (demo/demo.c, SDL2) and the browser demo
// (web/web.c, a canvas): see demo_sim.h. No drawing and no platform calls here.
#include "demo_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bp_demo_mode_names[3] = {"auto", "incremental", "rebuild"};

void bp_demo_note(bp_demo_sim *d, const char *text) {
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

bp_box2 bp_demo_box(double x, double y, double r) {
    return (bp_box2){{demo_down(x - r), demo_down(y - r)}, {demo_up(x + r), demo_up(y + r)}};
}

// The narrow phase, exact up to double rounding: |ca - cb| <= ra + rb (touching counts).
static bool demo_circles_touch(const double *a, double ra, const double *b, double rb) {
    double dx = a[0] - b[0], dy = a[1] - b[1], s = ra + rb;
    return dx * dx + dy * dy <= s * s;
}

bool bp_demo_is_bullet(uint64_t user) {
    return (user & BP_DEMO_BULLET_USER) != 0;
}

static uint64_t demo_bullet_user(const bp_demo_sim *d, size_t slot) {
    return BP_DEMO_BULLET_USER | (uint64_t)d->bullets[slot].gen << 32 | (uint64_t)slot;
}

// The live bullet a user value names, or NULL (a bullet removed since).
static bp_demo_bullet *demo_bullet_of(bp_demo_sim *d, uint64_t user) {
    size_t slot = (size_t)(user & 0xffffffffu);
    uint32_t gen = (uint32_t)((user & ~BP_DEMO_BULLET_USER) >> 32);
    if (slot >= d->bullet_slots || !d->bullets[slot].live || d->bullets[slot].gen != gen) return NULL;
    return &d->bullets[slot];
}

static bp_proxy_def demo_circle_def(size_t k) {
    bp_proxy_def pd = bp_default_proxy_def();
    pd.category = BP_DEMO_CIRCLE_CATEGORY;
    pd.mask = BP_DEMO_CIRCLE_MASK;
    pd.user = k;
    return pd;
}

// Room for n circles and n + bullets boxes. False when out of memory (nothing lost).
static bool demo_reserve(bp_demo_sim *d, size_t n) {
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
    size_t boxes = n + BP_DEMO_MAX_BULLETS;
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

void bp_demo_free_objects(bp_demo_sim *d) {
    bp_world_destroy(d->world);
    d->world = NULL;
    bp_scene_free(&d->scene);
    void *arrays[] = {d->ids,     d->boxes,   d->move_ids,  d->pos,      d->hit,      d->oracle,
                      d->bullets, d->dead_ids, d->add_ids, d->add_boxes, d->add_defs, d->add_slots};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; ++k) free(arrays[k]);
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
static size_t demo_boxes(bp_demo_sim *d) {
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
        d->boxes[m] = bp_demo_box(d->pos[2 * i], d->pos[2 * i + 1], s->r[i]);
        d->move_ids[m++] = d->ids[i];
    }
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        const bp_demo_bullet *b = &d->bullets[k];
        if (!b->live || !b->added) continue;
        d->boxes[m] = bp_demo_box(b->p[0], b->p[1], d->bullet_r);
        d->move_ids[m++] = b->id;
    }
    return m;
}

// A new world (mode, method) holding every circle and live bullet; the old one stays when this
// fails. Bullets' contact counts restart: the first update reports every pair as begun.
bp_status bp_demo_rebuild_world(bp_demo_sim *d, bp_method method, bp_world_mode mode) {
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
        bp_demo_bullet *bu = &d->bullets[k];
        if (!bu->live || !bu->added) continue;
        bp_proxy_def pd = bp_default_proxy_def();
        pd.category = BP_DEMO_BULLET_CATEGORY;
        pd.mask = BP_DEMO_BULLET_MASK;
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
bool bp_demo_set_objects(bp_demo_sim *d, size_t n) {
    bp_world_destroy(d->world);
    d->world = NULL;
    bp_scene_free(&d->scene);
    d->cap = 0;
    d->drag = -1;
    d->bullet_slots = d->live_bullets = d->ndead = 0;
    if (bp_scene_init(&d->scene, d->scene_name, n, 2, d->seed) != 0) return false;
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
        d->bullets = calloc(BP_DEMO_MAX_BULLETS, sizeof *d->bullets);
        d->dead_ids = malloc(BP_DEMO_MAX_BULLETS * sizeof *d->dead_ids);
        d->add_ids = malloc(BP_DEMO_MAX_BULLETS * sizeof *d->add_ids);
        d->add_boxes = malloc(BP_DEMO_MAX_BULLETS * sizeof *d->add_boxes);
        d->add_defs = malloc(BP_DEMO_MAX_BULLETS * sizeof *d->add_defs);
        d->add_slots = malloc(BP_DEMO_MAX_BULLETS * sizeof *d->add_slots);
        if (!d->bullets || !d->dead_ids || !d->add_ids || !d->add_boxes || !d->add_defs || !d->add_slots) return false;
    }
    d->rmin = INFINITY;
    for (size_t i = 0; i < n; ++i) d->rmin = d->scene.r[i] < d->rmin ? d->scene.r[i] : d->rmin;
    d->bullet_r = d->rmin / 4.0;
    d->rng = d->seed ^ 0x5DEECE66Du;
    return bp_demo_rebuild_world(d, d->method, d->mode) == BP_OK;
}

// `+`: `count` more circles drawn from the scene's generator (a seed per batch), added to the
// world in one batch call. The circles stay as they were when this fails.
static bool demo_add_circles(bp_demo_sim *d, size_t count) {
    bp_scene extra;
    size_t n = d->scene.n;
    if (!demo_reserve(d, n + count)) return false;
    if (bp_scene_init(&extra, d->scene_name, count, 2, d->seed + 0x9E3779B97F4A7C15u * ++d->batches) != 0)
        return false;
    bp_proxy_def *defs = malloc(count * sizeof *defs);
    bp_box2 *boxes = malloc(count * sizeof *boxes);
    bp_status st = defs && boxes ? BP_OK : BP_ERR_NOMEM;
    for (size_t k = 0; k < count && st == BP_OK; ++k) {
        defs[k] = demo_circle_def(n + k);
        boxes[k] = bp_demo_box(extra.p[2 * k], extra.p[2 * k + 1], extra.r[k]);
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
static bool demo_remove_circles(bp_demo_sim *d, size_t count) {
    size_t keep = d->scene.n - count;
    if (bp_world_remove_batch(d->world, d->ids + keep, count) != BP_OK) return false;
    if (d->drag >= (long)keep) d->drag = -1;
    d->scene.n = keep;
    return true;
}

// `b`: a shot of bullets (seed 002): from random places in the stage, in random directions, as
// the shooter scene draws them; they join the world at the next update.
void bp_demo_fire(bp_demo_sim *d) {
    const double w = d->scene.world, r = d->bullet_r;
    size_t fired = 0;
    for (size_t k = 0; k < BP_DEMO_MAX_BULLETS && fired < BP_DEMO_BULLETS_PER_SHOT; ++k) {
        bp_demo_bullet *b = &d->bullets[k];
        if (b->live) continue;
        if (k >= d->bullet_slots) d->bullet_slots = k + 1;
        uint32_t gen = b->gen + 1;
        *b = (bp_demo_bullet){.live = true, .gen = gen};
        for (int a = 0; a < 2; ++a) b->p[a] = bp_scene_uniform(&d->rng, r, w - r);
        for (int a = 0; a < 2; ++a) b->v[a] = bp_scene_uniform(&d->rng, -BP_DEMO_BULLET_SPEED, BP_DEMO_BULLET_SPEED);
        ++fired;
        ++d->live_bullets;
    }
    if (fired < BP_DEMO_BULLETS_PER_SHOT) bp_demo_note(d, "bullets: too many at once");
}

// One frame of motion: circles (the docs/scenes.md rule), bullets (the same bounce), bullets' ages;
// the dead are queued for removal.
void bp_demo_step(bp_demo_sim *d) {
    bp_scene_step(&d->scene);
    const double w = d->scene.world, r = d->bullet_r;
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        bp_demo_bullet *b = &d->bullets[k];
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
        if (++b->age >= BP_DEMO_BULLET_LIFE) {
            if (b->added) d->dead_ids[d->ndead++] = b->id;
            b->live = false;
            --d->live_bullets;
        }
    }
    while (d->bullet_slots > 0 && !d->bullets[d->bullet_slots - 1].live) --d->bullet_slots;
}

// Counts one event for the bullet in it (begin +1, end -1).
static void demo_bullet_event(bp_demo_sim *d, const bp_world_pair *p, int delta) {
    bp_demo_bullet *b;
    if (bp_demo_is_bullet(p->user_a) && (b = demo_bullet_of(d, p->user_a))) b->contacts += delta;
    if (bp_demo_is_bullet(p->user_b) && (b = demo_bullet_of(d, p->user_b))) b->contacts += delta;
}

// --check: every pair and event against all-pairs tests of the same boxes.
static bp_status demo_check(bp_demo_sim *d, size_t nboxes, const bp_world_pairs *pairs, const bp_world_events *ev,
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
        const bp_demo_bullet *b = &d->bullets[k];
        if (!b->live || !b->added) continue;
        bp_box2 bb = bp_demo_box(b->p[0], b->p[1], d->bullet_r);
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
bp_status bp_demo_update(bp_demo_sim *d) {
    bp_scene *s = &d->scene;
    size_t nboxes = demo_boxes(d);
    // Bullets fired since the last update: their boxes and definitions.
    size_t nadd = 0;
    for (size_t k = 0; k < d->bullet_slots; ++k) {
        bp_demo_bullet *b = &d->bullets[k];
        if (!b->live || b->added) continue;
        d->add_boxes[nadd] = bp_demo_box(b->p[0], b->p[1], d->bullet_r);
        bp_proxy_def pd = bp_default_proxy_def();
        pd.category = BP_DEMO_BULLET_CATEGORY;
        pd.mask = BP_DEMO_BULLET_MASK;
        pd.user = demo_bullet_user(d, k);
        d->add_defs[nadd] = pd;
        d->add_slots[nadd++] = (uint32_t)k;
    }
    bp_world_events ev;
    double t0 = d->seconds();
    bp_status st = bp_world_move_batch2(d->world, d->move_ids, d->boxes, nboxes);
    if (st == BP_OK && d->ndead) st = bp_world_remove_batch(d->world, d->dead_ids, d->ndead);
    if (st == BP_OK) d->ndead = 0;
    if (st == BP_OK && nadd) st = bp_world_add_batch2(d->world, d->add_boxes, d->add_defs, nadd, d->add_ids);
    if (st == BP_OK) {
        for (size_t k = 0; k < nadd; ++k) {
            bp_demo_bullet *b = &d->bullets[d->add_slots[k]];
            b->id = d->add_ids[k];
            b->added = true;
        }
        st = bp_world_update(d->world, &ev);
    }
    double t1 = d->seconds();
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
        if (bp_demo_is_bullet(i) || bp_demo_is_bullet(j)) continue;
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
    if (d->check) {
        // demo_boxes' order (circles, then the bullets added before), then the bullets added now.
        memcpy(d->boxes + nboxes, d->add_boxes, nadd * sizeof *d->boxes);
        st = demo_check(d, nboxes + nadd, &pairs, &ev, hits);
        if (st != BP_OK) return st;
    }
    d->last_pairs = pairs.count;
    return BP_OK;
}


// Switches the world's stateless method when this build has it; the old world stays when the
// new one fails.
bool bp_demo_set_method(bp_demo_sim *d, bp_method m) {
    if (m == BP_METHOD_BRUTE && d->scene.n > BP_DEMO_MAX_BRUTE_N && d->world) {
        bp_demo_note(d, "brute: too many circles");
        return false;
    }
    if (!bp_method_available(m)) {
        char note[64];
        snprintf(note, sizeof note, "%s: not built", bp_method_name(m) ? bp_method_name(m) : "?");
        bp_demo_note(d, note);
        return false;
    }
    bp_status st = bp_demo_rebuild_world(d, m, d->mode);
    if (st != BP_OK) {
        char note[64];
        snprintf(note, sizeof note, "%s: %s", bp_method_name(m), bp_status_string(st));
        bp_demo_note(d, note);
        return false;
    }
    return true;
}

// Picks the circle under the mouse: the nearest centre among the circles whose boxes contain
// the point (a world query with the circles' category; moves since the update count).
void bp_demo_grab(bp_demo_sim *d, double x, double y) {
    const float pt[2] = {(float)x, (float)y};
    bp_world_hits hits;
    d->drag = -1;
    if (!isfinite(pt[0]) || !isfinite(pt[1]) ||
        bp_world_query_point(d->world, pt, BP_DEMO_CIRCLE_CATEGORY, &hits) != BP_OK)
        return;
    double best = INFINITY;
    for (size_t k = 0; k < hits.count; ++k) {
        uint64_t i = hits.users[k];
        if (bp_demo_is_bullet(i) || i >= d->scene.n) continue;
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

void bp_demo_release(bp_demo_sim *d) {
    if (d->drag < 0) return;
    size_t i = (size_t)d->drag;
    d->scene.v[2 * i] = d->drag_v[0];
    d->scene.v[2 * i + 1] = d->drag_v[1];
    d->drag = -1;
}

// `+` / `-`: the circle count made `want` (more circles added in one batch, the newest removed in
// one batch). False with a note when refused (brute force and too many) or out of memory.
bool bp_demo_resize(bp_demo_sim *d, size_t want) {
    size_t n = d->scene.n;
    want = want > BP_DEMO_MAX_N ? BP_DEMO_MAX_N : (want ? want : 1);
    if (d->method == BP_METHOD_BRUTE && want > BP_DEMO_MAX_BRUTE_N && want > n) {
        bp_demo_note(d, "brute: too many circles");
        return false;
    }
    bool ok = want > n ? demo_add_circles(d, want - n) : (want < n ? demo_remove_circles(d, n - want) : true);
    if (!ok) bp_demo_note(d, "out of memory");
    return ok;
}
