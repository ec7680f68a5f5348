// The reference world (world_ref.h): dense arrays of the live objects, a key -> index hash map,
// every pair found again at each update and diffed with the last update's sorted pair set.
#include "world_ref.h"

#include <stdlib.h>
#include <string.h>

#include "broadphase.h"
#include "free_all.h"
#include "probe.h"

struct bp_wref {
    int dim;
    size_t n, cap;
    uint64_t *keys;
    float *boxes;  // 6 floats per object: min[3], max[3] (only dim used)
    bool *stat;
    uint64_t *cat, *mask;
    // Open addressing, linear probing, backward-shift deletion: slot holds an index or EMPTY.
    uint32_t *table;
    size_t table_cap;  // a power of two, at least twice n
    // Pairs of the last update, and this update's begins and ends.
    bp_wref_pair *pairs, *next, *begins, *ends;
    size_t npairs, nbegins, nends, pairs_cap, next_cap, begins_cap, ends_cap;
    // Scratch: the boxes in bp_box2/bp_box3 layout for the library's sweep; query results.
    float *flat;
    size_t flat_cap;
    uint64_t *hits;
    size_t hits_cap;
    bp_context *ctx;
};

#define WREF_EMPTY BP_PROBE_EMPTY

static uint64_t wref_hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdu;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53u;
    return k ^ (k >> 33);
}

// Grows *arr (elements of `size` bytes) to hold `need`. Returns 0 or -2.
static int wref_reserve(void **arr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = realloc(*arr, c * size);
    if (!p) return -2;
    *arr = p;
    *cap = c;
    return 0;
}

bp_wref *bp_wref_create(int dim) {
    if (dim != 2 && dim != 3) return NULL;
    bp_wref *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->dim = dim;
    w->table_cap = 64;
    w->table = bp_probe_table(w->table_cap);
    if (!w->table) {
        free(w);
        return NULL;
    }
    return w;
}

void bp_wref_destroy(bp_wref *w) {
    if (!w) return;
    BP_FREE_ALL(w->keys, w->boxes, w->stat, w->cat, w->mask, w->table, w->pairs, w->next, w->begins, w->ends, w->flat,
                w->hits);
    bp_context_destroy(w->ctx);
    free(w);
}

// The table position holding key, or the empty position where it would go.
static size_t wref_find(const bp_wref *w, uint64_t key) {
    size_t m = w->table_cap - 1, at = (size_t)wref_hash(key) & m;
    while (w->table[at] != WREF_EMPTY && w->keys[w->table[at]] != key) at = (at + 1) & m;
    return at;
}

static uint32_t wref_index(const bp_wref *w, uint64_t key) {
    return w->table[wref_find(w, key)];
}

static int wref_rehash(bp_wref *w, size_t cap) {
    uint32_t *t = bp_probe_table(cap);
    if (!t) return -2;
    free(w->table);
    w->table = t;
    w->table_cap = cap;
    for (size_t i = 0; i < w->n; ++i) w->table[wref_find(w, w->keys[i])] = (uint32_t)i;
    return 0;
}

static uint64_t wref_entry_hash(const void *w, uint32_t e) {
    return wref_hash(((const bp_wref *)w)->keys[e]);
}

// Removes table position `at` and shifts the following cluster back over it.
static void wref_unlink(bp_wref *w, size_t at) {
    bp_probe_unlink(w->table, w->table_cap - 1, at, wref_entry_hash, w);
}

int bp_wref_add(bp_wref *w, uint64_t key, const float *box, bool is_static, uint64_t category, uint64_t mask) {
    if (wref_index(w, key) != WREF_EMPTY) return -1;
    if (w->n + 1 > UINT32_MAX - 1) return -2;
    if (2 * (w->n + 1) > w->table_cap && wref_rehash(w, w->table_cap * 2) != 0) return -2;
    if (w->n == w->cap) {
        size_t c = w->cap ? w->cap * 2 : 64;
        uint64_t *k = realloc(w->keys, c * sizeof *k);
        if (k) w->keys = k;
        float *b = realloc(w->boxes, c * 6 * sizeof *b);
        if (b) w->boxes = b;
        bool *s = realloc(w->stat, c * sizeof *s);
        if (s) w->stat = s;
        uint64_t *ca = realloc(w->cat, c * sizeof *ca);
        if (ca) w->cat = ca;
        uint64_t *ma = realloc(w->mask, c * sizeof *ma);
        if (ma) w->mask = ma;
        if (!k || !b || !s || !ca || !ma) return -2;
        w->cap = c;
    }
    size_t i = w->n++;
    w->keys[i] = key;
    memset(w->boxes + 6 * i, 0, 6 * sizeof(float));
    for (int a = 0; a < w->dim; ++a) {
        w->boxes[6 * i + (size_t)a] = box[a];
        w->boxes[6 * i + 3 + (size_t)a] = box[w->dim + a];
    }
    w->stat[i] = is_static;
    w->cat[i] = category;
    w->mask[i] = mask;
    w->table[wref_find(w, key)] = (uint32_t)i;
    return 0;
}

int bp_wref_move(bp_wref *w, uint64_t key, const float *box) {
    uint32_t i = wref_index(w, key);
    if (i == WREF_EMPTY) return -1;
    for (int a = 0; a < w->dim; ++a) {
        w->boxes[6 * (size_t)i + (size_t)a] = box[a];
        w->boxes[6 * (size_t)i + 3 + (size_t)a] = box[w->dim + a];
    }
    return 0;
}

int bp_wref_remove(bp_wref *w, uint64_t key) {
    size_t at = wref_find(w, key);
    uint32_t i = w->table[at];
    if (i == WREF_EMPTY) return -1;
    wref_unlink(w, at);
    size_t last = w->n - 1;
    if (i != last) {
        // The last object takes the removed one's place.
        w->table[wref_find(w, w->keys[last])] = i;
        w->keys[i] = w->keys[last];
        memcpy(w->boxes + 6 * (size_t)i, w->boxes + 6 * last, 6 * sizeof(float));
        w->stat[i] = w->stat[last];
        w->cat[i] = w->cat[last];
        w->mask[i] = w->mask[last];
    }
    w->n--;
    return 0;
}

int bp_wref_set_kind(bp_wref *w, uint64_t key, bool is_static) {
    uint32_t i = wref_index(w, key);
    if (i == WREF_EMPTY) return -1;
    w->stat[i] = is_static;
    return 0;
}

int bp_wref_set_filter(bp_wref *w, uint64_t key, uint64_t category, uint64_t mask) {
    uint32_t i = wref_index(w, key);
    if (i == WREF_EMPTY) return -1;
    w->cat[i] = category;
    w->mask[i] = mask;
    return 0;
}

bool bp_wref_has(const bp_wref *w, uint64_t key) {
    return wref_index(w, key) != WREF_EMPTY;
}

size_t bp_wref_count(const bp_wref *w) {
    return w->n;
}

static bool wref_overlap(const float *a, const float *b, int dim) {
    for (int k = 0; k < dim; ++k)
        if (a[k] > b[3 + k] || b[k] > a[3 + k]) return false;
    return true;
}

// Appends (i, j) to next[] when the world's rules let the overlapping pair count.
static int wref_emit(bp_wref *w, size_t i, size_t j, size_t *count) {
    if (w->stat[i] && w->stat[j]) return 0;
    if (!(w->cat[i] & w->mask[j]) || !(w->cat[j] & w->mask[i])) return 0;
    void *arr = w->next;
    if (wref_reserve(&arr, &w->next_cap, *count + 1, sizeof(bp_wref_pair)) != 0) return -2;
    w->next = arr;
    uint64_t a = w->keys[i], b = w->keys[j];
    w->next[*count] = a < b ? (bp_wref_pair){a, b} : (bp_wref_pair){b, a};
    ++*count;
    return 0;
}

typedef struct wref_sink {
    bp_wref *w;
    size_t count;
    int rc;
} wref_sink;

static bool wref_on_pairs(const bp_pair *pairs, size_t count, void *user) {
    wref_sink *s = user;
    for (size_t k = 0; k < count && s->rc == 0; ++k) s->rc = wref_emit(s->w, pairs[k].i, pairs[k].j, &s->count);
    return s->rc == 0;
}

// Every counted pair of the current boxes into next[] (unsorted). Returns the count or -2.
static long long wref_all_pairs(bp_wref *w) {
    size_t count = 0;
    if (w->n <= BP_WREF_BRUTE_MAX) {
        for (size_t i = 0; i < w->n; ++i)
            for (size_t j = i + 1; j < w->n; ++j)
                if (wref_overlap(w->boxes + 6 * i, w->boxes + 6 * j, w->dim) && wref_emit(w, i, j, &count) != 0)
                    return -2;
        return (long long)count;
    }
    if (!w->ctx) {
        bp_context_def def = bp_default_context_def();
        def.dimension = w->dim;
        def.method = BP_METHOD_SWEEP;
        if (bp_context_create(&def, &w->ctx) != BP_OK) return -2;
    }
    size_t d = (size_t)w->dim;
    void *arr = w->flat;
    if (wref_reserve(&arr, &w->flat_cap, w->n * 2 * d, sizeof(float)) != 0) return -2;
    w->flat = arr;
    for (size_t i = 0; i < w->n; ++i) {
        memcpy(w->flat + i * 2 * d, w->boxes + 6 * i, d * sizeof(float));
        memcpy(w->flat + i * 2 * d + d, w->boxes + 6 * i + 3, d * sizeof(float));
    }
    wref_sink s = {w, 0, 0};
    // The floats have the bp_box2 / bp_box3 layout (min[dim], max[dim]).
    const void *boxes = w->flat;
    bp_status st = w->dim == 2 ? bp_find_pairs2_cb(w->ctx, boxes, w->n, wref_on_pairs, &s)
                               : bp_find_pairs3_cb(w->ctx, boxes, w->n, wref_on_pairs, &s);
    if (st != BP_OK || s.rc != 0) return -2;
    return (long long)s.count;
}

static int wref_cmp(const void *x, const void *y) {
    const bp_wref_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

void bp_wref_sort(bp_wref_pair *pairs, size_t count) {
    if (count > 1) qsort(pairs, count, sizeof *pairs, wref_cmp);
}

int bp_wref_update(bp_wref *w) {
    long long got = wref_all_pairs(w);
    if (got < 0) return -2;
    size_t m = (size_t)got;
    bp_wref_sort(w->next, m);
    void *b = w->begins, *e = w->ends;
    int rc = wref_reserve(&b, &w->begins_cap, m + 1, sizeof(bp_wref_pair));
    w->begins = b;
    rc |= wref_reserve(&e, &w->ends_cap, w->npairs + 1, sizeof(bp_wref_pair));
    w->ends = e;
    if (rc != 0) return -2;
    size_t i = 0, j = 0, nb = 0, ne = 0;
    while (i < m || j < w->npairs) {
        int c = i == m ? 1 : (j == w->npairs ? -1 : wref_cmp(&w->next[i], &w->pairs[j]));
        if (c == 0) {
            ++i;
            ++j;
        } else if (c < 0) {
            w->begins[nb++] = w->next[i++];
        } else {
            w->ends[ne++] = w->pairs[j++];
        }
    }
    w->nbegins = nb;
    w->nends = ne;
    // The new set becomes the current one; the old buffer is next update's scratch.
    bp_wref_pair *t = w->pairs;
    size_t tc = w->pairs_cap;
    w->pairs = w->next;
    w->pairs_cap = w->next_cap;
    w->next = t;
    w->next_cap = tc;
    w->npairs = m;
    return 0;
}

const bp_wref_pair *bp_wref_pairs(const bp_wref *w, size_t *count) {
    *count = w->npairs;
    return w->pairs;
}

const bp_wref_pair *bp_wref_begins(const bp_wref *w, size_t *count) {
    *count = w->nbegins;
    return w->begins;
}

const bp_wref_pair *bp_wref_ends(const bp_wref *w, size_t *count) {
    *count = w->nends;
    return w->ends;
}

static int wref_cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

int bp_wref_query_box(bp_wref *w, const float *lo, const float *hi, uint64_t mask, const uint64_t **keys,
                      size_t *count) {
    float q[6] = {0};
    for (int a = 0; a < w->dim; ++a) {
        q[a] = lo[a];
        q[3 + a] = hi[a];
    }
    size_t c = 0;
    for (size_t i = 0; i < w->n; ++i) {
        if (!(w->cat[i] & mask) || !wref_overlap(w->boxes + 6 * i, q, w->dim)) continue;
        void *arr = w->hits;
        if (wref_reserve(&arr, &w->hits_cap, c + 1, sizeof(uint64_t)) != 0) return -2;
        w->hits = arr;
        w->hits[c++] = w->keys[i];
    }
    if (c > 1) qsort(w->hits, c, sizeof *w->hits, wref_cmp_u64);
    *keys = w->hits;
    *count = c;
    return 0;
}

bool bp_wref_compare(const bp_wref_pair *got, size_t ngot, const bp_wref_pair *want, size_t nwant, size_t *missing,
                     size_t *extra) {
    size_t i = 0, j = 0, miss = 0, ext = 0;
    while (i < ngot || j < nwant) {
        int c = i == ngot ? 1 : (j == nwant ? -1 : wref_cmp(&got[i], &want[j]));
        if (c == 0) {
            ++i;
            ++j;
        } else if (c < 0) {
            ++ext;
            ++i;
        } else {
            ++miss;
            ++j;
        }
    }
    if (missing) *missing = miss;
    if (extra) *extra = ext;
    return miss == 0 && ext == 0;
}
