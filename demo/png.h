// A tiny PNG writer (8-bit RGB, zlib "stored" blocks: no compression, no dependency) and the
// matching reader the demo's tests use. Stored blocks keep it to a page of code; the pictures in
// docs/ are recompressed once by hand.
#ifndef BP_DEMO_PNG_H
#define BP_DEMO_PNG_H

#include <stddef.h>
#include <stdint.h>

/// Writes `h` rows of `w` RGB pixels (row k starts at rgb + k * stride) to `path`.
/// Returns 0, or -1 when the file cannot be written or memory runs out.
int bp_demo_png_write(const char *path, const uint8_t *rgb, int w, int h, size_t stride);

/// Reads a PNG written by bp_demo_png_write (8-bit RGB, stored blocks, filter 0), checking every
/// CRC and the Adler-32. On success *rgb is malloc'ed, w * h * 3 bytes, rows packed. Returns 0,
/// or -1 for anything else (other PNG flavours included).
int bp_demo_png_read(const char *path, uint8_t **rgb, int *w, int *h);

#endif
