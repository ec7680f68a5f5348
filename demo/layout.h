// Where the demo puts things on screen; shared with its tests so both agree on every pixel.
#ifndef BP_DEMO_LAYOUT_H
#define BP_DEMO_LAYOUT_H

#include <math.h>

/// Height in pixels of the heads-up strip above the stage.
#define BP_DEMO_HUD_H 24

/// Pixels per world unit: `asked` when positive, else what fits the world in 720 pixels.
static inline double bp_demo_scale(double world, double asked) {
    return asked > 0 ? asked : 720.0 / world;
}

/// The pixel (column, row) holding world point (x, y); the stage's y grows downwards, as in the
/// seed's Flash stage.
static inline void bp_demo_pixel(double x, double y, double scale, int *px, int *py) {
    *px = (int)floor(x * scale);
    *py = BP_DEMO_HUD_H + (int)floor(y * scale);
}

#endif
