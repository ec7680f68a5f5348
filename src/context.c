// The context: entry points, argument checks, the validated copy of the boxes, dispatch to the
// method table, the pair sink and buffer, sorted output, region queries.
#include <math.h>
#include <stdlib.h>
#include <string.h>


#include "context.h"
#include "def.h"
#include "par.h"
#include "radix_sort.h"

// From this many pairs per box (the last call's), the pair pass runs on the calling thread even
// with workers (the other passes still use them): each pair a worker finds is written to its
// block and copied to the output, three times the memory traffic of one thread's streamed
// stores, so outputs this large were slower with 2 workers than with one (line 2D at 100,000,
// 80 pairs a box, sweep: 11.8 against 5.1 ms; seed at 100,000, 820 a box, grid: about even).
#define BP_PAR_PAIRS_PER_BOX 32

const char *bp_status_string(bp_status status) {
    switch (status) {
    case BP_OK: return "ok";
    case BP_ERR_NULL: return "a required pointer is NULL";
    case BP_ERR_INVALID_ARG: return "invalid argument";
    case BP_ERR_NONFINITE: return "coordinate is NaN or infinite";
    case BP_ERR_INVERTED_BOX: return "box has min > max";
    case BP_ERR_TOO_MANY: return "too many boxes";
    case BP_ERR_NOMEM: return "out of memory";
    case BP_ERR_UNSUPPORTED: return "method not supported";
    case BP_ERR_DIMENSION: return "dimension mismatch";
    case BP_ERR_NO_BOXES: return "no boxes yet (no successful pair-finding call)";
    case BP_ERR_STOPPED: return "stopped by the pair callback";
    case BP_ERR_NEGATIVE_RADIUS: return "negative radius";
    case BP_ERR_STALE: return "stale or unknown proxy id";
    case BP_ERR_NULL_PROXY: return "null proxy id (BP_NULL_PROXY)";
    case BP_ERR_DEF_NOT_INITIALISED: return "definition not made by its bp_default_*_def() function";
    }
    return "unknown status";
}

bp_context_def bp_default_context_def(void) {
    bp_context_def d;
    memset(&d, 0, sizeof d);
    d.dimension = 2;
    d.method = BP_METHOD_AUTO;
    d.workers = 1;
    d.sweep.axis = -1;
    d.sweep.coherence = true;
    d.internal_value = BP_DEF_MADE;
    return d;
}

// ---------------------------------------------------------------------------------------------
// Create / destroy

bp_status bp_context_create(const bp_context_def *def, bp_context **out) {
    if (out) *out = NULL;
    bp_status st = bp_def_check(def && out, def ? def->internal_value : 0, def ? def->dimension : 0);
    if (st != BP_OK) return st;
    bp_context_def d = *def;
    if ((int)d.method < 0 || d.method >= BP_METHOD_COUNT) return BP_ERR_INVALID_ARG;
    if (d.sweep.axis < -1 || d.sweep.axis >= d.dimension) return BP_ERR_INVALID_ARG;
    if (!(d.grid.cell_size >= 0.0f) || !isfinite(d.grid.cell_size)) return BP_ERR_INVALID_ARG;
    if (d.grid.layout != BP_GRID_LAYOUT_AUTO && d.grid.layout != BP_GRID_LAYOUT_SORTED &&
        d.grid.layout != BP_GRID_LAYOUT_TABLE)
        return BP_ERR_INVALID_ARG;
    if (d.quadtree.levels < 0) return BP_ERR_INVALID_ARG;
    if (d.quadtree.fixed_world) {
        for (int a = 0; a < d.dimension; ++a) {
            if (!isfinite(d.quadtree.world_min[a]) || !isfinite(d.quadtree.world_max[a]))
                return BP_ERR_NONFINITE;
            if (!(d.quadtree.world_min[a] < d.quadtree.world_max[a])) return BP_ERR_INVALID_ARG;
        }
    }
    if (!isfinite(d.rdc.epsilon)) return BP_ERR_NONFINITE;
    if (d.workers == 0) d.workers = 1;
    if (d.workers < 1 || d.workers > BP_MAX_WORKERS) return BP_ERR_INVALID_ARG;
    if (!d.enqueue_task != !d.finish_task) return BP_ERR_INVALID_ARG;
    bp_allocator al = d.allocator;
    if (!al.alloc && !al.free) {
        al.alloc = bp_default_alloc;
        al.free = bp_default_free;
        al.user = NULL;
    } else if (!al.alloc || !al.free) {
        return BP_ERR_INVALID_ARG;
    }
    if (d.method != BP_METHOD_AUTO && !bp_method_available(d.method)) return BP_ERR_UNSUPPORTED;

    bp_context *ctx = al.alloc(sizeof *ctx, 64, al.user);
    if (!ctx) return BP_ERR_NOMEM;
    memset(ctx, 0, sizeof *ctx);
    bp_heap_init(&ctx->core.heap, &al, ctx, sizeof *ctx);
    ctx->core.def = d;
    ctx->core.def.allocator = al;
    ctx->dim = d.dimension;
    ctx->last = BP_METHOD_AUTO;
    ctx->core.par.par_min = d.parallel_min ? d.parallel_min : BP_PARALLEL_MIN_AUTO;
    ctx->core.par.par_grain = d.parallel_min;
    if (d.workers > 1) {
        st = bp_pool_create(&al, (uint32_t)d.workers, d.enqueue_task, d.finish_task, d.task_user, &ctx->core.par.pool);
        if (st != BP_OK) {
            al.free(ctx, sizeof *ctx, al.user);
            return st;
        }
        ctx->core.heap.bytes += bp_pool_bytes(ctx->core.par.pool);
        ctx->core.heap.lock = ctx->core.par.pool;
    }
    *out = ctx;
    return BP_OK;
}

void bp_context_destroy(bp_context *ctx) {
    if (!ctx) return;
    for (int m = 0; m < BP_METHOD_COUNT; ++m)
        if (ctx->methods[m]) ctx->methods[m]->cls->destroy(ctx->methods[m]);
    bp_load_release(ctx, &ctx->load);
    BP_RELEASE(ctx, ctx->out.pairs, ctx->out.cap);
    BP_RELEASE(ctx, ctx->out.chunk, ctx->out.chunk_cap);
    bp_pair_sort_release(ctx, &ctx->sort);
    BP_RELEASE(ctx, ctx->query.data, ctx->query.cap);
    BP_RELEASE(ctx, ctx->query_tmp, ctx->query_tmp_cap);
    bp_par_release(ctx);
    bp_pool_destroy(ctx->core.par.pool);  // last: bp_free takes its lock
    ctx->core.par.pool = NULL;
    ctx->core.heap.lock = NULL;
    bp_allocator al = ctx->core.heap.alloc;
    al.free(ctx, sizeof *ctx, al.user);
}

bp_status bp_context_get_def(const bp_context *ctx, bp_context_def *def) {
    if (!ctx || !def) return BP_ERR_NULL;
    *def = ctx->core.def;
    return BP_OK;
}

bp_status bp_get_stats(const bp_context *ctx, bp_stats *stats) {
    if (!ctx || !stats) return BP_ERR_NULL;
    *stats = ctx->stats;
    stats->bytes = ctx->core.heap.bytes;
    bp_algorithm_stats(ctx->methods[ctx->stats.method], stats);
    return BP_OK;
}

// ---------------------------------------------------------------------------------------------
// Choosing and running a method

static bp_status bp_algorithm_get(bp_context *ctx, bp_method m, bp_algorithm **out) {
    if (!ctx->methods[m]) {
        const bp_algorithm_class *cls = bp_method_class(m);
        bp_algorithm *s = bp_alloc(ctx, cls->size);
        if (!s) return BP_ERR_NOMEM;
        memset(s, 0, cls->size);
        s->cls = cls;
        s->ctx = ctx;
        if (cls->init) cls->init(s);
        ctx->methods[m] = s;
    }
    *out = ctx->methods[m];
    return BP_OK;
}

// The common body of every pair-finding entry point. `fn` NULL: buffer mode into *out.
static bp_status bp_run(bp_context *ctx, int dim, const float *a, size_t na, const float *b, size_t nb,
                        bool bipartite, bp_pairs *out, bp_pair_fn *fn, void *user) {
    if (out) {
        out->pairs = NULL;
        out->count = 0;
    }
    if (!ctx) return BP_ERR_NULL;
    memset(&ctx->stats, 0, sizeof ctx->stats);
    // Every failed call leaves the context without boxes (the header's contract), argument
    // errors included, not only those found while loading.
    ctx->have_boxes = false;
    if ((!out && !fn) || (!a && na) || (!b && nb)) return BP_ERR_NULL;
    if (dim != ctx->dim) return BP_ERR_DIMENSION;
    if (na > BP_MAX_BOXES || nb > BP_MAX_BOXES || na + nb > BP_MAX_BOXES) return BP_ERR_TOO_MANY;

    // Workers only for calls large enough to pay for them (docs/architecture.md, "Threads"), and
    // the pair pass on them only where it is not bound by writing pairs.
    ctx->core.par.par = ctx->core.par.pool && na + nb >= ctx->core.par.par_min;
    ctx->core.par.par_pairs = ctx->core.par.par && ctx->last_pairs / BP_PAR_PAIRS_PER_BOX < na + nb;
    const bool sums = ctx->core.def.method == BP_METHOD_AUTO || bp_method_class(ctx->core.def.method)->frame_sums;
    bp_status st = bp_load(ctx, &ctx->load, &ctx->frame, ctx->dim, a, na, b, nb, sums);
    if (st != BP_OK) return st;
    bp_frame *f = &ctx->frame;
    // Bipartite: pairs must cross the split. With one side empty, put the split past every box
    // so that nothing crosses (the structure is still built, for queries).
    f->split = bipartite ? (na && nb ? na : na + nb) : 0;
    f->frame++;

    bp_method m = ctx->core.def.method;
    if (m == BP_METHOD_AUTO)
        m = bp_auto_choose(&ctx->autos, f, ctx->last, ctx->last_pairs, ctx->methods[BP_METHOD_GRID], &ctx->core.def);
    bp_algorithm *state = NULL;
    st = bp_algorithm_get(ctx, m, &state);
    if (st != BP_OK) return st;

    bp_sink sink;
    const bp_sink_spec spec = {(uint32_t)f->split, fn, user, ctx->core.def.sort_pairs, !ctx->core.par.par_pairs};
    st = bp_sink_open(&sink, ctx, &ctx->out, &spec);
    if (st != BP_OK) return st;
    uint64_t checks = 0;
    st = state->cls->find_pairs(state, f, &sink, &checks);
    if (st == BP_OK) st = bp_sink_collect(&sink);
    if (st == BP_OK && ctx->core.def.sort_pairs)
        st = bp_pair_sort(ctx, &ctx->sort, bp_sink_pairs(&sink), bp_sink_count(&sink), ctx->out.cap, f->n);
    if (st == BP_OK) st = bp_sink_finish(&sink);
    const uint64_t reported = bp_sink_close(&sink, st == BP_OK);
    ctx->stats.n = f->n;
    // A call that stopped or failed counts none: how far its tests got depends on the workers.
    ctx->stats.checks = st == BP_OK ? checks : 0;
    ctx->stats.method = m;
    ctx->last = m;
    ctx->stats.pairs = reported;
    if (st != BP_OK) {
        if (st != BP_ERR_STOPPED) state->cls->reset(state);
        // A stopped call still built its structure: queries stay valid.
        ctx->have_boxes = st == BP_ERR_STOPPED;
        return st;
    }
    ctx->last_pairs = reported;
    ctx->have_boxes = true;
    if (out) {
        out->pairs = ctx->out.pairs;
        out->count = ctx->out.count;
    }
    return BP_OK;
}

bp_status bp_find_pairs2(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pairs *out) {
    return bp_run(ctx, 2, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, out, NULL, NULL);
}

bp_status bp_find_pairs3(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pairs *out) {
    return bp_run(ctx, 3, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, out, NULL, NULL);
}

bp_status bp_find_pairs2_cb(bp_context *ctx, const bp_box2 *boxes, size_t n, bp_pair_fn *fn, void *user) {
    if (!fn) return BP_ERR_NULL;
    return bp_run(ctx, 2, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, NULL, fn, user);
}

bp_status bp_find_pairs3_cb(bp_context *ctx, const bp_box3 *boxes, size_t n, bp_pair_fn *fn, void *user) {
    if (!fn) return BP_ERR_NULL;
    return bp_run(ctx, 3, boxes ? (const float *)(const void *)boxes : NULL, n, NULL, 0, false, NULL, fn, user);
}

bp_status bp_find_pairs_between2(bp_context *ctx, const bp_box2 *a, size_t na, const bp_box2 *b, size_t nb,
                                 bp_pairs *out) {
    return bp_run(ctx, 2, a ? (const float *)(const void *)a : NULL, na, b ? (const float *)(const void *)b : NULL, nb, true, out, NULL, NULL);
}

bp_status bp_find_pairs_between3(bp_context *ctx, const bp_box3 *a, size_t na, const bp_box3 *b, size_t nb,
                                 bp_pairs *out) {
    return bp_run(ctx, 3, a ? (const float *)(const void *)a : NULL, na, b ? (const float *)(const void *)b : NULL, nb, true, out, NULL, NULL);
}

// ---------------------------------------------------------------------------------------------
// Region queries

static bp_status bp_run_query(bp_context *ctx, bp_query *q, bp_indices *out) {
    bp_frame *f = &ctx->frame;
    bp_algorithm *m = ctx->methods[ctx->last];
    ctx->query.heap = &ctx->core.heap;
    ctx->query.count = 0;
    bp_region_visitor rv;
    bp_region_visitor_init(&rv, q, f->boxes, f->dim, &ctx->query);
    const bp_status st = m && m->cls->visit ? m->cls->visit(m, f, &rv.base) : bp_visit_frame(f, &rv.base);
    if (st != BP_OK) {
        ctx->query.count = 0;
        return st;
    }
    size_t c = ctx->query.count;
    if (c > 1) {
        BP_RESERVE_DISCARD(ctx, ctx->query_tmp, ctx->query_tmp_cap, c);
        unsigned bits = 1;
        while (bits < 32 && ((size_t)1 << bits) < f->n) ++bits;
        bp_radix_sort32(ctx->query.data, NULL, ctx->query_tmp, NULL, c, bits);
    }
    out->indices = ctx->query.data;
    out->count = c;
    return BP_OK;
}

static bp_status bp_query_prologue(bp_context *ctx, bp_indices *out) {
    if (out) {
        out->indices = NULL;
        out->count = 0;
    }
    if (!ctx || !out) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    return BP_OK;
}

bp_status bp_query_box(bp_context *ctx, const float *lo, const float *hi, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!lo || !hi) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_box(&q, ctx->dim, lo, hi);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

bp_status bp_query_point(bp_context *ctx, const float *point, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!point) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_point(&q, ctx->dim, point);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

bp_status bp_query_sphere(bp_context *ctx, const float *center, float radius, bp_indices *out) {
    bp_status st = bp_query_prologue(ctx, out);
    if (st != BP_OK) return st;
    if (!center) return BP_ERR_NULL;
    bp_query q;
    st = bp_query_make_sphere(&q, ctx->dim, center, radius);
    return st != BP_OK ? st : bp_run_query(ctx, &q, out);
}

// ---------------------------------------------------------------------------------------------
// Debug drawing and validation

bp_status bp_debug_draw_structure(const bp_context *ctx, const bp_debug_draw *draw) {
    if (!ctx || !draw) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    const bp_algorithm *m = ctx->methods[ctx->last];
    if (m && m->cls->debug_draw) m->cls->debug_draw(m, &ctx->frame, draw);
    return BP_OK;
}

bp_status bp_validate(const bp_context *ctx) {
    if (!ctx) return BP_ERR_NULL;
    if (!ctx->have_boxes) return BP_ERR_NO_BOXES;
    const bp_algorithm *m = ctx->methods[ctx->last];
    if (m && m->cls->validate) return m->cls->validate(m, &ctx->frame);
    return BP_OK;
}
