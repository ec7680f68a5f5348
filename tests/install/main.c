// A consumer of the installed library: one known pair among three boxes, found through the
// public header only.
#include <stdio.h>

#include <broadphase.h>

int main(void) {
    bp_context_def def = bp_default_context_def();
    def.sort_pairs = true;
    bp_context *ctx = NULL;
    if (bp_context_create(&def, &ctx) != BP_OK) return 1;
    const bp_box2 boxes[3] = {
        {{0.0f, 0.0f}, {1.0f, 1.0f}},
        {{5.0f, 5.0f}, {6.0f, 6.0f}},
        {{1.0f, 1.0f}, {2.0f, 2.0f}},  // touches box 0 at a corner
    };
    bp_pairs out;
    bp_status st = bp_find_pairs2(ctx, boxes, 3, &out);
    int ok = st == BP_OK && out.count == 1 && out.pairs[0].i == 0 && out.pairs[0].j == 2;
    printf("broadphase %s: %s, %zu pair(s)\n", BP_VERSION_STRING, bp_status_string(st), out.count);
    bp_context_destroy(ctx);
    return ok ? 0 : 1;
}
