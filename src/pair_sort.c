// Sorted output (src/pair_sort.h): pack, radix-sort, unpack, each pass on the workers.
#include "pair_sort.h"
#include "par.h"

// Packing pairs into sort keys and back, over a range (a task's share with workers).
typedef struct pack_job {
    bp_pair *pairs;
    uint64_t *keys;
    unsigned bits;
    bool unpack;
} pack_job;

static void pack_range(void *user, uint32_t t, size_t b, size_t e) {
    (void)t;
    const pack_job *j = user;
    bp_pair *BP_RESTRICT p = j->pairs;
    uint64_t *BP_RESTRICT keys = j->keys;
    const unsigned bits = j->bits;
    if (!j->unpack) {
        for (size_t k = b; k < e; ++k) keys[k] = ((uint64_t)p[k].i << bits) | p[k].j;
        return;
    }
    const uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (size_t k = b; k < e; ++k) {
        p[k].i = (uint32_t)(keys[k] >> bits);
        p[k].j = (uint32_t)(keys[k] & mask);
    }
}

bp_status bp_pair_sort(bp_context *ctx, bp_pair_sort_scratch *sc, bp_pair *pairs, size_t count, size_t cap, size_t n) {
    if (count < 2) return BP_OK;
    BP_RESERVE_DISCARD(ctx, sc->keys, sc->keys_cap, cap);
    BP_RESERVE_DISCARD(ctx, sc->tmp, sc->tmp_cap, cap);
    unsigned bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < n) ++bits;
    pack_job j = {pairs, sc->keys, bits, false};
    const uint32_t tasks = bp_par_tasks(ctx, count, BP_PAR_GRAIN_MAP);
    bp_status st = bp_par_split(ctx, tasks, count, pack_range, &j);
    if (st == BP_OK) st = bp_par_radix64(ctx, sc->keys, NULL, sc->tmp, NULL, count, 2 * bits);
    j.unpack = true;
    if (st == BP_OK) st = bp_par_split(ctx, tasks, count, pack_range, &j);
    return st;
}

void bp_pair_sort_release(bp_context *ctx, bp_pair_sort_scratch *sc) {
    BP_RELEASE(ctx, sc->keys, sc->keys_cap);
    BP_RELEASE(ctx, sc->tmp, sc->tmp_cap);
}
