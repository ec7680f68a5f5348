// World scripts (world_script.h): the parser and the runner of `broadphase world`. Nothing here
// depends on the rest of the CLI, so a fuzz target can link this file with the library alone.
#include "world_script.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

// ---------------------------------------------------------------------------------------------
// Live ids: the script's id -> the number of the proxy it names now (open addressing, linear
// probing, deletion by backward shift).

typedef struct ws_map {
    uint64_t *keys;
    size_t *vals;
    bool *used;
    size_t cap, count;  // cap: a power of two, kept at least twice count
} ws_map;

static size_t ws_hash(uint64_t k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdu;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static size_t ws_find(const ws_map *m, uint64_t key) {
    size_t at = ws_hash(key, m->cap);
    while (m->used[at] && m->keys[at] != key) at = (at + 1) & (m->cap - 1);
    return at;
}

static void ws_map_free(ws_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static bool ws_map_grow(ws_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    ws_map g = {malloc(cap * sizeof *g.keys), malloc(cap * sizeof *g.vals), calloc(cap, sizeof *g.used), cap, 0};
    if (!g.keys || !g.vals || !g.used) {
        ws_map_free(&g);
        return false;
    }
    for (size_t k = 0; k < m->cap; ++k) {
        if (!m->used[k]) continue;
        size_t at = ws_find(&g, m->keys[k]);
        g.used[at] = true;
        g.keys[at] = m->keys[k];
        g.vals[at] = m->vals[k];
        g.count++;
    }
    ws_map_free(m);
    *m = g;
    return true;
}

static bool ws_map_get(const ws_map *m, uint64_t key, size_t *val) {
    if (!m->cap) return false;
    size_t at = ws_find(m, key);
    if (!m->used[at]) return false;
    *val = m->vals[at];
    return true;
}

// Inserts a key known to be absent. False when out of memory.
static bool ws_map_put(ws_map *m, uint64_t key, size_t val) {
    if (2 * (m->count + 1) > m->cap && !ws_map_grow(m)) return false;
    size_t at = ws_find(m, key);
    m->used[at] = true;
    m->keys[at] = key;
    m->vals[at] = val;
    m->count++;
    return true;
}

static void ws_map_del(ws_map *m, uint64_t key) {
    size_t mask = m->cap - 1, hole = ws_find(m, key), k = hole;
    if (!m->used[hole]) return;
    m->used[hole] = false;
    m->count--;
    for (;;) {
        k = (k + 1) & mask;
        if (!m->used[k]) return;
        size_t home = ws_hash(m->keys[k], m->cap);
        bool between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!between) {
            m->used[hole] = true;
            m->keys[hole] = m->keys[k];
            m->vals[hole] = m->vals[k];
            m->used[k] = false;
            hole = k;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens and values

#define WS_MAX_TOKENS 16

typedef struct ws_tok {
    const char *s;
    size_t len;
} ws_tok;

static bool ws_is_sep(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool ws_tok_is(ws_tok t, const char *word) {
    size_t n = strlen(word);
    return t.len == n && memcmp(t.s, word, n) == 0;
}

// A token shortened for messages.
#define WS_SHOWN(t) (int)((t).len > 40 ? 40 : (t).len), (t).s, ((t).len > 40 ? "..." : "")

// An unsigned 64-bit decimal integer, the whole token.
static bool ws_parse_dec(ws_tok t, uint64_t *out) {
    if (t.len == 0) return false;
    uint64_t v = 0;
    for (size_t k = 0; k < t.len; ++k) {
        char c = t.s[k];
        if (c < '0' || c > '9') return false;
        uint64_t d = (uint64_t)(c - '0');
        if (v > (UINT64_MAX - d) / 10u) return false;
        v = v * 10u + d;
    }
    *out = v;
    return true;
}

// Decimal or 0x-hex, 64 bits.
static bool ws_parse_bits(ws_tok t, uint64_t *out) {
    if (t.len > 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'X')) {
        uint64_t v = 0;
        for (size_t k = 2; k < t.len; ++k) {
            char c = t.s[k];
            unsigned d;
            if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
            else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
            else return false;
            if (v >> 60) return false;  // a fifth nibble past 64 bits
            v = v << 4 | d;
        }
        *out = v;
        return true;
    }
    return ws_parse_dec(t, out);
}

typedef struct ws_parser {
    int dim;
    size_t line;
    FILE *err;
} ws_parser;

#if defined(__GNUC__)
static int ws_bad(const ws_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

static int ws_bad(const ws_parser *p, const char *fmt, ...) {
    if (p->err) {
        va_list ap;
        fprintf(p->err, "broadphase: line %zu: ", p->line);
        va_start(ap, fmt);
        vfprintf(p->err, fmt, ap);
        va_end(ap);
        fputc('\n', p->err);
    }
    return BP_SCRIPT_BAD;
}

// A finite float, read as `broadphase pairs` reads it (strtof on the whole token).
static int ws_float(const ws_parser *p, ws_tok t, float *out) {
    char buf[512];
    if (t.len >= sizeof buf) return ws_bad(p, "'%.*s%s' is not a number (too long)", WS_SHOWN(t));
    memcpy(buf, t.s, t.len);
    buf[t.len] = '\0';
    char *end;
    float f = strtof(buf, &end);
    if (end != buf + t.len || t.len == 0)
        return ws_bad(p, "'%.*s%s' is not a number", WS_SHOWN(t));
    if (isnan(f)) return ws_bad(p, "'%.*s%s' is NaN", WS_SHOWN(t));
    if (!isfinite(f)) return ws_bad(p, "'%.*s%s' is infinite or out of the float range", WS_SHOWN(t));
    *out = f;
    return BP_SCRIPT_OK;
}

static const char *const ws_axes[3] = {"x", "y", "z"};

// A box: dim minima then dim maxima, min <= max on every axis.
static int ws_box(const ws_parser *p, const ws_tok *t, float *v) {
    for (int k = 0; k < 2 * p->dim; ++k) {
        int rc = ws_float(p, t[k], &v[k]);
        if (rc) return rc;
    }
    for (int a = 0; a < p->dim; ++a)
        if (v[a] > v[p->dim + a])
            return ws_bad(p, "min > max on axis %s (%.9g > %.9g)", ws_axes[a], (double)v[a], (double)v[p->dim + a]);
    return BP_SCRIPT_OK;
}

static int ws_id(const ws_parser *p, ws_tok t, uint64_t *id) {
    if (!ws_parse_dec(t, id))
        return ws_bad(p, "'%.*s%s' is not an id (an unsigned 64-bit decimal integer)", WS_SHOWN(t));
    return BP_SCRIPT_OK;
}

// An id that must name a live proxy.
static int ws_live(const ws_parser *p, const ws_map *live, ws_tok t, bp_script_op *op) {
    int rc = ws_id(p, t, &op->id);
    if (rc) return rc;
    if (!ws_map_get(live, op->id, &op->proxy))
        return ws_bad(p, "unknown id %llu (never added, or removed)", (unsigned long long)op->id);
    return BP_SCRIPT_OK;
}

static int ws_bits(const ws_parser *p, ws_tok t, const char *what, uint64_t *v) {
    if (!ws_parse_bits(t, v))
        return ws_bad(p, "'%.*s%s' is not a %s (64 bits, decimal or 0x-hex)", WS_SHOWN(t), what);
    return BP_SCRIPT_OK;
}

static int ws_kind(const ws_parser *p, ws_tok t, bp_proxy_kind *kind) {
    if (ws_tok_is(t, "static")) *kind = BP_PROXY_STATIC;
    else if (ws_tok_is(t, "moving")) *kind = BP_PROXY_MOVING;
    else return ws_bad(p, "'%.*s%s' is not a kind (static or moving)", WS_SHOWN(t));
    return BP_SCRIPT_OK;
}

// The layout of each operation, for messages; %s is the box or point for the dimension.
static const char *ws_layout(bp_script_opcode op, int dim) {
    static const char *const layout[][2] = {
        [BP_SCRIPT_ADD] = {"add ID static|moving CATEGORY MASK MINX MINY MAXX MAXY",
                           "add ID static|moving CATEGORY MASK MINX MINY MINZ MAXX MAXY MAXZ"},
        [BP_SCRIPT_MOVE] = {"move ID MINX MINY MAXX MAXY", "move ID MINX MINY MINZ MAXX MAXY MAXZ"},
        [BP_SCRIPT_REMOVE] = {"remove ID", "remove ID"},
        [BP_SCRIPT_FILTER] = {"filter ID CATEGORY MASK", "filter ID CATEGORY MASK"},
        [BP_SCRIPT_KIND] = {"kind ID static|moving", "kind ID static|moving"},
        [BP_SCRIPT_UPDATE] = {"update", "update"},
        [BP_SCRIPT_QUERY_BOX] = {"query box MINX MINY MAXX MAXY MASK", "query box MINX MINY MINZ MAXX MAXY MAXZ MASK"},
        [BP_SCRIPT_QUERY_SPHERE] = {"query sphere X Y R MASK", "query sphere X Y Z R MASK"},
        [BP_SCRIPT_QUERY_POINT] = {"query point X Y MASK", "query point X Y Z MASK"},
    };
    if ((unsigned)op >= sizeof layout / sizeof layout[0]) return "?";
    return layout[op][dim != 2];
}

// Fields of each operation, its name (and the query's shape) included.
static size_t ws_fields(bp_script_opcode op, int dim) {
    size_t d = (size_t)dim;
    switch (op) {
    case BP_SCRIPT_ADD: return 5 + 2 * d;
    case BP_SCRIPT_MOVE: return 2 + 2 * d;
    case BP_SCRIPT_REMOVE: return 2;
    case BP_SCRIPT_FILTER: return 4;
    case BP_SCRIPT_KIND: return 3;
    case BP_SCRIPT_UPDATE: return 1;
    case BP_SCRIPT_QUERY_BOX: return 3 + 2 * d;
    case BP_SCRIPT_QUERY_SPHERE: return 4 + d;
    case BP_SCRIPT_QUERY_POINT: return 3 + d;
    }
    return 0;
}

// Parses one line's tokens (n of them, t[0] the operation) into *op, updating the live ids.
static int ws_line(ws_parser *p, const ws_tok *t, size_t n, ws_map *live, size_t max_live, size_t *proxies,
                   bp_script_op *op) {
    memset(op, 0, sizeof *op);
    op->line = p->line;
    if (ws_tok_is(t[0], "add")) op->op = BP_SCRIPT_ADD;
    else if (ws_tok_is(t[0], "move")) op->op = BP_SCRIPT_MOVE;
    else if (ws_tok_is(t[0], "remove")) op->op = BP_SCRIPT_REMOVE;
    else if (ws_tok_is(t[0], "filter")) op->op = BP_SCRIPT_FILTER;
    else if (ws_tok_is(t[0], "kind")) op->op = BP_SCRIPT_KIND;
    else if (ws_tok_is(t[0], "update")) op->op = BP_SCRIPT_UPDATE;
    else if (ws_tok_is(t[0], "query")) {
        if (n < 2) return ws_bad(p, "query needs a shape: box, sphere or point");
        if (ws_tok_is(t[1], "box")) op->op = BP_SCRIPT_QUERY_BOX;
        else if (ws_tok_is(t[1], "sphere")) op->op = BP_SCRIPT_QUERY_SPHERE;
        else if (ws_tok_is(t[1], "point")) op->op = BP_SCRIPT_QUERY_POINT;
        else return ws_bad(p, "unknown query shape '%.*s%s' (box, sphere or point)", WS_SHOWN(t[1]));
    } else {
        return ws_bad(p, "unknown operation '%.*s%s' (add, move, remove, filter, kind, update, query)",
                      WS_SHOWN(t[0]));
    }
    size_t want = ws_fields(op->op, p->dim);
    if (n != want)
        return ws_bad(p, "too %s fields: %zu, expected %zu (%s)", n < want ? "few" : "many", n, want,
                      ws_layout(op->op, p->dim));
    const int d = p->dim;
    int rc = BP_SCRIPT_OK;
    switch (op->op) {
    case BP_SCRIPT_ADD: {
        size_t ignored;
        if ((rc = ws_id(p, t[1], &op->id)) || (rc = ws_kind(p, t[2], &op->kind)) ||
            (rc = ws_bits(p, t[3], "category", &op->category)) || (rc = ws_bits(p, t[4], "mask", &op->mask)) ||
            (rc = ws_box(p, t + 5, op->v)))
            return rc;
        if (ws_map_get(live, op->id, &ignored))
            return ws_bad(p, "id %llu is live already (added and not removed)", (unsigned long long)op->id);
        if (live->count >= max_live) return ws_bad(p, "more than %zu live proxies", max_live);
        op->proxy = (*proxies)++;
        if (!ws_map_put(live, op->id, op->proxy)) return BP_SCRIPT_FAIL;
        return BP_SCRIPT_OK;
    }
    case BP_SCRIPT_MOVE:
        if ((rc = ws_live(p, live, t[1], op))) return rc;
        return ws_box(p, t + 2, op->v);
    case BP_SCRIPT_REMOVE:
        if ((rc = ws_live(p, live, t[1], op))) return rc;
        ws_map_del(live, op->id);
        return BP_SCRIPT_OK;
    case BP_SCRIPT_FILTER:
        if ((rc = ws_live(p, live, t[1], op))) return rc;
        if ((rc = ws_bits(p, t[2], "category", &op->category))) return rc;
        return ws_bits(p, t[3], "mask", &op->mask);
    case BP_SCRIPT_KIND:
        if ((rc = ws_live(p, live, t[1], op))) return rc;
        return ws_kind(p, t[2], &op->kind);
    case BP_SCRIPT_UPDATE:
        return BP_SCRIPT_OK;
    case BP_SCRIPT_QUERY_BOX:
        if ((rc = ws_box(p, t + 2, op->v))) return rc;
        return ws_bits(p, t[2 + 2 * d], "mask", &op->mask);
    case BP_SCRIPT_QUERY_SPHERE:
        for (int k = 0; k <= d; ++k)
            if ((rc = ws_float(p, t[2 + k], &op->v[k]))) return rc;
        if (op->v[d] < 0.0f) return ws_bad(p, "negative radius %.9g", (double)op->v[d]);
        return ws_bits(p, t[3 + d], "mask", &op->mask);
    case BP_SCRIPT_QUERY_POINT:
        for (int k = 0; k < d; ++k)
            if ((rc = ws_float(p, t[2 + k], &op->v[k]))) return rc;
        return ws_bits(p, t[2 + d], "mask", &op->mask);
    }
    return rc;
}

int bp_script_parse(const char *text, size_t len, int dim, size_t max_live, bp_script *out, FILE *err) {
    memset(out, 0, sizeof *out);
    out->dim = dim;
    ws_parser p = {dim, 0, err};
    if (dim != 2 && dim != 3) return ws_bad(&p, "the dimension must be 2 or 3");
    if (!text && len) return BP_SCRIPT_FAIL;
    ws_map live = {0};
    int rc = BP_SCRIPT_OK;
    const char *at = text, *end = text + len;
    while (at < end && rc == BP_SCRIPT_OK) {
        ++p.line;
        const char *eol = memchr(at, '\n', (size_t)(end - at));
        if (!eol) eol = end;
        const char *stop = memchr(at, '#', (size_t)(eol - at));
        if (!stop) stop = eol;
        ws_tok t[WS_MAX_TOKENS];
        size_t n = 0;
        for (const char *q = at;;) {
            while (q < stop && ws_is_sep(*q)) ++q;
            if (q >= stop) break;
            const char *s = q;
            while (q < stop && !ws_is_sep(*q)) ++q;
            if (n < WS_MAX_TOKENS) t[n] = (ws_tok){s, (size_t)(q - s)};
            ++n;  // counted past the array, so "too many fields" is still exact
        }
        at = eol + 1;
        if (n == 0) continue;
        if (out->count == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 256;
            bp_script_op *ops = realloc(out->ops, cap * sizeof *ops);
            if (!ops) {
                rc = BP_SCRIPT_FAIL;
                break;
            }
            out->ops = ops;
            out->cap = cap;
        }
        // Past WS_MAX_TOKENS fields only the count is kept: no operation has that many, so
        // ws_line reports the count before it reads a field.
        rc = ws_line(&p, t, n, &live, max_live, &out->proxies, &out->ops[out->count]);
        if (rc == BP_SCRIPT_OK) out->count++;
    }
    if (rc == BP_SCRIPT_FAIL && err) fprintf(err, "broadphase: out of memory reading the script\n");
    ws_map_free(&live);
    return rc;
}

void bp_script_free(bp_script *script) {
    if (!script) return;
    free(script->ops);
    script->ops = NULL;
    script->count = script->cap = 0;
}

// ---------------------------------------------------------------------------------------------
// Running

// Buffered output with hand-rolled integer formatting (millions of lines cost little).
typedef struct ws_out {
    FILE *file;
    char buf[1 << 16];
    size_t len;
    bool failed;
} ws_out;

static void ws_flush(ws_out *o) {
    if (o->len && fwrite(o->buf, 1, o->len, o->file) != o->len) o->failed = true;
    o->len = 0;
}

static void ws_text(ws_out *o, const char *s) {
    size_t n = strlen(s);
    if (sizeof o->buf - o->len < n) ws_flush(o);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void ws_u64(ws_out *o, uint64_t v, char before) {
    if (sizeof o->buf - o->len < 24) ws_flush(o);
    o->buf[o->len] = before;
    o->len = (size_t)(bp_decimal(o->buf + o->len + 1, v) - o->buf);
}

typedef struct ws_pair {
    uint64_t a, b;
} ws_pair;

static int ws_cmp_pair(const void *x, const void *y) {
    const ws_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

static int ws_cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

typedef struct ws_run {
    ws_out out;
    ws_pair *pairs;
    size_t pairs_cap;
    uint64_t *hits;
    size_t hits_cap;
} ws_run;

static bool ws_reserve(void **arr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = need + need / 2 + 16;
    void *p = realloc(*arr, c * size);
    if (!p) return false;
    *arr = p;
    *cap = c;
    return true;
}

// One group of events ("begin" or "end"): the user values are the script ids.
static bool ws_events(ws_run *r, const bp_world_pairs *ev, const char *word) {
    void *arr = r->pairs;
    if (!ws_reserve(&arr, &r->pairs_cap, ev->count, sizeof(ws_pair))) return false;
    r->pairs = arr;
    for (size_t k = 0; k < ev->count; ++k) {
        uint64_t a = ev->pairs[k].user_a, b = ev->pairs[k].user_b;
        r->pairs[k] = a < b ? (ws_pair){a, b} : (ws_pair){b, a};
    }
    if (ev->count > 1) qsort(r->pairs, ev->count, sizeof *r->pairs, ws_cmp_pair);
    for (size_t k = 0; k < ev->count; ++k) {
        ws_text(&r->out, word);
        ws_u64(&r->out, r->pairs[k].a, ' ');
        ws_u64(&r->out, r->pairs[k].b, ' ');
        ws_text(&r->out, "\n");
    }
    return true;
}

static bool ws_hits(ws_run *r, const bp_world_hits *hits) {
    void *arr = r->hits;
    if (!ws_reserve(&arr, &r->hits_cap, hits->count, sizeof(uint64_t))) return false;
    r->hits = arr;
    if (hits->count) memcpy(r->hits, hits->users, hits->count * sizeof *r->hits);  // users may be NULL when empty
    if (hits->count > 1) qsort(r->hits, hits->count, sizeof *r->hits, ws_cmp_u64);
    ws_text(&r->out, "query");
    for (size_t k = 0; k < hits->count; ++k) ws_u64(&r->out, r->hits[k], ' ');
    ws_text(&r->out, "\n");
    return true;
}

static const char *const ws_names[] = {
    [BP_SCRIPT_ADD] = "add",       [BP_SCRIPT_MOVE] = "move",          [BP_SCRIPT_REMOVE] = "remove",
    [BP_SCRIPT_FILTER] = "filter", [BP_SCRIPT_KIND] = "kind",          [BP_SCRIPT_UPDATE] = "update",
    [BP_SCRIPT_QUERY_BOX] = "query box", [BP_SCRIPT_QUERY_SPHERE] = "query sphere",
    [BP_SCRIPT_QUERY_POINT] = "query point",
};

int bp_script_run(const bp_script *script, const bp_world_def *def, FILE *out, FILE *err) {
    if (!script || !def || !out || def->dimension != script->dim) return BP_SCRIPT_FAIL;
    bp_world *world;
    bp_status st = bp_world_create(def, &world);
    if (st != BP_OK) {
        if (err) fprintf(err, "broadphase: cannot create a world: %s\n", bp_status_string(st));
        return BP_SCRIPT_FAIL;
    }
    ws_run *r = calloc(1, sizeof *r);
    bp_proxy_id *ids = malloc((script->proxies ? script->proxies : 1) * sizeof *ids);
    if (!r || !ids) {
        if (err) fprintf(err, "broadphase: out of memory\n");
        free(r);
        free(ids);
        bp_world_destroy(world);
        return BP_SCRIPT_FAIL;
    }
    r->out.file = out;
    const bool two = script->dim == 2;
    int rc = BP_SCRIPT_OK;
    for (size_t k = 0; k < script->count && rc == BP_SCRIPT_OK; ++k) {
        const bp_script_op *op = &script->ops[k];
        // The floats have the bp_box2 / bp_box3 layout.
        const void *box = op->v;
        bp_world_hits hits;
        bool oom = false;
        switch (op->op) {
        case BP_SCRIPT_ADD: {
            bp_proxy_def pd = bp_default_proxy_def();
            pd.kind = op->kind;
            pd.category = op->category;
            pd.mask = op->mask;
            pd.user = op->id;
            st = two ? bp_world_add2(world, box, &pd, &ids[op->proxy]) : bp_world_add3(world, box, &pd, &ids[op->proxy]);
            break;
        }
        case BP_SCRIPT_MOVE:
            st = two ? bp_world_move2(world, ids[op->proxy], box) : bp_world_move3(world, ids[op->proxy], box);
            break;
        case BP_SCRIPT_REMOVE:
            st = bp_world_remove(world, ids[op->proxy]);
            break;
        case BP_SCRIPT_FILTER:
            st = bp_world_set_filter(world, ids[op->proxy], op->category, op->mask);
            break;
        case BP_SCRIPT_KIND:
            st = bp_world_set_kind(world, ids[op->proxy], op->kind);
            break;
        case BP_SCRIPT_UPDATE: {
            bp_world_events ev;
            bp_world_stats stats;
            st = bp_world_update(world, &ev);
            if (st == BP_OK) {
                oom = !ws_events(r, &ev.begins, "begin") || !ws_events(r, &ev.ends, "end");
                st = bp_world_get_stats(world, &stats);
            }
            if (st == BP_OK && !oom) {
                ws_text(&r->out, "pairs");
                ws_u64(&r->out, stats.pairs, ' ');
                ws_text(&r->out, "\n");
            }
            break;
        }
        case BP_SCRIPT_QUERY_BOX:
            st = bp_world_query_box(world, op->v, op->v + script->dim, op->mask, &hits);
            if (st == BP_OK) oom = !ws_hits(r, &hits);
            break;
        case BP_SCRIPT_QUERY_SPHERE:
            st = bp_world_query_sphere(world, op->v, op->v[script->dim], op->mask, &hits);
            if (st == BP_OK) oom = !ws_hits(r, &hits);
            break;
        case BP_SCRIPT_QUERY_POINT:
            st = bp_world_query_point(world, op->v, op->mask, &hits);
            if (st == BP_OK) oom = !ws_hits(r, &hits);
            break;
        }
        if (oom) st = BP_ERR_NOMEM;
        if (st != BP_OK) {
            if (err) fprintf(err, "broadphase: line %zu: %s: %s\n", op->line, ws_names[op->op], bp_status_string(st));
            rc = BP_SCRIPT_FAIL;
        }
        if (r->out.failed) rc = BP_SCRIPT_FAIL;
    }
    ws_flush(&r->out);
    if (r->out.failed && err) fprintf(err, "broadphase: error writing the output\n");
    if (r->out.failed) rc = BP_SCRIPT_FAIL;
    free(r->pairs);
    free(r->hits);
    free(r);
    free(ids);
    bp_world_destroy(world);
    return rc;
}
