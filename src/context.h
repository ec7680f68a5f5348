// The context's private layout, shared by context.c and nothing else that is not a method.
#ifndef BP_CONTEXT_H
#define BP_CONTEXT_H

#include "core.h"
#include "method.h"

struct bp_context {
    bp_context_def def;     // as created, defaults resolved
    bp_allocator alloc;
    size_t bytes;           // live bytes through alloc, the context itself included
    int dim;

    float *boxes;           // validated copy of the last call's boxes (see bp_frame)
    size_t boxes_cap;
    bp_frame frame;
    bool have_boxes;        // the last call succeeded: queries may run

    bp_algorithm *methods[BP_METHOD_COUNT];  // created lazily, kept for coherence
    bp_method last;                          // the method of the last call

    bp_pair *pairs;         // buffer-mode output
    size_t pair_cap, pair_count;
    bp_pair *chunk;         // callback-mode batch
    size_t chunk_cap;
    uint64_t *sort_keys, *sort_tmp;  // sorted output scratch
    size_t sort_cap, sort_tmp_cap;

    bp_index_buf query;     // query output
    uint32_t *query_tmp;
    size_t query_tmp_cap;

    bp_stats stats;
};


/// The C library allocator (with huge pages for large blocks on Linux), used when the definition
/// gives no hooks.
void *bp_default_alloc(size_t size, size_t align, void *user);
void bp_default_free(void *p, size_t size, void *user);

#endif
