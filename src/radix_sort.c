// LSD radix sort with 11-bit digits: three passes cover a 32-bit key, all histograms come from
// one read of the keys, and a pass whose digit is constant is skipped (common for small
// worlds or nearly equal keys).
#include "radix_sort.h"

#define DIGIT_BITS 11u
#define BUCKETS (1u << DIGIT_BITS)
#define MAX_PASSES 6u  // 64 bits / 11, rounded up

// Below this many keys an insertion sort is faster than clearing the histograms (8 KiB per
// pass): the world sorts a few events per update.
#define SMALL_SORT 48
// Below this many keys the 64-bit sort takes 8-bit digits.
#define SMALL_DIGITS_BELOW 4096

#define INSERTION_SORT(KEY_T)                                                                      \
    for (size_t i = 1; i < n; ++i) {                                                               \
        const KEY_T k = keys[i];                                                                   \
        const uint32_t v = vals ? vals[i] : 0;                                                     \
        size_t j = i;                                                                              \
        for (; j > 0 && keys[j - 1] > k; --j) {                                                    \
            keys[j] = keys[j - 1];                                                                 \
            if (vals) vals[j] = vals[j - 1];                                                       \
        }                                                                                          \
        keys[j] = k;                                                                               \
        if (vals) vals[j] = v;                                                                     \
    }

// The passes of an LSD sort of (keys, vals), n of them, by digits of BITS bits (MASK: 2^BITS - 1)
// counted in histogram HIST (an expression of the pass p): each pass turns its counts into
// offsets and scatters stably into the other buffer (tmp_keys, tmp_vals), skipping a pass whose
// digit is constant; the result ends in keys/vals.
#define RADIX_PASSES(KEY_T, PASSES, BITS, MASK, HIST)                                              \
    KEY_T *sk = keys, *dk = tmp_keys;                                                              \
    uint32_t *sv = vals, *dv = tmp_vals;                                                           \
    for (unsigned p = 0; p < (PASSES); ++p) {                                                      \
        uint32_t *h = (HIST);                                                                      \
        const unsigned shift = p * (BITS);                                                         \
        if (h[(sk[0] >> shift) & (MASK)] == n) continue; /* one digit value: nothing moves */      \
        uint32_t sum = 0;                                                                          \
        for (unsigned b = 0; b <= (MASK); ++b) {                                                   \
            uint32_t c = h[b];                                                                     \
            h[b] = sum;                                                                            \
            sum += c;                                                                              \
        }                                                                                          \
        if (sv) {                                                                                  \
            for (size_t k = 0; k < n; ++k) {                                                       \
                KEY_T key = sk[k];                                                                 \
                uint32_t pos = h[(key >> shift) & (MASK)]++;                                       \
                dk[pos] = key;                                                                     \
                dv[pos] = sv[k];                                                                   \
            }                                                                                      \
            uint32_t *t = sv;                                                                      \
            sv = dv;                                                                               \
            dv = t;                                                                                \
        } else {                                                                                   \
            for (size_t k = 0; k < n; ++k) {                                                       \
                KEY_T key = sk[k];                                                                 \
                dk[h[(key >> shift) & (MASK)]++] = key;                                            \
            }                                                                                      \
        }                                                                                          \
        KEY_T *t = sk;                                                                             \
        sk = dk;                                                                                   \
        dk = t;                                                                                    \
    }                                                                                              \
    if (sk != keys) {                                                                              \
        memcpy(keys, sk, n * sizeof *keys);                                                        \
        if (vals) memcpy(vals, sv, n * sizeof *vals);                                              \
    }

void bp_radix_sort32(uint32_t *keys, uint32_t *vals, uint32_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits) {
    if (n < 2) return;
    if (n < SMALL_SORT) {  // stable too: equal keys never pass each other
        INSERTION_SORT(uint32_t)
        return;
    }
    if (key_bits == 0 || key_bits > 32) key_bits = 32;
    const unsigned passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    static const unsigned max32 = 3;
    uint32_t hist[3][BUCKETS];
    memset(hist, 0, sizeof hist);
    for (size_t k = 0; k < n; ++k) {
        uint32_t key = keys[k];
        hist[0][key & (BUCKETS - 1)]++;
        hist[1][(key >> DIGIT_BITS) & (BUCKETS - 1)]++;
        hist[2][key >> (2 * DIGIT_BITS)]++;
    }
    RADIX_PASSES(uint32_t, passes < max32 ? passes : max32, DIGIT_BITS, BUCKETS - 1, hist[p])
}

void bp_radix_sort64(uint64_t *keys, uint32_t *vals, uint64_t *tmp_keys, uint32_t *tmp_vals, size_t n,
                     unsigned key_bits) {
    if (n < 2) return;
    if (n < SMALL_SORT) {
        INSERTION_SORT(uint64_t)
        return;
    }
    if (key_bits == 0 || key_bits > 64) key_bits = 64;
    // A few thousand keys or fewer: 8-bit digits, since each pass clears and sums 2^bits buckets
    // (the world sorts a few hundred events per update: 11-bit digits cost 5x as much there).
    const unsigned bits = n < SMALL_DIGITS_BELOW ? 8u : DIGIT_BITS, mask = (1u << bits) - 1u;
    const unsigned passes = (key_bits + bits - 1) / bits;
    uint32_t hist[MAX_PASSES * BUCKETS];  // passes * 2^bits used (8 * 256 or 6 * 2048)
    memset(hist, 0, (size_t)passes * (mask + 1u) * sizeof hist[0]);
    for (size_t k = 0; k < n; ++k) {
        uint64_t key = keys[k];
        for (unsigned p = 0; p < passes; ++p) hist[p * (mask + 1u) + ((key >> (p * bits)) & mask)]++;
    }
    RADIX_PASSES(uint64_t, passes, bits, mask, hist + p * (mask + 1u))
}

// ---------------------------------------------------------------------------------------------
// The parallel form: the keys cut into `tasks` contiguous slices. Each pass counts the digit per
// slice, turns the counts into each slice's starting position in each bucket (bucket by bucket,
// slices in order), and each slice scatters its keys in order: exactly the positions of the
// serial pass, so the result is the same stable sort.

typedef struct radix_job {
    bool wide;               // 64-bit keys
    const void *src_keys;    // this pass's input (uint32_t or uint64_t)
    const uint32_t *src_vals;
    void *dst_keys;
    uint32_t *dst_vals;
    size_t n;
    uint32_t tasks;
    unsigned passes, pass;   // counting: every pass at once when `all`
    bool all;
    uint32_t *hist;          // tasks x passes x BUCKETS, then the totals (passes x BUCKETS)
} radix_job;

static void radix_slice(const radix_job *j, uint32_t t, size_t *b, size_t *e) {
    *b = (size_t)((uint64_t)j->n * t / j->tasks);
    *e = (size_t)((uint64_t)j->n * (t + 1u) / j->tasks);
}

static void radix_count_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const radix_job *j = user;
    size_t b, e;
    radix_slice(j, t, &b, &e);
    uint32_t *h = j->hist + (size_t)t * j->passes * BUCKETS;
    const unsigned p0 = j->all ? 0 : j->pass, p1 = j->all ? j->passes : j->pass + 1;
    for (unsigned p = p0; p < p1; ++p) memset(h + (size_t)p * BUCKETS, 0, BUCKETS * sizeof *h);
    if (j->wide) {
        const uint64_t *k = j->src_keys;
        for (size_t i = b; i < e; ++i)
            for (unsigned p = p0; p < p1; ++p) h[(size_t)p * BUCKETS + ((k[i] >> (p * DIGIT_BITS)) & (BUCKETS - 1))]++;
    } else {
        const uint32_t *k = j->src_keys;
        for (size_t i = b; i < e; ++i)
            for (unsigned p = p0; p < p1; ++p) h[(size_t)p * BUCKETS + ((k[i] >> (p * DIGIT_BITS)) & (BUCKETS - 1))]++;
    }
}

static void radix_scatter_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const radix_job *j = user;
    size_t b, e;
    radix_slice(j, t, &b, &e);
    uint32_t *h = j->hist + ((size_t)t * j->passes + j->pass) * BUCKETS;
    const unsigned shift = j->pass * DIGIT_BITS;
    const uint32_t *sv = j->src_vals;
    uint32_t *dv = j->dst_vals;
#define RADIX_SCATTER(KEY_T)                                               \
    do {                                                                   \
        const KEY_T *sk = j->src_keys;                                     \
        KEY_T *dk = j->dst_keys;                                           \
        for (size_t i = b; i < e; ++i) {                                   \
            const uint32_t pos = h[(sk[i] >> shift) & (BUCKETS - 1)]++;    \
            dk[pos] = sk[i];                                               \
            if (sv) dv[pos] = sv[i];                                       \
        }                                                                  \
    } while (0)
    if (j->wide) RADIX_SCATTER(uint64_t);
    else RADIX_SCATTER(uint32_t);
#undef RADIX_SCATTER
}

static void radix_copy_task(void *user, uint32_t t, uint32_t worker) {
    (void)worker;
    const radix_job *j = user;
    size_t b, e;
    radix_slice(j, t, &b, &e);
    const size_t ks = j->wide ? sizeof(uint64_t) : sizeof(uint32_t);
    memcpy((char *)j->dst_keys + b * ks, (const char *)j->src_keys + b * ks, (e - b) * ks);
    if (j->src_vals) memcpy(j->dst_vals + b, j->src_vals + b, (e - b) * sizeof *j->dst_vals);
}

size_t bp_radix_hist_size(uint32_t tasks, unsigned key_bits, bool wide) {
    const unsigned max_bits = wide ? 64u : 32u;
    if (key_bits == 0 || key_bits > max_bits) key_bits = max_bits;
    const unsigned passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    return ((size_t)tasks + 1) * passes * BUCKETS;
}

static bp_status radix_sort_pool(bp_pool *pool, uint32_t tasks, uint32_t *hist, bool wide, void *keys, uint32_t *vals,
                                 void *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits) {
    const unsigned max_bits = wide ? 64u : 32u;
    if (key_bits == 0 || key_bits > max_bits) key_bits = max_bits;
    radix_job j;
    memset(&j, 0, sizeof j);
    j.wide = wide;
    j.n = n;
    j.tasks = tasks;
    j.passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    j.hist = hist;
    j.src_keys = keys;
    j.src_vals = vals;
    j.all = true;
    bp_status st = bp_pool_run(pool, tasks, radix_count_task, &j);
    if (st != BP_OK) return st;
    uint32_t *total = hist + (size_t)tasks * j.passes * BUCKETS;
    for (unsigned p = 0; p < j.passes; ++p) {
        uint32_t *tp = total + (size_t)p * BUCKETS;
        memset(tp, 0, BUCKETS * sizeof *tp);
        for (uint32_t t = 0; t < tasks; ++t) {
            const uint32_t *h = hist + ((size_t)t * j.passes + p) * BUCKETS;
            for (unsigned b = 0; b < BUCKETS; ++b) tp[b] += h[b];
        }
    }
    void *sk = keys, *dk = tmp_keys;
    uint32_t *sv = vals, *dv = tmp_vals;
    bool fresh = true;  // the per-task counts describe the current input
    j.all = false;
    for (unsigned p = 0; p < j.passes; ++p) {
        const uint32_t *tp = total + (size_t)p * BUCKETS;
        bool constant = false;
        for (unsigned b = 0; b < BUCKETS && !constant; ++b) constant = tp[b] == n;
        if (constant) continue;  // one digit value: nothing moves
        j.pass = p;
        j.src_keys = sk;
        j.src_vals = sv;
        if (!fresh) {
            st = bp_pool_run(pool, tasks, radix_count_task, &j);
            if (st != BP_OK) return st;
        }
        uint32_t sum = 0;
        for (unsigned b = 0; b < BUCKETS; ++b) {
            for (uint32_t t = 0; t < tasks; ++t) {
                uint32_t *h = hist + ((size_t)t * j.passes + p) * BUCKETS + b;
                const uint32_t c = *h;
                *h = sum;
                sum += c;
            }
        }
        j.dst_keys = dk;
        j.dst_vals = sv ? dv : NULL;
        st = bp_pool_run(pool, tasks, radix_scatter_task, &j);
        if (st != BP_OK) return st;
        void *tk = sk;
        sk = dk;
        dk = tk;
        if (sv) {
            uint32_t *tv = sv;
            sv = dv;
            dv = tv;
        }
        fresh = false;
    }
    if (sk != keys) {
        j.src_keys = sk;
        j.src_vals = vals ? sv : NULL;
        j.dst_keys = keys;
        j.dst_vals = vals;
        st = bp_pool_run(pool, tasks, radix_copy_task, &j);
    }
    return st;
}

// The pooled sorts: serial below two tasks, as bp_radix_sort32 / bp_radix_sort64.
static bp_status radix_sort_any(bp_pool *pool, uint32_t tasks, uint32_t *hist, bool wide, void *keys, uint32_t *vals,
                                void *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits) {
    if (n < 2) return BP_OK;
    if (tasks >= 2) return radix_sort_pool(pool, tasks, hist, wide, keys, vals, tmp_keys, tmp_vals, n, key_bits);
    if (wide) bp_radix_sort64(keys, vals, tmp_keys, tmp_vals, n, key_bits);
    else bp_radix_sort32(keys, vals, tmp_keys, tmp_vals, n, key_bits);
    return BP_OK;
}

bp_status bp_radix_sort32_pool(bp_pool *pool, uint32_t tasks, uint32_t *hist, uint32_t *keys, uint32_t *vals,
                               uint32_t *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits) {
    return radix_sort_any(pool, tasks, hist, false, keys, vals, tmp_keys, tmp_vals, n, key_bits);
}

bp_status bp_radix_sort64_pool(bp_pool *pool, uint32_t tasks, uint32_t *hist, uint64_t *keys, uint32_t *vals,
                               uint64_t *tmp_keys, uint32_t *tmp_vals, size_t n, unsigned key_bits) {
    return radix_sort_any(pool, tasks, hist, true, keys, vals, tmp_keys, tmp_vals, n, key_bits);
}
