// Compiled, never run, by tests/typed_ids.cmake (the CTest case api.typed_ids): as it is
// (BP_MISUSE=0) it must compile, as C and as C++; with each BP_MISUSE from 1 to 5 it must not,
// because a proxy id is a type of its own (include/broadphase.h, bp_proxy_id): an id and a user
// value, a category or a mask cannot be passed for each other.
#include "broadphase.h"

int bp_typed_ids_use(bp_world *w, uint64_t user, bp_proxy_id id, const bp_box2 *box);

int bp_typed_ids_use(bp_world *w, uint64_t user, bp_proxy_id id, const bp_box2 *box) {
    const bp_proxy_id none = BP_NULL_PROXY, zero = {0};
    int bad = !bp_proxy_is_null(none) + !bp_proxy_equal(none, zero) + !bp_proxy_is_null(bp_proxy_null());
    bad += bp_world_set_user(w, id, user) != BP_OK;
    bad += bp_world_move2(w, id, box) != BP_OK;
    bad += bp_world_set_filter(w, id, user, user) != BP_OK;
#if BP_MISUSE == 1
    bad += bp_world_set_user(w, user, id) != BP_OK;  // the arguments swapped
#elif BP_MISUSE == 2
    bad += bp_world_move2(w, user, box) != BP_OK;  // a value for an id
#elif BP_MISUSE == 3
    bad += bp_world_set_filter(w, id, id, user) != BP_OK;  // an id for a category
#elif BP_MISUSE == 4
    const bp_proxy_id from_value = user;  // no conversion from an integer
    bad += bp_proxy_is_null(from_value);
#elif BP_MISUSE == 5
    const uint64_t to_value = id;  // nor to one
    bad += to_value == 0;
#endif
    return bad;
}
