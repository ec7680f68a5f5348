// PNG with zlib stored blocks: the format only needs CRC-32 per chunk and Adler-32 over the raw
// bytes, so the demo writes pictures without zlib or stb.
#include "png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t png_crc_table[256];

static void png_crc_init(void) {
    if (png_crc_table[1]) return;  // entry 1 is never 0 once filled
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        png_crc_table[n] = c;
    }
}

static uint32_t png_crc(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t k = 0; k < n; ++k) crc = png_crc_table[(crc ^ p[k]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

static void png_put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t png_get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int png_chunk(FILE *f, const char *type, const uint8_t *data, size_t n) {
    uint8_t head[8], tail[4];
    png_put32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    uint32_t crc = png_crc(png_crc(0, head + 4, 4), data, n);
    png_put32(tail, crc);
    if (fwrite(head, 1, 8, f) != 8) return -1;
    if (n && fwrite(data, 1, n, f) != n) return -1;
    return fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

int bp_demo_png_write(const char *path, const uint8_t *rgb, int w, int h, size_t stride) {
    if (!path || !rgb || w <= 0 || h <= 0 || w > (1 << 16) || h > (1 << 16)) return -1;
    png_crc_init();
    const size_t row = (size_t)w * 3 + 1;  // filter byte 0 ("none"), then the pixels
    const size_t raw = row * (size_t)h;
    const size_t blocks = (raw + 65534) / 65535;
    uint8_t *z = malloc(2 + raw + 5 * blocks + 4);
    if (!z) return -1;
    size_t o = 0;
    z[o++] = 0x78;  // deflate, 32 KiB window
    z[o++] = 0x01;  // no preset dictionary; 0x7801 is a multiple of 31 as zlib requires
    uint32_t a = 1, b = 0;  // Adler-32 of the raw stream
    size_t left = raw, pos = 0;  // pos: offset in the raw stream
    while (left > 0) {
        size_t len = left < 65535 ? left : 65535;
        z[o++] = left == len ? 1 : 0;  // BFINAL on the last block, BTYPE 00 (stored)
        z[o++] = (uint8_t)len;
        z[o++] = (uint8_t)(len >> 8);
        z[o++] = (uint8_t)~len;
        z[o++] = (uint8_t)(~len >> 8);
        for (size_t k = 0; k < len; ++k, ++pos) {
            size_t y = pos / row, x = pos % row;
            uint8_t v = x == 0 ? 0 : rgb[y * stride + x - 1];
            z[o++] = v;
            a = (a + v) % 65521u;
            b = (b + a) % 65521u;
        }
        left -= len;
    }
    png_put32(z + o, b << 16 | a);
    o += 4;

    uint8_t ihdr[13];
    png_put32(ihdr, (uint32_t)w);
    png_put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;   // bits per channel
    ihdr[9] = 2;   // colour type: RGB
    ihdr[10] = 0;  // deflate
    ihdr[11] = 0;  // adaptive filtering (every row uses filter 0)
    ihdr[12] = 0;  // not interlaced
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    FILE *f = fopen(path, "wb");
    int rc = -1;
    if (f && fwrite(sig, 1, 8, f) == 8 && png_chunk(f, "IHDR", ihdr, 13) == 0 &&
        png_chunk(f, "IDAT", z, o) == 0 && png_chunk(f, "IEND", NULL, 0) == 0)
        rc = 0;
    if (f && fclose(f) != 0) rc = -1;
    free(z);
    return rc;
}

// Reads the whole file; the pictures are a few megabytes at most.
static uint8_t *png_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = len;
    return buf;
}

int bp_demo_png_read(const char *path, uint8_t **rgb, int *w, int *h) {
    png_crc_init();
    size_t n = 0;
    uint8_t *file = png_slurp(path, &n);
    if (!file) return -1;
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    uint8_t *zs = NULL, *out = NULL;
    size_t zn = 0;
    uint32_t width = 0, height = 0;
    int rc = -1, ended = 0;
    if (n < 8 || memcmp(file, sig, 8) != 0) goto done;
    // Chunks: gather IDAT data, check every CRC.
    for (size_t p = 8; !ended;) {
        if (n - p < 12) goto done;
        uint32_t len = png_get32(file + p);
        if (len > n - p - 12) goto done;
        const uint8_t *type = file + p + 4, *data = file + p + 8;
        if (png_crc(0, type, 4 + (size_t)len) != png_get32(data + len)) goto done;
        if (memcmp(type, "IHDR", 4) == 0) {
            if (len != 13 || data[8] != 8 || data[9] != 2 || data[10] || data[11] || data[12]) goto done;
            width = png_get32(data);
            height = png_get32(data + 4);
            if (width == 0 || height == 0 || width > (1u << 16) || height > (1u << 16)) goto done;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            uint8_t *nz = realloc(zs, zn + len + 1);
            if (!nz) goto done;
            zs = nz;
            memcpy(zs + zn, data, len);
            zn += len;
        } else if (memcmp(type, "IEND", 4) == 0) {
            ended = 1;
        }
        p += 12 + (size_t)len;
    }
    if (!width || zn < 6 || zs[0] != 0x78 || ((zs[0] << 8) | zs[1]) % 31 != 0) goto done;
    const size_t row = (size_t)width * 3 + 1, raw = row * height;
    out = malloc(raw);
    if (!out) goto done;
    size_t zp = 2, got = 0;
    for (int last = 0; !last;) {
        if (zn - zp < 5) goto done;
        uint8_t hdr = zs[zp];
        if ((hdr >> 1) != 0) goto done;  // only stored blocks
        last = hdr & 1;
        size_t len = (size_t)zs[zp + 1] | (size_t)zs[zp + 2] << 8;
        size_t nlen = (size_t)zs[zp + 3] | (size_t)zs[zp + 4] << 8;
        if ((len ^ nlen) != 0xFFFFu || len > zn - zp - 5 || len > raw - got) goto done;
        memcpy(out + got, zs + zp + 5, len);
        got += len;
        zp += 5 + len;
    }
    if (got != raw || zn - zp != 4) goto done;
    uint32_t a = 1, b = 0;
    for (size_t k = 0; k < raw; ++k) {
        a = (a + out[k]) % 65521u;
        b = (b + a) % 65521u;
    }
    if (png_get32(zs + zp) != (b << 16 | a)) goto done;
    // Drop the filter bytes (all must be 0, as written) and pack the rows.
    for (size_t y = 0; y < height; ++y) {
        if (out[y * row] != 0) goto done;
        memmove(out + y * (row - 1), out + y * row + 1, row - 1);
    }
    *rgb = out;
    out = NULL;
    *w = (int)width;
    *h = (int)height;
    rc = 0;
done:
    free(out);
    free(zs);
    free(file);
    return rc;
}
