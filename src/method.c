// The methods' registry: one const class per public bp_method (AUTO has none), and their names.
// tests/test_api.c checks that every method has a name and a class with every required slot.
#include <string.h>

#include "method.h"

static const bp_algorithm_class *const classes[BP_METHOD_COUNT] = {
    [BP_METHOD_AUTO] = NULL,
    [BP_METHOD_BRUTE] = &bp_brute_class,
    [BP_METHOD_SWEEP] = &bp_sweep_class,
    [BP_METHOD_GRID] = &bp_grid_class,
    [BP_METHOD_QUADTREE] = &bp_quadtree_class,
    [BP_METHOD_RDC] = &bp_rdc_class,
};

static const char *const names[BP_METHOD_COUNT] = {
    [BP_METHOD_AUTO] = "auto",   [BP_METHOD_BRUTE] = "brute",       [BP_METHOD_SWEEP] = "sweep",
    [BP_METHOD_GRID] = "grid",   [BP_METHOD_QUADTREE] = "quadtree", [BP_METHOD_RDC] = "rdc",
};

const char *bp_method_name(bp_method method) {
    if ((int)method < 0 || method >= BP_METHOD_COUNT) return NULL;
    return names[method];
}

bp_status bp_method_from_name(const char *name, bp_method *method) {
    if (!name || !method) return BP_ERR_NULL;
    for (int m = 0; m < BP_METHOD_COUNT; ++m) {
        if (strcmp(name, names[m]) == 0) {
            *method = (bp_method)m;
            return BP_OK;
        }
    }
    return BP_ERR_INVALID_ARG;
}

bool bp_method_available(bp_method method) {
    if (method == BP_METHOD_AUTO) return true;
    if ((int)method < 0 || method >= BP_METHOD_COUNT) return false;
    return classes[method] && classes[method]->find_pairs;
}

const bp_algorithm_class *bp_method_class(bp_method method) {
    if ((int)method < 0 || method >= BP_METHOD_COUNT) return NULL;
    return classes[method];
}
