// Box2D 2.4 b2BroadPhase, driven as its contact manager drives it (b2ContactManager with
// b2Fixture::Synchronize):
//  - every object is a proxy; each frame MoveProxy(id, aabb, displacement) with the frame's box
//    and the object's motion this frame. The dynamic tree keeps fat AABBs (b2_aabbExtension
//    around the box, plus b2_aabbMultiplier times the displacement) and only reinserts and
//    buffers the proxies that left theirs;
//  - UpdatePairs queries the tree for the buffered proxies and reports potentially new pairs;
//    like b2ContactManager::AddPair we keep each pair once in a persistent contact list (a
//    per-object edge list answers "does this contact exist already?");
//  - like b2ContactManager::Collide, contacts whose fat AABBs stopped overlapping are destroyed;
//    the remaining contacts are the frame's candidates (what Box2D hands to its narrow phase).
// Box2D's world also sweeps each fixture's AABB over the step; we give the frame's box only,
// which can only make Box2D faster here.
//
// The persistent world (world_peers.h) is the same machinery with proxies that live: CreateProxy
// when an object is added, MoveProxy for the moved ones only, DestroyProxy (and its contacts)
// when one is removed. AddPair applies b2ContactManager's filter (b2Body::ShouldCollide: never
// two static bodies; b2ContactFilter: category and mask bits), and each contact keeps a
// touching flag from the exact box test, as b2Contact::Update keeps its touching flag: its
// changes are the begin and end events.
#include <box2d/b2_broad_phase.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "peer_impl.h"

namespace {

// Thrown out of AddPair (through the header-only UpdatePairs and Query templates, compiled here)
// when the step passes its time limit: UpdatePairs has no other way out. The peer then only
// accepts destroy (peers.h), so the broad phase's half-done pair buffer does not matter.
struct b2_peer_too_slow {};

struct b2_peer_contact {
    int32 a, b;              // object indices or slots (the proxies' user data)
    bool touching;           // persistent world: the exact boxes overlap
    int32 prev, next;        // the list of live contacts, or the free list (next)
    int32 edge_next[2];      // next contact in the edge list of a ([0]) and of b ([1])
    int32 edge_prev[2];
};

struct b2_peer {
    b2BroadPhase bp;
    std::vector<int32> proxy;        // object -> proxy id
    std::vector<int32> edge_head;    // object -> first contact touching it, -1 for none
    std::vector<b2_peer_contact> contacts;
    int32 live = -1;                 // first live contact
    int32 free_list = -1;
    bool created = false;
    bool oom = false;
    bp_peer *owner = nullptr;        // for the time limit (stateless use)
    bp_wpeer *world = nullptr;       // persistent use: filters, boxes, events
    size_t calls = 0;                // AddPair calls, to look at the clock every 4096

    // Which side (0: a, 1: b) object `obj` is in contact c.
    int side(int32 c, int32 obj) const { return contacts[(size_t)c].a == obj ? 0 : 1; }

    void edge_link(int32 c, int32 obj) {
        int s = side(c, obj);
        b2_peer_contact &k = contacts[(size_t)c];
        k.edge_prev[s] = -1;
        k.edge_next[s] = edge_head[(size_t)obj];
        if (edge_head[(size_t)obj] >= 0) {
            int32 h = edge_head[(size_t)obj];
            contacts[(size_t)h].edge_prev[side(h, obj)] = c;
        }
        edge_head[(size_t)obj] = c;
    }

    void edge_unlink(int32 c, int32 obj) {
        int s = side(c, obj);
        b2_peer_contact &k = contacts[(size_t)c];
        if (k.edge_prev[s] >= 0) {
            int32 q = k.edge_prev[s];
            contacts[(size_t)q].edge_next[side(q, obj)] = k.edge_next[s];
        } else {
            edge_head[(size_t)obj] = k.edge_next[s];
        }
        if (k.edge_next[s] >= 0) {
            int32 q = k.edge_next[s];
            contacts[(size_t)q].edge_prev[side(q, obj)] = k.edge_prev[s];
        }
    }

    // b2ContactManager::AddPair: walk one object's contacts; create the contact if absent.
    void AddPair(void *user_a, void *user_b) {
        int32 a = (int32)(intptr_t)user_a, b = (int32)(intptr_t)user_b;
        if ((++calls & 4095) == 0 && (owner ? bp_peer_over_time(owner) : bp_wpeer_over_time(world)))
            throw b2_peer_too_slow();
        if (a == b) return;
        // b2ContactManager::AddPair: ShouldCollide (not two static bodies) and the filter.
        if (world && !bp_wpeer_counts(world, (uint32_t)a, (uint32_t)b)) return;
        for (int32 c = edge_head[(size_t)b]; c >= 0;) {
            const b2_peer_contact &k = contacts[(size_t)c];
            int s = k.a == b ? 0 : 1;
            int32 other = s == 0 ? k.b : k.a;
            if (other == a) return;
            c = k.edge_next[s];
        }
        int32 c;
        if (free_list >= 0) {
            c = free_list;
            free_list = contacts[(size_t)c].next;
        } else {
            try {
                contacts.push_back(b2_peer_contact());
            } catch (const std::bad_alloc &) {
                oom = true;
                return;
            }
            c = (int32)(contacts.size() - 1);
        }
        b2_peer_contact &k = contacts[(size_t)c];
        k.a = a;
        k.b = b;
        k.touching = false;
        k.prev = -1;
        k.next = live;
        if (live >= 0) contacts[(size_t)live].prev = c;
        live = c;
        edge_link(c, a);
        edge_link(c, b);
    }

    void destroy_contact(int32 c) {
        b2_peer_contact &k = contacts[(size_t)c];
        edge_unlink(c, k.a);
        edge_unlink(c, k.b);
        if (k.prev >= 0) contacts[(size_t)k.prev].next = k.next;
        else live = k.next;
        if (k.next >= 0) contacts[(size_t)k.next].prev = k.prev;
        k.next = free_list;
        free_list = c;
    }
};

// The state for `slots` proxies, used by a peer (owner) or a persistent world (world); sets *impl.
int b2_create(size_t slots, bp_peer *owner, bp_wpeer *world, void **impl) {
    try {
        b2_peer *s = new b2_peer();
        s->proxy.assign(slots, -1);
        s->edge_head.assign(slots, -1);
        s->owner = owner;
        s->world = world;
        *impl = s;
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

int b2_peer_create(bp_peer *p) {
    return b2_create(p->n, p, nullptr, &p->impl);
}

int b2_peer_step(bp_peer *p, const float *boxes, const float *vel) {
    b2_peer *s = static_cast<b2_peer *>(p->impl);
    const size_t n = p->n;
    if (!s->created) {
        for (size_t i = 0; i < n; ++i) {
            const float *b = boxes + 4 * i;
            b2AABB aabb;
            aabb.lowerBound.Set(b[0], b[1]);
            aabb.upperBound.Set(b[2], b[3]);
            s->proxy[i] = s->bp.CreateProxy(aabb, reinterpret_cast<void *>((intptr_t)i));
        }
        s->created = true;
    } else {
        for (size_t i = 0; i < n; ++i) {
            const float *b = boxes + 4 * i;
            b2AABB aabb;
            aabb.lowerBound.Set(b[0], b[1]);
            aabb.upperBound.Set(b[2], b[3]);
            s->bp.MoveProxy(s->proxy[i], aabb, b2Vec2(vel[2 * i], vel[2 * i + 1]));
            if ((i & 4095) == 4095 && bp_peer_over_time(p)) return BP_PEER_TOO_SLOW;
        }
    }
    try {
        s->bp.UpdatePairs(s);  // FindNewContacts
    } catch (const b2_peer_too_slow &) {
        return BP_PEER_TOO_SLOW;
    }
    if (s->oom) return -1;
    // Collide: destroy contacts whose fat AABBs no longer overlap; the rest are candidates.
    size_t visited = 0;
    for (int32 c = s->live; c >= 0;) {
        if ((++visited & 4095) == 0 && bp_peer_over_time(p)) return BP_PEER_TOO_SLOW;
        const b2_peer_contact &k = s->contacts[(size_t)c];
        int32 next = k.next;
        if (!s->bp.TestOverlap(s->proxy[(size_t)k.a], s->proxy[(size_t)k.b])) {
            s->destroy_contact(c);
        } else if (bp_peer_push(p, (uint32_t)k.a, (uint32_t)k.b) != 0) {
            return -1;
        }
        c = next;
    }
    return 0;
}

void b2_peer_destroy(bp_peer *p) {
    delete static_cast<b2_peer *>(p->impl);
}

// ---------------------------------------------------------------------------------------------
// The persistent world

b2AABB b2_world_aabb(const bp_wpeer *w, uint32_t slot) {
    const float *b = w->box + 6 * (size_t)slot;
    b2AABB aabb;
    aabb.lowerBound.Set(b[0], b[1]);
    aabb.upperBound.Set(b[3], b[4]);
    return aabb;
}

int b2_world_create(bp_wpeer *w) {
    return b2_create(w->slots, nullptr, w, &w->impl);
}

int b2_world_add(bp_wpeer *w, uint32_t slot) {
    b2_peer *s = static_cast<b2_peer *>(w->impl);
    try {
        s->proxy[slot] = s->bp.CreateProxy(b2_world_aabb(w, slot), reinterpret_cast<void *>((intptr_t)slot));
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

int b2_world_move(bp_wpeer *w, uint32_t slot, const float *vel) {
    b2_peer *s = static_cast<b2_peer *>(w->impl);
    try {
        s->bp.MoveProxy(s->proxy[slot], b2_world_aabb(w, slot), b2Vec2(vel[0], vel[1]));
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

// b2World::DestroyBody: its contacts go (an end for each touching one), then its proxy.
int b2_world_remove(bp_wpeer *w, uint32_t slot) {
    b2_peer *s = static_cast<b2_peer *>(w->impl);
    while (s->edge_head[slot] >= 0) {
        int32 c = s->edge_head[slot];
        const b2_peer_contact &k = s->contacts[(size_t)c];
        if (k.touching && bp_wpeer_end(w, (uint32_t)k.a, (uint32_t)k.b) != 0) return -1;
        s->destroy_contact(c);
    }
    s->bp.DestroyProxy(s->proxy[slot]);
    s->proxy[slot] = -1;
    return 0;
}

// b2World::Step's broad phase: FindNewContacts (UpdatePairs), then Collide: contacts whose fat
// AABBs parted are destroyed; the others get the exact test, whose changes are the events.
int b2_world_update(bp_wpeer *w) {
    b2_peer *s = static_cast<b2_peer *>(w->impl);
    try {
        s->bp.UpdatePairs(s);
    } catch (const b2_peer_too_slow &) {
        return BP_PEER_TOO_SLOW;
    } catch (const std::bad_alloc &) {
        return -1;
    }
    if (s->oom) return -1;
    size_t visited = 0;
    for (int32 c = s->live; c >= 0;) {
        if ((++visited & 4095) == 0 && bp_wpeer_over_time(w)) return BP_PEER_TOO_SLOW;
        b2_peer_contact &k = s->contacts[(size_t)c];
        int32 next = k.next;
        w->candidates++;
        if (!s->bp.TestOverlap(s->proxy[(size_t)k.a], s->proxy[(size_t)k.b])) {
            if (k.touching && bp_wpeer_end(w, (uint32_t)k.a, (uint32_t)k.b) != 0) return -1;
            s->destroy_contact(c);
        } else {
            bool touching = bp_wpeer_overlap(w, (uint32_t)k.a, (uint32_t)k.b);
            if (touching != k.touching) {
                k.touching = touching;
                if ((touching ? bp_wpeer_begin(w, (uint32_t)k.a, (uint32_t)k.b)
                              : bp_wpeer_end(w, (uint32_t)k.a, (uint32_t)k.b)) != 0)
                    return -1;
            }
        }
        c = next;
    }
    return 0;
}

void b2_world_destroy(bp_wpeer *w) {
    delete static_cast<b2_peer *>(w->impl);
}

const bp_wpeer_class b2_world_class = {
    true, false, false, b2_world_create, b2_world_add, b2_world_move, b2_world_remove, b2_world_update, b2_world_destroy,
};

}  // namespace

extern "C" const bp_peer_class bp_peer_box2d = {
    "box2d-broadphase", 0, true, false, true, nullptr, b2_peer_create, b2_peer_step, b2_peer_destroy, &b2_world_class,
};
