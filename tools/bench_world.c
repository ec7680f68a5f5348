// `broadphase bench` and the persistent world (issue #13):
//  - the rows world, world-incremental and world-rebuild (bp_world, its mode forced for the
//    last two) on every scene. On the stateless scenes every object is a moving proxy, moved
//    every frame: the cost of the world over the context when everything moves. On the world
//    scenes the world is told only what changed (bench/world_drive.c);
//  - the world scenes (static, shooter) for our stateless rows: every box each frame, the pairs
//    the scene does not count dropped after timing, so every row's pair count agrees;
//  - the world scenes for the peers' persistent interfaces (bench/peers/world_peers.h).
// Frame 0 (every add and the first update) is untimed; each later frame times the world calls
// (move, remove and add batches and the update) or the stateless call. --check compares every
// frame with the reference world (bench/world_ref.c): pairs for every row, begins and ends for
// the world rows; the peers are always compared.
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "peers.h"
#include "world_drive.h"
#include "world_peers.h"
#include "world_ref.h"

bool bm_peer_applies(int scene, size_t pk, int dim) {
    return bm_scene_is_world(scene) ? bp_wpeer_supports(pk, dim) : bp_peer_supports(pk, dim);
}

// A scene as a world sees it: slots, their boxes, what the last step changed.
typedef struct bw_source {
    int scene;
    bool world;       // a world scene (ws); else a stateless scene (s), every object moving
    bp_scene s;
    bp_wscene ws;
    int dim;
    size_t n;         // slots
} bw_source;

static int bw_init(bw_source *src, const bm_opts *o, int scene, size_t n) {
    memset(src, 0, sizeof *src);
    src->scene = scene;
    src->world = bm_scene_is_world(scene);
    src->dim = o->dim;
    int rc = src->world ? bp_wscene_init(&src->ws, bm_wscene(scene), n, o->dim, o->seed)
                        : bp_scene_init_kind(&src->s, (bp_scene_kind)scene, n, o->dim, o->seed);
    if (rc != 0) {
        fprintf(stderr, "broadphase bench: cannot build scene %s with N = %zu (out of memory?)\n",
                bm_scene_name(scene), n);
        return -1;
    }
    src->n = src->world ? src->ws.n : src->s.n;
    return 0;
}

static void bw_free(bw_source *src) {
    if (src->world) bp_wscene_free(&src->ws);
    else bp_scene_free(&src->s);
}

static void bw_step(bw_source *src) {
    if (src->world) bp_wscene_step(&src->ws);
    else bp_scene_step(&src->s);
}

// Every slot's box, in bp_box2 / bp_box3 layout.
static void bw_boxes(const bw_source *src, float *out) {
    if (!src->world) {
        bp_scene_boxes(&src->s, out);
        return;
    }
    size_t per = 2 * (size_t)src->dim;
    for (size_t k = 0; k < src->n; ++k) bp_wscene_box(&src->ws, k, out + k * per);
}

static uint64_t bw_serial(const bw_source *src, size_t k) {
    return src->world ? src->ws.serial[k] : k;
}

// The reference world, brought to the source's current frame.
static int bw_ref_frame(bp_wref *ref, const bw_source *src, size_t frame) {
    if (src->world)
        return frame == 0 ? bp_wdrive_ref_wscene_start(ref, &src->ws) : bp_wdrive_ref_wscene_step(ref, &src->ws);
    return frame == 0 ? bp_wdrive_ref_scene_start(ref, &src->s) : bp_wdrive_ref_scene_step(ref, &src->s);
}

// A growable list of serial pairs.
typedef struct bw_pairs {
    bp_wref_pair *p;
    size_t count, cap;
} bw_pairs;

static bool bw_push(bw_pairs *l, uint64_t a, uint64_t b) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        bp_wref_pair *p = realloc(l->p, cap * sizeof *p);
        if (!p) return false;
        l->p = p;
        l->cap = cap;
    }
    l->p[l->count++] = a < b ? (bp_wref_pair){a, b} : (bp_wref_pair){b, a};
    return true;
}

// Compares one list with the reference's; prints the first difference of our rows.
static bool bw_same(const bp_wref_pair *got, size_t ngot, const bp_wref_pair *want, size_t nwant, const char *what,
                    const char *where, bool print, size_t *missing, size_t *extra) {
    size_t miss = 0, ext = 0;
    bool same = bp_wref_compare(got, ngot, want, nwant, &miss, &ext);
    *missing += miss;
    *extra += ext;
    if (!same && print)
        fprintf(stderr, "MISMATCH %s: %s: %zu, the reference world has %zu (%zu missing, %zu extra)\n", where, what,
                ngot, nwant, miss, ext);
    return same;
}

static void bw_where(char *buf, size_t size, const bm_opts *o, int scene, size_t n, const char *row, size_t f) {
    snprintf(buf, size, "scene %s dim %d N %zu method %s frame %zu", bm_scene_name(scene), o->dim, n, row, f);
}

// --check of a world row's frame f: its pairs, begins and ends against the reference world's.
// Returns 0, 1 on a mismatch (printed), -1 on an error (message printed).
static int bw_check_world(const bm_opts *o, bp_wref *ref, const bw_source *src, size_t n, const char *row, size_t f,
                          const bp_wdrive *d, bw_pairs *got) {
    if (bw_ref_frame(ref, src, f) != 0) {
        fprintf(stderr, "broadphase bench: the reference world ran out of memory\n");
        return -1;
    }
    char where[200];
    bw_where(where, sizeof where, o, src->scene, n, row, f);
    bp_world_pairs pairs;
    const bp_world_pairs *lists[3] = {&pairs, &d->events.begins, &d->events.ends};
    static const char *const names[3] = {"pairs", "begins", "ends"};
    bp_status st = bp_world_get_pairs(d->world, &pairs);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase bench: bp_world_get_pairs: %s\n", bp_status_string(st));
        return -1;
    }
    size_t nw[3], missing = 0, extra = 0;
    const bp_wref_pair *want[3] = {bp_wref_pairs(ref, &nw[0]), bp_wref_begins(ref, &nw[1]), bp_wref_ends(ref, &nw[2])};
    for (int k = 0; k < 3; ++k) {
        size_t c = bp_wdrive_user_pairs(lists[k], &got->p, &got->cap);
        if (c == (size_t)-1) {
            fprintf(stderr, "broadphase bench: out of memory in --check\n");
            return -1;
        }
        if (!bw_same(got->p, c, want[k], nw[k], names[k], where, true, &missing, &extra)) return 1;
    }
    return 0;
}

// The frames of a BM_WORLD row: the scene's changes prepared, then applied (the timed calls).
// `ref` (--check) or NULL. Returns as bm_run.
static int bw_world_frames(const bm_opts *o, bw_source *src, size_t n, const bm_method *m, bp_wdrive *d,
                           bp_wref *ref, bw_pairs *got, double *times, bm_result *res, bm_mem *mem) {
    const size_t frames = (size_t)o->frames;
    bool mismatch = false;
    for (size_t f = 0;; ++f) {
        if (f > 0) bw_step(src);
        if (src->world) {
            if (f == 0) bp_wdrive_prepare_wscene_start(d, &src->ws);
            else bp_wdrive_prepare_wscene_step(d, &src->ws);
        } else {
            if (f == 0) bp_wdrive_prepare_scene_start(d, &src->s);
            else bp_wdrive_prepare_scene_step(d, &src->s);
        }
        double t0 = bm_now();
        bp_status st = bp_wdrive_apply(d);
        double t = bm_now() - t0;
        if (st != BP_OK) {
            fprintf(stderr, "broadphase bench: %s on %s N = %zu frame %zu: %s: %s\n", m->name,
                    bm_scene_name(src->scene), n, f, d->failed_call, bp_status_string(st));
            return -1;
        }
        bp_wdrive_commit(d);
        if (ref && !mismatch) {
            int c = bw_check_world(o, ref, src, n, m->name, f, d, got);
            if (c < 0) return -1;
            mismatch = c > 0;
        }
        if (f == frames) {
            bp_world_stats stats;
            if (bp_world_get_stats(d->world, &stats) == BP_OK) {
                res->pairs = stats.pairs;
                res->checks = stats.checks;
            }
        }
        if (bm_frame_end(res, times, f, t, frames, mem)) return mismatch ? 1 : 0;
    }
}

// A BM_WORLD row: the world through the scene's changes, in batches.
static int bw_run_world_row(const bm_opts *o, bw_source *src, size_t n, const bm_method *m, bm_result *res,
                            bm_mem *mem) {
    const size_t frames = (size_t)o->frames;
    const bool check = o->check && !mem;
    int rc = -1;
    double *times = malloc(frames * sizeof *times);
    bp_wref *ref = check ? bp_wref_create(o->dim) : NULL;
    bw_pairs got = {0};
    bp_wdrive d;
    memset(&d, 0, sizeof d);
    if (!times || (check && !ref)) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    if (mem) bm_mem_start(mem);
    bp_world_def def = bp_default_world_def();
    def.dimension = o->dim;
    def.mode = m->mode;
    def.workers = o->workers;
    bp_status st = bp_wdrive_init(&d, &def, src->n);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase bench: %s: cannot create a world: %s\n", m->name, bp_status_string(st));
        goto done;
    }
    rc = bw_world_frames(o, src, n, m, &d, ref, &got, times, res, mem);
done:
    bp_wdrive_free(&d);
    bp_wref_destroy(ref);
    free(got.p);
    free(times);
    return rc;
}

// After timing: the scene's pairs only (never two static objects, filters applied), named by
// serials. False when out of memory (message printed).
static bool bw_keep(const bw_source *src, const bp_pair *pairs, size_t count, bw_pairs *kept) {
    kept->count = 0;
    for (size_t k = 0; k < count; ++k) {
        uint32_t i = pairs[k].i, j = pairs[k].j;
        if (src->world && !bp_wscene_counts(&src->ws, i, j)) continue;
        if (!bw_push(kept, bw_serial(src, i), bw_serial(src, j))) {
            fprintf(stderr, "broadphase bench: out of memory\n");
            return false;
        }
    }
    return true;
}

// The frames of a stateless row on a world scene: every box each frame, the stateless call
// timed. `ref` (--check) or NULL. Returns as bm_run.
static int bw_stateless_frames(const bm_opts *o, bw_source *src, size_t n, bm_stateless *run, bp_wref *ref,
                               bw_pairs *kept, float *boxes, double *times, bm_result *res, bm_mem *mem) {
    const size_t frames = (size_t)o->frames, slots = src->n;
    const bm_method *m = run->m;
    bool mismatch = false;
    for (size_t f = 0;; ++f) {
        if (f > 0) {
            bw_step(src);
            bw_boxes(src, boxes);
        }
        const bp_pair *pairs;
        size_t count;
        double t;
        if (bm_stateless_timed(run, boxes, slots, bm_scene_name(src->scene), n, f, &pairs, &count, &t) != BP_OK)
            return -1;
        if (!bw_keep(src, pairs, count, kept)) return -1;
        if (ref && !mismatch) {
            if (bw_ref_frame(ref, src, f) != 0) {
                fprintf(stderr, "broadphase bench: the reference world ran out of memory\n");
                return -1;
            }
            bp_wref_sort(kept->p, kept->count);
            char where[200];
            bw_where(where, sizeof where, o, src->scene, n, m->name, f);
            size_t nw, missing = 0, extra = 0;
            const bp_wref_pair *want = bp_wref_pairs(ref, &nw);
            mismatch = !bw_same(kept->p, kept->count, want, nw, "pairs", where, true, &missing, &extra);
        }
        if (f == frames) {
            res->pairs = m->kind == BM_MEMCPY ? 0 : kept->count;
            res->checks = bm_stateless_checks(run);
        }
        if (bm_frame_end(res, times, f, t, frames, mem)) return mismatch ? 1 : 0;
    }
}

// A stateless row on a world scene: every box each frame; after timing, the pairs the scene
// does not count are dropped and the rest named by serials.
static int bw_run_stateless_row(const bm_opts *o, bw_source *src, size_t n, const bm_method *m, bm_result *res,
                                bm_mem *mem) {
    const size_t frames = (size_t)o->frames, slots = src->n;
    const bool check = o->check && !mem && m->kind != BM_MEMCPY;
    int rc = -1;
    float *boxes = malloc(slots * 2 * (size_t)o->dim * sizeof *boxes);
    double *times = malloc(frames * sizeof *times);
    bp_wref *ref = check ? bp_wref_create(o->dim) : NULL;
    bw_pairs kept = {0};
    bm_stateless run;
    memset(&run, 0, sizeof run);
    if (!boxes || !times || (check && !ref)) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bw_boxes(src, boxes);
    if (mem) bm_mem_start(mem);
    if (bm_skip_estimated(res, m, boxes, slots, o->dim)) {
        rc = 0;
        goto done;
    }
    if (bm_stateless_init(&run, m, o, slots) != 0) goto done;
    rc = bw_stateless_frames(o, src, n, &run, ref, &kept, boxes, times, res, mem);
done:
    bm_stateless_free(&run);
    bp_wref_destroy(ref);
    free(kept.p);
    free(times);
    free(boxes);
    return rc;
}

int bm_run_world(const bm_opts *o, int scene, size_t n, const bm_method *m, bm_result *res, bm_mem *mem) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    bw_source src;
    if (bw_init(&src, o, scene, n) != 0) return -1;
    int rc = m->kind == BM_WORLD ? bw_run_world_row(o, &src, n, m, res, mem)
                                 : bw_run_stateless_row(o, &src, n, m, res, mem);
    bw_free(&src);
    return rc;
}

// Slot k of the world scene added to a world peer.
static inline int bw_peer_add(void *w, const bp_wscene *s, size_t k, float *box) {
    bp_wscene_box(s, k, box);
    return bp_wpeer_add(w, (uint32_t)k, s->serial[k], box, bp_wscene_is_static(s, k), bp_wscene_category(s, k),
                        bp_wscene_mask(s, k));
}

// One frame's calls on a world peer: the moved slots, then the dead removed and the born added
// (the order bp_wdrive uses), then the update.
static int bw_peer_frame(void *w, const bp_wscene *s, size_t f, float *box, float *vel) {
    const size_t d = (size_t)s->dim;
    int prc = 0;
    if (f == 0) {
        for (size_t k = 0; k < s->n && prc == 0; ++k) prc = bw_peer_add(w, s, k, box);
    } else {
        for (size_t m = 0; m < s->nmoved && prc == 0; ++m) {
            size_t k = s->moved[m];
            bp_wscene_box(s, k, box);
            for (size_t a = 0; a < d; ++a) vel[a] = (float)s->v[k * d + a];
            prc = bp_wpeer_move(w, (uint32_t)k, box, vel);
        }
        for (size_t m = 0; m < s->nrespawned && prc == 0; ++m) prc = bp_wpeer_remove(w, s->respawned[m]);
        for (size_t m = 0; m < s->nrespawned && prc == 0; ++m) prc = bw_peer_add(w, s, s->respawned[m], box);
    }
    return prc == 0 ? bp_wpeer_update(w) : prc;
}

// After timing frame f: the peer's pairs, begins and ends against the reference world's; a
// difference marks the result wrong. Returns 0, or -1 on an error (message printed).
static int bw_compare_wpeer(bp_wref *ref, const bw_source *src, size_t f, const bp_wpeer_pair *const *lists,
                            const size_t *counts, bm_result *res) {
    if (bw_ref_frame(ref, src, f) != 0) {
        fprintf(stderr, "broadphase bench: the reference world ran out of memory\n");
        return -1;
    }
    size_t nw[3], missing = 0, extra = 0;
    const bp_wref_pair *want[3] = {bp_wref_pairs(ref, &nw[0]), bp_wref_begins(ref, &nw[1]), bp_wref_ends(ref, &nw[2])};
    bool same = true;
    for (int k = 0; k < 3; ++k) {
        // bp_wpeer_pair and bp_wref_pair are both two uint64_t (a < b).
        const bp_wref_pair *got = (const bp_wref_pair *)(const void *)lists[k];
        same &= bw_same(got, counts[k], want[k], nw[k], "", "", false, &missing, &extra);
    }
    if (!same) bm_mark_wrong(res, f, missing, extra);
    return 0;
}

// The frames of a world peer: each frame's calls timed. `ref` NULL with `mem` (no comparison).
// Returns 0, or -1 on an error (message printed).
static int bw_wpeer_frames(const bm_opts *o, bw_source *src, size_t n, void *w, size_t pk, bp_wref *ref,
                           double *times, bm_result *res, bm_mem *mem) {
    const size_t frames = (size_t)o->frames;
    const char *pname = bp_peer_name(pk);
    float box[6], vel[3];
    for (size_t f = 0;; ++f) {
        if (f > 0) bw_step(src);
        bm_watchdog_arm(BM_SKIP_SECONDS);
        double t0 = bm_now();
        int prc = bw_peer_frame(w, &src->ws, f, box, vel);
        double t = bm_now() - t0;
        bm_watchdog_arm(0.0);
        int end = bm_peer_outcome(prc, res, pname, bm_scene_name(src->scene), n, f);
        if (end != 0) return end > 0 ? 0 : -1;
        const bp_wpeer_pair *lists[3];
        size_t counts[3];
        if (bp_wpeer_results(w, &lists[0], &counts[0], &lists[1], &counts[1], &lists[2], &counts[2]) != 0) {
            fprintf(stderr, "broadphase bench: %s: out of memory sorting its results\n", pname);
            return -1;
        }
        if (!mem && bw_compare_wpeer(ref, src, f, lists, counts, res) != 0) return -1;
        if (f == frames) {
            res->pairs = counts[0];
            res->checks = bp_wpeer_candidates(w);
        }
        if (bm_frame_end(res, times, f, t, frames, mem)) return 0;
    }
}

int bm_run_world_peer(const bm_opts *o, bp_wscene_kind kind, size_t n, size_t pk, bm_result *res, bm_mem *mem) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    bw_source src;
    if (bw_init(&src, o, BP_SCENE_COUNT + (int)kind, n) != 0) return -1;
    const size_t frames = (size_t)o->frames;
    int rc = -1;
    double *times = malloc(frames * sizeof *times);
    bp_wref *ref = mem ? NULL : bp_wref_create(o->dim);
    void *w = NULL;
    if (!times || (!mem && !ref)) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    if (mem) bm_mem_start(mem);
    float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3];
    for (int a = 0; a < 3; ++a) hi[a] = (float)src.ws.world;
    w = bp_wpeer_create(pk, o->dim, src.n, lo, hi);
    if (!w) {
        fprintf(stderr, "broadphase bench: %s: cannot create its world for N = %zu in %dD\n", bp_peer_name(pk), n,
                o->dim);
        goto done;
    }
    bp_wpeer_set_time_limit(w, BM_SKIP_SECONDS);
    rc = bw_wpeer_frames(o, &src, n, w, pk, ref, times, res, mem);
done:
    bp_wpeer_destroy(w);
    bp_wref_destroy(ref);
    free(times);
    bw_free(&src);
    return rc;
}
