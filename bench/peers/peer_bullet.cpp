// Bullet 3 (BulletCollision, single precision) broad phases, driven as btCollisionWorld drives
// them (updateAabbs, then computeOverlappingPairs): each frame setAabb for every proxy, then
// calculateOverlappingPairs; the candidates are the persistent overlapping pair cache
// (btHashedOverlappingPairCache), which the broad phase keeps up to date incrementally.
//  - bullet-dbvt: btDbvtBroadphase (two dynamic AABB trees, fat leaves, incremental
//    re-optimisation, deferred pair cleanup), the default of Bullet's examples.
//  - bullet-sap: bt32BitAxisSweep3 over the scene's world bounds (incremental sort-and-sweep on
//    quantized endpoints), with its ray-cast accelerator disabled (a second, dbvt, structure
//    that only ray tests use).
// 2D scenes get a constant z extent [-1, 1]. btCollisionWorld also enlarges each AABB by the
// contact breaking threshold; we give the box itself, which can only make Bullet faster here.
//
// The persistent world (world_peers.h), as btCollisionWorld keeps one: createProxy when an
// object is added (static ones in btCollisionWorld's StaticFilter group), setAabb for the moved
// ones only (updateAabbs skips the others), destroyProxy (which purges its pairs) when one is
// removed, calculateOverlappingPairs, and an overlap filter callback on the pair cache for the
// world's rules. The dispatcher then visits every pair of the cache each step: we give each the
// exact box test, and the touching pairs go to the stamped set (world_peers.c).
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <new>
#include <vector>

#include "peer_impl.h"

namespace {

enum { BT_PEER_DBVT, BT_PEER_SAP };

struct bt_peer {
    btDefaultCollisionConfiguration *config = nullptr;
    btCollisionDispatcher *dispatcher = nullptr;  // frees pair algorithms on pair removal
    btBroadphaseInterface *bp = nullptr;
    std::vector<btBroadphaseProxy *> proxy;
    bool created = false;
    bool dbvt = false;

    // Makes the configuration, the dispatcher and the broad phase (the variant's) for `slots`
    // proxies in the world bounds lo, hi (2D: z in [-2, 2]). Throws std::bad_alloc.
    void open(size_t slots, int variant, int dim, const float *wlo, const float *whi) {
        proxy.assign(slots, nullptr);
        config = new btDefaultCollisionConfiguration();
        dispatcher = new btCollisionDispatcher(config);
        dbvt = variant == BT_PEER_DBVT;
        if (dbvt) {
            bp = new btDbvtBroadphase();
            return;
        }
        btVector3 lo, hi;
        if (dim == 2) {
            lo.setValue(wlo[0], wlo[1], -2.0f);
            hi.setValue(whi[0], whi[1], 2.0f);
        } else {
            lo.setValue(wlo[0], wlo[1], wlo[2]);
            hi.setValue(whi[0], whi[1], whi[2]);
        }
        // One handle is reserved by the sweep; keep the table just large enough.
        bp = new bt32BitAxisSweep3(lo, hi, (unsigned)slots + 2, nullptr, true);
    }

    ~bt_peer() {
        // btDbvtBroadphase allocates each proxy: destroy them, but empty the pair cache first
        // (last pair first, O(1) each), since destroyProxy scans the whole cache. The sweep's
        // handles live in one array its destructor frees (its destroyProxy is O(n) each).
        if (bp && dbvt) {
            btOverlappingPairCache *cache = bp->getOverlappingPairCache();
            for (int k = cache->getNumOverlappingPairs() - 1; k >= 0; --k) {
                btBroadphasePair &pair = cache->getOverlappingPairArrayPtr()[k];
                cache->removeOverlappingPair(pair.m_pProxy0, pair.m_pProxy1, dispatcher);
            }
            for (btBroadphaseProxy *q : proxy)
                if (q) bp->destroyProxy(q, dispatcher);
        }
        delete bp;
        delete dispatcher;
        delete config;
    }
};

// A box as Bullet's lo/hi corners: the minimum at b, the maximum at b + hi_at; 2D boxes get the
// z range [-1, 1].
void bt_box(const float *b, int dim, size_t hi_at, btVector3 &lo, btVector3 &hi) {
    if (dim == 2) {
        lo.setValue(b[0], b[1], -1.0f);
        hi.setValue(b[hi_at], b[hi_at + 1], 1.0f);
    } else {
        lo.setValue(b[0], b[1], b[2]);
        hi.setValue(b[hi_at], b[hi_at + 1], b[hi_at + 2]);
    }
}

void bt_peer_box(const bp_peer *p, const float *b, btVector3 &lo, btVector3 &hi) {
    bt_box(b, p->dim, (size_t)p->dim, lo, hi);
}

int bt_peer_create(bp_peer *p) {
    bt_peer *s = nullptr;
    try {
        s = new bt_peer();
        s->open(p->n, p->variant, p->dim, p->lo, p->hi);
    } catch (const std::bad_alloc &) {
        delete s;
        return -1;
    }
    p->impl = s;
    return 0;
}

int bt_peer_step_unsafe(bp_peer *p, const float *boxes) {
    bt_peer *s = static_cast<bt_peer *>(p->impl);
    const size_t n = p->n, stride = (size_t)(2 * p->dim);
    btVector3 lo, hi;
    if (!s->created) {
        // The sweep inserts at the end and sorts down: in order of min x it sorts nothing on x
        // (it still does on y). The tree keeps index order: sorted input would make its greedy
        // insertion build a list.
        std::vector<uint32_t> order(n);
        for (size_t i = 0; i < n; ++i) order[i] = (uint32_t)i;
        if (!s->dbvt)
            std::sort(order.begin(), order.end(),
                      [&](uint32_t a, uint32_t b) { return boxes[a * stride] < boxes[b * stride]; });
        for (size_t k = 0; k < n; ++k) {
            const size_t i = order[k];
            bt_peer_box(p, boxes + i * stride, lo, hi);
            s->proxy[i] = s->bp->createProxy(lo, hi, SPHERE_SHAPE_PROXYTYPE, reinterpret_cast<void *>((intptr_t)i),
                                             int(btBroadphaseProxy::DefaultFilter),
                                             int(btBroadphaseProxy::AllFilter), s->dispatcher);
            if (!s->proxy[i]) return -1;
            // bt32BitAxisSweep3 sorts each new handle down from the end: O(n) per insertion.
            if ((k & 255) == 255 && bp_peer_over_time(p)) return BP_PEER_TOO_SLOW;
        }
        s->created = true;
    } else {
        for (size_t i = 0; i < n; ++i) {
            bt_peer_box(p, boxes + i * stride, lo, hi);
            s->bp->setAabb(s->proxy[i], lo, hi, s->dispatcher);
            if ((i & 4095) == 4095 && bp_peer_over_time(p)) return BP_PEER_TOO_SLOW;
        }
    }
    s->bp->calculateOverlappingPairs(s->dispatcher);
    btOverlappingPairCache *cache = s->bp->getOverlappingPairCache();
    const int count = cache->getNumOverlappingPairs();
    const btBroadphasePair *pairs = cache->getOverlappingPairArrayPtr();
    for (int k = 0; k < count; ++k) {
        uint32_t a = (uint32_t)(intptr_t)pairs[k].m_pProxy0->m_clientObject;
        uint32_t b = (uint32_t)(intptr_t)pairs[k].m_pProxy1->m_clientObject;
        if (bp_peer_push(p, a, b) != 0) return -1;
    }
    return 0;
}

int bt_peer_step(bp_peer *p, const float *boxes, const float *) {
    try {
        return bt_peer_step_unsafe(p, boxes);
    } catch (const std::bad_alloc &) {
        return -1;
    }
}

void bt_peer_destroy(bp_peer *p) {
    delete static_cast<bt_peer *>(p->impl);
}

// ---------------------------------------------------------------------------------------------
// The persistent world

// The pair cache's filter: the world's rules (Bullet's own test is group & mask both ways).
struct bt_world_filter : public btOverlapFilterCallback {
    const bp_wpeer *w = nullptr;
    bool needBroadphaseCollision(btBroadphaseProxy *p0, btBroadphaseProxy *p1) const override {
        return bp_wpeer_counts(w, (uint32_t)(intptr_t)p0->m_clientObject, (uint32_t)(intptr_t)p1->m_clientObject);
    }
};

struct bt_world {
    bt_world_filter filter;  // declared first: it outlives the pair cache that points to it
    bt_peer base;            // configuration, dispatcher, broad phase, proxy per slot
};

void bt_world_box(const bp_wpeer *w, uint32_t slot, btVector3 &lo, btVector3 &hi) {
    bt_box(w->box + 6 * (size_t)slot, w->dim, 3, lo, hi);
}

int bt_world_create(bp_wpeer *w) {
    bt_world *s = nullptr;
    try {
        s = new bt_world();
        s->base.open(w->slots, w->variant, w->dim, w->lo, w->hi);
        s->filter.w = w;
        s->base.bp->getOverlappingPairCache()->setOverlapFilterCallback(&s->filter);
    } catch (const std::bad_alloc &) {
        delete s;
        return -1;
    }
    w->impl = s;
    return 0;
}

int bt_world_add(bp_wpeer *w, uint32_t slot) {
    bt_world *s = static_cast<bt_world *>(w->impl);
    btVector3 lo, hi;
    bt_world_box(w, slot, lo, hi);
    // btCollisionWorld::addCollisionObject's groups: static objects never collide with each other.
    const bool st = w->stat[slot];
    const int group = st ? int(btBroadphaseProxy::StaticFilter) : int(btBroadphaseProxy::DefaultFilter);
    const int mask = st ? int(btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter)
                        : int(btBroadphaseProxy::AllFilter);
    try {
        s->base.proxy[slot] = s->base.bp->createProxy(lo, hi, SPHERE_SHAPE_PROXYTYPE,
                                                      reinterpret_cast<void *>((intptr_t)slot), group, mask,
                                                      s->base.dispatcher);
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return s->base.proxy[slot] ? 0 : -1;
}

int bt_world_move(bp_wpeer *w, uint32_t slot, const float *) {
    bt_world *s = static_cast<bt_world *>(w->impl);
    btVector3 lo, hi;
    bt_world_box(w, slot, lo, hi);
    try {
        s->base.bp->setAabb(s->base.proxy[slot], lo, hi, s->base.dispatcher);
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

int bt_world_remove(bp_wpeer *w, uint32_t slot) {
    bt_world *s = static_cast<bt_world *>(w->impl);
    try {
        s->base.bp->destroyProxy(s->base.proxy[slot], s->base.dispatcher);
    } catch (const std::bad_alloc &) {
        return -1;
    }
    s->base.proxy[slot] = nullptr;
    return 0;
}

int bt_world_update(bp_wpeer *w) {
    bt_world *s = static_cast<bt_world *>(w->impl);
    try {
        s->base.bp->calculateOverlappingPairs(s->base.dispatcher);
        btOverlappingPairCache *cache = s->base.bp->getOverlappingPairCache();
        const int count = cache->getNumOverlappingPairs();
        const btBroadphasePair *pairs = cache->getOverlappingPairArrayPtr();
        w->candidates += (size_t)count;
        for (int k = 0; k < count; ++k) {
            uint32_t a = (uint32_t)(intptr_t)pairs[k].m_pProxy0->m_clientObject;
            uint32_t b = (uint32_t)(intptr_t)pairs[k].m_pProxy1->m_clientObject;
            if (bp_wpeer_overlap(w, a, b) && bp_wpeer_touching(w, a, b) != 0) return -1;
            if ((k & 4095) == 4095 && bp_wpeer_over_time(w)) return BP_PEER_TOO_SLOW;
        }
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

void bt_world_destroy(bp_wpeer *w) {
    delete static_cast<bt_world *>(w->impl);
}

const bp_wpeer_class bt_world_class = {
    true, true, true, bt_world_create, bt_world_add, bt_world_move, bt_world_remove, bt_world_update, bt_world_destroy,
};

}  // namespace

extern "C" const bp_peer_class bp_peer_bullet_dbvt = {
    "bullet-dbvt", BT_PEER_DBVT, true, true, false, nullptr, bt_peer_create, bt_peer_step, bt_peer_destroy,
    &bt_world_class,
};

extern "C" const bp_peer_class bp_peer_bullet_sap = {
    "bullet-sap", BT_PEER_SAP, true, true, false, nullptr, bt_peer_create, bt_peer_step, bt_peer_destroy,
    &bt_world_class,
};
