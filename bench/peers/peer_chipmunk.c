// Chipmunk2D 7 through cpSpatialIndex, the way cpSpace drives its dynamic shapes every step
// (cpSpaceCollideShapes): refresh each object's cached bounding box (cpShapeCacheBB), then
// cpSpatialIndexReindexQuery, whose callback receives every candidate pair of the frame and,
// like cpSpace's, keeps those whose cached boxes intersect.
//  - chipmunk-hash: cpSpaceHash, cell size = the mean box extent of the first frame (the manual:
//    "the average collision shape size"), 10 cells per object (the manual: "~10x the number of
//    objects in the space is probably a good starting point"). It rehashes everything per frame.
//  - chipmunk-bbtree: cpBBTree without a velocity function (leaves not fattened: every moving
//    object is reinserted each frame).
//  - chipmunk-bbtree-vel: cpBBTree with cpBBTreeSetVelocityFunc, as cpSpace sets it: leaves are
//    fattened by 10% of their size plus 0.1 s of motion. Chipmunk velocities are per second, so
//    the function returns the per-frame velocity times 60 (a 60 Hz step).
//  - chipmunk-sweep1d: cpSweep1D (sort on x with qsort, then sweep).
//
// The persistent world (world_peers.h), as cpSpace keeps its shapes: static objects in a
// static cpBBTree, reindexed only when one moves (cpSpaceReindexShape); moving objects in the
// dynamic index (cpBBTree with cpSpace's velocity fattening, cpBBTree without it, or
// cpSpaceHash as cpSpaceUseSpatialHash sets it), which cpSpatialIndexReindexQuery reindexes
// and queries, against the static index too. The callback does what cpSpaceCollideShapes does
// first (the filter, the box test), and the touching pairs go to the stamped set
// (world_peers.c), as cpSpace's arbiter cache is stamped each step. cpSpace never uses
// cpSweep1D, so chipmunk-sweep1d has no persistent interface.
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#include <chipmunk/chipmunk.h>

#include "peer_impl.h"

// Chipmunk asks for the bounding box (and velocity) of an object through a pointer to it.
typedef struct cp_peer_obj {
    cpBB bb;
    cpVect v;
    uint32_t index;
} cp_peer_obj;

typedef struct cp_peer {
    cpSpatialIndex *index;
    cp_peer_obj *objs;  // n objects, then the sentinels of cpSweep1D
    size_t sentinels;
    bool inserted;
    bool oom;           // a pair could not be recorded
    bp_peer *base;
    unsigned calls;     // callbacks, to look at the clock now and then
    jmp_buf too_slow;   // Chipmunk's loops cannot be stopped from a callback: jump out
} cp_peer;

enum { CP_PEER_HASH, CP_PEER_BBTREE, CP_PEER_BBTREE_VEL, CP_PEER_SWEEP1D };

// Chipmunk steps at 60 Hz in its demos; its velocities are per second.
#define CP_PEER_STEPS_PER_SECOND 60.0

static cpBB cp_peer_bb(void *obj) {
    return ((const cp_peer_obj *)obj)->bb;
}

static cpVect cp_peer_velocity(void *obj) {
    return ((const cp_peer_obj *)obj)->v;
}

// The reindex callback. cpSpaceCollideShapes starts by rejecting pairs whose cached boxes do not
// intersect (cpBBIntersects, closed); the hash and the 1D sweep report many such pairs.
static cpCollisionID cp_peer_pair(void *a, void *b, cpCollisionID id, void *data) {
    cp_peer *c = data;
    const cp_peer_obj *oa = a, *ob = b;
    // The index is abandoned (only freed) after the jump; Chipmunk's C code has nothing to unwind.
    if ((++c->calls & 0xFFFFu) == 0 && bp_peer_over_time(c->base)) longjmp(c->too_slow, 1);
    if (!cpBBIntersects(oa->bb, ob->bb)) return id;
    if (bp_peer_push(c->base, oa->index, ob->index) != 0) c->oom = true;
    return id;
}

static int cp_peer_create(bp_peer *p) {
    cp_peer *c = calloc(1, sizeof *c);
    if (!c) return -1;
    c->base = p;
    // cpSweep1DReindexQuery reads table[count] before testing j < count: with count equal to
    // its capacity (32 * 2^k) that read leaves the block. Sentinels (min +inf, max -inf: never
    // in a pair) keep the count off those sizes.
    if (p->variant == CP_PEER_SWEEP1D) {
        // The table starts at 32 and doubles when full: n + 1 == 32 * 2^k needs a second one.
        size_t cap = 32;
        while (cap < p->n + 1) cap *= 2;
        c->sentinels = (cap == p->n + 1) ? 2 : 1;
    }
    c->objs = calloc(p->n + c->sentinels, sizeof *c->objs);
    if (!c->objs) {
        free(c);
        return -1;
    }
    for (size_t i = 0; i < p->n + c->sentinels; ++i) c->objs[i].index = (uint32_t)i;
    for (size_t i = p->n; i < p->n + c->sentinels; ++i) c->objs[i].bb = cpBBNew(INFINITY, 0.0, -INFINITY, 0.0);
    p->impl = c;
    return 0;
}

static int cp_peer_step(bp_peer *p, const float *boxes, const float *vel) {
    cp_peer *c = p->impl;
    const size_t n = p->n;
    // cpShapeCacheBB for every shape (cpSpaceCollideShapes does it through cpSpatialIndexEach).
    for (size_t i = 0; i < n; ++i) {
        const float *b = boxes + 4 * i;
        c->objs[i].bb = cpBBNew(b[0], b[1], b[2], b[3]);
    }
    if (p->variant == CP_PEER_BBTREE_VEL)
        for (size_t i = 0; i < n; ++i)
            c->objs[i].v = cpv(vel[2 * i] * CP_PEER_STEPS_PER_SECOND, vel[2 * i + 1] * CP_PEER_STEPS_PER_SECOND);
    if (!c->inserted) {
        switch (p->variant) {
        case CP_PEER_HASH: {
            // Cell size: the mean box extent (the boxes are known only now).
            double sum = 0.0;
            for (size_t i = 0; i < n; ++i) {
                const float *b = boxes + 4 * i;
                sum += ((double)b[2] - b[0]) + ((double)b[3] - b[1]);
            }
            double cell = sum / (2.0 * (double)n);
            if (!(cell > 0.0)) cell = 1.0;
            size_t cells = 10 * n;
            if (cells > (size_t)1 << 30) cells = (size_t)1 << 30;
            c->index = cpSpaceHashNew(cell, (int)cells, cp_peer_bb, NULL);
            break;
        }
        case CP_PEER_BBTREE:
        case CP_PEER_BBTREE_VEL:
            c->index = cpBBTreeNew(cp_peer_bb, NULL);
            if (c->index && p->variant == CP_PEER_BBTREE_VEL) cpBBTreeSetVelocityFunc(c->index, cp_peer_velocity);
            break;
        default:
            c->index = cpSweep1DNew(cp_peer_bb, NULL);
            break;
        }
        if (!c->index) return -1;
        for (size_t i = 0; i < n + c->sentinels; ++i) cpSpatialIndexInsert(c->index, &c->objs[i], (cpHashValue)(i + 1));
        c->inserted = true;
    }
    if (setjmp(c->too_slow) != 0) return BP_PEER_TOO_SLOW;
    cpSpatialIndexReindexQuery(c->index, cp_peer_pair, c);
    return c->oom ? -1 : 0;
}

// Frees an adapter's state c: its indexes a and b (either may be NULL), its objects, itself.
static void cp_free(void *c, void *objs, cpSpatialIndex *a, cpSpatialIndex *b) {
    if (a) cpSpatialIndexFree(a);
    if (b) cpSpatialIndexFree(b);
    free(objs);
    free(c);
}

static void cp_peer_destroy(bp_peer *p) {
    cp_peer *c = p->impl;
    if (c) cp_free(c, c->objs, c->index, NULL);
}

// ---------------------------------------------------------------------------------------------
// The persistent world

typedef struct cp_world {
    cpSpatialIndex *stat;   // static objects (a cpBBTree)
    cpSpatialIndex *dyn;    // moving objects, queried against `stat`
    cp_peer_obj *objs;      // per slot
    bp_wpeer *w;
    bool oom;
    unsigned calls;
    jmp_buf too_slow;
} cp_world;

static void cp_world_bb(cp_world *c, uint32_t slot) {
    const float *b = c->w->box + 6 * (size_t)slot;
    c->objs[slot].bb = cpBBNew(b[0], b[1], b[3], b[4]);
}

static int cp_world_create(bp_wpeer *w) {
    cp_world *c = calloc(1, sizeof *c);
    if (!c) return -1;
    c->w = w;
    c->objs = calloc(w->slots, sizeof *c->objs);
    c->stat = cpBBTreeNew(cp_peer_bb, NULL);
    if (!c->objs || !c->stat) {
        if (c->stat) cpSpatialIndexFree(c->stat);
        free(c->objs);
        free(c);
        return -1;
    }
    for (size_t i = 0; i < w->slots; ++i) c->objs[i].index = (uint32_t)i;
    if (w->variant != CP_PEER_HASH) {
        // The hash is made at the first update, when the objects' sizes are known.
        c->dyn = cpBBTreeNew(cp_peer_bb, c->stat);
        if (c->dyn && w->variant == CP_PEER_BBTREE_VEL) cpBBTreeSetVelocityFunc(c->dyn, cp_peer_velocity);
        if (!c->dyn) {
            cpSpatialIndexFree(c->stat);
            free(c->objs);
            free(c);
            return -1;
        }
    }
    w->impl = c;
    return 0;
}

static int cp_world_add(bp_wpeer *w, uint32_t slot) {
    cp_world *c = w->impl;
    cp_world_bb(c, slot);
    c->objs[slot].v = cpv(0.0, 0.0);
    if (w->stat[slot]) cpSpatialIndexInsert(c->stat, &c->objs[slot], (cpHashValue)slot + 1);
    else if (c->dyn) cpSpatialIndexInsert(c->dyn, &c->objs[slot], (cpHashValue)slot + 1);
    return 0;
}

static int cp_world_move(bp_wpeer *w, uint32_t slot, const float *vel) {
    cp_world *c = w->impl;
    cp_world_bb(c, slot);
    c->objs[slot].v = cpv(vel[0] * CP_PEER_STEPS_PER_SECOND, vel[1] * CP_PEER_STEPS_PER_SECOND);
    // cpSpaceReindexShape for a static shape; the dynamic index reindexes every object itself.
    if (w->stat[slot]) cpSpatialIndexReindexObject(c->stat, &c->objs[slot], (cpHashValue)slot + 1);
    return 0;
}

static int cp_world_remove(bp_wpeer *w, uint32_t slot) {
    cp_world *c = w->impl;
    if (w->stat[slot]) cpSpatialIndexRemove(c->stat, &c->objs[slot], (cpHashValue)slot + 1);
    else if (c->dyn) cpSpatialIndexRemove(c->dyn, &c->objs[slot], (cpHashValue)slot + 1);
    return 0;
}

// cpSpaceCollideShapes' first steps: the filter (cpShapeFilterReject), the box test.
static cpCollisionID cp_world_pair(void *a, void *b, cpCollisionID id, void *data) {
    cp_world *c = data;
    const cp_peer_obj *oa = a, *ob = b;
    if ((++c->calls & 0xFFFFu) == 0 && bp_wpeer_over_time(c->w)) longjmp(c->too_slow, 1);
    if (!bp_wpeer_counts(c->w, oa->index, ob->index)) return id;
    c->w->candidates++;
    if (!cpBBIntersects(oa->bb, ob->bb)) return id;
    if (bp_wpeer_touching(c->w, oa->index, ob->index) != 0) c->oom = true;
    return id;
}

static int cp_world_update(bp_wpeer *w) {
    cp_world *c = w->impl;
    if (!c->dyn) {
        // cpSpaceUseSpatialHash(space, dim, count): dim the mean size of the moving objects (the
        // manual: "the average collision shape size"), count 10 cells per object.
        double sum = 0.0;
        size_t n = 0;
        for (size_t i = 0; i < w->slots; ++i) {
            if (!w->live[i] || w->stat[i]) continue;
            const float *b = w->box + 6 * i;
            sum += ((double)b[3] - b[0]) + ((double)b[4] - b[1]);
            n++;
        }
        double cell = n ? sum / (2.0 * (double)n) : 1.0;
        if (!(cell > 0.0)) cell = 1.0;
        size_t cells = 10 * (n ? n : 1);
        if (cells > (size_t)1 << 30) cells = (size_t)1 << 30;
        c->dyn = cpSpaceHashNew(cell, (int)cells, cp_peer_bb, c->stat);
        if (!c->dyn) return -1;
        for (size_t i = 0; i < w->slots; ++i)
            if (w->live[i] && !w->stat[i]) cpSpatialIndexInsert(c->dyn, &c->objs[i], (cpHashValue)i + 1);
    }
    if (setjmp(c->too_slow) != 0) return BP_PEER_TOO_SLOW;
    cpSpatialIndexReindexQuery(c->dyn, cp_world_pair, c);
    return c->oom ? -1 : 0;
}

static void cp_world_destroy(bp_wpeer *w) {
    cp_world *c = w->impl;
    if (c) cp_free(c, c->objs, c->dyn, c->stat);
}

static const bp_wpeer_class cp_world_class = {
    .dim2 = true, .stamps = true, .create = cp_world_create, .add = cp_world_add, .move = cp_world_move,
    .remove = cp_world_remove, .update = cp_world_update, .destroy = cp_world_destroy,
};

const bp_peer_class bp_peer_chipmunk_hash = {
    .name = "chipmunk-hash", .variant = CP_PEER_HASH, .dim2 = true,
    .create = cp_peer_create, .step = cp_peer_step, .destroy = cp_peer_destroy, .world = &cp_world_class,
};

const bp_peer_class bp_peer_chipmunk_bbtree = {
    .name = "chipmunk-bbtree", .variant = CP_PEER_BBTREE, .dim2 = true,
    .create = cp_peer_create, .step = cp_peer_step, .destroy = cp_peer_destroy, .world = &cp_world_class,
};

const bp_peer_class bp_peer_chipmunk_bbtree_vel = {
    .name = "chipmunk-bbtree-vel", .variant = CP_PEER_BBTREE_VEL, .dim2 = true, .uses_velocity = true,
    .create = cp_peer_create, .step = cp_peer_step, .destroy = cp_peer_destroy, .world = &cp_world_class,
};

const bp_peer_class bp_peer_chipmunk_sweep1d = {
    .name = "chipmunk-sweep1d", .variant = CP_PEER_SWEEP1D, .dim2 = true,
    .known_defect = "cpSweep1DReindexQuery sweeps while table[j].min < max (strict), so boxes that only "
                    "touch on x are never reported",
    .create = cp_peer_create, .step = cp_peer_step, .destroy = cp_peer_destroy,
};
