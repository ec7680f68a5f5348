// The world's filter groups (world_groups.c): every proxy with the same kind, category and mask
// shares one, so that the cells carry a 4-byte group instead of 17 bytes of filter, and a pair
// test reads two small entries. Groups are counted references, found by a hash of their filter.
// Knows nothing of the world. Never installed.
#ifndef BP_WORLD_GROUPS_H
#define BP_WORLD_GROUPS_H

#include "world_parts.h"

/// A filter group.
typedef struct world_group {
    uint64_t category, mask;
    uint32_t kind;  // bp_proxy_kind
    uint32_t refs;  // proxies and touched records holding it; 0: free
} world_group;

/// The groups: `at[id]` for the ids handed out (some may be free).
typedef struct world_groups {
    world_group *at;
    size_t count, cap;
    uint32_t *free_ids;
    size_t free_count, free_cap;
    uint32_t *hash;        // ids, open addressing; WORLD_NONE empty
    size_t hash_cap;
    bp_heap *heap;
} world_groups;

/// Whether two filter groups pair: categories against masks both ways, never static with static.
static inline bool world_groups_pair(const world_group *g, const world_group *h) {
    return (g->category & h->mask) != 0 && (h->category & g->mask) != 0 &&
           !(g->kind == BP_PROXY_STATIC && h->kind == BP_PROXY_STATIC);
}

/// No groups, allocating through `heap`.
void world_groups_init(world_groups *g, bp_heap *heap);
void world_groups_free(world_groups *g);
/// Room for `extra` new groups (ids and hash table at load <= 1/2).
bp_status world_groups_reserve(world_groups *g, size_t extra);
/// The group of (kind, category, mask), made if new, with one more reference. Room reserved.
uint32_t world_groups_ref(world_groups *g, uint32_t kind, uint64_t category, uint64_t mask);
/// Drops a reference; a group nobody holds leaves the table.
void world_groups_unref(world_groups *g, uint32_t id);
/// Groups in use.
static inline size_t world_groups_live(const world_groups *g) { return g->count - g->free_count; }

#endif
