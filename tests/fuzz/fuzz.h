// What the fuzz targets share: a reader that turns the fuzzer's bytes into choices (running out
// of bytes reads zeros, so every input decodes to something), the float values worth trying
// (signed zeros, denormals, 2^24 +- 1, 1e30, FLT_MAX), a counting allocator that can fail on
// demand, and the failure report. Each target keeps its own brute-force oracle.
#ifndef BP_FUZZ_H
#define BP_FUZZ_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// The oracles' loops are not the code under test: without coverage instrumentation (whose
// compare tracing took over half of the time in the brute-force loops) the fuzzer runs faster
// and its feedback is the library's alone.
#if defined(__clang__) && __clang_major__ >= 13
#define FZ_NOCOV __attribute__((no_sanitize("coverage"), noinline))
#else
#define FZ_NOCOV
#endif

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static inline uint8_t fz_u8(fz *f) {
    if (!f->n) return 0;
    f->n--;
    return *f->p++;
}
static inline uint32_t fz_u32(fz *f) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= (uint32_t)fz_u8(f) << (8 * k);
    return v;
}
static inline uint64_t fz_u64(fz *f) { return (uint64_t)fz_u32(f) | (uint64_t)fz_u32(f) << 32; }

// A coordinate: the values that break float arithmetic first, then a lattice of quarters (so
// that boxes touch exactly and coincide often), now and then any 32 bits (NaN and infinities
// included: the call must then fail with a status).
static inline float fz_coord(fz *f) {
    static const float special[24] = {
        0.0f, -0.0f, 1e-45f, -1e-45f, FLT_MIN, -FLT_MIN, 16777215.0f, 16777216.0f,
        16777218.0f, -16777217.0f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX, 3e38f, -3e38f,
        0.5f, 1e-30f, -1e-7f, 1e7f, -1e7f, 4.25f, -27.75f, 1e-38f};
    const uint8_t b = fz_u8(f);
    if (b < 24) return special[b];
    if (b == 255) {
        uint32_t bits = fz_u32(f);
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    return (float)((int)b - 24 - 116) * 0.25f;
}

// An extent to add to a min coordinate: mostly small, sometimes zero, huge or FLT_MAX.
static inline float fz_extent(fz *f) {
    static const float ext[16] = {0.0f, 0.0f, 1e-45f, 0.25f, 0.5f, 1.0f, 1.0f, 2.0f,
                                  3.0f, 4.25f, 10.0f, 100.0f, 1e7f, 1e30f, 3e38f, FLT_MAX};
    return ext[fz_u8(f) & 15];
}

// A sphere query's hit, as the header words it ("within radius of centre, the exact
// box-to-point distance", computed in double) and as the library filters first: by the
// sphere's bounding box rounded outward to floats. The two agree but where the double
// distance rounds a miss into a hit, which the box then rejects (coordinates of very different
// magnitudes; docs/reliability.md).
FZ_NOCOV static inline bool fz_sphere_hit(const float *c, float r, const float *box, int d) {
    double dist2 = 0.0;
    for (int a = 0; a < d; ++a) {
        const double lo = (double)c[a] - (double)r, hi = (double)c[a] + (double)r;
        float flo = (float)lo, fhi = (float)hi;
        if ((double)flo > lo) flo = nextafterf(flo, -INFINITY);
        if ((double)fhi < hi) fhi = nextafterf(fhi, INFINITY);
        if (box[a] > fhi || flo > box[d + a]) return false;
        const double p = c[a], l = box[a], h = box[d + a];
        const double e = p < l ? l - p : (p > h ? p - h : 0.0);
        dist2 += e * e;
    }
    return dist2 <= (double)r * (double)r;
}

static inline void fz_fail(const char *target, const char *what, long long a, long long b) {
    fprintf(stderr, "%s: FINDING: %s (%lld, %lld)\n", target, what, a, b);
    fflush(stderr);
    abort();
}

#define FZ_CHECK(cond, a, b)                                                                        \
    do {                                                                                            \
        if (!(cond)) fz_fail(FZ_TARGET, #cond, (long long)(a), (long long)(b));                     \
    } while (0)

// Allocation hooks that count live bytes and blocks and refuse the allocation numbered
// `fail_at` (1-based; 0: never) and, with `fail_every` > 0, every fail_every-th one after it.
typedef struct fz_alloc {
    size_t bytes, blocks;
    uint64_t count, fail_at, fail_every;
} fz_alloc;

static inline void *fz_alloc_fn(size_t size, size_t align, void *user) {
    fz_alloc *a = (fz_alloc *)user;
    a->count++;
    if (a->fail_at && (a->count == a->fail_at ||
                       (a->fail_every && a->count > a->fail_at && (a->count - a->fail_at) % a->fail_every == 0)))
        return NULL;
    const size_t al = align < sizeof(void *) ? sizeof(void *) : align;
    void *p = aligned_alloc(al, size ? (size + al - 1) / al * al : al);
    if (p) {
        a->bytes += size;
        a->blocks++;
    }
    return p;
}

// The library gives back the size it asked for: the counts return to zero after destroy.
static inline void fz_free_fn(void *ptr, size_t size, void *user) {
    fz_alloc *a = (fz_alloc *)user;
    if (!ptr) return;
    a->bytes -= size;
    a->blocks--;
    free(ptr);
}

static inline bp_allocator fz_allocator(fz_alloc *a) {
    bp_allocator al = {fz_alloc_fn, fz_free_fn, a};
    return al;
}

#endif
