// The world scenes of docs/scenes.md, draw for draw (built with -ffp-contract=off, like scene.c:
// the check values depend on plain IEEE double arithmetic).
#include "world_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "free_all.h"
#include "scene.h"

#define BP_PI 3.14159265358979323846

static const char *const bp_wscene_names[BP_WSCENE_COUNT] = {[BP_WSCENE_STATIC] = "static",
                                                             [BP_WSCENE_SHOOTER] = "shooter"};

const char *bp_wscene_name(bp_wscene_kind kind) {
    if ((int)kind < 0 || kind >= BP_WSCENE_COUNT) return NULL;
    return bp_wscene_names[kind];
}

int bp_wscene_from_name(const char *name, bp_wscene_kind *kind) {
    int k = bp_scene_name_index(bp_wscene_names, BP_WSCENE_COUNT, name);
    if (k < 0 || !kind) return -1;
    *kind = (bp_wscene_kind)k;
    return 0;
}

// A bullet's draws (at frame 0 and whenever one is reborn): p then v.
static void bp_wscene_draw_bullet(bp_wscene *s, size_t k) {
    size_t d = (size_t)s->dim;
    for (size_t a = 0; a < d; ++a) s->p[k * d + a] = bp_scene_uniform(&s->rng, 1.0, s->world - 1.0);
    for (size_t a = 0; a < d; ++a) s->v[k * d + a] = bp_scene_uniform(&s->rng, -2.0, 2.0);
    s->r[k] = 0.5;
}

int bp_wscene_init(bp_wscene *s, bp_wscene_kind kind, size_t count, int dim, uint64_t seed) {
    if (!s) return -1;
    memset(s, 0, sizeof *s);
    if ((int)kind < 0 || kind >= BP_WSCENE_COUNT || (dim != 2 && dim != 3) || count == 0) return -1;
    size_t ships = kind == BP_WSCENE_SHOOTER ? (count + 99) / 100 : 0;
    size_t n = count + ships;
    if (n > ((size_t)1 << 30)) return -1;
    size_t d = (size_t)dim;
    *s = (bp_wscene){.kind = kind, .dim = dim, .count = count, .n = n, .ships = ships, .seed = seed, .rng = seed};
    s->p = malloc(n * d * sizeof *s->p);
    s->v = malloc(n * d * sizeof *s->v);
    s->r = malloc(n * sizeof *s->r);
    s->age = calloc(n, sizeof *s->age);
    s->serial = malloc(n * sizeof *s->serial);
    s->moved = malloc(n * sizeof *s->moved);
    s->respawned = malloc(n * sizeof *s->respawned);
    s->dead = malloc(n * sizeof *s->dead);
    if (!s->p || !s->v || !s->r || !s->age || !s->serial || !s->moved || !s->respawned || !s->dead) {
        bp_wscene_free(s);
        return -1;
    }
    double nd = (double)count;
    s->world = dim == 2 ? sqrt(nd * BP_PI / 0.05) : cbrt(nd * (4.0 / 3.0) * BP_PI / 0.05);
    const double w = s->world;
    if (kind == BP_WSCENE_STATIC) {
        // Exactly `uniform`'s draws.
        for (size_t k = 0; k < n; ++k) {
            for (size_t a = 0; a < d; ++a) s->p[k * d + a] = bp_scene_uniform(&s->rng, 1.0, w - 1.0);
            for (size_t a = 0; a < d; ++a) s->v[k * d + a] = bp_scene_uniform(&s->rng, -0.5, 0.5);
            s->r[k] = 1.0;
        }
    } else {
        for (size_t k = 0; k < ships; ++k) {
            const double r = 8.0;
            for (size_t a = 0; a < d; ++a) s->p[k * d + a] = bp_scene_uniform(&s->rng, r, w - r);
            for (size_t a = 0; a < d; ++a) s->v[k * d + a] = bp_scene_uniform(&s->rng, -0.5, 0.5);
            s->r[k] = r;
        }
        for (size_t b = 0; b < count; ++b) {
            bp_wscene_draw_bullet(s, ships + b);
            s->age[ships + b] = (int)(b % BP_WSCENE_BULLET_LIFE);
        }
    }
    for (size_t k = 0; k < n; ++k) s->serial[k] = k;
    s->next_serial = n;
    return 0;
}

// docs/scenes.md's move rule for slot k.
static void bp_wscene_move(bp_wscene *s, size_t k) {
    size_t d = (size_t)s->dim;
    double *p = s->p + k * d, *v = s->v + k * d, r = s->r[k], w = s->world;
    for (size_t a = 0; a < d; ++a) bp_scene_move_axis(&p[a], &v[a], r, w);
}

void bp_wscene_step(bp_wscene *s) {
    s->nmoved = s->nrespawned = 0;
    if (s->kind == BP_WSCENE_STATIC) {
        for (size_t k = 0; k < s->n; k += 100) {
            bp_wscene_move(s, k);
            s->moved[s->nmoved++] = (uint32_t)k;
        }
    } else {
        for (size_t k = 0; k < s->n; ++k) bp_wscene_move(s, k);
        for (size_t k = 0; k < s->ships; ++k) s->moved[s->nmoved++] = (uint32_t)k;
        for (size_t k = s->ships; k < s->n; ++k) {
            if (++s->age[k] == BP_WSCENE_BULLET_LIFE) {
                bp_wscene_draw_bullet(s, k);
                s->age[k] = 0;
                s->dead[s->nrespawned] = s->serial[k];
                s->serial[k] = s->next_serial++;
                s->respawned[s->nrespawned++] = (uint32_t)k;
            } else {
                s->moved[s->nmoved++] = (uint32_t)k;
            }
        }
    }
    s->frame++;
}

void bp_wscene_box(const bp_wscene *s, size_t k, float *out) {
    size_t d = (size_t)s->dim;
    for (size_t a = 0; a < d; ++a) {
        out[a] = (float)(s->p[k * d + a] - s->r[k]);
        out[d + a] = (float)(s->p[k * d + a] + s->r[k]);
    }
}

bool bp_wscene_is_static(const bp_wscene *s, size_t k) {
    return s->kind == BP_WSCENE_STATIC && k % 100 != 0;
}

uint64_t bp_wscene_category(const bp_wscene *s, size_t k) {
    if (s->kind == BP_WSCENE_STATIC) return 1;
    return k < s->ships ? BP_WSCENE_SHIP_CATEGORY : BP_WSCENE_BULLET_CATEGORY;
}

uint64_t bp_wscene_mask(const bp_wscene *s, size_t k) {
    if (s->kind == BP_WSCENE_STATIC) return UINT64_MAX;
    return k < s->ships ? BP_WSCENE_SHIP_MASK : BP_WSCENE_BULLET_MASK;
}

bool bp_wscene_counts(const bp_wscene *s, size_t i, size_t j) {
    if (bp_wscene_is_static(s, i) && bp_wscene_is_static(s, j)) return false;
    return (bp_wscene_category(s, i) & bp_wscene_mask(s, j)) && (bp_wscene_category(s, j) & bp_wscene_mask(s, i));
}

void bp_wscene_free(bp_wscene *s) {
    if (!s) return;
    BP_FREE_ALL(s->p, s->v, s->r, s->age, s->serial, s->moved, s->respawned, s->dead);
    memset(s, 0, sizeof *s);
}
