// The box files that `broadphase pairs` and `broadphase query` read, and the whole-file reader
// every command uses (`broadphase world` too): one parser shared by the CLI, its tests and the
// fuzz target (tests/fuzz/fuzz_parser.c). The parser reads exactly `len` bytes of any content
// (no terminating NUL needed), never writes outside its own allocations, and rejects every bad
// line with its line number.
//
//     minx miny maxx maxy            (2D boxes; 3D: minx miny minz maxx maxy maxz)
//     x y r                          (with circles: 2D circles; 3D: x y z r)
//
// Fields are separated by spaces, tabs or commas ('\r', '\v', '\f' too); '#' starts a comment;
// blank lines are skipped. Box coordinates are floats (strtof of the whole token), circles'
// doubles (strtod): finite and, for boxes, within the float range; min <= max on every axis.
#ifndef BP_TOOLS_INPUT_H
#define BP_TOOLS_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Parsed input. Set dim (2 or 3) and circles before parsing, the rest to zero.
typedef struct bp_input {
    int dim;
    bool circles;
    size_t n;
    float *boxes;       ///< n * 2 * dim floats (bp_box2 / bp_box3 layout); a circle's box is
                        ///< its exact box rounded outward to floats
    double *circles_v;  ///< circles: n * (dim + 1) doubles: centre then radius
    size_t cap;
} bp_input;

/// Statuses of bp_input_parse and bp_input_read: the CLI's exit statuses (tools/cli.h).
enum { BP_INPUT_OK = 0, BP_INPUT_FAIL = 1, BP_INPUT_BAD = 2 };

/// Parses `len` bytes of `text` into *in (dim and circles set, nothing parsed yet; the caller
/// frees it with bp_input_free whatever the result). At most `limit` boxes. Returns
/// BP_INPUT_OK; BP_INPUT_BAD for a bad line (not a number, NaN, infinite or out of the float
/// range, too few or too many values, min > max, negative radius, a circle's box out of the
/// float range, more than `limit` boxes) with "broadphase: line N: ..." written to `err` (when
/// not NULL); BP_INPUT_FAIL when out of memory.
int bp_input_parse(const char *text, size_t len, size_t limit, bp_input *in, FILE *err);

void bp_input_free(bp_input *in);

/// Reads the whole of FILE ("-" or NULL: stdin) into a new NUL-terminated buffer (freed with
/// free()). False, with a message written to `err`, when it cannot be opened or read or memory
/// runs out.
bool bp_input_read(const char *path, char **text, size_t *len, FILE *err);

/// The field separators of box files: space, tab, comma, '\r', '\v', '\f'.
bool bp_input_is_sep(char c);

/// "x", "y", "z", for messages.
extern const char *const bp_axis_names[3];

#ifdef __cplusplus
}
#endif

#endif
