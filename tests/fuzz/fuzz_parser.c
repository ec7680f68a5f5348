// Fuzz target: the CLI's input parsers, on any bytes (tools/input.c, the box files of
// `broadphase pairs` and `query`; tools/world_script.c, the scripts of `broadphase world`). The
// first byte picks the parser, the dimension and boxes or circles; the rest is the text. The
// box parser is compared with a second, plainer reading written here (lines, '#' comments,
// tokens, strtof/strtod on each): the same verdict, the same boxes bit for bit, and every
// circle's float box holding the circle. The script parser must accept only valid operations.
#include <math.h>

#include "fuzz.h"
#include "input.h"
#include "world_script.h"

#define FZ_TARGET "fuzz_parser"
#define FZ_LIMIT 512

// The plain reading: true when every line is blank, a comment or exactly `need` finite numbers
// (boxes: floats with min <= max), false otherwise; the values in v (up to FZ_LIMIT lines).
FZ_NOCOV static bool plain_read(const char *text, size_t len, int dim, bool circles, double *v, size_t *count) {
    const size_t need = circles ? (size_t)dim + 1 : 2 * (size_t)dim;
    *count = 0;
    size_t start = 0;
    char tok[4096];
    while (start < len) {
        size_t end = start;
        while (end < len && text[end] != '\n') ++end;
        size_t stop = start;
        while (stop < end && text[stop] != '#') ++stop;
        size_t fields = 0;
        double vals[8];
        size_t k = start;
        while (k < stop) {
            if (strchr(" \t,\r\v\f", text[k]) && text[k] != '\0') {
                ++k;
                continue;
            }
            size_t t = k;
            while (k < stop && !(strchr(" \t,\r\v\f", text[k]) && text[k] != '\0')) ++k;
            if (fields < need) {
                if (k - t >= sizeof tok) return false;  // (never in the corpus: the fuzzer's inputs are short)
                memcpy(tok, text + t, k - t);
                tok[k - t] = '\0';
                char *e;
                double x;
                if (circles) x = strtod(tok, &e);
                else x = strtof(tok, &e);
                if (e != tok + (k - t) || k == t || !isfinite(x)) return false;
                vals[fields] = x;
            }
            ++fields;
        }
        if (fields != 0) {
            if (fields != need || *count >= FZ_LIMIT) return false;
            if (circles && vals[dim] < 0.0) return false;
            if (!circles)
                for (int a = 0; a < dim; ++a)
                    if (vals[a] > vals[dim + a]) return false;
            memcpy(v + *count * need, vals, need * sizeof *vals);
            ++*count;
        }
        start = end + 1;
    }
    return true;
}

static double g_vals[FZ_LIMIT * 6];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const uint8_t mode = data[0];
    const char *text = (const char *)data + 1;
    const size_t len = size - 1;
    const int dim = 2 + (mode & 1);
    if (mode & 4) {
        bp_script script;
        const int rc = bp_script_parse(text, len, dim, 64, &script, NULL);
        FZ_CHECK(rc == BP_SCRIPT_OK || rc == BP_SCRIPT_BAD || rc == BP_SCRIPT_FAIL, rc, 0);
        if (rc == BP_SCRIPT_OK) {
            for (size_t k = 0; k < script.count; ++k) {
                const bp_script_op *op = &script.ops[k];
                if (op->op == BP_SCRIPT_ADD || op->op == BP_SCRIPT_MOVE || op->op == BP_SCRIPT_QUERY_BOX)
                    for (int a = 0; a < dim; ++a)
                        FZ_CHECK(isfinite(op->v[a]) && isfinite(op->v[dim + a]) && op->v[a] <= op->v[dim + a], k, a);
                FZ_CHECK(op->line >= 1 && op->line <= len + 1, op->line, len);
            }
        }
        bp_script_free(&script);
        return 0;
    }
    const bool circles = (mode & 2) != 0;
    bp_input in;
    memset(&in, 0, sizeof in);
    in.dim = dim;
    in.circles = circles;
    const int rc = bp_input_parse(text, len, FZ_LIMIT, &in, NULL);
    size_t count = 0;
    const bool ok = plain_read(text, len, dim, circles, g_vals, &count);
    FZ_CHECK(rc == BP_INPUT_OK || rc == BP_INPUT_BAD, rc, 0);
    if (rc == BP_INPUT_OK) {
        // Every line the plain reading accepts, the parser does, unless a circle's box leaves the
        // float range (which the plain reading does not compute).
        FZ_CHECK(ok && in.n == count, in.n, count);
        const size_t need = circles ? (size_t)dim + 1 : 2 * (size_t)dim;
        for (size_t k = 0; k < in.n; ++k) {
            const float *b = in.boxes + k * 2 * (size_t)dim;
            const double *v = g_vals + k * need;
            for (int a = 0; a < dim; ++a) {
                FZ_CHECK(isfinite(b[a]) && isfinite(b[dim + a]) && b[a] <= b[dim + a], k, a);
                if (!circles) {
                    FZ_CHECK(b[a] == (float)v[a] && b[dim + a] == (float)v[dim + a], k, a);
                    FZ_CHECK(signbit(b[a]) == signbit(v[a]), k, a);
                } else {
                    // The float box holds the circle: min <= x - r and max >= x + r, exactly
                    // (long double has the bits for the difference of two nearby doubles; the
                    // check is one-sided where it is not exact).
                    const long double x = v[a], r = v[dim];
                    FZ_CHECK((long double)b[a] <= x - r * (1.0L - 0x1p-60L), k, a);
                    FZ_CHECK((long double)b[dim + a] >= x + r * (1.0L - 0x1p-60L), k, a);
                    FZ_CHECK(in.circles_v[k * need + (size_t)a] == v[a], k, a);
                }
            }
        }
    } else if (ok && !circles) {
        FZ_CHECK(false, rc, count);  // the plain reading accepted what the parser rejected
    }
    bp_input_free(&in);
    return 0;
}
