// The context's private layout, shared by context.c and nothing else that is not a method.
#ifndef BP_CONTEXT_H
#define BP_CONTEXT_H

#include "auto.h"
#include "core.h"
#include "load.h"
#include "method.h"
#include "pair_sort.h"
#include "sink.h"
#include "pool.h"

struct bp_context {
    bp_core core;           // first: see bp_core_of (the definition, the heap, the workers)
    int dim;

    bp_load_state load;     // validated copy of the last call's boxes (see bp_frame)
    bp_frame frame;
    bool have_boxes;        // the last call succeeded: queries may run

    bp_algorithm *methods[BP_METHOD_COUNT];  // created lazily, kept for coherence
    bp_method last;                          // the method of the last call
    bp_auto autos;                           // what AUTO remembers (src/auto.c)

    bp_pair_store out;      // the pairs' buffer and chunk (src/sink.h)
    bp_pair_sort_scratch sort;

    bp_index_buf query;     // query output
    uint32_t *query_tmp;
    size_t query_tmp_cap;

    bp_stats stats;

    size_t last_pairs;      // pairs of the last successful call, either mode
};
_Static_assert(offsetof(struct bp_context, core) == 0, "bp_core_of needs the core first");

/// The C library allocator (with huge pages for large blocks on Linux), used when the definition
/// gives no hooks.
void *bp_default_alloc(size_t size, size_t align, void *user);
void bp_default_free(void *p, size_t size, void *user);

#endif
