// What every persistent peer shares (world_peers.h): the objects' slots, the set of touching
// pairs with its events, and the sorted results read after timing.
#include "world_peers.h"

#include <stdlib.h>
#include <string.h>

#include "free_all.h"
#include "peer_impl.h"
#include "peers.h"
#include "probe.h"

#define WP_EMPTY BP_PROBE_EMPTY

bool bp_wpeer_supports(size_t k, int dim) {
    const bp_peer_class *c = bp_peer_class_at(k);
    if (!c || !c->world) return false;
    return dim == 2 ? c->world->dim2 : (dim == 3 ? c->world->dim3 : false);
}

static void wp_free_common(bp_wpeer *w) {
    BP_FREE_ALL(w->key, w->cat, w->mask, w->box, w->prev, w->live, w->stat, w->set, w->index, w->begins, w->ends,
                w->pairs, w);
}

void *bp_wpeer_create(size_t k, int dim, size_t slots, const float *world_lo, const float *world_hi) {
    if (!bp_wpeer_supports(k, dim) || slots == 0 || slots > ((size_t)1 << 30) || !world_lo || !world_hi) return NULL;
    bp_wpeer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->cls = bp_peer_class_at(k);
    w->variant = w->cls->variant;
    w->dim = dim;
    w->slots = slots;
    memcpy(w->lo, world_lo, (size_t)dim * sizeof *w->lo);
    memcpy(w->hi, world_hi, (size_t)dim * sizeof *w->hi);
    w->key = calloc(slots, sizeof *w->key);
    w->cat = calloc(slots, sizeof *w->cat);
    w->mask = calloc(slots, sizeof *w->mask);
    w->box = calloc(slots * 6, sizeof *w->box);
    w->prev = calloc(slots * 6, sizeof *w->prev);
    w->live = calloc(slots, sizeof *w->live);
    w->stat = calloc(slots, sizeof *w->stat);
    w->index_cap = 1024;
    w->index = bp_probe_table(w->index_cap);
    if (!w->key || !w->cat || !w->mask || !w->box || !w->prev || !w->live || !w->stat || !w->index) {
        wp_free_common(w);
        return NULL;
    }
    if (w->cls->world->create(w) != 0) {
        wp_free_common(w);
        return NULL;
    }
    return w;
}

void bp_wpeer_destroy(void *peer) {
    bp_wpeer *w = peer;
    if (!w) return;
    w->cls->world->destroy(w);
    wp_free_common(w);
}

void bp_wpeer_set_time_limit(void *peer, double seconds) {
    bp_wpeer *w = peer;
    if (w) w->time_limit = seconds > 0.0 ? seconds : 0.0;
}

size_t bp_wpeer_candidates(const void *peer) {
    const bp_wpeer *w = peer;
    return w ? w->candidates : 0;
}

// ---------------------------------------------------------------------------------------------
// The touching set

static uint64_t wp_hash(uint64_t a, uint64_t b) {
    uint64_t h = a * 0x9E3779B97F4A7C15u ^ (b + 0x632BE59BD9B4E019u + (a << 6) + (a >> 2));
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93u;
    return h ^ (h >> 32);
}

static size_t wp_find(const bp_wpeer *w, uint64_t a, uint64_t b) {
    size_t m = w->index_cap - 1, at = (size_t)wp_hash(a, b) & m;
    while (w->index[at] != WP_EMPTY && (w->set[w->index[at]].a != a || w->set[w->index[at]].b != b))
        at = (at + 1) & m;
    return at;
}

static int wp_grow_index(bp_wpeer *w) {
    size_t cap = w->index_cap * 2;
    uint32_t *idx = bp_probe_table(cap);
    if (!idx) return -1;
    free(w->index);
    w->index = idx;
    w->index_cap = cap;
    for (size_t e = 0; e < w->set_count; ++e) w->index[wp_find(w, w->set[e].a, w->set[e].b)] = (uint32_t)e;
    return 0;
}

static uint64_t wp_entry_hash(const void *w, uint32_t e) {
    const bp_wpeer_entry *x = &((const bp_wpeer *)w)->set[e];
    return wp_hash(x->a, x->b);
}

// Removes index position `at` and shifts its cluster back (backward-shift deletion).
static void wp_unlink(bp_wpeer *w, size_t at) {
    bp_probe_unlink(w->index, w->index_cap - 1, at, wp_entry_hash, w);
}

// Erases entry e (its index position at): the last entry takes its place.
static void wp_erase(bp_wpeer *w, size_t at, uint32_t e) {
    wp_unlink(w, at);
    uint32_t last = (uint32_t)(w->set_count - 1);
    if (e != last) {
        w->index[wp_find(w, w->set[last].a, w->set[last].b)] = e;
        w->set[e] = w->set[last];
    }
    w->set_count--;
}

static int wp_event(bp_wpeer_pair **list, size_t *count, size_t *cap, uint64_t a, uint64_t b) {
    if (*count == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        bp_wpeer_pair *p = realloc(*list, c * sizeof *p);
        if (!p) return -1;
        *list = p;
        *cap = c;
    }
    (*list)[(*count)++] = (bp_wpeer_pair){a, b};
    return 0;
}

// Keys of slots a and b, in order.
static void wp_keys(const bp_wpeer *w, uint32_t sa, uint32_t sb, uint64_t *a, uint64_t *b) {
    uint64_t x = w->key[sa], y = w->key[sb];
    *a = x < y ? x : y;
    *b = x < y ? y : x;
}

// Inserts (a, b) stamped now, when absent: 1 inserted, 0 present (stamp refreshed), -1 no memory.
static int wp_insert(bp_wpeer *w, uint64_t a, uint64_t b) {
    if (2 * (w->set_count + 1) > w->index_cap && wp_grow_index(w) != 0) return -1;
    size_t at = wp_find(w, a, b);
    if (w->index[at] != WP_EMPTY) {
        w->set[w->index[at]].stamp = w->stamp;
        return 0;
    }
    if (w->set_count == w->set_cap) {
        size_t c = w->set_cap ? w->set_cap * 2 : 256;
        bp_wpeer_entry *s = realloc(w->set, c * sizeof *s);
        if (!s) return -1;
        w->set = s;
        w->set_cap = c;
    }
    w->set[w->set_count] = (bp_wpeer_entry){a, b, w->stamp, 0};
    w->index[at] = (uint32_t)w->set_count++;
    return 1;
}

int bp_wpeer_touching(bp_wpeer *w, uint32_t sa, uint32_t sb) {
    uint64_t a, b;
    wp_keys(w, sa, sb, &a, &b);
    int rc = wp_insert(w, a, b);
    if (rc < 0) return -1;
    return rc == 1 ? wp_event(&w->begins, &w->nbegins, &w->begins_cap, a, b) : 0;
}

int bp_wpeer_begin(bp_wpeer *w, uint32_t sa, uint32_t sb) {
    uint64_t a, b;
    wp_keys(w, sa, sb, &a, &b);
    if (wp_insert(w, a, b) < 0) return -1;
    return wp_event(&w->begins, &w->nbegins, &w->begins_cap, a, b);
}

int bp_wpeer_end(bp_wpeer *w, uint32_t sa, uint32_t sb) {
    uint64_t a, b;
    wp_keys(w, sa, sb, &a, &b);
    size_t at = wp_find(w, a, b);
    if (w->index[at] != WP_EMPTY) wp_erase(w, at, w->index[at]);
    return wp_event(&w->ends, &w->nends, &w->ends_cap, a, b);
}

// ---------------------------------------------------------------------------------------------
// Operations

// A new frame's first call clears the last frame's events; every call starts the clock.
static bool wp_enter(bp_wpeer *w) {
    if (w->failed) return false;
    if (w->fresh) {
        w->nbegins = w->nends = 0;
        w->fresh = false;
    }
    if (w->time_limit > 0.0) w->step_start = bp_peer_clock();
    return true;
}

static int wp_leave(bp_wpeer *w, int rc) {
    if (rc != 0) w->failed = true;
    return rc == 0 ? 0 : (rc == BP_PEER_TOO_SLOW ? BP_PEER_TOO_SLOW : -1);
}

static void wp_set_box(bp_wpeer *w, uint32_t slot, const float *box) {
    float *b = w->box + 6 * (size_t)slot;
    for (int a = 0; a < w->dim; ++a) {
        b[a] = box[a];
        b[3 + a] = box[w->dim + a];
    }
}

int bp_wpeer_add(void *peer, uint32_t slot, uint64_t key, const float *box, bool is_static, uint64_t category,
                 uint64_t mask) {
    bp_wpeer *w = peer;
    if (!w || !box || slot >= w->slots || w->live[slot] || !wp_enter(w)) return -1;
    w->key[slot] = key;
    w->stat[slot] = is_static;
    w->cat[slot] = category;
    w->mask[slot] = mask;
    wp_set_box(w, slot, box);
    memcpy(w->prev + 6 * (size_t)slot, w->box + 6 * (size_t)slot, 6 * sizeof(float));
    w->live[slot] = true;
    return wp_leave(w, w->cls->world->add(w, slot));
}

int bp_wpeer_move(void *peer, uint32_t slot, const float *box, const float *vel) {
    bp_wpeer *w = peer;
    if (!w || !box || slot >= w->slots || !w->live[slot] || !wp_enter(w)) return -1;
    float derived[3] = {0.0f, 0.0f, 0.0f};
    float *b = w->box + 6 * (size_t)slot, *p = w->prev + 6 * (size_t)slot;
    memcpy(p, b, 6 * sizeof(float));
    wp_set_box(w, slot, box);
    if (!vel) {
        // The motion since the previous box, as a physics engine would know it.
        for (int a = 0; a < w->dim; ++a) derived[a] = 0.5f * ((b[a] + b[3 + a]) - (p[a] + p[3 + a]));
        vel = derived;
    }
    return wp_leave(w, w->cls->world->move(w, slot, vel));
}

int bp_wpeer_remove(void *peer, uint32_t slot) {
    bp_wpeer *w = peer;
    if (!w || slot >= w->slots || !w->live[slot] || !wp_enter(w)) return -1;
    int rc = w->cls->world->remove(w, slot);
    w->live[slot] = false;
    return wp_leave(w, rc);
}

int bp_wpeer_update(void *peer) {
    bp_wpeer *w = peer;
    if (!w || !wp_enter(w)) return -1;
    w->stamp++;
    w->candidates = 0;
    int rc = w->cls->world->update(w);
    if (rc == 0 && w->cls->world->stamps) {
        // The pairs not seen touching this frame ended (a removed object's among them).
        for (size_t e = 0; e < w->set_count;) {
            bp_wpeer_entry en = w->set[e];
            if (en.stamp == w->stamp) {
                ++e;
                continue;
            }
            if (wp_event(&w->ends, &w->nends, &w->ends_cap, en.a, en.b) != 0) {
                rc = -1;
                break;
            }
            wp_erase(w, wp_find(w, en.a, en.b), (uint32_t)e);  // the last entry moves to e: look again
        }
    }
    w->fresh = true;
    return wp_leave(w, rc);
}

static int wp_cmp(const void *x, const void *y) {
    const bp_wpeer_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

int bp_wpeer_results(void *peer, const bp_wpeer_pair **pairs, size_t *npairs, const bp_wpeer_pair **begins,
                     size_t *nbegins, const bp_wpeer_pair **ends, size_t *nends) {
    bp_wpeer *w = peer;
    if (!w || w->failed) return -1;
    if (w->set_count + 1 > w->pairs_cap) {
        size_t c = w->set_count + w->set_count / 2 + 16;
        bp_wpeer_pair *p = realloc(w->pairs, c * sizeof *p);
        if (!p) return -1;
        w->pairs = p;
        w->pairs_cap = c;
    }
    for (size_t e = 0; e < w->set_count; ++e) w->pairs[e] = (bp_wpeer_pair){w->set[e].a, w->set[e].b};
    w->npairs = w->set_count;
    if (w->npairs > 1) qsort(w->pairs, w->npairs, sizeof *w->pairs, wp_cmp);
    if (w->nbegins > 1) qsort(w->begins, w->nbegins, sizeof *w->begins, wp_cmp);
    if (w->nends > 1) qsort(w->ends, w->nends, sizeof *w->ends, wp_cmp);
    *pairs = w->pairs;
    *npairs = w->npairs;
    *begins = w->begins;
    *nbegins = w->nbegins;
    *ends = w->ends;
    *nends = w->nends;
    return 0;
}
