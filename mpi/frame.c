// One frame of distributed pair finding (broadphase_mpi.h, docs/mpi.md):
//   1. check the boxes; 2. cut a balanced decomposition when there is none or the load drifted;
//   3. sort this rank's boxes out: kept here, or copied to the ranks whose regions they overlap;
//   4. exchange the copies (counts first, then the records); 5. find the pairs among the boxes
//   here and keep those whose intersection's lower corner lies in this region (each pair has
//   exactly one such region); 6. forward each pair to the rank that passed its smaller id;
//   7. deliver, and agree on the status and the load.
// Every exchange of counts carries each rank's status, so an error anywhere stops every rank at
// the same step with the same status; a local allocation before a data exchange is agreed on first.
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BPM_BATCH 4096

typedef struct timer {
    double mpi, core;
} timer;

static double now(void) { return MPI_Wtime(); }

static bp_status agree(bp_mpi_context *ctx, timer *t, bp_status st) {
    double t0 = now();
    int v = (int)st, all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, ctx->comm);
    t->mpi += now() - t0;
    return (bp_status)all;
}

// Sends (count, status) to every rank and returns the lowest status of all: every rank receives
// every rank's status, so all reach the same verdict from the same numbers.
static bp_status exchange_counts(bp_mpi_context *ctx, timer *t, bp_status st) {
    const int P = ctx->ranks;
    for (int r = 0; r < P; ++r) {
        ctx->sinfo[2 * r] = st == BP_OK ? ctx->scount[r] : 0;
        ctx->sinfo[2 * r + 1] = (int64_t)st;
    }
    double t0 = now();
    MPI_Alltoall(ctx->sinfo, 2, MPI_INT64_T, ctx->rinfo, 2, MPI_INT64_T, ctx->comm);
    t->mpi += now() - t0;
    ctx->stats.bytes_sent += 16u * (uint64_t)(P - 1);
    ctx->stats.bytes_received += 16u * (uint64_t)(P - 1);
    for (int r = 0; r < P; ++r)
        if (ctx->rinfo[2 * r + 1] < st) st = (bp_status)ctx->rinfo[2 * r + 1];
    return st;
}

// Receive counts and displacements from the exchanged counts; BP_ERR_TOO_MANY past int range.
static bp_status receive_layout(bp_mpi_context *ctx, size_t *total) {
    size_t sum = 0;
    for (int r = 0; r < ctx->ranks; ++r) {
        ctx->rcount[r] = (int)ctx->rinfo[2 * r];
        ctx->rdispl[r] = (int)sum;
        sum += (size_t)ctx->rinfo[2 * r];
        if (sum > INT_MAX) return BP_ERR_TOO_MANY;
    }
    *total = sum;
    return BP_OK;
}

static bp_status send_layout(bp_mpi_context *ctx, size_t total) {
    if (total > INT_MAX) return BP_ERR_TOO_MANY;
    int sum = 0;
    for (int r = 0; r < ctx->ranks; ++r) {
        ctx->sdispl[r] = sum;
        sum += ctx->scount[r];
    }
    return BP_OK;
}

static bp_status check_boxes(const float *boxes, size_t n, int dim) {
    bp_status st = BP_OK;
    for (size_t i = 0; i < n; ++i) {
        const float *b = boxes + i * (size_t)(2 * dim);
        for (int a = 0; a < dim; ++a) {
            if (!isfinite(b[a]) || !isfinite(b[dim + a])) return BP_ERR_NONFINITE;
            if (b[a] > b[dim + a]) st = BP_ERR_INVERTED_BOX;  // NaN elsewhere still wins
        }
    }
    return st;
}

// Step 2: every rank contributes up to `sample` box centres; all cut the same tree from them.
static bp_status decompose(bp_mpi_context *ctx, timer *t, const float *boxes, size_t n, int dim, bp_status st) {
    const size_t P = (size_t)ctx->ranks, S = ctx->sample, rec = 1 + S * (size_t)dim;
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->sample_buf, &ctx->sample_cap, (P + 1) * rec, sizeof(float));
    st = agree(ctx, t, st);
    if (st != BP_OK) return st;
    float *mine = ctx->sample_buf + P * rec;
    const size_t m = n < S ? n : S;
    mine[0] = (float)m;  // at most 2^24, exact
    for (size_t k = 0; k < m; ++k) {
        const float *b = boxes + (k * n / m) * (size_t)(2 * dim);  // evenly spaced, deterministic
        for (int a = 0; a < dim; ++a) mine[1 + k * dim + a] = b[a] * 0.5f + b[dim + a] * 0.5f;
    }
    double t0 = now();
    MPI_Allgather(mine, (int)rec, MPI_FLOAT, ctx->sample_buf, (int)rec, MPI_FLOAT, ctx->comm);
    t->mpi += now() - t0;
    ctx->stats.bytes_sent += rec * sizeof(float) * (P - 1);
    ctx->stats.bytes_received += rec * sizeof(float) * (P - 1);
    size_t total = 0;  // compact the points to the front, in rank order
    for (size_t r = 0; r < P; ++r) {
        const float *src = ctx->sample_buf + r * rec;
        const size_t c = (size_t)src[0] * (size_t)dim;
        memmove(ctx->sample_buf + total, src + 1, c * sizeof(float));
        total += c;
    }
    bpm_decomp_rcb(&ctx->decomp, ctx->sample_buf, total / (size_t)dim);
    ctx->have_decomp = true;
    ctx->rebalance = false;
    ctx->stats.rebalanced = true;
    ctx->stats.decompositions++;
    return BP_OK;
}

// Step 3 for one dimension (a constant where it is called, so the loops unroll). The boxes that
// stay here keep the caller's order (the core's temporal coherence follows indices), each with a
// flag: inside the region, so that a pair of two such boxes needs no region test later. Checks
// the boxes too unless `checked`.
static inline bp_status sort_out(bp_mpi_context *ctx, const float *boxes, const uint64_t *ids, size_t n,
                                 const int dim, bool checked, size_t *kept_out, size_t *nout_out) {
    const int me = ctx->rank;
    const size_t F = (size_t)(2 * dim);
    const float *lo = ctx->decomp.lo + 3 * me, *hi = ctx->decomp.hi + 3 * me;
    float *lb = ctx->lboxes;
    uint64_t *li = ctx->lids;
    uint8_t *lin = ctx->linside;
    size_t kept = 0, nout = 0;
    bool finite = true, ordered = true;
#if defined(__SSE2__)
    // 2D: a box is one register; finite, ordered and inside are three compares and a mask.
    const __m128 lo4 = _mm_setr_ps(lo[0], lo[1], -INFINITY, -INFINITY);
    const __m128 hi4 = _mm_setr_ps(INFINITY, INFINITY, hi[0], hi[1]);
    const __m128 zero = _mm_setzero_ps();
#endif
    for (size_t i = 0; i < n; ++i) {
        const float *b = boxes + i * F;
        bool in = true;
#if defined(__SSE2__)
        if (dim == 2) {
            const __m128 v = _mm_loadu_ps(b);
            const int fin = _mm_movemask_ps(_mm_cmpeq_ps(_mm_sub_ps(v, v), zero));  // x - x: 0, or NaN
            const int ord = _mm_movemask_ps(_mm_cmple_ps(v, _mm_movehl_ps(v, v)));  // min <= max: lanes 0, 1
            const int ins = _mm_movemask_ps(_mm_and_ps(_mm_cmpge_ps(v, lo4), _mm_cmplt_ps(v, hi4)));
            finite &= fin == 15;
            ordered &= (ord & 3) == 3;
            if (ins == 15) {
                _mm_storeu_ps(lb + kept * 4, v);
                lin[kept] = 1;
                li[kept++] = ids[i];
                continue;
            }
            in = false;
        } else
#endif
        {
            for (int a = 0; a < dim; ++a) {
                // |x| <= FLT_MAX is false for NaN and both infinities.
                finite &= (fabsf(b[a]) <= FLT_MAX) & (fabsf(b[dim + a]) <= FLT_MAX);
                ordered &= b[a] <= b[dim + a];
                in &= (b[a] >= lo[a]) & (b[dim + a] < hi[a]);
            }
        }
        if (in) {
            for (size_t k = 0; k < F; ++k) lb[kept * F + k] = b[k];
            lin[kept] = 1;
            li[kept++] = ids[i];
            continue;
        }
        if (!checked && !(finite && ordered)) continue;  // the descent needs ordered numbers
        const int c = bpm_decomp_overlaps(&ctx->decomp, b, b + dim, ctx->dests);
        bp_status st = bpm_reserve(ctx, (void **)&ctx->outgoing, &ctx->outgoing_cap, 2 * (nout + (size_t)c),
                                   sizeof(uint32_t));
        if (st != BP_OK) return st;
        for (int k = 0; k < c; ++k) {
            const int r = ctx->dests[k];
            if (r == me) {
                memcpy(lb + kept * F, b, F * sizeof(float));
                lin[kept] = 0;
                li[kept++] = ids[i];
                continue;
            }
            ctx->outgoing[2 * nout] = (uint32_t)i;
            ctx->outgoing[2 * nout + 1] = (uint32_t)r;
            ++nout;
            ctx->scount[r]++;
        }
    }
    if (!checked) {
        if (!finite) return BP_ERR_NONFINITE;
        if (!ordered) return BP_ERR_INVERTED_BOX;
    }
    *kept_out = kept, *nout_out = nout;
    return BP_OK;
}

// The core's temporal coherence needs the same box count as last frame, and ghosts and migrating
// objects change it a little every frame: the core gets a count that stays put while the real one
// varies by up to 1/64 below it, the rest filled with copies of real boxes (spread evenly, so each
// adds a pair or two; pairs with a copy are dropped). Returns the count to pass.
static size_t stable_count(bp_mpi_context *ctx, size_t nl) {
    size_t nc = ctx->core_n;
    if (nl == 0) return 0;
    if (!(nl <= nc && nc - nl <= nc / 64 + 16)) nc = nl + nl / 128 + 8;
    return nc;
}

// What one frame carries from step to step.
typedef struct frame {
    timer t;
    const float *boxes;
    const uint64_t *ids;
    size_t n;
    int dim;
    size_t kept, nout;     // step 3: boxes kept here (first in lboxes), copies to send
    size_t nrecv, nl, nc;  // step 4: copies received, real boxes here, boxes given to the core
    size_t npairs, nfwd;   // steps 5 and 6: pairs reported here, pairs forwarded
} frame;

// Step 1: the arguments (a failure still takes part in the agreements that follow).
static bp_status check_args(const bp_mpi_context *ctx, const frame *fr, bp_mpi_pair_fn *fn,
                            const bp_mpi_pairs *out) {
    if (!out && !fn) return BP_ERR_NULL;
    if (fr->n > 0 && (!fr->boxes || !fr->ids)) return BP_ERR_NULL;
    if (fr->dim != ctx->dim) return BP_ERR_DIMENSION;
    if (fr->n > BP_MAX_BOXES) return BP_ERR_TOO_MANY;
    return BP_OK;
}

// Step 3: sorts the boxes out (kept here, or copies for the ranks whose regions they overlap)
// and packs the copies by destination. Most boxes of a rank whose objects live in its region lie
// inside it: one test keeps them; the others descend the tree to every region they overlap.
static bp_status sort_out_all(bp_mpi_context *ctx, frame *fr, bool checked, bp_status st) {
    const size_t F = (size_t)(2 * ctx->dim), rec = ctx->rec_bytes, n = fr->n;
    fr->kept = fr->nout = 0;
    memset(ctx->scount, 0, (size_t)ctx->ranks * sizeof(int));
    if (st == BP_OK) {
        st = bpm_reserve(ctx, (void **)&ctx->lboxes, &ctx->lboxes_cap, n * F, sizeof(float));
        if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->lids, &ctx->lids_cap, n, sizeof(uint64_t));
        if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->linside, &ctx->linside_cap, n, sizeof(uint8_t));
    }
    if (st == BP_OK)
        st = fr->dim == 2 ? sort_out(ctx, fr->boxes, fr->ids, n, 2, checked, &fr->kept, &fr->nout)
                          : sort_out(ctx, fr->boxes, fr->ids, n, 3, checked, &fr->kept, &fr->nout);
    if (st == BP_OK) st = send_layout(ctx, fr->nout);
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->sendbuf, &ctx->sendbuf_cap, fr->nout, rec);
    if (st == BP_OK) {
        int32_t *at = ctx->dests;  // each destination's cursor
        for (int r = 0; r < ctx->ranks; ++r) at[r] = ctx->sdispl[r];
        for (size_t k = 0; k < fr->nout; ++k) {
            const uint32_t i = ctx->outgoing[2 * k];
            unsigned char *p = ctx->sendbuf + (size_t)at[ctx->outgoing[2 * k + 1]]++ * rec;
            memcpy(p, fr->boxes + i * F, F * sizeof(float));
            memcpy(p + F * sizeof(float), &fr->ids[i], sizeof(uint64_t));
        }
    }
    return st;
}

// Step 4: the copies: counts (with every rank's status), room agreed, then the records, placed
// after the kept boxes; then the copies of real boxes that keep the core's count.
static bp_status exchange_ghosts(bp_mpi_context *ctx, frame *fr, bp_status st) {
    const size_t F = (size_t)(2 * ctx->dim), rec = ctx->rec_bytes, kept = fr->kept;
    st = exchange_counts(ctx, &fr->t, st);
    if (st != BP_OK) return st;
    size_t nrecv = 0;
    st = receive_layout(ctx, &nrecv);
    if (st == BP_OK && kept + nrecv > BP_MAX_BOXES) st = BP_ERR_TOO_MANY;
    const size_t nl = kept + nrecv, nc = stable_count(ctx, nl);
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->recvbuf, &ctx->recvbuf_cap, nrecv, rec);
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->lboxes, &ctx->lboxes_cap, nc * F, sizeof(float));
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->lids, &ctx->lids_cap, nl, sizeof(uint64_t));
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->lowner, &ctx->lowner_cap, nrecv, sizeof(int32_t));
    st = agree(ctx, &fr->t, st);
    if (st != BP_OK) return st;
    double t0 = now();
    MPI_Alltoallv(ctx->sendbuf, ctx->scount, ctx->sdispl, ctx->box_type, ctx->recvbuf, ctx->rcount, ctx->rdispl,
                  ctx->box_type, ctx->comm);
    fr->t.mpi += now() - t0;
    for (int r = 0; r < ctx->ranks; ++r)
        for (int k = 0; k < ctx->rcount[r]; ++k) {
            const unsigned char *p = ctx->recvbuf + (size_t)(ctx->rdispl[r] + k) * rec;
            const size_t at = kept + (size_t)ctx->rdispl[r] + (size_t)k;
            uint64_t id;
            memcpy(&id, p + F * sizeof(float), sizeof id);
            memcpy(ctx->lboxes + at * F, p, F * sizeof(float));
            ctx->lids[at] = id;
            ctx->lowner[at - kept] = r;
        }
    for (size_t k = nl; k < nc; ++k)  // the copies that keep the core's count
        memcpy(ctx->lboxes + k * F, ctx->lboxes + ((k - nl) * nl / (nc - nl)) * F, F * sizeof(float));
    fr->nrecv = nrecv, fr->nl = nl, fr->nc = nc;
    ctx->stats.objects = fr->n;
    ctx->stats.kept = kept;
    ctx->stats.ghosts_sent = fr->nout;
    ctx->stats.ghosts_received = nrecv;
    ctx->stats.bytes_sent += fr->nout * rec;
    ctx->stats.bytes_received += nrecv * rec;
    return BP_OK;
}

// Step 5's filter: of the core's pairs, those whose intersection's lower corner (the larger of
// the two mins on each axis) this region holds, kept here or queued for the rank that reports
// them (the one that passed the smaller id).
static void keep_pairs(bp_mpi_context *ctx, frame *fr, const bp_pairs *cp) {
    const int me = ctx->rank, dim = fr->dim;
    const size_t F = (size_t)(2 * dim), nl = fr->nl, kept = fr->kept;
    const float *lo = ctx->decomp.lo + 3 * me, *hi = ctx->decomp.hi + 3 * me;
    const float *lb = ctx->lboxes;
    size_t npairs = 0, nfwd = 0, nreal = 0;
    for (size_t k = 0; k < cp->count; ++k) {
        const uint32_t i = cp->pairs[k].i, j = cp->pairs[k].j;
        if (i >= nl || j >= nl) continue;  // a copy
        ++nreal;
        // Two boxes inside the region meet inside it: no test, no box to read.
        if (!(i < kept && j < kept && ctx->linside[i] & ctx->linside[j])) {
            bool mine = true;
            for (int a = 0; a < dim; ++a) {
                const float x = lb[i * F + a] > lb[j * F + a] ? lb[i * F + a] : lb[j * F + a];
                mine &= (x >= lo[a]) & (x < hi[a]);
            }
            if (!mine) continue;
        }
        const uint64_t ia = ctx->lids[i], ib = ctx->lids[j];
        if (ia == ib) continue;  // the same id twice: the caller broke uniqueness
        const bp_mpi_pair pr = ia < ib ? (bp_mpi_pair){ia, ib} : (bp_mpi_pair){ib, ia};
        const uint32_t o = ia < ib ? i : j;
        const int owner = o < kept ? me : ctx->lowner[o - kept];
        if (owner == me) {
            ctx->pairs[npairs++] = pr;
        } else {
            ctx->fwd[nfwd] = pr;
            ctx->fwd_dest[nfwd++] = owner;
            ctx->scount[owner]++;
        }
    }
    fr->npairs = npairs, fr->nfwd = nfwd;
    ctx->stats.pairs_found = nreal;
    ctx->stats.pairs_forwarded = nfwd;
}

// Step 5: the core's pairs among the boxes here, filtered (keep_pairs), the forwarded ones
// packed by destination.
static bp_status find_here(bp_mpi_context *ctx, frame *fr) {
    bp_pairs cp = {NULL, 0};
    double t0 = now();
    bp_status st = fr->dim == 2 ? bp_find_pairs2(ctx->core, (const bp_box2 *)(const void *)ctx->lboxes, fr->nc, &cp)
                                : bp_find_pairs3(ctx->core, (const bp_box3 *)(const void *)ctx->lboxes, fr->nc, &cp);
    fr->t.core += now() - t0;
    ctx->core_n = st == BP_OK ? fr->nc : 0;
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->pairs, &ctx->pairs_cap, cp.count, sizeof(bp_mpi_pair));
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->fwd, &ctx->fwd_cap, cp.count, sizeof(bp_mpi_pair));
    if (st == BP_OK) st = bpm_reserve(ctx, (void **)&ctx->fwd_dest, &ctx->fwd_dest_cap, cp.count, sizeof(int32_t));
    fr->npairs = fr->nfwd = 0;
    memset(ctx->scount, 0, (size_t)ctx->ranks * sizeof(int));
    if (st == BP_OK) {
        keep_pairs(ctx, fr, &cp);
        st = send_layout(ctx, fr->nfwd);
    }
    if (st == BP_OK)
        st = bpm_reserve(ctx, (void **)&ctx->fwd_send, &ctx->fwd_send_cap, fr->nfwd, sizeof(bp_mpi_pair));
    if (st == BP_OK) {
        int32_t *at = ctx->dests;
        for (int r = 0; r < ctx->ranks; ++r) at[r] = ctx->sdispl[r];
        for (size_t k = 0; k < fr->nfwd; ++k) ctx->fwd_send[at[ctx->fwd_dest[k]]++] = ctx->fwd[k];
    }
    return st;
}

// Step 6: the forwarded pairs to their reporting ranks, appended to theirs.
static bp_status forward_pairs(bp_mpi_context *ctx, frame *fr, bp_status st) {
    st = exchange_counts(ctx, &fr->t, st);
    if (st != BP_OK) return st;
    size_t nin = 0;
    st = receive_layout(ctx, &nin);
    if (st == BP_OK)
        st = bpm_reserve(ctx, (void **)&ctx->pairs, &ctx->pairs_cap, fr->npairs + nin, sizeof(bp_mpi_pair));
    st = agree(ctx, &fr->t, st);
    if (st != BP_OK) return st;
    double t0 = now();
    MPI_Alltoallv(ctx->fwd_send, ctx->scount, ctx->sdispl, ctx->pair_type, ctx->pairs + fr->npairs, ctx->rcount,
                  ctx->rdispl, ctx->pair_type, ctx->comm);
    fr->t.mpi += now() - t0;
    ctx->stats.bytes_sent += fr->nfwd * sizeof(bp_mpi_pair);
    ctx->stats.bytes_received += nin * sizeof(bp_mpi_pair);
    fr->npairs += nin;
    return BP_OK;
}

// Step 7: delivers to fn, then one gather of (load, status): the verdict on a stopped callback
// and the load that decides the next frame's rebalance, the same numbers on every rank.
static bp_status deliver(bp_mpi_context *ctx, frame *fr, bp_mpi_pair_fn *fn, void *user) {
    const int P = ctx->ranks;
    bp_status st = BP_OK;
    if (fn) {
        for (size_t k = 0; k < fr->npairs; k += BPM_BATCH) {
            const size_t c = fr->npairs - k < BPM_BATCH ? fr->npairs - k : BPM_BATCH;
            if (!fn(ctx->pairs + k, c, user)) {
                st = BP_ERR_STOPPED;
                break;
            }
        }
    }
    int64_t mine[2] = {(int64_t)fr->nl, (int64_t)st};
    double t0 = now();
    MPI_Allgather(mine, 2, MPI_INT64_T, ctx->rinfo, 2, MPI_INT64_T, ctx->comm);
    fr->t.mpi += now() - t0;
    ctx->stats.bytes_sent += 16u * (uint64_t)(P - 1);
    ctx->stats.bytes_received += 16u * (uint64_t)(P - 1);
    int64_t max = 0, sum = 0;
    for (int r = 0; r < P; ++r) {
        const int64_t load = ctx->rinfo[2 * r];
        if (load > max) max = load;
        sum += load;
        if (ctx->rinfo[2 * r + 1] < st) st = (bp_status)ctx->rinfo[2 * r + 1];
    }
    ctx->stats.imbalance = sum > 0 ? (double)max * P / (double)sum - 1.0 : 0.0;
    if (!ctx->user_grid && ctx->stats.imbalance > ctx->def.rebalance_threshold) ctx->rebalance = true;
    return st;
}

// The frame's result and times, after success or failure (then no pairs).
static bp_status finish(bp_mpi_context *ctx, const frame *fr, double t_start, bp_mpi_pairs *out, bp_status st) {
    const size_t npairs = st == BP_OK ? fr->npairs : 0;
    if (out) out->pairs = st == BP_OK ? ctx->pairs : NULL, out->count = npairs;
    ctx->stats.pairs = npairs;
    ctx->stats.seconds_mpi = fr->t.mpi;
    ctx->stats.seconds_core = fr->t.core;
    ctx->stats.seconds_local = now() - t_start - fr->t.mpi;
    return st;
}

bp_status bpm_find(bp_mpi_context *ctx, const float *boxes, const uint64_t *ids, size_t n, int dim,
                   bp_mpi_pair_fn *fn, void *user, bp_mpi_pairs *out) {
    const double t_start = now();
    frame fr = {{0, 0}, boxes, ids, n, dim, 0, 0, 0, 0, 0, 0, 0};
    if (out) out->pairs = NULL, out->count = 0;
    const uint32_t decompositions = ctx->stats.decompositions;
    memset(&ctx->stats, 0, sizeof ctx->stats);
    ctx->stats.decompositions = decompositions;

    bp_status st = check_args(ctx, &fr, fn, out);
    // 2. The decomposition. have_decomp, rebalance and user_grid change only collectively, so
    //    every rank takes this branch together. Its sample must come from checked boxes; on
    //    other frames the boxes are checked while they are sorted out.
    bool checked = false;
    if (!ctx->have_decomp || (ctx->rebalance && !ctx->user_grid)) {
        if (st == BP_OK) st = check_boxes(boxes, n, dim);
        checked = true;
        st = decompose(ctx, &fr.t, boxes, n, dim, st);
        if (st != BP_OK) return finish(ctx, &fr, t_start, out, st);
    }
    st = sort_out_all(ctx, &fr, checked, st);
    st = exchange_ghosts(ctx, &fr, st);
    if (st != BP_OK) return finish(ctx, &fr, t_start, out, st);
    st = find_here(ctx, &fr);
    st = forward_pairs(ctx, &fr, st);
    if (st == BP_OK) st = deliver(ctx, &fr, fn, user);
    return finish(ctx, &fr, t_start, out, st);
}
