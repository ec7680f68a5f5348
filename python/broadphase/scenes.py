"""The benchmark scenes of docs/scenes.md, draw for draw, in numpy.

The same boxes as the C benchmark (bench/scene.c) and the CLI's ``broadphase bench``: splitmix64
is a counter-based generator (draw k depends only on seed + k * gamma), so whole blocks of draws
are made at once; the arithmetic is the same IEEE double arithmetic in the same order, and the
transcendental functions (log, cos, exp) come from the C library through :mod:`math`, as in C,
so the docs/scenes.md check values come out identical (tests/test_scenes.py checks them).

    >>> from broadphase import scenes, pairs
    >>> s = scenes.make("uniform", 1000, dim=2, seed=1)
    >>> len(pairs(s.boxes()))           # docs/scenes.md: uniform 2D N=1000 frame 0
    127
    >>> for _ in range(10): s.step()
    >>> len(pairs(s.boxes()))           # frame 10
    133
"""

from __future__ import annotations

import math
from typing import List, Optional

import numpy as np
import numpy.typing as npt

__all__ = ["NAMES", "Rng", "Scene", "ShooterScene", "StaticScene", "make", "world_width"]

NAMES = ("uniform", "clustered", "mixed", "sticks", "sizes", "line", "seed", "static", "shooter")

_MASK = (1 << 64) - 1
_GAMMA_INT = 0x9E3779B97F4A7C15
_GAMMA = np.uint64(_GAMMA_INT)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_PI = 3.14159265358979323846


class Rng:
    """splitmix64 (docs/scenes.md): ``pos`` draws made so far from ``seed``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed & _MASK
        self.pos = 0

    def raw_at(self, k: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        """Draw number k (1-based) of the sequence, for each k."""
        z = np.uint64(self.seed) + k.astype(np.uint64) * _GAMMA  # wraps modulo 2^64, as in C
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return z ^ (z >> _S31)

    def u01_at(self, k: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
        return (self.raw_at(k) >> _S11).astype(np.float64) * 2.0**-53

    def u01(self, count: int) -> npt.NDArray[np.float64]:
        """The next `count` u01() draws."""
        k = np.arange(self.pos + 1, self.pos + count + 1, dtype=np.uint64)
        self.pos += count
        return self.u01_at(k)


def _uniform(a: float, b: float, u: np.ndarray) -> np.ndarray:
    return a + (b - a) * u


def _gauss(u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    # libm's log and cos (math), not numpy's vectorised ones, which may differ in the last bit.
    u1 = np.where(u1 == 0.0, 2.0**-53, u1)
    log = np.array([math.log(x) for x in u1.tolist()])
    cos = np.array([math.cos(2.0 * _PI * x) for x in u2.tolist()])
    return np.sqrt(-2.0 * log) * cos


def world_width(n: int, dim: int) -> float:
    """W: objects of radius 1 cover 5% of the world."""
    if dim == 2:
        return math.sqrt(float(n) * _PI / 0.05)
    return math.cbrt(float(n) * (4.0 / 3.0) * _PI / 0.05)


class Scene:
    """One scene: centres `p` (n, dim), velocities `v`, per-axis half extents `half` (the radius on
    every axis for circles; sticks differ per axis), radii `r` (None for sticks), world width W.

    :meth:`boxes` gives the current frame's boxes as docs/scenes.md defines them (each bound computed
    in double, rounded to the nearest float32); :meth:`step` moves every object one frame.
    """

    def __init__(self, name: str, dim: int, seed: int, world: float, p: np.ndarray, v: np.ndarray,
                 half: np.ndarray, r: Optional[np.ndarray], rng: Rng) -> None:
        self.name = name
        self.dim = dim
        self.seed = seed
        self.world = world
        self.p = p
        self.v = v
        self.half = half
        self.r = r
        self.rng = rng
        self.frame = 0

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    def boxes(self) -> npt.NDArray[np.float32]:
        """(n, 2 * dim) float32: min corner then max corner."""
        return np.hstack([(self.p - self.half).astype(np.float32), (self.p + self.half).astype(np.float32)])

    def centres(self) -> npt.NDArray[np.float32]:
        """The centres rounded to float32 (circle scenes)."""
        return self.p.astype(np.float32)

    def _move(self, rows: Optional[np.ndarray] = None) -> None:
        p, v, h = self.p, self.v, self.half
        if rows is not None:
            p, v, h = p[rows], v[rows], h[rows]
        w = self.world
        for a in range(self.dim):
            pa, va, ha = p[:, a], v[:, a], h[:, a]
            pa += va
            low = pa - ha < 0.0
            pa[low] = ha[low]
            va[low] = -va[low]
            high = pa + ha > w
            pa[high] = w - ha[high]
            va[high] = -va[high]
        if rows is not None:
            self.p[rows] = p
            self.v[rows] = v

    def step(self) -> None:
        """Moves every object one frame (docs/scenes.md "Objects and motion")."""
        self._move()
        self.frame += 1


class StaticScene(Scene):
    """`static`: the `uniform` objects, of which only k % 100 == 0 move; the rest are static."""

    def __init__(self, base: Scene) -> None:
        super().__init__("static", base.dim, base.seed, base.world, base.p, base.v, base.half, base.r, base.rng)
        self.moving = np.arange(self.n) % 100 == 0

    def step(self) -> None:
        self._move(np.flatnonzero(self.moving))
        self.frame += 1


class ShooterScene(Scene):
    """`shooter`: S = ceil(N / 100) ships (objects 0..S-1, category 2, mask 3) then N bullets
    (category 1, mask 2) that live 60 frames and are replaced by new ones in their slots."""

    SHIP_CATEGORY, SHIP_MASK = 2, 3
    BULLET_CATEGORY, BULLET_MASK = 1, 2

    def __init__(self, n: int, dim: int, seed: int) -> None:
        w = world_width(n, dim)
        rng = Rng(seed)
        ships = -(-n // 100)
        u = rng.u01(ships * 2 * dim).reshape(ships, 2 * dim)
        ps = _uniform(8.0, w - 8.0, u[:, :dim])
        vs = _uniform(-0.5, 0.5, u[:, dim:])
        u = rng.u01(n * 2 * dim).reshape(n, 2 * dim)
        pb = _uniform(1.0, w - 1.0, u[:, :dim])
        vb = _uniform(-2.0, 2.0, u[:, dim:])
        r = np.concatenate([np.full(ships, 8.0), np.full(n, 0.5)])
        p = np.vstack([ps, pb])
        v = np.vstack([vs, vb])
        super().__init__("shooter", dim, seed, w, p, v, np.repeat(r[:, None], dim, axis=1), r, rng)
        self.ships = ships
        self.age = np.arange(n) % 60
        self.category = np.where(np.arange(ships + n) < ships, self.SHIP_CATEGORY, self.BULLET_CATEGORY).astype(np.uint64)
        self.mask = np.where(np.arange(ships + n) < ships, self.SHIP_MASK, self.BULLET_MASK).astype(np.uint64)

    def step(self) -> npt.NDArray[np.intp]:  # type: ignore[override]
        """Moves everything, ages the bullets and replaces those that reach 60 frames. Returns the
        object indices whose bullet was replaced this frame (ascending)."""
        self._move()
        self.age += 1
        dead = np.flatnonzero(self.age == 60)
        if len(dead):
            d = self.dim
            u = self.rng.u01(len(dead) * 2 * d).reshape(len(dead), 2 * d)
            rows = dead + self.ships
            self.p[rows] = _uniform(1.0, self.world - 1.0, u[:, :d])
            self.v[rows] = _uniform(-2.0, 2.0, u[:, d:])
            self.age[dead] = 0
            rows_out = rows
        else:
            rows_out = dead
        self.frame += 1
        return rows_out


def _mixed(n: int, dim: int, w: float, rng: Rng) -> tuple:
    """`mixed` draws a radius for 1% of the objects: a variable stride, so the draws are scanned
    in windows up to the next object that takes the extra draw."""
    stride = 1 + 2 * dim
    p = np.empty((n, dim))
    v = np.empty((n, dim))
    r = np.ones(n)
    lo, hi = math.log(0.5), math.log(25.0)
    i = 0
    while i < n:
        m = min(n - i, 4096)
        first = rng.pos + 1 + stride * np.arange(m, dtype=np.uint64)  # u of each object, no extras
        u = rng.u01_at(first)
        big = np.flatnonzero(u < 0.01)
        take = m if len(big) == 0 else int(big[0]) + 1
        k = rng.pos + 1 + stride * np.arange(take, dtype=np.uint64)
        if len(big):
            # the last object taken draws its radius right after u, then p and v
            ri = math.exp(float(_uniform(lo, hi, rng.u01_at(k[-1:] + np.uint64(1)))[0]))
        offs = np.arange(1, 2 * dim + 1, dtype=np.uint64)
        draws = rng.u01_at(k[:, None] + offs[None, :])
        if len(big):
            draws[-1] = rng.u01_at(k[-1] + np.uint64(1) + offs)
            r[i + take - 1] = ri
        rr = r[i:i + take, None]
        p[i:i + take] = rr + ((w - rr) - rr) * draws[:, :dim]
        v[i:i + take] = _uniform(-0.5, 0.5, draws[:, dim:])
        rng.pos += stride * take + (1 if len(big) else 0)
        i += take
    return p, v, r


def make(name: str, n: int, dim: int = 2, seed: int = 1) -> Scene:
    """Frame 0 of scene `name` (one of NAMES) with n objects (bullets for `shooter`)."""
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if name == "shooter":
        return ShooterScene(n, dim, seed)
    if name == "static":
        return StaticScene(make("uniform", n, dim, seed))
    if name not in NAMES:
        raise ValueError(f"unknown scene {name!r}; one of {', '.join(NAMES)}")
    w = 300.0 if name == "seed" else world_width(n, dim)
    rng = Rng(seed)
    d = dim
    r: Optional[np.ndarray] = np.ones(n)
    half: Optional[np.ndarray] = None
    if name == "uniform":
        u = rng.u01(n * 2 * d).reshape(n, 2 * d)
        p = _uniform(1.0, w - 1.0, u[:, :d])
        v = _uniform(-0.5, 0.5, u[:, d:])
    elif name == "clustered":
        c = _uniform(w / 8.0, 7.0 * w / 8.0, rng.u01(16 * d).reshape(16, d))
        u = rng.u01(n * 3 * d + n).reshape(n, 3 * d + 1)
        k = np.minimum(15, np.floor(u[:, 0] * 16.0)).astype(np.intp)
        g = _gauss(u[:, 1:2 * d + 1:2].reshape(-1), u[:, 2:2 * d + 2:2].reshape(-1)).reshape(n, d)
        p = np.clip(c[k] + g * w / 40.0, 1.0, w - 1.0)
        v = _uniform(-0.5, 0.5, u[:, 2 * d + 1:])
    elif name == "mixed":
        p, v, r = _mixed(n, d, w, rng)
    elif name == "sticks":
        u = rng.u01(n * (1 + 2 * d)).reshape(n, 1 + 2 * d)
        ax = np.minimum(d - 1, np.floor(u[:, 0] * d)).astype(np.intp)
        half = np.where(np.arange(d)[None, :] == ax[:, None], 20.0, 0.4)
        p = half + ((w - half) - half) * u[:, 1:d + 1]
        v = _uniform(-0.5, 0.5, u[:, d + 1:])
        r = None
    elif name == "sizes":
        u = rng.u01(n * (1 + 2 * d)).reshape(n, 1 + 2 * d)
        lo, hi = math.log(0.1), math.log(30.0)
        r = np.array([math.exp(x) for x in _uniform(lo, hi, u[:, 0]).tolist()])
        rr = r[:, None]
        p = rr + ((w - rr) - rr) * u[:, 1:d + 1]
        v = _uniform(-0.5, 0.5, u[:, d + 1:])
    elif name == "line":
        u = rng.u01(n * 2 * (d - 1)).reshape(n, 2 * (d - 1))
        p = np.empty((n, d))
        v = np.zeros((n, d))
        p[:, 0] = w / 2.0
        p[:, 1:] = _uniform(1.0, w - 1.0, u[:, :d - 1])
        v[:, 1:] = _uniform(-0.5, 0.5, u[:, d - 1:])
    else:  # seed
        u = rng.u01(n * 2 * d).reshape(n, 2 * d)
        p = np.floor(u[:, :d] * w / 2.0) + w / 4.0
        v = _uniform(-2.0, 2.0, u[:, d:])
        r = np.full(n, 5.0)
    if half is None:
        assert r is not None
        half = np.repeat(r[:, None], d, axis=1)
    return Scene(name, d, seed, w, p, v, half, r, rng)


def check_values() -> List[tuple]:
    """docs/scenes.md's pair counts for seed 1: (scene, dim, n, frame, pairs)."""
    rows = [
        ("seed", 2, 1000, 9317, 7277), ("uniform", 2, 1000, 127, 133), ("clustered", 2, 1000, 1115, 901),
        ("mixed", 2, 1000, 172, 165), ("line", 2, 1000, 8067, 8148), ("uniform", 3, 1000, 393, 397),
        ("clustered", 3, 1000, 17336, 1714), ("uniform", 2, 10000, None, 1243),
        ("clustered", 2, 10000, None, 11896), ("mixed", 2, 10000, None, 1764), ("seed", 2, 3000, None, 65243),
        ("sticks", 2, 1000, 7058, 7061), ("sticks", 2, 10000, None, 71143), ("sticks", 3, 1000, None, 11151),
        ("sizes", 2, 1000, 6657, 6689), ("sizes", 2, 10000, None, 69110), ("sizes", 3, 1000, None, 130108),
    ]
    out = []
    for name, dim, n, f0, f10 in rows:
        if f0 is not None:
            out.append((name, dim, n, 0, f0))
        out.append((name, dim, n, 10, f10))
    return out
