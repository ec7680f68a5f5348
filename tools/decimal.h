// Hand-rolled decimal formatting for the tool's writers (bp_out in cli.h, the world script's
// output): snprintf per number costs several times more when millions of pairs are written.
#ifndef BP_TOOLS_DECIMAL_H
#define BP_TOOLS_DECIMAL_H

#include <stdint.h>

/// Writes v in decimal at p (at most 20 characters, no terminator); returns the end.
static inline char *bp_decimal(char *p, uint64_t v) {
    char tmp[20];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (k) *p++ = tmp[--k];
    return p;
}

#endif
