// BP_FREE_ALL(a, b, ...): free() on each pointer, for the destructors of the benchmark's structs
// of arrays, which own many buffers each.
#ifndef BP_BENCH_FREE_ALL_H
#define BP_BENCH_FREE_ALL_H

#include <stddef.h>
#include <stdlib.h>

static inline void bp_free_each(void *const *p, size_t n) {
    for (size_t k = 0; k < n; ++k) free(p[k]);
}

#define BP_FREE_ALL(...)                                                          \
    do {                                                                          \
        void *const bp_free_all_[] = {__VA_ARGS__};                               \
        bp_free_each(bp_free_all_, sizeof bp_free_all_ / sizeof bp_free_all_[0]); \
    } while (0)

#endif
