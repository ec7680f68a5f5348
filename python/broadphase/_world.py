"""World: the persistent world of include/broadphase.h (bp_world_*): proxies with integer ids (the
C library's bp_proxy_id.v; 0 is its null id), batch add / move / remove from arrays, begin and
end events as arrays."""

from __future__ import annotations

import threading
from typing import Any, NamedTuple, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _arrays
from ._context import method_value
from ._errors import OK, check, make_error
from ._ffi import STATUS, ffi, has_symbol, lib
from ._handle import _Handle

IdArray = npt.NDArray[np.uint64]
ALL = (1 << 64) - 1  #: the mask that pairs with every category

_MODES = {"auto": "BP_WORLD_MODE_AUTO", "incremental": "BP_WORLD_MODE_INCREMENTAL", "rebuild": "BP_WORLD_MODE_REBUILD"}
_KINDS = {"moving": 0, "static": 1}
_LOAD_ERRORS = (STATUS["BP_ERR_NONFINITE"], STATUS["BP_ERR_INVERTED_BOX"])
_STALE = STATUS["BP_ERR_STALE"]
_NULL_ID = STATUS["BP_ERR_NULL_PROXY"]
_SIZE_MAX = (1 << (8 * ffi.sizeof("size_t"))) - 1


def available() -> bool:
    """Whether the loaded library has the persistent world (bp_world_create)."""
    return has_symbol("bp_world_create")


class Events(NamedTuple):
    """What an update found. ``begins`` / ``ends``: (m, 2) uint64 proxy ids (a < b), sorted;
    ``begins_user`` / ``ends_user``: the two proxies' user values, row for row."""

    begins: IdArray
    ends: IdArray
    begins_user: IdArray
    ends_user: IdArray


class Pairs(NamedTuple):
    """Every pair as of the last update: ``ids`` (m, 2) sorted, ``users`` row for row."""

    ids: IdArray
    users: IdArray


class Hits(NamedTuple):
    """A query's answer: proxy ids ascending and their user values."""

    ids: IdArray
    users: IdArray


class ProxyInfo(NamedTuple):
    lo: npt.NDArray[np.float32]
    hi: npt.NDArray[np.float32]
    kind: str
    category: int
    mask: int
    user: int


class WorldStats(NamedTuple):
    proxies: int  #: live proxies
    pairs: int  #: pairs as of the last update
    changed: int  #: proxies the last update looked at
    begins: int
    ends: int
    checks: int  #: candidate box tests of the last update
    rebuilt: bool  #: the last update rebuilt (rather than patched)
    bytes: int  #: memory the world holds
    near_hits: int = 0  #: changed proxies the last update decided from their near lists


def _def_dtype() -> np.dtype:
    """bp_proxy_def as a numpy structured dtype, offsets taken from cffi (the C layout)."""
    fields = ["kind", "internal_value", "category", "mask", "user"]
    kind_size = ffi.sizeof("bp_proxy_kind")
    return np.dtype({
        "names": fields,
        "formats": [f"<i{kind_size}" if np.little_endian else f">i{kind_size}", np.uint32, np.uint64, np.uint64,
                    np.uint64],
        "offsets": [ffi.offsetof("bp_proxy_def", f) for f in fields],
        "itemsize": ffi.sizeof("bp_proxy_def"),
    })


_DEF_DTYPE = _def_dtype()
# bp_default_proxy_def() as one row: every row of a defs array starts from it (the library
# rejects a def not made by its default function, BP_ERR_DEF_NOT_INITIALISED).
_DEFAULT_DEF = np.frombuffer(ffi.buffer(ffi.new("bp_proxy_def *", lib.bp_default_proxy_def())), dtype=_DEF_DTYPE).copy()


def _u64(x: Any, n: int, name: str) -> np.ndarray:
    """A uint64 scalar or (n,) array from Python ints or an integer array; ValueError for values
    outside 0 .. 2^64 - 1."""
    if isinstance(x, (int, np.integer)):
        v = int(x)
        if not 0 <= v <= ALL:
            raise ValueError(f"{name} must be in 0 .. 2^64 - 1, got {v}")
        return np.full(n, v, dtype=np.uint64)
    a = np.asarray(x)
    if a.dtype == object:
        vals = [int(v) for v in a.reshape(-1)]
        if any(not 0 <= v <= ALL for v in vals):
            raise ValueError(f"{name} must be in 0 .. 2^64 - 1")
        a = np.array(vals, dtype=np.uint64).reshape(a.shape)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, not {a.dtype}")
    if a.shape != (n,):
        raise ValueError(f"{name} must be one integer or have shape ({n},); got {a.shape}")
    if a.dtype.kind == "i" and (a < 0).any():
        k = int(np.argmax(a < 0))
        raise ValueError(f"{name} row {k} is negative ({int(a[k])})")
    return a.astype(np.uint64)


def _kinds(kind: Any, n: int) -> np.ndarray:
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"kind must be 'moving' or 'static', got {kind!r}")
        return np.full(n, _KINDS[kind], dtype=np.int64)
    a = np.asarray(kind)
    if a.shape != (n,):
        raise ValueError(f"kind must be 'moving', 'static' or have shape ({n},); got {a.shape}")
    if a.dtype.kind in "US":
        bad = ~np.isin(a, list(_KINDS))
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"kind row {k} is {a[k]!r}, not 'moving' or 'static'")
        return np.where(a == "static", 1, 0)
    if a.dtype.kind == "b":
        return a.astype(np.int64)  # True: static
    if a.dtype.kind in "iu":
        return a.astype(np.int64)  # 0 moving, 1 static; others rejected by the library
    raise TypeError(f"kind must be strings, booleans or integers, not {a.dtype}")


def _ids(ids: Any, name: str = "ids") -> np.ndarray:
    a = _u64(ids, 1, name) if isinstance(ids, (int, np.integer)) else None
    if a is not None:
        return a
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one id or a 1-D array of ids; got shape {arr.shape}")
    return np.ascontiguousarray(_u64(arr, arr.shape[0], name))


class World(_Handle):
    """A persistent world: proxies (boxes with a kind, a category/mask filter and a user value)
    named by integer ids, changed in batches; each :meth:`update` tests only what changed and
    returns the pairs that began and ended.

    A pair (a, b) is reported when the boxes overlap (closed), (a.category & b.mask) and
    (b.category & a.mask) are both non-zero, and a and b are not both static.

    Args:
        dim: 2 or 3.
        mode: "auto" (default), "incremental" or "rebuild" (include/broadphase.h, bp_world_mode).
        cell_size: edge of the finest persistent cells; 0 chooses from the proxies' sizes.
        method: the stateless method rebuild updates use ("auto" by default).

    Example:
        >>> import numpy as np, broadphase
        >>> with broadphase.World(dim=2) as world:
        ...     ids = world.add(np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]]), user=[10, 11, 12])
        ...     ev = world.update()
        ...     print(len(ev.begins), ev.begins_user.tolist())
        ...     world.move(ids[2], [2.5, 2.5, 4, 4])               # now touches box 1
        ...     world.remove(ids[0])
        ...     ev = world.update()
        ...     print(ev.begins_user.tolist(), ev.ends_user.tolist())
        1 [[10, 11]]
        [[11, 12]] [[10, 11]]
    """

    _noun = "world"

    def __init__(self, dim: int = 2, *, mode: str = "auto", cell_size: float = 0.0, method: str = "auto") -> None:
        self._ptr: Any = None
        if not available():
            raise make_error(STATUS["BP_ERR_UNSUPPORTED"], "this library has no persistent world (bp_world_create)")
        if dim not in (2, 3):
            raise make_error(STATUS["BP_ERR_INVALID_ARG"], f"dim must be 2 or 3, got {dim!r}")
        if mode not in _MODES:
            raise make_error(STATUS["BP_ERR_INVALID_ARG"], f"mode must be one of {', '.join(_MODES)}")
        d = ffi.new("bp_world_def *", lib.bp_default_world_def())
        d.dimension = dim
        d.mode = dict(ffi.typeof("bp_world_mode").relements)[_MODES[mode]]
        d.cell_size = float(cell_size)
        d.method = method_value(method)
        out = ffi.new("bp_world **")
        check(lib.bp_world_create(d, out), "creating a world")
        self._ptr = ffi.gc(out[0], lib.bp_world_destroy)
        self._lock = threading.Lock()
        self.dim: int = dim

    # -- life cycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the world now (also done when the object is collected). Idempotent."""
        self._release()

    def __repr__(self) -> str:
        return f"<broadphase.World dim={self.dim} {'closed' if self.closed else 'open'}>"

    def _bad_index(self) -> Optional[int]:
        idx = ffi.new("size_t *")
        if lib.bp_world_bad_index(self._ptr, idx) != OK or idx[0] == _SIZE_MAX:
            return None
        return int(idx[0])

    def _boxes(self, boxes: Any, lo: Any, hi: Any) -> "tuple[_arrays.Boxes, bool]":
        """Box rows for the world; a single box (2 * dim,) is one row (second value True)."""
        single = boxes is not None and np.ndim(boxes) == 1
        b = _arrays.boxes(np.reshape(boxes, (1, -1)) if single else boxes, lo, hi)
        if b.dim != self.dim:
            raise make_error(STATUS["BP_ERR_DIMENSION"], f"{b.dim}D boxes given to a {self.dim}D world")
        return b, single

    def _batch_error(self, st: int, b: Optional[_arrays.Boxes], what: str, ids: Optional[np.ndarray] = None) -> Exception:
        k = self._bad_index()
        if k is not None and st in _LOAD_ERRORS and b is not None:
            err = b.error(st)
            if err.row is not None:
                return err
        if k is not None and ids is not None and st in (_STALE, _NULL_ID):
            return make_error(st, f"{what}: ids row {k} (id {int(ids[k])}) {_id_problem(st)}", row=k)
        if k is not None:
            return make_error(st, f"{what}: row {k}", row=k)
        return make_error(st, what)

    # -- changes ------------------------------------------------------------------------------

    def add(self, boxes: Optional[npt.ArrayLike] = None, *, lo: Optional[npt.ArrayLike] = None,
            hi: Optional[npt.ArrayLike] = None, kind: Any = "moving", category: Any = 1, mask: Any = ALL,
            user: Any = 0) -> Union[IdArray, int]:
        """Adds proxies, all or nothing; their pairs begin at the next update.

        Args:
            boxes: (n, 2 * dim) rows (min corner, max corner), or one box (2 * dim,); or `lo`/`hi`.
            kind: "moving" or "static" (static proxies never pair with each other), for all or
                per row (strings, booleans True = static, or 0 / 1).
            category, mask: the filter (uint64), for all or per row.
            user: your value per proxy (uint64), returned with pairs, events and hits.

        Returns:
            The ids, (n,) uint64 (an int for a single box).
        """
        b, single = self._boxes(boxes, lo, hi)
        n = b.n
        kinds = _kinds(kind, n)
        default = isinstance(kind, str) and kind == "moving" and isinstance(category, int) and category == 1 \
            and isinstance(mask, int) and mask == ALL and isinstance(user, int) and user == 0
        defs_arr = None
        if not default:
            defs_arr = np.repeat(_DEFAULT_DEF, n)
            defs_arr["kind"] = kinds
            defs_arr["category"] = _u64(category, n, "category")
            defs_arr["mask"] = _u64(mask, n, "mask")
            defs_arr["user"] = _u64(user, n, "user")
        ids = np.zeros(n, dtype=np.uint64)
        ptr = b.pointer()
        defs = ffi.NULL if defs_arr is None else ffi.cast("const bp_proxy_def *", ffi.from_buffer(defs_arr))
        out = ffi.cast("bp_proxy_id *", ffi.from_buffer(ids, require_writable=True))
        with self._lock:
            fn = lib.bp_world_add_batch2 if self.dim == 2 else lib.bp_world_add_batch3
            st = fn(self._live(), ptr, defs, n, out)
            if st != OK:
                err = self._batch_error(st, b, "add")
                if st == STATUS["BP_ERR_INVALID_ARG"] and err.row is not None:
                    err = make_error(st, f"add: kind row {err.row} is {int(kinds[err.row])}, not 0 (moving) or 1 (static)",
                                     row=err.row)
                raise err
        return int(ids[0]) if single else ids

    def move(self, ids: Any, boxes: Optional[npt.ArrayLike] = None, *, lo: Optional[npt.ArrayLike] = None,
             hi: Optional[npt.ArrayLike] = None) -> None:
        """Gives proxies new boxes, all or nothing (an id given twice takes its last box). Queries
        see the new boxes at once; pairs change at the next update."""
        idv = _ids(ids)
        b, _ = self._boxes(boxes, lo, hi)
        if b.n != len(idv):
            raise ValueError(f"{len(idv)} ids and {b.n} boxes")
        pid = ffi.cast("const bp_proxy_id *", ffi.from_buffer(idv))
        ptr = b.pointer()
        with self._lock:
            fn = lib.bp_world_move_batch2 if self.dim == 2 else lib.bp_world_move_batch3
            st = fn(self._live(), pid, ptr, b.n)
            if st != OK:
                raise self._batch_error(st, b, "move", idv)

    def remove(self, ids: Any) -> None:
        """Removes proxies, all or nothing (a stale id, or one given twice, fails the batch). Their
        ids go stale at once; their pairs are reported as ended by the next update."""
        idv = _ids(ids)
        pid = ffi.cast("const bp_proxy_id *", ffi.from_buffer(idv))
        with self._lock:
            st = lib.bp_world_remove_batch(self._live(), pid, len(idv))
            if st != OK:
                raise self._batch_error(st, None, "remove", idv)

    def _each(self, ids: Any, call: Any, what: str) -> None:
        idv = _ids(ids)
        with self._lock:
            w = self._live()
            for k, i in enumerate(idv.tolist()):
                st = call(w, k, i)
                if st != OK:
                    detail = f"{what}: ids row {k} (id {i})" + (f" {_id_problem(st)}" if st in (_STALE, _NULL_ID) else "")
                    raise make_error(st, detail + (f"; rows before {k} were changed" if k else ""), row=k)

    def set_kind(self, ids: Any, kind: Any) -> None:
        """Makes proxies "moving" or "static" (one value, or one per id). One library call per id
        (the library has no batch form): on an error, the ids before the bad one are changed."""
        idv = _ids(ids)
        kinds = _kinds(kind, len(idv))
        self._each(idv, lambda w, k, i: lib.bp_world_set_kind(w, [i], int(kinds[k])), "set_kind")

    def set_filter(self, ids: Any, category: Any, mask: Any) -> None:
        """Changes proxies' category and mask (one value each, or one per id); pairs are
        re-evaluated at the next update. One library call per id, as :meth:`set_kind`."""
        idv = _ids(ids)
        cat = _u64(category, len(idv), "category")
        msk = _u64(mask, len(idv), "mask")
        self._each(idv, lambda w, k, i: lib.bp_world_set_filter(w, [i], int(cat[k]), int(msk[k])), "set_filter")

    def set_user(self, ids: Any, user: Any) -> None:
        """Changes proxies' user values (pairs already reported keep the old one)."""
        idv = _ids(ids)
        usr = _u64(user, len(idv), "user")
        self._each(idv, lambda w, k, i: lib.bp_world_set_user(w, [i], int(usr[k])), "set_user")

    # -- answers ------------------------------------------------------------------------------

    def update(self) -> Events:
        """Finds this frame's pairs from what changed and returns the begin and end events. On
        MemoryError the world stays as it was and keeps the changes for the next update."""
        ev = ffi.new("bp_world_events *")
        with self._lock:
            check(lib.bp_world_update(self._live(), ev), "update")
            b = _world_pairs(ev.begins)
            e = _world_pairs(ev.ends)
        c = np.ascontiguousarray
        return Events(c(b[:, :2]), c(e[:, :2]), c(b[:, 2:]), c(e[:, 2:]))

    def pairs(self) -> Pairs:
        """Every pair as of the last update, sorted by (a, b), with the user values."""
        out = ffi.new("bp_world_pairs *")
        with self._lock:
            check(lib.bp_world_get_pairs(self._live(), out), "pairs")
            p = _world_pairs(out[0])
        return Pairs(np.ascontiguousarray(p[:, :2]), np.ascontiguousarray(p[:, 2:]))

    def get(self, id: int) -> ProxyInfo:
        """One proxy as it is now. Raises StaleIdError (a ValueError) for a removed or unknown id."""
        info = ffi.new("bp_proxy_info *")
        i = int(_ids(id)[0])
        with self._lock:
            st = lib.bp_world_get_proxy(self._live(), [i], info)  # a bp_proxy_id: {v}
        if st != OK:
            raise make_error(st, f"id {i}")
        d = self.dim
        kinds = {v: k for k, v in _KINDS.items()}
        return ProxyInfo(np.array(list(info.min)[:d], dtype=np.float32), np.array(list(info.max)[:d], dtype=np.float32),
                         kinds.get(int(info.kind), str(int(info.kind))), int(info.category), int(info.mask), int(info.user))

    def query_box(self, lo: npt.ArrayLike, hi: npt.ArrayLike, mask: int = ALL) -> Hits:
        """Proxies whose box overlaps [lo, hi] and whose category meets `mask` (current boxes,
        moves since the last update included)."""
        lo_v = _arrays.vector(lo, self.dim, "lo")
        hi_v = _arrays.vector(hi, self.dim, "hi")
        return self._query(lambda w, out: lib.bp_world_query_box(
            w, ffi.from_buffer("float[]", lo_v), ffi.from_buffer("float[]", hi_v), int(_u64(mask, 1, "mask")[0]), out),
            f"query box lo={lo_v.tolist()} hi={hi_v.tolist()}")

    def query_sphere(self, center: npt.ArrayLike, radius: float, mask: int = ALL) -> Hits:
        """Proxies within `radius` of `center` (exact box-to-point distance)."""
        c = _arrays.vector(center, self.dim, "center")
        return self._query(lambda w, out: lib.bp_world_query_sphere(
            w, ffi.from_buffer("float[]", c), float(radius), int(_u64(mask, 1, "mask")[0]), out),
            f"query sphere center={c.tolist()} radius={radius!r}")

    def query_point(self, point: npt.ArrayLike, mask: int = ALL) -> Hits:
        """Proxies whose box contains `point`."""
        p = _arrays.vector(point, self.dim, "point")
        return self._query(lambda w, out: lib.bp_world_query_point(
            w, ffi.from_buffer("float[]", p), int(_u64(mask, 1, "mask")[0]), out), f"query point {p.tolist()}")

    def _query(self, call: Any, what: str) -> Hits:
        out = ffi.new("bp_world_hits *")
        with self._lock:
            st = call(self._live(), out)
            if st == OK:
                return Hits(_u64_copy(out.ids, out.count), _u64_copy(out.users, out.count))
        raise make_error(st, what)

    @property
    def stats(self) -> WorldStats:
        s = ffi.new("bp_world_stats *")
        with self._lock:
            check(lib.bp_world_get_stats(self._live(), s))
        return WorldStats(int(s.proxies), int(s.pairs), int(s.changed), int(s.begins), int(s.ends), int(s.checks),
                          bool(s.rebuilt), int(s.bytes), int(s.near_hits))

    def validate(self) -> None:
        """Checks the world's invariants (for tests; O(n)); raises BroadphaseError when broken."""
        with self._lock:
            check(lib.bp_world_validate(self._live()), "world invariants")


def _id_problem(st: int) -> str:
    return "is 0, the null id" if st == _NULL_ID else "is removed, unknown or another world's"


def _u64_copy(ptr: Any, count: int) -> IdArray:
    if count == 0:
        return np.empty(0, dtype=np.uint64)
    return np.frombuffer(ffi.buffer(ptr, count * 8), dtype=np.uint64).copy()


def _world_pairs(p: Any) -> IdArray:
    """bp_world_pairs as an (m, 4) uint64 array: a, b, user_a, user_b."""
    size = ffi.sizeof("bp_world_pair")
    assert size == 32
    if p.count == 0:
        return np.empty((0, 4), dtype=np.uint64)
    return np.frombuffer(ffi.buffer(p.pairs, p.count * size), dtype=np.uint64).reshape(p.count, 4).copy()
