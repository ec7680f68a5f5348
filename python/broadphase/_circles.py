"""Circles and spheres: boxes rounded outward for the library, then the exact overlap test.

The library works on float32 boxes. A circle's box [c - r, c + r] is rounded outward (one float
step past the nearest float), so the float box contains the exact one and no pair of circles is
lost. The candidate pairs are then decided on the caller's own values: in double precision when
an error bound settles the sign of (ri + rj)^2 - |ci - cj|^2 (nearly always), and with exact
rational arithmetic when it does not (near-ties), so touching circles count, as the C narrow test
and the CLI's `pairs --circles` count them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Tuple

import numpy as np

from . import _arrays
from ._arrays import PairArray
from ._errors import InvalidInputError, make_error

# Each rounded step of the double evaluation has relative error 2^-53; the handful of steps stays
# far below this bound, relative to ss + dd.
_REL_BOUND = 1e-14
_TINY = 1e-200  # below this, products may underflow: decide exactly


def _dtype(*arrays: np.ndarray) -> Any:
    """float32 when every input fits it exactly (float16/float32), float64 otherwise."""
    if all(a.dtype.kind == "f" and a.dtype.itemsize <= 4 for a in arrays):
        return np.float32
    return np.float64


_ULP_SCALE = np.float32(2.0**-23)
_TINY_STEP = np.float32(2.0**-126)


def _outward(t: np.ndarray, sign: float) -> None:
    """Moves every float32 of `t` outward (down for sign < 0, up otherwise) by at least one float
    step: by |t| * 2^-23, which is one to two steps and exact for |t| >= 2^-103; np.nextafter for
    the rare smaller values (zero, subnormals), where that product would underflow (a libm
    call per element: too slow for every element)."""
    step = np.abs(t)
    step *= _ULP_SCALE
    tiny = np.nonzero(step < _TINY_STEP)
    small = t[tiny]
    if sign < 0:
        t -= step
    else:
        t += step
    if len(small):
        t[tiny] = np.nextafter(small, np.float32(np.inf if sign > 0 else -np.inf))


def circle_boxes(centres: Any, radii: Any) -> Tuple[np.ndarray, np.ndarray, _arrays.Boxes]:
    """The centres (n, d) and radii (n,) as float32 or float64 arrays, and the circles' float32
    boxes rounded outward."""
    c = _arrays.real_array(centres, "centres")
    r = _arrays.real_array(radii, "radii")
    if c.ndim != 2 or c.shape[1] not in (2, 3):
        raise ValueError(f"centres must have shape (n, 2) or (n, 3); got {c.shape}")
    n, d = c.shape
    _arrays.check_count(n, "centres")
    if r.shape not in ((), (n,)):
        raise ValueError(f"radii must be one number or have shape ({n},); got {r.shape}")
    dt = _dtype(c, r)
    c = np.require(c, dtype=dt, requirements=["C", "A"])
    r = np.broadcast_to(np.asarray(r, dtype=dt), (n,))
    rc = r[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        # c -+ r rounded to nearest float32 (in float32, or in float64 then cast), then pushed
        # outward by at least one float step: more than the half step the rounding can have
        # moved it, so the float box holds the exact one. All on contiguous (n, d) arrays, then
        # interleaved once (strided (n, 2) views make numpy loop per row: 5x slower).
        lo = np.subtract(c, rc).astype(np.float32, copy=False)
        hi = np.add(c, rc).astype(np.float32, copy=False)
        _outward(lo, -1.0)
        _outward(hi, 1.0)
    data = _arrays.pack(lo, hi)
    boxes = _arrays.Boxes(data, d, "centres", lambda k: np.append(c[k], r[k]))
    return c, r, boxes


def first_bad_circle(c: np.ndarray, r: np.ndarray) -> Optional[InvalidInputError]:
    """The error naming the first circle that cannot be used, or None when all can."""
    with np.errstate(over="ignore", invalid="ignore"):
        c_bad = ~np.isfinite(c).all(axis=1)
        r_bad = ~np.isfinite(r)
        neg = r < 0
        big = ~(np.isfinite((c - r[:, None]).astype(np.float32)).all(axis=1)
                & np.isfinite((c + r[:, None]).astype(np.float32)).all(axis=1))
    bad = c_bad | r_bad | neg | big
    if not bad.any():
        return None
    k = int(np.argmax(bad))
    where = f"centres row {k} [{', '.join(repr(float(v)) for v in c[k])}] radius {float(r[k])!r}"
    if c_bad[k] or r_bad[k]:
        err = make_error(_arrays.NONFINITE, f"{where}: NaN or infinite", row=k)
    elif neg[k]:
        err = make_error(_arrays.NEGATIVE_RADIUS, f"{where}: negative radius", row=k)
    else:
        err = make_error(_arrays.NONFINITE, f"{where}: the circle's box is beyond the float32 range", row=k)
    return err  # type: ignore[return-value]


def exact_circle_filter(pairs: PairArray, c: np.ndarray, r: np.ndarray) -> PairArray:
    """The rows of `pairs` whose circles touch or overlap: |ci - cj| <= ri + rj, exactly."""
    if len(pairs) == 0:
        return pairs
    i = pairs[:, 0]
    j = pairs[:, 1]
    diff = c[i].astype(np.float64) - c[j]
    dd = np.einsum("ij,ij->i", diff, diff)
    s = r[i].astype(np.float64) + r[j]
    ss = s * s
    det = ss - dd
    scale = ss + dd
    bound = _REL_BOUND * scale
    keep = det > bound
    unsure = np.flatnonzero((np.abs(det) <= bound) | (scale < _TINY))
    for k in unsure.tolist():
        a, b = int(i[k]), int(j[k])
        dist2 = sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(c[a], c[b]))
        rsum = Fraction(float(r[a])) + Fraction(float(r[b]))
        keep[k] = dist2 <= rsum * rsum
    return pairs[keep]
