// Exact sums of doubles as nonoverlapping expansions (Shewchuk, "Adaptive Precision Floating-Point
// Arithmetic", 1997): two-sum, adding a double to an expansion (zeros dropped), adding an exact
// product (fma gives a product's rounding error). Used where a decision must not depend on
// rounding: the sphere and circle tests of src/query.c and the CLI's circle input. Header-only,
// so that the CLI shares it without a symbol in the library's interface.
#ifndef BP_EXACT_H
#define BP_EXACT_H

#include <math.h>
#include <stddef.h>

/// a + b = s + *err exactly.
static inline double bp_two_sum(double a, double b, double *err) {
    const double s = a + b, bv = s - a, av = s - bv;
    *err = (a - av) + (b - bv);
    return s;
}

/// Adds b to the nonoverlapping expansion e[0..n) (increasing magnitude, zeros dropped): the
/// result stays nonoverlapping, so its sign is that of its last, largest component (an empty
/// expansion is zero). e needs room for n + 1 components.
static inline size_t bp_grow_expansion(double *e, size_t n, double b) {
    double q = b;
    size_t m = 0;
    for (size_t k = 0; k < n; ++k) {
        double err;
        q = bp_two_sum(q, e[k], &err);
        if (err != 0.0) e[m++] = err;
    }
    if (q != 0.0) e[m++] = q;
    return m;
}

/// Adds x * y exactly (its rounded product and the rounding error). e needs room for n + 2.
static inline size_t bp_add_product(double *e, size_t n, double x, double y) {
    const double p = x * y, err = fma(x, y, -p);
    n = bp_grow_expansion(e, n, p);
    return err != 0.0 ? bp_grow_expansion(e, n, err) : n;
}

#endif
