// broadphase_mpi against the single-process answer (issue #18), run under mpirun with 1 to 4
// ranks (tests/mpi.cmake). Every rank builds the same scene; the ranks split the objects among
// them in ways that change from frame to frame; rank 0 gathers what every rank reported and
// compares it with brute force over all the objects: the same pairs, none twice, each on the
// rank that passed its smaller id. Errors: a bad box, a NULL, a wrong dimension or a stopping
// callback on one rank gives every rank the same status, and the next frame is right again;
// failing each allocation in turn on one rank gives every rank BP_ERR_NOMEM and leaks nothing.
#include <mpi.h>

#include "broadphase_mpi.h"
#include "harness.h"
#include "scene.h"

static int rank_, ranks_;

// Global ids far from the indices, all 64 bits used: index k -> k * odd + offset (a bijection).
static uint64_t id_of(size_t k) { return (uint64_t)k * 0x9E3779B97F4A7C15u + 0x0123456789ABCDEFu; }

typedef struct u64pairs {
    bp_mpi_pair *v;
    size_t n, cap;
} u64pairs;

static void u64pairs_push(u64pairs *p, const bp_mpi_pair *src, size_t count) {
    if (count == 0) return;
    if (p->n + count > p->cap) {
        p->cap = (p->n + count) * 2 + 16;
        p->v = bpt_xrealloc(p->v, p->cap * sizeof *p->v);
    }
    memcpy(p->v + p->n, src, count * sizeof *src);
    p->n += count;
}

static int cmp_pair(const void *a, const void *b) {
    const bp_mpi_pair *x = a, *y = b;
    return bpt_cmp_keys(x->a, x->b, y->a, y->b);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool collect(const bp_mpi_pair *pairs, size_t count, void *user) {
    CHECK(count > 0 && count <= 4096);
    u64pairs_push(user, pairs, count);
    return true;
}

// The statuses of every rank are the same one.
static void check_same_everywhere(bp_status st) {
    int v = (int)st, lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK_MSG(lo == hi, "ranks returned different statuses: %d (%s) .. %d (%s)", lo, bp_status_string(lo), hi,
              bp_status_string(hi));
}

// This rank's objects of the frame, by rule `mode`:
//   0: by index, scattered (k % ranks, rotated by the frame): nearly every box travels;
//   1: by the library's regions (by centre), as a simulation that migrates its objects;
//   2: as 0, but rank 0 holds nothing.
static size_t pick(const float *all, size_t n, int dim, int mode, int frame, const bp_mpi_context *ctx, float *boxes,
                   uint64_t *ids) {
    const size_t F = (size_t)(2 * dim);
    size_t m = 0;
    for (size_t k = 0; k < n; ++k) {
        int owner = (int)((k + (size_t)frame) % (size_t)ranks_);
        if (mode == 2 && ranks_ > 1) owner = 1 + (int)((k + (size_t)frame) % (size_t)(ranks_ - 1));
        if (mode == 1) {
            float c[3];
            for (int a = 0; a < dim; ++a) c[a] = all[k * F + a] * 0.5f + all[k * F + dim + a] * 0.5f;
            if (bp_mpi_rank_of(ctx, c, &owner) != BP_OK) owner = (int)(k % (size_t)ranks_);
        }
        if (owner != rank_) continue;
        memcpy(boxes + m * F, all + k * F, F * sizeof(float));
        ids[m++] = id_of(k);
    }
    return m;
}

// A case's dimension (its argument), object count, scene and buffers: every box, this rank's
// boxes and their ids.
typedef struct {
    int dim;
    size_t n;
    bp_scene s;
    float *all, *mine;
    uint64_t *ids;
} mpi_rig;

// The buffers, no scene yet.
static mpi_rig rig_buffers(int argc, char **argv, size_t n) {
    mpi_rig rig = {.dim = bpt_dim_arg(argc, argv, 0), .n = n};
    const size_t F = (size_t)(2 * rig.dim);
    rig.all = bpt_xrealloc(NULL, n * F * sizeof(float));
    rig.mine = bpt_xrealloc(NULL, n * F * sizeof(float));
    rig.ids = bpt_xrealloc(NULL, n * sizeof(uint64_t));
    return rig;
}

// The scene of n objects of this kind (the suite's seed), then the buffers.
static mpi_rig rig_open(int argc, char **argv, bp_scene_kind kind, size_t n) {
    mpi_rig rig = rig_buffers(argc, argv, n);
    CHECK(bp_scene_init_kind(&rig.s, kind, n, rig.dim, bpt_seed) == 0);
    return rig;
}

static void rig_free_buffers(mpi_rig *rig) {
    free(rig->all), free(rig->mine), free(rig->ids);
}

// A context that must be created.
static bp_mpi_context *create_ok(const bp_mpi_def *def) {
    bp_mpi_context *ctx = NULL;
    CHECK_OK(bp_mpi_create(def, &ctx));
    return ctx;
}

// Ends a case: its pairs, its context, its buffers and its scene.
static void end_case(bp_mpi_context *ctx, u64pairs *got, mpi_rig *rig) {
    free(got->v);
    bp_mpi_destroy(ctx);
    rig_free_buffers(rig);
    bp_scene_free(&rig->s);
}

// Gathers every rank's pairs on rank 0 and compares them with brute force over `all`; every rank
// first checks that each of its pairs has its smaller id among its own objects.
static void expect_union(const float *all, size_t n, int dim, const bp_mpi_pair *got, size_t count,
                         const uint64_t *ids, size_t m) {
    uint64_t *own = bpt_xrealloc(NULL, (m + 1) * sizeof(uint64_t));
    memcpy(own, ids, m * sizeof(uint64_t));
    qsort(own, m, sizeof(uint64_t), cmp_u64);
    for (size_t k = 0; k < count; ++k) {
        CHECK_MSG(got[k].a < got[k].b, "pair not ordered");
        CHECK_MSG(bsearch(&got[k].a, own, m, sizeof(uint64_t), cmp_u64) != NULL,
                  "rank %d reported a pair whose smaller id is not its own", rank_);
    }
    free(own);
    int c = (int)count, *counts = NULL, *displs = NULL;
    if (rank_ == 0) counts = bpt_xrealloc(NULL, (size_t)ranks_ * sizeof(int)), displs = bpt_xrealloc(NULL, (size_t)ranks_ * sizeof(int));
    MPI_Gather(&c, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (rank_ == 0)
        for (int r = 0; r < ranks_; ++r) {
            displs[r] = (int)(total * 2);
            counts[r] *= 2;
            total += (size_t)counts[r] / 2;
        }
    bp_mpi_pair *all_pairs = rank_ == 0 ? bpt_xrealloc(NULL, (total + 1) * sizeof(bp_mpi_pair)) : NULL;
    MPI_Gatherv(got, c * 2, MPI_UINT64_T, all_pairs, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        bpt_pairs want = {0};
        bpt_brute(all, n, dim, &want);
        bp_mpi_pair *w = bpt_xrealloc(NULL, (want.n + 1) * sizeof(bp_mpi_pair));
        for (size_t k = 0; k < want.n; ++k) {
            uint64_t x = id_of(want.k[k] >> 32), y = id_of(want.k[k] & 0xffffffffu);
            w[k] = x < y ? (bp_mpi_pair){x, y} : (bp_mpi_pair){y, x};
        }
        qsort(w, want.n, sizeof *w, cmp_pair);
        qsort(all_pairs, total, sizeof *all_pairs, cmp_pair);
        for (size_t k = 1; k < total; ++k)
            CHECK_MSG(cmp_pair(&all_pairs[k - 1], &all_pairs[k]) != 0, "a pair reported twice");
        CHECK_MSG(total == want.n, "%zu pairs over the ranks, brute force finds %zu", total, want.n);
        for (size_t k = 0; k < total; ++k) CHECK_MSG(cmp_pair(&all_pairs[k], &w[k]) == 0, "pair sets differ at %zu", k);
        free(w);
        bpt_pairs_free(&want);
        free(counts), free(displs);
    }
    free(all_pairs);
}

static bp_status find(bp_mpi_context *ctx, int dim, const float *boxes, const uint64_t *ids, size_t m, bool cb,
                      u64pairs *got) {
    got->n = 0;
    if (cb) {
        return dim == 2 ? bp_mpi_find_pairs2_cb(ctx, bpt_as2(boxes), ids, m, collect, got)
                        : bp_mpi_find_pairs3_cb(ctx, bpt_as3(boxes), ids, m, collect, got);
    }
    bp_mpi_pairs out;
    bp_status st = dim == 2 ? bp_mpi_find_pairs2(ctx, bpt_as2(boxes), ids, m, &out)
                            : bp_mpi_find_pairs3(ctx, bpt_as3(boxes), ids, m, &out);
    if (st == BP_OK) u64pairs_push(got, out.pairs, out.count);
    else CHECK(out.count == 0);
    return st;
}

// A counting allocator that fails its `fail_at`-th allocation (0: never).
typedef struct failing {
    long count, fail_at;
    size_t live;
    bool failed;
} failing;

static void *f_alloc(size_t size, size_t align, void *user) {
    failing *f = user;
    if (++f->count == f->fail_at) {
        f->failed = true;
        return NULL;
    }
    // The alignment asked is part of the hooks' contract (debug builds assert it).
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p) f->live += size;
    return p;
}

static void f_free(void *p, size_t size, void *user) {
    failing *f = user;
    f->live -= size;
    free(p);
}

// A grid for `ranks_` ranks over [0, world]^dim: as square as the factors allow.
static void grid_for(int dim, double world, int *counts, float *cuts) {
    int f[3] = {ranks_, 1, 1};
    if (ranks_ == 4) f[0] = 2, f[1] = 2;
    int at = 0;
    for (int a = 0; a < dim; ++a) {
        counts[a] = f[a];
        for (int i = 1; i < f[a]; ++i) cuts[at++] = (float)(world * i / f[a] * (a == 0 ? 0.9 : 1.0));
    }
}

// The statistics agree between ranks: copies sent = copies received, forwarded pairs arrive,
// the global fields are the same everywhere; a threshold of 0 cuts new regions every frame, and
// the caller's grid (frames 4-5) never.
static void check_stats(const bp_mpi_stats *st, int frame, int variant, bool grid, double prev_imbalance) {
    uint64_t mine[4] = {st->ghosts_sent, st->ghosts_received, st->pairs_forwarded, st->pairs}, sum[4];
    MPI_Allreduce(mine, sum, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(sum[0], sum[1]);
    CHECK(st->kept + st->ghosts_received >= st->kept);
    double imb[2] = {st->imbalance, -st->imbalance}, ext[2];
    MPI_Allreduce(imb, ext, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(ext[0] == -ext[1]);
    int rb = st->rebalanced, rbs[2], neg[2] = {rb, -rb};
    MPI_Allreduce(neg, rbs, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(rbs[0] == -rbs[1]);
    if (frame == 0 || frame == 6) CHECK(st->rebalanced);  // the first frame; back from the grid
    else if (grid) CHECK(!st->rebalanced);
    else if (variant == 1) CHECK_EQ(st->rebalanced, prev_imbalance > 0.0);
    if (ranks_ == 1) CHECK_EQ(sum[0], 0);
}

// The regions tile space: a random point lies in the region of the rank bp_mpi_rank_of names,
// and in no other.
static void check_regions(const bp_mpi_context *ctx, int dim, double world) {
    bpt_rng r = bpt_rng_make(77);
    for (int k = 0; k < 200; ++k) {
        float p[3];
        for (int a = 0; a < dim; ++a) p[a] = (float)bpt_uniform(&r, -0.1 * world, 1.1 * world);
        int owner = -1;
        CHECK_OK(bp_mpi_rank_of(ctx, p, &owner));
        for (int q = 0; q < ranks_; ++q) {
            float lo[3], hi[3];
            CHECK_OK(bp_mpi_get_region(ctx, q, lo, hi));
            bool in = true;
            for (int a = 0; a < dim; ++a) in &= lo[a] <= p[a] && p[a] < hi[a];
            CHECK_MSG(in == (q == owner), "point in region %d, located in %d", q, owner);
        }
    }
}

// Every scene, several frames: ownership by index, by region and with an empty rank; buffer and
// callback; the balanced default, a threshold of 0 (a new cut every frame) and the caller's grid.
static void case_oracle(int argc, char **argv) {
    for (int kind = 0; kind < BP_SCENE_COUNT; ++kind) {
        mpi_rig rig = rig_open(argc, argv, (bp_scene_kind)kind, kind == BP_SCENE_SEED ? 300 : 500);
        for (int variant = 0; variant < 2; ++variant) {
            bp_mpi_def def = bp_mpi_default_def();
            def.dimension = rig.dim;
            def.rebalance_threshold = variant ? 0.0f : 0.25f;
            def.method = variant ? BP_METHOD_SWEEP : BP_METHOD_AUTO;
            def.workers = variant ? 2 : 1;
            failing f = {0, 0, 0, false};  // counts only: nothing may be left after destroy
            def.allocator = (bp_allocator){f_alloc, f_free, &f};
            bp_mpi_context *ctx = create_ok(&def);
            u64pairs got = {0};
            double prev_imbalance = 0.0;
            for (int frame = 0; frame < 8; ++frame) {
                bpt_note("scene %s dim %d variant %d frame %d", bp_scene_name((bp_scene_kind)kind), rig.dim, variant, frame);
                if (frame == 4) {
                    int counts[3];
                    float cuts[8];
                    grid_for(rig.dim, rig.s.world, counts, cuts);
                    CHECK_OK(bp_mpi_set_grid(ctx, counts, cuts));
                    float lo[3], hi[3], c[3];
                    CHECK_OK(bp_mpi_get_region(ctx, rank_, lo, hi));
                    for (int a = 0; a < rig.dim; ++a) c[a] = isfinite(lo[a]) ? lo[a] : isfinite(hi[a]) ? hi[a] - 1 : 0;
                    int r;
                    CHECK_OK(bp_mpi_rank_of(ctx, c, &r));
                    CHECK_EQ(r, rank_);
                }
                if (frame == 6) CHECK_OK(bp_mpi_set_grid(ctx, NULL, NULL));
                bp_scene_boxes(&rig.s, rig.all);
                const int mode = frame % 3;
                const size_t m = pick(rig.all, rig.n, rig.dim, frame == 0 ? 0 : mode, frame, ctx, rig.mine, rig.ids);
                CHECK_OK(find(ctx, rig.dim, rig.mine, rig.ids, m, frame % 2 == 1, &got));
                expect_union(rig.all, rig.n, rig.dim, got.v, got.n, rig.ids, m);
                bp_mpi_stats st;
                CHECK_OK(bp_mpi_get_stats(ctx, &st));
                CHECK_EQ(st.objects, m);
                CHECK_EQ(st.pairs, got.n);
                CHECK(st.imbalance >= 0.0);
                check_stats(&st, frame, variant, frame == 4 || frame == 5, prev_imbalance);
                prev_imbalance = st.imbalance;
                check_regions(ctx, rig.dim, rig.s.world);
                // Several moves per frame: objects cross the region borders between calls.
                for (int k = 0; k < 3; ++k) bp_scene_step(&rig.s);
            }
            free(got.v);
            bp_mpi_destroy(ctx);
            CHECK_MSG(f.live == 0, "rank %d leaks %zu bytes", rank_, f.live);
        }
        rig_free_buffers(&rig);
        bp_scene_free(&rig.s);
    }
}

// A rank with no objects (NULL arrays), then every rank with none, then objects again.
static void case_empty(int argc, char **argv) {
    mpi_rig rig = rig_open(argc, argv, BP_SCENE_CLUSTERED, 400);
    bp_mpi_def def = bp_mpi_default_def();
    def.dimension = rig.dim;
    bp_mpi_context *ctx = create_ok(&def);
    u64pairs got = {0};
    for (int frame = 0; frame < 4; ++frame) {
        bpt_note("frame %d", frame);
        bp_scene_boxes(&rig.s, rig.all);
        size_t m = 0;
        if (frame == 1) {
            CHECK_OK(find(ctx, rig.dim, NULL, NULL, 0, false, &got));  // nobody has anything
            CHECK_EQ(got.n, 0);
            continue;
        }
        m = pick(rig.all, rig.n, rig.dim, 2, frame, ctx, rig.mine, rig.ids);
        if (rank_ == 0 && ranks_ > 1) CHECK_EQ(m, 0);
        CHECK_OK(find(ctx, rig.dim, m ? rig.mine : NULL, m ? rig.ids : NULL, m, frame == 3, &got));
        expect_union(rig.all, rig.n, rig.dim, got.v, got.n, rig.ids, m);
        bp_scene_step(&rig.s);
    }
    end_case(ctx, &got, &rig);
}

// A warm context allocates nothing: objects owned by region and moving, the same pairs as brute
// force, and no allocation on any rank once a few frames have sized the buffers.
static void case_warm(int argc, char **argv) {
    mpi_rig rig = rig_open(argc, argv, BP_SCENE_UNIFORM, 3000);
    failing f = {0, 0, 0, false};
    bp_mpi_def def = bp_mpi_default_def();
    def.dimension = rig.dim;
    def.allocator = (bp_allocator){f_alloc, f_free, &f};
    bp_mpi_context *ctx = create_ok(&def);
    u64pairs got = {0};
    long warm = 0;
    for (int frame = 0; frame < 14; ++frame) {
        bpt_note("frame %d", frame);
        bp_scene_boxes(&rig.s, rig.all);
        const size_t m = pick(rig.all, rig.n, rig.dim, frame == 0 ? 0 : 1, frame, ctx, rig.mine, rig.ids);
        CHECK_OK(find(ctx, rig.dim, rig.mine, rig.ids, m, frame % 2 == 1, &got));
        expect_union(rig.all, rig.n, rig.dim, got.v, got.n, rig.ids, m);
        if (frame == 6) warm = f.count;
        if (frame > 6) CHECK_MSG(f.count == warm, "rank %d allocated %ld times in warm frame %d", rank_, f.count - warm, frame);
        bp_scene_step(&rig.s);
    }
    end_case(ctx, &got, &rig);
    CHECK_EQ(f.live, 0);  // the buffers above are not the context's
}

static bool stop_on_last(const bp_mpi_pair *pairs, size_t count, void *user) {
    (void)pairs, (void)count, (void)user;
    return rank_ != ranks_ - 1;
}

// Bad input on one rank (the last): every rank gets the same status, and the next frame is right.
static void case_errors(int argc, char **argv) {
    mpi_rig rig = rig_open(argc, argv, BP_SCENE_UNIFORM, 500);
    const size_t F = (size_t)(2 * rig.dim);
    const bool last = rank_ == ranks_ - 1;

    // Definitions that differ between ranks, or are bad on one.
    bp_mpi_def def = bp_mpi_default_def();
    def.dimension = rig.dim;
    bp_mpi_context *ctx = (bp_mpi_context *)&def;
    bp_mpi_def bad = def;
    if (last) bad.dimension = 5 - rig.dim;
    bp_status st = bp_mpi_create(&bad, &ctx);
    CHECK_ST(st, ranks_ > 1 ? BP_ERR_INVALID_ARG : BP_OK);
    if (st == BP_OK) bp_mpi_destroy(ctx);
    bad = def;
    if (last) bad.rebalance_threshold = NAN;
    CHECK_ST(bp_mpi_create(&bad, &ctx), BP_ERR_INVALID_ARG);
    CHECK(ctx == NULL);
    CHECK_ST(bp_mpi_create(NULL, &ctx), BP_ERR_NULL);
    // A definition not made by bp_mpi_default_def() (on every rank: it is found before any
    // collective call, as NULL is).
    memset(&bad, 0, sizeof bad);
    CHECK_ST(bp_mpi_create(&bad, &ctx), BP_ERR_DEF_NOT_INITIALISED);
    CHECK(ctx == NULL);

    CHECK_OK(bp_mpi_create(&def, &ctx));
    int counts[3];
    float cuts[8];
    CHECK_ST(bp_mpi_rank_of(ctx, (float[3]){0, 0, 0}, &counts[0]), BP_ERR_NO_BOXES);
    u64pairs got = {0};
    for (int step = 0; step < 9; ++step) {
        bpt_note("step %d", step);
        bp_scene_boxes(&rig.s, rig.all);
        size_t m = pick(rig.all, rig.n, rig.dim, 0, step, ctx, rig.mine, rig.ids);
        bp_status want = BP_OK;
        bool cb = false;
        switch (step) {
        case 1: // NaN
            if (last && m) rig.mine[0] = NAN;
            want = BP_ERR_NONFINITE;
            break;
        case 2: // inverted (an infinity on another rank's box would say NONFINITE, the lower code)
            if (last && m) rig.mine[F - 1] = rig.mine[rig.dim - 1] - 1.0f;
            want = BP_ERR_INVERTED_BOX;
            break;
        case 3: // ids missing
            want = BP_ERR_NULL;
            break;
        case 4: // the callback stops on one rank
            cb = true;
            want = BP_ERR_STOPPED;
            break;
        case 5: // a grid whose cuts differ on one rank, then one of the wrong size
            grid_for(rig.dim, rig.s.world, counts, cuts);
            if (ranks_ > 1 && last) cuts[0] += 1.0f;
            CHECK_ST(bp_mpi_set_grid(ctx, counts, cuts), ranks_ > 1 ? BP_ERR_INVALID_ARG : BP_OK);
            counts[0] = last ? ranks_ + 1 : ranks_;
            CHECK_ST(bp_mpi_set_grid(ctx, counts, cuts), BP_ERR_INVALID_ARG);
            break;
        case 6: // the wrong dimension on one rank
            want = BP_ERR_DIMENSION;
            break;
        default: break;
        }
        got.n = 0;
        if (step == 4) {
            st = rig.dim == 2 ? bp_mpi_find_pairs2_cb(ctx, bpt_as2(rig.mine), rig.ids, m, stop_on_last, NULL)
                              : bp_mpi_find_pairs3_cb(ctx, bpt_as3(rig.mine), rig.ids, m, stop_on_last, NULL);
            // The last rank stops only if it has pairs to deliver.
            int had = 0, any = 0;
            bp_mpi_stats stt;
            bp_mpi_get_stats(ctx, &stt);
            had = last && stt.pairs_found > 0;
            MPI_Allreduce(&had, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            (void)cb;
            if (!any) want = st;
        } else if (step == 6 && last) {
            st = rig.dim == 2 ? bp_mpi_find_pairs3(ctx, bpt_as3(rig.mine), rig.ids, m, &(bp_mpi_pairs){0})
                              : bp_mpi_find_pairs2(ctx, bpt_as2(rig.mine), rig.ids, m, &(bp_mpi_pairs){0});
        } else {
            st = find(ctx, rig.dim, rig.mine, step == 3 && last ? NULL : rig.ids, step == 3 && last ? m + 1 : m, false, &got);
        }
        check_same_everywhere(st);
        CHECK_ST(st, want);
        if (st == BP_OK) expect_union(rig.all, rig.n, rig.dim, got.v, got.n, rig.ids, m);
        bp_scene_step(&rig.s);
    }
    end_case(ctx, &got, &rig);
}

// Fails allocation k = 1, 2, ... on one rank (rotating), through create, frames that grow every
// buffer, a new decomposition and a grid, until a whole run passes with nothing failed.
static void case_nomem(int argc, char **argv) {
    mpi_rig rig = rig_buffers(argc, argv, 300);
    u64pairs got = {0};
    for (long k = 1;; ++k) {
        const int victim = (int)(k % ranks_);
        failing f = {0, rank_ == victim ? k : 0, 0, false};
        bpt_note("failing allocation %ld on rank %d", k, victim);
        CHECK(bp_scene_init_kind(&rig.s, BP_SCENE_CLUSTERED, rig.n, rig.dim, bpt_seed) == 0);
        bp_mpi_def def = bp_mpi_default_def();
        def.dimension = rig.dim;
        def.rebalance_threshold = 0.0f;
        def.allocator = (bp_allocator){f_alloc, f_free, &f};
        bp_mpi_context *ctx;
        bp_status st = bp_mpi_create(&def, &ctx);
        check_same_everywhere(st);
        if (st == BP_OK) {
            for (int frame = 0; frame < 4; ++frame) {
                if (frame == 2) {
                    int counts[3];
                    float cuts[8];
                    grid_for(rig.dim, rig.s.world, counts, cuts);
                    st = bp_mpi_set_grid(ctx, counts, cuts);
                    check_same_everywhere(st);
                    CHECK(st == BP_OK);  // allocates nothing
                }
                bp_scene_boxes(&rig.s, rig.all);
                const size_t m = pick(rig.all, rig.n, rig.dim, frame == 3 ? 1 : 0, frame, ctx, rig.mine, rig.ids);
                st = find(ctx, rig.dim, rig.mine, rig.ids, m, frame == 1, &got);
                check_same_everywhere(st);
                CHECK(st == BP_OK || st == BP_ERR_NOMEM);
                if (st == BP_OK) expect_union(rig.all, rig.n, rig.dim, got.v, got.n, rig.ids, m);
                for (int j = 0; j < 5; ++j) bp_scene_step(&rig.s);
            }
            bp_mpi_destroy(ctx);
        } else {
            CHECK_ST(st, BP_ERR_NOMEM);
            CHECK(ctx == NULL);
        }
        CHECK_MSG(f.live == 0, "rank %d leaks %zu bytes", rank_, f.live);
        bp_scene_free(&rig.s);
        int failed = f.failed, any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!any) break;
        CHECK(k < 100000);
    }
    free(got.v);
    rig_free_buffers(&rig);
}

static const bpt_case cases[] = {
    {"oracle", case_oracle},
    {"empty", case_empty},
    {"warm", case_warm},
    {"errors", case_errors},
    {"nomem", case_nomem},
};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
    const int rc = bpt_main(cases, sizeof cases / sizeof cases[0], argc, argv);
    MPI_Finalize();
    return rc;
}
