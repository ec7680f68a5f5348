// The world's pairs (docs/world.md): the event buffers of an update, and the pair set between
// updates: a sorted array of pair keys (slot_a << 32 | slot_b, a < b) and a log of what the
// updates since changed. An incremental update appends its events to the log (time in proportion to its events); the log is folded
// into the array when it grows past a share of it, when the pairs are read, or before a rebuild
// diffs against them, so keeping the set costs amortized time per event, not per pair.
#include "radix_sort.h"
#include "world_pairs.h"

bp_status world_evbuf_grow(world_evbuf *buf, bp_heap *h, int begin) {
    bp_status st = BP_OK;
    buf->keys[begin] = bp_heap_grow(h, buf->keys[begin], &buf->cap[begin], buf->count[begin] + 1,
                                    sizeof *buf->keys[begin], true, &st);
    return st;
}

void world_evbuf_free(world_evbuf *buf, bp_heap *h) {
    for (int k = 0; k < 2; ++k) BP_RELEASE(h, buf->keys[k], buf->cap[k]);
}

void world_pairs_init(world_pairset *p, bp_heap *heap) {
    memset(p, 0, sizeof *p);
    p->heap = heap;
}

void world_pairs_free(world_pairset *p) {
    bp_heap *h = p->heap;
    BP_RELEASE(h, p->keys, p->cap);
    BP_RELEASE(h, p->log, p->log_cap);
    BP_RELEASE(h, p->log_begin, p->log_begin_cap);
    BP_RELEASE(h, p->out, p->out_cap);
    BP_RELEASE(h, p->tmp, p->tmp_cap);
    BP_RELEASE(h, p->tmp_vals, p->tmp_vals_cap);
    world_pairs_init(p, h);
}

// The log is folded once it passes this many changes (half the set, and a floor so that small
// sets are not rewritten every update).
static size_t pairs_fold_at(const world_pairset *p) { return p->count / 2 + 1024; }

bool world_pairs_fold_due(const world_pairset *p) { return p->log_count > pairs_fold_at(p); }

// Sized for the whole life of a log (up to the fold, plus this update) and for the fold itself,
// so that a warm world's updates allocate nothing as its log grows.
bp_status world_pairs_reserve_log(world_pairset *p, size_t extra) {
    size_t need = pairs_fold_at(p) + extra;
    if (need < p->log_count + extra) need = p->log_count + extra;
    BP_RESERVE(p->heap, p->log, p->log_cap, need);
    BP_RESERVE(p->heap, p->log_begin, p->log_begin_cap, need);
    BP_RESERVE_DISCARD(p->heap, p->tmp, p->tmp_cap, need);
    BP_RESERVE_DISCARD(p->heap, p->tmp_vals, p->tmp_vals_cap, need);
    BP_RESERVE_DISCARD(p->heap, p->out, p->out_cap, p->count + need);
    return BP_OK;
}

void world_pairs_log(world_pairset *p, const uint64_t *ends, size_t ne, const uint64_t *begins, size_t nb) {
    if (ne) memcpy(p->log + p->log_count, ends, ne * sizeof *ends);
    for (size_t k = 0; k < ne; ++k) p->log_begin[p->log_count + k] = 0;
    p->log_count += ne;
    if (nb) memcpy(p->log + p->log_count, begins, nb * sizeof *begins);
    for (size_t k = 0; k < nb; ++k) p->log_begin[p->log_count + k] = 1;
    p->log_count += nb;
    p->total = p->total + nb - ne;
}

bp_status world_pairs_fold(world_pairset *p) {
    const size_t L = p->log_count;
    if (!L) return BP_OK;
    // Everything is reserved before anything changes: a failure leaves the set as it was.
    BP_RESERVE_DISCARD(p->heap, p->tmp, p->tmp_cap, L);
    BP_RESERVE_DISCARD(p->heap, p->tmp_vals, p->tmp_vals_cap, L);
    BP_RESERVE_DISCARD(p->heap, p->out, p->out_cap, p->count + L);
    // Stable: the changes of one key stay in update order, and the last one decides.
    bp_radix_sort64(p->log, p->log_begin, p->tmp, p->tmp_vals, L, 62);
    const uint64_t *base = p->keys;
    uint64_t *out = p->out;
    size_t b = 0, m = 0;
    for (size_t k = 0; k < L;) {
        const uint64_t key = p->log[k];
        while (k + 1 < L && p->log[k + 1] == key) ++k;
        const bool present = p->log_begin[k] != 0;
        ++k;
        while (b < p->count && base[b] < key) out[m++] = base[b++];
        if (b < p->count && base[b] == key) ++b;
        if (present) out[m++] = key;
    }
    while (b < p->count) out[m++] = base[b++];
    BP_SWAP_ARRAYS(p->keys, p->cap, p->out, p->out_cap);
    p->count = m;
    p->log_count = 0;
    return BP_OK;
}

void world_pairs_replace(world_pairset *p, uint64_t **keys, size_t *cap, size_t count, world_evbuf *ev) {
    const uint64_t *old = p->keys, *now = *keys;
    uint64_t *ends = ev->keys[0], *begins = ev->keys[1];
    size_t a = 0, b = 0, ne = 0, nb = 0;
    while (a < p->count || b < count) {
        if (b == count || (a < p->count && old[a] < now[b])) ends[ne++] = old[a++];
        else if (a == p->count || now[b] < old[a]) begins[nb++] = now[b++];
        else ++a, ++b;
    }
    ev->count[0] = ne;
    ev->count[1] = nb;
    BP_SWAP_ARRAYS(p->keys, p->cap, *keys, *cap);
    p->count = p->total = count;
}
