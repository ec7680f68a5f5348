"""Context: one C context kept across calls (temporal coherence), and the one-call functions."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from . import _arrays
from ._arrays import IndexArray, PairArray
from ._circles import circle_boxes, exact_circle_filter
from ._errors import OK, check, make_error, raise_status
from ._ffi import STATUS, ffi, lib
from ._handle import _Handle

METHODS: Tuple[str, ...] = ("auto", "brute", "sweep", "grid", "quadtree", "rdc")
_GRID_LAYOUTS = {"auto": "BP_GRID_LAYOUT_AUTO", "sorted": "BP_GRID_LAYOUT_SORTED", "table": "BP_GRID_LAYOUT_TABLE"}
_LAYOUT_VALUES = dict(ffi.typeof("bp_grid_layout").relements)
_LOAD_ERRORS = (STATUS["BP_ERR_NONFINITE"], STATUS["BP_ERR_INVERTED_BOX"])


class Stats(NamedTuple):
    """Statistics of a context's last pair-finding call."""

    n: int  #: boxes in the call
    checks: int  #: candidate box-box tests performed
    pairs: int  #: pairs found
    method: str  #: the method that ran (what "auto" chose)
    bytes: int  #: memory the context holds now


def method_value(method: str) -> int:
    """The bp_method value of a method name ("auto", "brute", "sweep", "grid", "quadtree", "rdc")."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a name (one of {', '.join(METHODS)}), not {type(method).__name__}")
    out = ffi.new("bp_method *")
    if lib.bp_method_from_name(method.encode(), out) != OK:
        raise make_error(STATUS["BP_ERR_INVALID_ARG"], f"unknown method {method!r}; one of {', '.join(METHODS)}")
    return int(out[0])


def available_methods() -> Tuple[str, ...]:
    """The methods this library implements ("auto" and "brute" always are)."""
    return tuple(m for m in METHODS if lib.bp_method_available(method_value(m)))


def method_name(value: int) -> str:
    name = lib.bp_method_name(value)
    return ffi.string(name).decode() if name != ffi.NULL else str(value)


def _context_def(
    dim: int,
    method: str,
    sorted: bool,
    sweep_axis: int,
    coherence: bool,
    cell_size: float,
    grid_layout: str,
    quadtree_levels: int,
    loose: bool,
    world_bounds: Optional[Tuple[Sequence[float], Sequence[float]]],
    rdc_threshold: int,
    rdc_epsilon: float,
) -> Any:
    if dim not in (2, 3):
        raise make_error(STATUS["BP_ERR_INVALID_ARG"], f"dim must be 2 or 3, got {dim!r}")
    d = ffi.new("bp_context_def *", lib.bp_default_context_def())
    d.dimension = dim
    d.method = method_value(method)
    d.sort_pairs = bool(sorted)
    d.sweep.axis = int(sweep_axis)
    d.sweep.coherence = bool(coherence)
    d.grid.cell_size = float(cell_size)
    if grid_layout not in _GRID_LAYOUTS:
        raise make_error(STATUS["BP_ERR_INVALID_ARG"], f"grid_layout must be one of {', '.join(_GRID_LAYOUTS)}")
    d.grid.layout = _LAYOUT_VALUES[_GRID_LAYOUTS[grid_layout]]
    d.quadtree.levels = int(quadtree_levels)
    d.quadtree.loose = bool(loose)
    if world_bounds is not None:
        lo = _arrays.vector(world_bounds[0], dim, "world_bounds[0]")
        hi = _arrays.vector(world_bounds[1], dim, "world_bounds[1]")
        d.quadtree.fixed_world = True
        for a in range(dim):
            d.quadtree.world_min[a] = float(lo[a])
            d.quadtree.world_max[a] = float(hi[a])
    d.rdc.threshold = int(rdc_threshold)
    d.rdc.epsilon = float(rdc_epsilon)
    return d


class Context(_Handle):
    """A broad-phase context kept across calls, for frame-after-frame use.

    Keeping one context per simulation lets the methods reuse last frame's order (temporal
    coherence) and their memory: a warm context allocates nothing. Pass the same objects in the
    same order each frame (row k is object k). A context is safe to share between threads (calls
    are serialised by a lock); two contexts run in parallel, since the library releases the GIL
    during its work.

    Args:
        dim: 2 or 3.
        method: "auto" (choose per call), "brute", "sweep", "grid", "quadtree" or "rdc".
        sorted: return pairs sorted by (i, j) (else in the method's order).
        sweep_axis, coherence, cell_size, grid_layout, quadtree_levels, loose, world_bounds,
        rdc_threshold, rdc_epsilon: the tuning fields of ``bp_context_def``
        (include/broadphase.h); their defaults choose automatically.

    Example:
        >>> import numpy as np, broadphase
        >>> boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]], dtype=np.float32)
        >>> with broadphase.Context(dim=2, sorted=True) as ctx:
        ...     for frame in range(3):
        ...         boxes[:, [0, 2]] += 1.0          # everything moves right
        ...         p = ctx.pairs(boxes)
        ...     print(p.tolist(), ctx.query_point([8.5, 5.5]).tolist(), ctx.stats.pairs)
        [[0, 1]] [2] 1
    """

    _noun = "context"

    def __init__(
        self,
        dim: int = 2,
        method: str = "auto",
        sorted: bool = False,
        *,
        sweep_axis: int = -1,
        coherence: bool = True,
        cell_size: float = 0.0,
        grid_layout: str = "auto",
        quadtree_levels: int = 0,
        loose: bool = False,
        world_bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
        rdc_threshold: int = 0,
        rdc_epsilon: float = 0.0,
    ) -> None:
        self._ptr: Any = None
        d = _context_def(dim, method, sorted, sweep_axis, coherence, cell_size, grid_layout,
                         quadtree_levels, loose, world_bounds, rdc_threshold, rdc_epsilon)
        out = ffi.new("bp_context **")
        check(lib.bp_context_create(d, out), "creating a context")
        self._ptr = ffi.gc(out[0], lib.bp_context_destroy)
        # Reentrant: circle_pairs holds it over its numpy work (the scratch buffers) and the call.
        self._lock = threading.RLock()
        self._scratch: Dict[str, np.ndarray] = {}
        self.dim: int = dim
        self.method: str = method
        self.sorted: bool = bool(sorted)

    # -- life cycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the C context now (also done when the object is collected). Idempotent."""
        self._release()

    def _released(self) -> None:
        self._scratch.clear()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<broadphase.Context dim={self.dim} method={self.method!r} sorted={self.sorted} {state}>"

    # -- pairs --------------------------------------------------------------------------------

    def pairs(self, boxes: Optional[npt.ArrayLike] = None, *, lo: Optional[npt.ArrayLike] = None,
              hi: Optional[npt.ArrayLike] = None) -> PairArray:
        """Every overlapping pair among this frame's boxes: an (m, 2) uint32 array, i < j.

        Args:
            boxes: (n, 4) in 2D or (n, 6) in 3D, min corner then max corner (or (n, 2, d)); any
                real dtype and memory order (converted to float32 C order once; not copied when
                it already is).
            lo, hi: instead of `boxes`, the min and max corners as two (n, d) arrays.

        Raises:
            ValueError: a NaN, infinite or out-of-float32-range coordinate, or min > max (the
                message names the first bad row), a wrong shape, dimension or count.
            TypeError: a dtype that is not a real number type.
            MemoryError: out of memory (the context stays usable).
        """
        b = _arrays.boxes(boxes, lo, hi)
        return self._find(b)

    def _find(self, b: _arrays.Boxes) -> PairArray:
        out = ffi.new("bp_pairs *")
        ptr = b.pointer()
        with self._lock:
            ctx = self._live()
            if b.dim == 2:
                st = lib.bp_find_pairs2(ctx, ptr, b.n, out)
            else:
                st = lib.bp_find_pairs3(ctx, ptr, b.n, out)
            if st == OK:
                return _arrays.pairs_from(out.pairs, out.count)
        raise self._load_error(st, b)

    def _load_error(self, st: int, *sets: _arrays.Boxes) -> Exception:
        if st in _LOAD_ERRORS:
            for b in sets:
                err = b.error(st)
                if err.row is not None:
                    return err
        if st == STATUS["BP_ERR_DIMENSION"]:
            return make_error(st, f"{sets[0].dim}D boxes given to a {self.dim}D context")
        return make_error(st)

    def pairs_between(self, a: npt.ArrayLike, b: npt.ArrayLike) -> PairArray:
        """Every pair (i, j) where box a[i] overlaps box b[j]; pairs within a or within b are not
        reported. a and b are box arrays as in :meth:`pairs`, of the same dimension.

        Afterwards the queries run against a followed by b (b's row j is index len(a) + j).
        """
        return self._between(_arrays.boxes(a, name="a"), _arrays.boxes(b, name="b"))

    def _between(self, ba: _arrays.Boxes, bb: _arrays.Boxes) -> PairArray:
        if ba.dim != bb.dim:
            raise make_error(STATUS["BP_ERR_DIMENSION"], f"a is {ba.dim}D and b is {bb.dim}D")
        out = ffi.new("bp_pairs *")
        pa, pb = ba.pointer(), bb.pointer()
        with self._lock:
            ctx = self._live()
            fn = lib.bp_find_pairs_between2 if ba.dim == 2 else lib.bp_find_pairs_between3
            st = fn(ctx, pa, ba.n, pb, bb.n, out)
            if st == OK:
                return _arrays.pairs_from(out.pairs, out.count)
        raise self._load_error(st, ba, bb)

    def circle_pairs(self, centres: npt.ArrayLike, radii: npt.ArrayLike) -> PairArray:
        """Every pair of circles (2D) or spheres (3D) that touch or overlap: |ci - cj| <= ri + rj,
        decided exactly for the given values. An (m, 2) uint32 array, i < j.

        Args:
            centres: (n, 2) or (n, 3), any real dtype (float64 is kept for the exact test).
            radii: (n,) or one number for all.
        """
        with self._lock:
            c, r, b = circle_boxes(centres, radii, self._scratch)
            try:
                candidates = self._find(b)
            except ValueError as e:
                raise _circle_error(c, r, e) from None
        return exact_circle_filter(candidates, c, r)

    # -- queries ------------------------------------------------------------------------------

    def query_box(self, lo: npt.ArrayLike, hi: npt.ArrayLike) -> IndexArray:
        """Indices (ascending, uint32) of the boxes of the last pairs call that overlap [lo, hi]."""
        lo_v = _arrays.vector(lo, self.dim, "lo")
        hi_v = _arrays.vector(hi, self.dim, "hi")
        out = ffi.new("bp_indices *")
        with self._lock:
            st = lib.bp_query_box(self._live(), ffi.from_buffer("float[]", lo_v), ffi.from_buffer("float[]", hi_v), out)
            if st == OK:
                return _arrays.indices_from(out.indices, out.count)
        raise_status(st, f"query box lo={lo_v.tolist()} hi={hi_v.tolist()}")

    def query_sphere(self, center: npt.ArrayLike, radius: float) -> IndexArray:
        """Indices of the boxes within `radius` of `center` (exact box-to-point distance; a circle
        in 2D, a sphere in 3D; distance == radius counts)."""
        c = _arrays.vector(center, self.dim, "center")
        out = ffi.new("bp_indices *")
        with self._lock:
            st = lib.bp_query_sphere(self._live(), ffi.from_buffer("float[]", c), float(radius), out)
            if st == OK:
                return _arrays.indices_from(out.indices, out.count)
        raise_status(st, f"query sphere center={c.tolist()} radius={radius!r}")

    def query_point(self, point: npt.ArrayLike) -> IndexArray:
        """Indices of the boxes that contain `point` (boundary included)."""
        p = _arrays.vector(point, self.dim, "point")
        out = ffi.new("bp_indices *")
        with self._lock:
            st = lib.bp_query_point(self._live(), ffi.from_buffer("float[]", p), out)
            if st == OK:
                return _arrays.indices_from(out.indices, out.count)
        raise_status(st, f"query point {p.tolist()}")

    @property
    def stats(self) -> Stats:
        """Statistics of the last pair-finding call."""
        s = ffi.new("bp_stats *")
        with self._lock:
            check(lib.bp_get_stats(self._live(), s))
        return Stats(int(s.n), int(s.checks), int(s.pairs), method_name(s.method), int(s.bytes))


def _circle_error(c: np.ndarray, r: np.ndarray, err: ValueError) -> Exception:
    """A failed load of circle boxes, told in terms of the circles: the first bad row."""
    from ._circles import first_bad_circle

    found = first_bad_circle(c, r)
    return found if found is not None else err


# ---- one call: a context per thread, kept between calls --------------------------------------

# The one-call functions keep their context between calls, one per thread and per (dim, method,
# sorted), so that a loop of calls runs warm (no allocation, no first touch of fresh pages: at a
# million boxes a fresh context costs about as much again as the work itself). A context holding
# more than this after a call is freed instead of kept.
CACHE_LIMIT = 256 << 20
_cache = threading.local()


@contextmanager
def _one_call(dim: int, method: str, sorted: bool) -> Iterator[Context]:
    contexts: Dict[Tuple[int, str, bool], Context] = _cache.__dict__.setdefault("contexts", {})
    key = (dim, method, bool(sorted))
    ctx = contexts.pop(key, None)  # taken out while in use: a nested call makes its own
    if ctx is None:
        ctx = Context(dim, method, sorted)
    try:
        yield ctx
    finally:
        if ctx.stats.bytes <= CACHE_LIMIT and key not in contexts:
            contexts[key] = ctx
        else:
            ctx.close()


def clear_cache() -> None:
    """Frees the contexts the one-call functions (:func:`pairs`, :func:`circle_pairs`, ...) keep
    between calls in the calling thread (each thread's are also freed when the thread ends)."""
    contexts = _cache.__dict__.get("contexts", {})
    while contexts:
        contexts.popitem()[1].close()



def pairs(boxes: Optional[npt.ArrayLike] = None, method: str = "auto", sorted: bool = False, *,
          lo: Optional[npt.ArrayLike] = None, hi: Optional[npt.ArrayLike] = None) -> PairArray:
    """Every overlapping pair of boxes: an (m, 2) uint32 array of row indices, i < j.

    Boxes are closed: touching counts. Coordinates are used as float32 (the library's type),
    rounded to nearest: a pair that overlaps in the caller's values is always found.

    The context behind the call is kept for the next call in the same thread (up to
    CACHE_LIMIT bytes; :func:`clear_cache` frees it), so a loop of calls runs warm.

    Args:
        boxes: (n, 4) [minx, miny, maxx, maxy] or (n, 6) [minx, miny, minz, maxx, maxy, maxz]
            (or (n, 2, d)); any real dtype and memory order, converted once (no copy when
            already float32 and C-contiguous).
        method: "auto" (default: chosen per call from n and the sizes), "brute", "sweep",
            "grid", "quadtree" or "rdc". Every method gives the same pairs.
        sorted: sort the pairs by (i, j) (default: the method's order).
        lo, hi: instead of `boxes`, the min and max corners as two (n, d) arrays.

    Raises:
        ValueError: NaN / infinite / beyond-float32 coordinates or min > max (naming the first
            bad row), a wrong shape, more than 2^30 boxes.
        TypeError: a dtype that is not a real number type.
        MemoryError: out of memory.

    Example:
        >>> import numpy as np, broadphase
        >>> boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [2, 2, 4, 4], [9, 9, 10, 10]])
        >>> broadphase.pairs(boxes, sorted=True).tolist()
        [[0, 1], [0, 2], [1, 2]]
    """
    b = _arrays.boxes(boxes, lo, hi)
    with _one_call(b.dim, method, sorted) as ctx:
        return ctx._find(b)


def pairs_between(a: npt.ArrayLike, b: npt.ArrayLike, method: str = "auto", sorted: bool = False) -> PairArray:
    """Every pair (i, j) where a[i] overlaps b[j] (bullets against ships, a join of two layers);
    pairs within a or within b are not reported. a and b: box arrays as in :func:`pairs`.

    Example:
        >>> import numpy as np, broadphase
        >>> bullets = np.array([[0, 0, 1, 1], [5, 5, 6, 6]])
        >>> ships = np.array([[0.5, 0.5, 3, 3], [4, 4, 5, 5], [0, 0, 9, 0.2]])
        >>> broadphase.pairs_between(bullets, ships, sorted=True).tolist()
        [[0, 0], [0, 2], [1, 1]]
    """
    ba = _arrays.boxes(a, name="a")
    bb = _arrays.boxes(b, name="b")
    with _one_call(ba.dim, method, sorted) as ctx:
        return ctx._between(ba, bb)


def circle_pairs(centres: npt.ArrayLike, radii: npt.ArrayLike, method: str = "auto", sorted: bool = False) -> PairArray:
    """Every pair of circles (2D) or spheres (3D) that touch or overlap, |ci - cj| <= ri + rj,
    decided exactly for the given values (float64 stays float64 for the test): an (m, 2) uint32
    array, i < j.

    The library finds the pairs of the circles' boxes (rounded outward to float32, so none is
    missed); numpy then keeps the pairs whose circles meet, in double precision with an error
    bound, and exactly (rational arithmetic) in the rare cases the bound cannot settle.

    Args:
        centres: (n, 2) or (n, 3).
        radii: (n,) non-negative, or one number for all.
        method, sorted: as for :func:`pairs`.

    Example:
        >>> import numpy as np, broadphase
        >>> centres = np.array([[0.0, 0.0], [2.0, 0.0], [1.5, 1.5]])
        >>> broadphase.circle_pairs(centres, 1.0, sorted=True).tolist()   # 0-2: 2.12 > 2
        [[0, 1], [1, 2]]
    """
    shape = np.shape(centres)
    dim = shape[1] if len(shape) == 2 and shape[1] in (2, 3) else 2  # a bad shape: circle_boxes says so
    with _one_call(dim, method, sorted) as ctx:
        return ctx.circle_pairs(centres, radii)


def query_box(boxes: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike, method: str = "auto") -> IndexArray:
    """Indices (ascending) of the boxes that overlap the box [lo, hi].

    One call builds the method's structure and answers one query; for many queries against the
    same boxes use a :class:`Context` (``ctx.pairs(boxes)`` then ``ctx.query_box`` per query), or
    :func:`pairs_between` for a whole set of query boxes at once.

    Example:
        >>> import numpy as np, broadphase
        >>> boxes = np.array([[0, 0, 1, 1], [2, 2, 3, 3], [4, 0, 5, 1]])
        >>> broadphase.query_box(boxes, [0.5, 0.5], [2, 2]).tolist()
        [0, 1]
    """
    b = _arrays.boxes(boxes)
    with _one_call(b.dim, method, False) as ctx:
        ctx._find(b)
        return ctx.query_box(lo, hi)


def query_sphere(boxes: npt.ArrayLike, center: npt.ArrayLike, radius: float, method: str = "auto") -> IndexArray:
    """Indices of the boxes within `radius` of `center` (exact box-to-point distance).

    Example:
        >>> import numpy as np, broadphase
        >>> boxes = np.array([[0, 0, 1, 1], [2, 2, 3, 3], [4, 0, 5, 1]])
        >>> broadphase.query_sphere(boxes, [2.0, 0.5], 1.0).tolist()   # box 1 is 1.5 away
        [0]
    """
    b = _arrays.boxes(boxes)
    with _one_call(b.dim, method, False) as ctx:
        ctx._find(b)
        return ctx.query_sphere(center, radius)


def query_point(boxes: npt.ArrayLike, point: npt.ArrayLike, method: str = "auto") -> IndexArray:
    """Indices of the boxes that contain `point` (boundary included).

    Example:
        >>> import numpy as np, broadphase
        >>> boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [4, 0, 5, 1]])
        >>> broadphase.query_point(boxes, [1.5, 1.0]).tolist()
        [0, 1]
    """
    b = _arrays.boxes(boxes)
    with _one_call(b.dim, method, False) as ctx:
        ctx._find(b)
        return ctx.query_point(point)
