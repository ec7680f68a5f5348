// The persistent world (issue #13) against a brute-force model world written here: random
// sequences of add, remove, move (one at a time and in batches), kind, filter and user changes,
// queries and updates, in 2D and 3D, in every mode, with the cell size automatic, tiny and huge;
// after every update the begin and end events, the pair set and the statistics must equal the
// model's, and bp_world_validate must hold after every call. Then every error case, allocation
// failure at every allocation of every call, a warm world that allocates nothing, ids that go
// stale, determinism whatever the order of the calls, the docs/scenes.md `static` check values, and
// huge boxes whose cost must not grow with their extent.
// Usage: test_world CASE [DIM [MODE]]. $SEED overrides the random seed.
#include <float.h>

#include "harness.h"

// ---------------------------------------------------------------------------------------------
// The model

typedef struct mproxy {
    bp_proxy_id id;
    float box[6];
    uint32_t kind;
    uint64_t cat, mask, user;
    bool alive;
} mproxy;

typedef struct mpair {
    bp_proxy_id a, b;
} mpair;

typedef struct mlist {
    mpair *p;
    size_t n, cap;
} mlist;

typedef struct model {
    int dim;
    mproxy *p;
    size_t n, cap;
    size_t *index;  // id -> place in p, open addressing (SIZE_MAX empty)
    size_t index_cap;
    mlist pairs;    // as of the last update, sorted
    mlist scratch, begins, ends;
} model;

static void mlist_push(mlist *l, bp_proxy_id a, bp_proxy_id b) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->p = bpt_xrealloc(l->p, l->cap * sizeof *l->p);
    }
    l->p[l->n].a = a.v < b.v ? a : b;
    l->p[l->n].b = a.v < b.v ? b : a;
    l->n++;
}

static int mpair_cmp(const void *x, const void *y) {
    const mpair *a = x, *b = y;
    if (a->a.v != b->a.v) return a->a.v < b->a.v ? -1 : 1;
    return (a->b.v > b->b.v) - (a->b.v < b->b.v);
}

static size_t model_slot(const model *m, bp_proxy_id id) {
    size_t i = (size_t)((id.v * 0x9E3779B97F4A7C15u) >> 17) & (m->index_cap - 1);
    while (m->index[i] != SIZE_MAX && !bp_proxy_equal(m->p[m->index[i]].id, id)) i = (i + 1) & (m->index_cap - 1);
    return i;
}

static void model_index(model *m) {
    if (2 * m->n < m->index_cap) return;
    free(m->index);
    m->index_cap = m->index_cap ? 2 * m->index_cap : 256;
    while (m->index_cap < 2 * m->n) m->index_cap *= 2;
    m->index = bpt_xrealloc(NULL, m->index_cap * sizeof *m->index);
    for (size_t k = 0; k < m->index_cap; ++k) m->index[k] = SIZE_MAX;
    for (size_t k = 0; k < m->n; ++k) m->index[model_slot(m, m->p[k].id)] = k;
}

static void model_free(model *m) {
    free(m->index);
    free(m->p);
    free(m->pairs.p);
    free(m->scratch.p);
    free(m->begins.p);
    free(m->ends.p);
    memset(m, 0, sizeof *m);
}

static mproxy *model_add(model *m, bp_proxy_id id, const float *box, const bp_proxy_def *d) {
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->p = bpt_xrealloc(m->p, m->cap * sizeof *m->p);
    }
    mproxy *p = &m->p[m->n++];
    memset(p, 0, sizeof *p);
    p->id = id;
    memcpy(p->box, box, (size_t)(2 * m->dim) * sizeof(float));
    p->kind = (uint32_t)d->kind;
    p->cat = d->category;
    p->mask = d->mask;
    p->user = d->user;
    p->alive = true;
    model_index(m);
    m->index[model_slot(m, id)] = m->n - 1;
    return &m->p[m->n - 1];
}

static mproxy *model_find(model *m, bp_proxy_id id) {
    if (!m->index_cap) return NULL;
    const size_t i = m->index[model_slot(m, id)];
    return i == SIZE_MAX ? NULL : &m->p[i];
}

static bool model_pairs_with(const mproxy *a, const mproxy *b, int dim) {
    if (!bpt_overlap(a->box, b->box, dim)) return false;
    if (!(a->cat & b->mask) || !(b->cat & a->mask)) return false;
    return !(a->kind == BP_PROXY_STATIC && b->kind == BP_PROXY_STATIC);
}

// The update: every pair of live proxies by brute force, diffed with the last set.
static void model_update(model *m) {
    mlist *now = &m->scratch;
    now->n = m->begins.n = m->ends.n = 0;
    size_t *live = bpt_xrealloc(NULL, (m->n + 1) * sizeof *live), nl = 0;
    for (size_t i = 0; i < m->n; ++i)
        if (m->p[i].alive) live[nl++] = i;
    for (size_t x = 0; x < nl; ++x) {
        const mproxy *a = &m->p[live[x]];
        for (size_t y = x + 1; y < nl; ++y)
            if (model_pairs_with(a, &m->p[live[y]], m->dim)) mlist_push(now, a->id, m->p[live[y]].id);
    }
    free(live);
    if (now->n > 1) qsort(now->p, now->n, sizeof *now->p, mpair_cmp);
    size_t a = 0, b = 0;
    while (a < m->pairs.n || b < now->n) {
        int c = a == m->pairs.n ? 1 : b == now->n ? -1 : mpair_cmp(&m->pairs.p[a], &now->p[b]);
        if (c < 0) {
            mlist_push(&m->ends, m->pairs.p[a].a, m->pairs.p[a].b);
            ++a;
        } else if (c > 0) {
            mlist_push(&m->begins, now->p[b].a, now->p[b].b);
            ++b;
        } else {
            ++a, ++b;
        }
    }
    mlist t = m->pairs;
    m->pairs = *now;
    *now = t;
}

// Compares a list of the world's pairs with the model's, ids and user values.
static void expect_pairs(model *m, const char *what, const bp_world_pairs *got, const mlist *want) {
    CHECK_MSG(got->count == want->n, "%s: %zu pairs, the model has %zu", what, got->count, want->n);
    for (size_t k = 0; k < want->n; ++k) {
        const bp_world_pair *g = &got->pairs[k];
        CHECK_MSG(bp_proxy_equal(g->a, want->p[k].a) && bp_proxy_equal(g->b, want->p[k].b),
                  "%s: pair %zu is (%" PRIx64 ", %" PRIx64 "), the model's (%" PRIx64 ", %" PRIx64 ")", what, k, g->a.v,
                  g->b.v, want->p[k].a.v, want->p[k].b.v);
        const mproxy *pa = model_find(m, g->a), *pb = model_find(m, g->b);
        CHECK(pa && pb);
        CHECK_MSG(g->user_a == pa->user && g->user_b == pb->user, "%s: pair %zu carries the wrong user values", what, k);
    }
}

// ---------------------------------------------------------------------------------------------
// Driving both

typedef struct rig {
    model m;
    bp_world *w;
    int dim;
    bpt_rng r;
    double world;       // side of the region most boxes live in
    int size_class;     // 0 points, 1 small, 2 mixed, 3 some huge
} rig;

static void random_box(rig *g, float *box) {
    double c[3], h[3];
    const double W = g->world;
    for (int a = 0; a < g->dim; ++a) {
        c[a] = bpt_uniform(&g->r, 0.0, W);
        double s;
        switch (g->size_class) {
        case 0: s = bpt_coin(&g->r, 0.7) ? 0.0 : 0.5; break;
        case 1: s = bpt_uniform(&g->r, 0.2, 2.0); break;
        case 2: s = exp(bpt_uniform(&g->r, log(0.05), log(W / 3))); break;
        default: s = bpt_coin(&g->r, 0.05) ? exp(bpt_uniform(&g->r, log(W), log(1e30))) : bpt_uniform(&g->r, 0.1, 3.0);
        }
        h[a] = s;
    }
    if (g->size_class == 0 && bpt_coin(&g->r, 0.5))  // points on a coarse lattice: many coincide
        for (int a = 0; a < g->dim; ++a) c[a] = floor(c[a] / 8.0) * 8.0;
    bpt_set_box(box, g->dim, c, h);
}

static void moved_box(rig *g, const float *from, float *box) {
    if (bpt_coin(&g->r, 0.1)) {  // teleport
        random_box(g, box);
        return;
    }
    const double step = bpt_coin(&g->r, 0.5) ? 0.3 : 3.0;
    for (int a = 0; a < g->dim; ++a) {
        const double m = bpt_uniform(&g->r, -step, step);
        float lo = (float)((double)from[a] + m), hi = (float)((double)from[g->dim + a] + m);
        box[a] = lo <= hi ? lo : hi;
        box[g->dim + a] = hi;
    }
}

static bp_proxy_def random_def(rig *g) {
    bp_proxy_def d = bp_default_proxy_def();
    d.kind = bpt_coin(&g->r, 0.3) ? BP_PROXY_STATIC : BP_PROXY_MOVING;
    // Three bits of category and mask: plenty of filtered pairs, plenty that pass.
    d.category = bpt_coin(&g->r, 0.6) ? 1 : (uint64_t)1 << bpt_below(&g->r, 3);
    d.mask = bpt_coin(&g->r, 0.6) ? UINT64_MAX : (uint64_t)(1 + bpt_below(&g->r, 7));
    d.user = bpt_next(&g->r);
    return d;
}

// A live model proxy at random, or NULL when there is none.
static mproxy *random_live(rig *g) {
    size_t live = 0;
    for (size_t k = 0; k < g->m.n; ++k) live += g->m.p[k].alive;
    if (!live) return NULL;
    size_t pick = bpt_below(&g->r, live);
    for (size_t k = 0; k < g->m.n; ++k)
        if (g->m.p[k].alive && pick-- == 0) return &g->m.p[k];
    return NULL;
}

static void rig_validate(rig *g) { CHECK_OK(bp_world_validate(g->w)); }

static int cmp_id(const void *x, const void *y) {
    const uint64_t a = ((const bp_proxy_id *)x)->v, b = ((const bp_proxy_id *)y)->v;
    return (a > b) - (a < b);
}

static bp_world *make_world(int dim, bp_world_mode mode, float cell, const bp_allocator *al) {
    bp_world_def def = bp_default_world_def();
    def.dimension = dim;
    def.mode = mode;
    def.cell_size = cell;
    if (al) def.allocator = *al;
    bp_world *w = NULL;
    CHECK_OK(bp_world_create(&def, &w));
    CHECK(w != NULL);
    return w;
}

// A rig without its world yet: the model, the generator, the region side and the size class.
static void rig_start(rig *g, int dim, uint64_t salt, double world, int size_class) {
    memset(g, 0, sizeof *g);
    g->dim = dim;
    g->m.dim = dim;
    g->r = bpt_rng_make(salt);
    g->world = world;
    g->size_class = size_class;
}

static void rig_init(rig *g, int dim, bp_world_mode mode, float cell, uint64_t salt, double world, int size_class) {
    rig_start(g, dim, salt, world, size_class);
    g->w = make_world(dim, mode, cell, NULL);
}

static void rig_free(rig *g) {
    bp_world_destroy(g->w);
    model_free(&g->m);
}

// One random operation (or a batch of them): drawn first (op_make), then run on the world
// (op_run: its status), then checked against the model and applied to it (op_apply), so that a
// run refused for lack of memory can be tried again and the model stays as the world must be.
typedef enum { OP_ADD, OP_MOVE, OP_REMOVE, OP_SET, OP_QUERY, OP_UPDATE } op_kind;

typedef struct op {
    op_kind kind;
    size_t n;
    bool single, dflt;
    float *boxes;
    bp_proxy_def *defs;
    bp_proxy_id *ids;
    int what;  // OP_SET: 0 kind, 1 filter, 2 user; OP_QUERY: 0 box, 1 sphere, 2 point
    bp_proxy_def def;
    float lo[3], hi[3], c[3], radius;
    uint64_t mask;
    bp_world_events ev;
    bp_world_hits hits;
} op;

static void op_free(op *o) {
    free(o->boxes);
    free(o->defs);
    free(o->ids);
    memset(o, 0, sizeof *o);
}

static void op_make(rig *g, op *o) {
    const int dim = g->dim;
    memset(o, 0, sizeof *o);
    const double u = bpt_u01(&g->r);
    if (u < 0.12 || !random_live(g)) {
        o->kind = OP_ADD;
        o->n = bpt_coin(&g->r, 0.5) ? 1 : 1 + bpt_below(&g->r, 40);
        o->boxes = bpt_xrealloc(NULL, o->n * 6 * sizeof(float));
        o->defs = bpt_xrealloc(NULL, o->n * sizeof *o->defs);
        o->ids = bpt_xrealloc(NULL, o->n * sizeof *o->ids);
        for (size_t k = 0; k < o->n; ++k) {
            random_box(g, o->boxes + k * (size_t)(2 * dim));
            o->defs[k] = random_def(g);
        }
        o->dflt = bpt_coin(&g->r, 0.1);
        o->single = o->n == 1 && bpt_coin(&g->r, 0.5);
    } else if (u < 0.60) {  // an id may appear twice in a batch: the last box wins
        o->kind = OP_MOVE;
        o->n = bpt_coin(&g->r, 0.4) ? 1 : 1 + bpt_below(&g->r, 30);
        o->boxes = bpt_xrealloc(NULL, o->n * 6 * sizeof(float));
        o->ids = bpt_xrealloc(NULL, o->n * sizeof *o->ids);
        for (size_t k = 0; k < o->n; ++k) {
            const mproxy *p = random_live(g);
            o->ids[k] = p->id;
            moved_box(g, p->box, o->boxes + k * (size_t)(2 * dim));
        }
        o->single = o->n == 1 && bpt_coin(&g->r, 0.5);
    } else if (u < 0.70) {  // distinct ids
        o->kind = OP_REMOVE;
        const size_t want = bpt_coin(&g->r, 0.5) ? 1 : 1 + bpt_below(&g->r, 10);
        o->ids = bpt_xrealloc(NULL, want * sizeof *o->ids);
        for (size_t k = 0; k < want; ++k) {
            const mproxy *p = random_live(g);
            bool dup = false;
            for (size_t j = 0; j < o->n; ++j) dup |= bp_proxy_equal(o->ids[j], p->id);
            if (!dup) o->ids[o->n++] = p->id;
        }
        o->single = o->n == 1 && bpt_coin(&g->r, 0.5);
    } else if (u < 0.76) {
        o->kind = OP_SET;
        o->n = 1;
        o->ids = bpt_xrealloc(NULL, sizeof *o->ids);
        o->ids[0] = random_live(g)->id;
        o->def = random_def(g);
        o->what = (int)bpt_below(&g->r, 3);
    } else if (u < 0.82) {
        o->kind = OP_QUERY;
        float box[6];
        random_box(g, box);
        o->what = (int)bpt_below(&g->r, 3);
        o->mask = bpt_coin(&g->r, 0.5) ? UINT64_MAX : (uint64_t)(1 + bpt_below(&g->r, 7));
        o->radius = (float)bpt_uniform(&g->r, 0.0, g->world / 4);
        for (int a = 0; a < dim; ++a) {
            o->lo[a] = box[a];
            o->hi[a] = box[dim + a];
            o->c[a] = box[a];
        }
    } else {
        o->kind = OP_UPDATE;
    }
}

static bp_status op_run(rig *g, op *o) {
    bp_world *w = g->w;
    const int dim = g->dim;
    switch (o->kind) {
    case OP_ADD: {
        const bp_proxy_def *defs = o->dflt ? NULL : o->defs;
        if (o->single)
            return dim == 2 ? bp_world_add2(w, bpt_as2(o->boxes), defs, o->ids) : bp_world_add3(w, bpt_as3(o->boxes), defs, o->ids);
        return dim == 2 ? bp_world_add_batch2(w, bpt_as2(o->boxes), defs, o->n, o->ids)
                        : bp_world_add_batch3(w, bpt_as3(o->boxes), defs, o->n, o->ids);
    }
    case OP_MOVE:
        if (o->single)
            return dim == 2 ? bp_world_move2(w, o->ids[0], bpt_as2(o->boxes)) : bp_world_move3(w, o->ids[0], bpt_as3(o->boxes));
        return dim == 2 ? bp_world_move_batch2(w, o->ids, bpt_as2(o->boxes), o->n)
                        : bp_world_move_batch3(w, o->ids, bpt_as3(o->boxes), o->n);
    case OP_REMOVE:
        return o->single ? bp_world_remove(w, o->ids[0]) : bp_world_remove_batch(w, o->ids, o->n);
    case OP_SET:
        if (o->what == 0) return bp_world_set_kind(w, o->ids[0], o->def.kind);
        if (o->what == 1) return bp_world_set_filter(w, o->ids[0], o->def.category, o->def.mask);
        return bp_world_set_user(w, o->ids[0], o->def.user);
    case OP_QUERY:
        if (o->what == 0) return bp_world_query_box(w, o->lo, o->hi, o->mask, &o->hits);
        if (o->what == 1) return bp_world_query_sphere(w, o->c, o->radius, o->mask, &o->hits);
        return bp_world_query_point(w, o->c, o->mask, &o->hits);
    case OP_UPDATE:
        return bp_world_update(w, &o->ev);
    }
    return BP_ERR_INVALID_ARG;
}

static void check_query(rig *g, const op *o) {
    bp_proxy_id *want = NULL;
    size_t nw = 0;
    for (size_t k = 0; k < g->m.n; ++k) {
        const mproxy *p = &g->m.p[k];
        if (!p->alive || !(p->cat & o->mask)) continue;
        bool hit = true;
        if (o->what == 1) {
            double d2 = 0.0;
            for (int a = 0; a < g->dim; ++a) {
                const double x = o->c[a], l = p->box[a], u = p->box[g->dim + a];
                const double e = x < l ? l - x : x > u ? x - u : 0.0;
                d2 += e * e;
            }
            hit = d2 <= (double)o->radius * (double)o->radius;
        } else {
            for (int a = 0; a < g->dim; ++a) {
                const float qlo = o->what == 0 ? o->lo[a] : o->c[a], qhi = o->what == 0 ? o->hi[a] : o->c[a];
                hit &= p->box[a] <= qhi && qlo <= p->box[g->dim + a];
            }
        }
        if (!hit) continue;
        want = bpt_xrealloc(want, (nw + 1) * sizeof *want);
        want[nw++] = p->id;
    }
    if (nw > 1) qsort(want, nw, sizeof *want, cmp_id);
    CHECK_MSG(o->hits.count == nw, "query kind %d: %zu hits, the model has %zu", o->what, o->hits.count, nw);
    for (size_t k = 0; k < nw; ++k) {
        CHECK_MSG(bp_proxy_equal(o->hits.ids[k], want[k]), "query kind %d: hit %zu differs", o->what, k);
        CHECK(o->hits.users[k] == model_find(&g->m, want[k])->user);
    }
    free(want);
}

static void op_apply(rig *g, op *o) {
    const int dim = g->dim;
    switch (o->kind) {
    case OP_ADD: {
        const bp_proxy_def d0 = bp_default_proxy_def();
        for (size_t k = 0; k < o->n; ++k) {
            CHECK(!bp_proxy_is_null(o->ids[k]));
            CHECK(model_find(&g->m, o->ids[k]) == NULL);  // never an id handed out before
            model_add(&g->m, o->ids[k], o->boxes + k * (size_t)(2 * dim), o->dflt ? &d0 : &o->defs[k]);
        }
        break;
    }
    case OP_MOVE:
        for (size_t k = 0; k < o->n; ++k)
            memcpy(model_find(&g->m, o->ids[k])->box, o->boxes + k * (size_t)(2 * dim), (size_t)(2 * dim) * sizeof(float));
        break;
    case OP_REMOVE:
        for (size_t k = 0; k < o->n; ++k) model_find(&g->m, o->ids[k])->alive = false;
        break;
    case OP_SET: {
        mproxy *p = model_find(&g->m, o->ids[0]);
        if (o->what == 0) p->kind = (uint32_t)o->def.kind;
        if (o->what == 1) {
            p->cat = o->def.category;
            p->mask = o->def.mask;
        }
        if (o->what == 2) p->user = o->def.user;
        bp_proxy_info info;
        CHECK_OK(bp_world_get_proxy(g->w, p->id, &info));
        CHECK(info.kind == (bp_proxy_kind)p->kind && info.category == p->cat && info.mask == p->mask && info.user == p->user);
        CHECK(memcmp(info.min, p->box, (size_t)dim * sizeof(float)) == 0);
        CHECK(memcmp(info.max, p->box + dim, (size_t)dim * sizeof(float)) == 0);
        break;
    }
    case OP_QUERY:
        check_query(g, o);
        break;
    case OP_UPDATE: {
        model_update(&g->m);
        expect_pairs(&g->m, "begins", &o->ev.begins, &g->m.begins);
        expect_pairs(&g->m, "ends", &o->ev.ends, &g->m.ends);
        bp_world_stats st;
        CHECK_OK(bp_world_get_stats(g->w, &st));
        CHECK_EQ(st.pairs, g->m.pairs.n);
        CHECK_EQ(st.begins, g->m.begins.n);
        CHECK_EQ(st.ends, g->m.ends.n);
        break;
    }
    }
}

static void rig_step(rig *g) {
    op o;
    op_make(g, &o);
    CHECK_OK(op_run(g, &o));
    rig_validate(g);
    op_apply(g, &o);
    if (o.kind == OP_UPDATE && bpt_coin(&g->r, 0.3)) {
        bp_world_pairs all;
        CHECK_OK(bp_world_get_pairs(g->w, &all));
        expect_pairs(&g->m, "pairs", &all, &g->m.pairs);
        rig_validate(g);
    }
    op_free(&o);
}

static void rig_update(rig *g) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_UPDATE;
    CHECK_OK(op_run(g, &o));
    rig_validate(g);
    op_apply(g, &o);
    bp_world_pairs all;
    CHECK_OK(bp_world_get_pairs(g->w, &all));
    expect_pairs(&g->m, "pairs", &all, &g->m.pairs);
}

static void rig_query(rig *g) {
    op o;
    do op_make(g, &o); while (o.kind != OP_QUERY && (op_free(&o), true));
    CHECK_OK(op_run(g, &o));
    op_apply(g, &o);
    op_free(&o);
}

// Adds n random proxies in one batch, to the world and to the model; `kind(k)` gives proxy k's
// kind (NULL: random_def's).
static void rig_add_batch(rig *g, size_t n, bp_proxy_kind (*kind)(size_t k, size_t n)) {
    const int dim = g->dim;
    float *boxes = bpt_xrealloc(NULL, n * 6 * sizeof(float));
    bp_proxy_def *defs = bpt_xrealloc(NULL, n * sizeof *defs);
    bp_proxy_id *ids = bpt_xrealloc(NULL, n * sizeof *ids);
    for (size_t k = 0; k < n; ++k) {
        random_box(g, boxes + k * (size_t)(2 * dim));
        defs[k] = random_def(g);
        if (kind) defs[k].kind = kind(k, n);
    }
    CHECK_OK(dim == 2 ? bp_world_add_batch2(g->w, bpt_as2(boxes), defs, n, ids)
                      : bp_world_add_batch3(g->w, bpt_as3(boxes), defs, n, ids));
    for (size_t k = 0; k < n; ++k) model_add(&g->m, ids[k], boxes + k * (size_t)(2 * dim), &defs[k]);
    free(boxes);
    free(defs);
    free(ids);
}

static int arg_dim(int argc, char **argv) { return argc > 0 ? bpt_dim_arg(argc, argv, 0) : 2; }

static bp_world_mode arg_mode(int argc, char **argv) {
    if (argc < 2) return BP_WORLD_MODE_AUTO;
    if (!strcmp(argv[1], "incremental")) return BP_WORLD_MODE_INCREMENTAL;
    if (!strcmp(argv[1], "rebuild")) return BP_WORLD_MODE_REBUILD;
    CHECK_MSG(!strcmp(argv[1], "auto"), "unknown mode '%s'", argv[1]);
    return BP_WORLD_MODE_AUTO;
}

// A refused batch of `count` adds: the bad entry named, no id written, still `proxies` proxies.
static void expect_refused_adds(bp_world *w, const bp_proxy_id *ids, size_t count, size_t bad, size_t proxies) {
    size_t bi = 0;
    CHECK_OK(bp_world_bad_index(w, &bi));
    CHECK_EQ(bi, bad);
    for (size_t k = 0; k < count; ++k) CHECK(bp_proxy_is_null(ids[k]));
    bp_world_stats st;
    CHECK_OK(bp_world_get_stats(w, &st));
    CHECK_EQ(st.proxies, proxies);
}

// A case's arguments: the dimension and the world's update mode.
typedef struct world_args {
    int dim;
    bp_world_mode mode;
} world_args;

static world_args world_args_of(int argc, char **argv) {
    world_args arg = {arg_dim(argc, argv), BP_WORLD_MODE_AUTO};
    arg.mode = arg_mode(argc, argv);
    return arg;
}

// ---------------------------------------------------------------------------------------------
// Cases

// Thousands of random operations per world; every size class and cell size.
static void case_random(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    static const float cells[4] = {0.0f, 0.01f, 5.0f, 1000.0f};
    for (int trial = 0; trial < 8; ++trial) {
        rig g;
        rig_init(&g, arg.dim, arg.mode, cells[trial % 4], (uint64_t)trial, trial >= 4 ? 30.0 : 100.0, trial % 4);
        for (int op = 0; op < 1000; ++op) {
            bpt_note("trial %d op %d: %zu proxies in the model", trial, op, g.m.n);
            rig_step(&g);
        }
        rig_update(&g);
        rig_free(&g);
    }
}

// Many frames of small moves of a few proxies among many (what the incremental update is for),
// with adds and removes now and then; then everything moves for a few frames (rebuilds), and
// back.
static void case_frames(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    rig g;
    rig_init(&g, arg.dim, arg.mode, 0.0f, 11, arg.dim == 2 ? 60.0 : 20.0, 1);
    rig_add_batch(&g, 600, NULL);
    rig_update(&g);
    for (int f = 0; f < 120; ++f) {
        bpt_note("frames: frame %d", f);
        const bool all = f >= 60 && f < 66;
        if (f % 10 == 3) rig_step(&g);
        size_t moved = 0;
        for (size_t k = 0; k < g.m.n; ++k) {
            mproxy *p = &g.m.p[k];
            if (!p->alive || !(all || bpt_coin(&g.r, 0.02))) continue;
            float b[6];
            moved_box(&g, p->box, b);
            CHECK_OK(arg.dim == 2 ? bp_world_move2(g.w, p->id, bpt_as2(b)) : bp_world_move3(g.w, p->id, bpt_as3(b)));
            memcpy(p->box, b, sizeof b);
            ++moved;
        }
        rig_update(&g);
        bp_world_stats st;
        CHECK_OK(bp_world_get_stats(g.w, &st));
        if (arg.mode == BP_WORLD_MODE_AUTO && moved > 0)
            CHECK_MSG(st.rebuilt == all, "frame %d: %zu moved, rebuilt %d", f, moved, (int)st.rebuilt);
        if (f % 7 == 0) rig_query(&g);
    }
    rig_free(&g);
}

// The docs/scenes.md `static` scene (uniform's draws; object k moves when k % 100 == 0, the others
// are static) and its check values: pairs at frame 0 and pairs / begins / ends at frame 10.
static void case_static_scene(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    const size_t n = 10000;
    const double pi = 3.14159265358979323846;
    const double W = arg.dim == 2 ? sqrt((double)n * pi / 0.05) : cbrt((double)n * (4.0 / 3.0) * pi / 0.05);
    uint64_t s = 1;
    bpt_rng r = {s};
    double *p = bpt_xrealloc(NULL, n * 3 * sizeof(double)), *v = bpt_xrealloc(NULL, n * 3 * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
        for (int a = 0; a < arg.dim; ++a) p[3 * i + (size_t)a] = bpt_uniform(&r, 1, W - 1);
        for (int a = 0; a < arg.dim; ++a) v[3 * i + (size_t)a] = bpt_uniform(&r, -0.5, 0.5);
    }
    bp_world *w = make_world(arg.dim, arg.mode, 0.0f, NULL);
    bp_proxy_id *ids = bpt_xrealloc(NULL, n * sizeof *ids);
    float box[6];
    for (size_t i = 0; i < n; ++i) {
        for (int a = 0; a < arg.dim; ++a) {
            box[a] = (float)(p[3 * i + (size_t)a] - 1.0);
            box[arg.dim + a] = (float)(p[3 * i + (size_t)a] + 1.0);
        }
        bp_proxy_def d = bp_default_proxy_def();
        d.kind = i % 100 == 0 ? BP_PROXY_MOVING : BP_PROXY_STATIC;
        d.user = i;
        CHECK_OK(arg.dim == 2 ? bp_world_add2(w, bpt_as2(box), &d, &ids[i]) : bp_world_add3(w, bpt_as3(box), &d, &ids[i]));
    }
    bp_world_events ev;
    CHECK_OK(bp_world_update(w, &ev));
    bp_world_stats st;
    CHECK_OK(bp_world_get_stats(w, &st));
    const size_t want0 = arg.dim == 2 ? 38 : 80;
    CHECK_EQ(st.pairs, want0);
    CHECK_EQ(ev.begins.count, want0);
    for (int f = 1; f <= 10; ++f) {
        for (size_t i = 0; i < n; i += 100) {
            for (int a = 0; a < arg.dim; ++a) {
                double *pa = &p[3 * i + (size_t)a], *va = &v[3 * i + (size_t)a];
                *pa += *va;
                if (*pa - 1.0 < 0.0) {
                    *pa = 1.0;
                    *va = -*va;
                }
                if (*pa + 1.0 > W) {
                    *pa = W - 1.0;
                    *va = -*va;
                }
                box[a] = (float)(*pa - 1.0);
                box[arg.dim + a] = (float)(*pa + 1.0);
            }
            CHECK_OK(arg.dim == 2 ? bp_world_move2(w, ids[i], bpt_as2(box)) : bp_world_move3(w, ids[i], bpt_as3(box)));
        }
        CHECK_OK(bp_world_update(w, &ev));
        CHECK_OK(bp_world_validate(w));
    }
    CHECK_OK(bp_world_get_stats(w, &st));
    const size_t want[3] = {arg.dim == 2 ? 24u : 74u, arg.dim == 2 ? 3u : 12u, arg.dim == 2 ? 2u : 7u};
    CHECK_EQ(st.pairs, want[0]);
    CHECK_EQ(ev.begins.count, want[1]);
    CHECK_EQ(ev.ends.count, want[2]);
    // Every reported pair has a moving proxy, carried by user values (the object's index).
    bp_world_pairs all;
    CHECK_OK(bp_world_get_pairs(w, &all));
    for (size_t k = 0; k < all.count; ++k) CHECK(all.pairs[k].user_a % 100 == 0 || all.pairs[k].user_b % 100 == 0);
    bp_world_destroy(w);
    free(p);
    free(v);
    free(ids);
}

// Moves to the box a proxy already has change nothing: after a batch moving every proxy to its
// own box (zero written as -0.0 where the box has one), the update looks at no proxy, rebuilds
// nothing (but in REBUILD mode) and reports no event. In one batch, a proxy moved away and back
// ends where it started (looked at: it changed in between), and one moved to its own box and then
// away ends away.
static void case_same_box(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    rig g;
    rig_init(&g, arg.dim, arg.mode, 0.0f, 77, 30.0, 1);
    rig_add_batch(&g, 3000, NULL);
    rig_update(&g);
    const size_t w = (size_t)(2 * arg.dim);
    bp_proxy_id *ids = bpt_xrealloc(NULL, (g.m.n + 4) * sizeof *ids);
    float *boxes = bpt_xrealloc(NULL, (g.m.n + 4) * w * sizeof(float));
    size_t n = 0;
    for (size_t k = 0; k < g.m.n; ++k) {
        if (!g.m.p[k].alive) continue;
        ids[n] = g.m.p[k].id;
        for (size_t a = 0; a < w; ++a) boxes[n * w + a] = g.m.p[k].box[a] == 0.0f ? -0.0f : g.m.p[k].box[a];
        ++n;
    }
    CHECK(n > 100);
    CHECK_OK(arg.dim == 2 ? bp_world_move_batch2(g.w, ids, bpt_as2(boxes), n) : bp_world_move_batch3(g.w, ids, bpt_as3(boxes), n));
    rig_update(&g);
    bp_world_stats st;
    CHECK_OK(bp_world_get_stats(g.w, &st));
    // (REBUILD rebuilds at every update, whatever moved.)
    CHECK_MSG(arg.mode == BP_WORLD_MODE_REBUILD || (st.changed == 0 && !st.rebuilt),
              "moves to the same boxes: %zu proxies looked at, rebuilt %d", st.changed, (int)st.rebuilt);
    CHECK(st.begins == 0 && st.ends == 0 && st.pairs > 0);
    // Away and back; own box then away.
    mproxy *p = &g.m.p[0], *q = &g.m.p[1];
    CHECK(p->alive && q->alive);
    float x[6], y[6];
    moved_box(&g, p->box, x);
    moved_box(&g, q->box, y);
    const bp_proxy_id bid[4] = {p->id, p->id, q->id, q->id};
    memcpy(boxes, x, w * sizeof(float));
    memcpy(boxes + w, p->box, w * sizeof(float));
    memcpy(boxes + 2 * w, q->box, w * sizeof(float));
    memcpy(boxes + 3 * w, y, w * sizeof(float));
    CHECK_OK(arg.dim == 2 ? bp_world_move_batch2(g.w, bid, bpt_as2(boxes), 4) : bp_world_move_batch3(g.w, bid, bpt_as3(boxes), 4));
    memcpy(q->box, y, w * sizeof(float));
    rig_update(&g);  // the pairs and events against the model's
    CHECK_OK(bp_world_get_stats(g.w, &st));
    CHECK_MSG(arg.mode == BP_WORLD_MODE_REBUILD || st.changed == 2, "%zu proxies looked at", st.changed);
    rig_validate(&g);
    free(ids);
    free(boxes);
    rig_free(&g);
}

// Moves one model proxy (and the world's) to `b`.
static void rig_move(rig *g, mproxy *p, const float *b) {
    CHECK_OK(g->dim == 2 ? bp_world_move2(g->w, p->id, bpt_as2(b)) : bp_world_move3(g->w, p->id, bpt_as3(b)));
    memcpy(p->box, b, (size_t)(2 * g->dim) * sizeof(float));
}

static bp_proxy_kind every_tenth_moving(size_t k, size_t n) {
    (void)n;
    return k % 10 == 0 ? BP_PROXY_MOVING : BP_PROXY_STATIC;
}

static bp_proxy_kind last_six_moving(size_t k, size_t n) { return k + 6 >= n ? BP_PROXY_MOVING : BP_PROXY_STATIC; }

// The near pass (docs/world.md): many static proxies and a few moving ones, all of them moved
// every frame, so that their events with the static ones come from their near lists; mixed in,
// everything that must send them back to the cells or make the lists stale: a moving proxy left
// resting for a frame (the cells' path, after the entries left behind catch up), queries (the
// same), a static proxy moved, random operations (adds and removes of either kind, kinds and
// filters changed both ways), teleports and long steps out of the fat boxes, and every size
// class (huge boxes make lists too long to keep).
static void case_near(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    static const float cells[4] = {0.0f, 0.0f, 5.0f, 0.0f};
    for (int trial = 0; trial < 4; ++trial) {
        rig g;
        rig_init(&g, arg.dim, arg.mode, cells[trial], 200 + (uint64_t)trial, arg.dim == 2 ? 60.0 : 25.0, trial == 0 ? 1 : trial);
        rig_add_batch(&g, 800, every_tenth_moving);
        rig_update(&g);
        size_t hits = 0;
        for (int f = 0; f < 200; ++f) {
            bpt_note("near: trial %d frame %d", trial, f);
            const int what = f % 11;
            bool rest = what == 4;  // one moving proxy rests this frame
            for (size_t k = 0; k < g.m.n; ++k) {
                mproxy *p = &g.m.p[k];
                if (!p->alive || p->kind != BP_PROXY_MOVING) continue;
                if (rest) {
                    rest = false;
                    continue;
                }
                float b[6];
                if (bpt_coin(&g.r, 0.9)) {  // a small step: the list holds
                    for (int a = 0; a < arg.dim; ++a) {
                        const double m = bpt_uniform(&g.r, -0.25, 0.25);
                        b[a] = (float)((double)p->box[a] + m);
                        b[arg.dim + a] = (float)((double)p->box[arg.dim + a] + m);
                        if (b[a] > b[arg.dim + a]) b[a] = b[arg.dim + a];
                    }
                } else {
                    moved_box(&g, p->box, b);
                }
                rig_move(&g, p, b);
            }
            if (what == 7) {
                mproxy *p = random_live(&g);
                if (p && p->kind == BP_PROXY_STATIC) {
                    float b[6];
                    moved_box(&g, p->box, b);
                    rig_move(&g, p, b);
                }
            }
            if (what == 9 || what == 10) rig_step(&g);
            if (what == 2) rig_query(&g);
            rig_update(&g);
            bp_world_stats st;
            CHECK_OK(bp_world_get_stats(g.w, &st));
            hits += st.near_hits;
        }
        // The lists were used (in every mode that patches), and every event came out right.
        if (arg.mode != BP_WORLD_MODE_REBUILD && trial != 3) CHECK_MSG(hits > 0, "trial %d: no near list used", trial);
        rig_free(&g);
    }
}

// The entries the near pass leaves behind, then read: a moving proxy removed while its entry is
// behind (the last dense proxy, so that no other proxy takes its place), then a static one moved
// (the cells' path: the entries catch up first), then a query. Found by the Python tests: the
// catch-up placed the removed proxy's dirty bit, past the live proxies.
static void case_lag(int argc, char **argv) {
    rig g;
    rig_init(&g, arg_dim(argc, argv), arg_mode(argc, argv), 0.0f, 300, 20.0, 1);
    rig_add_batch(&g, 60, last_six_moving);  // the movers last in the dense arrays
    rig_update(&g);
    for (int round = 0; round < 6; ++round) {
        for (int f = 0; f < 3; ++f) {  // every mover moves: the near pass, entries left behind
            for (size_t k = 0; k < g.m.n; ++k) {
                mproxy *p = &g.m.p[k];
                if (!p->alive || p->kind != BP_PROXY_MOVING) continue;
                float b[6];
                moved_box(&g, p->box, b);
                rig_move(&g, p, b);
            }
            rig_update(&g);
        }
        // The last live mover goes (the last dense proxy: no renumbering), a static one moves.
        for (size_t k = g.m.n; k-- > 0;) {
            mproxy *p = &g.m.p[k];
            if (!p->alive || p->kind != BP_PROXY_MOVING) continue;
            CHECK_OK(bp_world_remove(g.w, p->id));
            p->alive = false;
            break;
        }
        rig_validate(&g);
        mproxy *s = &g.m.p[(size_t)round];
        float b[6];
        moved_box(&g, s->box, b);
        rig_move(&g, s, b);
        rig_update(&g);
        rig_query(&g);
        rig_validate(&g);
    }
    rig_free(&g);
}

// Every error a user can hit, each a specific status that changes nothing.
static void case_errors(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_world_def def = bp_default_world_def();
    bp_world *w = NULL;
    CHECK_ST(bp_world_create(NULL, &w), BP_ERR_NULL);
    CHECK_ST(bp_world_create(&def, NULL), BP_ERR_NULL);
    def.dimension = 4;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_INVALID_ARG);
    CHECK(w == NULL);
    def = bp_default_world_def();
    def.mode = (bp_world_mode)7;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_INVALID_ARG);
    def = bp_default_world_def();
    def.method = BP_METHOD_COUNT;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_INVALID_ARG);
    def = bp_default_world_def();
    def.cell_size = -1.0f;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_INVALID_ARG);
    def.cell_size = NAN;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_NONFINITE);
    def = bp_default_world_def();
    def.allocator.alloc = bpt_alloc_fn;
    CHECK_ST(bp_world_create(&def, &w), BP_ERR_INVALID_ARG);
    bp_world_destroy(NULL);

    w = make_world(2, BP_WORLD_MODE_AUTO, 0.0f, NULL);
    bp_box2 b = {{0, 0}, {1, 1}}, bad = {{0, 0}, {1, 1}};
    bp_box3 b3 = {{0, 0, 0}, {1, 1, 1}};
    bp_proxy_id id = {1}, a1 = BP_NULL_PROXY;
    size_t bi = 0;
    CHECK_ST(bp_world_add2(NULL, &b, NULL, &id), BP_ERR_NULL);
    CHECK_ST(bp_world_add2(w, NULL, NULL, &id), BP_ERR_NULL);
    CHECK_ST(bp_world_add2(w, &b, NULL, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_add3(w, &b3, NULL, &id), BP_ERR_DIMENSION);
    bad.min[0] = NAN;
    CHECK_ST(bp_world_add2(w, &bad, NULL, &id), BP_ERR_NONFINITE);
    CHECK(bp_proxy_is_null(id));
    bad.min[0] = 2.0f;
    CHECK_ST(bp_world_add2(w, &bad, NULL, &id), BP_ERR_INVERTED_BOX);
    bad.min[0] = 0.0f;
    bad.max[1] = INFINITY;
    CHECK_ST(bp_world_add2(w, &bad, NULL, &id), BP_ERR_NONFINITE);
    bp_proxy_def pd = bp_default_proxy_def();
    pd.kind = (bp_proxy_kind)5;
    CHECK_ST(bp_world_add2(w, &b, &pd, &id), BP_ERR_INVALID_ARG);
    CHECK_OK(bp_world_add2(w, &b, NULL, &a1));
    CHECK(!bp_proxy_is_null(a1));

    // A batch with a bad entry adds nothing, names the entry, leaves the ids null.
    bp_box2 boxes[5] = {b, b, b, b, b};
    bp_proxy_id ids[5];
    boxes[3].max[0] = -1.0f;
    CHECK_ST(bp_world_add_batch2(w, boxes, NULL, 5, ids), BP_ERR_INVERTED_BOX);
    expect_refused_adds(w, ids, 5, 3, 1);
    CHECK_ST(bp_world_add_batch2(w, boxes, NULL, (size_t)BP_MAX_BOXES + 1, ids), BP_ERR_TOO_MANY);
    CHECK_OK(bp_world_add_batch2(w, boxes, NULL, 0, ids));  // nothing: fine
    CHECK_OK(bp_world_bad_index(w, &bi));
    CHECK(bi == SIZE_MAX);
    boxes[3] = b;
    CHECK_OK(bp_world_add_batch2(w, boxes, NULL, 5, ids));

    // Moves: stale and foreign ids, bad boxes, a bad entry in a batch moves nothing.
    bp_box2 far = {{50, 50}, {51, 51}};
    CHECK_ST(bp_world_move2(w, BP_NULL_PROXY, &far), BP_ERR_NULL_PROXY);
    CHECK_ST(bp_world_move2(w, (bp_proxy_id){a1.v + 1}, &far), BP_ERR_STALE);  // a generation never issued
    CHECK_ST(bp_world_move2(w, (bp_proxy_id){a1.v + ((uint64_t)999 << 32)}, &far), BP_ERR_STALE);  // a slot never used
    CHECK_ST(bp_world_move2(w, a1, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_move3(w, a1, &b3), BP_ERR_DIMENSION);
    bad = far;
    bad.max[1] = NAN;
    CHECK_ST(bp_world_move2(w, a1, &bad), BP_ERR_NONFINITE);
    bp_box2 mv[3] = {far, far, far};
    bp_proxy_id mids[3] = {ids[0], ids[1], ids[2]};
    mv[2].min[1] = 60.0f;
    CHECK_ST(bp_world_move_batch2(w, mids, mv, 3), BP_ERR_INVERTED_BOX);
    CHECK_OK(bp_world_bad_index(w, &bi));
    CHECK_EQ(bi, 2);
    bp_proxy_info info;
    CHECK_OK(bp_world_get_proxy(w, ids[0], &info));
    CHECK(info.min[0] == 0.0f);  // unmoved
    mv[2] = far;
    mids[1] = BP_NULL_PROXY;
    CHECK_ST(bp_world_move_batch2(w, mids, mv, 3), BP_ERR_NULL_PROXY);
    CHECK_OK(bp_world_bad_index(w, &bi));
    CHECK_EQ(bi, 1);
    CHECK_ST(bp_world_move_batch2(w, NULL, mv, 3), BP_ERR_NULL);

    // Foreign ids: another world's first id is not ours.
    bp_world *other = make_world(2, BP_WORLD_MODE_AUTO, 0.0f, NULL);
    bp_proxy_id foreign = BP_NULL_PROXY;
    CHECK_OK(bp_world_add2(other, &b, NULL, &foreign));
    CHECK(!bp_proxy_equal(foreign, a1));
    CHECK_ST(bp_world_move2(w, foreign, &far), BP_ERR_STALE);
    CHECK_ST(bp_world_remove(w, foreign), BP_ERR_STALE);
    bp_world_destroy(other);

    // Removes: double remove, a batch with a stale id or one id twice removes nothing.
    CHECK_OK(bp_world_remove(w, ids[4]));
    CHECK_ST(bp_world_remove(w, ids[4]), BP_ERR_STALE);
    CHECK_ST(bp_world_get_proxy(w, ids[4], &info), BP_ERR_STALE);
    CHECK_ST(bp_world_move2(w, ids[4], &far), BP_ERR_STALE);
    CHECK_ST(bp_world_set_user(w, ids[4], 3), BP_ERR_STALE);
    CHECK_ST(bp_world_set_kind(w, ids[4], BP_PROXY_STATIC), BP_ERR_STALE);
    CHECK_ST(bp_world_set_filter(w, ids[4], 1, 1), BP_ERR_STALE);
    bp_proxy_id rm[3] = {ids[0], ids[1], ids[0]};
    CHECK_ST(bp_world_remove_batch(w, rm, 3), BP_ERR_STALE);
    CHECK_OK(bp_world_bad_index(w, &bi));
    CHECK_EQ(bi, 2);
    rm[2] = ids[4];
    CHECK_ST(bp_world_remove_batch(w, rm, 3), BP_ERR_STALE);
    bp_world_stats st;
    CHECK_OK(bp_world_get_stats(w, &st));
    CHECK_EQ(st.proxies, 5);
    CHECK_OK(bp_world_get_proxy(w, ids[0], &info));
    CHECK_ST(bp_world_remove_batch(w, NULL, 2), BP_ERR_NULL);
    CHECK_OK(bp_world_remove_batch(w, NULL, 0));
    CHECK_ST(bp_world_set_kind(w, ids[0], (bp_proxy_kind)2), BP_ERR_INVALID_ARG);
    CHECK_ST(bp_world_get_proxy(w, ids[0], NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_bad_index(w, NULL), BP_ERR_NULL);

    // Queries.
    bp_world_hits h;
    float lo[2] = {0, 0}, hi[2] = {1, 1}, nanv[2] = {NAN, 0};
    CHECK_OK(bp_world_query_box(w, lo, hi, 1, &h));
    CHECK_ST(bp_world_query_box(NULL, lo, hi, 1, &h), BP_ERR_NULL);
    CHECK_ST(bp_world_query_box(w, NULL, hi, 1, &h), BP_ERR_NULL);
    CHECK_ST(bp_world_query_box(w, lo, hi, 1, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_query_box(w, nanv, hi, 1, &h), BP_ERR_NONFINITE);
    float hi2[2] = {-1, 1};
    CHECK_ST(bp_world_query_box(w, lo, hi2, 1, &h), BP_ERR_INVERTED_BOX);
    CHECK_ST(bp_world_query_sphere(w, lo, -1.0f, 1, &h), BP_ERR_NEGATIVE_RADIUS);
    CHECK_ST(bp_world_query_sphere(w, lo, NAN, 1, &h), BP_ERR_NONFINITE);
    CHECK_ST(bp_world_query_sphere(w, NULL, 1.0f, 1, &h), BP_ERR_NULL);
    CHECK_ST(bp_world_query_point(w, nanv, 1, &h), BP_ERR_NONFINITE);
    CHECK_ST(bp_world_query_point(w, NULL, 1, &h), BP_ERR_NULL);
    CHECK_ST(bp_world_update(NULL, NULL), BP_ERR_NULL);
    CHECK_OK(bp_world_update(w, NULL));
    CHECK_ST(bp_world_get_pairs(w, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_get_stats(w, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_debug_draw(w, NULL), BP_ERR_NULL);
    CHECK_ST(bp_world_validate(NULL), BP_ERR_NULL);
    CHECK_OK(bp_world_validate(w));
    // After the update, the removed proxy's slot is reused by the next add, with a new id: the
    // old one stays stale.
    bp_proxy_id again = BP_NULL_PROXY;
    CHECK_OK(bp_world_add2(w, &b, NULL, &again));
    CHECK(again.v >> 32 == ids[4].v >> 32 && !bp_proxy_equal(again, ids[4]));
    CHECK_ST(bp_world_move2(w, ids[4], &far), BP_ERR_STALE);
    CHECK_OK(bp_world_move2(w, again, &far));
    bp_world_destroy(w);
}

// Ids: generations advance on reuse; an id is stale from its removal on.
static void case_ids(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_world *w = make_world(2, BP_WORLD_MODE_AUTO, 0.0f, NULL);
    bp_box2 b = {{0, 0}, {1, 1}};
    bp_proxy_id first = BP_NULL_PROXY, id = BP_NULL_PROXY;
    CHECK_OK(bp_world_add2(w, &b, NULL, &first));
    id = first;
    for (int k = 0; k < 50; ++k) {
        CHECK_OK(bp_world_remove(w, id));
        CHECK_OK(bp_world_update(w, NULL));
        bp_proxy_id next = BP_NULL_PROXY;
        CHECK_OK(bp_world_add2(w, &b, NULL, &next));
        CHECK(next.v >> 32 == first.v >> 32);         // the slot comes back
        CHECK((uint32_t)next.v == (uint32_t)id.v + 1);  // with the next generation
        CHECK_ST(bp_world_set_user(w, id, 1), BP_ERR_STALE);
        id = next;
    }
    bp_world_destroy(w);
}

// A proxy id is a type of its own: an integer is not one (no conversion either way, so a user
// value, a category or a mask cannot be passed for an id: tests/typed_ids.c shows the calls
// that do not compile), and the null id is one.
_Static_assert(_Generic((uint64_t)0, bp_proxy_id: 0, default: 1), "a uint64_t is not a bp_proxy_id");
_Static_assert(_Generic(BP_NULL_PROXY, bp_proxy_id: 1, default: 0), "BP_NULL_PROXY is a bp_proxy_id");
_Static_assert(sizeof(bp_proxy_id) == sizeof(uint64_t), "an id is one uint64_t (bindings read arrays of them)");

// The null id: every entry point that takes an id rejects it with BP_ERR_NULL_PROXY and
// changes nothing (a batch names the entry); a failed add writes it; the helpers agree.
static void case_null_id(int argc, char **argv) {
    (void)argc, (void)argv;
    const bp_proxy_id null = BP_NULL_PROXY, zero = {0};
    CHECK(bp_proxy_is_null(null) && bp_proxy_is_null(zero) && bp_proxy_is_null(bp_proxy_null()));
    CHECK(bp_proxy_equal(null, bp_proxy_null()));
    CHECK(strcmp(bp_status_string(BP_ERR_NULL_PROXY), bp_status_string(BP_ERR_STALE)) != 0);
    for (int dim = 2; dim <= 3; ++dim) {
        bp_world *w = make_world(dim, BP_WORLD_MODE_AUTO, 0.0f, NULL);
        const float box[6] = {0, 0, 0, 1, 1, 1}, far[6] = {5, 5, 5, 6, 6, 6};
        bp_proxy_id ids[3];
        for (int k = 0; k < 3; ++k)
            CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(box), NULL, &ids[k]) : bp_world_add3(w, bpt_as3(box), NULL, &ids[k]));
        CHECK(!bp_proxy_is_null(ids[0]) && !bp_proxy_equal(ids[0], ids[1]));
        CHECK_OK(bp_world_update(w, NULL));
        bp_proxy_info info;
        size_t bi = 0;
        CHECK_ST(dim == 2 ? bp_world_move2(w, null, bpt_as2(far)) : bp_world_move3(w, null, bpt_as3(far)),
                 BP_ERR_NULL_PROXY);
        CHECK_ST(bp_world_remove(w, null), BP_ERR_NULL_PROXY);
        CHECK_ST(bp_world_set_kind(w, null, BP_PROXY_STATIC), BP_ERR_NULL_PROXY);
        CHECK_ST(bp_world_set_filter(w, null, 1, 1), BP_ERR_NULL_PROXY);
        CHECK_ST(bp_world_set_user(w, null, 1), BP_ERR_NULL_PROXY);
        CHECK_ST(bp_world_get_proxy(w, null, &info), BP_ERR_NULL_PROXY);
        // Batches: the null entry is named, nothing changes (the entries before it included).
        const bp_proxy_id batch[3] = {ids[0], null, ids[2]};
        const float boxes[18] = {5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6};
        CHECK_ST(dim == 2 ? bp_world_move_batch2(w, batch, bpt_as2(boxes), 3) : bp_world_move_batch3(w, batch, bpt_as3(boxes), 3),
                 BP_ERR_NULL_PROXY);
        CHECK_OK(bp_world_bad_index(w, &bi));
        CHECK_EQ(bi, 1);
        CHECK_ST(bp_world_remove_batch(w, batch, 3), BP_ERR_NULL_PROXY);
        CHECK_OK(bp_world_bad_index(w, &bi));
        CHECK_EQ(bi, 1);
        CHECK_OK(bp_world_get_proxy(w, ids[0], &info));
        CHECK(info.min[0] == 0.0f);
        bp_world_events ev;
        CHECK_OK(bp_world_update(w, &ev));
        CHECK(ev.begins.count == 0 && ev.ends.count == 0);
        bp_world_stats st;
        CHECK_OK(bp_world_get_stats(w, &st));
        CHECK(st.proxies == 3 && st.pairs == 3);
        // A stale id is still BP_ERR_STALE; a failed add writes the null id.
        CHECK_OK(bp_world_remove(w, ids[2]));
        CHECK_ST(bp_world_set_user(w, ids[2], 1), BP_ERR_STALE);
        bp_proxy_id out = ids[0];
        const float nan_box[6] = {NAN, 0, 0, 1, 1, 1};
        CHECK_ST(dim == 2 ? bp_world_add2(w, bpt_as2(nan_box), NULL, &out) : bp_world_add3(w, bpt_as3(nan_box), NULL, &out),
                 BP_ERR_NONFINITE);
        CHECK(bp_proxy_is_null(out));
        CHECK_OK(bp_world_validate(w));
        bp_world_destroy(w);
    }
}

// Definition structs not made by their default functions are rejected with
// BP_ERR_DEF_NOT_INITIALISED (include/broadphase.h, "Definition structs"): a zeroed world def,
// and a zeroed proxy def in every add (a batch names the entry and adds nothing).
static void case_defs(int argc, char **argv) {
    (void)argc, (void)argv;
    bp_world_def wd;
    bp_world *w = (bp_world *)&wd;
    memset(&wd, 0, sizeof wd);
    CHECK_ST(bp_world_create(&wd, &w), BP_ERR_DEF_NOT_INITIALISED);
    CHECK(w == NULL);
    memset(&wd, 0xff, sizeof wd);
    CHECK_ST(bp_world_create(&wd, &w), BP_ERR_DEF_NOT_INITIALISED);
    const bp_world_def written = {.dimension = 2, .mode = BP_WORLD_MODE_AUTO, .method = BP_METHOD_AUTO};
    CHECK_ST(bp_world_create(&written, &w), BP_ERR_DEF_NOT_INITIALISED);
    wd = bp_default_world_def();
    wd.dimension = 0;
    CHECK_ST(bp_world_create(&wd, &w), BP_ERR_INVALID_ARG);
    CHECK(w == NULL);

    for (int dim = 2; dim <= 3; ++dim) {
        w = make_world(dim, BP_WORLD_MODE_AUTO, 0.0f, NULL);
        const float box[6] = {0, 0, 0, 1, 1, 1};
        float boxes[18];
        for (int k = 0; k < 3; ++k) memcpy(boxes + 2 * dim * k, box, (size_t)(2 * dim) * sizeof(float));
        bp_proxy_def zeroed, good = bp_default_proxy_def();
        memset(&zeroed, 0, sizeof zeroed);
        const bp_proxy_def written_pd = {.kind = BP_PROXY_MOVING, .category = 1, .mask = UINT64_MAX};
        bp_proxy_id id = {1};
        CHECK_ST(dim == 2 ? bp_world_add2(w, bpt_as2(box), &zeroed, &id) : bp_world_add3(w, bpt_as3(box), &zeroed, &id),
                 BP_ERR_DEF_NOT_INITIALISED);
        CHECK(bp_proxy_is_null(id));
        CHECK_ST(dim == 2 ? bp_world_add2(w, bpt_as2(box), &written_pd, &id) : bp_world_add3(w, bpt_as3(box), &written_pd, &id),
                 BP_ERR_DEF_NOT_INITIALISED);
        const bp_proxy_def defs[3] = {good, good, zeroed};
        bp_proxy_id ids[3];
        CHECK_ST(dim == 2 ? bp_world_add_batch2(w, bpt_as2(boxes), defs, 3, ids) : bp_world_add_batch3(w, bpt_as3(boxes), defs, 3, ids),
                 BP_ERR_DEF_NOT_INITIALISED);
        expect_refused_adds(w, ids, 3, 2, 0);
        // The defaults, given or not (NULL), are accepted, and are what the header says.
        CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(box), &good, &id) : bp_world_add3(w, bpt_as3(box), &good, &id));
        CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(box), NULL, &id) : bp_world_add3(w, bpt_as3(box), NULL, &id));
        bp_proxy_info info;
        CHECK_OK(bp_world_get_proxy(w, id, &info));
        CHECK(info.kind == BP_PROXY_MOVING && info.category == 1 && info.mask == UINT64_MAX && info.user == 0);
        CHECK_OK(bp_world_update(w, NULL));
        bp_world_stats st;
        CHECK_OK(bp_world_get_stats(w, &st));
        CHECK(st.proxies == 2 && st.pairs == 1);
        bp_world_destroy(w);
    }
}

// The events do not depend on the order of the calls that led to them.
static void case_order(int argc, char **argv) {
    const int dim = arg_dim(argc, argv);
    bpt_rng r = bpt_rng_make(5);
    const size_t n = 300;
    float *boxes = bpt_xrealloc(NULL, n * 6 * sizeof(float)), *moved = bpt_xrealloc(NULL, n * 6 * sizeof(float));
    for (size_t k = 0; k < n; ++k) {
        double c[3], h[3];
        for (int a = 0; a < dim; ++a) {
            c[a] = bpt_uniform(&r, 0, 40);
            h[a] = bpt_uniform(&r, 0.5, 2);
        }
        bpt_set_box(boxes + k * 6, dim, c, h);
        for (int a = 0; a < dim; ++a) c[a] += bpt_uniform(&r, -2, 2);
        bpt_set_box(moved + k * 6, dim, c, h);
    }
    bp_world_pair *first[2] = {NULL, NULL};
    size_t counts[2] = {0, 0};
    for (int order = 0; order < 3; ++order) {
        bp_world *w = make_world(dim, order == 2 ? BP_WORLD_MODE_REBUILD : BP_WORLD_MODE_INCREMENTAL, 0.0f, NULL);
        bp_proxy_id *ids = bpt_xrealloc(NULL, n * sizeof *ids);
        for (size_t k = 0; k < n; ++k) {
            bp_proxy_def d = bp_default_proxy_def();
            d.user = k;
            CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(boxes + k * 6), &d, &ids[k]) : bp_world_add3(w, bpt_as3(boxes + k * 6), &d, &ids[k]));
        }
        CHECK_OK(bp_world_update(w, NULL));
        // Move one in three, in index order, in reverse, or (rebuild) in a shuffled order.
        for (size_t q = 0; q < n; ++q) {
            size_t k = order == 0 ? q : n - 1 - q;
            if (order == 2) k = (q * 7919) % n;
            if (k % 3) continue;
            CHECK_OK(dim == 2 ? bp_world_move2(w, ids[k], bpt_as2(moved + k * 6)) : bp_world_move3(w, ids[k], bpt_as3(moved + k * 6)));
        }
        bp_world_events ev;
        CHECK_OK(bp_world_update(w, &ev));
        const bp_world_pairs *lists[2] = {&ev.begins, &ev.ends};
        for (int l = 0; l < 2; ++l) {
            if (order == 0) {
                counts[l] = lists[l]->count;
                first[l] = bpt_xrealloc(NULL, (counts[l] + 1) * sizeof **first);
                memcpy(first[l], lists[l]->pairs, counts[l] * sizeof **first);
            } else {
                // Worlds differ in their ids' generations (each its own start): the slots, the
                // user values (the index of the object) and the order must agree.
                CHECK_EQ(lists[l]->count, counts[l]);
                for (size_t q = 0; q < counts[l]; ++q) {
                    const bp_world_pair *x = &first[l][q], *y = &lists[l]->pairs[q];
                    CHECK(x->a.v >> 32 == y->a.v >> 32 && x->b.v >> 32 == y->b.v >> 32);
                    CHECK(x->user_a == y->user_a && x->user_b == y->user_b);
                }
            }
        }
        CHECK(counts[0] > 10 && counts[1] > 10);  // something to compare
        free(ids);
        bp_world_destroy(w);
    }
    free(first[0]);
    free(first[1]);
    free(boxes);
    free(moved);
}

// Allocation refused at every allocation of every kind of call: BP_ERR_NOMEM and the world as
// it was (the model, which the failed call did not touch, keeps agreeing with it: its next
// update's events would show anything half done), or BP_OK with the right answer when the call
// could do without (a fold of the pair log put off); nothing leaked.
static void case_nomem(int argc, char **argv) {
    const world_args arg = world_args_of(argc, argv);
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    rig g;
    rig_start(&g, arg.dim, 77, 30.0, 2);
    bp_world_def def = bp_default_world_def();
    def.dimension = arg.dim;
    def.mode = arg.mode;
    def.allocator = bpt_allocator(&al);
    for (size_t fail = 1;; ++fail) {
        al.fail_at = al.allocs + fail;
        bp_world *w = NULL;
        bp_status st = bp_world_create(&def, &w);
        al.fail_at = 0;
        if (st == BP_OK) {
            g.w = w;
            break;
        }
        CHECK_ST(st, BP_ERR_NOMEM);
        CHECK(w == NULL);
        CHECK_EQ(al.live_blocks, 0);
    }
    size_t refused = 0;
    for (int step = 0; step < 400; ++step) {
        op o;
        op_make(&g, &o);
        for (size_t fail = 1;; ++fail) {
            bpt_note("nomem: step %d (op %d), refusing allocation %zu of the call", step, (int)o.kind, fail);
            al.fail_at = al.allocs + fail;
            const size_t failures = al.failures;
            const bp_status st = op_run(&g, &o);
            al.fail_at = 0;
            CHECK_OK(bp_world_validate(g.w));
            if (st == BP_OK) break;
            CHECK_ST(st, BP_ERR_NOMEM);
            CHECK(al.failures == failures + 1);
            ++refused;
            if (o.kind == OP_ADD)
                for (size_t k = 0; k < o.n; ++k) CHECK(bp_proxy_is_null(o.ids[k]));
            bp_world_stats st2;
            CHECK_OK(bp_world_get_stats(g.w, &st2));
            CHECK_MSG(st2.bytes == al.live_bytes, "stats.bytes %zu != live %zu", st2.bytes, al.live_bytes);
        }
        op_apply(&g, &o);
        op_free(&o);
    }
    CHECK_MSG(refused > 50, "only %zu refusals: the calls allocate less than expected", refused);
    op o;
    memset(&o, 0, sizeof o);
    o.kind = OP_UPDATE;
    CHECK_OK(op_run(&g, &o));
    op_apply(&g, &o);
    rig_free(&g);
    CHECK_MSG(al.live_blocks == 0 && al.live_bytes == 0, "%zu blocks (%zu bytes) leaked", al.live_blocks, al.live_bytes);
}

// A warm world allocates nothing: frames of moves and updates, patched and rebuilt, once the
// first frames have sized everything.
static void case_warm(int argc, char **argv) {
    const int dim = arg_dim(argc, argv);
    bpt_alloc al;
    memset(&al, 0, sizeof al);
    bpt_rng r = bpt_rng_make(9);
    const size_t n = 2000;
    for (int mode = 0; mode < 3; ++mode) {
        bp_world_def def = bp_default_world_def();
        def.dimension = dim;
        def.mode = (bp_world_mode)mode;
        def.allocator = bpt_allocator(&al);
        bp_world *w = NULL;
        CHECK_OK(bp_world_create(&def, &w));
        float *boxes = bpt_xrealloc(NULL, n * 6 * sizeof(float));
        bp_proxy_id *ids = bpt_xrealloc(NULL, n * sizeof *ids);
        for (size_t k = 0; k < n; ++k) {
            double c[3], h[3];
            for (int a = 0; a < dim; ++a) {
                c[a] = bpt_uniform(&r, 0, dim == 2 ? 150 : 40);
                h[a] = 1.0;
            }
            bpt_set_box(boxes + k * 6, dim, c, h);
            CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(boxes + k * 6), NULL, &ids[k]) : bp_world_add3(w, bpt_as3(boxes + k * 6), NULL, &ids[k]));
        }
        for (int f = 0; f < 60; ++f) {
            // Frames 0-29: one proxy in fifty moves (patched under AUTO); 30-59: all of them.
            const size_t every = f < 30 ? 50 : 1;
            if (f == 20 || f == 50) al.allocs = 0;
            for (size_t k = (size_t)f % every; k < n; k += every) {
                float *b = boxes + k * 6;
                const double dx = (f / 5) % 2 ? 0.3 : -0.3;
                for (int a = 0; a < dim; a += 2) {
                    b[a] = (float)((double)b[a] + dx);
                    b[dim + a] = (float)((double)b[dim + a] + dx);
                }
                CHECK_OK(dim == 2 ? bp_world_move2(w, ids[k], bpt_as2(b)) : bp_world_move3(w, ids[k], bpt_as3(b)));
            }
            bp_world_events ev;
            CHECK_OK(bp_world_update(w, &ev));
            if ((f >= 20 && f < 30) || f >= 50)
                CHECK_MSG(al.allocs == 0, "mode %d frame %d: %zu allocations in a warm frame", mode, f, al.allocs);
        }
        bp_world_destroy(w);
        free(boxes);
        free(ids);
        CHECK_EQ(al.live_blocks, 0);
    }
}

// Huge boxes: the work of an update or a query must not grow with a box's extent. Ten boxes
// from y = -27.74 to 1e30 and a point (issue #17's input, here in the world), with the cell
// size fixed small and automatic: the candidate tests stay a few per proxy.
static void case_huge(int argc, char **argv) {
    const int dim = arg_dim(argc, argv);
    static const float cells[3] = {4.25f, 0.0f, 1e-3f};
    for (int c = 0; c < 3; ++c) {
        for (int mode = 0; mode < 3; ++mode) {
            bp_world *w = make_world(dim, (bp_world_mode)mode, cells[c], NULL);
            float b[6] = {-27.75f, -27.74f, 0.0f, 0.0f, 1e30f, 1.0f};
            if (dim == 3) {
                const float b3[6] = {-27.75f, -27.74f, -1.0f, 0.0f, 1e30f, 1.0f};
                memcpy(b, b3, sizeof b);
            }
            bp_proxy_id ids[12];
            for (int k = 0; k < 10; ++k)
                CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(b), NULL, &ids[k]) : bp_world_add3(w, bpt_as3(b), NULL, &ids[k]));
            const float pt[6] = {-27.75f, -27.75f, 0.0f, -27.75f, -27.75f, 0.0f};
            float p2[6];
            for (int a = 0; a < dim; ++a) p2[a] = p2[dim + a] = pt[a];
            CHECK_OK(dim == 2 ? bp_world_add2(w, bpt_as2(p2), NULL, &ids[10]) : bp_world_add3(w, bpt_as3(p2), NULL, &ids[10]));
            bp_world_events ev;
            CHECK_OK(bp_world_update(w, &ev));
            CHECK_EQ(ev.begins.count, 45);  // the ten tall boxes pair; the point lies below them
            for (int f = 0; f < 4; ++f) {
                b[dim + 1] = f % 2 ? 1e30f : 3e38f;
                for (int k = 0; k < 10; k += 3)
                    CHECK_OK(dim == 2 ? bp_world_move2(w, ids[k], bpt_as2(b)) : bp_world_move3(w, ids[k], bpt_as3(b)));
                p2[1] = p2[dim + 1] = f % 2 ? -27.75f : -27.74f;
                CHECK_OK(dim == 2 ? bp_world_move2(w, ids[10], bpt_as2(p2)) : bp_world_move3(w, ids[10], bpt_as3(p2)));
                CHECK_OK(bp_world_update(w, &ev));
                bp_world_stats st;
                CHECK_OK(bp_world_get_stats(w, &st));
                CHECK_EQ(st.pairs, f % 2 ? 45 : 55);  // at y = -27.74 the point touches all ten
                CHECK_MSG(st.checks < 2000, "cell %g mode %d frame %d: %llu checks", (double)cells[c], mode, f,
                          (unsigned long long)st.checks);
                bp_world_hits h;
                float lo[3] = {-1e38f, -1e38f, -1e38f}, hi[3] = {1e38f, 1e38f, 1e38f};
                CHECK_OK(bp_world_query_box(w, lo, hi, UINT64_MAX, &h));
                CHECK_EQ(h.count, 11);
                CHECK_OK(bp_world_validate(w));
            }
            bp_world_destroy(w);
        }
    }
}

// A world large enough for the update to fetch ahead (src/world.c, WORLD_PREFETCH_MIN): its
// events against a rebuilding world's (both checked against the model in the cases above), over
// frames that patch (1% moving), and one that rebuilds (everything moving).
static void case_large(int argc, char **argv) {
    const int dim = arg_dim(argc, argv);
    const size_t n = 280000;
    bpt_rng r = bpt_rng_make(21);
    const double W = dim == 2 ? sqrt((double)n * 3.14159265358979323846 / 0.05) : cbrt((double)n * 4.0 / 3.0 * 3.14159265358979323846 / 0.05);
    float *boxes = bpt_xrealloc(NULL, n * 6 * sizeof(float));
    bp_proxy_def *defs = bpt_xrealloc(NULL, n * sizeof *defs);
    bp_proxy_id *ids[2] = {bpt_xrealloc(NULL, n * sizeof(bp_proxy_id)), bpt_xrealloc(NULL, n * sizeof(bp_proxy_id))};
    for (size_t k = 0; k < n; ++k) {
        double c[3], h[3] = {1, 1, 1};
        for (int a = 0; a < dim; ++a) c[a] = bpt_uniform(&r, 1, W - 1);
        bpt_set_box(boxes + k * (size_t)(2 * dim), dim, c, h);
        defs[k] = bp_default_proxy_def();
        defs[k].kind = k % 100 ? BP_PROXY_STATIC : BP_PROXY_MOVING;
        defs[k].user = k;
    }
    bp_world *w[2] = {make_world(dim, BP_WORLD_MODE_AUTO, 0.0f, NULL), make_world(dim, BP_WORLD_MODE_REBUILD, 0.0f, NULL)};
    for (int q = 0; q < 2; ++q)
        CHECK_OK(dim == 2 ? bp_world_add_batch2(w[q], bpt_as2(boxes), defs, n, ids[q]) : bp_world_add_batch3(w[q], bpt_as3(boxes), defs, n, ids[q]));
    for (int q = 0; q < 2; ++q) CHECK_OK(bp_world_update(w[q], NULL));
    for (int f = 0; f < 4; ++f) {
        const size_t every = f == 2 ? 1 : 100;
        for (size_t k = 0; k < n; k += every) {
            float *b = boxes + k * (size_t)(2 * dim);
            for (int a = 0; a < dim; ++a) {
                const float dx = (float)bpt_uniform(&r, -0.5, 0.5);
                b[a] += dx;
                b[dim + a] += dx;
            }
        }
        bp_world_events ev[2];
        for (int q = 0; q < 2; ++q) {
            for (size_t k = 0; k < n; k += every)
                CHECK_OK(dim == 2 ? bp_world_move2(w[q], ids[q][k], bpt_as2(boxes + k * (size_t)(2 * dim)))
                                  : bp_world_move3(w[q], ids[q][k], bpt_as3(boxes + k * (size_t)(2 * dim))));
            CHECK_OK(bp_world_update(w[q], &ev[q]));
        }
        const bp_world_pairs *l[2][2] = {{&ev[0].begins, &ev[0].ends}, {&ev[1].begins, &ev[1].ends}};
        for (int e = 0; e < 2; ++e) {
            CHECK_EQ(l[0][e]->count, l[1][e]->count);
            for (size_t k = 0; k < l[0][e]->count; ++k)
                CHECK(l[0][e]->pairs[k].user_a == l[1][e]->pairs[k].user_a && l[0][e]->pairs[k].user_b == l[1][e]->pairs[k].user_b);
        }
        if (f == 0 || f == 3) {
            bp_world_stats st;
            CHECK_OK(bp_world_get_stats(w[0], &st));
            CHECK(!st.rebuilt);  // patched, through the code that fetches ahead
        }
    }
    CHECK_OK(bp_world_validate(w[0]));
    for (int q = 0; q < 2; ++q) {
        bp_world_destroy(w[q]);
        free(ids[q]);
    }
    free(boxes);
    free(defs);
}

static const bpt_case cases[] = {
    {"random", case_random}, {"frames", case_frames}, {"static", case_static_scene}, {"errors", case_errors},
    {"ids", case_ids},       {"null_id", case_null_id}, {"defs", case_defs},       {"order", case_order},   {"nomem", case_nomem},           {"warm", case_warm},
    {"huge", case_huge},     {"large", case_large},   {"near", case_near},
    {"lag", case_lag},       {"same_box", case_same_box},
};

BPT_MAIN(cases)
