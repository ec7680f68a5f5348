// AUTO's choice of method per call (src/auto.c).
#ifndef BP_AUTO_H
#define BP_AUTO_H

#include "method.h"

/// What AUTO remembers between calls.
typedef struct bp_auto {
    bool coarse;     // the grid advised against itself (its cells too coarse)
    size_t n;        // ... for this many boxes
    float span[3];   // ... spread over these bounds
} bp_auto;

/// The method for frame f (never AUTO). `last`: the last call's method, `last_pairs` its pairs;
/// `grid`: the grid's state when it exists (it ran the last call when last is the grid).
bp_method bp_auto_choose(bp_auto *au, const bp_frame *f, bp_method last, size_t last_pairs, const bp_algorithm *grid,
                         const bp_context_def *def);

#endif
