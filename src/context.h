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

/// A block of pairs of a parallel pair pass (src/par.c): a header line, then the pairs.
typedef struct bp_par_block bp_par_block;

/// Where one task of a parallel pair pass left its pairs (in task order: the output order).
typedef struct bp_par_seg {
    bp_par_block *first;  // its chain of blocks (NULL: it found none or did not run)
    size_t count;
    uint64_t checks;
} bp_par_seg;

struct bp_context {
    bp_context_def def;     // as created, defaults resolved
    bp_allocator alloc;
    size_t bytes;           // live bytes through alloc, the context itself included
    int dim;
#ifndef NDEBUG
    // Debug builds: the blocks live through bp_alloc, to catch hooks that hand out a block
    // twice (src/alloc.c); tracking stops when more are live than this holds.
    void *debug_live[256];
    uint32_t debug_nlive;
    bool debug_untracked;
#endif

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
    uint64_t *scratch;      // bp_par_scratch
    size_t scratch_cap;
};


/// The C library allocator (with huge pages for large blocks on Linux), used when the definition
/// gives no hooks.
void *bp_default_alloc(size_t size, size_t align, void *user);
void bp_default_free(void *p, size_t size, void *user);

#endif
