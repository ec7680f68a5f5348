// The browser test's native side (tests/web_test.sh): prints the circles' boxes of a scene at
// frame K exactly as the demo's simulation boxes them (bp_demo_box: outward-rounded floats), one
// `minx miny maxx maxy` line each, for the native `broadphase pairs` to count. The page's world
// (WebAssembly) must report the same number of pairs for the same scene and frame.
// usage: bp_web_boxes SCENE N SEED K
#include <stdio.h>
#include <stdlib.h>

#include "demo_sim.h"
#include "scene.h"

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bp_web_boxes SCENE N SEED K\n");
        return 2;
    }
    char *end;
    unsigned long n = strtoul(argv[2], &end, 10);
    unsigned long long seed = strtoull(argv[3], &end, 10);
    long k = strtol(argv[4], &end, 10);
    bp_scene s;
    if (n == 0 || k < 0 || bp_scene_init(&s, argv[1], (size_t)n, 2, seed) != 0) {
        fprintf(stderr, "bp_web_boxes: bad scene, N or K\n");
        return 2;
    }
    for (long f = 0; f < k; ++f) bp_scene_step(&s);
    for (size_t i = 0; i < s.n; ++i) {
        bp_box2 b = bp_demo_box(s.p[2 * i], s.p[2 * i + 1], s.r[i]);
        // %.9g: a float printed so that it reads back as the same float.
        printf("%.9g %.9g %.9g %.9g\n", b.min[0], b.min[1], b.max[0], b.max[1]);
    }
    bp_scene_free(&s);
    return 0;
}
