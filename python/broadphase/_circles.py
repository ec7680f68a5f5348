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
from typing import Any, Dict, Optional, Tuple

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
_SMALLEST = np.float32(2.0**-149)


def _outward(t: np.ndarray, sign: float, step: np.ndarray) -> None:
    """Moves every float32 of `t` outward (down for sign < 0, up otherwise) by at least one float
    step: by max(|t| * 2^-23, 2^-149), one to two steps of t (the product rounds to no less than
    the step, which is itself a float), and the smallest subnormal for zero."""
    np.abs(t, out=step)
    step *= _ULP_SCALE
    np.maximum(step, _SMALLEST, out=step)
    if sign < 0:
        t -= step
    else:
        t += step


def _buffer(scratch: Optional[Dict[str, np.ndarray]], name: str, shape: Tuple[int, ...]) -> np.ndarray:
    """A float32 array of `shape`: the one kept in `scratch` under `name` when it fits (a Context
    keeps them, so that a warm frame allocates nothing), else a new one."""
    if scratch is None:
        return np.empty(shape, dtype=np.float32)
    buf = scratch.get(name)
    if buf is None or buf.shape != shape:
        buf = scratch[name] = np.empty(shape, dtype=np.float32)
    return buf


def circle_boxes(centres: Any, radii: Any, scratch: Optional[Dict[str, np.ndarray]] = None
                 ) -> Tuple[np.ndarray, np.ndarray, _arrays.Boxes]:
    """The centres (n, d) and radii (n,) as float32 or float64 arrays, and the circles' float32
    boxes rounded outward (in `scratch`'s buffers when given: valid until the next call)."""
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
    one = r.ndim == 0
    r = np.broadcast_to(np.asarray(r, dtype=dt), (n,))
    # One radius: subtract a scalar from the contiguous (n, d) centres. Radii per row: one column
    # at a time (numpy loops fast over a long strided column, slowly over n rows of d values).
    lo = _buffer(scratch, "lo", (n, d))
    hi = _buffer(scratch, "hi", (n, d))
    step = _buffer(scratch, "step", (n, d))
    with np.errstate(over="ignore", invalid="ignore"):
        if one:  # one radius: the contiguous (n, d) centres minus a scalar
            rv = r[0] if n else dt(0)
            np.subtract(c, rv, out=lo, casting="unsafe")
            np.add(c, rv, out=hi, casting="unsafe")
        else:  # a column at a time: numpy loops fast over long columns, slowly over n short rows
            for a in range(d):
                np.subtract(c[:, a], r, out=lo[:, a], casting="unsafe")
                np.add(c[:, a], r, out=hi[:, a], casting="unsafe")
        # c -+ r rounded to nearest float32 (in float32, or in float64 then cast), then pushed
        # outward by at least one float step: more than the half step the rounding can have
        # moved it, so the float box holds the exact one. Then the corners interleaved once.
        _outward(lo, -1.0, step)
        _outward(hi, 1.0, step)
    data = _arrays.pack(lo, hi, _buffer(scratch, "boxes", (n, 2 * d)))
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
    i = pairs[:, 0].astype(np.intp)
    j = pairs[:, 1].astype(np.intp)
    # Whole rows gathered at once, then contiguous arithmetic in double; the axes summed as
    # columns (numpy loops slowly over many short rows).
    e = np.take(c, i, axis=0).astype(np.float64)
    e -= np.take(c, j, axis=0)
    e *= e
    dd = e[:, 0] + e[:, 1]
    if c.shape[1] == 3:
        dd += e[:, 2]
    if r.strides[0] == 0:  # one radius for all
        s = np.full(len(pairs), 2.0 * float(r[0]))
    else:
        s = r[i].astype(np.float64)
        s += r[j]
    ss = s * s
    det = ss - dd
    scale = ss + dd
    bound = _REL_BOUND * scale
    keep = det > bound
    unsure = np.flatnonzero((np.abs(det) <= bound) | (scale < _TINY))
    for k in unsure.tolist():
        a_, b_ = int(i[k]), int(j[k])
        dist2 = sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(c[a_], c[b_]))
        rsum = Fraction(float(r[a_])) + Fraction(float(r[b_]))
        keep[k] = dist2 <= rsum * rsum
    if pairs.flags.c_contiguous:  # rows as one uint64 each: a 1-D selection, 3x faster
        return pairs.view(np.uint64).reshape(-1)[keep].view(np.uint32).reshape(-1, 2)
    return pairs[keep]
