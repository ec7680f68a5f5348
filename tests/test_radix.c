// The shared radix sort (src/radix_sort.h), an internal every method relies on: sorted, stable,
// any key width, skipped passes, and the order-preserving float key. Usage: test_radix CASE.
#include <float.h>

#include "harness.h"
#include "radix_sort.h"

typedef struct kv64 {
    uint64_t key;
    uint32_t val;
} kv64;

static int cmp_kv(const void *a, const void *b) {
    const kv64 *x = a, *y = b;
    return bpt_cmp_keys(x->key, x->val, y->key, y->val);  // vals are original positions: stability
}

// Random keys of `bits` bits (some distributions with few distinct digits), sorted by both
// widths where they fit, with and without values, against qsort on (key, position).
static void check_sort(bpt_rng *r, size_t n, unsigned bits, bool wide, bool with_vals, int dist) {
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    kv64 *ref = bpt_xrealloc(NULL, n * sizeof *ref);
    uint64_t *k64 = bpt_xrealloc(NULL, n * sizeof *k64), *t64 = bpt_xrealloc(NULL, n * sizeof *t64);
    uint32_t *k32 = bpt_xrealloc(NULL, n * sizeof *k32), *t32 = bpt_xrealloc(NULL, n * sizeof *t32);
    uint32_t *v = bpt_xrealloc(NULL, n * sizeof *v), *tv = bpt_xrealloc(NULL, n * sizeof *tv);
    for (size_t k = 0; k < n; ++k) {
        uint64_t key = bpt_next(r);
        if (dist == 1) key %= 5;                                  // few distinct keys
        if (dist == 2) key = (uint64_t)k * 3;                     // already sorted
        if (dist == 3) key = (uint64_t)(n - k);                   // reversed
        if (dist == 4) key = (key & 0xff) << (bits > 16 ? bits - 9 : 0);  // only high digits vary
        key &= mask;
        ref[k].key = key;
        ref[k].val = (uint32_t)k;
        k64[k] = key;
        k32[k] = (uint32_t)key;
        v[k] = (uint32_t)k;
    }
    qsort(ref, n, sizeof *ref, cmp_kv);
    bpt_note("n = %zu, bits %u, %s, vals %d, distribution %d", n, bits, wide ? "64" : "32", with_vals, dist);
    if (wide) {
        bp_radix_sort64(k64, with_vals ? v : NULL, t64, with_vals ? tv : NULL, n, bits);
        for (size_t k = 0; k < n; ++k) {
            CHECK(k64[k] == ref[k].key);
            if (with_vals) CHECK_EQ(v[k], ref[k].val);
        }
    } else {
        bp_radix_sort32(k32, with_vals ? v : NULL, t32, with_vals ? tv : NULL, n, bits);
        for (size_t k = 0; k < n; ++k) {
            CHECK_EQ(k32[k], ref[k].key);
            if (with_vals) CHECK_EQ(v[k], ref[k].val);
        }
    }
    free(ref), free(k64), free(t64), free(k32), free(t32), free(v), free(tv);
}

static void sweep_cases(bool wide, bool vals) {
    bpt_rng r = bpt_rng_make(wide * 2 + vals);
    static const size_t ns[] = {0, 1, 2, 3, 17, 47, 48, 1000, 2049, 4095, 4096, 20000};  // 47, 48: either side of the insertion sort; 4095, 4096: of the 64-bit sort's 8-bit digits
    static const unsigned bits32[] = {1, 5, 11, 12, 22, 23, 31, 32};
    static const unsigned bits64[] = {1, 11, 22, 33, 34, 44, 55, 63, 64};
    const unsigned *bits = wide ? bits64 : bits32;
    size_t nb = wide ? sizeof bits64 / sizeof *bits64 : sizeof bits32 / sizeof *bits32;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; ++i)
        for (size_t b = 0; b < nb; ++b)
            for (int dist = 0; dist < 5; ++dist) check_sort(&r, ns[i], bits[b], wide, vals, dist);
}

static void case_keys32(int argc, char **argv) { (void)argc, (void)argv; sweep_cases(false, false); }
static void case_vals32(int argc, char **argv) { (void)argc, (void)argv; sweep_cases(false, true); }
static void case_keys64(int argc, char **argv) { (void)argc, (void)argv; sweep_cases(true, false); }
static void case_vals64(int argc, char **argv) { (void)argc, (void)argv; sweep_cases(true, true); }

// key_bits 0 or above the width means the full width.
static void case_bits(int argc, char **argv) {
    (void)argc, (void)argv;
    bpt_rng r = bpt_rng_make(9);
    uint32_t k[100], t[100];
    uint64_t K[100], T[100];
    for (int b = 0; b < 3; ++b) {
        unsigned bits = b == 0 ? 0 : b == 1 ? 33 : 100;
        for (int i = 0; i < 100; ++i) k[i] = (uint32_t)bpt_next(&r), K[i] = bpt_next(&r);
        bp_radix_sort32(k, NULL, t, NULL, 100, bits);
        bp_radix_sort64(K, NULL, T, NULL, 100, bits > 64 || bits == 0 ? bits : 64);
        for (int i = 1; i < 100; ++i) CHECK(k[i - 1] <= k[i] && K[i - 1] <= K[i]);
    }
}

// The float key: its unsigned order is the float order, and it inverts exactly.
static void case_edge(int argc, char **argv) {
    (void)argc, (void)argv;
    const float vals[] = {-INFINITY, -FLT_MAX, -1e30f, -1.0f, -FLT_MIN, -1e-45f, -0.0f, 0.0f, 1e-45f,
                          FLT_MIN,   0.5f,     1.0f,   1e7f,  FLT_MAX,  INFINITY};
    const size_t n = sizeof vals / sizeof vals[0];
    for (size_t i = 0; i < n; ++i) {
        float back = bp_key_float(bp_float_key(vals[i]));
        CHECK(memcmp(&back, &vals[i], sizeof back) == 0);
        if (i > 0) CHECK_MSG(bp_float_key(vals[i - 1]) < bp_float_key(vals[i]), "key order broken at %g", (double)vals[i]);
    }
    bpt_rng r = bpt_rng_make(10);
    for (int t = 0; t < 100000; ++t) {
        float a = (float)bpt_uniform(&r, -1e6, 1e6), b = (float)bpt_uniform(&r, -1e6, 1e6);
        if (t % 3 == 0) b = a;
        if (a != 0.0f || b != 0.0f) CHECK_EQ(a < b, bp_float_key(a) < bp_float_key(b));
        CHECK_EQ(a == b, bp_float_key(a) == bp_float_key(b));
    }
}

static const bpt_case cases[] = {
    {"keys32", case_keys32}, {"vals32", case_vals32}, {"keys64", case_keys64},
    {"vals64", case_vals64}, {"bits", case_bits},     {"edge", case_edge},
};

BPT_MAIN(cases)
