// The peers' persistent interfaces (bench/peers/world_peers.h) against the reference world
// (bench/world_ref.c) on random worlds: static and moving objects with random categories and
// masks, moved (static ones too: Chipmunk reindexes them, Bullet sets their boxes), removed and
// added again in random batches, boxes touching on an edge and on a corner. Every update the
// peer's pairs, begins and ends must equal the reference's.
// Usage: test_world_peers random PEER DIM (tests/harness.h; $SEED sets the seed, default 777)
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "peers.h"
#include "scene.h"
#include "world_peers.h"
#include "world_ref.h"

#define SLOTS 600
#define WORLD 64.0

static uint64_t rnd(uint64_t *s, uint64_t n) {
    return bp_scene_next(s) % n;
}

// Boxes on a quarter-unit lattice, so that many touch exactly on an edge or a corner.
static void rand_box(uint64_t *s, int dim, float *box) {
    for (int a = 0; a < dim; ++a) {
        float lo = (float)rnd(s, (uint64_t)(WORLD * 4 - 40)) / 4.0f, ext = (float)(1 + rnd(s, 12)) / 4.0f;
        box[a] = lo;
        box[dim + a] = lo + ext;
    }
}

static const uint64_t bits[] = {1, 2, 3, 4, 6, 7};

static void case_random(int argc, char **argv) {
    CHECK_MSG(argc == 2, "usage: test_world_peers random PEER DIM");
    size_t k = bp_peer_find(argv[0]);
    int dim = atoi(argv[1]);
    if (k == (size_t)-1 || !bp_wpeer_supports(k, dim)) {
        printf("%s has no persistent interface in %dD in this build: skipped\n", argv[0], dim);
        exit(BPT_SKIP);
    }
    float lo[3] = {0, 0, 0}, hi[3] = {(float)WORLD, (float)WORLD, (float)WORLD};
    void *w = bp_wpeer_create(k, dim, SLOTS, lo, hi);
    bp_wref *ref = bp_wref_create(dim);
    CHECK_MSG(w && ref, "cannot create");
    bp_wpeer_set_time_limit(w, 60.0);
    uint64_t rng = bpt_seed, next_key = 1000;
    uint64_t key[SLOTS];
    bool live[SLOTS] = {false}, stat[SLOTS] = {false};
    float box[SLOTS][6];
    size_t total[3] = {0, 0, 0};
    for (int frame = 0; frame < 120; ++frame) {
        bpt_note("frame %d", frame);
        // Removes first (the slots' old objects), then adds (new keys), then moves: the order
        // the benchmark uses within a frame is one of many a game may use.
        size_t changes = frame == 0 ? SLOTS : 1 + rnd(&rng, 60);
        for (size_t c = 0; c < changes; ++c) {
            uint32_t s = (uint32_t)(frame == 0 ? c : rnd(&rng, SLOTS));
            uint64_t r = rnd(&rng, 10);
            if (live[s] && r < 2) {
                CHECK_MSG(bp_wpeer_remove(w, s) == 0 && bp_wref_remove(ref, key[s]) == 0, "remove");
                live[s] = false;
            } else if (!live[s]) {
                if (frame > 0 && r < 5) continue;  // slots stay empty for a while
                key[s] = next_key++ * 7919u;       // keys not in slot order
                stat[s] = rnd(&rng, 3) == 0;
                uint64_t cat = bits[rnd(&rng, 6)], mask = bits[rnd(&rng, 6)];
                rand_box(&rng, dim, box[s]);
                CHECK_MSG(bp_wpeer_add(w, s, key[s], box[s], stat[s], cat, mask) == 0 &&
                              bp_wref_add(ref, key[s], box[s], stat[s], cat, mask) == 0,
                          "add");
                live[s] = true;
            } else {
                // A small step (often onto a touching position) or a jump.
                float vel[3] = {0, 0, 0};
                if (rnd(&rng, 8) == 0) {
                    float old[6];
                    memcpy(old, box[s], sizeof old);
                    rand_box(&rng, dim, box[s]);
                    for (int a = 0; a < dim; ++a) vel[a] = box[s][a] - old[a];
                } else {
                    for (int a = 0; a < dim; ++a) {
                        vel[a] = (float)((int)rnd(&rng, 5) - 2) / 4.0f;
                        // Inside the world's bounds (bullet-sap quantizes to them).
                        if (box[s][a] + vel[a] < 0.0f || box[s][dim + a] + vel[a] > (float)WORLD) vel[a] = 0.0f;
                        box[s][a] += vel[a];
                        box[s][dim + a] += vel[a];
                    }
                }
                CHECK_MSG(bp_wpeer_move(w, s, box[s], rnd(&rng, 2) ? vel : NULL) == 0 &&
                              bp_wref_move(ref, key[s], box[s]) == 0,
                          "move");
            }
        }
        CHECK_MSG(bp_wpeer_update(w) == 0, "update");
        CHECK_MSG(bp_wref_update(ref) == 0, "reference update");
        const bp_wpeer_pair *got[3];
        size_t ngot[3], nwant[3];
        CHECK_MSG(bp_wpeer_results(w, &got[0], &ngot[0], &got[1], &ngot[1], &got[2], &ngot[2]) == 0, "results");
        const bp_wref_pair *want[3] = {bp_wref_pairs(ref, &nwant[0]), bp_wref_begins(ref, &nwant[1]),
                                       bp_wref_ends(ref, &nwant[2])};
        static const char *const names[3] = {"pairs", "begins", "ends"};
        for (int l = 0; l < 3; ++l) {
            size_t missing, extra;
            // bp_wpeer_pair and bp_wref_pair are both two uint64_t, a < b.
            CHECK_MSG(bp_wref_compare((const bp_wref_pair *)(const void *)got[l], ngot[l], want[l], nwant[l], &missing,
                                      &extra),
                      "%s: %zu, the reference has %zu (%zu missing, %zu extra)", names[l], ngot[l], nwant[l], missing,
                      extra);
            total[l] += nwant[l];
        }
    }
    // A test that saw no pairs, begins or ends would prove nothing.
    CHECK_MSG(total[0] != 0 && total[1] != 0 && total[2] != 0, "no pairs, begins or ends at all");
    printf("%s %dD: 120 updates equal to the reference (%zu pairs, %zu begins, %zu ends in all)\n", argv[0], dim,
           total[0], total[1], total[2]);
    bp_wpeer_destroy(w);
    bp_wref_destroy(ref);
}

static const bpt_case cases[] = {{"random", case_random}};

BPT_MAIN_SEED(cases, 777)
