// broadphase_mpi's context: creation, the caller's grid, local queries, statistics, memory.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

// The definition structs' rule (broadphase.h, "Definition structs"; the core's src/def.h):
// bp_mpi_default_def() stamps its def with this value, bp_mpi_create accepts no other.
#define BPM_DEF_MADE 0x42504446u

bp_mpi_def bp_mpi_default_def(void) {
    // Every field not named is zero: the C library's allocator, the automatic sample.
    return (bp_mpi_def){.comm = MPI_COMM_WORLD, .dimension = 2, .method = BP_METHOD_AUTO, .workers = 1,
                        .rebalance_threshold = 0.25f, .internal_value = BPM_DEF_MADE};
}

void *bpm_alloc(bp_mpi_context *ctx, size_t bytes) {
    if (bytes == 0) bytes = 1;
    void *p = ctx->def.allocator.alloc ? ctx->def.allocator.alloc(bytes, 16, ctx->def.allocator.user) : malloc(bytes);
    if (p) ctx->bytes += bytes;
    return p;
}

void bpm_free(bp_mpi_context *ctx, void *p, size_t bytes) {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    ctx->bytes -= bytes;
    if (ctx->def.allocator.free) ctx->def.allocator.free(p, bytes, ctx->def.allocator.user);
    else free(p);
}

bp_status bpm_reserve(bp_mpi_context *ctx, void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return BP_OK;
    size_t want = *cap ? *cap : 256;
    while (want < need) {
        if (want > SIZE_MAX / 2 / elem) return BP_ERR_NOMEM;
        want *= 2;
    }
    void *q = bpm_alloc(ctx, want * elem);
    if (!q) return BP_ERR_NOMEM;
    if (*cap) memcpy(q, *p, *cap * elem);
    bpm_free(ctx, *p, *cap * elem);
    *p = q;
    *cap = want;
    return BP_OK;
}

// Every rank's status in, the lowest out: the agreement that keeps errors collective.
static bp_status agree(MPI_Comm comm, bp_status st) {
    int v = (int)st, all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, comm);
    return (bp_status)all;
}

// The per-rank arrays of fixed size, allocated once.
static bp_status alloc_fixed(bp_mpi_context *ctx) {
    const size_t P = (size_t)ctx->ranks;
    bpm_decomp *d = &ctx->decomp;
    d->dim = ctx->dim;
    d->ranks = ctx->ranks;
    if (P > 1 && !(d->nodes = bpm_alloc(ctx, (P - 1) * sizeof(bpm_node)))) return BP_ERR_NOMEM;
    if (!(d->lo = bpm_alloc(ctx, 3 * P * sizeof(float)))) return BP_ERR_NOMEM;
    if (!(d->hi = bpm_alloc(ctx, 3 * P * sizeof(float)))) return BP_ERR_NOMEM;
    if (!(ctx->dests = bpm_alloc(ctx, P * sizeof(int32_t)))) return BP_ERR_NOMEM;
    if (!(ctx->scount = bpm_alloc(ctx, P * sizeof(int)))) return BP_ERR_NOMEM;
    if (!(ctx->sdispl = bpm_alloc(ctx, P * sizeof(int)))) return BP_ERR_NOMEM;
    if (!(ctx->rcount = bpm_alloc(ctx, P * sizeof(int)))) return BP_ERR_NOMEM;
    if (!(ctx->rdispl = bpm_alloc(ctx, P * sizeof(int)))) return BP_ERR_NOMEM;
    if (!(ctx->sinfo = bpm_alloc(ctx, 2 * P * sizeof(int64_t)))) return BP_ERR_NOMEM;
    if (!(ctx->rinfo = bpm_alloc(ctx, 2 * P * sizeof(int64_t)))) return BP_ERR_NOMEM;
    return BP_OK;
}

// Frees everything but the communicator and the datatypes (create's failure path and destroy).
static void free_local(bp_mpi_context *ctx) {
    const size_t P = (size_t)ctx->ranks, rec = ctx->rec_bytes;
    bp_context_destroy(ctx->core);
    ctx->core = NULL;
    bpm_free(ctx, ctx->decomp.nodes, P > 1 ? (P - 1) * sizeof(bpm_node) : 0);
    bpm_free(ctx, ctx->decomp.lo, 3 * P * sizeof(float));
    bpm_free(ctx, ctx->decomp.hi, 3 * P * sizeof(float));
    bpm_free(ctx, ctx->dests, P * sizeof(int32_t));
    bpm_free(ctx, ctx->scount, P * sizeof(int));
    bpm_free(ctx, ctx->sdispl, P * sizeof(int));
    bpm_free(ctx, ctx->rcount, P * sizeof(int));
    bpm_free(ctx, ctx->rdispl, P * sizeof(int));
    bpm_free(ctx, ctx->sinfo, 2 * P * sizeof(int64_t));
    bpm_free(ctx, ctx->rinfo, 2 * P * sizeof(int64_t));
    bpm_free(ctx, ctx->lboxes, ctx->lboxes_cap * sizeof(float));
    bpm_free(ctx, ctx->lids, ctx->lids_cap * sizeof(uint64_t));
    bpm_free(ctx, ctx->linside, ctx->linside_cap);
    bpm_free(ctx, ctx->lowner, ctx->lowner_cap * sizeof(int32_t));
    bpm_free(ctx, ctx->outgoing, ctx->outgoing_cap * sizeof(uint32_t));
    bpm_free(ctx, ctx->sendbuf, ctx->sendbuf_cap * rec);
    bpm_free(ctx, ctx->recvbuf, ctx->recvbuf_cap * rec);
    bpm_free(ctx, ctx->fwd, ctx->fwd_cap * sizeof(bp_mpi_pair));
    bpm_free(ctx, ctx->fwd_dest, ctx->fwd_dest_cap * sizeof(int32_t));
    bpm_free(ctx, ctx->fwd_send, ctx->fwd_send_cap * sizeof(bp_mpi_pair));
    bpm_free(ctx, ctx->pairs, ctx->pairs_cap * sizeof(bp_mpi_pair));
    bpm_free(ctx, ctx->sample_buf, ctx->sample_cap * sizeof(float));
}

bp_status bp_mpi_create(const bp_mpi_def *def, bp_mpi_context **out) {
    // A NULL argument on one rank must not leave the others waiting in the agreement below, but
    // without def there is no communicator to agree on: MPI_COMM_WORLD is the only guess.
    if (!out) return BP_ERR_NULL;
    *out = NULL;
    if (!def) return BP_ERR_NULL;
    if (def->internal_value != BPM_DEF_MADE) return BP_ERR_DEF_NOT_INITIALISED;  // its comm may be 0
    bp_status st = BP_OK;
    if (def->comm == MPI_COMM_NULL) return BP_ERR_INVALID_ARG;
    if (def->dimension != 2 && def->dimension != 3) st = BP_ERR_INVALID_ARG;
    if ((int)def->method < 0 || def->method >= BP_METHOD_COUNT) st = BP_ERR_INVALID_ARG;
    if (!(def->rebalance_threshold >= 0.0f && def->rebalance_threshold <= 1e3f)) st = BP_ERR_INVALID_ARG;
    if (!def->allocator.alloc != !def->allocator.free) st = BP_ERR_INVALID_ARG;
    if (st == BP_OK && !bp_method_available(def->method)) st = BP_ERR_UNSUPPORTED;

    int ranks = 1, rank = 0;
    MPI_Comm_size(def->comm, &ranks);
    MPI_Comm_rank(def->comm, &rank);
    // The fields every rank must share: compared as min and max over the ranks.
    int mine[4] = {def->dimension, (int)def->method, st == BP_OK ? (int)(def->rebalance_threshold * 1e6f) : -1,
                   (int)(def->sample & 0x7fffffff)};
    int lo[4], hi[4];
    MPI_Allreduce(mine, lo, 4, MPI_INT, MPI_MIN, def->comm);
    MPI_Allreduce(mine, hi, 4, MPI_INT, MPI_MAX, def->comm);
    if (memcmp(lo, hi, sizeof lo) != 0 && st == BP_OK) st = BP_ERR_INVALID_ARG;

    bp_mpi_context *ctx = NULL;
    if (st == BP_OK) {
        ctx = def->allocator.alloc ? def->allocator.alloc(sizeof *ctx, 16, def->allocator.user) : malloc(sizeof *ctx);
        if (!ctx) st = BP_ERR_NOMEM;
    }
    if (ctx) {
        memset(ctx, 0, sizeof *ctx);
        ctx->def = *def;
        ctx->rank = rank;
        ctx->ranks = ranks;
        ctx->dim = def->dimension;
        ctx->rec_bytes = (size_t)(2 * ctx->dim) * sizeof(float) + sizeof(uint64_t);
        uint32_t s = def->sample ? def->sample : (uint32_t)(65536 / ranks);
        if (!def->sample) s = s < 16 ? 16 : s > 1024 ? 1024 : s;
        ctx->sample = s;
        st = alloc_fixed(ctx);
        if (st == BP_OK) {
            bp_context_def cd = bp_default_context_def();
            cd.dimension = ctx->dim;
            cd.method = def->method;
            cd.workers = def->workers;
            cd.allocator = def->allocator;
            st = bp_context_create(&cd, &ctx->core);
        }
    }
    st = agree(def->comm, st);
    if (st != BP_OK) {
        if (ctx) {
            free_local(ctx);
            if (def->allocator.free) def->allocator.free(ctx, sizeof *ctx, def->allocator.user);
            else free(ctx);
        }
        return st;
    }
    // Our own communicator: the library's messages never meet the caller's.
    MPI_Comm_dup(def->comm, &ctx->comm);
    MPI_Type_contiguous((int)ctx->rec_bytes, MPI_BYTE, &ctx->box_type);
    MPI_Type_commit(&ctx->box_type);
    MPI_Type_contiguous((int)sizeof(bp_mpi_pair), MPI_BYTE, &ctx->pair_type);
    MPI_Type_commit(&ctx->pair_type);
    ctx->bytes += sizeof *ctx;
    *out = ctx;
    return BP_OK;
}

void bp_mpi_destroy(bp_mpi_context *ctx) {
    if (!ctx) return;
    free_local(ctx);
    MPI_Type_free(&ctx->box_type);
    MPI_Type_free(&ctx->pair_type);
    MPI_Comm_free(&ctx->comm);
    bp_allocator a = ctx->def.allocator;
    if (a.free) a.free(ctx, sizeof *ctx, a.user);
    else free(ctx);
}

bp_status bp_mpi_set_grid(bp_mpi_context *ctx, const int *counts, const float *cuts) {
    if (!ctx) return BP_ERR_NULL;  // no communicator to agree on
    const int dim = ctx->dim;
    bp_status st = BP_OK;
    // A fingerprint of the grid (counts and the cuts' bits), compared over the ranks.
    uint64_t h = 1469598103934665603u;
    if (counts) {
        long long product = 1;
        int ncuts = 0;
        for (int a = 0; a < dim; ++a) {
            if (counts[a] < 1 || counts[a] > ctx->ranks) st = BP_ERR_INVALID_ARG;
            else product *= counts[a], ncuts += counts[a] - 1;
            h = (h ^ (uint64_t)(unsigned)counts[a]) * 1099511628211u;
        }
        if (st == BP_OK && product != ctx->ranks) st = BP_ERR_INVALID_ARG;
        if (st == BP_OK && ncuts > 0 && !cuts) st = BP_ERR_NULL;
        if (st == BP_OK) {
            const float *c = cuts;
            for (int a = 0; a < dim; ++a) {
                for (int i = 0; i < counts[a] - 1; ++i) {
                    if (!isfinite(c[i])) st = BP_ERR_NONFINITE;
                    else if (i > 0 && !(c[i] >= c[i - 1])) st = BP_ERR_INVALID_ARG;
                    uint32_t bits;
                    memcpy(&bits, &c[i], sizeof bits);
                    h = (h ^ bits) * 1099511628211u;
                }
                c += counts[a] - 1;
            }
        }
    }
    if (st != BP_OK) h = 0;  // the fingerprints of a failing rank differ from the others' anyway
    uint64_t hs[2] = {h, ~h}, all[2];
    int v = (int)st, vall;
    double t0 = MPI_Wtime();
    MPI_Allreduce(hs, all, 2, MPI_UINT64_T, MPI_MAX, ctx->comm);
    MPI_Allreduce(&v, &vall, 1, MPI_INT, MPI_MIN, ctx->comm);
    ctx->stats.seconds_mpi = MPI_Wtime() - t0;
    st = (bp_status)vall;
    if (st == BP_OK && (all[0] != h || all[1] != ~h)) st = BP_ERR_INVALID_ARG;  // grids differ
    if (st != BP_OK) return st;
    if (!counts) {
        ctx->user_grid = false;
        ctx->rebalance = true;
        return BP_OK;
    }
    bpm_decomp_grid(&ctx->decomp, counts, cuts);
    ctx->have_decomp = true;
    ctx->user_grid = true;
    ctx->rebalance = false;
    ctx->stats.decompositions++;
    return BP_OK;
}

bp_status bp_mpi_rank_of(const bp_mpi_context *ctx, const float *point, int *rank) {
    if (!ctx || !point || !rank) return BP_ERR_NULL;
    for (int a = 0; a < ctx->dim; ++a)
        if (!isfinite(point[a])) return BP_ERR_NONFINITE;
    if (!ctx->have_decomp) return BP_ERR_NO_BOXES;
    *rank = bpm_decomp_locate(&ctx->decomp, point);
    return BP_OK;
}

bp_status bp_mpi_get_region(const bp_mpi_context *ctx, int rank, float *lo, float *hi) {
    if (!ctx || !lo || !hi) return BP_ERR_NULL;
    if (rank < 0 || rank >= ctx->ranks) return BP_ERR_INVALID_ARG;
    if (!ctx->have_decomp) return BP_ERR_NO_BOXES;
    memcpy(lo, ctx->decomp.lo + 3 * rank, (size_t)ctx->dim * sizeof(float));
    memcpy(hi, ctx->decomp.hi + 3 * rank, (size_t)ctx->dim * sizeof(float));
    return BP_OK;
}

bp_status bp_mpi_get_stats(const bp_mpi_context *ctx, bp_mpi_stats *stats) {
    if (!ctx || !stats) return BP_ERR_NULL;
    *stats = ctx->stats;
    bp_stats cs;
    stats->bytes = ctx->bytes + (bp_get_stats(ctx->core, &cs) == BP_OK ? cs.bytes : 0);
    return BP_OK;
}

bp_status bp_mpi_find_pairs2(bp_mpi_context *ctx, const bp_box2 *boxes, const uint64_t *ids, size_t n,
                             bp_mpi_pairs *out) {
    if (!ctx) return BP_ERR_NULL;
    return bpm_find(ctx, (const float *)(const void *)boxes, ids, n, 2, NULL, NULL, out);
}

bp_status bp_mpi_find_pairs3(bp_mpi_context *ctx, const bp_box3 *boxes, const uint64_t *ids, size_t n,
                             bp_mpi_pairs *out) {
    if (!ctx) return BP_ERR_NULL;
    return bpm_find(ctx, (const float *)(const void *)boxes, ids, n, 3, NULL, NULL, out);
}

bp_status bp_mpi_find_pairs2_cb(bp_mpi_context *ctx, const bp_box2 *boxes, const uint64_t *ids, size_t n,
                                bp_mpi_pair_fn *fn, void *user) {
    if (!ctx) return BP_ERR_NULL;
    return bpm_find(ctx, (const float *)(const void *)boxes, ids, n, 2, fn, user, NULL);
}

bp_status bp_mpi_find_pairs3_cb(bp_mpi_context *ctx, const bp_box3 *boxes, const uint64_t *ids, size_t n,
                                bp_mpi_pair_fn *fn, void *user) {
    if (!ctx) return BP_ERR_NULL;
    return bpm_find(ctx, (const float *)(const void *)boxes, ids, n, 3, fn, user, NULL);
}
