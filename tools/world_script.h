// World scripts: the text that `broadphase world` replays (issue #13), one operation per line.
// The parser is separate from the command so that tests and fuzz targets can call it on any
// bytes: it reads exactly `len` bytes (no terminating NUL needed), never writes outside its own
// allocations, and rejects every bad line with its line number. A script that parses is valid
// as a whole (every id it names is live where it is named), so running it can only fail in the
// library (out of memory).
//
//     add ID static|moving CATEGORY MASK MINX MINY [MINZ] MAXX MAXY [MAXZ]
//     move ID MINX MINY [MINZ] MAXX MAXY [MAXZ]
//     remove ID
//     filter ID CATEGORY MASK
//     kind ID static|moving
//     update
//     query box MINX MINY [MINZ] MAXX MAXY [MAXZ] MASK
//     query sphere X Y [Z] R MASK
//     query point X Y [Z] MASK
//
// Fields are separated by spaces or tabs ('\r' is ignored too, for CRLF files); '#' starts a
// comment; blank lines are skipped. IDs are the script's own unsigned 64-bit decimal integers;
// CATEGORY and MASK are decimal or 0x-hex 64-bit; coordinates are floats as `broadphase pairs`
// reads them (finite, in the float range).
#ifndef BP_TOOLS_WORLD_SCRIPT_H
#define BP_TOOLS_WORLD_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "broadphase.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bp_script_opcode {
    BP_SCRIPT_ADD,
    BP_SCRIPT_MOVE,
    BP_SCRIPT_REMOVE,
    BP_SCRIPT_FILTER,
    BP_SCRIPT_KIND,
    BP_SCRIPT_UPDATE,
    BP_SCRIPT_QUERY_BOX,
    BP_SCRIPT_QUERY_SPHERE,
    BP_SCRIPT_QUERY_POINT,
} bp_script_opcode;

/// One parsed operation.
typedef struct bp_script_op {
    bp_script_opcode op;
    bp_proxy_kind kind;     ///< add, kind
    size_t line;            ///< 1-based line of the script
    size_t proxy;           ///< add: this proxy's number (adds counted from 0); move, remove,
                            ///< filter, kind: the number of the live proxy the id names
    uint64_t id;            ///< the script's id (add, move, remove, filter, kind)
    uint64_t category, mask;///< add, filter; queries: mask
    float v[6];             ///< box (min[dim], max[dim]); sphere: centre then radius; point
} bp_script_op;

typedef struct bp_script {
    int dim;
    bp_script_op *ops;
    size_t count, cap;
    size_t proxies;         ///< adds in the script (proxy numbers 0 .. proxies - 1)
} bp_script;

/// Exit statuses of bp_script_parse and bp_script_run (those of the CLI, tools/cli.h).
enum { BP_SCRIPT_OK = 0, BP_SCRIPT_FAIL = 1, BP_SCRIPT_BAD = 2 };

/// Parses `len` bytes of `text` as a script of dimension `dim` (2 or 3) into *out (which the
/// caller frees with bp_script_free, whatever the result). At most `max_live` proxies may be
/// live at once. Returns BP_SCRIPT_OK; BP_SCRIPT_BAD for a bad line (unknown operation, wrong
/// field count, bad id, unknown or duplicate id, bad number, inverted box, negative radius, too
/// many live proxies), with "broadphase: line N: ..." written to `err` (when not NULL);
/// BP_SCRIPT_FAIL when out of memory.
int bp_script_parse(const char *text, size_t len, int dim, size_t max_live, bp_script *out, FILE *err);

/// Runs a parsed script on a new world made from `def` (its dimension must be the script's)
/// and writes to `out`: for each update, its begin events as "begin A B" lines, then its end
/// events as "end A B" lines (A < B, script ids, each group sorted by A then B), then
/// "pairs K"; for each query, one line "query" followed by the ids hit, ascending, separated by
/// spaces. An id removed and added again before an update names a new proxy: its old pairs end
/// and its new ones begin. Returns BP_SCRIPT_OK, or BP_SCRIPT_FAIL when the library fails (the
/// message names the line) or a write fails.
int bp_script_run(const bp_script *script, const bp_world_def *def, FILE *out, FILE *err);

void bp_script_free(bp_script *script);

#ifdef __cplusplus
}
#endif

#endif
