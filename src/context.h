// The context's private layout, shared by context.c and nothing else that is not a method.
#ifndef BP_CONTEXT_H
#define BP_CONTEXT_H

#include "core.h"
#include "method.h"
#include "pool.h"

/// A block of pairs of a parallel pair pass (src/par.c): a header line, then the pairs.
typedef struct bp_par_block bp_par_block;

/// Where one task of a parallel pair pass left its pairs (in task order: the output order).
typedef struct bp_par_seg {
    bp_par_block *first;  // its chain of blocks (NULL: it found none or did not run)
    size_t count;
    uint64_t checks;
} bp_par_seg;

/// One block of the load's statistics (bp_set_boxes).
typedef struct bp_load_part {
    float lo[3], hi[3], size_max[3];
    double size_sum[3], center_sum[3], center_sq[3];
    bp_status st;
} bp_load_part;

struct bp_context {
    bp_context_def def;     // as created, defaults resolved
    bp_heap heap;           // the hooks and the live bytes, the context itself included
    int dim;

    float *boxes;           // validated copy of the last call's boxes (see bp_frame)
    size_t boxes_cap;
    bp_frame frame;
    bool have_boxes;        // the last call succeeded: queries may run

    bp_algorithm *methods[BP_METHOD_COUNT];  // created lazily, kept for coherence
    bp_method last;                          // the method of the last call
    bool auto_coarse;                        // AUTO: the grid's cells were too coarse (bp_auto_choose)
    size_t auto_n;                           // ... for this many boxes
    float auto_span[3];                      // ... spread over these bounds

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

    // Workers (def.workers > 1): the pool, whether this call uses it, and what tasks keep.
    bp_pool *pool;
    bool par;               // this call may run in parallel (bp_run: pool and n >= parallel_min)
    bool par_pairs;         // and its pair pass too (not when the output bounds it: bp_run)
    size_t last_pairs;      // pairs of the last successful call, either mode
    size_t par_min;         // calls with fewer boxes stay serial
    size_t par_grain;       // 0, or the smallest task when def.parallel_min asks for small ones
    bp_par_block **blocks;  // the pair passes' pool of blocks, handed out anew each pass
    size_t nblocks, blocks_cap;
    bp_par_block *blocks_all;  // every block the context holds (some not yet in the pool)
    bp_par_block **order;   // one pass's blocks in output order (the merge's items)
    size_t order_cap;
    bp_par_seg *segs;       // one per task of a pair pass
    size_t segs_cap;
    uint32_t *hist;         // radix histograms, per task
    size_t hist_cap;
    bp_load_part *parts;    // the load's blocks
    size_t parts_cap;
    uint64_t *scratch;      // bp_par_scratch
    size_t scratch_cap;
};


/// The C library allocator (with huge pages for large blocks on Linux), used when the definition
/// gives no hooks.
void *bp_default_alloc(size_t size, size_t align, void *user);
void bp_default_free(void *p, size_t size, void *user);

#endif
