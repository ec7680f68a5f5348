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

// Big unsigned integers for the sphere oracle: every finite float is an integer multiple of
// 2^-149 below 2^128, so |x| * 2^149 fits 277 bits and squared distances, scaled by 2^298, fit
// 20 limbs of 32 bits. Exact, and a different method from the library's (expansion arithmetic
// behind a double filter, src/query.c).
#define FZ_LIMBS 20
typedef struct fz_big {
    uint32_t w[FZ_LIMBS];
} fz_big;

// |x| * 2^149; returns whether x's sign bit is set.
FZ_NOCOV static inline bool fz_big_float(fz_big *b, float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const uint32_t e = bits >> 23 & 255u;
    const uint64_t m = (bits & 0x7fffffu) | (e ? 1u << 23 : 0u);
    const unsigned sh = e ? e - 1 : 0;
    memset(b, 0, sizeof *b);
    const uint64_t v = m << (sh % 32);
    b->w[sh / 32] = (uint32_t)v;
    b->w[sh / 32 + 1] = (uint32_t)(v >> 32);
    return bits >> 31;
}

FZ_NOCOV static inline int fz_big_cmp(const fz_big *a, const fz_big *b) {
    for (int k = FZ_LIMBS - 1; k >= 0; --k)
        if (a->w[k] != b->w[k]) return a->w[k] < b->w[k] ? -1 : 1;
    return 0;
}

FZ_NOCOV static inline void fz_big_add(fz_big *r, const fz_big *a, const fz_big *b) {
    uint64_t carry = 0;
    for (int k = 0; k < FZ_LIMBS; ++k) {
        carry += (uint64_t)a->w[k] + b->w[k];
        r->w[k] = (uint32_t)carry;
        carry >>= 32;
    }
}

// a - b, a >= b.
FZ_NOCOV static inline void fz_big_sub(fz_big *r, const fz_big *a, const fz_big *b) {
    int64_t borrow = 0;
    for (int k = 0; k < FZ_LIMBS; ++k) {
        const int64_t v = (int64_t)a->w[k] - b->w[k] - borrow;
        borrow = v < 0;
        r->w[k] = (uint32_t)(v + (borrow ? (int64_t)1 << 32 : 0));
    }
}

FZ_NOCOV static inline void fz_big_sq(fz_big *r, const fz_big *a) {
    uint64_t acc[2 * FZ_LIMBS] = {0};
    for (int i = 0; i < FZ_LIMBS / 2; ++i)
        for (int j = 0; j < FZ_LIMBS / 2; ++j) {
            const uint64_t p = (uint64_t)a->w[i] * a->w[j];
            acc[i + j] += p & 0xffffffffu;
            acc[i + j + 1] += p >> 32;
        }
    uint64_t carry = 0;
    for (int k = 0; k < FZ_LIMBS; ++k) {
        carry += acc[k];
        r->w[k] = (uint32_t)carry;
        carry >>= 32;
    }
}

// (hi - lo) * 2^149 for floats hi >= lo.
FZ_NOCOV static inline void fz_big_diff(fz_big *r, float hi, float lo) {
    fz_big a, b;
    const bool na = fz_big_float(&a, hi), nb = fz_big_float(&b, lo);
    if (na != nb) fz_big_add(r, &a, &b);
    else if (!na) fz_big_sub(r, &a, &b);
    else fz_big_sub(r, &b, &a);
}

// A sphere query's hit as the header words it: the box within radius of the centre, by the
// exact box-to-point distance (no rounding anywhere).
FZ_NOCOV static inline bool fz_sphere_hit(const float *c, float r, const float *box, int d) {
    fz_big sum, t, e;
    memset(&sum, 0, sizeof sum);
    for (int a = 0; a < d; ++a) {
        if (c[a] < box[a]) fz_big_diff(&e, box[a], c[a]);
        else if (c[a] > box[d + a]) fz_big_diff(&e, c[a], box[d + a]);
        else continue;
        fz_big_sq(&t, &e);
        fz_big_add(&sum, &sum, &t);
    }
    fz_big_float(&e, r);
    fz_big_sq(&t, &e);
    return fz_big_cmp(&sum, &t) <= 0;
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

// Task hooks (the definitions' enqueue_task and finish_task) that run every range on the
// calling thread, in an order and with worker numbers the input chooses, now or at the finish
// hook: the parallel passes' splitting, per-worker scratch and merging without the cost of
// starting and waking threads in every execution (the library's own threads run in one worker
// input in four).
typedef struct fz_hooks {
    bool defer, reverse;
    uint32_t range, workers;
    bp_task_fn *task;  // deferred to the finish hook
    uint32_t count;
    void *task_context;
} fz_hooks;

FZ_NOCOV static inline void fz_hooks_run(fz_hooks *h, bp_task_fn *task, uint32_t count, uint32_t min_range, void *tc) {
    const uint32_t range = h->range > min_range ? h->range : min_range;
    const uint32_t ranges = (count + range - 1) / range;
    for (uint32_t q = 0; q < ranges; ++q) {
        const uint32_t k = h->reverse ? ranges - 1 - q : q;
        const uint32_t end = (k + 1) * range < count ? (k + 1) * range : count;
        task(k * range, end, k % h->workers, tc);
    }
}

FZ_NOCOV static inline void *fz_enqueue(bp_task_fn *task, uint32_t count, uint32_t min_range, void *tc, void *user) {
    fz_hooks *h = (fz_hooks *)user;
    if (!h->defer) {
        fz_hooks_run(h, task, count, min_range, tc);
        return NULL;
    }
    if (h->task) fz_fail("fuzz hooks", "one task at a time (the library finishes each)", count, 0);
    h->task = task;
    h->count = count;
    h->task_context = tc;
    return h;
}

FZ_NOCOV static inline void fz_finish(void *handle, void *user) {
    fz_hooks *h = (fz_hooks *)user;
    if (handle != h || !h->task) fz_fail("fuzz hooks", "finish of the task enqueued", 0, 0);
    bp_task_fn *task = h->task;
    h->task = NULL;
    fz_hooks_run(h, task, h->count, 1, h->task_context);
}

// `workers` workers for a context or world definition (the fields of both): 3 inputs in 4 run
// them through the hooks above (the next byte says how), the rest on the library's threads.
static inline void fz_workers(fz *f, int workers, int *def_workers, bp_enqueue_task_fn **enqueue,
                              bp_finish_task_fn **finish, void **user) {
    static fz_hooks hooks;
    *def_workers = workers;
    const uint8_t hw = fz_u8(f);
    if (hw & 3) {
        hooks = (fz_hooks){(hw >> 2) & 1, (hw >> 3) & 1, 1 + ((hw >> 4) & 3), (uint32_t)workers, NULL, 0, NULL};
        *enqueue = fz_enqueue;
        *finish = fz_finish;
        *user = &hooks;
    }
}

#endif
