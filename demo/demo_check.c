// Test for broadphase-demo's headless picture: recomputes the scene at frame K from the docs/scenes.md
// generator, finds which circles overlap (all pairs, in double) and checks the PNG: the pixel at
// every overlapping circle's centre is red, at every isolated circle's centre white. The PNG is
// decoded by the demo's own strict reader and, where libstb-dev is installed, also by
// stb_image, which must agree byte for byte.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "png.h"
#include "scene.h"

#ifdef BP_DEMO_HAVE_STB_IMAGE
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO_WARNINGS
#include <stb/stb_image.h>
#endif

static int fail(const char *what) {
    fprintf(stderr, "demo_check: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    const char *png = NULL, *scene = "seed";
    size_t n = 0;
    unsigned long long seed = 1;
    long frames = 0;
    double scale = 0;
    bool snap = false;
    for (int k = 1; k < argc; ++k) {
        const char *v = k + 1 < argc ? argv[k + 1] : "";
        if (strcmp(argv[k], "--snap") == 0) snap = true;
        else if (strcmp(argv[k], "--png") == 0) png = v, ++k;
        else if (strcmp(argv[k], "--scene") == 0) scene = v, ++k;
        else if (strcmp(argv[k], "--n") == 0) n = strtoull(v, NULL, 10), ++k;
        else if (strcmp(argv[k], "--seed") == 0) seed = strtoull(v, NULL, 10), ++k;
        else if (strcmp(argv[k], "--frames") == 0) frames = strtol(v, NULL, 10), ++k;
        else if (strcmp(argv[k], "--scale") == 0) scale = strtod(v, NULL), ++k;
        else return fail("usage: demo_check --png FILE [--scene S] [--n N] [--seed S] [--frames K] [--scale PX] [--snap]");
    }
    if (!png) return fail("--png FILE is required");
    if (!n) n = strcmp(scene, "seed") == 0 ? 500 : 1000;

    uint8_t *rgb = NULL;
    int w = 0, h = 0;
    if (bp_demo_png_read(png, &rgb, &w, &h) != 0) return fail("cannot read the PNG (or it is malformed)");
#ifdef BP_DEMO_HAVE_STB_IMAGE
    int sw, sh, sc;
    unsigned char *st = stbi_load(png, &sw, &sh, &sc, 3);
    if (!st) return fail("stb_image cannot decode the PNG");
    bool same = sw == w && sh == h && memcmp(st, rgb, (size_t)w * (size_t)h * 3) == 0;
    stbi_image_free(st);
    if (!same) return fail("stb_image decodes different pixels");
    printf("stb_image agrees with the demo's reader\n");
#endif

    bp_scene s;
    if (bp_scene_init(&s, scene, n, 2, seed) != 0) return fail("bad scene");
    for (long f = 0; f < frames; ++f) bp_scene_step(&s);
    double *pos = malloc(2 * n * sizeof *pos);
    unsigned char *hit = calloc(n, 1);
    if (!pos || !hit) return fail("out of memory");
    for (size_t k = 0; k < 2 * n; ++k) pos[k] = snap ? nearbyint(s.p[k]) : s.p[k];
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i + 1; j < n; ++j) {
            double dx = pos[2 * i] - pos[2 * j], dy = pos[2 * i + 1] - pos[2 * j + 1], r = s.r[i] + s.r[j];
            if (dx * dx + dy * dy <= r * r) hit[i] = hit[j] = 1;
        }
    }

    const double px = bp_demo_scale(s.world, scale);
    const int side = (int)ceil(s.world * px);
    int bad = 0, red = 0, white = 0;
    if (w != side || h != side + BP_DEMO_HUD_H) {
        fprintf(stderr, "demo_check: picture is %dx%d, expected %dx%d\n", w, h, side, side + BP_DEMO_HUD_H);
        ++bad;
    }
    for (size_t i = 0; i < n && !bad; ++i) {
        int x, y;
        bp_demo_pixel(pos[2 * i], pos[2 * i + 1], px, &x, &y);
        if (x < 0 || y < 0 || x >= w || y >= h) {
            fprintf(stderr, "demo_check: circle %zu centre (%d, %d) is off the picture\n", i, x, y);
            ++bad;
            continue;
        }
        const uint8_t *p = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;
        bool is_red = p[0] >= 120 && p[1] < 100 && p[2] < 100;
        bool is_white = p[0] >= 200 && p[1] >= 200 && p[2] >= 200;
        if (hit[i] ? !is_red : !is_white) {
            fprintf(stderr, "demo_check: circle %zu at (%.3f, %.3f), pixel (%d, %d) = (%d, %d, %d): expected %s\n",
                    i, pos[2 * i], pos[2 * i + 1], x, y, p[0], p[1], p[2], hit[i] ? "red" : "white");
            if (++bad > 10) break;
        }
        red += hit[i];
        white += !hit[i];
    }
    printf("%s frame %ld n %zu: %d red and %d white centres checked, %d wrong\n", scene, frames, n, red, white, bad);
    // A picture of all one colour would prove nothing.
    if (!bad && (red == 0 || white == 0)) return fail("the scene has no overlaps or no isolated circle");
    free(pos);
    free(hit);
    free(rgb);
    bp_scene_free(&s);
    return bad ? 1 : 0;
}
