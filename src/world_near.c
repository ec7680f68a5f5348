// The world's near lists (docs/world.md, "Near lists"): for a moving proxy, the static proxies
// whose boxes met its fat box (its box grown by a margin) when the list was made, copied as
// entries {box, slot, group}. Static proxies do not move on their own: while none has changed
// (the lists' epoch) and the proxy's box stays inside its fat box, every static proxy it
// can meet is on its list, and an update decides its events with the static world from that
// list alone: a few entries in one block, instead of finding and reading the cells around it.
// A list is made again, from the cells, when the box leaves the fat box; all of them are
// forgotten (the epoch moves on) when a static proxy is added, moved, removed or changed.
//
// Records are kept per proxy that has had a list (an index per slot, the records dense with a
// free list); the entries live in blocks of a block pool (blocks.h).
#include <math.h>

#include "world_near.h"

void world_near_init(world_nears *nl, bp_heap *heap, int dim) {
    memset(nl, 0, sizeof *nl);
    nl->dim = dim;
    nl->stride = (size_t)(2 * dim + 2);
    nl->heap = heap;
    bp_blocks_init(&nl->blocks, heap, nl->stride);
    nl->epoch = 1;
    nl->free = WORLD_NONE;
}

void world_near_free(world_nears *nl) {
    bp_blocks_free(&nl->blocks);
    BP_RELEASE(nl->heap, nl->slot_near, nl->slot_near_cap);
    BP_RELEASE(nl->heap, nl->nears, nl->cap);
    BP_RELEASE(nl->heap, nl->scratch, nl->scratch_cap);
    nl->count = 0;
    nl->free = WORLD_NONE;
}

bp_status world_near_reserve(world_nears *nl, size_t slots) {
    if (nl->slot_near_cap < slots) {
        const size_t from = nl->slot_near_cap;
        BP_RESERVE(nl->heap, nl->slot_near, nl->slot_near_cap, slots);
        for (size_t s = from; s < nl->slot_near_cap; ++s) nl->slot_near[s] = WORLD_NONE;
    }
    BP_RESERVE_DISCARD(nl->heap, nl->scratch, nl->scratch_cap, WORLD_NEAR_MAX * nl->stride);
    return BP_OK;
}

// The slot's list goes (its proxy was removed, or its record is handed to another proxy).
void world_near_drop(world_nears *nl, uint32_t slot) {
    if (slot >= nl->slot_near_cap || nl->slot_near[slot] == WORLD_NONE) return;
    const uint32_t r = nl->slot_near[slot];
    world_near *n = &nl->nears[r];
    if (n->cls != WORLD_NEAR_NOBLOCK) bp_blocks_put(&nl->blocks, n->off, n->cls);
    n->epoch = 0;
    n->cls = WORLD_NEAR_NOBLOCK;
    n->count = 0;
    n->off = nl->free;
    nl->free = r;
    nl->slot_near[slot] = WORLD_NONE;
}

// The fat box of a proxy whose box went from old_box (NULL: new) to box: grown on every side by
// a margin of half its largest extent plus twice its largest step, and on each axis towards
// where it went by sixteen times that step (Bullet's dynamic tree predicts its boxes the same
// way): a proxy moving steadily keeps its list for sixteen frames, while the fat box stays long
// and thin rather than large. Before any step (a level loading) the margin is two to four
// extents, staggered by the slot so that the lists made together do not all run out in the
// same frame. All of it times the slot's scale, which follows the lists made for the slot:
// halved when a list came out long, grown when it came out (nearly) empty, so that a list holds
// a few entries whatever the density and the dimension (on `static`: about three, 2D and 3D;
// docs/world.md). A margin is never more than a few finest cells beyond what the extent asks.
// Rounding only widens the box (float rounding is monotone).
void world_near_fat(const world_nears *nl, uint32_t slot, const float *old_box, const float *box, double c0,
                    float *fat) {
    const int dim = nl->dim;
    const uint32_t r = nl->slot_near[slot];
    const double scale = r != WORLD_NONE ? (double)nl->nears[r].scale : 1.0;
    double ext = 0.0, step = 0.0, ahead[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < dim; ++a) {
        const double e = (double)box[dim + a] - (double)box[a];
        ext = e > ext ? e : ext;
        if (!old_box) continue;
        const double s0 = (double)box[a] - (double)old_box[a];
        const double s1 = (double)box[dim + a] - (double)old_box[dim + a];
        ahead[a] = (fabs(s0) > fabs(s1) ? s0 : s1) * (16.0 * scale);
        step = fabs(s0) > step ? fabs(s0) : step;
        step = fabs(s1) > step ? fabs(s1) : step;
    }
    // A jump (a teleport) predicts nothing: the step's share is bounded by two finest cells, so
    // that the cells around the fat box stay a few.
    const double most = 2.0 * c0;
    for (int a = 0; a < dim; ++a) ahead[a] = ahead[a] > most ? most : ahead[a] < -most ? -most : ahead[a];
    step = step > most ? most : step;
    const double stagger = 1.0 + (double)((slot * 0x9E3779B1u) >> 24) / 256.0;
    const double m = scale * (old_box ? 0.5 * ext + 2.0 * step : 2.0 * ext * stagger);
    for (int a = 0; a < dim; ++a) {
        fat[a] = (float)((double)box[a] - m + (ahead[a] < 0.0 ? ahead[a] : 0.0));
        fat[dim + a] = (float)((double)box[dim + a] + m + (ahead[a] > 0.0 ? ahead[a] : 0.0));
    }
}

// Keeps the entries meeting `fat` (in place); returns their count.
static size_t near_filter(const world_nears *nl, float *entries, size_t count, const float *fat) {
    const size_t stride = nl->stride;
    size_t kept = 0;
    for (size_t q = 0; q < count; ++q) {
        const float *e = entries + q * stride;
        if (!world_overlap(e, fat, nl->dim)) continue;
        if (kept != q) memcpy(entries + kept * stride, e, stride * sizeof(float));
        ++kept;
    }
    return kept;
}

// Makes slot's list from the entries collected from the cells around `fat` (more than
// WORLD_NEAR_MAX: some were not kept) for a proxy whose box is `box`; the entries may be
// reordered. Too many: the fat box shrinks towards the box (its margin halved,
// up to three times) and the entries outside it are dropped. A list too long, or no memory for
// it, leaves the slot without one (its proxy is decided from the cells): a list saves time and
// never changes an answer.
void world_near_store(world_nears *nl, uint32_t slot, const float *box, const float *fat_in) {
    const int dim = nl->dim;
    const size_t stride = nl->stride;
    float *entries = nl->scratch;
    size_t count = nl->collected;
    float fat[6];
    world_copy_box(fat, fat_in, dim);
    float scale = 1.0f;
    for (int k = 1; k <= 3 && count > WORLD_NEAR_WANT && count <= WORLD_NEAR_MAX; ++k) {
        const double part = ldexp(1.0, -k);
        for (int a = 0; a < dim; ++a) {
            fat[a] = (float)((double)box[a] - ((double)box[a] - (double)fat_in[a]) * part);
            fat[dim + a] = (float)((double)box[dim + a] + ((double)fat_in[dim + a] - (double)box[dim + a]) * part);
        }
        count = near_filter(nl, entries, count, fat);
        scale = (float)part;
    }
    if (count < 2) scale *= 1.25f;
    else if (count > WORLD_NEAR_WANT / 2 + 1) scale *= 0.8f;
    uint32_t r = slot < nl->slot_near_cap ? nl->slot_near[slot] : WORLD_NONE;
    if (r == WORLD_NONE) {
        if (slot >= nl->slot_near_cap || count > WORLD_NEAR_KEEP) return;
        if (nl->free != WORLD_NONE) {
            r = nl->free;
            nl->free = nl->nears[r].off;
        } else {
            bp_status st = BP_OK;
            nl->nears = bp_heap_grow(nl->heap, nl->nears, &nl->cap, nl->count + 1, sizeof *nl->nears, true, &st);
            if (st != BP_OK) return;
            r = (uint32_t)nl->count++;
        }
        nl->nears[r].cls = WORLD_NEAR_NOBLOCK;
        nl->nears[r].scale = 1.0f;
        nl->slot_near[slot] = r;
    }
    world_near *n = &nl->nears[r];
    n->scale *= scale;
    if (n->scale < 1.0f / 64) n->scale = 1.0f / 64;
    if (n->scale > 2.0f) n->scale = 2.0f;
    n->epoch = 0;
    n->count = 0;
    if (count > WORLD_NEAR_KEEP) return;
    // The smallest class that holds the list; a block of another class is swapped for one.
    unsigned cls = 0;
    while (((size_t)2 << cls) < count) ++cls;
    if (count && n->cls != cls) {
        uint32_t off;
        if (bp_blocks_get(&nl->blocks, cls, &off) != BP_OK) return;
        if (n->cls != WORLD_NEAR_NOBLOCK) bp_blocks_put(&nl->blocks, n->off, n->cls);
        n->off = off;
        n->cls = (uint16_t)cls;
    }
    if (count) memcpy(bp_blocks_entry(&nl->blocks, n->off), entries, count * stride * sizeof(float));
    world_copy_box(n->fat, fat, dim);
    n->count = (uint16_t)count;
    n->epoch = nl->epoch;
}
