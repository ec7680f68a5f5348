"""Bad input: a Python exception with the library's message, naming the first bad row; never a
crash. Out of memory: MemoryError, and the context stays usable."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import broadphase


def good(n=10, dim=2):
    lo = np.arange(n * dim, dtype=np.float32).reshape(n, dim)
    return np.hstack([lo, lo + 1])


@pytest.mark.parametrize("dim", [2, 3])
def test_bad_rows_are_named(dim):
    cases = [
        (np.nan, "BP_ERR_NONFINITE", "NaN or infinite"),
        (np.inf, "BP_ERR_NONFINITE", "NaN or infinite"),
        (-np.inf, "BP_ERR_NONFINITE", "NaN or infinite"),
        (1e39, "BP_ERR_NONFINITE", "beyond the float32 range"),
    ]
    for value, status, why in cases:
        for dtype in (np.float64, np.float32):
            if dtype == np.float32 and value == 1e39:
                continue
            boxes = good(20, dim).astype(dtype)
            boxes[13, 1] = value
            boxes[17, 0] = value  # a later bad row is not the one named
            with pytest.raises(ValueError) as e:
                broadphase.pairs(boxes)
            assert isinstance(e.value, broadphase.InvalidInputError)
            assert e.value.row == 13 and e.value.status_name == status
            assert "row 13" in str(e.value) and why in str(e.value)
            assert "coordinate is NaN or infinite" in str(e.value)  # the library's own message
    boxes = good(20, dim)
    boxes[5, dim - 1] = boxes[5, 2 * dim - 1] + 1  # min > max on the last axis
    boxes[9, 0] = np.nan
    with pytest.raises(ValueError, match=rf"box has min > max .*row 5 .*min > max on axis {dim - 1}") as e:
        broadphase.pairs(boxes)
    assert e.value.row == 5 and e.value.status_name == "BP_ERR_INVERTED_BOX"


def test_bad_rows_in_every_entry_point():
    a, b = good(5), good(6)
    b[4, 2] = -100.0
    with pytest.raises(ValueError, match=r"b row 4"):
        broadphase.pairs_between(a, b)
    lo, hi = good(8)[:, :2], good(8)[:, 2:]
    hi = hi.copy()
    hi[3, 0] = np.nan
    with pytest.raises(ValueError, match=r"lo/hi row 3"):
        broadphase.pairs(lo=lo, hi=hi)
    with broadphase.Context() as ctx:
        with pytest.raises(ValueError, match="row 4"):
            ctx.pairs_between(a, b)
        with pytest.raises(broadphase.NoBoxesError):  # a failed call leaves no boxes
            ctx.query_point([0, 0])
        assert ctx.pairs(np.vstack([a, a])).shape == (5, 2)  # and the context goes on


def test_bad_circles():
    c = np.zeros((6, 2))
    c[:, 0] = np.arange(6) * 10
    for k, (cv, rv, status, why) in enumerate([
        (np.nan, 1.0, "BP_ERR_NONFINITE", "NaN or infinite"),
        (0.0, np.inf, "BP_ERR_NONFINITE", "NaN or infinite"),
        (0.0, -1.0, "BP_ERR_NEGATIVE_RADIUS", "negative radius"),
        (3e38, 1e38, "BP_ERR_NONFINITE", "beyond the float32 range"),
    ]):
        cc = c.copy()
        r = np.ones(6)
        cc[4, 1] = cv
        r[4] = rv
        with pytest.raises(ValueError) as e:
            broadphase.circle_pairs(cc, r)
        assert e.value.row == 4 and e.value.status_name == status and why in str(e.value), k
    with pytest.raises(ValueError, match="negative radius"):
        broadphase.circle_pairs(c, -0.5)


def test_wrong_shapes():
    for shape in [(10,), (10, 5), (10, 2), (10, 8), (10, 3, 2), (10, 2, 4), ()]:
        with pytest.raises(ValueError, match="shape"):
            broadphase.pairs(np.zeros(shape))
    with pytest.raises(ValueError, match="shape"):
        broadphase.pairs(lo=np.zeros((4, 2)), hi=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="shape"):
        broadphase.pairs(lo=np.zeros((4, 4)), hi=np.zeros((4, 4)))
    with pytest.raises(TypeError):
        broadphase.pairs(np.zeros((3, 4)), lo=np.zeros((3, 2)), hi=np.zeros((3, 2)))
    with pytest.raises(TypeError):
        broadphase.pairs()
    with pytest.raises(ValueError, match="dimension"):
        broadphase.pairs_between(np.zeros((3, 4)), np.zeros((3, 6)))
    with pytest.raises(ValueError, match="shape"):
        broadphase.circle_pairs(np.zeros((3, 4)), 1.0)
    with pytest.raises(ValueError, match="radii"):
        broadphase.circle_pairs(np.zeros((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="ragged|inhomogeneous|sequence"):
        broadphase.pairs([[0, 0, 1, 1], [0, 0, 1]])


def test_wrong_dtypes():
    for arr in [np.zeros((3, 4), dtype=complex), np.zeros((3, 4), dtype=bool), np.array([["a"] * 4] * 3),
                np.array([[object()] * 4] * 3), np.zeros((3, 4), dtype="datetime64[s]")]:
        with pytest.raises(TypeError, match="real numbers"):
            broadphase.pairs(arr)
    with pytest.raises(TypeError):
        broadphase.circle_pairs(np.zeros((3, 2)), np.array([1j, 1j, 1j]))
    with pytest.raises(TypeError):
        broadphase.pairs(np.zeros((3, 4)), method=3)


def test_huge_n_is_refused_without_copying():
    """More than 2^30 boxes: refused before any conversion (a zero-stride view of 2^30 + 1 rows
    would be 16 GiB as float32)."""
    view = np.broadcast_to(np.zeros(4, dtype=np.float64), (broadphase.MAX_BOXES + 1, 4))
    with pytest.raises(ValueError, match="too many boxes") as e:
        broadphase.pairs(view)
    assert e.value.status_name == "BP_ERR_TOO_MANY"
    with pytest.raises(ValueError, match="too many"):
        broadphase.circle_pairs(np.broadcast_to(np.zeros(2), (broadphase.MAX_BOXES + 1, 2)), 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown method 'fastest'"):
        broadphase.pairs(good(), method="fastest")
    with pytest.raises(ValueError, match="dim"):
        broadphase.Context(dim=4)
    with pytest.raises(ValueError, match="grid_layout"):
        broadphase.Context(grid_layout="hex")
    with pytest.raises(ValueError, match="invalid argument"):
        broadphase.Context(sweep_axis=5)
    with broadphase.Context(dim=3) as ctx:
        with pytest.raises(ValueError, match="2D boxes given to a 3D context"):
            ctx.pairs(good())
        with pytest.raises(broadphase.NoBoxesError, match="no boxes yet"):
            ctx.query_box([0, 0, 0], [1, 1, 1])
        ctx.pairs(good(dim=3))
        with pytest.raises(ValueError, match="3 coordinates"):
            ctx.query_point([0, 0])
        with pytest.raises(ValueError, match="negative radius"):
            ctx.query_sphere([0, 0, 0], -1.0)
        with pytest.raises(ValueError, match="NaN or infinite"):
            ctx.query_sphere([0, np.nan, 0], 1.0)
        with pytest.raises(ValueError, match="min > max"):
            ctx.query_box([1, 1, 1], [0, 0, 0])
    with pytest.raises(ValueError, match="closed"):
        ctx.pairs(good(dim=3))
    ctx.close()  # idempotent
    assert "closed" in repr(ctx)


@pytest.mark.skipif(os.environ.get("BP_SANITIZED") == "1", reason="an address-space limit and ASan's shadow memory do not mix")
def test_out_of_memory_is_memory_error():
    """In a child process with a 1 GiB address-space limit, a call whose pairs need ~800 MB fails
    with MemoryError (the library's BP_ERR_NOMEM), and the same context then works again."""
    code = textwrap.dedent("""
        import resource, numpy as np, broadphase
        boxes = np.tile(np.array([0, 0, 1, 1], dtype=np.float32), (14000, 1))  # 98M pairs
        ctx = broadphase.Context(method="sweep")
        ctx.pairs(boxes[:10])
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        try:
            ctx.pairs(boxes)
        except MemoryError as e:
            assert isinstance(e, broadphase.OutOfMemoryError) and e.status_name == "BP_ERR_NOMEM", e
            print("MemoryError:", e)
        else:
            raise SystemExit("no MemoryError")
        assert ctx.pairs(boxes[:100]).shape == (4950, 2)
        print("usable after")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "MemoryError: out of memory (BP_ERR_NOMEM)" in out.stdout and "usable after" in out.stdout
