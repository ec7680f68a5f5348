#!/usr/bin/env python3
"""broadphase from Python against the spatial indexes Python users reach for.

    /usr/bin/python3 python/bench.py --n 100000,1000000

On the docs/scenes.md scene (uniform 2D by default, seed 1, frame 0 for one-call timings and frames
1..F for per-frame timings), each contender is timed as a Python user sees it: the whole call,
conversion of the input included, from numpy arrays to an array (or list) of pairs. Its pairs are
checked against broadphase's, and a table is printed.

Boxes, `pairs`:
  - broadphase.pairs(boxes): one call, a fresh context (what the one-line API costs).
  - C library, one call: bp_context_create + bp_find_pairs2 + bp_context_destroy on the same
    float32 array, called straight through cffi (the binding's floor).
  - broadphase.Context.pairs, per frame, and the C library per frame on the same frames (a warm
    context, temporal coherence), as `broadphase bench` times the library.
  - scipy cKDTree(centres) + query_pairs(r=2, p=inf, output_type="ndarray"): every object of
    these scenes is a square of half-size 1, so Chebyshev distance <= 2 between centres is box
    overlap. It answers on the exact (double) boxes, broadphase on their float32 rounding: pairs
    within a rounding step of touching may differ, and the check says how many (and that each
    such pair is within 1e-3 of touching).
  - shapely STRtree: Debian 12 ships shapely 1.8, whose STRtree has no bulk query: the boxes
    become polygons (shapely.geometry.box), the tree is built, then one query_items call per
    box (the fastest form 1.8 offers).
  - rtree (libspatialindex): Debian 12 ships rtree 1.0.1, without intersection_v: the index is
    bulk-loaded from a stream, then one intersection call per box.
Circles, `circle_pairs`:
  - broadphase.circle_pairs(centres, radii), one call, and Context.circle_pairs per frame.
  - cKDTree(centres) + query_pairs(r=2) (radius 1 each: distance <= 2 is overlap), same float32
    centres as doubles, so both answer the same question and must agree exactly.

Slow peers are skipped at a larger N when their time at the smaller N, scaled by N, exceeds
--peer-limit seconds. Timings are medians of --repeat runs (one run for calls over 5 s).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
# Run from the source tree after a CMake build: the package beside this script, the library in
# build/python. An installed package (pip install ./python) is used when BROADPHASE_LIBRARY is
# unset and no build tree is found.
_built = HERE.parent / "build" / "python" / "libbroadphase_python.so"
if "BROADPHASE_LIBRARY" not in os.environ and _built.is_file():
    os.environ["BROADPHASE_LIBRARY"] = str(_built)
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import broadphase  # noqa: E402
from broadphase import scenes  # noqa: E402
from broadphase._ffi import ffi, lib  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> Tuple[float, object]:
    """Median seconds of `repeat` runs (one when a run takes over 5 s) and the last result."""
    times = []
    out = None
    for k in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        if times[-1] > 5.0:
            break
    return statistics.median(times), out


def alternate(runs: List[Tuple[Optional[Callable[[], object]], Callable[[], object]]], repeat: int) -> List[Tuple[float, object]]:
    """Times several calls taking turns (so that a noisy moment hits them alike): for each, the
    median seconds of `repeat` runs and its last result. A run's setup (if any) is not timed."""
    times: List[List[float]] = [[] for _ in runs]
    outs: List[object] = [None] * len(runs)
    for _ in range(repeat):
        for k, (setup, fn) in enumerate(runs):
            if setup is not None:
                setup()
            t = time.perf_counter()
            outs[k] = fn()
            times[k].append(time.perf_counter() - t)
    return [(statistics.median(t), o) for t, o in zip(times, outs)]


# ---- the C library straight through cffi ---------------------------------------------------

def c_context(dim: int):
    d = ffi.new("bp_context_def *", lib.bp_default_context_def())
    d.dimension = dim
    out = ffi.new("bp_context **")
    assert lib.bp_context_create(d, out) == 0
    return out[0]


def c_find(ctx, boxes: np.ndarray, dim: int) -> int:
    out = ffi.new("bp_pairs *")
    ptr = ffi.cast("const bp_box2 *" if dim == 2 else "const bp_box3 *", ffi.from_buffer(boxes))
    fn = lib.bp_find_pairs2 if dim == 2 else lib.bp_find_pairs3
    assert fn(ctx, ptr, len(boxes), out) == 0
    return int(out.count)


def c_one_call(boxes: np.ndarray, dim: int) -> int:
    ctx = c_context(dim)
    try:
        return c_find(ctx, boxes, dim)
    finally:
        lib.bp_context_destroy(ctx)


# ---- peers -----------------------------------------------------------------------------------

def ckdtree_boxes(centres: np.ndarray, half: float) -> np.ndarray:
    from scipy.spatial import cKDTree
    return cKDTree(centres).query_pairs(r=2.0 * half, p=np.inf, output_type="ndarray")


def ckdtree_circles(centres: np.ndarray, radius: float) -> np.ndarray:
    from scipy.spatial import cKDTree
    return cKDTree(centres).query_pairs(r=2.0 * radius, output_type="ndarray")


def _tree_pairs(items: Sequence[Any], hits: Callable[[Any], Iterable[int]]) -> np.ndarray:
    """The pairs (i, j), i < j, where j is among hits(items[i]): a tree's self-join."""
    out = [(i, j) for i, x in enumerate(items) for j in hits(x) if i < j]
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def strtree_pairs(boxes: np.ndarray) -> np.ndarray:
    import warnings

    from shapely.geometry import box
    from shapely.strtree import STRtree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1.8's notice that STRtree changes in 2.0
        geoms = [box(*b) for b in boxes.astype(np.float64).tolist()]
        tree = STRtree(geoms)
        return _tree_pairs(geoms, tree.query_items)


def rtree_pairs(boxes: np.ndarray) -> np.ndarray:
    from rtree import index
    rows = boxes.astype(np.float64).tolist()
    idx = index.Index(((k, tuple(b), None) for k, b in enumerate(rows)))  # bulk load (STR)
    return _tree_pairs(rows, idx.intersection)


def keys(pairs: np.ndarray) -> np.ndarray:
    """Pairs as sorted unique int64 keys i * 2^32 + j (i < j)."""
    p = np.sort(np.asarray(pairs, dtype=np.int64), axis=1)
    return np.unique(p[:, 0] * (1 << 32) + p[:, 1])


def compare(ours: np.ndarray, theirs: np.ndarray, near_touch: Optional[Callable[[np.ndarray], np.ndarray]] = None) -> str:
    a, b = keys(ours), keys(theirs)
    if len(a) == len(b) and np.array_equal(a, b):
        return "same pairs"
    diff = np.setxor1d(a, b)
    if near_touch is not None:
        ij = np.stack([diff >> 32, diff & 0xFFFFFFFF], axis=1)
        if near_touch(ij).all():
            return f"same but {len(diff)} pairs within 1e-3 of touching (float32 rounding)"
    return f"DIFFERENT: {len(np.setdiff1d(a, b))} missing, {len(np.setdiff1d(b, a))} extra"


# ---- the run ---------------------------------------------------------------------------------

class Table:
    def __init__(self) -> None:
        self.rows: List[List[str]] = []

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def print(self, header: List[str]) -> None:
        rows = [header] + self.rows
        width = [max(len(r[k]) for r in rows) for k in range(len(header))]
        line = lambda r: "| " + " | ".join(c.ljust(width[k]) for k, c in enumerate(r)) + " |"  # noqa: E731
        print(line(header))
        print("|" + "|".join("-" * (w + 2) for w in width) + "|")
        for r in self.rows:
            print(line(r))


def run_n(args, n: int, peer_times: Dict[str, Tuple[int, float]], summary: List[str]) -> None:
    dim = args.dim
    sc = scenes.make(args.scene, n, dim=dim, seed=args.seed)
    if sc.r is None or not np.all(sc.r == sc.r[0]):
        raise SystemExit(f"bench.py compares with cKDTree and circles: scene {args.scene} needs one radius for all")
    radius = float(sc.r[0])
    boxes = sc.boxes()
    centres32 = sc.centres()
    radii32 = sc.r.astype(np.float32)
    frames = []
    for _ in range(args.frames):
        sc.step()
        frames.append(sc.boxes())
    sc2 = scenes.make(args.scene, n, dim=dim, seed=args.seed)
    cframes = []
    for _ in range(args.frames):
        sc2.step()
        cframes.append(sc2.centres())
    rep = args.repeat if n < 1_000_000 else max(1, min(args.repeat, 3))

    print(f"\n### {args.scene} {dim}D, N = {n:,} (seed {args.seed})\n")
    ctx_c = c_context(dim)
    try:
        (t_py, ours), (t_c, c_count), (t_py_cold, _), (t_c_cold, _) = alternate([
            (None, lambda: broadphase.pairs(boxes)),
            (None, lambda: c_find(ctx_c, boxes, dim)),
            (broadphase.clear_cache, lambda: broadphase.pairs(boxes)),
            (None, lambda: c_one_call(boxes, dim)),
        ], rep)
    finally:
        lib.bp_context_destroy(ctx_c)
    assert c_count == len(ours)

    def py_frames():
        with broadphase.Context(dim=dim) as ctx:
            ctx.pairs(boxes)  # frame 0 warms the context
            ts = []
            for f in frames:
                t = time.perf_counter()
                ctx.pairs(f)
                ts.append(time.perf_counter() - t)
        return statistics.mean(ts)

    def c_frames():
        ctx = c_context(dim)
        try:
            c_find(ctx, boxes, dim)
            ts = []
            for f in frames:
                t = time.perf_counter()
                c_find(ctx, f, dim)
                ts.append(time.perf_counter() - t)
        finally:
            lib.bp_context_destroy(ctx)
        return statistics.mean(ts)

    fr = [(py_frames(), c_frames()) for _ in range(rep)]
    t_pyf = statistics.median(a for a, _ in fr)
    t_cf = statistics.median(b for _, b in fr)

    tab = Table()
    tab.add("broadphase.pairs(boxes)", "repeated calls (the thread's kept context)", f"{t_py * 1e3:.2f}", f"{len(ours):,}",
            "reference", "1.0x")
    tab.add("C library, same boxes", "bp_find_pairs2 on a kept context", f"{t_c * 1e3:.2f}", f"{c_count:,}", "same count",
            f"Python / C = {t_py / t_c:.2f}")
    tab.add("broadphase.pairs(boxes), cold", "after clear_cache(): a fresh context", f"{t_py_cold * 1e3:.2f}", "", "", "")
    tab.add("C library, cold", "create + bp_find_pairs2 + destroy", f"{t_c_cold * 1e3:.2f}", "", "",
            f"Python / C = {t_py_cold / t_c_cold:.2f}")
    tab.add("broadphase.Context.pairs", f"per frame, frames 1..{args.frames} (mean)", f"{t_pyf * 1e3:.2f}", "", "", "")
    tab.add("C library, per frame", f"per frame, frames 1..{args.frames} (mean)", f"{t_cf * 1e3:.2f}", "", "",
            f"Python / C = {t_pyf / t_cf:.2f}")
    summary.append(f"{args.scene} {dim}D N={n:,}: Python / C (target <= 1.3): pairs() {t_py / t_c:.2f}, "
                   f"cold {t_py_cold / t_c_cold:.2f}, Context.pairs per frame {t_pyf / t_cf:.2f}")

    def peer(name: str, what: str, fn: Callable[[], np.ndarray], check: Callable[[np.ndarray], str], base: float,
             rows: Table) -> Optional[float]:
        if name not in args.peers:
            return None
        prev = peer_times.get(name)
        if prev is not None:
            predicted = prev[1] * n / prev[0]
            if predicted > args.peer_limit:
                rows.add(name, what, "skipped", "", f"predicted {predicted:.0f} s > --peer-limit {args.peer_limit:.0f}", "")
                return None
        t, out = timed(fn, rep)
        peer_times[(name)] = (n, t)
        rows.add(name, what, f"{t * 1e3:.2f}", f"{len(out):,}", check(out), f"{t / base:.1f}x slower")
        return t

    c64 = centres32.astype(np.float64)
    lo32, hi32 = boxes[:, :dim].astype(np.float64), boxes[:, dim:].astype(np.float64)

    def near_box_touch(ij: np.ndarray) -> np.ndarray:
        i, j = ij[:, 0], ij[:, 1]
        gap = np.maximum(lo32[i] - hi32[j], lo32[j] - hi32[i]).max(axis=1)
        return np.abs(gap) <= 1e-3

    exact_p = scenes.make(args.scene, n, dim=dim, seed=args.seed).p  # frame 0 centres in double
    peers = []
    peers.append(peer("ckdtree", "cKDTree build + query_pairs(2r, p=inf) on the centres",
                      lambda: ckdtree_boxes(exact_p, radius), lambda o: compare(ours, o, near_box_touch), t_py, tab))
    if dim == 2:
        peers.append(peer("strtree", "shapely 1.8: box() per row, STRtree, query_items per box",
                          lambda: strtree_pairs(boxes), lambda o: compare(ours, o), t_py, tab))
    peers.append(peer("rtree", "rtree 1.0: stream bulk load, intersection per box",
                      lambda: rtree_pairs(boxes), lambda o: compare(ours, o), t_py, tab))
    tab.print(["boxes: pairs", "what is timed", "ms", "pairs", "check", "ratio"])
    done = [t for t in peers if t is not None]
    if done:
        summary.append(f"{args.scene} {dim}D N={n:,}: fastest peer / pairs() = {min(done) / t_py:.1f}x "
                       f"(cold: {min(done) / t_py_cold:.1f}x) (target >= 15x)")

    print()
    ctab = Table()
    (t_circ, circ), (t_circ_cold, _) = alternate([
        (None, lambda: broadphase.circle_pairs(centres32, radii32)),
        (broadphase.clear_cache, lambda: broadphase.circle_pairs(centres32, radii32)),
    ], rep)
    ctab.add("broadphase.circle_pairs(centres, radii)", "repeated calls (the thread's kept context)", f"{t_circ * 1e3:.2f}",
             f"{len(circ):,}", "reference", "1.0x")
    ctab.add("broadphase.circle_pairs, cold", "after clear_cache(): a fresh context", f"{t_circ_cold * 1e3:.2f}", "", "", "")

    def circ_frames():
        with broadphase.Context(dim=dim) as ctx:
            ctx.circle_pairs(centres32, radii32)
            ts = []
            for c in cframes:
                t = time.perf_counter()
                ctx.circle_pairs(c, radii32)
                ts.append(time.perf_counter() - t)
        return statistics.mean(ts)

    t_circf = statistics.median(circ_frames() for _ in range(rep))
    ctab.add("broadphase.Context.circle_pairs", f"per frame, mean of frames 1..{args.frames}", f"{t_circf * 1e3:.2f}", "",
             "", "")
    tk = peer("ckdtree-circles", "cKDTree build + query_pairs(2r) on the same float32 centres",
              lambda: ckdtree_circles(c64, radius), lambda o: compare(circ, o), t_circ, ctab)
    ctab.print(["circles: circle_pairs", "what is timed", "ms", "pairs", "check", "ratio"])
    if tk is not None:
        summary.append(f"{args.scene} {dim}D N={n:,}: cKDTree / circle_pairs() = {tk / t_circ:.1f}x "
                       f"(cold: {tk / t_circ_cold:.1f}x) (target >= 15x)")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}", f"broadphase {broadphase.__version__}"]
    for mod in ("scipy", "shapely", "rtree"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} missing")
    return f"{cpu}, {os.cpu_count()} cores; {', '.join(versions)}; {datetime.date.today().isoformat()}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="100000,1000000", help="comma-separated object counts (default 100000,1000000)")
    ap.add_argument("--scene", default="uniform", choices=["uniform", "clustered", "line", "seed"],
                    help="a docs/scenes.md scene with one radius for all (default uniform)")
    ap.add_argument("--dim", type=int, default=2, choices=[2, 3])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--frames", type=int, default=10, help="frames for the per-frame rows (default 10)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per timing, median kept (at most 3 at 1M; default 5)")
    ap.add_argument("--peers", default="ckdtree,strtree,rtree,ckdtree-circles",
                    help="peers to run (default: ckdtree,strtree,rtree,ckdtree-circles; '' for none)")
    ap.add_argument("--peer-limit", type=float, default=120.0,
                    help="skip a peer at a larger N when its time scaled by N exceeds this many seconds (default 120)")
    args = ap.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    ns = [int(x.replace("_", "")) for x in args.n.split(",") if x]
    print(f"broadphase Python benchmark: {machine()}")
    print(f"library: {broadphase._ffi.LIB_PATH}")
    peer_times: Dict[str, Tuple[int, float]] = {}
    summary: List[str] = []
    for n in ns:
        run_n(args, n, peer_times, summary)
    print("\n### Targets\n")
    for line in summary:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
