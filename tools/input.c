// Box files and whole-file reading for the CLI (tools/input.h).
#include "input.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/exact.h"  // two-sum (header-only, shared with the library)

const char *const bp_axis_names[3] = {"x", "y", "z"};

bool bp_input_is_sep(char c) {
    return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f';
}

bool bp_input_read(const char *path, char **text, size_t *len, FILE *err) {
    FILE *f = stdin;
    if (path && strcmp(path, "-") != 0) {
        f = fopen(path, "rb");
        if (!f) {
            if (err) fprintf(err, "broadphase: cannot open '%s': %s\n", path, strerror(errno));
            return false;
        }
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    bool ok = buf != NULL, read_error = false;
    while (ok) {
        if (cap - n < 2) {
            size_t ncap = cap + cap / 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                ok = false;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            read_error = ferror(f) != 0;
            ok = !read_error;
            break;
        }
    }
    if (err) {
        if (read_error) fprintf(err, "broadphase: error reading '%s': %s\n", path ? path : "-", strerror(errno));
        else if (!ok) fprintf(err, "broadphase: out of memory reading the input\n");
    }
    if (f != stdin) fclose(f);
    if (!ok) {
        free(buf);
        return false;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return true;
}

// What one data line must hold, for messages.
static const char *bp_layout(int dim, bool circles) {
    if (circles) return dim == 2 ? "x y r" : "x y z r";
    return dim == 2 ? "minx miny maxx maxy" : "minx miny minz maxx maxy maxz";
}

// Reports a bad token: NaN, infinite, out of float range, or not a number at all.
static void bp_bad_value(FILE *err, size_t line, const char *tok, size_t len, double v, bool parsed) {
    if (!err) return;
    int shown = len > 40 ? 40 : (int)len;
    const char *more = len > 40 ? "..." : "";
    if (!parsed) fprintf(err, "broadphase: line %zu: '%.*s%s' is not a number\n", line, shown, tok, more);
    else if (isnan(v)) fprintf(err, "broadphase: line %zu: '%.*s%s' is NaN\n", line, shown, tok, more);
    else fprintf(err, "broadphase: line %zu: '%.*s%s' is infinite or out of the float range\n", line, shown, tok, more);
}

// The largest float <= x - r (down) or the smallest float >= x + r (up): a circle's box rounded
// outward, so the float box never misses a pair of the exact circles. False when out of range.
static bool bp_outward(double x, double r, bool up, float *out) {
    double err;
    double d = bp_two_sum(x, up ? r : -r, &err);
    if (!isfinite(d) || fabs(d) > FLT_MAX) return false;
    float f = (float)d;
    // Round to nearest may go the wrong way; and when d itself is a float, the exact value may
    // still lie beyond it by err (a double gap is smaller than any float gap, so only then).
    if (up) {
        if ((double)f < d || ((double)f == d && err > 0.0)) f = nextafterf(f, INFINITY);
    } else {
        if ((double)f > d || ((double)f == d && err < 0.0)) f = nextafterf(f, -INFINITY);
    }
    if (!isfinite(f)) return false;
    *out = f;
    return true;
}

void bp_input_free(bp_input *in) {
    free(in->boxes);
    free(in->circles_v);
    in->boxes = NULL;
    in->circles_v = NULL;
}

static bool bp_input_grow(bp_input *in) {
    size_t cap = in->cap < 1024 ? 1024 : in->cap + in->cap / 2;
    size_t per = 2 * (size_t)in->dim;
    float *b = realloc(in->boxes, cap * per * sizeof *b);
    if (!b) return false;
    in->boxes = b;
    if (in->circles) {
        double *c = realloc(in->circles_v, cap * ((size_t)in->dim + 1) * sizeof *c);
        if (!c) return false;
        in->circles_v = c;
    }
    in->cap = cap;
    return true;
}

// One token as a number: strtof/strtod on a NUL-terminated copy (the text need not end in a
// NUL, and may hold NULs), so that the whole token must be the number. Long tokens (a number
// with hundreds of digits is still a number) are copied to the heap. -1: out of memory.
static int bp_token_number(const char *tok, size_t len, bool dbl, double *v, float *f) {
    char small[128];
    char *buf = small;
    if (len >= sizeof small) {
        buf = malloc(len + 1);
        if (!buf) return -1;
    }
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *e;
    if (dbl) {
        *v = strtod(buf, &e);
    } else {
        *f = strtof(buf, &e);
        *v = *f;
    }
    const bool whole = len > 0 && e == buf + len;
    if (buf != small) free(buf);
    return whole;
}

int bp_input_parse(const char *text, size_t len, size_t limit, bp_input *in, FILE *err) {
    size_t dim = (size_t)in->dim;
    size_t need = in->circles ? dim + 1 : 2 * dim;
    const char *p = text, *end = text + len;
    size_t line = 0;
    while (p < end) {
        ++line;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        const char *stop = memchr(p, '#', (size_t)(eol - p));
        if (!stop) stop = eol;
        double dv[6];
        float fv[6];
        size_t count = 0;
        const char *q = p;
        for (;;) {
            while (q < stop && bp_input_is_sep(*q)) ++q;
            if (q >= stop) break;
            const char *tok = q;
            while (q < stop && !bp_input_is_sep(*q)) ++q;
            size_t tlen = (size_t)(q - tok);
            if (count < need) {
                double v = 0.0;
                int whole = bp_token_number(tok, tlen, in->circles, &v, &fv[count]);
                if (whole < 0) {
                    if (err) fprintf(err, "broadphase: out of memory at line %zu\n", line);
                    return BP_INPUT_FAIL;
                }
                dv[count] = v;
                if (!whole) {
                    bp_bad_value(err, line, tok, tlen, 0.0, false);
                    return BP_INPUT_BAD;
                }
                if (!isfinite(v)) {
                    bp_bad_value(err, line, tok, tlen, v, true);
                    return BP_INPUT_BAD;
                }
            }
            ++count;
        }
        p = eol + 1;
        if (count == 0) continue;  // blank or comment-only line
        if (count != need) {
            if (err)
                fprintf(err, "broadphase: line %zu: too %s values: %zu, expected %zu (%s)\n", line,
                        count < need ? "few" : "many", count, need, bp_layout(in->dim, in->circles));
            return BP_INPUT_BAD;
        }
        if (in->n >= limit) {
            if (err) fprintf(err, "broadphase: line %zu: more than %zu boxes (BP_MAX_BOXES)\n", line, limit);
            return BP_INPUT_BAD;
        }
        if (in->n == in->cap && !bp_input_grow(in)) {
            if (err) fprintf(err, "broadphase: out of memory at line %zu\n", line);
            return BP_INPUT_FAIL;
        }
        float *box = in->boxes + in->n * 2 * dim;
        if (in->circles) {
            double r = dv[dim];
            if (r < 0.0) {
                if (err) fprintf(err, "broadphase: line %zu: negative radius %.17g\n", line, r);
                return BP_INPUT_BAD;
            }
            for (size_t a = 0; a < dim; ++a) {
                if (!bp_outward(dv[a], r, false, &box[a]) || !bp_outward(dv[a], r, true, &box[dim + a])) {
                    if (err)
                        fprintf(err, "broadphase: line %zu: the circle's box leaves the float range on axis %s\n",
                                line, bp_axis_names[a]);
                    return BP_INPUT_BAD;
                }
            }
            memcpy(in->circles_v + in->n * (dim + 1), dv, (dim + 1) * sizeof *dv);
        } else {
            for (size_t a = 0; a < dim; ++a) {
                if (fv[a] > fv[dim + a]) {
                    if (err)
                        fprintf(err, "broadphase: line %zu: min > max on axis %s (%.9g > %.9g)\n", line,
                                bp_axis_names[a], (double)fv[a], (double)fv[dim + a]);
                    return BP_INPUT_BAD;
                }
            }
            memcpy(box, fv, 2 * dim * sizeof *fv);
        }
        ++in->n;
    }
    return BP_INPUT_OK;
}
