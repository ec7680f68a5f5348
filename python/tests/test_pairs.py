"""pairs / pairs_between / Context.pairs against the numpy brute force, every method and dimension."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import METHODS, as_set, random_boxes, ref_between, ref_pairs

import broadphase
from broadphase import _arrays


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_pairs_random(rng, method, dim):
    for trial in range(4):
        n = int(rng.integers(0, 700))
        boxes = random_boxes(rng, n, dim, world=rng.choice([30.0, 100.0, 400.0]))
        want = ref_pairs(boxes)
        got = broadphase.pairs(boxes, method=method)
        assert as_set(got) == want, f"trial {trial} n {n}"
        assert (got[:, 0] < got[:, 1]).all()
        s = broadphase.pairs(boxes, method=method, sorted=True)
        assert s.tolist() == [list(p) for p in sorted(want)]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_pairs_degenerate(method, dim):
    # identical boxes, touching faces, points on corners, one box covering all, a line of boxes
    unit = [0.0] * dim + [1.0] * dim
    cases = [
        np.array([unit] * 20, dtype=np.float32),
        np.array([[float(k)] + [0.0] * (dim - 1) + [float(k + 1)] + [1.0] * (dim - 1) for k in range(30)], dtype=np.float32),
        np.array([[float(k % 5), float(k // 5)] + [0.0] * (dim - 2) + [float(k % 5), float(k // 5)] + [0.0] * (dim - 2)
                  for k in range(25)] + [[0.0] * dim + [4.0] * dim], dtype=np.float32),
        np.zeros((7, 2 * dim), dtype=np.float32),
        np.array([[-1e30] * dim + [1e30] * dim, [1e29] * dim + [2e29] * dim, [-5.0] * dim + [-4.0] * dim], dtype=np.float32),
    ]
    for boxes in cases:
        assert as_set(broadphase.pairs(boxes, method=method)) == ref_pairs(boxes)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_pairs_between_random(rng, method, dim):
    for _ in range(4):
        a = random_boxes(rng, int(rng.integers(0, 300)), dim)
        b = random_boxes(rng, int(rng.integers(0, 300)), dim)
        got = broadphase.pairs_between(a, b, method=method)
        assert as_set(got) == ref_between(a, b)
        assert broadphase.pairs_between(a, b, method=method, sorted=True).tolist() == [list(p) for p in sorted(ref_between(a, b))]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", METHODS)
def test_context_frames(rng, method, dim):
    """A context kept across frames (temporal coherence) gives every frame's exact pairs."""
    n = 400
    boxes = random_boxes(rng, n, dim, world=60.0)
    vel = rng.uniform(-0.7, 0.7, (n, dim)).astype(np.float32)
    with broadphase.Context(dim=dim, method=method) as ctx:
        for _ in range(6):
            boxes[:, :dim] += vel
            boxes[:, dim:] += vel
            assert as_set(ctx.pairs(boxes)) == ref_pairs(boxes)
            st = ctx.stats
            assert st.n == n and st.pairs == len(ref_pairs(boxes))
            assert st.method in METHODS and (method == "auto" or st.method == method)
        # a different n on the same context, then pairs_between on it
        small = boxes[: n // 3]
        assert as_set(ctx.pairs(small)) == ref_pairs(small)
        a, b = boxes[:100], boxes[100:]
        assert as_set(ctx.pairs_between(a, b)) == ref_between(a, b)


def test_input_forms(rng):
    """Every accepted layout and dtype gives the same pairs as the float32 (n, 2d) array."""
    for dim in (2, 3):
        base = random_boxes(rng, 300, dim)
        want = ref_pairs(base)
        lo, hi = base[:, :dim], base[:, dim:]
        forms = {
            "float64": base.astype(np.float64),
            "fortran": np.asfortranarray(base),
            "strided": np.repeat(base, 2, axis=0)[::2],
            "n2d": np.stack([lo, hi], axis=1),
            "list": base.tolist(),
            "float16": base.astype(np.float16),
            "longdouble": base.astype(np.longdouble),
        }
        for name, arr in forms.items():
            exp = want if name != "float16" else ref_pairs(np.asarray(arr, dtype=np.float32))
            assert as_set(broadphase.pairs(arr)) == exp, name
        assert as_set(broadphase.pairs(lo=lo, hi=hi)) == want
        assert as_set(broadphase.pairs(lo=lo.astype(np.float64).tolist(), hi=hi.astype(np.float64))) == want
    ints = np.array([[0, 0, 2, 2], [2, 2, 4, 4], [5, 5, 6, 6]], dtype=np.int64)
    assert broadphase.pairs(ints).tolist() == [[0, 1]]
    assert broadphase.pairs(ints.astype(np.uint8)).tolist() == [[0, 1]]


def test_no_copy_when_float32_c_contiguous(rng):
    boxes = random_boxes(rng, 50, 2)
    assert _arrays.boxes(boxes).data is boxes or np.shares_memory(_arrays.boxes(boxes).data, boxes)
    f64 = boxes.astype(np.float64)
    assert not np.shares_memory(_arrays.boxes(f64).data, f64)
    readonly = boxes.copy()
    readonly.flags.writeable = False
    assert as_set(broadphase.pairs(readonly)) == ref_pairs(boxes)


def test_float64_rounding_never_loses_a_pair():
    """float64 boxes are rounded to nearest float32, which is monotone: a pair that overlaps in
    float64 overlaps in float32 (it may gain pairs separated by less than a rounding step)."""
    x = 1.0 + 2.0**-30  # rounds to 1.0 in float32
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [x, 0.0, 2.0, 1.0], [1.0, 0.0, 1.5, 1.0]])
    got = as_set(broadphase.pairs(boxes))
    assert (0, 2) in got and (1, 2) in got  # the true float64 pairs
    assert (0, 1) in got  # touching after rounding: documented


def test_empty_and_tiny():
    for dim in (2, 3):
        assert broadphase.pairs(np.empty((0, 2 * dim))).shape == (0, 2)
        assert broadphase.pairs(np.zeros((1, 2 * dim))).shape == (0, 2)
        assert broadphase.pairs(np.zeros((2, 2 * dim))).tolist() == [[0, 1]]
        assert broadphase.pairs_between(np.empty((0, 2 * dim)), np.zeros((3, 2 * dim))).shape == (0, 2)
        assert broadphase.pairs(lo=np.empty((0, dim)), hi=np.empty((0, dim))).shape == (0, 2)


def test_one_call_context_cache(rng, monkeypatch):
    """The one-call functions keep a context per thread between calls (warm loops), free it past
    CACHE_LIMIT, and clear_cache() frees it; results never depend on what came before."""
    from broadphase import _context

    broadphase.clear_cache()
    contexts = _context._cache.__dict__.setdefault("contexts", {})
    a = random_boxes(rng, 300, 2)
    b = random_boxes(rng, 500, 2, world=30.0)
    assert as_set(broadphase.pairs(a, method="sweep")) == ref_pairs(a)
    kept = contexts[(2, "sweep", False)]
    assert as_set(broadphase.pairs(b, method="sweep")) == ref_pairs(b)  # unrelated boxes, same context
    assert contexts[(2, "sweep", False)] is kept and not kept.closed
    broadphase.clear_cache()
    assert not contexts and kept.closed
    monkeypatch.setattr(_context, "CACHE_LIMIT", 0)
    assert as_set(broadphase.pairs(a)) == ref_pairs(a)
    assert not contexts  # over the limit: freed after the call
