// Fuzz target: the persistent world. The bytes choose a definition (dimension, mode, cell size,
// method, 2 or 3 workers in one input in 8, on task hooks or the library's threads, an
// allocator that may refuse allocations) and a run of operations: add and remove,
// one at a time and in batches, moves (single, batch, every moving proxy at once: the near
// pass of docs/world.md), kind and filter changes, user values,
// stale and foreign ids, the three region queries, updates. A brute-force world in this file
// follows every successful operation; after every update the begin and end events and the
// pair set are compared with it, pair for pair, and bp_world_validate runs.
#include <math.h>

#include "fuzz.h"

#define FZ_TARGET "fuzz_world"
#define FZ_MAX_PROXIES 96

typedef struct wp {
    bp_proxy_id id;
    bool live;
    float box[6];
    bp_proxy_kind kind;
    uint64_t category, mask, user;
} wp;

typedef struct wpair {
    bp_proxy_id a, b;
} wpair;

typedef struct wmodel {
    int dim;
    wp p[FZ_MAX_PROXIES * 4];  // every proxy ever added (removed ones stay, not live)
    size_t count;
    wpair *last, *now;          // pairs as of the last update, and now
    size_t nlast, nnow;
} wmodel;

FZ_NOCOV static int cmp_pair(const void *x, const void *y) {
    const wpair *a = x, *b = y;
    if (a->a.v != b->a.v) return a->a.v < b->a.v ? -1 : 1;
    return a->b.v < b->b.v ? -1 : a->b.v > b->b.v;
}

// The pair rule of bp_world (include/broadphase.h): closed overlap, not both static, each
// one's category meets the other's mask.
FZ_NOCOV static bool w_pairs(const wmodel *m, const wp *a, const wp *b) {
    if (a->kind == BP_PROXY_STATIC && b->kind == BP_PROXY_STATIC) return false;
    if (!(a->category & b->mask) || !(b->category & a->mask)) return false;
    for (int k = 0; k < m->dim; ++k)
        if (!(a->box[k] <= b->box[m->dim + k] && b->box[k] <= a->box[m->dim + k])) return false;
    return true;
}

FZ_NOCOV static void w_brute(wmodel *m) {
    m->nnow = 0;
    for (size_t i = 0; i < m->count; ++i) {
        if (!m->p[i].live) continue;
        for (size_t j = i + 1; j < m->count; ++j) {
            if (!m->p[j].live || !w_pairs(m, &m->p[i], &m->p[j])) continue;
            bp_proxy_id a = m->p[i].id, b = m->p[j].id;
            m->now[m->nnow].a = a.v < b.v ? a : b;
            m->now[m->nnow].b = a.v < b.v ? b : a;
            m->nnow++;
        }
    }
    if (m->nnow) qsort(m->now, m->nnow, sizeof *m->now, cmp_pair);
}

// The events an update must report: the pairs of `a` not in `b` (both sorted), in order, one
// merge walk (a search per pair took a sixth of the target's time).
FZ_NOCOV static void w_diff(const wpair *a, size_t na, const wpair *b, size_t nb, const bp_world_pair *got,
                            size_t ngot) {
    size_t k = 0, j = 0;
    for (size_t i = 0; i < na; ++i) {
        while (j < nb && cmp_pair(&b[j], &a[i]) < 0) ++j;
        if (j < nb && cmp_pair(&b[j], &a[i]) == 0) continue;
        FZ_CHECK(k < ngot, k, ngot);
        FZ_CHECK(bp_proxy_equal(got[k].a, a[i].a) && bp_proxy_equal(got[k].b, a[i].b), k, i);
        ++k;
    }
    FZ_CHECK(k == ngot, k, ngot);
}

static wp *w_find(wmodel *m, bp_proxy_id id) {
    for (size_t k = 0; k < m->count; ++k)
        if (m->p[k].live && bp_proxy_equal(m->p[k].id, id)) return &m->p[k];
    return NULL;
}

static size_t w_live(const wmodel *m) {
    size_t n = 0;
    for (size_t k = 0; k < m->count; ++k) n += m->p[k].live;
    return n;
}

// An id to act on: mostly a live proxy's, sometimes a removed one's (stale), a made-up one, or
// the null id.
static bp_proxy_id w_pick(wmodel *m, fz *f) {
    const uint8_t b = fz_u8(f);
    if (b >= 240) return b == 255 ? BP_NULL_PROXY : (bp_proxy_id){(uint64_t)fz_u8(f) << 32 | fz_u8(f)};
    if (!m->count) return (bp_proxy_id){12345};
    return m->p[b % m->count].id;
}

// The status for an id that names no live proxy.
static bp_status w_id_err(bp_proxy_id id) { return bp_proxy_is_null(id) ? BP_ERR_NULL_PROXY : BP_ERR_STALE; }

static void w_box(const wmodel *m, fz *f, float *box) {
    const uint8_t how = fz_u8(f);
    for (int a = 0; a < m->dim; ++a) {
        box[a] = fz_coord(f);
        box[m->dim + a] = how >= 250 ? fz_coord(f) : box[a] + fz_extent(f);
    }
}

static bool w_box_ok(const wmodel *m, const float *box, bp_status *want) {
    bool nonfinite = false, inverted = false;
    for (int a = 0; a < m->dim; ++a) {
        if (!isfinite(box[a]) || !isfinite(box[m->dim + a])) nonfinite = true;
        else if (box[a] > box[m->dim + a]) inverted = true;
    }
    *want = nonfinite ? BP_ERR_NONFINITE : inverted ? BP_ERR_INVERTED_BOX : BP_OK;
    return !nonfinite && !inverted;
}

static uint64_t w_bits(fz *f) {
    static const uint64_t v[8] = {1, 2, 3, UINT64_MAX, 0, 1ull << 63, 6, 5};
    return v[fz_u8(f) & 7];
}

FZ_NOCOV static void w_check_hits(wmodel *m, const bp_world_hits *h, int kind, const float *lo, const float *hi,
                         const float *c, float radius, uint64_t mask) {
    // The expected ids, ascending.
    bp_proxy_id want[FZ_MAX_PROXIES * 4];
    size_t n = 0;
    for (size_t k = 0; k < m->count; ++k) {
        const wp *p = &m->p[k];
        if (!p->live || !(p->category & mask)) continue;
        bool hit = true;
        const int d = m->dim;
        if (kind == 0) {
            for (int a = 0; a < d; ++a) hit = hit && p->box[a] <= hi[a] && lo[a] <= p->box[d + a];
        } else if (kind == 2) {
            for (int a = 0; a < d; ++a) hit = hit && p->box[a] <= c[a] && c[a] <= p->box[d + a];
        } else {
            hit = fz_sphere_hit(c, radius, p->box, d);
        }
        if (hit) want[n++] = p->id;
    }
    for (size_t i = 1; i < n; ++i)
        for (size_t j = i; j > 0 && want[j - 1].v > want[j].v; --j) {
            bp_proxy_id t = want[j];
            want[j] = want[j - 1];
            want[j - 1] = t;
        }
    if (h->count != n && getenv("FZ_VERBOSE")) {
        fprintf(stderr, "query kind %d mask %llx lo %a %a hi %a %a c %a %a r %a\n", kind, (unsigned long long)mask,
                lo[0], lo[1], hi[0], hi[1], c[0], c[1], radius);
        for (size_t k = 0; k < m->count; ++k)
            fprintf(stderr, "  %d id %llx box %a %a %a %a cat %llx\n", m->p[k].live, (unsigned long long)m->p[k].id.v,
                    m->p[k].box[0], m->p[k].box[1], m->p[k].box[m->dim], m->p[k].box[m->dim + 1],
                    (unsigned long long)m->p[k].category);
    }
    FZ_CHECK(h->count == n, h->count, n);
    for (size_t k = 0; k < n; ++k) {
        FZ_CHECK(bp_proxy_equal(h->ids[k], want[k]), k, n);
        FZ_CHECK(h->users[k] == w_find(m, want[k])->user, k, n);
    }
}

// The status an operation must return: the expected error, or BP_ERR_NOMEM while the
// allocator refuses (which check comes first is the library's choice).
static bool w_err(bp_status st, bp_status want, const fz_alloc *al) {
    return st == want || (st == BP_ERR_NOMEM && al->fail_at);
}

static wmodel g_m;
static wpair g_last[FZ_MAX_PROXIES * FZ_MAX_PROXIES], g_now[FZ_MAX_PROXIES * FZ_MAX_PROXIES];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f = {data, size};
    wmodel *m = &g_m;
    m->count = m->nlast = m->nnow = 0;
    m->last = g_last;
    m->now = g_now;
    bp_world_def def = bp_default_world_def();
    const uint8_t h0 = fz_u8(&f), h1 = fz_u8(&f);
    def.dimension = 2 + (h0 & 1);
    def.mode = (bp_world_mode)((h0 >> 1) % 3);
    static const float cells[4] = {0.0f, 1e-3f, 1.0f, 4.25f};
    def.cell_size = cells[(h0 >> 3) & 3];
    def.method = (bp_method)((h0 >> 5) % BP_METHOD_COUNT);
    if (((h1 >> 1) & 7) == 7)  // 1 in 8: workers (the fuzz build splits even small updates)
        fz_workers(&f, 2 + ((h1 >> 4) & 1), &def.workers, &def.enqueue_task, &def.finish_task, &def.task_user);
    fz_alloc al = {0, 0, 0, 0, 0};
    if (h1 & 1) {
        al.fail_at = 1 + fz_u8(&f) * 2u;
        al.fail_every = fz_u8(&f) % 16;
    }
    def.allocator = fz_allocator(&al);
    if (!bp_method_available(def.method)) return 0;
    m->dim = def.dimension;
    const int d = m->dim;
    bp_world *w = NULL;
    bp_status st = bp_world_create(&def, &w);
    if (st == BP_ERR_NOMEM) {
        FZ_CHECK(al.blocks == 0, al.blocks, al.bytes);
        return 0;
    }
    FZ_CHECK(st == BP_OK, st, 0);
    for (int step = 0; step < 64 && f.n; ++step) {
        const uint8_t op = fz_u8(&f) % 12;
        switch (op) {
        case 0:
        case 1: {  // add one
            if (m->count >= sizeof m->p / sizeof m->p[0] || w_live(m) >= FZ_MAX_PROXIES) break;
            wp p;
            memset(&p, 0, sizeof p);
            w_box(m, &f, p.box);
            bp_proxy_def pd = bp_default_proxy_def();
            pd.kind = (bp_proxy_kind)(fz_u8(&f) % 3);  // 2: out of range
            pd.category = w_bits(&f);
            pd.mask = w_bits(&f);
            pd.user = fz_u8(&f);
            bp_proxy_id id = {7};
            st = d == 2 ? bp_world_add2(w, (const bp_box2 *)(const void *)p.box, &pd, &id)
                        : bp_world_add3(w, (const bp_box3 *)(const void *)p.box, &pd, &id);
            bp_status want;
            if (!w_box_ok(m, p.box, &want)) FZ_CHECK(w_err(st, want, &al), st, want);
            else if (pd.kind > BP_PROXY_STATIC) FZ_CHECK(w_err(st, BP_ERR_INVALID_ARG, &al), st, pd.kind);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, 0);
            if (st != BP_OK) {
                FZ_CHECK(bp_proxy_is_null(id), id.v, st);
                break;
            }
            FZ_CHECK(!bp_proxy_is_null(id) && w_find(m, id) == NULL, id.v, 0);
            p.id = id;
            p.live = true;
            p.kind = pd.kind;
            p.category = pd.category;
            p.mask = pd.mask;
            p.user = pd.user;
            m->p[m->count++] = p;
            break;
        }
        case 2: {  // add a batch (all or nothing)
            const size_t n = fz_u8(&f) % 9;
            if (m->count + n > sizeof m->p / sizeof m->p[0] || w_live(m) + n > FZ_MAX_PROXIES) break;
            float boxes[8 * 6];
            bp_proxy_def defs[8];
            bp_proxy_id ids[8];
            bool ok = true;
            bp_status want = BP_OK;
            for (size_t k = 0; k < n; ++k) {
                w_box(m, &f, boxes + (size_t)(2 * d) * k);
                defs[k] = bp_default_proxy_def();
                defs[k].kind = (bp_proxy_kind)(fz_u8(&f) & 1);
                defs[k].category = w_bits(&f);
                defs[k].mask = w_bits(&f);
                defs[k].user = k;
                bp_status bs;
                if (ok && !w_box_ok(m, boxes + (size_t)(2 * d) * k, &bs)) {
                    ok = false;
                    want = bs;
                }
            }
            st = d == 2 ? bp_world_add_batch2(w, (const bp_box2 *)(const void *)boxes, defs, n, ids)
                        : bp_world_add_batch3(w, (const bp_box3 *)(const void *)boxes, defs, n, ids);
            if (!ok) FZ_CHECK(w_err(st, want, &al), st, want);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, 0);
            if (st != BP_OK) {
                for (size_t k = 0; k < n; ++k) FZ_CHECK(bp_proxy_is_null(ids[k]), k, st);
                break;
            }
            for (size_t k = 0; k < n; ++k) {
                wp p;
                memset(&p, 0, sizeof p);
                memcpy(p.box, boxes + (size_t)(2 * d) * k, (size_t)(2 * d) * sizeof(float));
                p.id = ids[k];
                p.live = true;
                p.kind = defs[k].kind;
                p.category = defs[k].category;
                p.mask = defs[k].mask;
                p.user = defs[k].user;
                FZ_CHECK(!bp_proxy_is_null(ids[k]) && w_find(m, ids[k]) == NULL, k, ids[k].v);
                m->p[m->count++] = p;
            }
            break;
        }
        case 3:
        case 4: {  // move one
            const bp_proxy_id id = w_pick(m, &f);
            float box[6];
            w_box(m, &f, box);
            st = d == 2 ? bp_world_move2(w, id, (const bp_box2 *)(const void *)box)
                        : bp_world_move3(w, id, (const bp_box3 *)(const void *)box);
            wp *p = w_find(m, id);
            bp_status want;
            if (!p) FZ_CHECK(w_err(st, w_id_err(id), &al), st, id.v);
            else if (!w_box_ok(m, box, &want)) FZ_CHECK(w_err(st, want, &al), st, want);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, 0);
            if (st == BP_OK) memcpy(p->box, box, sizeof box);
            break;
        }
        case 5: {  // move a batch: an id given twice takes its last box
            const size_t n = fz_u8(&f) % 9;
            bp_proxy_id ids[8];
            float boxes[8 * 6];
            bool stale = false, bad = false;
            for (size_t k = 0; k < n; ++k) {
                ids[k] = w_pick(m, &f);
                w_box(m, &f, boxes + (size_t)(2 * d) * k);
                bp_status bs;
                if (!w_find(m, ids[k])) stale = true;
                if (!w_box_ok(m, boxes + (size_t)(2 * d) * k, &bs)) bad = true;
            }
            st = d == 2 ? bp_world_move_batch2(w, ids, (const bp_box2 *)(const void *)boxes, n)
                        : bp_world_move_batch3(w, ids, (const bp_box3 *)(const void *)boxes, n);
            if (stale || bad) FZ_CHECK(st != BP_OK, st, n);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, n);
            if (st == BP_OK)
                for (size_t k = 0; k < n; ++k) memcpy(w_find(m, ids[k])->box, boxes + (size_t)(2 * d) * k,
                                                      (size_t)(2 * d) * sizeof(float));
            break;
        }
        case 6: {  // remove one, or a batch (an id twice fails the batch)
            const size_t n = fz_u8(&f) % 4;
            bp_proxy_id ids[3];
            bp_status want = BP_OK;  // the first bad entry's status
            for (size_t k = 0; k < n; ++k) {
                ids[k] = w_pick(m, &f);
                bool twice = false;
                for (size_t j = 0; j < k; ++j) twice = twice || bp_proxy_equal(ids[j], ids[k]);
                if (want == BP_OK && !w_find(m, ids[k])) want = w_id_err(ids[k]);
                if (want == BP_OK && twice) want = BP_ERR_STALE;
            }
            if (n == 1) st = bp_world_remove(w, ids[0]);
            else st = bp_world_remove_batch(w, ids, n);
            if (want != BP_OK) FZ_CHECK(w_err(st, want, &al), st, n);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, n);
            if (st == BP_OK)
                for (size_t k = 0; k < n; ++k) w_find(m, ids[k])->live = false;
            break;
        }
        case 7: {  // kind, filter or user value
            const bp_proxy_id id = w_pick(m, &f);
            const uint8_t which = fz_u8(&f) % 3;
            wp *p = w_find(m, id);
            if (which == 0) {
                const bp_proxy_kind kind = (bp_proxy_kind)(fz_u8(&f) % 3);
                st = bp_world_set_kind(w, id, kind);
                if (!p) FZ_CHECK(w_err(st, w_id_err(id), &al), st, id.v);
                else if (kind > BP_PROXY_STATIC) FZ_CHECK(w_err(st, BP_ERR_INVALID_ARG, &al), st, kind);
                else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, 0);
                if (st == BP_OK) p->kind = kind;
            } else if (which == 1) {
                const uint64_t cat = w_bits(&f), mask = w_bits(&f);
                st = bp_world_set_filter(w, id, cat, mask);
                if (!p) FZ_CHECK(w_err(st, w_id_err(id), &al), st, id.v);
                else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, 0);
                if (st == BP_OK) {
                    p->category = cat;
                    p->mask = mask;
                }
            } else {
                const uint64_t user = fz_u8(&f);
                st = bp_world_set_user(w, id, user);
                FZ_CHECK(p ? st == BP_OK : w_err(st, w_id_err(id), &al), st, id.v);
                if (st == BP_OK) p->user = user;
            }
            if (p && st == BP_OK) {
                bp_proxy_info info;
                FZ_CHECK(bp_world_get_proxy(w, id, &info) == BP_OK, id.v, 0);
                FZ_CHECK(info.kind == p->kind && info.category == p->category && info.mask == p->mask &&
                             info.user == p->user, id.v, 0);
            }
            break;
        }
        case 8: {  // a region query
            float lo[3], hi[3], c[3];
            for (int a = 0; a < d; ++a) {
                lo[a] = fz_coord(&f);
                hi[a] = lo[a] + fz_extent(&f);
                c[a] = fz_coord(&f);
            }
            const float radius = fz_extent(&f);
            const uint64_t mask = w_bits(&f);
            const int kind = fz_u8(&f) % 3;
            bp_world_hits h;
            st = kind == 0 ? bp_world_query_box(w, lo, hi, mask, &h)
               : kind == 1 ? bp_world_query_sphere(w, c, radius, mask, &h)
                           : bp_world_query_point(w, c, mask, &h);
            bool finite = true;
            for (int a = 0; a < d; ++a)
                finite = finite && isfinite(kind == 0 ? lo[a] : c[a]) && (kind != 0 || isfinite(hi[a]));
            if (!finite || (kind == 1 && !isfinite(radius))) {
                FZ_CHECK(w_err(st, BP_ERR_NONFINITE, &al), st, kind);
                break;
            }
            if (st == BP_ERR_NOMEM) break;
            FZ_CHECK(st == BP_OK, st, kind);
            w_check_hits(m, &h, kind, lo, hi, c, radius, mask);
            break;
        }
        case 9: {  // every live moving proxy steps a little (one batch): the near pass's frame
            bp_proxy_id ids[FZ_MAX_PROXIES * 4];
            float boxes[FZ_MAX_PROXIES * 4 * 6];
            size_t n = 0;
            for (size_t k = 0; k < m->count; ++k) {
                const wp *p = &m->p[k];
                if (!p->live || p->kind != BP_PROXY_MOVING) continue;
                const float step = (float)((int)fz_u8(&f) - 128) * 0x1p-6f;  // -2 .. 2
                float *b = boxes + (size_t)(2 * d) * n;
                for (int a = 0; a < 2 * d; ++a) b[a] = p->box[a] + step;
                ids[n++] = p->id;
            }
            bool ok = true;
            for (size_t k = 0; k < n && ok; ++k) {
                bp_status bs;
                ok = w_box_ok(m, boxes + (size_t)(2 * d) * k, &bs);
            }
            st = d == 2 ? bp_world_move_batch2(w, ids, (const bp_box2 *)(const void *)boxes, n)
                        : bp_world_move_batch3(w, ids, (const bp_box3 *)(const void *)boxes, n);
            if (!ok) FZ_CHECK(st != BP_OK, st, n);
            else FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, n);
            if (st == BP_OK)
                for (size_t k = 0; k < n; ++k) memcpy(w_find(m, ids[k])->box, boxes + (size_t)(2 * d) * k,
                                                      (size_t)(2 * d) * sizeof(float));
            break;
        }
        default: {  // update, compared with the brute-force world
            bp_world_events ev;
            st = bp_world_update(w, &ev);
            if (st == BP_ERR_NOMEM) break;  // the changes are kept for the next update
            FZ_CHECK(st == BP_OK, st, 0);
            w_brute(m);
            w_diff(m->now, m->nnow, m->last, m->nlast, ev.begins.pairs, ev.begins.count);
            w_diff(m->last, m->nlast, m->now, m->nnow, ev.ends.pairs, ev.ends.count);
            memcpy(m->last, m->now, m->nnow * sizeof *m->now);
            m->nlast = m->nnow;
            bp_world_pairs all;
            st = bp_world_get_pairs(w, &all);
            if (st == BP_OK) {
                FZ_CHECK(all.count == m->nnow, all.count, m->nnow);
                for (size_t k = 0; k < all.count; ++k)
                    FZ_CHECK(bp_proxy_equal(all.pairs[k].a, m->now[k].a) && bp_proxy_equal(all.pairs[k].b, m->now[k].b), k,
                             all.count);
            } else {
                FZ_CHECK(st == BP_ERR_NOMEM, st, 0);
            }
            bp_world_stats ws;
            FZ_CHECK(bp_world_get_stats(w, &ws) == BP_OK, 0, 0);
            FZ_CHECK(ws.proxies == w_live(m) && ws.pairs == m->nnow, ws.proxies, ws.pairs);
            FZ_CHECK(ws.bytes == al.bytes, ws.bytes, al.bytes);
            break;
        }
        }
        st = bp_world_validate(w);
        FZ_CHECK(st == BP_OK || st == BP_ERR_NOMEM, st, op);
    }
    bp_world_destroy(w);
    FZ_CHECK(al.blocks == 0 && al.bytes == 0, al.blocks, al.bytes);
    return 0;
}
