// The world's filter groups (world_groups.h): an array of groups by id, a free list of ids, and
// an open-addressing table from (kind, category, mask) to id.
#include "world_groups.h"

void world_groups_init(world_groups *g, bp_heap *heap) {
    memset(g, 0, sizeof *g);
    g->heap = heap;
}

void world_groups_free(world_groups *g) {
    BP_RELEASE(g->heap, g->at, g->cap);
    BP_RELEASE(g->heap, g->free_ids, g->free_cap);
    BP_RELEASE(g->heap, g->hash, g->hash_cap);
    world_groups_init(g, g->heap);
}

static inline uint64_t groups_hash(uint64_t category, uint64_t mask, uint32_t kind) {
    uint64_t h = category * 0x9E3779B97F4A7C15u ^ (mask + 0x632BE59BD9B4E019u) * 0xC2B2AE3D27D4EB4Fu ^ kind;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93u;
    return h ^ (h >> 32);
}

bp_status world_groups_reserve(world_groups *g, size_t extra) {
    const size_t live = world_groups_live(g);
    BP_RESERVE(g->heap, g->at, g->cap, g->count + extra);
    BP_RESERVE(g->heap, g->free_ids, g->free_cap, g->count + extra);
    if (2 * (live + extra) <= g->hash_cap) return BP_OK;
    size_t cap = 64;
    while (cap < 4 * (live + extra)) cap *= 2;
    uint32_t *h = bp_heap_alloc(g->heap, cap * sizeof *h);
    if (!h) return BP_ERR_NOMEM;
    for (size_t i = 0; i < cap; ++i) h[i] = WORLD_NONE;
    for (uint32_t id = 0; id < g->count; ++id) {
        if (!g->at[id].refs) continue;
        const world_group *e = &g->at[id];
        size_t i = (size_t)groups_hash(e->category, e->mask, e->kind) & (cap - 1);
        while (h[i] != WORLD_NONE) i = (i + 1) & (cap - 1);
        h[i] = id;
    }
    BP_RELEASE(g->heap, g->hash, g->hash_cap);
    g->hash = h;
    g->hash_cap = cap;
    return BP_OK;
}

uint32_t world_groups_ref(world_groups *g, uint32_t kind, uint64_t category, uint64_t mask) {
    const size_t m = g->hash_cap - 1;
    size_t i = (size_t)groups_hash(category, mask, kind) & m;
    for (; g->hash[i] != WORLD_NONE; i = (i + 1) & m) {
        world_group *e = &g->at[g->hash[i]];
        if (e->category == category && e->mask == mask && e->kind == kind) {
            e->refs++;
            return g->hash[i];
        }
    }
    const uint32_t id = g->free_count ? g->free_ids[--g->free_count] : (uint32_t)g->count++;
    world_group *e = &g->at[id];
    e->category = category;
    e->mask = mask;
    e->kind = kind;
    e->refs = 1;
    g->hash[i] = id;
    return id;
}

// Backward-shift deletion from the table.
void world_groups_unref(world_groups *g, uint32_t id) {
    world_group *e = &g->at[id];
    if (--e->refs) return;
    const size_t m = g->hash_cap - 1;
    size_t i = (size_t)groups_hash(e->category, e->mask, e->kind) & m;
    while (g->hash[i] != id) i = (i + 1) & m;
    for (size_t j = (i + 1) & m; g->hash[j] != WORLD_NONE; j = (j + 1) & m) {
        const world_group *f = &g->at[g->hash[j]];
        const size_t home = (size_t)groups_hash(f->category, f->mask, f->kind) & m;
        // Move entry j into the hole i when its home is not in (i, j] (cyclically).
        if (((j - home) & m) >= ((j - i) & m)) {
            g->hash[i] = g->hash[j];
            i = j;
        }
    }
    g->hash[i] = WORLD_NONE;
    g->free_ids[g->free_count++] = id;
}
