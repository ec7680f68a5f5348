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

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *scene_name = "uniform", *method_name = "auto";
    size_t n = 100000;
    int dim = 2, frames = 10, serial = 0, quiet = 0, own_region = 1;
    uint64_t seed = 1;
    for (int a = 1; a < argc; ++a) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "--serial")) serial = 1;
        else if (!strcmp(o, "--quiet")) quiet = 1;
        else if (v && !strcmp(o, "--scene")) scene_name = v, ++a;
        else if (v && !strcmp(o, "--method")) method_name = v, ++a;
        else if (v && !strcmp(o, "--n")) n = strtoull(v, NULL, 10), ++a;
        else if (v && !strcmp(o, "--dim")) dim = atoi(v), ++a;
        else if (v && !strcmp(o, "--frames")) frames = atoi(v), ++a;
        else if (v && !strcmp(o, "--seed")) seed = strtoull(v, NULL, 10), ++a;
        else if (v && !strcmp(o, "--own")) own_region = strcmp(v, "index") != 0, ++a;
        else {
            if (rank == 0) usage();
            MPI_Finalize();
            return 2;
        }
    }
    bp_method method;
    bp_scene scene;
    if (bp_method_from_name(method_name, &method) != BP_OK || (dim != 2 && dim != 3) || frames < 1 ||
        (serial && ranks != 1) || bp_scene_init(&scene, scene_name, n, dim, seed) != 0) {
        if (rank == 0) usage(), fprintf(stderr, "bad option, or --serial with more than one rank\n");
        MPI_Finalize();
        return 2;
    }
    const size_t F = (size_t)(2 * dim);
    float *all = malloc(n * F * sizeof(float)), *mine = malloc(n * F * sizeof(float));
    uint64_t *ids = malloc(n * sizeof(uint64_t));
    size_t *list = malloc(n * sizeof(size_t)), *where = malloc(n * sizeof(size_t)), m = 0;
    int *owners = malloc(n * sizeof(int));
    if (!all || !mine || !ids || !list || !where || !owners) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bp_mpi_context *ctx = NULL;
    bp_context *core = NULL;
    bp_status st;
    if (serial) {
        bp_context_def cd = bp_default_context_def();
        cd.dimension = dim;
        cd.method = method;
        st = bp_context_create(&cd, &core);
    } else {
        bp_mpi_def def = bp_mpi_default_def();
        def.dimension = dim;
        def.method = method;
        st = bp_mpi_create(&def, &ctx);
    }
    if (st != BP_OK) {
        fprintf(stderr, "create: %s\n", bp_status_string(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0 && !quiet)
        printf("# %s %dD n=%zu ranks=%d own=%s method=%s%s\n# frame ms cpu_ms core_ms mpi_ms bytes ghosts imbalance pairs\n",
               scene_name, dim, n, ranks, own_region ? "region" : "index", method_name, serial ? " serial" : "");
    double sum_ms = 0, sum_cpu = 0, sum_bytes = 0, sum_ghosts = 0, sum_imb = 0, sum_core = 0, sum_mpi = 0;
    uint64_t last_pairs = 0;
    for (int f = 0; f <= frames; ++f) {
        if (f > 0) bp_scene_step(&scene);
        bp_scene_boxes(&scene, all);
        // This rank's objects, kept in a stable order the way simulations migrate theirs: an
        // object that leaves is replaced by the last one, an object that arrives is appended.
        for (size_t i = 0; i < n; ++i) {
            int owner = (int)((uint64_t)i * (uint64_t)ranks / n);
            if (!serial && own_region && f > 0) {
                float c[3];
                for (int a = 0; a < dim; ++a) c[a] = all[i * F + a] * 0.5f + all[i * F + dim + a] * 0.5f;
                bp_mpi_rank_of(ctx, c, &owner);
            }
            if (f > 0 && owner == owners[i]) continue;
            if (f > 0 && owners[i] == rank) {  // leaves: the last takes its place
                const size_t at = where[i];
                list[at] = list[--m];
                where[list[at]] = at;
            }
            if (owner == rank) where[i] = m, list[m++] = i;
            owners[i] = owner;
        }
        for (size_t k = 0; k < m; ++k) {
            memcpy(mine + k * F, all + list[k] * F, F * sizeof(float));
            ids[k] = (uint64_t)list[k];
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime(), c0 = cpu_seconds();
        uint64_t pairs = 0;
        bp_mpi_stats s;
        memset(&s, 0, sizeof s);
        if (serial) {
            bp_pairs out;
            st = dim == 2 ? bp_find_pairs2(core, (const bp_box2 *)(const void *)mine, m, &out)
                          : bp_find_pairs3(core, (const bp_box3 *)(const void *)mine, m, &out);
            pairs = out.count;
        } else {
            bp_mpi_pairs out;
            st = dim == 2 ? bp_mpi_find_pairs2(ctx, (const bp_box2 *)(const void *)mine, ids, m, &out)
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
        if (rank == 0) {
            if (serial) mxall[1] = mxall[0];
            if (!quiet)
                printf("%d %.3f %.3f %.3f %.3f %" PRIu64 " %" PRIu64 " %.4f %" PRIu64 "%s\n", f, mxall[0], mxall[3], mxall[1], mxall[2],
                       small[0], small[1], s.imbalance, small[2], f == 0 ? "  (warm-up, not counted)" : "");
            if (f > 0) {
                sum_ms += mxall[0], sum_cpu += mxall[3], sum_core += mxall[1], sum_mpi += mxall[2];
                sum_bytes += (double)small[0], sum_ghosts += (double)small[1], sum_imb += s.imbalance;
            }
            last_pairs = small[2];
        }
    }
    if (rank == 0)
        printf("mean over %d frames: %.3f ms/frame, cpu %.3f ms (slowest rank: core %.3f ms, mpi %.3f ms), %.0f bytes, %.0f ghosts, "
               "imbalance %.4f, pairs at frame %d: %" PRIu64 "\n",
               frames, sum_ms / frames, sum_cpu / frames, sum_core / frames, sum_mpi / frames, sum_bytes / frames, sum_ghosts / frames,
               sum_imb / frames, frames, last_pairs);
    bp_mpi_destroy(ctx);
    bp_context_destroy(core);
    free(all), free(mine), free(ids), free(list), free(where), free(owners);
    bp_scene_free(&scene);
    MPI_Finalize();
    return 0;
}
