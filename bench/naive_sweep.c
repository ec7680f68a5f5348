// Seed 003's second method, as written there: quicksort the boxes by their left edge, then walk
// them in that order keeping a linked list of active boxes; each new box is pushed on the list,
// and the list is walked, unlinking boxes that ended left of the new one's left edge and fully
// testing the others. O(n log n) on spread boxes, O(n^2) when everything shares one x.
// Honest baseline: qsort with a comparator (the C library's quicksort), no SIMD, no coherence,
// but arrays are kept between frames like any sane implementation.
#include "naive_sweep.h"

#include <stdlib.h>
#include <string.h>

// qsort's comparator gets no user pointer; the benchmark is single-threaded.
static const float *bp_ns_boxes;
static size_t bp_ns_stride;

static int bp_ns_compare(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    float ka = bp_ns_boxes[a * bp_ns_stride], kb = bp_ns_boxes[b * bp_ns_stride];
    if (ka < kb) return -1;
    if (ka > kb) return 1;
    return (a > b) - (a < b); // qsort is not stable: ties by index keep runs deterministic
}

void bp_naive_sweep_init(bp_naive_sweep *s) { memset(s, 0, sizeof *s); }

void bp_naive_sweep_free(bp_naive_sweep *s) {
    free(s->order);
    free(s->next);
    free(s->pairs);
    memset(s, 0, sizeof *s);
}

static int bp_ns_push(bp_naive_sweep *s, uint32_t a, uint32_t b) {
    if (s->count == s->pair_cap) {
        size_t cap = s->pair_cap < 1024 ? 1024 : s->pair_cap + s->pair_cap / 2;
        bp_pair *p = realloc(s->pairs, cap * sizeof *p);
        if (!p) return -1;
        s->pairs = p;
        s->pair_cap = cap;
    }
    bp_pair *p = &s->pairs[s->count++];
    p->i = a < b ? a : b;
    p->j = a < b ? b : a;
    return 0;
}

#define BP_NS_NIL UINT32_MAX

int bp_naive_sweep_run(bp_naive_sweep *s, const float *boxes, size_t n, int dim) {
    s->count = 0;
    s->checks = 0;
    if (n < 2) return 0;
    if (n > s->cap) {
        uint32_t *order = malloc(n * sizeof *order);
        uint32_t *next = malloc(n * sizeof *next);
        if (!order || !next) {
            free(order);
            free(next);
            return -1;
        }
        free(s->order);
        free(s->next);
        s->order = order;
        s->next = next;
        s->cap = n;
    }
    size_t d = (size_t)dim, stride = 2 * d;
    for (size_t k = 0; k < n; ++k) s->order[k] = (uint32_t)k;
    bp_ns_boxes = boxes;
    bp_ns_stride = stride;
    qsort(s->order, n, sizeof *s->order, bp_ns_compare);

    // The active list links sorted positions; `head` is the most recently added box.
    uint32_t head = BP_NS_NIL;
    uint64_t checks = 0;
    for (size_t k = 0; k < n; ++k) {
        uint32_t id = s->order[k];
        const float *b = boxes + id * stride;
        float left = b[0];
        uint32_t *link = &head;
        while (*link != BP_NS_NIL) {
            uint32_t pos = *link;
            uint32_t other = s->order[pos];
            const float *o = boxes + other * stride;
            if (o[d] < left) { // ended before this one starts, and before every later one
                *link = s->next[pos];
                continue;
            }
            ++checks;
            int hit = 1;
            for (size_t a = 0; a < d; ++a) {
                if (!(o[a] <= b[d + a] && b[a] <= o[d + a])) {
                    hit = 0;
                    break;
                }
            }
            if (hit && bp_ns_push(s, id, other) != 0) {
                s->checks = checks;
                return -1;
            }
            link = &s->next[pos];
        }
        s->next[k] = head;
        head = (uint32_t)k;
    }
    s->checks = checks;
    return 0;
}
