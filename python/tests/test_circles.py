"""circle_pairs: exact circle / sphere overlap, against a rational-arithmetic reference."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import METHODS, as_set, ref_circles

import broadphase


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_circles_random(rng, method, dim):
    for dtype in (np.float64, np.float32):
        n = int(rng.integers(0, 400))
        c = rng.uniform(0, 60, (n, dim)).astype(dtype)
        r = rng.uniform(0, 3, n).astype(dtype)
        want = ref_circles(c, r)
        assert as_set(broadphase.circle_pairs(c, r, method=method)) == want
        assert broadphase.circle_pairs(c, r, method=method, sorted=True).tolist() == [list(p) for p in sorted(want)]


@pytest.mark.parametrize("dim", [2, 3])
def test_circles_touching_exactly(rng, dim):
    """Circles on an integer lattice with radius 0.5 touch their neighbours exactly: every such
    pair counts; diagonal neighbours (distance sqrt 2) do not."""
    side = 6
    grid = np.stack(np.meshgrid(*[np.arange(side)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    c = grid.astype(np.float64) * 1.0 + 1e6  # far from 0: the float32 boxes round
    got = as_set(broadphase.circle_pairs(c, 0.5))
    want = ref_circles(c, np.full(len(c), 0.5))
    assert got == want
    assert len(want) == dim * side ** (dim - 1) * (side - 1)


def test_circles_near_ties(rng):
    """Pairs placed at distance ra + rb in float64 (a tie up to one rounding): decided exactly,
    and none lost to the float32 boxes."""
    n = 300
    c1 = rng.uniform(-1e3, 1e3, (n, 2))
    ra = rng.uniform(0, 10, n)
    rb = rng.uniform(0, 10, n)
    ang = rng.uniform(0, 2 * np.pi, n)
    axis = rng.random(n) < 0.5  # half along x exactly, half at an angle
    dirs = np.where(axis[:, None], np.array([[1.0, 0.0]]), np.stack([np.cos(ang), np.sin(ang)], axis=1))
    c2 = c1 + dirs * (ra + rb)[:, None]
    c = np.empty((2 * n, 2))
    c[0::2], c[1::2] = c1 + np.arange(n)[:, None] * 100.0, c2 + np.arange(n)[:, None] * 100.0
    r = np.empty(2 * n)
    r[0::2], r[1::2] = ra, rb
    want = ref_circles(c, r)
    assert as_set(broadphase.circle_pairs(c, r)) == want
    # along x the float64 sum is exact more often than not: most axis pairs touch
    assert sum(1 for k in range(n) if axis[k] and (2 * k, 2 * k + 1) in want) > n // 8


def test_circles_zero_radius_and_scalar():
    c = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0 + 1e-12], [3.0, 3.0]])
    assert broadphase.circle_pairs(c, 0.0, sorted=True).tolist() == [[0, 1]]
    assert broadphase.circle_pairs(c, np.zeros(4), sorted=True).tolist() == [[0, 1]]
    assert broadphase.circle_pairs(c, 1.5, sorted=True).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert broadphase.circle_pairs(np.empty((0, 3)), 1.0).shape == (0, 2)
    ints = np.array([[0, 0], [2, 0], [4, 1]])
    assert broadphase.circle_pairs(ints, 1, sorted=True).tolist() == [[0, 1]]


@pytest.mark.parametrize("dim", [2, 3])
def test_context_circle_frames(rng, dim):
    n = 300
    c = rng.uniform(0, 40, (n, dim))
    v = rng.uniform(-0.5, 0.5, (n, dim))
    r = rng.uniform(0.2, 1.5, n)
    with broadphase.Context(dim=dim, method="sweep") as ctx:
        for _ in range(4):
            c += v
            assert as_set(ctx.circle_pairs(c, r)) == ref_circles(c, r)


def test_circle_boxes_hold_the_exact_circles(rng):
    """The float32 box of every circle contains the exact [c - r, c + r], at every magnitude
    (subnormal to 1e37), in float32 and float64 input: checked in rational arithmetic."""
    from fractions import Fraction

    from broadphase._circles import circle_boxes

    n = 3000
    mag = 10.0 ** rng.uniform(-44, 37, n)
    for dtype in (np.float64, np.float32):
        c = (rng.uniform(-1, 1, (n, 2)) * mag[:, None]).astype(dtype)
        r = (rng.uniform(0, 1, n) * mag * (rng.random(n) < 0.9)).astype(dtype)
        c[:5] = 0.0
        _, _, b = circle_boxes(c, r)
        for k in range(n):
            for a in range(2):
                lo, hi = Fraction(float(b.data[k, a])), Fraction(float(b.data[k, 2 + a]))
                cc, rr = Fraction(float(c[k, a])), Fraction(float(r[k]))
                assert lo <= cc - rr and cc + rr <= hi, (dtype, k, a, c[k], r[k], b.data[k])
