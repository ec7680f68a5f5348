// The peer table and what every peer shares: creation, the timed step, and the exact filter
// that turns a peer's candidates into a pair set comparable with ours.
#include "peers.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "free_all.h"
#include "peer_impl.h"

static const bp_peer_class *const bp_peer_table[] = {
#ifdef BP_PEER_HAVE_CHIPMUNK
    &bp_peer_chipmunk_hash,
    &bp_peer_chipmunk_bbtree,
    &bp_peer_chipmunk_bbtree_vel,
    &bp_peer_chipmunk_sweep1d,
#endif
#ifdef BP_PEER_HAVE_BOX2D
    &bp_peer_box2d,
#endif
#ifdef BP_PEER_HAVE_BULLET
    &bp_peer_bullet_dbvt,
    &bp_peer_bullet_sap,
#endif
#ifdef BP_PEER_HAVE_CGAL
    &bp_peer_cgal_box,
#endif
    NULL  // keeps the array non-empty when no peer is found
};

// Counted, not sizeof-derived: with no peer found a constant 0 makes every `k < count` test
// a warning.
size_t bp_peer_count(void) {
    size_t c = 0;
    while (bp_peer_table[c]) c++;
    return c;
}

#define BP_PEER_TABLE_COUNT bp_peer_count()

const bp_peer_class *bp_peer_class_at(size_t k) {
    return k < BP_PEER_TABLE_COUNT ? bp_peer_table[k] : NULL;
}

const char *bp_peer_name(size_t k) {
    return k < BP_PEER_TABLE_COUNT ? bp_peer_table[k]->name : NULL;
}

size_t bp_peer_find(const char *name) {
    if (!name) return (size_t)-1;
    for (size_t k = 0; k < BP_PEER_TABLE_COUNT; ++k)
        if (strcmp(bp_peer_table[k]->name, name) == 0) return k;
    return (size_t)-1;
}

bool bp_peer_supports(size_t k, int dim) {
    if (k >= BP_PEER_TABLE_COUNT) return false;
    return dim == 2 ? bp_peer_table[k]->dim2 : (dim == 3 ? bp_peer_table[k]->dim3 : false);
}

const char *bp_peer_known_defect(size_t k) {
    return k < BP_PEER_TABLE_COUNT ? bp_peer_table[k]->known_defect : NULL;
}

// Grows an array of `elem`-byte elements to hold at least `need` (1.5x, kept).
static int bp_peer_reserve(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap + *cap / 2;
    if (c < need) c = need;
    if (c < 64) c = 64;
    if (c > SIZE_MAX / elem) return -1;
    void *q = realloc(*arr, c * elem);
    if (!q) return -1;
    *arr = q;
    *cap = c;
    return 0;
}

// Processor time, not wall time: on a loaded machine a peer must not be skipped for the time it
// spent waiting for a core. The peers are single-threaded.
double bp_peer_clock(void) {
    clock_t c = clock();
    return c == (clock_t)-1 ? 0.0 : (double)c / CLOCKS_PER_SEC;
}

void bp_peer_set_time_limit(void *peer, double seconds) {
    bp_peer *p = peer;
    if (p) p->time_limit = seconds > 0.0 ? seconds : 0.0;
}

int bp_peer_grow(bp_peer *p) {
    void *a = p->cand;
    int rc = bp_peer_reserve(&a, &p->cand_cap, p->cand_count + 1, 2 * sizeof(uint32_t));
    p->cand = a;
    return rc;
}

static void bp_peer_free_common(bp_peer *p) {
    BP_FREE_ALL(p->cand, p->prev_boxes, p->derived_vel, p->exact, p->scratch, p->bucket, p);
}

void *bp_peer_create(size_t k, int dim, size_t n, const float *world_lo, const float *world_hi) {
    if (!bp_peer_supports(k, dim) || n == 0 || n > ((size_t)1 << 30) || !world_lo || !world_hi) return NULL;
    bp_peer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cls = bp_peer_table[k];
    p->variant = p->cls->variant;
    p->dim = dim;
    p->n = n;
    memcpy(p->lo, world_lo, (size_t)dim * sizeof *p->lo);
    memcpy(p->hi, world_hi, (size_t)dim * sizeof *p->hi);
    const size_t d = (size_t)dim;
    if (p->cls->uses_velocity) {
        p->prev_boxes = malloc(n * 2 * d * sizeof(float));
        p->derived_vel = calloc(n * d, sizeof(float));
        if (!p->prev_boxes || !p->derived_vel) {
            bp_peer_free_common(p);
            return NULL;
        }
    }
    if (p->cls->create(p) != 0) {
        bp_peer_free_common(p);
        return NULL;
    }
    return p;
}

int bp_peer_step(void *peer, const float *boxes, size_t n, const float *velocities) {
    bp_peer *p = peer;
    if (!p || !boxes || p->failed || n != p->n) return -1;
    const size_t d = (size_t)p->dim;
    if (p->cls->uses_velocity && !velocities) {
        // A physics engine knows its bodies' velocities; without them, the motion since the
        // previous frame is the best estimate (zero on the first frame).
        if (p->steps > 0) {
            for (size_t i = 0; i < n; ++i) {
                const float *b = boxes + i * 2 * d, *q = p->prev_boxes + i * 2 * d;
                for (size_t a = 0; a < d; ++a)
                    p->derived_vel[i * d + a] = 0.5f * ((b[a] + b[d + a]) - (q[a] + q[d + a]));
            }
        }
        memcpy(p->prev_boxes, boxes, n * 2 * d * sizeof(float));
        velocities = p->derived_vel;
    }
    p->cand_count = 0;
    if (p->time_limit > 0.0) p->step_start = bp_peer_clock();
    int rc = p->cls->step(p, boxes, velocities);
    if (rc != 0) {
        p->failed = true;
        return rc == BP_PEER_TOO_SLOW ? BP_PEER_TOO_SLOW : -1;
    }
    p->steps++;
    return 0;
}

size_t bp_peer_candidates(const void *peer) {
    const bp_peer *p = peer;
    return p ? p->cand_count : 0;
}

size_t bp_peer_duplicates(const void *peer) {
    const bp_peer *p = peer;
    return p ? p->duplicates : 0;
}

static bool bp_peer_overlap(const float *a, const float *b, size_t d) {
    for (size_t k = 0; k < d; ++k)
        if (a[k] > b[d + k] || b[k] > a[d + k]) return false;
    return true;
}

// One stable counting-sort pass of pairs (two uint32_t each) by element `which` (0: i, 1: j),
// keys below n. Not timed: it runs after the step.
static void bp_peer_counting_pass(const uint32_t *src, uint32_t *dst, size_t count, int which, uint32_t *bucket,
                                  size_t n) {
    memset(bucket, 0, (n + 1) * sizeof *bucket);
    for (size_t k = 0; k < count; ++k) bucket[src[2 * k + (size_t)which] + 1]++;
    for (size_t k = 0; k < n; ++k) bucket[k + 1] += bucket[k];
    for (size_t k = 0; k < count; ++k) {
        uint32_t at = bucket[src[2 * k + (size_t)which]]++;
        dst[2 * (size_t)at] = src[2 * k];
        dst[2 * (size_t)at + 1] = src[2 * k + 1];
    }
}

int bp_peer_exact_pairs(void *peer, const float *boxes, const uint32_t **pairs, size_t *count) {
    bp_peer *p = peer;
    if (!p || !boxes || !pairs || !count || p->failed || p->steps == 0) return -1;
    const size_t d = (size_t)p->dim, n = p->n, m = p->cand_count;
    void *e = p->exact, *s = p->scratch, *b = p->bucket;
    int rc = bp_peer_reserve(&e, &p->exact_cap, m + 1, 2 * sizeof(uint32_t));
    p->exact = e;
    rc |= bp_peer_reserve(&s, &p->scratch_cap, m + 1, 2 * sizeof(uint32_t));
    p->scratch = s;
    rc |= bp_peer_reserve(&b, &p->bucket_cap, n + 1, sizeof(uint32_t));
    p->bucket = b;
    if (rc != 0) return -1;
    // Filter to exact closed-box overlaps, i < j. An index out of range is a peer bug: fail.
    size_t kept = 0;
    for (size_t k = 0; k < m; ++k) {
        uint32_t i = p->cand[2 * k], j = p->cand[2 * k + 1];
        if (i >= n || j >= n) return -1;
        if (i == j) continue;
        if (i > j) {
            uint32_t t = i;
            i = j;
            j = t;
        }
        if (!bp_peer_overlap(boxes + i * 2 * d, boxes + j * 2 * d, d)) continue;
        p->scratch[2 * kept] = i;
        p->scratch[2 * kept + 1] = j;
        kept++;
    }
    // Sort by (i, j): by j, then stably by i.
    bp_peer_counting_pass(p->scratch, p->exact, kept, 1, p->bucket, n);
    bp_peer_counting_pass(p->exact, p->scratch, kept, 0, p->bucket, n);
    size_t out = 0, dup = 0;
    for (size_t k = 0; k < kept; ++k) {
        uint32_t i = p->scratch[2 * k], j = p->scratch[2 * k + 1];
        if (out > 0 && p->exact[2 * (out - 1)] == i && p->exact[2 * (out - 1) + 1] == j) {
            dup++;
            continue;
        }
        p->exact[2 * out] = i;
        p->exact[2 * out + 1] = j;
        out++;
    }
    p->exact_count = out;
    p->duplicates = dup;
    *pairs = p->exact;
    *count = out;
    return 0;
}

static int bp_peer_cmp(const uint32_t *a, const uint32_t *b) {
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
    return 0;
}

bool bp_peer_compare(const uint32_t *pairs, size_t count, const uint32_t *reference, size_t ref_count,
                     size_t *missing, size_t *extra) {
    size_t a = 0, b = 0, miss = 0, ext = 0;
    while (a < count || b < ref_count) {
        int c = a == count ? 1 : (b == ref_count ? -1 : bp_peer_cmp(pairs + 2 * a, reference + 2 * b));
        if (c == 0) {
            a++;
            b++;
        } else if (c < 0) {
            ext++;
            a++;
        } else {
            miss++;
            b++;
        }
    }
    if (missing) *missing = miss;
    if (extra) *extra = ext;
    return miss == 0 && ext == 0;
}

void bp_peer_destroy(void *peer) {
    bp_peer *p = peer;
    if (!p) return;
    p->cls->destroy(p);
    bp_peer_free_common(p);
}
