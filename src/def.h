// The definition structs' rule (include/broadphase.h, "Definition structs"): every
// bp_default_*_def() writes BP_DEF_MADE into the struct's `internal_value`, and every call that
// takes a definition rejects any other value with BP_ERR_DEF_NOT_INITIALISED. Never installed.
#ifndef BP_DEF_H
#define BP_DEF_H

#include <stdbool.h>
#include <stdint.h>

#include "broadphase.h"

// Neither 0 (a zeroed struct) nor a byte repeated (memset with another value).
#define BP_DEF_MADE 0x42504446u

static inline bool bp_def_made(uint32_t internal_value) { return internal_value == BP_DEF_MADE; }

// The checks every create makes of its definition before the fields of its own: a definition and
// an output (BP_ERR_NULL), made by its default function (BP_ERR_DEF_NOT_INITIALISED), 2D or 3D
// (BP_ERR_INVALID_ARG). `have` is def && out.
static inline bp_status bp_def_check(bool have, uint32_t internal_value, int dimension) {
    if (!have) return BP_ERR_NULL;
    if (!bp_def_made(internal_value)) return BP_ERR_DEF_NOT_INITIALISED;
    return dimension == 2 || dimension == 3 ? BP_OK : BP_ERR_INVALID_ARG;
}

#endif
