// The world scenes of docs/scenes.md through the library's world: frame 0 adds every object, each
// later frame moves, removes and adds as the scene says (bench/world_drive.c). Every frame the
// world's pairs, begins and ends must equal the reference world's (bench/world_ref.c, which
// finds all pairs again and diffs them), and at frames 0, 10 and 100 both must give the check
// values of docs/scenes.md.
// Usage: test_world_scene run SCENE DIM N MODE P0 P10 B10 E10 [P100 B100 E100] (tests/harness.h)
//   MODE: auto, incremental or rebuild (bp_world_def.mode)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "world_drive.h"

// Compares a world list with the reference's (both as sorted serial pairs).
static void expect_same(const bp_world_pairs *got, const bp_wref_pair *want, size_t nwant, bp_wref_pair **buf,
                        size_t *cap, const char *what, int frame) {
    size_t n = bp_wdrive_user_pairs(got, buf, cap), missing, extra;
    CHECK_MSG(n != (size_t)-1, "frame %d: out of memory", frame);
    CHECK_MSG(bp_wref_compare(*buf, n, want, nwant, &missing, &extra),
              "frame %d: %s: world %zu, reference %zu (%zu missing, %zu extra)", frame, what, n, nwant, missing, extra);
}

static void case_run(int argc, char **argv) {
    CHECK_MSG(argc == 8 || argc == 11, "usage: test_world_scene run SCENE DIM N MODE P0 P10 B10 E10 [P100 B100 E100]");
    bp_wscene_kind kind;
    int dim = atoi(argv[1]);
    size_t n = (size_t)strtoull(argv[2], NULL, 10);
    bp_world_def def = bp_default_world_def();
    def.dimension = dim;
    if (strcmp(argv[3], "incremental") == 0) def.mode = BP_WORLD_MODE_INCREMENTAL;
    else if (strcmp(argv[3], "rebuild") == 0) def.mode = BP_WORLD_MODE_REBUILD;
    else CHECK_MSG(strcmp(argv[3], "auto") == 0, "unknown mode '%s'", argv[3]);
    size_t want[3][3] = {{0}};  // frame 0, 10, 100: pairs, begins, ends
    want[0][0] = (size_t)strtoull(argv[4], NULL, 10);
    for (int k = 0; k < 3; ++k) want[1][k] = (size_t)strtoull(argv[5 + k], NULL, 10);
    int last = 10;
    if (argc == 11) {
        last = 100;
        for (int k = 0; k < 3; ++k) want[2][k] = (size_t)strtoull(argv[8 + k], NULL, 10);
    }
    bp_wscene s;
    CHECK_MSG(bp_wscene_from_name(argv[0], &kind) == 0 && bp_wscene_init(&s, kind, n, dim, 1) == 0,
              "bad scene or out of memory");
    bp_wref *ref = bp_wref_create(dim);
    bp_wdrive d;
    bp_status st = bp_wdrive_init(&d, &def, s.n);
    CHECK(ref != NULL);
    CHECK_OK(st);
    bp_wref_pair *buf = NULL;
    size_t cap = 0;
    for (int f = 0; f <= last; ++f) {
        bpt_note("frame %d", f);
        if (f == 0) {
            bp_wdrive_prepare_wscene_start(&d, &s);
            CHECK_MSG(bp_wdrive_ref_wscene_start(ref, &s) == 0, "frame %d: reference", f);
        } else {
            bp_wscene_step(&s);
            bp_wdrive_prepare_wscene_step(&d, &s);
            CHECK_MSG(bp_wdrive_ref_wscene_step(ref, &s) == 0, "frame %d: reference", f);
        }
        st = bp_wdrive_apply(&d);
        CHECK_MSG(st == BP_OK, "frame %d: %s: %s", f, d.failed_call, bp_status_string(st));
        bp_wdrive_commit(&d);
        size_t np, nb, ne;
        const bp_wref_pair *rp = bp_wref_pairs(ref, &np), *rb = bp_wref_begins(ref, &nb), *re = bp_wref_ends(ref, &ne);
        bp_world_pairs pairs;
        CHECK_OK(bp_world_get_pairs(d.world, &pairs));
        expect_same(&pairs, rp, np, &buf, &cap, "pairs", f);
        expect_same(&d.events.begins, rb, nb, &buf, &cap, "begins", f);
        expect_same(&d.events.ends, re, ne, &buf, &cap, "ends", f);
        bp_world_stats stats;
        CHECK_MSG(bp_world_get_stats(d.world, &stats) == BP_OK && stats.pairs == np && stats.begins == nb &&
                      stats.ends == ne && stats.proxies == s.n,
                  "frame %d: bp_world_get_stats disagrees", f);
        int row = f == 0 ? 0 : (f == 10 ? 1 : (f == 100 ? 2 : -1));
        if (row >= 0) {
            printf("%s %dD N=%zu %s frame %d: pairs %zu begins %zu ends %zu\n", argv[0], dim, n, argv[3], f, np, nb, ne);
            CHECK_MSG(np == want[row][0] && (row == 0 || (nb == want[row][1] && ne == want[row][2])),
                      "frame %d: expected pairs %zu begins %zu ends %zu", f, want[row][0], want[row][1], want[row][2]);
        }
    }
    CHECK_OK(bp_world_validate(d.world));
    free(buf);
    bp_wdrive_free(&d);
    bp_wref_destroy(ref);
    bp_wscene_free(&s);
}

static const bpt_case cases[] = {{"run", case_run}};

BPT_MAIN(cases)
