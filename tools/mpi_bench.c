// broadphase-mpi-bench: a docs/scenes.md scene split over MPI ranks (docs/mpi.md).
//
//   mpirun -np 2 build/mpi/broadphase-mpi-bench --scene uniform --n 2000000 --frames 10
//   mpirun -np 1 build/mpi/broadphase-mpi-bench --scene uniform --n 2000000 --frames 10 --serial
//
// Every rank builds the whole scene (deterministic) and passes the objects it owns. Ownership
// follows the library's regions (`--own region`, what a simulation that migrates its objects
// does: frame k owns by frame k-1's regions; a leaving object's place is taken by the last one,
// arrivals are appended, so the order stays stable and the core's temporal coherence works) or
// is a fixed split by index (`--own index`, the worst case: almost every box travels). Frame 0 is a warm-up; frames 1..F are timed from a
// barrier to the end of the call on the slowest rank. Per frame: time, the largest CPU time of a
// rank (process CPU clock), the slowest rank's core and MPI seconds, bytes sent over all ranks, ghosts received over all ranks, load imbalance,
// pairs over all ranks. `--serial` (one rank) times the core alone on all the boxes instead.
#define _POSIX_C_SOURCE 200809L  // clock_gettime under -std=c17
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broadphase_mpi.h"
#include "scene.h"

// CPU seconds of this process: on a loaded machine, what a frame cost when a rank's wall time
// also holds the time it waited for a core (MPI's waiting is busy polling, so it counts here).
static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void) {
    fprintf(stderr, "usage: broadphase-mpi-bench [--scene NAME] [--n N] [--dim 2|3] [--frames F] [--seed S]\n"
                    "       [--method NAME] [--own region|index] [--serial] [--quiet]\n");
}

typedef struct opts {
    const char *scene_name, *method_name;
    size_t n;
    int dim, frames, serial, quiet, own_region;
    uint64_t seed;
    bp_method method;
} opts;

// The options; returns 0, or 2 after printing the usage on rank 0.
static int parse_args(int argc, char **argv, int rank, opts *o) {
    *o = (opts){"uniform", "auto", 100000, 2, 10, 0, 0, 1, 1, BP_METHOD_AUTO};
    for (int a = 1; a < argc; ++a) {
        const char *s = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(s, "--serial")) o->serial = 1;
        else if (!strcmp(s, "--quiet")) o->quiet = 1;
        else if (v && !strcmp(s, "--scene")) o->scene_name = v, ++a;
        else if (v && !strcmp(s, "--method")) o->method_name = v, ++a;
        else if (v && !strcmp(s, "--n")) o->n = strtoull(v, NULL, 10), ++a;
        else if (v && !strcmp(s, "--dim")) o->dim = atoi(v), ++a;
        else if (v && !strcmp(s, "--frames")) o->frames = atoi(v), ++a;
        else if (v && !strcmp(s, "--seed")) o->seed = strtoull(v, NULL, 10), ++a;
        else if (v && !strcmp(s, "--own")) o->own_region = strcmp(v, "index") != 0, ++a;
        else {
            if (rank == 0) usage();
            return 2;
        }
    }
    return 0;
}

// This rank's objects, kept in a stable order the way simulations migrate theirs: an object that
// leaves is replaced by the last one, an object that arrives is appended.
typedef struct owned {
    size_t *list, *where, m;  // the owned objects' indices; each one's place in list; how many
    int *owners;              // every object's owner
} owned;

// Frame f's owners (by region after frame 0 with --own region, else by index), then this rank's
// boxes and ids in `mine` and `ids`.
static void take_objects(const opts *o, bp_mpi_context *ctx, int rank, int ranks, int f, const float *all,
                         owned *w, float *mine, uint64_t *ids) {
    const size_t n = o->n, F = (size_t)(2 * o->dim);
    for (size_t i = 0; i < n; ++i) {
        int owner = (int)((uint64_t)i * (uint64_t)ranks / n);
        if (!o->serial && o->own_region && f > 0) {
            float c[3];
            for (int a = 0; a < o->dim; ++a) c[a] = all[i * F + a] * 0.5f + all[i * F + o->dim + a] * 0.5f;
            bp_mpi_rank_of(ctx, c, &owner);
        }
        if (f > 0 && owner == w->owners[i]) continue;
        if (f > 0 && w->owners[i] == rank) {  // leaves: the last takes its place
            const size_t at = w->where[i];
            w->list[at] = w->list[--w->m];
            w->where[w->list[at]] = at;
        }
        if (owner == rank) w->where[i] = w->m, w->list[w->m++] = i;
        w->owners[i] = owner;
    }
    for (size_t k = 0; k < w->m; ++k) {
        memcpy(mine + k * F, all + w->list[k] * F, F * sizeof(float));
        ids[k] = (uint64_t)w->list[k];
    }
}

// Sums over the timed frames, on rank 0.
typedef struct totals {
    double ms, cpu, bytes, ghosts, imb, core, mpi;
    uint64_t last_pairs;
} totals;

// One frame's call, timed from a barrier; its numbers reduced to rank 0, printed and summed there.
static void run_frame(const opts *o, bp_mpi_context *ctx, bp_context *core, int rank, int f, const float *mine,
                      const uint64_t *ids, size_t m, totals *sum) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime(), c0 = cpu_seconds();
    uint64_t pairs = 0;
    bp_mpi_stats s;
    memset(&s, 0, sizeof s);
    bp_status st;
    if (o->serial) {
        bp_pairs out;
        st = o->dim == 2 ? bp_find_pairs2(core, (const bp_box2 *)(const void *)mine, m, &out)
                         : bp_find_pairs3(core, (const bp_box3 *)(const void *)mine, m, &out);
        pairs = out.count;
    } else {
        bp_mpi_pairs out;
        st = o->dim == 2 ? bp_mpi_find_pairs2(ctx, (const bp_box2 *)(const void *)mine, ids, m, &out)
                         : bp_mpi_find_pairs3(ctx, (const bp_box3 *)(const void *)mine, ids, m, &out);
        pairs = out.count;
        bp_mpi_get_stats(ctx, &s);
    }
    const double ms = (MPI_Wtime() - t0) * 1e3, cpu_ms = (cpu_seconds() - c0) * 1e3;
    if (st != BP_OK) {
        fprintf(stderr, "rank %d frame %d: %s\n", rank, f, bp_status_string(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double mx[4] = {ms, s.seconds_core * 1e3, s.seconds_mpi * 1e3, cpu_ms}, mxall[4];
    uint64_t sm[3] = {s.bytes_sent, s.ghosts_received, pairs}, small[3];
    MPI_Reduce(mx, mxall, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(sm, small, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    if (o->serial) mxall[1] = mxall[0];
    if (!o->quiet)
        printf("%d %.3f %.3f %.3f %.3f %" PRIu64 " %" PRIu64 " %.4f %" PRIu64 "%s\n", f, mxall[0], mxall[3], mxall[1], mxall[2],
               small[0], small[1], s.imbalance, small[2], f == 0 ? "  (warm-up, not counted)" : "");
    if (f > 0) {
        sum->ms += mxall[0], sum->cpu += mxall[3], sum->core += mxall[1], sum->mpi += mxall[2];
        sum->bytes += (double)small[0], sum->ghosts += (double)small[1], sum->imb += s.imbalance;
    }
    sum->last_pairs = small[2];
}

// The context: the library's over every rank, or (--serial) the core's alone. Aborts on failure.
static void create(const opts *o, bp_mpi_context **ctx, bp_context **core) {
    bp_status st;
    if (o->serial) {
        bp_context_def cd = bp_default_context_def();
        cd.dimension = o->dim;
        cd.method = o->method;
        st = bp_context_create(&cd, core);
    } else {
        bp_mpi_def def = bp_mpi_default_def();
        def.dimension = o->dim;
        def.method = o->method;
        st = bp_mpi_create(&def, ctx);
    }
    if (st != BP_OK) {
        fprintf(stderr, "create: %s\n", bp_status_string(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    opts o;
    if (parse_args(argc, argv, rank, &o) != 0) {
        MPI_Finalize();
        return 2;
    }
    const size_t n = o.n;
    bp_scene scene;
    if (bp_method_from_name(o.method_name, &o.method) != BP_OK || (o.dim != 2 && o.dim != 3) || o.frames < 1 ||
        (o.serial && ranks != 1) || bp_scene_init(&scene, o.scene_name, n, o.dim, o.seed) != 0) {
        if (rank == 0) usage(), fprintf(stderr, "bad option, or --serial with more than one rank\n");
        MPI_Finalize();
        return 2;
    }
    const size_t F = (size_t)(2 * o.dim);
    float *all = malloc(n * F * sizeof(float)), *mine = malloc(n * F * sizeof(float));
    uint64_t *ids = malloc(n * sizeof(uint64_t));
    owned w = {malloc(n * sizeof(size_t)), malloc(n * sizeof(size_t)), 0, malloc(n * sizeof(int))};
    if (!all || !mine || !ids || !w.list || !w.where || !w.owners) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bp_mpi_context *ctx = NULL;
    bp_context *core = NULL;
    create(&o, &ctx, &core);
    if (rank == 0 && !o.quiet)
        printf("# %s %dD n=%zu ranks=%d own=%s method=%s%s\n# frame ms cpu_ms core_ms mpi_ms bytes ghosts imbalance pairs\n",
               o.scene_name, o.dim, n, ranks, o.own_region ? "region" : "index", o.method_name, o.serial ? " serial" : "");
    totals sum = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int f = 0; f <= o.frames; ++f) {
        if (f > 0) bp_scene_step(&scene);
        bp_scene_boxes(&scene, all);
        take_objects(&o, ctx, rank, ranks, f, all, &w, mine, ids);
        run_frame(&o, ctx, core, rank, f, mine, ids, w.m, &sum);
    }
    const int frames = o.frames;
    if (rank == 0)
        printf("mean over %d frames: %.3f ms/frame, cpu %.3f ms (slowest rank: core %.3f ms, mpi %.3f ms), %.0f bytes, %.0f ghosts, "
               "imbalance %.4f, pairs at frame %d: %" PRIu64 "\n",
               frames, sum.ms / frames, sum.cpu / frames, sum.core / frames, sum.mpi / frames, sum.bytes / frames,
               sum.ghosts / frames, sum.imb / frames, frames, sum.last_pairs);
    bp_mpi_destroy(ctx);
    bp_context_destroy(core);
    free(all), free(mine), free(ids), free(w.list), free(w.where), free(w.owners);
    bp_scene_free(&scene);
    MPI_Finalize();
    return 0;
}
