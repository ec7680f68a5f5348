// Shared pieces of the `broadphase` command-line tool: exit codes, buffered output with
// hand-rolled integer formatting, option parsing helpers. Private to tools/.
#ifndef BP_TOOLS_CLI_H
#define BP_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "broadphase.h"
#include "decimal.h"

/// Exit statuses (issue #2): 0 success, 1 library error or a failed --check, 2 bad input or usage.
enum { BP_EXIT_OK = 0, BP_EXIT_FAIL = 1, BP_EXIT_USAGE = 2 };

/// Buffered writer: one big buffer, flushed when full, so millions of lines cost little.
typedef struct bp_out {
    FILE *file;
    char *buf;
    size_t len, cap;
    bool failed;  ///< a write failed (disk full, closed pipe)
} bp_out;

bool bp_out_open(bp_out *o, FILE *file);
void bp_out_flush(bp_out *o);
/// Flushes, frees; returns false when any write failed.
bool bp_out_close(bp_out *o);

/// Appends v in decimal followed by `end` (e.g. ' ' or '\n').
static inline void bp_out_u32(bp_out *o, uint32_t v, char end) {
    if (o->cap - o->len < 16) bp_out_flush(o);
    char *p = bp_decimal(o->buf + o->len, v);
    *p++ = end;
    o->len = (size_t)(p - o->buf);
}

/// Command-line option cursor: `--name value` and `--name=value` both work.
typedef struct bp_args {
    int argc;
    char **argv;
    int k;               ///< next argument
    const char *inline_value;  ///< the part after '=' of the current option, or NULL
} bp_args;

/// True when the current argument is option `name` (e.g. "--dim"), with or without "=value".
bool bp_arg_is(bp_args *a, const char *name);
/// The value of the option just matched (inline or the next argument); NULL with a message
/// when missing.
const char *bp_arg_value(bp_args *a, const char *name);

/// Parses a whole decimal number into *out; false (no message) when not one.
bool bp_parse_u64(const char *s, uint64_t *out);
bool bp_parse_dim(const char *s, int *dim);

/// Resolves a method name of the library; prints the error and returns false when unknown or
/// not built.
bool bp_cli_method(const char *name, bp_method *m);

/// `broadphase bench`, in bench.c.
int bp_cmd_bench(int argc, char **argv);

/// `broadphase world`, in world_cmd.c.
int bp_cmd_world(int argc, char **argv);

#endif
