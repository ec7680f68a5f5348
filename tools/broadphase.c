// The `broadphase` command-line tool: `pairs` (every overlapping pair of boxes or circles read
// from a file), `query` (boxes hit by a box, circle or point) and `bench` (the docs/scenes.md
// benchmark, in bench.c). Bad input never reaches the library: it is reported with its line
// number before anything is written to stdout.
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/exact.h"  // exact expansions (header-only, shared with the library)
#include "cli.h"
#include "input.h"

// ---------------------------------------------------------------------------------------------
// Output and options

#define BP_OUT_BUFFER ((size_t)1 << 20)

bool bp_out_open(bp_out *o, FILE *file) {
    o->file = file;
    o->len = 0;
    o->cap = BP_OUT_BUFFER;
    o->failed = false;
    o->buf = malloc(o->cap);
    return o->buf != NULL;
}

void bp_out_flush(bp_out *o) {
    if (o->len && fwrite(o->buf, 1, o->len, o->file) != o->len) o->failed = true;
    o->len = 0;
}

bool bp_out_close(bp_out *o) {
    bp_out_flush(o);
    if (fflush(o->file) != 0) o->failed = true;
    free(o->buf);
    o->buf = NULL;
    return !o->failed;
}

bool bp_arg_is(bp_args *a, const char *name) {
    const char *s = a->argv[a->k];
    size_t len = strlen(name);
    if (strncmp(s, name, len) != 0) return false;
    if (s[len] == '\0') {
        a->inline_value = NULL;
        return true;
    }
    if (s[len] == '=') {
        a->inline_value = s + len + 1;
        return true;
    }
    return false;
}

const char *bp_arg_value(bp_args *a, const char *name) {
    if (a->inline_value) return a->inline_value;
    if (a->k + 1 >= a->argc) {
        fprintf(stderr, "broadphase: option %s needs a value\n", name);
        return NULL;
    }
    return a->argv[++a->k];
}

bool bp_parse_u64(const char *s, uint64_t *out) {
    if (!s || *s < '0' || *s > '9') return false;
    uint64_t v = 0;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9') return false;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10u) return false;
        v = v * 10u + d;
    }
    *out = v;
    return true;
}

bool bp_parse_dim(const char *s, int *dim) {
    if (strcmp(s, "2") == 0) *dim = 2;
    else if (strcmp(s, "3") == 0) *dim = 3;
    else {
        fprintf(stderr, "broadphase: --dim must be 2 or 3, not '%s'\n", s);
        return false;
    }
    return true;
}

bool bp_cli_method(const char *name, bp_method *m) {
    if (bp_method_from_name(name, m) != BP_OK) {
        fprintf(stderr, "broadphase: unknown method '%s' (brute, sweep, grid, quadtree, rdc, auto)\n", name);
        return false;
    }
    if (!bp_method_available(*m)) {
        fprintf(stderr, "broadphase: method '%s' is not available in this build\n", name);
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Input: boxes or circles, one per line (tools/input.c)

// Test hook: lowers the box limit so the "too many boxes" error can be tested without 2^30
// lines. It can only lower BP_MAX_BOXES, never raise it.
static size_t bp_box_limit(void) {
    const char *s = getenv("BROADPHASE_MAX_BOXES");
    uint64_t v;
    if (s && bp_parse_u64(s, &v) && v < BP_MAX_BOXES) return (size_t)v;
    return BP_MAX_BOXES;
}

// Loads FILE (or stdin) into `in`. Returns 0 or the exit status (message printed).
static int bp_load(const char *path, bp_input *in) {
    char *text;
    size_t len;
    if (!bp_input_read(path, &text, &len, stderr)) return BP_EXIT_USAGE;
    int rc = bp_input_parse(text, len, bp_box_limit(), in, stderr);  // BP_INPUT_* are exit statuses
    free(text);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Exact circle / sphere test

// Whether the circles (spheres) c1 = (centre, r) and c2 touch or overlap: |p1 - p2| <= r1 + r2,
// decided exactly for the parsed doubles. A double evaluation with an error bound settles
// almost every case; the rest are summed exactly as (r1 + r2)^2 - sum (a_k - b_k)^2 expanded
// into products. Exact unless a product underflows (values below ~1e-150), far outside any
// float-box input that has a use.
static bool bp_circles_touch(const double *c1, const double *c2, size_t dim) {
    double s = c1[dim] + c2[dim];
    double ss = s * s, dd = 0.0;
    for (size_t a = 0; a < dim; ++a) {
        double d = c1[a] - c2[a];
        dd += d * d;
    }
    double det = ss - dd;
    // Each rounded step has relative error 2^-53; a handful of steps stay far below 1e-14.
    double bound = 1e-14 * (ss + dd);
    if (fabs(det) > bound && ss + dd > 1e-200) return det > 0.0;
    double e[64];
    size_t m = 0;
    const double r1 = c1[dim], r2 = c2[dim];
    m = bp_add_product(e, m, r1, r1);
    m = bp_add_product(e, m, r2, r2);
    m = bp_add_product(e, m, 2.0 * r1, r2);
    for (size_t a = 0; a < dim; ++a) {
        m = bp_add_product(e, m, -c1[a], c1[a]);
        m = bp_add_product(e, m, -c2[a], c2[a]);
        m = bp_add_product(e, m, 2.0 * c1[a], c2[a]);
    }
    return m == 0 || e[m - 1] > 0.0;
}

// ---------------------------------------------------------------------------------------------
// pairs

static const char bp_usage_pairs[] =
    "usage: broadphase pairs [--method NAME] [--dim 2|3] [--circles] [--threads T] [--unsorted]\n"
    "                        [FILE|-]\n"
    "\n"
    "Prints every overlapping pair of the boxes in FILE (default: stdin), one 'i j' per line,\n"
    "i < j, sorted by i then j. Boxes are numbered from 0 in the order of their lines.\n"
    "\n"
    "Input: one box per line, 'minx miny maxx maxy' (2D) or 'minx miny minz maxx maxy maxz' (3D),\n"
    "values separated by spaces, tabs or commas; '#' starts a comment; blank lines are skipped.\n"
    "Boxes are closed: touching boxes overlap.\n"
    "\n"
    "  --method NAME  brute, sweep, grid, quadtree, rdc or auto (default auto)\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --circles      lines are 'x y r' (2D) or 'x y z r' (3D); a pair is printed when the circles\n"
    "                 (spheres) overlap or touch, decided exactly from the values as read\n"
    "  --threads T    workers, the calling thread included (default 1); the output is the same\n"
    "                 for any T (inputs under 32,768 boxes stay on one thread anyway)\n"
    "  --unsorted     print pairs as they are found, in the method's order (each pair once,\n"
    "                 i < j): memory stays bounded however many pairs there are\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 success, 1 library error, 2 bad input (the message names the line) or usage.\n";

static bool bp_help_asked(int argc, char **argv) {
    for (int k = 2; k < argc; ++k) {
        if (strcmp(argv[k], "--") == 0) return false;
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) return true;
    }
    return false;
}

static int bp_unknown_option(const char *cmd, const char *opt) {
    fprintf(stderr, "broadphase %s: unknown option '%s' (see 'broadphase %s --help')\n", cmd, opt, cmd);
    return BP_EXIT_USAGE;
}

// An option handler of bp_parse_command: the option at a->k. Returns BP_EXIT_OK, or the exit
// status (message printed).
typedef int bp_option_fn(bp_args *a, void *user);

// The arguments of `pairs` and `query`: options (to `option`), and at most one input file
// (*path; "-" is stdin); after "--" every argument is a file. Returns BP_EXIT_OK or the exit status.
static int bp_parse_command(int argc, char **argv, const char *cmd, bp_option_fn *option, void *user,
                            const char **path) {
    bool only_files = false;
    bp_args a = {argc, argv, 2, NULL};
    for (; a.k < argc; ++a.k) {
        const char *s = argv[a.k];
        if (!only_files && strcmp(s, "--") == 0) {
            only_files = true;
            continue;
        }
        if (!only_files && s[0] == '-' && s[1] != '\0') {
            int rc = option(&a, user);
            if (rc != BP_EXIT_OK) return rc;
            continue;
        }
        if (*path) {
            fprintf(stderr, "broadphase %s: more than one input file ('%s', '%s')\n", cmd, *path, s);
            return BP_EXIT_USAGE;
        }
        *path = s;
    }
    return BP_EXIT_OK;
}

// stdout through a bp_out; false (message printed) when out of memory.
static bool bp_out_stdout(bp_out *out) {
    if (bp_out_open(out, stdout)) return true;
    fprintf(stderr, "broadphase: out of memory\n");
    return false;
}

// Closes bp_out_stdout's writer: BP_EXIT_OK, or BP_EXIT_FAIL (message printed) when a write failed.
static int bp_out_finish(bp_out *out) {
    if (bp_out_close(out)) return BP_EXIT_OK;
    fprintf(stderr, "broadphase: error writing the output\n");
    return BP_EXIT_FAIL;
}

static bp_context *bp_pairs_context(const bp_input *in, bp_method method, bool sorted, int workers) {
    bp_context_def def = bp_default_context_def();
    def.dimension = in->dim;
    def.method = method;
    def.sort_pairs = sorted;
    def.workers = workers;
    bp_context *ctx;
    bp_status st = bp_context_create(&def, &ctx);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase: cannot create a context: %s\n", bp_status_string(st));
        return NULL;
    }
    return ctx;
}

// Runs the broad phase on the loaded input; *ctx_out is the context (caller destroys).
static int bp_run_pairs(const bp_input *in, bp_method method, bool sorted, int workers, bp_context **ctx_out,
                        bp_pairs *out) {
    bp_context *ctx = bp_pairs_context(in, method, sorted, workers);
    if (!ctx) return BP_EXIT_FAIL;
    bp_status st;
    // The floats were stored with exactly the bp_box2/bp_box3 layout (min[dim], max[dim]).
    const void *boxes = in->boxes;
    if (in->dim == 2) st = bp_find_pairs2(ctx, boxes, in->n, out);
    else st = bp_find_pairs3(ctx, boxes, in->n, out);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase: finding pairs failed: %s\n", bp_status_string(st));
        bp_context_destroy(ctx);
        return BP_EXIT_FAIL;
    }
    *ctx_out = ctx;
    return BP_EXIT_OK;
}

// --unsorted: each batch the library hands over is written at once, so memory holds one batch
// and the output buffer, never the pair set (20,000 identical boxes are 200 million pairs).
typedef struct bp_stream {
    bp_out *out;
    const bp_input *in;
} bp_stream;

static bool bp_stream_pairs(const bp_pair *pairs, size_t count, void *user) {
    bp_stream *s = user;
    size_t dim = (size_t)s->in->dim, per = dim + 1;
    for (size_t k = 0; k < count; ++k) {
        bp_pair pr = pairs[k];
        if (s->in->circles && !bp_circles_touch(s->in->circles_v + pr.i * per, s->in->circles_v + pr.j * per, dim))
            continue;
        bp_out_u32(s->out, pr.i, ' ');
        bp_out_u32(s->out, pr.j, '\n');
    }
    return !s->out->failed;  // a closed pipe or a full disk stops the search
}

static int bp_pairs_unsorted(const bp_input *in, bp_method method, int workers) {
    bp_context *ctx = bp_pairs_context(in, method, false, workers);
    if (!ctx) return BP_EXIT_FAIL;
    bp_out out;
    if (!bp_out_open(&out, stdout)) {
        fprintf(stderr, "broadphase: out of memory\n");
        bp_context_destroy(ctx);
        return BP_EXIT_FAIL;
    }
    bp_stream s = {&out, in};
    bp_status st;
    if (in->dim == 2) st = bp_find_pairs2_cb(ctx, (const void *)in->boxes, in->n, bp_stream_pairs, &s);
    else st = bp_find_pairs3_cb(ctx, (const void *)in->boxes, in->n, bp_stream_pairs, &s);
    bool ok = bp_out_close(&out);
    bp_context_destroy(ctx);
    if (st != BP_OK && st != BP_ERR_STOPPED) {
        fprintf(stderr, "broadphase: finding pairs failed: %s\n", bp_status_string(st));
        return BP_EXIT_FAIL;
    }
    if (!ok || st == BP_ERR_STOPPED) {
        fprintf(stderr, "broadphase: error writing the output\n");
        return BP_EXIT_FAIL;
    }
    return BP_EXIT_OK;
}

typedef struct bp_pairs_args {
    bp_input *in;  // dim and circles
    bp_method method;
    int workers;
    bool unsorted;
} bp_pairs_args;

static int bp_pairs_option(bp_args *a, void *user) {
    bp_pairs_args *p = user;
    const char *s = a->argv[a->k], *v;
    if (bp_arg_is(a, "--method")) {
        if (!(v = bp_arg_value(a, "--method")) || !bp_cli_method(v, &p->method)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--dim")) {
        if (!(v = bp_arg_value(a, "--dim")) || !bp_parse_dim(v, &p->in->dim)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--threads")) {
        uint64_t t;
        if (!(v = bp_arg_value(a, "--threads"))) return BP_EXIT_USAGE;
        if (!bp_parse_u64(v, &t) || t < 1 || t > BP_MAX_WORKERS) {
            fprintf(stderr, "broadphase pairs: --threads wants a worker count from 1 to %d, not '%s'\n", BP_MAX_WORKERS,
                    v);
            return BP_EXIT_USAGE;
        }
        p->workers = (int)t;
    } else if (strcmp(s, "--circles") == 0) {
        p->in->circles = true;
    } else if (strcmp(s, "--unsorted") == 0) {
        p->unsorted = true;
    } else {
        return bp_unknown_option("pairs", s);
    }
    return BP_EXIT_OK;
}

// The sorted pairs of the loaded input on stdout. Returns the exit status (message printed).
static int bp_pairs_sorted(const bp_input *in, bp_method method, int workers) {
    bp_context *ctx = NULL;
    bp_pairs pairs;
    int rc = bp_run_pairs(in, method, true, workers, &ctx, &pairs);
    if (rc != 0) return rc;
    bp_out out;
    if (bp_out_stdout(&out)) {
        bp_stream s = {&out, in};
        bp_stream_pairs(pairs.pairs, pairs.count, &s);
        rc = bp_out_finish(&out);
    } else {
        rc = BP_EXIT_FAIL;
    }
    bp_context_destroy(ctx);
    return rc;
}

static int bp_cmd_pairs(int argc, char **argv) {
    if (bp_help_asked(argc, argv)) {
        fputs(bp_usage_pairs, stdout);
        return BP_EXIT_OK;
    }
    bp_input in;
    memset(&in, 0, sizeof in);
    in.dim = 2;
    bp_pairs_args p = {&in, BP_METHOD_AUTO, 1, false};
    const char *path = NULL;
    int rc = bp_parse_command(argc, argv, "pairs", bp_pairs_option, &p, &path);
    if (rc != BP_EXIT_OK) return rc;
    rc = bp_load(path, &in);
    if (rc == 0) rc = p.unsorted ? bp_pairs_unsorted(&in, p.method, p.workers) : bp_pairs_sorted(&in, p.method, p.workers);
    bp_input_free(&in);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// query

static const char bp_usage_query[] =
    "usage: broadphase query (--box MINX,MINY,MAXX,MAXY | --circle X,Y,R | --point X,Y)\n"
    "                        [--method NAME] [--dim 2|3] [FILE|-]\n"
    "\n"
    "Loads boxes like 'broadphase pairs' and prints, ascending, one per line, the index of every\n"
    "box that overlaps the query box, lies within distance R of the centre (exact box-to-point\n"
    "distance; touching counts), or contains the point. In 3D: --box takes six numbers\n"
    "(MINX,MINY,MINZ,MAXX,MAXY,MAXZ), --circle four (X,Y,Z,R, a sphere), --point three.\n"
    "\n"
    "  --method NAME  brute, sweep, grid, quadtree, rdc or auto (default auto)\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 success, 1 library error, 2 bad input or usage.\n";

enum { BP_QUERY_NONE, BP_QUERY_BOX, BP_QUERY_CIRCLE, BP_QUERY_POINT };

// Parses "a,b,c" into up to 6 finite floats; returns the count or -1.
static int bp_parse_floats(const char *s, float *v) {
    int k = 0;
    const char *p = s;
    for (;;) {
        if (k == 6) return -1;
        if (*p == '\0' || *p == ',' || bp_input_is_sep(*p) || *p == '\n') return -1;
        char *e;
        float f = strtof(p, &e);
        if (e == p || !isfinite(f) || (*e != ',' && *e != '\0')) return -1;
        v[k++] = f;
        if (*e == '\0') return k;
        p = e + 1;
    }
}

typedef struct bp_query_args {
    int dim;
    bp_method method;
    int kind;           // BP_QUERY_*
    const char *text;   // the shape's numbers, as given
    const char *name;   // its option
} bp_query_args;

static int bp_query_option(bp_args *a, void *user) {
    bp_query_args *q = user;
    const char *s = a->argv[a->k], *v;
    int kind = BP_QUERY_NONE;
    const char *name = NULL;
    if (bp_arg_is(a, "--method")) {
        if (!(v = bp_arg_value(a, "--method")) || !bp_cli_method(v, &q->method)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--dim")) {
        if (!(v = bp_arg_value(a, "--dim")) || !bp_parse_dim(v, &q->dim)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--box")) {
        kind = BP_QUERY_BOX;
        name = "--box";
    } else if (bp_arg_is(a, "--circle")) {
        kind = BP_QUERY_CIRCLE;
        name = "--circle";
    } else if (bp_arg_is(a, "--point")) {
        kind = BP_QUERY_POINT;
        name = "--point";
    } else {
        return bp_unknown_option("query", s);
    }
    if (kind != BP_QUERY_NONE) {
        if (q->kind != BP_QUERY_NONE) {
            fprintf(stderr, "broadphase query: give one of --box, --circle, --point\n");
            return BP_EXIT_USAGE;
        }
        if (!(q->text = bp_arg_value(a, name))) return BP_EXIT_USAGE;
        q->kind = kind;
        q->name = name;
    }
    return BP_EXIT_OK;
}

// The query shape's numbers into v: a box (min, max), a circle (centre, radius) or a point.
// Returns BP_EXIT_OK or BP_EXIT_USAGE (message printed).
static int bp_query_shape(const bp_query_args *q, float *v) {
    if (q->kind == BP_QUERY_NONE) {
        fprintf(stderr, "broadphase query: one of --box, --circle or --point is needed\n");
        return BP_EXIT_USAGE;
    }
    const int dim = q->dim;
    int want = q->kind == BP_QUERY_BOX ? 2 * dim : q->kind == BP_QUERY_CIRCLE ? dim + 1 : dim;
    if (bp_parse_floats(q->text, v) != want) {
        fprintf(stderr, "broadphase query: %s needs %d finite numbers separated by commas, not '%s'\n", q->name, want,
                q->text);
        return BP_EXIT_USAGE;
    }
    if (q->kind == BP_QUERY_BOX) {
        for (int k = 0; k < dim; ++k) {
            if (v[k] > v[dim + k]) {
                fprintf(stderr, "broadphase query: --box has min > max on axis %s\n", bp_axis_names[k]);
                return BP_EXIT_USAGE;
            }
        }
    }
    if (q->kind == BP_QUERY_CIRCLE && v[dim] < 0.0f) {
        fprintf(stderr, "broadphase query: --circle has a negative radius\n");
        return BP_EXIT_USAGE;
    }
    return BP_EXIT_OK;
}

// The boxes of ctx hit by the shape v, ascending, on stdout. Returns the exit status.
static int bp_query_print(bp_context *ctx, const bp_query_args *q, const float *v) {
    bp_indices hits;
    bp_status st;
    if (q->kind == BP_QUERY_BOX) st = bp_query_box(ctx, v, v + q->dim, &hits);
    else if (q->kind == BP_QUERY_CIRCLE) st = bp_query_sphere(ctx, v, v[q->dim], &hits);
    else st = bp_query_point(ctx, v, &hits);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase query: %s\n", bp_status_string(st));
        return BP_EXIT_FAIL;
    }
    bp_out out;
    if (!bp_out_stdout(&out)) return BP_EXIT_FAIL;
    for (size_t k = 0; k < hits.count; ++k) bp_out_u32(&out, hits.indices[k], '\n');
    return bp_out_finish(&out);
}

static int bp_cmd_query(int argc, char **argv) {
    if (bp_help_asked(argc, argv)) {
        fputs(bp_usage_query, stdout);
        return BP_EXIT_OK;
    }
    bp_query_args q = {2, BP_METHOD_AUTO, BP_QUERY_NONE, NULL, NULL};
    const char *path = NULL;
    int rc = bp_parse_command(argc, argv, "query", bp_query_option, &q, &path);
    if (rc != BP_EXIT_OK) return rc;
    float v[6];
    if ((rc = bp_query_shape(&q, v)) != BP_EXIT_OK) return rc;
    bp_input in;
    memset(&in, 0, sizeof in);
    in.dim = q.dim;
    rc = bp_load(path, &in);
    if (rc != 0) {
        bp_input_free(&in);
        return rc;
    }
    bp_context *ctx = NULL;
    bp_pairs pairs;
    rc = bp_run_pairs(&in, q.method, false, 1, &ctx, &pairs);
    bp_input_free(&in);
    if (rc != 0) return rc;
    rc = bp_query_print(ctx, &q, v);
    bp_context_destroy(ctx);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// main

static const char bp_usage[] =
    "usage: broadphase COMMAND [OPTIONS]\n"
    "\n"
    "Finds every overlapping pair among many axis-aligned boxes (broad-phase collision detection).\n"
    "\n"
    "Commands:\n"
    "  pairs   print the overlapping pairs of boxes (or circles) read from a file\n"
    "  query   print the boxes hit by a query box, circle or point\n"
    "  bench   time the methods on the benchmark scenes (docs/scenes.md)\n"
    "  world   replay a script of operations on a persistent world (add, move, remove, update)\n"
    "\n"
    "  broadphase COMMAND --help   options of a command\n"
    "  broadphase --version        the library version\n"
    "\n"
    "Exit status: 0 success, 1 library error or failed check, 2 bad input or usage.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(bp_usage, stderr);
        return BP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(bp_usage, stdout);
        return BP_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("broadphase %s\n", BP_VERSION_STRING);
        return BP_EXIT_OK;
    }
    if (strcmp(cmd, "pairs") == 0) return bp_cmd_pairs(argc, argv);
    if (strcmp(cmd, "query") == 0) return bp_cmd_query(argc, argv);
    if (strcmp(cmd, "bench") == 0) return bp_cmd_bench(argc, argv);
    if (strcmp(cmd, "world") == 0) return bp_cmd_world(argc, argv);
    fprintf(stderr, "broadphase: unknown command '%s' (pairs, query, bench, world; see 'broadphase --help')\n", cmd);
    return BP_EXIT_USAGE;
}
