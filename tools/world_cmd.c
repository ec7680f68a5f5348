// `broadphase world`: replays a script of world operations (tools/world_script.h) and prints
// each update's begin and end events and pair count, and each query's hits. The whole script is
// parsed first, so a bad line is reported (with its number, exit status 2) before anything is
// written to stdout.
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "world_script.h"

static const char bp_usage_world[] =
    "usage: broadphase world [--dim 2|3] [--mode auto|incremental|rebuild] [FILE|-]\n"
    "\n"
    "Replays a script of operations on a persistent world (default: stdin), one per line:\n"
    "\n"
    "  add ID static|moving CATEGORY MASK MINX MINY MAXX MAXY\n"
    "  move ID MINX MINY MAXX MAXY\n"
    "  remove ID\n"
    "  filter ID CATEGORY MASK\n"
    "  kind ID static|moving\n"
    "  update\n"
    "  query box MINX MINY MAXX MAXY MASK\n"
    "  query sphere X Y R MASK\n"
    "  query point X Y MASK\n"
    "\n"
    "In 3D boxes have six coordinates (MINX MINY MINZ MAXX MAXY MAXZ), points three. Fields are\n"
    "separated by spaces or tabs; '#' starts a comment. IDs are the script's own unsigned 64-bit\n"
    "integers; CATEGORY and MASK are 64-bit, decimal or 0x-hex. Two proxies pair when their boxes\n"
    "overlap (closed: touching counts), they are not both static, and each one's category meets\n"
    "the other's mask.\n"
    "\n"
    "Output: for each update, its begin events as 'begin A B' lines, then its end events as\n"
    "'end A B' lines (A < B, each group sorted by A then B), then 'pairs K' (the pairs now); for\n"
    "each query, one line 'query' followed by the ids of the proxies hit (box overlaps the shape,\n"
    "category & MASK non-zero), ascending. An id removed and added again before an update is a\n"
    "new proxy: its old pairs end and its new ones begin.\n"
    "\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --mode MODE    the world's update mode (bp_world_def.mode): auto (default), incremental\n"
    "                 or rebuild; the output is the same\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 success, 1 library error, 2 bad input (the message names the line) or usage.\n";

// Test hook, as `pairs` has: BROADPHASE_MAX_BOXES lowers the live proxy limit (never raises it)
// so the "too many proxies" error can be tested without 2^30 lines.
static size_t bp_world_limit(void) {
    const char *s = getenv("BROADPHASE_MAX_BOXES");
    uint64_t v;
    if (s && bp_parse_u64(s, &v) && v < BP_MAX_BOXES) return (size_t)v;
    return BP_MAX_BOXES;
}

int bp_cmd_world(int argc, char **argv) {
    for (int k = 2; k < argc && strcmp(argv[k], "--") != 0; ++k) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            fputs(bp_usage_world, stdout);
            return BP_EXIT_OK;
        }
    }
    bp_world_def def = bp_default_world_def();
    const char *path = NULL;
    bool only_files = false;
    bp_args a = {argc, argv, 2, NULL};
    for (; a.k < argc; ++a.k) {
        const char *s = argv[a.k], *v;
        if (!only_files && strcmp(s, "--") == 0) {
            only_files = true;
            continue;
        }
        if (!only_files && s[0] == '-' && s[1] != '\0') {
            if (bp_arg_is(&a, "--dim")) {
                if (!(v = bp_arg_value(&a, "--dim")) || !bp_parse_dim(v, &def.dimension)) return BP_EXIT_USAGE;
            } else if (bp_arg_is(&a, "--mode")) {
                if (!(v = bp_arg_value(&a, "--mode"))) return BP_EXIT_USAGE;
                if (strcmp(v, "auto") == 0) def.mode = BP_WORLD_MODE_AUTO;
                else if (strcmp(v, "incremental") == 0) def.mode = BP_WORLD_MODE_INCREMENTAL;
                else if (strcmp(v, "rebuild") == 0) def.mode = BP_WORLD_MODE_REBUILD;
                else {
                    fprintf(stderr, "broadphase world: --mode is auto, incremental or rebuild, not '%s'\n", v);
                    return BP_EXIT_USAGE;
                }
            } else {
                fprintf(stderr, "broadphase world: unknown option '%s' (see 'broadphase world --help')\n", s);
                return BP_EXIT_USAGE;
            }
            continue;
        }
        if (path) {
            fprintf(stderr, "broadphase world: more than one input file ('%s', '%s')\n", path, s);
            return BP_EXIT_USAGE;
        }
        path = s;
    }
    char *text;
    size_t len;
    if (!bp_input_read(path, &text, &len, stderr)) return BP_EXIT_USAGE;
    bp_script script;
    int rc = bp_script_parse(text, len, def.dimension, bp_world_limit(), &script, stderr);
    free(text);
    if (rc == BP_SCRIPT_OK) rc = bp_script_run(&script, &def, stdout, stderr);
    bp_script_free(&script);
    if (fflush(stdout) != 0 && rc == BP_SCRIPT_OK) {
        fprintf(stderr, "broadphase: error writing the output\n");
        rc = BP_SCRIPT_FAIL;
    }
    return rc;  // BP_SCRIPT_* are the CLI's exit statuses
}
