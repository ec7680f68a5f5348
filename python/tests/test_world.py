"""World: the persistent world against a numpy model (pairs and events after random batches of
adds, moves, removes and filter changes), the docs/scenes.md world scenes, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_boxes

import broadphase
from broadphase import scenes

pytestmark = pytest.mark.skipif(not broadphase._world.available(), reason="the library has no persistent world")


class Model:
    """The world as plain arrays: the answer every update must give."""

    def __init__(self, dim):
        self.dim = dim
        self.live = {}  # id -> [box (float32 row), kind, category, mask, user]

    def pairs(self):
        ids = sorted(self.live)
        if not ids:
            return set()
        rows = [self.live[i] for i in ids]
        b = np.array([r[0] for r in rows], dtype=np.float32)
        d = self.dim
        hit = np.ones((len(ids), len(ids)), dtype=bool)
        for a in range(d):
            hit &= (b[:, None, a] <= b[None, :, d + a]) & (b[None, :, a] <= b[:, None, d + a])
        kind = np.array([r[1] for r in rows])
        cat = np.array([r[2] for r in rows], dtype=np.uint64)
        mask = np.array([r[3] for r in rows], dtype=np.uint64)
        hit &= (cat[:, None] & mask[None, :]) != 0
        hit &= (cat[None, :] & mask[:, None]) != 0
        hit &= ~((kind[:, None] == 1) & (kind[None, :] == 1))
        i, j = np.nonzero(np.triu(hit, 1))
        return {(ids[a], ids[b_]) for a, b_ in zip(i.tolist(), j.tolist())}


def as_pairs(arr):
    assert arr.dtype == np.uint64 and arr.ndim == 2 and arr.shape[1] == 2
    out = [tuple(r) for r in arr.tolist()]
    assert out == sorted(out), "pairs not sorted by (a, b)"
    assert all(a < b for a, b in out)
    return set(out)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("mode", ["auto", "incremental", "rebuild"])
def test_world_random_batches(rng, dim, mode):
    model = Model(dim)
    with broadphase.World(dim=dim, mode=mode) as world:
        prev = set()
        for step in range(25):
            # add a batch with random kinds, filters and users
            n = int(rng.integers(0, 40))
            boxes = random_boxes(rng, n, dim, world=50.0, size=5.0)
            kind = rng.integers(0, 2, n) * (rng.random(n) < 0.3)
            cat = rng.choice([1, 2, 4, 3], n).astype(np.uint64)
            mask = np.array([1, 2, 7, broadphase.ALL], dtype=np.uint64)[rng.integers(0, 4, n)]
            user = rng.integers(0, 1 << 62, n).astype(np.uint64)
            ids = world.add(boxes, kind=kind, category=cat, mask=mask, user=user)
            assert ids.dtype == np.uint64 and len(set(ids.tolist())) == n and 0 not in ids.tolist()
            for k, i in enumerate(ids.tolist()):
                model.live[i] = [boxes[k], int(kind[k]), int(cat[k]), int(mask[k]), int(user[k])]
            live = np.array(sorted(model.live), dtype=np.uint64)
            if len(live):
                mv = rng.choice(live, size=min(len(live), int(rng.integers(0, 30))), replace=False)
                nb = random_boxes(rng, len(mv), dim, world=50.0, size=5.0)
                world.move(mv, nb)
                for k, i in enumerate(mv.tolist()):
                    model.live[i][0] = nb[k]
                rm = rng.choice(live, size=min(len(live), int(rng.integers(0, 10))), replace=False)
                world.remove(rm)
                for i in rm.tolist():
                    del model.live[i]
                left = np.array(sorted(model.live), dtype=np.uint64)
                if len(left) and rng.random() < 0.5:
                    k = left[: int(rng.integers(1, min(5, len(left)) + 1))]
                    world.set_filter(k, 2, 2)
                    world.set_kind(k, "moving")
                    world.set_user(k, 99)
                    for i in k.tolist():
                        model.live[i][1:] = [0, 2, 2, 99]
            ev = world.update()
            now = model.pairs()
            assert as_pairs(world.pairs().ids) == now, f"step {step}"
            assert as_pairs(ev.begins) == now - prev and as_pairs(ev.ends) == prev - now, f"step {step}"
            # user values row for row with the events
            for (a, b), (ua, ub) in zip(ev.begins.tolist(), ev.begins_user.tolist()):
                assert (ua, ub) == (model.live[a][4], model.live[b][4])
            world.validate()
            st = world.stats
            assert st.proxies == len(model.live) and st.pairs == len(now)
            assert st.begins == len(now - prev) and st.ends == len(prev - now)
            prev = now
        # queries against the current boxes
        if model.live:
            lo = np.full(dim, 10.0)
            hi = np.full(dim, 30.0)
            hits = world.query_box(lo, hi)
            want = sorted(i for i, r in model.live.items()
                          if (r[0][:dim] <= np.float32(30.0)).all() and (np.float32(10.0) <= r[0][dim:]).all())
            assert hits.ids.tolist() == want
            assert hits.users.tolist() == [model.live[i][4] for i in want]
            some = next(iter(model.live))
            info = world.get(some)
            assert info.lo.tolist() == model.live[some][0][:dim].tolist() and info.user == model.live[some][4]
            p = model.live[some][0][:dim]
            assert some in world.query_point(p).ids.tolist()
            assert some in world.query_sphere(p, 0.0).ids.tolist()


def _world_scene_events(name, n, dim, frames):
    s = scenes.make(name, n, dim)
    out = {}
    with broadphase.World(dim=dim) as world:
        if name == "static":
            kind = np.where(s.moving, 0, 1)
            ids = world.add(s.boxes(), kind=kind)
            moving = np.flatnonzero(s.moving)
        else:
            ids = world.add(s.boxes(), category=s.category, mask=s.mask)
        ev = world.update()
        out[0] = (len(world.pairs().ids), len(ev.begins), len(ev.ends))
        for f in range(1, max(frames) + 1):
            if name == "static":
                s.step()
                world.move(ids[moving], s.boxes()[moving])
            else:
                dead = s.step()
                alive = np.setdiff1d(np.arange(s.n), dead)
                world.move(ids[alive], s.boxes()[alive])
                if len(dead):
                    world.remove(ids[dead])
                    ids[dead] = world.add(s.boxes()[dead], category=s.category[dead], mask=s.mask[dead])
            ev = world.update()
            if f in frames:
                out[f] = (len(world.pairs().ids), len(ev.begins), len(ev.ends))
                world.validate()
            if name == "static":  # every moving object moved, no static one: the near pass
                assert 0 < world.stats.near_hits <= len(moving)
    return out


@pytest.mark.parametrize("name,dim,n,frames,want", [
    ("static", 2, 10000, (10,), {0: 38, 10: (24, 3, 2)}),
    ("static", 3, 10000, (10,), {0: 80, 10: (74, 12, 7)}),
    ("shooter", 2, 1000, (10, 100), {0: 39, 10: (39, 6, 7), 100: (53, 7, 7)}),
    ("shooter", 3, 1000, (10, 100), {0: 692, 10: (655, 113, 107), 100: (640, 113, 137)}),
])
def test_world_scenes(name, dim, n, frames, want):
    """The docs/scenes.md check values of the world scenes (seed 1), through the World class."""
    got = _world_scene_events(name, n, dim, frames)
    assert got[0][0] == want[0] and got[0][1] == want[0] and got[0][2] == 0
    for f in frames:
        assert got[f] == want[f], f"{name} {dim}D N={n} frame {f}"


def test_world_single_and_defaults():
    with broadphase.World() as w:
        a = w.add([0, 0, 1, 1])
        b = w.add([1, 1, 2, 2], user=7)
        assert isinstance(a, int) and isinstance(b, int)
        ev = w.update()
        assert ev.begins.tolist() == [[a, b]] and ev.begins_user.tolist() == [[0, 7]]
        w.move(b, [5, 5, 6, 6])
        assert w.update().ends.tolist() == [[a, b]]
        info = w.get(b)
        assert info.kind == "moving" and info.category == 1 and info.mask == broadphase.ALL and info.user == 7
        assert w.update().begins.shape == (0, 2)  # nothing changed


def test_world_errors():
    with broadphase.World(dim=2) as w:
        ids = w.add(np.array([[0, 0, 1, 1], [2, 2, 3, 3]]))
        bad = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [3, 0, 2, 1.0]])
        with pytest.raises(ValueError, match=r"row 2 .*min > max on axis 0") as e:
            w.add(bad)
        assert e.value.row == 2 and w.stats.proxies == 2  # all or nothing
        with pytest.raises(ValueError, match="NaN or infinite"):
            w.move(ids, np.array([[0, 0, 1, 1], [np.nan, 0, 1, 1]]))
        assert w.get(int(ids[1])).lo.tolist() == [2, 2]  # nothing moved
        w.remove(ids[0])
        with pytest.raises(broadphase.StaleIdError, match=r"ids row 1 .*removed") as e:
            w.remove(ids[::-1])
        assert e.value.row == 1 and e.value.status_name == "BP_ERR_STALE" and isinstance(e.value, ValueError)
        with pytest.raises(broadphase.StaleIdError):
            w.get(int(ids[0]))
        with pytest.raises(ValueError, match="stale"):
            w.move(int(ids[0]), [0, 0, 1, 1])
        with pytest.raises(broadphase.StaleIdError, match="null") as e:  # 0: the library's null id
            w.get(0)
        assert e.value.status_name == "BP_ERR_NULL_PROXY"
        with pytest.raises(broadphase.StaleIdError, match=r"ids row 1 \(id 0\) is 0, the null id") as e:
            w.move([int(ids[1]), 0], np.zeros((2, 4)))
        assert e.value.row == 1 and w.get(int(ids[1])).lo.tolist() == [2, 2]
        with pytest.raises(broadphase.StaleIdError, match=r"set_user: ids row 0 \(id 0\) is 0, the null id"):
            w.set_user(0, 5)
        with pytest.raises(ValueError, match="kind"):
            w.add([0, 0, 1, 1], kind="flying")
        with pytest.raises(ValueError, match="kind row 0 is 5"):
            w.add(np.zeros((1, 4)), kind=np.array([5]))
        with pytest.raises(ValueError, match="negative"):
            w.add(np.zeros((2, 4)), user=np.array([1, -1]))
        with pytest.raises(ValueError, match="2 ids and 3 boxes"):
            w.move(np.array([1, 2], dtype=np.uint64), np.zeros((3, 4)))
        with pytest.raises(ValueError, match="3D boxes given to a 2D world"):
            w.add(np.zeros((1, 6)))
        with pytest.raises(ValueError, match="negative radius"):
            w.query_sphere([0, 0], -1.0)
        with pytest.raises(TypeError):
            w.add(np.zeros((1, 4)), category=1.5)
    with pytest.raises(ValueError, match="closed"):
        w.update()
    with pytest.raises(ValueError, match="mode"):
        broadphase.World(mode="lazy")
    other = broadphase.World()
    x = other.add([0, 0, 1, 1])
    with broadphase.World() as w2:
        w2.add([0, 0, 1, 1])
        with pytest.raises(broadphase.StaleIdError):  # another world's id
            w2.get(x if x != w2.add([5, 5, 6, 6]) else x + 1)
    other.close()
