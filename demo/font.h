// A built-in 5x7 bitmap font for the heads-up line (SDL_ttf is not needed).
#ifndef BP_DEMO_FONT_H
#define BP_DEMO_FONT_H

#include <SDL.h>

/// Pixels between the starts of two characters at scale 1.
#define BP_DEMO_FONT_ADVANCE 6

/// Draws `text` (letters shown as capitals, digits, . : - + = / > ( ) % , _ ? !; anything else
/// as a space) at (x, y), each font pixel a `scale` x `scale` square in the current draw colour.
void bp_demo_text(SDL_Renderer *r, int x, int y, int scale, const char *text);

#endif
