// The definition structs' rule (include/broadphase.h, "Definition structs"): every
// bp_default_*_def() writes BP_DEF_MADE into the struct's `internal_value`, and every call that
// takes a definition rejects any other value with BP_ERR_DEF_NOT_INITIALISED. Never installed.
#ifndef BP_DEF_H
#define BP_DEF_H

#include <stdbool.h>
#include <stdint.h>

// Neither 0 (a zeroed struct) nor a byte repeated (memset with another value).
#define BP_DEF_MADE 0x42504446u

static inline bool bp_def_made(uint32_t internal_value) { return internal_value == BP_DEF_MADE; }

#endif
