// The world scenes of docs/scenes.md through the library's world: frame 0 adds every object, each
// later frame moves, removes and adds as the scene says (bench/world_drive.c). Every frame the
// world's pairs, begins and ends must equal the reference world's (bench/world_ref.c, which
// finds all pairs again and diffs them), and at frames 0, 10 and 100 both must give the check
// values of docs/scenes.md.
// Usage: test_world_scene SCENE DIM N MODE P0 P10 B10 E10 [P100 B100 E100]
//   MODE: auto, incremental or rebuild (bp_world_def.mode)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_drive.h"

static int fail(const char *what, int frame) {
    fprintf(stderr, "test_world_scene: frame %d: %s\n", frame, what);
    return 1;
}

// Compares a world list with the reference's (both as sorted serial pairs).
static int same(const bp_world_pairs *got, const bp_wref_pair *want, size_t nwant, bp_wref_pair **buf, size_t *cap,
                const char *what, int frame) {
    size_t n = bp_wdrive_user_pairs(got, buf, cap), missing, extra;
    if (n == (size_t)-1) return fail("out of memory", frame);
    if (!bp_wref_compare(*buf, n, want, nwant, &missing, &extra)) {
        fprintf(stderr, "test_world_scene: frame %d: %s: world %zu, reference %zu (%zu missing, %zu extra)\n", frame,
                what, n, nwant, missing, extra);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 9 && argc != 12) {
        fprintf(stderr, "usage: %s SCENE DIM N MODE P0 P10 B10 E10 [P100 B100 E100]\n", argv[0]);
        return 2;
    }
    bp_wscene_kind kind;
    int dim = atoi(argv[2]);
    size_t n = (size_t)strtoull(argv[3], NULL, 10);
    bp_world_def def = bp_default_world_def();
    def.dimension = dim;
    if (strcmp(argv[4], "incremental") == 0) def.mode = BP_WORLD_MODE_INCREMENTAL;
    else if (strcmp(argv[4], "rebuild") == 0) def.mode = BP_WORLD_MODE_REBUILD;
    else if (strcmp(argv[4], "auto") != 0) return fail("unknown mode", 0);
    size_t want[3][3] = {{0}};  // frame 0, 10, 100: pairs, begins, ends
    want[0][0] = (size_t)strtoull(argv[5], NULL, 10);
    for (int k = 0; k < 3; ++k) want[1][k] = (size_t)strtoull(argv[6 + k], NULL, 10);
    int last = 10;
    if (argc == 12) {
        last = 100;
        for (int k = 0; k < 3; ++k) want[2][k] = (size_t)strtoull(argv[9 + k], NULL, 10);
    }
    bp_wscene s;
    if (bp_wscene_from_name(argv[1], &kind) != 0 || bp_wscene_init(&s, kind, n, dim, 1) != 0)
        return fail("bad scene or out of memory", 0);
    bp_wref *ref = bp_wref_create(dim);
    bp_wdrive d;
    bp_status st = bp_wdrive_init(&d, &def, s.n);
    if (!ref || st != BP_OK) return fail(bp_status_string(st), 0);
    bp_wref_pair *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (int f = 0; f <= last && rc == 0; ++f) {
        if (f == 0) {
            bp_wdrive_prepare_wscene_start(&d, &s);
            if (bp_wdrive_ref_wscene_start(ref, &s) != 0) return fail("reference", f);
        } else {
            bp_wscene_step(&s);
            bp_wdrive_prepare_wscene_step(&d, &s);
            if (bp_wdrive_ref_wscene_step(ref, &s) != 0) return fail("reference", f);
        }
        st = bp_wdrive_apply(&d);
        if (st != BP_OK) {
            fprintf(stderr, "test_world_scene: frame %d: %s: %s\n", f, d.failed_call, bp_status_string(st));
            return 1;
        }
        bp_wdrive_commit(&d);
        size_t np, nb, ne;
        const bp_wref_pair *rp = bp_wref_pairs(ref, &np), *rb = bp_wref_begins(ref, &nb), *re = bp_wref_ends(ref, &ne);
        bp_world_pairs pairs;
        st = bp_world_get_pairs(d.world, &pairs);
        if (st != BP_OK) return fail(bp_status_string(st), f);
        rc |= same(&pairs, rp, np, &buf, &cap, "pairs", f);
        rc |= same(&d.events.begins, rb, nb, &buf, &cap, "begins", f);
        rc |= same(&d.events.ends, re, ne, &buf, &cap, "ends", f);
        bp_world_stats stats;
        if (bp_world_get_stats(d.world, &stats) != BP_OK || stats.pairs != np || stats.begins != nb ||
            stats.ends != ne || stats.proxies != s.n)
            rc |= fail("bp_world_get_stats disagrees", f);
        int row = f == 0 ? 0 : (f == 10 ? 1 : (f == 100 ? 2 : -1));
        if (row >= 0) {
            printf("%s %dD N=%zu %s frame %d: pairs %zu begins %zu ends %zu\n", argv[1], dim, n, argv[4], f, np, nb, ne);
            if (np != want[row][0] || (row > 0 && (nb != want[row][1] || ne != want[row][2]))) {
                fprintf(stderr, "test_world_scene: frame %d: expected pairs %zu begins %zu ends %zu\n", f, want[row][0],
                        want[row][1], want[row][2]);
                rc = 1;
            }
        }
    }
    if (rc == 0 && bp_world_validate(d.world) != BP_OK) rc = fail("bp_world_validate", last);
    free(buf);
    bp_wdrive_free(&d);
    bp_wref_destroy(ref);
    bp_wscene_free(&s);
    return rc;
}
