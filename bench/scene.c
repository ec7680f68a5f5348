// The scenes of docs/scenes.md (SCENES.md's and three shapes beyond it), draw for draw. Built with -ffp-contract=off (bp_warnings) so that
// no multiply-add is fused: the check values depend on plain IEEE double arithmetic.
#include "scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "free_all.h"

static const char *const bp_scene_names[BP_SCENE_COUNT] = {
    [BP_SCENE_UNIFORM] = "uniform", [BP_SCENE_CLUSTERED] = "clustered", [BP_SCENE_MIXED] = "mixed",
    [BP_SCENE_LINE] = "line",       [BP_SCENE_SEED] = "seed",       [BP_SCENE_STICKS] = "sticks",
    [BP_SCENE_SIZES] = "sizes",     [BP_SCENE_PARETO] = "pareto",   [BP_SCENE_PLATES] = "plates",
    [BP_SCENE_BLOBS] = "blobs",
};

// pi to double precision, spelled out: M_PI is not C17.
#define BP_PI 3.14159265358979323846

const char *bp_scene_name(bp_scene_kind kind) {
    if ((int)kind < 0 || kind >= BP_SCENE_COUNT) return NULL;
    return bp_scene_names[kind];
}

int bp_scene_name_index(const char *const *names, int count, const char *name) {
    if (!name) return -1;
    for (int k = 0; k < count; ++k)
        if (strcmp(name, names[k]) == 0) return k;
    return -1;
}

int bp_scene_from_name(const char *name, bp_scene_kind *kind) {
    int k = bp_scene_name_index(bp_scene_names, BP_SCENE_COUNT, name);
    if (k < 0 || !kind) return -1;
    *kind = (bp_scene_kind)k;
    return 0;
}

uint64_t bp_scene_next(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15u;
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

double bp_scene_u01(uint64_t *state) {
    // 53 random bits times 2^-53: exact, in [0, 1).
    return (double)(bp_scene_next(state) >> 11) * 0x1p-53;
}

double bp_scene_uniform(uint64_t *state, double a, double b) {
    return a + (b - a) * bp_scene_u01(state);
}

double bp_scene_gauss(uint64_t *state) {
    double u1 = bp_scene_u01(state);
    if (u1 == 0.0) u1 = 0x1p-53; // log(0) would be -inf
    double u2 = bp_scene_u01(state);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * BP_PI * u2);
}

int bp_scene_init(bp_scene *s, const char *name, size_t n, int dim, uint64_t seed) {
    bp_scene_kind kind;
    if (!s) return -1;
    memset(s, 0, sizeof *s);
    if (bp_scene_from_name(name, &kind) != 0) return -1;
    return bp_scene_init_kind(s, kind, n, dim, seed);
}

static double bp_clamp(double x, double lo, double hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

// One object of a scene, drawn from *st in docs/scenes.md's order: its centre pi, velocity vi
// and radius *r; returns true when it set its per-axis half extents hi too (sticks, plates),
// false when they are r on every axis. centre and spread: the clusters (clustered, blobs).
static bool bp_scene_place(bp_scene_kind kind, int dim, double w, uint64_t *st, double (*centre)[3],
                           const double *spread, double *pi, double *vi, double *r, double *hi) {
    const size_t d = (size_t)dim;
    switch (kind) {
    case BP_SCENE_UNIFORM:
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, 1.0, w - 1.0);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = 1.0;
        break;
    case BP_SCENE_CLUSTERED:
    case BP_SCENE_BLOBS: {
        double f = floor(bp_scene_u01(st) * 16.0);
        int k = f > 15.0 ? 15 : (int)f;
        for (size_t a = 0; a < d; ++a)
            pi[a] = bp_clamp(centre[k][a] + bp_scene_gauss(st) * spread[k], 1.0, w - 1.0);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = 1.0;
        break;
    }
    case BP_SCENE_MIXED: {
        double u = bp_scene_u01(st);
        double ri = 1.0;
        if (u < 0.01) ri = exp(bp_scene_uniform(st, log(0.5), log(25.0)));
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, ri, w - ri);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = ri;
        break;
    }
    case BP_SCENE_LINE:
        pi[0] = w / 2.0;
        for (size_t a = 1; a < d; ++a) pi[a] = bp_scene_uniform(st, 1.0, w - 1.0);
        vi[0] = 0.0;
        for (size_t a = 1; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = 1.0;
        break;
    case BP_SCENE_SEED:
        for (size_t a = 0; a < d; ++a) pi[a] = floor(bp_scene_u01(st) * w / 2.0) + w / 4.0;
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -2.0, 2.0);
        *r = 5.0;
        break;
    case BP_SCENE_STICKS: {
        // The long axis first (one draw), then the centre within [h, W - h] on each axis.
        double f = floor(bp_scene_u01(st) * (double)dim);
        size_t ax = f > (double)(dim - 1) ? d - 1 : (size_t)f;
        for (size_t a = 0; a < d; ++a) hi[a] = a == ax ? 20.0 : 0.4;
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, hi[a], w - hi[a]);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = 20.0;
        return true;  // per-axis half extents already set
    }
    case BP_SCENE_SIZES: {
        double ri = exp(bp_scene_uniform(st, log(0.1), log(30.0)));
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, ri, w - ri);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = ri;
        break;
    }
    case BP_SCENE_PARETO: {
        // Radius 0.3 times a Pareto tail of exponent 1.2, capped at a quarter of the world.
        const double ri = fmin(0.3 * pow(1.0 - bp_scene_u01(st), -1.0 / 1.2), w / 4.0);
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, ri, w - ri);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = ri;
        break;
    }
    case BP_SCENE_PLATES: {
        // One axis drawn as in sticks: in 2D the long one (half extents 10 and 0.4), in 3D
        // the thin one (0.4 on it, 10 on the others).
        double f = floor(bp_scene_u01(st) * (double)dim);
        size_t ax = f > (double)(dim - 1) ? d - 1 : (size_t)f;
        for (size_t a = 0; a < d; ++a) hi[a] = (a == ax) == (dim == 2) ? 10.0 : 0.4;
        for (size_t a = 0; a < d; ++a) pi[a] = bp_scene_uniform(st, hi[a], w - hi[a]);
        for (size_t a = 0; a < d; ++a) vi[a] = bp_scene_uniform(st, -0.5, 0.5);
        *r = 10.0;
        return true;  // per-axis half extents already set
    }
    case BP_SCENE_COUNT:
        break;
    }
    return false;
}

int bp_scene_init_kind(bp_scene *s, bp_scene_kind kind, size_t n, int dim, uint64_t seed) {
    if (!s) return -1;
    memset(s, 0, sizeof *s);
    if ((int)kind < 0 || kind >= BP_SCENE_COUNT) return -1;
    if (dim != 2 && dim != 3) return -1;
    if (n == 0 || n > BP_MAX_BOXES) return -1;
    size_t d = (size_t)dim;
    *s = (bp_scene){.kind = kind, .dim = dim, .n = n, .seed = seed};
    s->p = malloc(n * d * sizeof *s->p);
    s->v = malloc(n * d * sizeof *s->v);
    s->r = malloc(n * sizeof *s->r);
    s->h = malloc(n * d * sizeof *s->h);
    if (!s->p || !s->v || !s->r || !s->h) {
        bp_scene_free(s);
        return -1;
    }
    double *p = s->p, *v = s->v, *r = s->r, *h = s->h;

    // W: r = 1 objects cover 5% of the world (the seed scene has its fixed 300x300 stage).
    double nd = (double)n;
    double w;
    if (kind == BP_SCENE_SEED) w = 300.0;
    else if (dim == 2) w = sqrt(nd * BP_PI / 0.05);
    else w = cbrt(nd * (4.0 / 3.0) * BP_PI / 0.05);
    s->world = w;

    uint64_t st = seed;
    double centre[16][3], spread[16];
    if (kind == BP_SCENE_CLUSTERED || kind == BP_SCENE_BLOBS) {
        for (int k = 0; k < 16; ++k) {
            for (int a = 0; a < dim; ++a) centre[k][a] = bp_scene_uniform(&st, w / 8.0, 7.0 * w / 8.0);
            // clustered: W/40 each; blobs: four widths, each 2.8 times tighter than the last
            spread[k] = kind == BP_SCENE_BLOBS ? w / 40.0 / pow(2.8, (double)(k % 4)) : w / 40.0;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        double *pi = p + i * d, *vi = v + i * d, *hi = h + i * d;
        if (!bp_scene_place(kind, dim, w, &st, centre, spread, pi, vi, &r[i], hi))
            for (size_t a = 0; a < d; ++a) hi[a] = r[i];  // circles and spheres: r on every axis
    }
    s->rng = st;
    return 0;
}

void bp_scene_step(bp_scene *s) {
    size_t d = (size_t)s->dim;
    double w = s->world;
    for (size_t i = 0; i < s->n; ++i) {
        double *pi = s->p + i * d, *vi = s->v + i * d;
        const double *hi = s->h + i * d;
        for (size_t a = 0; a < d; ++a) bp_scene_move_axis(&pi[a], &vi[a], hi[a], w);
    }
    s->frame++;
}

// One bound p -+ h: computed in double, rounded to the nearest float (the default rounding mode).
static float bp_lo(const bp_scene *s, size_t i, size_t a) {
    return (float)(s->p[i * (size_t)s->dim + a] - s->h[i * (size_t)s->dim + a]);
}

static float bp_hi(const bp_scene *s, size_t i, size_t a) {
    return (float)(s->p[i * (size_t)s->dim + a] + s->h[i * (size_t)s->dim + a]);
}

void bp_scene_box(const bp_scene *s, size_t i, float *out) {
    size_t d = (size_t)s->dim;
    for (size_t a = 0; a < d; ++a) {
        out[a] = bp_lo(s, i, a);
        out[d + a] = bp_hi(s, i, a);
    }
}

void bp_scene_boxes(const bp_scene *s, float *out) {
    size_t d = (size_t)s->dim;
    for (size_t i = 0; i < s->n; ++i) bp_scene_box(s, i, out + i * 2 * d);
}

void bp_scene_boxes2(const bp_scene *s, bp_box2 *out) {
    for (size_t i = 0; i < s->n; ++i) {
        for (size_t a = 0; a < 2; ++a) {
            out[i].min[a] = bp_lo(s, i, a);
            out[i].max[a] = bp_hi(s, i, a);
        }
    }
}

void bp_scene_boxes3(const bp_scene *s, bp_box3 *out) {
    for (size_t i = 0; i < s->n; ++i) {
        for (size_t a = 0; a < 3; ++a) {
            out[i].min[a] = bp_lo(s, i, a);
            out[i].max[a] = bp_hi(s, i, a);
        }
    }
}

void bp_scene_free(bp_scene *s) {
    if (!s) return;
    BP_FREE_ALL(s->p, s->v, s->r, s->h);
    memset(s, 0, sizeof *s);
}
