// `broadphase world` scripts (tools/world_script.c) against the reference world
// (bench/world_ref.c). A seeded generator writes a random script (adds, moves, removes, kind and
// filter changes, updates, box/sphere/point queries; ids reused after removal, ids near 2^64,
// decimal and hex masks, tabs, comments, CRLF) and, as it goes, the output the script must
// produce, computed by the reference world and by scanning the live proxies.
//
//   test_world_script run DIM MODE        parse + run in process, compare with the expected text
//   test_world_script gen DIM SCRIPT WANT  write a script and its expected output (for the CLI test)
//   test_world_script errors              every bad-line case: BP_SCRIPT_BAD and the right line
//
// Cases as in tests/harness.h. The seed comes from $SEED (default 20260113) and is printed on failure.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "scene.h"
#include "world_ref.h"
#include "world_script.h"

// A growable text buffer.
typedef struct text {
    char *s;
    size_t len, cap;
} text;

#if defined(__GNUC__)
static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

static void put(text *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if (t->s && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s) abort();
        t->s = s;
        t->cap = cap;
    }
}

typedef struct live {
    uint64_t id, serial, cat, mask;
    bool stat;
    float box[6];
} live;

typedef struct gen {
    int dim;
    uint64_t rng;
    text script, want;
    bp_wref *ref;
    live *obj;
    size_t nobj, cap;
    uint64_t *serial_id;  // serial -> script id
    size_t serials, serial_cap;
    uint64_t *removed;    // ids removed, to be reused
    size_t nremoved;
} gen;

static uint64_t rnd(gen *g, uint64_t n) {
    return bp_scene_next(&g->rng) % n;
}

// Coordinates are multiples of 1/4 below 64: every sum and square the tests need is exact.
static float coord(gen *g) {
    return (float)rnd(g, 240) / 4.0f;
}

static void rand_box(gen *g, float *box) {
    for (int a = 0; a < g->dim; ++a) {
        float lo = coord(g), ext = (float)rnd(g, rnd(g, 10) == 0 ? 64 : 16) / 4.0f;
        box[a] = lo;
        box[g->dim + a] = lo + ext;
    }
}

// A float written one of several ways that strtof reads back exactly.
static void put_float(gen *g, float v) {
    switch (rnd(g, 4)) {
    case 0: put(&g->script, "%.2f", (double)v); break;
    case 1: put(&g->script, "%ge0", (double)v); break;
    case 2: put(&g->script, "%.0fe-2", (double)v * 100.0); break;
    default: put(&g->script, "%g", (double)v); break;
    }
}

static void put_bits(gen *g, uint64_t v) {
    if (rnd(g, 2)) put(&g->script, "0x%" PRIx64, v);
    else put(&g->script, "%" PRIu64, v);
}

static void sep(gen *g) {
    put(&g->script, rnd(g, 5) == 0 ? "\t" : (rnd(g, 4) == 0 ? "  " : " "));
}

static void eol(gen *g) {
    uint64_t r = rnd(g, 20);
    if (r == 0) put(&g->script, "  # a comment\n");
    else if (r == 1) put(&g->script, "\r\n");
    else put(&g->script, "\n");
    if (rnd(g, 30) == 0) put(&g->script, rnd(g, 2) ? "\n" : "# a comment line\n");
}

static void put_box(gen *g, const float *box) {
    for (int k = 0; k < 2 * g->dim; ++k) {
        sep(g);
        put_float(g, box[k]);
    }
}

// An operation's word, the object's id and its kind, as `add` and `kind` both begin.
static void put_kind(gen *g, const char *word, const live *o) {
    put(&g->script, "%s", word);
    sep(g);
    put(&g->script, "%" PRIu64, o->id);
    sep(g);
    put(&g->script, "%s", o->stat ? "static" : "moving");
}

// A small set of category bits, so filters both pass and fail.
static uint64_t rand_bits(gen *g) {
    static const uint64_t pool[] = {1, 2, 3, 4, 6, UINT64_MAX, 0x8000000000000000u, 0};
    return pool[rnd(g, rnd(g, 3) == 0 ? 8 : 6)];
}

static uint64_t fresh_id(gen *g) {
    if (g->nremoved && rnd(g, 3) == 0) {
        size_t k = (size_t)rnd(g, g->nremoved);
        uint64_t id = g->removed[k];
        g->removed[k] = g->removed[--g->nremoved];
        return id;
    }
    for (;;) {
        uint64_t r = rnd(g, 4), id;
        if (r == 0) id = UINT64_MAX - rnd(g, 1000);
        else if (r == 1) id = rnd(g, 50);
        else id = bp_scene_next(&g->rng);
        bool used = false;
        for (size_t k = 0; k < g->nobj && !used; ++k) used = g->obj[k].id == id;
        for (size_t k = 0; k < g->nremoved && !used; ++k) used = g->removed[k] == id;
        if (!used) return id;
    }
}

static void op_add(gen *g) {
    if (g->nobj == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->obj = realloc(g->obj, g->cap * sizeof *g->obj);
        if (!g->obj) abort();
    }
    if (g->serials == g->serial_cap) {
        g->serial_cap = g->serial_cap ? 2 * g->serial_cap : 64;
        g->serial_id = realloc(g->serial_id, g->serial_cap * sizeof *g->serial_id);
        if (!g->serial_id) abort();
    }
    live *o = &g->obj[g->nobj++];
    o->id = fresh_id(g);
    o->serial = g->serials;
    g->serial_id[g->serials++] = o->id;
    o->stat = rnd(g, 3) == 0;
    o->cat = rand_bits(g);
    o->mask = rand_bits(g);
    rand_box(g, o->box);
    put_kind(g, "add", o);
    sep(g);
    put_bits(g, o->cat);
    sep(g);
    put_bits(g, o->mask);
    put_box(g, o->box);
    eol(g);
    if (bp_wref_add(g->ref, o->serial, o->box, o->stat, o->cat, o->mask) != 0) abort();
}

static void op_remove(gen *g, size_t k) {
    live *o = &g->obj[k];
    put(&g->script, "remove");
    sep(g);
    put(&g->script, "%" PRIu64, o->id);
    eol(g);
    if (bp_wref_remove(g->ref, o->serial) != 0) abort();
    g->removed = realloc(g->removed, (g->nremoved + 1) * sizeof *g->removed);
    if (!g->removed) abort();
    g->removed[g->nremoved++] = o->id;
    *o = g->obj[--g->nobj];
}

static void op_move(gen *g, size_t k) {
    live *o = &g->obj[k];
    if (rnd(g, 3) == 0) {
        rand_box(g, o->box);
    } else {
        // A small step: pairs begin and end near the boundary, touching often.
        for (int a = 0; a < g->dim; ++a) {
            float dv = (float)((int)rnd(g, 9) - 4) / 4.0f;
            o->box[a] += dv;
            o->box[g->dim + a] += dv;
        }
    }
    put(&g->script, "move");
    sep(g);
    put(&g->script, "%" PRIu64, o->id);
    put_box(g, o->box);
    eol(g);
    if (bp_wref_move(g->ref, o->serial, o->box) != 0) abort();
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void want_events(gen *g, const bp_wref_pair *ev, size_t n, const char *word) {
    bp_wref_pair *p = malloc((n + 1) * sizeof *p);
    if (!p) abort();
    for (size_t k = 0; k < n; ++k) {
        uint64_t a = g->serial_id[ev[k].a], b = g->serial_id[ev[k].b];
        p[k] = a < b ? (bp_wref_pair){a, b} : (bp_wref_pair){b, a};
    }
    bp_wref_sort(p, n);
    for (size_t k = 0; k < n; ++k) put(&g->want, "%s %" PRIu64 " %" PRIu64 "\n", word, p[k].a, p[k].b);
    free(p);
}

static void op_update(gen *g) {
    put(&g->script, "update");
    eol(g);
    if (bp_wref_update(g->ref) != 0) abort();
    size_t nb, ne, np;
    const bp_wref_pair *b = bp_wref_begins(g->ref, &nb), *e = bp_wref_ends(g->ref, &ne);
    bp_wref_pairs(g->ref, &np);
    want_events(g, b, nb, "begin");
    want_events(g, e, ne, "end");
    put(&g->want, "pairs %zu\n", np);
}

// Box-to-point squared distance in double (exact for these coordinates).
static double dist2(const live *o, const float *c, int dim) {
    double s = 0.0;
    for (int a = 0; a < dim; ++a) {
        double x = c[a], d = 0.0;
        if (x < o->box[a]) d = (double)o->box[a] - x;
        else if (x > o->box[dim + a]) d = x - (double)o->box[dim + a];
        s += d * d;
    }
    return s;
}

static void op_query(gen *g) {
    int d = g->dim, shape = (int)rnd(g, 3);
    float q[6], r = 0.0f;
    uint64_t mask = rand_bits(g);
    if (shape == 0) {
        rand_box(g, q);
        put(&g->script, "query");
        sep(g);
        put(&g->script, "box");
        put_box(g, q);
    } else {
        for (int a = 0; a < d; ++a) q[a] = coord(g);
        put(&g->script, "query");
        sep(g);
        put(&g->script, shape == 1 ? "sphere" : "point");
        for (int a = 0; a < d; ++a) {
            sep(g);
            put_float(g, q[a]);
        }
        if (shape == 1) {
            r = (float)rnd(g, 40) / 4.0f;
            sep(g);
            put_float(g, r);
        }
    }
    sep(g);
    put_bits(g, mask);
    eol(g);
    uint64_t *hits = malloc((g->nobj + 1) * sizeof *hits);
    if (!hits) abort();
    size_t n = 0;
    for (size_t k = 0; k < g->nobj; ++k) {
        const live *o = &g->obj[k];
        if (!(o->cat & mask)) continue;
        bool hit;
        if (shape == 0) {
            hit = true;
            for (int a = 0; a < d; ++a) hit = hit && o->box[a] <= q[d + a] && q[a] <= o->box[d + a];
        } else {
            hit = dist2(o, q, d) <= (double)r * (double)r;
        }
        if (hit) hits[n++] = o->id;
    }
    qsort(hits, n, sizeof *hits, cmp_u64);
    put(&g->want, "query");
    for (size_t k = 0; k < n; ++k) put(&g->want, " %" PRIu64, hits[k]);
    put(&g->want, "\n");
    free(hits);
}

// A random script of about `ops` operations and its expected output.
static void generate(gen *g, int dim, size_t ops) {
    memset(g, 0, sizeof *g);
    g->dim = dim;
    g->rng = bpt_seed;
    g->ref = bp_wref_create(dim);
    if (!g->ref) abort();
    put(&g->script, "# generated by test_world_script, seed %" PRIu64 "\n", bpt_seed);
    g->want.s = calloc(1, 1);
    g->want.cap = 1;
    for (size_t k = 0; k < ops; ++k) {
        uint64_t r = rnd(g, 100);
        if (g->nobj < 4 || r < 22) {
            op_add(g);
        } else if (r < 32) {
            op_remove(g, (size_t)rnd(g, g->nobj));
        } else if (r < 62) {
            op_move(g, (size_t)rnd(g, g->nobj));
        } else if (r < 67) {
            live *o = &g->obj[rnd(g, g->nobj)];
            o->stat = !o->stat;
            put_kind(g, "kind", o);
            eol(g);
            bp_wref_set_kind(g->ref, o->serial, o->stat);
        } else if (r < 72) {
            live *o = &g->obj[rnd(g, g->nobj)];
            o->cat = rand_bits(g);
            o->mask = rand_bits(g);
            put(&g->script, "filter");
            sep(g);
            put(&g->script, "%" PRIu64, o->id);
            sep(g);
            put_bits(g, o->cat);
            sep(g);
            put_bits(g, o->mask);
            eol(g);
            bp_wref_set_filter(g->ref, o->serial, o->cat, o->mask);
        } else if (r < 88) {
            op_update(g);
        } else {
            op_query(g);
        }
        // Keep the world around a few hundred proxies: removals catch up with adds.
        while (g->nobj > 300) op_remove(g, (size_t)rnd(g, g->nobj));
    }
    op_update(g);
}

static void gen_free(gen *g) {
    free(g->script.s);
    free(g->want.s);
    free(g->obj);
    free(g->serial_id);
    free(g->removed);
    bp_wref_destroy(g->ref);
}

// The generated scripts, trial by trial (each from the next seed, which a failure prints).
static void case_run(int argc, char **argv) {
    CHECK_MSG(argc == 2, "usage: test_world_script run DIM MODE");
    const int dim = atoi(argv[0]);
    const char *mode = argv[1];
    bp_world_def def = bp_default_world_def();
    def.dimension = dim;
    if (strcmp(mode, "incremental") == 0) def.mode = BP_WORLD_MODE_INCREMENTAL;
    else if (strcmp(mode, "rebuild") == 0) def.mode = BP_WORLD_MODE_REBUILD;
    else CHECK_MSG(strcmp(mode, "auto") == 0, "unknown mode '%s'", mode);
    for (int trial = 0; trial < 4; ++trial) {
        bpt_note("trial %d", trial);
        gen g;
        generate(&g, dim, 2500);
        bp_script s;
        CHECK_MSG(bp_script_parse(g.script.s, g.script.len, dim, BP_MAX_BOXES, &s, stderr) == BP_SCRIPT_OK,
                  "the generated script does not parse");
        FILE *out = tmpfile();
        CHECK_MSG(out != NULL, "tmpfile");
        CHECK_MSG(bp_script_run(&s, &def, out, stderr) == BP_SCRIPT_OK, "run failed");
        long len = ftell(out);
        char *got = malloc((size_t)len + 1);
        rewind(out);
        CHECK_MSG(got && fread(got, 1, (size_t)len, out) == (size_t)len, "reading the output back");
        got[len] = '\0';
        fclose(out);
        if ((size_t)len != g.want.len || memcmp(got, g.want.s, g.want.len) != 0) {
            size_t k = 0, line = 1;
            while (k < (size_t)len && k < g.want.len && got[k] == g.want.s[k]) line += got[k++] == '\n';
            bpt_fail(__FILE__, __LINE__, "output differs from the reference at output line %zu", line);
        }
        printf("trial %d: %zu operations, %zu output bytes equal to the reference\n", trial, s.count, g.want.len);
        free(got);
        bp_script_free(&s);
        gen_free(&g);
        bpt_seed = bpt_seed * 6364136223846793005u + 1442695040888963407u;
    }
}

static int write_file(const char *path, const text *t) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(t->s, 1, t->len, f);
    return fclose(f) == 0 && w == t->len ? 0 : -1;
}

// Bad lines: the script, the line the message must name and what it must say. B is a box.
typedef struct bad_case {
    const char *name, *script;
    size_t line;
    const char *message;  // what the message must say
} bad_case;

static const bad_case bad_cases[] = {
    {"unknown operation", "add 1 moving 1 1 B\nfrob 1\n", 2, "unknown operation 'frob'"},
    {"unknown query shape", "query cone 1 2 3\n", 1, "unknown query shape 'cone'"},
    {"query without shape", "update\nquery\n", 2, "needs a shape"},
    {"too few fields", "add 1 moving 1 1 0 0\n", 1, "too few fields: 7, expected 11"},
    {"too many fields", "add 1 moving 1 1 B 7\n", 1, "too many fields: 12, expected 11"},
    {"many many fields", "update 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n", 1, "too many fields: 21, expected 1"},
    {"bad id", "add x1 moving 1 1 B\n", 1, "'x1' is not an id"},
    {"negative id", "add -1 moving 1 1 B\n", 1, "'-1' is not an id"},
    {"id overflow", "add 18446744073709551616 moving 1 1 B\n", 1, "is not an id"},
    {"duplicate id", "add 5 moving 1 1 B\nadd 5 static 1 1 B\n", 2, "id 5 is live already"},
    {"unknown id move", "add 5 moving 1 1 B\nmove 6 B\n", 2, "unknown id 6"},
    {"unknown id remove", "remove 0\n", 1, "unknown id 0"},
    {"double remove", "add 5 moving 1 1 B\nremove 5\nremove 5\n", 3, "unknown id 5"},
    {"unknown id filter", "filter 3 1 1\n", 1, "unknown id 3"},
    {"unknown id kind", "kind 3 static\n", 1, "unknown id 3"},
    {"removed id moved", "add 5 moving 1 1 B\nupdate\nremove 5\nmove 5 B\n", 4, "unknown id 5"},
    {"bad kind", "add 1 dynamic 1 1 B\n", 1, "'dynamic' is not a kind"},
    {"bad kind change", "add 1 moving 1 1 B\nkind 1 Static\n", 2, "'Static' is not a kind"},
    {"bad category", "add 1 moving one 1 B\n", 1, "'one' is not a category"},
    {"bad mask hex", "add 1 moving 1 0xfg B\n", 1, "'0xfg' is not a mask"},
    {"mask overflow", "add 1 moving 1 0x10000000000000000 B\n", 1, "is not a mask"},
    {"bad number", "add 1 moving 1 1 B\nmove 1 0 0 0 1 1 x\n", 2, "'x' is not a number"},
    {"nan", "add 1 moving 1 1 0 nan 1 1 1 1\n", 1, "'nan' is NaN"},
    {"inf", "add 1 moving 1 1 0 0 0 inf 1 1\n", 1, "'inf' is infinite"},
    {"float overflow", "add 1 moving 1 1 0 0 0 1e39 1 1\n", 1, "'1e39' is infinite"},
    {"trailing garbage", "add 1 moving 1 1 0 0 0 1x 1 1\n", 1, "'1x' is not a number"},
    {"inverted box", "# comment\n\nadd 1 moving 1 1 0 2 0 1 1 1\n", 3, "min > max on axis y"},
    {"inverted move", "add 1 moving 1 1 B\nmove 1 5 0 0 4 1 1\n", 2, "min > max on axis x"},
    {"inverted query", "query box 3 0 0 1 1 1 1\n", 1, "min > max on axis x"},
    {"negative radius", "query sphere 0 0 0 -1 1\n", 1, "negative radius -1"},
    {"query bad mask", "query point 0 0 0 m\n", 1, "'m' is not a mask"},
};

// The case's script with B replaced by a 3D box.
static void bad_script(const char *in, text *t) {
    for (const char *c = in; *c; ++c) {
        if (*c == 'B' && (c == in || c[-1] == ' ')) put(t, "0 0 0 1 1 1");
        else put(t, "%c", *c);
    }
}

static void case_errors(int argc, char **argv) {
    (void)argc, (void)argv;
    // The bad-line cases are written for 3D (`world_cli_test.sh bad` runs them in 2D too).
    for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; ++c) {
        text t = {0};
        bad_script(bad_cases[c].script, &t);
        FILE *err = tmpfile();
        CHECK_MSG(err != NULL, "tmpfile");
        bp_script s;
        int prc = bp_script_parse(t.s, t.len, 3, BP_MAX_BOXES, &s, err);
        bp_script_free(&s);
        long len = ftell(err);
        char msg[512] = {0};
        rewind(err);
        size_t got = fread(msg, 1, sizeof msg - 1, err);
        msg[got] = '\0';
        fclose(err);
        char want[64];
        snprintf(want, sizeof want, "broadphase: line %zu: ", bad_cases[c].line);
        printf("%-22s -> %s", bad_cases[c].name, msg);
        CHECK_MSG(prc == BP_SCRIPT_BAD && len > 0 && strncmp(msg, want, strlen(want)) == 0 &&
                      strstr(msg, bad_cases[c].message),
                  "case '%s': status %d, message '%s', expected '%s...'", bad_cases[c].name, prc, msg, want);
        // Every prefix of a bad script parses or fails cleanly (no read past the length).
        for (size_t cut = 0; cut < t.len; ++cut) {
            char *copy = malloc(cut ? cut : 1);
            if (!copy) abort();
            memcpy(copy, t.s, cut);
            bp_script_parse(copy, cut, 3, BP_MAX_BOXES, &s, NULL);
            bp_script_free(&s);
            free(copy);
        }
        free(t.s);
    }
    // The live-proxy limit.
    bp_script s;
    const char *three = "add 1 moving 1 1 0 0 0 1 1 1\nadd 2 moving 1 1 0 0 0 1 1 1\nremove 1\n"
                        "add 3 moving 1 1 0 0 0 1 1 1\nadd 4 moving 1 1 0 0 0 1 1 1\n";
    int prc = bp_script_parse(three, strlen(three), 3, 2, &s, NULL);
    CHECK_MSG(prc == BP_SCRIPT_BAD && s.count == 4, "the live-proxy limit (3 live at line 5)");
    bp_script_free(&s);
}

// A script and its expected output, written to files for tests/world_cli_test.sh.
static void case_gen(int argc, char **argv) {
    CHECK_MSG(argc == 3, "usage: test_world_script gen DIM SCRIPT WANT");
    gen g;
    generate(&g, atoi(argv[0]), 3000);
    CHECK_MSG(write_file(argv[1], &g.script) == 0 && write_file(argv[2], &g.want) == 0, "cannot write the files");
    gen_free(&g);
}

static const bpt_case cases[] = {{"run", case_run}, {"gen", case_gen}, {"errors", case_errors}};

BPT_MAIN_SEED(cases, 20260113)
