"""Shared fixtures: the seed (from $SEED, printed), numpy brute-force references, the methods."""

from __future__ import annotations

import os
import time
import zlib
from fractions import Fraction

import numpy as np
import pytest

import broadphase

SEED = int(os.environ.get("SEED", str(int(time.time()) % 1_000_000)))
METHODS = broadphase.available_methods()


def pytest_report_header(config):  # noqa: D103
    return f"broadphase {broadphase.__version__}: SEED={SEED} (set $SEED to repeat a run); methods {', '.join(METHODS)}"


@pytest.fixture
def rng(request):
    """A generator seeded from $SEED and the test's name, printed when the test fails."""
    seed = [SEED, zlib.crc32(request.node.nodeid.encode())]
    print(f"SEED={SEED} (test stream {seed})")
    return np.random.default_rng(seed)


def ref_pairs(boxes32: np.ndarray) -> set:
    """Brute force: every (i, j), i < j, whose float32 boxes overlap (closed intervals)."""
    n, two_d = boxes32.shape
    d = two_d // 2
    lo, hi = boxes32[:, :d], boxes32[:, d:]
    hit = np.ones((n, n), dtype=bool)
    for a in range(d):
        hit &= (lo[:, None, a] <= hi[None, :, a]) & (lo[None, :, a] <= hi[:, None, a])
    i, j = np.nonzero(np.triu(hit, 1))
    return set(zip(i.tolist(), j.tolist()))


def ref_between(a32: np.ndarray, b32: np.ndarray) -> set:
    d = a32.shape[1] // 2
    hit = np.ones((len(a32), len(b32)), dtype=bool)
    for k in range(d):
        hit &= (a32[:, None, k] <= b32[None, :, d + k]) & (b32[None, :, k] <= a32[:, None, d + k])
    i, j = np.nonzero(hit)
    return set(zip(i.tolist(), j.tolist()))


def ref_circles(c: np.ndarray, r: np.ndarray) -> set:
    """Exact (rational) circle / sphere overlap of every pair: |ci - cj| <= ri + rj."""
    n = len(c)
    # a cheap double prefilter with a wide margin, then Fractions decide
    diff = c[:, None, :].astype(np.float64) - c[None, :, :]
    dist = np.sqrt((diff * diff).sum(axis=2))
    rs = r[:, None].astype(np.float64) + r[None, :]
    near = np.triu(dist <= rs * (1 + 1e-9) + 1e-300, 1)
    out = set()
    for i, j in zip(*np.nonzero(near)):
        d2 = sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(c[i], c[j]))
        s = Fraction(float(r[i])) + Fraction(float(r[j]))
        if d2 <= s * s:
            out.add((int(i), int(j)))
    return out


def as_set(pairs: np.ndarray) -> set:
    assert pairs.dtype == np.uint32 and pairs.ndim == 2 and pairs.shape[1] == 2
    s = set(map(tuple, pairs.tolist()))
    assert len(s) == len(pairs), "a pair is reported twice"
    return s


def random_boxes(rng, n: int, dim: int, world: float = 100.0, size: float = 6.0) -> np.ndarray:
    """n boxes in [0, world]^dim with extents up to `size`, float32, some degenerate."""
    lo = rng.uniform(0, world, (n, dim))
    ext = rng.uniform(0, size, (n, dim)) * (rng.random((n, 1)) < 0.9)  # 10% points
    return np.hstack([lo, lo + ext]).astype(np.float32)
