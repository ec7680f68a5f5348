"""Threads: the GIL is released during the library's work, two contexts run in two threads, and
one context shared by threads is serialised (never a crash)."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
from conftest import as_set, random_boxes, ref_pairs

import broadphase


def test_two_contexts_in_two_threads(rng):
    frames = []
    for _ in range(2):
        boxes = random_boxes(rng, 600, 2, world=80.0)
        vel = rng.uniform(-0.5, 0.5, (600, 2)).astype(np.float32)
        seq = []
        for _ in range(8):
            boxes = boxes + np.hstack([vel, vel])
            seq.append(boxes)
        frames.append(seq)
    want = [[ref_pairs(b) for b in seq] for seq in frames]
    got = [[None] * 8, [None] * 8]
    errors = []

    def run(k, method):
        try:
            with broadphase.Context(method=method) as ctx:
                for f, boxes in enumerate(frames[k]):
                    got[k][f] = as_set(ctx.pairs(boxes))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(0, "sweep")), threading.Thread(target=run, args=(1, "grid"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == want


def test_gil_released_during_the_call():
    """While the main thread is inside the library, another Python thread runs. The switch
    interval is raised to 10 s so that, were the GIL held during the call, the other thread could
    not take it from the main thread between the two reads of its counter (the boxes are float32 and C-ordered and
    have no pairs, so the call does no numpy work that could release the GIL itself)."""
    n = 400_000
    lo = (np.arange(2 * n, dtype=np.float32) * 3.0).reshape(n, 2)
    boxes = np.hstack([lo, lo + 1.0])  # no two overlap
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)  # hands the GIL back at once, so the main thread never waits 10 s for it

    old = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    t = threading.Thread(target=spin)
    try:
        t.start()
        ran = False
        with broadphase.Context(method="grid") as ctx:
            for _ in range(20):
                before = count[0]
                out = ctx.pairs(boxes)
                after = count[0]
                assert len(out) == 0
                if after > before:
                    ran = True
                    break
        assert ran, "no other thread ran during 20 calls: the GIL is held"
    finally:
        stop.set()
        sys.setswitchinterval(old)
        t.join()


def test_one_context_shared_by_threads(rng):
    boxes = random_boxes(rng, 500, 2, world=60.0)
    want = ref_pairs(boxes)
    results = []
    with broadphase.Context() as ctx:
        def run():
            for _ in range(10):
                results.append(as_set(ctx.pairs(boxes)) == want)
                ctx.query_point(boxes[0, :2])
        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(results) == 40 and all(results)
