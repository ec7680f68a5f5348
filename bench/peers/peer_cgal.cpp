// CGAL box_self_intersection_d (Zomorodian and Edelsbrunner's streamed segment tree), 2D and
// 3D: it keeps no state between calls, so every frame builds the box sequence and runs it,
// closed boxes (its default topology), default cutoff, sequential.
#include <CGAL/box_intersection_d.h>

#include <cstddef>
#include <new>
#include <vector>

#include "peer_impl.h"

namespace {

// A box with the object's index as its id (CGAL's Box_d with ID_EXPLICIT draws ids from a
// global atomic counter).
template <int D>
struct cgal_peer_box {
    typedef float NT;
    typedef std::size_t ID;
    float lo[D], hi[D];
    uint32_t index;
    static int dimension() { return D; }
    float min_coord(int d) const { return lo[d]; }
    float max_coord(int d) const { return hi[d]; }
    ID id() const { return index; }
};

struct cgal_peer {
    std::vector<cgal_peer_box<2>> boxes2;
    std::vector<cgal_peer_box<3>> boxes3;
};

// Thrown from the callback to stop CGAL (plain C++ code: its vectors unwind).
struct cgal_peer_too_slow {};

struct cgal_peer_report {
    bp_peer *p;
    bool *oom;
    unsigned *calls;
    template <class B>
    void operator()(const B &a, const B &b) const {
        if ((++*calls & 0xFFFFu) == 0 && bp_peer_over_time(p)) throw cgal_peer_too_slow();
        if (bp_peer_push(p, a.index, b.index) != 0) *oom = true;
    }
};

template <int D>
int cgal_peer_run(bp_peer *p, std::vector<cgal_peer_box<D>> &v, const float *boxes) {
    const size_t n = p->n;
    v.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const float *b = boxes + i * 2 * D;
        for (int a = 0; a < D; ++a) {
            v[i].lo[a] = b[a];
            v[i].hi[a] = b[D + a];
        }
        v[i].index = (uint32_t)i;
    }
    bool oom = false;
    unsigned calls = 0;
    CGAL::box_self_intersection_d(v.begin(), v.end(), cgal_peer_report{p, &oom, &calls});
    return oom ? -1 : 0;
}

int cgal_peer_create(bp_peer *p) {
    try {
        cgal_peer *s = new cgal_peer();
        if (p->dim == 2) s->boxes2.reserve(p->n);
        else s->boxes3.reserve(p->n);
        p->impl = s;
    } catch (const std::bad_alloc &) {
        return -1;
    }
    return 0;
}

int cgal_peer_step(bp_peer *p, const float *boxes, const float *) {
    cgal_peer *s = static_cast<cgal_peer *>(p->impl);
    try {
        return p->dim == 2 ? cgal_peer_run<2>(p, s->boxes2, boxes) : cgal_peer_run<3>(p, s->boxes3, boxes);
    } catch (const std::bad_alloc &) {
        return -1;
    } catch (const cgal_peer_too_slow &) {
        return BP_PEER_TOO_SLOW;
    }
}

void cgal_peer_destroy(bp_peer *p) {
    delete static_cast<cgal_peer *>(p->impl);
}

}  // namespace

extern "C" const bp_peer_class bp_peer_cgal_box = {
    "cgal-box", 0, true, true, false, nullptr, cgal_peer_create, cgal_peer_step, cgal_peer_destroy, nullptr,
};
