"""Region queries (box, sphere, point) on a context and in one call, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import METHODS, random_boxes

import broadphase


def ref_box(boxes, lo, hi):
    d = len(lo)
    ok = ((boxes[:, :d] <= np.float32(hi)) & (np.float32(lo) <= boxes[:, d:])).all(axis=1)
    return np.flatnonzero(ok).tolist()


def ref_sphere(boxes, c, r):
    d = len(c)
    c64 = np.asarray(c, dtype=np.float32).astype(np.float64)
    lo, hi = boxes[:, :d].astype(np.float64), boxes[:, d:].astype(np.float64)
    e = np.where(c64 < lo, lo - c64, np.where(c64 > hi, c64 - hi, 0.0))
    r64 = float(np.float32(r))
    return np.flatnonzero((e * e).sum(axis=1) <= r64 * r64).tolist()


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_queries_random(rng, method, dim):
    boxes = random_boxes(rng, 500, dim, world=50.0)
    with broadphase.Context(dim=dim, method=method) as ctx:
        ctx.pairs(boxes)
        for _ in range(25):
            lo = rng.uniform(-5, 50, dim)
            hi = lo + rng.uniform(0, 12, dim) * (rng.random() < 0.8)
            got = ctx.query_box(lo, hi)
            assert got.dtype == np.uint32 and got.tolist() == ref_box(boxes, lo, hi)
            c = rng.uniform(-5, 55, dim)
            r = float(rng.uniform(0, 8))
            assert ctx.query_sphere(c, r).tolist() == ref_sphere(boxes, c, r)
            p = boxes[int(rng.integers(len(boxes))), :dim] if rng.random() < 0.5 else rng.uniform(0, 50, dim)
            assert ctx.query_point(p).tolist() == ref_box(boxes, p, p)


@pytest.mark.parametrize("dim", [2, 3])
def test_queries_one_call(rng, dim):
    boxes = random_boxes(rng, 300, dim, world=40.0)
    lo = np.full(dim, 10.0)
    hi = np.full(dim, 20.0)
    assert broadphase.query_box(boxes, lo, hi).tolist() == ref_box(boxes, lo, hi)
    assert broadphase.query_sphere(boxes, lo, 4.0).tolist() == ref_sphere(boxes, lo, 4.0)
    p = boxes[7, :dim]
    assert broadphase.query_point(boxes, p).tolist() == ref_box(boxes, p, p)
    assert 7 in broadphase.query_point(boxes, p).tolist()


def test_queries_after_pairs_between(rng):
    a = random_boxes(rng, 100, 2)
    b = random_boxes(rng, 80, 2)
    with broadphase.Context() as ctx:
        ctx.pairs_between(a, b)
        both = np.vstack([a, b])
        assert ctx.query_box([20, 20], [60, 60]).tolist() == ref_box(both, [20, 20], [60, 60])
