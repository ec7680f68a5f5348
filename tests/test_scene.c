// One row of the docs/scenes.md check-value table: builds the scene, moves it to the frame and counts
// the closed-box overlaps with the library's brute force (the oracle), cross-checked by sweep.
// Usage: test_scene SCENE DIM N FRAME EXPECTED_PAIRS
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s SCENE DIM N FRAME EXPECTED\n", argv[0]);
        return 2;
    }
    int dim = atoi(argv[2]);
    size_t n = (size_t)strtoull(argv[3], NULL, 10);
    int frame = atoi(argv[4]);
    size_t expected = (size_t)strtoull(argv[5], NULL, 10);
    bp_scene s;
    if (bp_scene_init(&s, argv[1], n, dim, 1) != 0) {
        fprintf(stderr, "bp_scene_init(%s, %zu, %d) failed\n", argv[1], n, dim);
        return 1;
    }
    for (int f = 0; f < frame; ++f) bp_scene_step(&s);
    void *boxes = malloc(n * (dim == 2 ? sizeof(bp_box2) : sizeof(bp_box3)));
    if (!boxes) {
        bp_scene_free(&s);
        return 1;
    }
    if (dim == 2) bp_scene_boxes2(&s, boxes);
    else bp_scene_boxes3(&s, boxes);
    size_t brute = 0, sweep = 0;
    int rc = 0;
    if (bp_count(BP_METHOD_BRUTE, &s, boxes, &brute) != 0 || bp_count(BP_METHOD_SWEEP, &s, boxes, &sweep) != 0) {
        rc = 1;
    } else {
        printf("%s %dD N=%zu frame %d: brute %zu, sweep %zu, expected %zu\n", argv[1], dim, n, frame, brute,
               sweep, expected);
        if (brute != expected || sweep != expected) rc = 1;
    }
    free(boxes);
    bp_scene_free(&s);
    return rc;
}
