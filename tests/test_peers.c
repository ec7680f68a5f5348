// One peer (bench/peers) against our pair sets: on docs/scenes.md `uniform` 2D, N = 1,000 and 10,000
// (and 3D, N = 1,000, for the peers that do 3D), frames 0 to 10, the peer's exact pairs must
// equal brute force (N = 1,000) and sort-and-sweep (every N), pair for pair. A peer with a declared defect (bp_peer_known_defect) may miss pairs,
// but only pairs of the kind it declares (boxes touching on x), and the detector must flag
// them; a hand-made touching scene proves the detector catches it (or that the peer is right).
// Usage: test_peers pairs PEER-NAME (tests/harness.h)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "peers.h"
#include "scene.h"

#define TEST_FRAMES 11  // frame 0 (the peer inserts everything) to frame 10

// Our pair set, sorted (i, j): the layout of peers.h.
static int reference_pairs(bp_method method, int dim, const float *boxes, size_t n, uint32_t **out, size_t *count) {
    bp_context_def def = bp_default_context_def();
    def.dimension = dim;
    def.method = method;
    def.sort_pairs = true;
    bp_context *ctx;
    if (bp_context_create(&def, &ctx) != BP_OK) return -1;
    bp_pairs pairs;
    bp_status st = dim == 2 ? bp_find_pairs2(ctx, (const bp_box2 *)(const void *)boxes, n, &pairs)
                            : bp_find_pairs3(ctx, (const bp_box3 *)(const void *)boxes, n, &pairs);
    if (st != BP_OK) {
        bp_context_destroy(ctx);
        return -1;
    }
    *count = pairs.count;
    *out = malloc((pairs.count + 1) * 2 * sizeof(uint32_t));
    if (!*out) {
        bp_context_destroy(ctx);
        return -1;
    }
    for (size_t k = 0; k < pairs.count; ++k) {
        (*out)[2 * k] = pairs.pairs[k].i;
        (*out)[2 * k + 1] = pairs.pairs[k].j;
    }
    bp_context_destroy(ctx);
    return 0;
}

// Whether boxes i and j only touch on x (their x intervals share exactly one end point): the
// pairs a strict `min < max` sweep on x misses.
static bool touching_on_x(const float *boxes, int dim, uint32_t i, uint32_t j) {
    const float *a = boxes + (size_t)i * 2 * (size_t)dim, *b = boxes + (size_t)j * 2 * (size_t)dim;
    return a[dim] == b[0] || b[dim] == a[0];
}

// Compares the peer's exact pairs with a reference. Returns the number of missing pairs that
// are allowed (declared defect, touching on x); every other difference is a failure.
static size_t check_against(const char *peer, const char *what, const float *boxes, int dim, const uint32_t *got,
                            size_t got_count, const uint32_t *ref, size_t ref_count) {
    size_t missing = 0, extra = 0;
    bool same = bp_peer_compare(got, got_count, ref, ref_count, &missing, &extra);
    if (same) return 0;
    const char *defect = bp_peer_known_defect(bp_peer_find(peer));
    CHECK_MSG(extra == 0, "%s: %zu pairs that %s does not have (the exact filter should make this impossible)", what,
          extra, "the reference");
    // Walk the missing pairs: each must be of the declared kind.
    size_t a = 0, explained = 0, shown = 0;
    for (size_t b = 0; b < ref_count; ++b) {
        while (a < got_count && (got[2 * a] < ref[2 * b] || (got[2 * a] == ref[2 * b] && got[2 * a + 1] < ref[2 * b + 1])))
            a++;
        if (a < got_count && got[2 * a] == ref[2 * b] && got[2 * a + 1] == ref[2 * b + 1]) continue;
        uint32_t i = ref[2 * b], j = ref[2 * b + 1];
        bool touch = touching_on_x(boxes, dim, i, j);
        if (defect && touch) explained++;
        if (shown++ < 5) {
            const float *p = boxes + (size_t)i * 2 * (size_t)dim, *q = boxes + (size_t)j * 2 * (size_t)dim;
            fprintf(stderr, "  %s misses (%u, %u): x [%.9g, %.9g] and [%.9g, %.9g]%s\n", peer, i, j, p[0], p[dim],
                    q[0], q[dim], touch ? " (touching on x)" : "");
        }
    }
    CHECK_MSG(explained == missing, "%s: %s misses %zu pairs, %zu of them not explained by a declared defect", what, peer,
          missing, missing - explained);
    if (explained)
        printf("%s: %s flagged as wrong: misses %zu of %zu true pairs (%s)\n", what, peer, explained, ref_count,
               defect);
    return explained;
}

static size_t run_scene(size_t k, const char *peer, size_t n, int dim) {
    bp_scene s;
    size_t flagged = 0;
    const size_t d = (size_t)dim;
    if (bp_scene_init(&s, "uniform", n, dim, 1) != 0) {
        CHECK_MSG(0, "scene");
        return 0;
    }
    float *boxes = malloc(n * 2 * d * sizeof(float));
    float *vel = malloc(n * d * sizeof(float));
    float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3] = {(float)s.world, (float)s.world, (float)s.world};
    void *p = bp_peer_create(k, dim, n, lo, hi);
    CHECK_MSG(p && boxes && vel, "%s: create N=%zu", peer, n);
    for (int frame = 0; p && boxes && vel && frame < TEST_FRAMES; ++frame) {
        if (frame > 0) bp_scene_step(&s);
        bp_scene_boxes(&s, boxes);
        for (size_t i = 0; i < d * n; ++i) vel[i] = (float)s.v[i];
        // Every other frame without velocities: the peer derives them.
        int rc = bp_peer_step(p, boxes, n, frame % 2 ? vel : NULL);
        CHECK_MSG(rc == 0, "%s: step N=%zu frame %d", peer, n, frame);
        if (rc != 0) break;
        const uint32_t *got;
        size_t got_count;
        CHECK_MSG(bp_peer_exact_pairs(p, boxes, &got, &got_count) == 0, "%s: exact pairs", peer);
        uint32_t *ref;
        size_t ref_count;
        char what[96];
        if (reference_pairs(BP_METHOD_SWEEP, dim, boxes, n, &ref, &ref_count) == 0) {
            snprintf(what, sizeof what, "uniform %dD N=%zu frame %d vs sweep", dim, n, frame);
            flagged += check_against(peer, what, boxes, dim, got, got_count, ref, ref_count);
            free(ref);
        } else {
            CHECK_MSG(0, "sweep reference");
        }
        if (n <= 1000) {
            if (reference_pairs(BP_METHOD_BRUTE, dim, boxes, n, &ref, &ref_count) == 0) {
                snprintf(what, sizeof what, "uniform %dD N=%zu frame %d vs brute", dim, n, frame);
                check_against(peer, what, boxes, dim, got, got_count, ref, ref_count);
                free(ref);
            } else {
                CHECK_MSG(0, "brute reference");
            }
        }
        printf("%s uniform %dD N=%zu frame %d: %zu exact pairs from %zu candidates (%zu duplicates)\n", peer, dim, n,
               frame, got_count, bp_peer_candidates(p), bp_peer_duplicates(p));
    }
    bp_peer_destroy(p);
    free(vel);
    free(boxes);
    bp_scene_free(&s);
    return flagged;
}

// Boxes that touch: 0 and 1 on x, 0 and 2 on y, 1 and 2 at a corner; 3 alone. Static for three
// frames. A closed-interval peer finds (0,1), (0,2), (1,2).
static void run_touching(size_t k, const char *peer, int dim) {
    static const float b2[] = {0, 0, 2, 2, 2, 0, 4, 2, 0, 2, 2, 4, 10, 10, 12, 12};
    static const float b3[] = {0, 0, 0, 2, 2, 2, 2, 0, 0, 4, 2, 2, 0, 2, 0, 2, 4, 2, 10, 10, 10, 12, 12, 12};
    static const uint32_t want[] = {0, 1, 0, 2, 1, 2};
    const float *boxes = dim == 2 ? b2 : b3;
    float lo[3] = {-1, -1, -1}, hi[3] = {16, 16, 16}, vel[12] = {0};
    void *p = bp_peer_create(k, dim, 4, lo, hi);
    CHECK_MSG(p != NULL, "%s: create touching %dD", peer, dim);
    if (!p) return;
    for (int frame = 0; frame < 3; ++frame) {
        CHECK_MSG(bp_peer_step(p, boxes, 4, vel) == 0, "%s: step touching", peer);
        const uint32_t *got;
        size_t count, missing = 0, extra = 0;
        CHECK_MSG(bp_peer_exact_pairs(p, boxes, &got, &count) == 0, "%s: exact touching", peer);
        bool same = bp_peer_compare(got, count, want, 3, &missing, &extra);
        const char *defect = bp_peer_known_defect(k);
        CHECK_MSG(extra == 0, "%s: touching %dD: %zu extra pairs", peer, dim, extra);
        if (defect) {
            // The declared defect must show, and the detector must see it: (0,1) and (1,2)
            // touch on x.
            CHECK_MSG(!same && missing == 2, "%s: touching %dD: expected the detector to flag 2 missing pairs, got %zu",
                  peer, dim, missing);
            if (frame == 0)
                printf("touching %dD: %s flagged as wrong: finds %zu of 3 pairs (%s)\n", dim, peer, count, defect);
        } else {
            CHECK_MSG(same, "%s: touching %dD frame %d: %zu missing, %zu extra", peer, dim, frame, missing, extra);
        }
    }
    bp_peer_destroy(p);
}

// The time limit: a step past it returns BP_PEER_TOO_SLOW, the peer refuses further steps and is
// destroyed cleanly (the sanitizer build checks for leaks). `line` (everything on one x) with a
// limit of a nanosecond: chipmunk-sweep1d stops inside Chipmunk's sweep, bullet-sap inside its
// build; the others may finish before they look at the clock.
static void run_time_limit(size_t k, const char *peer) {
    const size_t n = 3000;
    bp_scene s;
    if (bp_scene_init(&s, "line", n, 2, 1) != 0) {
        CHECK_MSG(0, "scene");
        return;
    }
    float *boxes = malloc(n * 4 * sizeof(float));
    float lo[2] = {0.0f, 0.0f}, hi[2] = {(float)s.world, (float)s.world};
    void *p = bp_peer_create(k, 2, n, lo, hi);
    CHECK_MSG(p && boxes, "%s: create line", peer);
    if (p && boxes) {
        bp_scene_boxes(&s, boxes);
        bp_peer_set_time_limit(p, 1e-9);
        int rc = bp_peer_step(p, boxes, n, NULL);
        bool must_stop = strcmp(peer, "chipmunk-sweep1d") == 0 || strcmp(peer, "bullet-sap") == 0;
        CHECK_MSG(rc == BP_PEER_TOO_SLOW || (rc == 0 && !must_stop), "%s: time limit: step returned %d", peer, rc);
        if (rc == BP_PEER_TOO_SLOW) {
            const uint32_t *pairs;
            size_t count;
            CHECK_MSG(bp_peer_step(p, boxes, n, NULL) == -1, "%s: a step after BP_PEER_TOO_SLOW must fail", peer);
            CHECK_MSG(bp_peer_exact_pairs(p, boxes, &pairs, &count) == -1, "%s: no pairs after BP_PEER_TOO_SLOW", peer);
            printf("%s: gave up at the time limit as asked\n", peer);
        }
    }
    bp_peer_destroy(p);
    free(boxes);
    bp_scene_free(&s);
}

// The detector itself: one pair dropped and one added must both be seen.
static void run_detector(void) {
    const uint32_t ref[] = {0, 1, 0, 5, 2, 3, 7, 9};
    const uint32_t drop[] = {0, 1, 2, 3, 7, 9};
    const uint32_t add[] = {0, 1, 0, 5, 1, 2, 2, 3, 7, 9};
    size_t missing, extra;
    CHECK_MSG(bp_peer_compare(ref, 4, ref, 4, &missing, &extra) && missing == 0 && extra == 0, "detector: equal");
    CHECK_MSG(!bp_peer_compare(drop, 3, ref, 4, &missing, &extra) && missing == 1 && extra == 0, "detector: drop");
    CHECK_MSG(!bp_peer_compare(add, 5, ref, 4, &missing, &extra) && missing == 0 && extra == 1, "detector: add");
    CHECK_MSG(!bp_peer_compare(NULL, 0, ref, 4, &missing, &extra) && missing == 4, "detector: empty");
}

// Every check of one peer, argv[0].
static void case_pairs(int argc, char **argv) {
    CHECK_MSG(argc == 1, "usage: test_peers pairs PEER");
    const char *peer = argv[0];
    size_t k = bp_peer_find(peer);
    CHECK_MSG(k != (size_t)-1, "peer %s is not compiled in", peer);
    run_detector();
    run_time_limit(k, peer);
    run_touching(k, peer, 2);
    if (bp_peer_supports(k, 3)) run_touching(k, peer, 3);
    size_t flagged = run_scene(k, peer, 1000, 2);
    flagged += run_scene(k, peer, 10000, 2);
    if (bp_peer_supports(k, 3)) run_scene(k, peer, 1000, 3);
    if (flagged) printf("%s: %zu true pairs missed on uniform, flagged by the detector\n", peer, flagged);
    // The declared defect shows on uniform already (chipmunk-sweep1d: frame 6 at N = 10,000).
    if (bp_peer_known_defect(k)) CHECK_MSG(flagged > 0, "%s: declared defect not seen on uniform", peer);
}

static const bpt_case cases[] = {{"pairs", case_pairs}};

BPT_MAIN(cases)
