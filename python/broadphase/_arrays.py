"""Converting numpy input once, reading the library's output buffers, naming the first bad row."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

from ._errors import InvalidInputError, make_error
from ._ffi import MAX_BOXES, STATUS, ffi

NONFINITE = STATUS["BP_ERR_NONFINITE"]
INVERTED = STATUS["BP_ERR_INVERTED_BOX"]
NEGATIVE_RADIUS = STATUS["BP_ERR_NEGATIVE_RADIUS"]
TOO_MANY = STATUS["BP_ERR_TOO_MANY"]
DIMENSION = STATUS["BP_ERR_DIMENSION"]
INVALID_ARG = STATUS["BP_ERR_INVALID_ARG"]

PairArray = npt.NDArray[np.uint32]
IndexArray = npt.NDArray[np.uint32]
BoxArray = npt.NDArray[np.float32]

_EMPTY_PAIRS_SHAPE = (0, 2)


def real_array(x: Any, name: str) -> np.ndarray:
    """`x` as an ndarray of a real number dtype (floats of any width, or integers); TypeError for
    anything else (bool, complex, strings, objects)."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers (a float or integer dtype), not {a.dtype}")
    return a


def check_count(n: int, name: str) -> None:
    if n > MAX_BOXES:
        raise make_error(TOO_MANY, f"{name} has {n} rows, at most {MAX_BOXES} (2^30) per call")


def as_float32(a: np.ndarray) -> np.ndarray:
    """A C-contiguous, aligned float32 array: `a` itself when it already is one (no copy).
    Values beyond the float32 range become infinities, which the library rejects (and the error
    then says which row and why)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.require(a, dtype=np.float32, requirements=["C", "A"])


class Boxes:
    """Boxes converted for the library: `data` is (n, 2 * dim) float32, min corner then max."""

    __slots__ = ("data", "dim", "name", "_original")

    def __init__(self, data: np.ndarray, dim: int, name: str, original: Callable[[int], np.ndarray]):
        self.data = data
        self.dim = dim
        self.name = name
        self._original = original

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    def pointer(self) -> Any:
        kind = "const bp_box2 *" if self.dim == 2 else "const bp_box3 *"
        return ffi.cast(kind, ffi.from_buffer(self.data))

    def error(self, status: int) -> InvalidInputError:
        """The error for a load that failed with `status`, naming the first bad row."""
        d = self.dim
        f = self.data
        finite = np.isfinite(f).all(axis=1)
        inverted = (f[:, :d] > f[:, d:]).any(axis=1)
        bad = ~finite | inverted
        if not bad.any():  # not a row problem after all
            return make_error(status, f"{self.name}")  # type: ignore[return-value]
        k = int(np.argmax(bad))
        row = self._original(k)
        values = ", ".join(repr(float(v)) for v in row)
        if not finite[k]:
            if np.isfinite(row.astype(np.float64)).all():
                why = "a coordinate is beyond the float32 range"
            else:
                why = "a coordinate is NaN or infinite"
            st = NONFINITE
        else:
            axis = int(np.argmax(f[k, :d] > f[k, d:]))
            why = f"min > max on axis {axis}"
            st = INVERTED
        return make_error(st, f"{self.name} row {k} [{values}]: {why}", row=k)  # type: ignore[return-value]


def boxes(boxes: Any = None, lo: Any = None, hi: Any = None, name: str = "boxes") -> Boxes:
    """Converts the caller's boxes: an (n, 4) / (n, 6) array (min corner then max corner), an
    (n, 2, d) array, or separate `lo` and `hi` arrays of shape (n, d)."""
    if boxes is not None:
        if lo is not None or hi is not None:
            raise TypeError(f"give {name}, or lo and hi, not both")
        a = real_array(boxes, name)
        if a.ndim == 2 and a.shape[1] in (4, 6):
            d = a.shape[1] // 2
        elif a.ndim == 3 and a.shape[1] == 2 and a.shape[2] in (2, 3):
            d = a.shape[2]
        else:
            raise ValueError(
                f"{name} must have shape (n, 4) or (n, 6) (min corner then max corner), "
                f"or (n, 2, d) with d 2 or 3; got {a.shape}"
            )
        n = a.shape[0]
        check_count(n, name)
        data = as_float32(a).reshape(n, 2 * d)
        return Boxes(data, d, name, lambda k: a[k].reshape(-1))
    if lo is None or hi is None:
        raise TypeError(f"give {name} as one array, or both lo and hi")
    lo_a = real_array(lo, "lo")
    hi_a = real_array(hi, "hi")
    if lo_a.ndim != 2 or lo_a.shape[1] not in (2, 3) or lo_a.shape != hi_a.shape:
        raise ValueError(f"lo and hi must both have shape (n, 2) or (n, 3); got {lo_a.shape} and {hi_a.shape}")
    n, d = lo_a.shape
    check_count(n, "lo")
    data = pack(as_float32(lo_a), as_float32(hi_a))
    return Boxes(data, d, "lo/hi", lambda k: np.concatenate([lo_a[k], hi_a[k]]))


def pack(lo: np.ndarray, hi: np.ndarray, data: Optional[np.ndarray] = None) -> np.ndarray:
    """(n, d) lo and hi (float32, C order) interleaved into (n, 2d) rows. Each corner is copied as
    one d * 4-byte item (a void view): numpy then copies n items in one loop, where a slice
    assignment (data[:, :d] = lo) loops over n rows of d floats, ten times slower."""
    n, d = lo.shape
    if data is None:
        data = np.empty((n, 2 * d), dtype=np.float32)
    item = np.dtype(f"V{4 * d}")
    dv = data.view(item)
    dv[:, 0] = lo.view(item)[:, 0]
    dv[:, 1] = hi.view(item)[:, 0]
    return data


def vector(x: Any, dim: int, name: str) -> np.ndarray:
    """A point of `dim` coordinates, as float32."""
    a = real_array(x, name)
    if a.shape != (dim,):
        raise make_error(DIMENSION, f"{name} must have {dim} coordinates, got shape {a.shape}")
    return as_float32(a)


def pairs_from(ptr: Any, count: int) -> PairArray:
    """A copy of `count` bp_pair (two uint32 each) as an (count, 2) array."""
    if count == 0:
        return np.empty(_EMPTY_PAIRS_SHAPE, dtype=np.uint32)
    return np.frombuffer(ffi.buffer(ptr, count * 8), dtype=np.uint32).reshape(count, 2).copy()


def indices_from(ptr: Any, count: int) -> IndexArray:
    if count == 0:
        return np.empty(0, dtype=np.uint32)
    return np.frombuffer(ffi.buffer(ptr, count * 4), dtype=np.uint32).copy()
