"""broadphase: every overlapping pair among many boxes, from numpy arrays.

The Python face of the broadphase C library (include/broadphase.h): arrays in, arrays out, no
Python loop per box or per pair, the GIL released while the library works.

    >>> import numpy as np, broadphase
    >>> boxes = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]], dtype=np.float32)
    >>> broadphase.pairs(boxes).tolist()                 # (m, 2) uint32, i < j
    [[0, 1]]
    >>> centres = np.array([[0.0, 0.0], [1.5, 0.0], [9.0, 9.0]])
    >>> broadphase.circle_pairs(centres, radii=1.0).tolist()
    [[0, 1]]

Functions: :func:`pairs`, :func:`pairs_between`, :func:`circle_pairs`, :func:`query_box`,
:func:`query_sphere`, :func:`query_point`. Classes: :class:`Context` (one context across frames:
temporal coherence, no allocation when warm) and :class:`World` (persistent proxies with ids,
begin/end events). Errors: :class:`BroadphaseError` and its subclasses, which are also
ValueError / MemoryError / RuntimeError. See docs/python.md.
"""

from ._context import (
    METHODS,
    Context,
    Stats,
    available_methods,
    circle_pairs,
    clear_cache,
    pairs,
    pairs_between,
    query_box,
    query_point,
    query_sphere,
)
from ._errors import (
    BroadphaseError,
    InvalidInputError,
    NoBoxesError,
    OutOfMemoryError,
    StaleIdError,
    UnsupportedError,
)
from ._ffi import MAX_BOXES, VERSION
from ._world import ALL, Events, Hits, Pairs, ProxyInfo, World, WorldStats

__version__ = VERSION

__all__ = [
    "ALL",
    "Events",
    "Hits",
    "Pairs",
    "ProxyInfo",
    "World",
    "WorldStats",
    "METHODS",
    "MAX_BOXES",
    "BroadphaseError",
    "Context",
    "InvalidInputError",
    "NoBoxesError",
    "OutOfMemoryError",
    "StaleIdError",
    "Stats",
    "UnsupportedError",
    "available_methods",
    "clear_cache",
    "circle_pairs",
    "pairs",
    "pairs_between",
    "query_box",
    "query_point",
    "query_sphere",
]
