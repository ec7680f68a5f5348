// One row of the docs/scenes.md check-value table: builds the scene, moves it to the frame and counts
// the closed-box overlaps with the library's brute force (the oracle), cross-checked by sweep.
// Usage: test_scene count SCENE DIM N FRAME EXPECTED_PAIRS (tests/harness.h)
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "scene.h"

static int bp_count(bp_method method, const bp_scene *s, const void *boxes, size_t *count) {
    bp_context_def def = bp_default_context_def();
    def.dimension = s->dim;
    def.method = method;
    bp_context *ctx;
    bp_status st = bp_context_create(&def, &ctx);
    if (st != BP_OK) {
        fprintf(stderr, "bp_context_create(%s): %s\n", bp_method_name(method), bp_status_string(st));
        return -1;
    }
    bp_pairs out;
    if (s->dim == 2) st = bp_find_pairs2(ctx, boxes, s->n, &out);
    else st = bp_find_pairs3(ctx, boxes, s->n, &out);
    if (st != BP_OK) {
        fprintf(stderr, "find_pairs(%s): %s\n", bp_method_name(method), bp_status_string(st));
        bp_context_destroy(ctx);
        return -1;
    }
    *count = out.count;
    bp_context_destroy(ctx);
    return 0;
}

static void case_count(int argc, char **argv) {
    CHECK_MSG(argc == 5, "usage: test_scene count SCENE DIM N FRAME EXPECTED");
    int dim = atoi(argv[1]);
    size_t n = (size_t)strtoull(argv[2], NULL, 10);
    int frame = atoi(argv[3]);
    size_t expected = (size_t)strtoull(argv[4], NULL, 10);
    bp_scene s;
    CHECK_MSG(bp_scene_init(&s, argv[0], n, dim, 1) == 0, "bp_scene_init(%s, %zu, %d) failed", argv[0], n, dim);
    for (int f = 0; f < frame; ++f) bp_scene_step(&s);
    void *boxes = malloc(n * (dim == 2 ? sizeof(bp_box2) : sizeof(bp_box3)));
    CHECK(boxes != NULL);
    if (dim == 2) bp_scene_boxes2(&s, boxes);
    else bp_scene_boxes3(&s, boxes);
    size_t brute = 0, sweep = 0;
    CHECK(bp_count(BP_METHOD_BRUTE, &s, boxes, &brute) == 0);
    CHECK(bp_count(BP_METHOD_SWEEP, &s, boxes, &sweep) == 0);
    printf("%s %dD N=%zu frame %d: brute %zu, sweep %zu, expected %zu\n", argv[0], dim, n, frame, brute, sweep,
           expected);
    CHECK_EQ(brute, expected);
    CHECK_EQ(sweep, expected);
    free(boxes);
    bp_scene_free(&s);
}

static const bpt_case cases[] = {{"count", case_count}};

BPT_MAIN(cases)
