// A world driven through a scene (world_drive.h).
#include "world_drive.h"

#include <stdlib.h>
#include <string.h>

#include "free_all.h"

bp_status bp_wdrive_init(bp_wdrive *d, const bp_world_def *def, size_t n) {
    memset(d, 0, sizeof *d);
    if (!def || n == 0) return BP_ERR_INVALID_ARG;
    d->dim = def->dimension;
    d->n = n;
    size_t per = 2 * (size_t)(def->dimension == 3 ? 3 : 2);
    d->ids = calloc(n, sizeof *d->ids);
    d->move_ids = malloc(n * sizeof *d->move_ids);
    d->move_boxes = malloc(n * per * sizeof *d->move_boxes);
    d->remove_ids = malloc(n * sizeof *d->remove_ids);
    d->add_boxes = malloc(n * per * sizeof *d->add_boxes);
    d->add_defs = malloc(n * sizeof *d->add_defs);
    d->add_ids = malloc(n * sizeof *d->add_ids);
    d->add_slots = malloc(n * sizeof *d->add_slots);
    if (!d->ids || !d->move_ids || !d->move_boxes || !d->remove_ids || !d->add_boxes || !d->add_defs || !d->add_ids ||
        !d->add_slots) {
        bp_wdrive_free(d);
        return BP_ERR_NOMEM;
    }
    bp_status st = bp_world_create(def, &d->world);
    if (st != BP_OK) bp_wdrive_free(d);
    return st;
}

void bp_wdrive_free(bp_wdrive *d) {
    bp_world_destroy(d->world);
    BP_FREE_ALL(d->ids, d->move_ids, d->move_boxes, d->remove_ids, d->add_boxes, d->add_defs, d->add_ids, d->add_slots);
    memset(d, 0, sizeof *d);
}

static void wdrive_add(bp_wdrive *d, const bp_wscene *s, size_t k) {
    size_t per = 2 * (size_t)d->dim;
    bp_wscene_box(s, k, d->add_boxes + d->nadd * per);
    bp_proxy_def pd = bp_default_proxy_def();
    pd.kind = bp_wscene_is_static(s, k) ? BP_PROXY_STATIC : BP_PROXY_MOVING;
    pd.category = bp_wscene_category(s, k);
    pd.mask = bp_wscene_mask(s, k);
    pd.user = s->serial[k];
    d->add_defs[d->nadd] = pd;
    d->add_slots[d->nadd++] = (uint32_t)k;
}

void bp_wdrive_prepare_wscene_start(bp_wdrive *d, const bp_wscene *s) {
    d->nmove = d->nremove = d->nadd = 0;
    for (size_t k = 0; k < s->n; ++k) wdrive_add(d, s, k);
}

void bp_wdrive_prepare_wscene_step(bp_wdrive *d, const bp_wscene *s) {
    size_t per = 2 * (size_t)d->dim;
    d->nmove = d->nremove = d->nadd = 0;
    for (size_t m = 0; m < s->nmoved; ++m) {
        size_t k = s->moved[m];
        d->move_ids[d->nmove] = d->ids[k];
        bp_wscene_box(s, k, d->move_boxes + d->nmove * per);
        d->nmove++;
    }
    for (size_t m = 0; m < s->nrespawned; ++m) {
        size_t k = s->respawned[m];
        d->remove_ids[d->nremove++] = d->ids[k];
        wdrive_add(d, s, k);
    }
}

void bp_wdrive_prepare_scene_start(bp_wdrive *d, const bp_scene *s) {
    size_t per = 2 * (size_t)d->dim;
    d->nmove = d->nremove = d->nadd = 0;
    for (size_t k = 0; k < s->n; ++k) {
        bp_scene_box(s, k, d->add_boxes + k * per);
        bp_proxy_def pd = bp_default_proxy_def();
        pd.user = k;
        d->add_defs[k] = pd;
        d->add_slots[k] = (uint32_t)k;
    }
    d->nadd = s->n;
}

void bp_wdrive_prepare_scene_step(bp_wdrive *d, const bp_scene *s) {
    d->nmove = d->nremove = d->nadd = 0;
    bp_scene_boxes(s, d->move_boxes);
    memcpy(d->move_ids, d->ids, s->n * sizeof *d->ids);
    d->nmove = s->n;
}

#define WDRIVE_TRY(call, name)                                                                     \
    do {                                                                                           \
        bp_status st_ = (call);                                                                    \
        if (st_ != BP_OK) {                                                                        \
            d->failed = st_;                                                                       \
            d->failed_call = name;                                                                 \
            return st_;                                                                            \
        }                                                                                          \
    } while (0)

bp_status bp_wdrive_apply(bp_wdrive *d) {
    d->failed = BP_OK;
    d->failed_call = NULL;
    // The floats have the bp_box2 / bp_box3 layout.
    const void *mb = d->move_boxes, *ab = d->add_boxes;
    if (d->nmove) {
        if (d->dim == 2) WDRIVE_TRY(bp_world_move_batch2(d->world, d->move_ids, mb, d->nmove), "bp_world_move_batch2");
        else WDRIVE_TRY(bp_world_move_batch3(d->world, d->move_ids, mb, d->nmove), "bp_world_move_batch3");
    }
    if (d->nremove) WDRIVE_TRY(bp_world_remove_batch(d->world, d->remove_ids, d->nremove), "bp_world_remove_batch");
    if (d->nadd) {
        if (d->dim == 2)
            WDRIVE_TRY(bp_world_add_batch2(d->world, ab, d->add_defs, d->nadd, d->add_ids), "bp_world_add_batch2");
        else WDRIVE_TRY(bp_world_add_batch3(d->world, ab, d->add_defs, d->nadd, d->add_ids), "bp_world_add_batch3");
    }
    WDRIVE_TRY(bp_world_update(d->world, &d->events), "bp_world_update");
    return BP_OK;
}

void bp_wdrive_commit(bp_wdrive *d) {
    for (size_t m = 0; m < d->nadd; ++m) d->ids[d->add_slots[m]] = d->add_ids[m];
}

size_t bp_wdrive_user_pairs(const bp_world_pairs *pairs, bp_wref_pair **buf, size_t *cap) {
    if (pairs->count + 1 > *cap) {
        size_t c = pairs->count + pairs->count / 2 + 16;
        bp_wref_pair *b = realloc(*buf, c * sizeof *b);
        if (!b) return (size_t)-1;
        *buf = b;
        *cap = c;
    }
    for (size_t k = 0; k < pairs->count; ++k) {
        uint64_t a = pairs->pairs[k].user_a, b = pairs->pairs[k].user_b;
        (*buf)[k] = a < b ? (bp_wref_pair){a, b} : (bp_wref_pair){b, a};
    }
    bp_wref_sort(*buf, pairs->count);
    return pairs->count;
}

// Slot k of the world scene added to the reference world (its serial, box, kind and filter).
static int ref_add_slot(bp_wref *ref, const bp_wscene *s, size_t k) {
    float box[6];
    bp_wscene_box(s, k, box);
    return bp_wref_add(ref, s->serial[k], box, bp_wscene_is_static(s, k), bp_wscene_category(s, k),
                       bp_wscene_mask(s, k));
}

int bp_wdrive_ref_wscene_start(bp_wref *ref, const bp_wscene *s) {
    for (size_t k = 0; k < s->n; ++k)
        if (ref_add_slot(ref, s, k) != 0) return -1;
    return bp_wref_update(ref) == 0 ? 0 : -1;
}

int bp_wdrive_ref_wscene_step(bp_wref *ref, const bp_wscene *s) {
    float box[6];
    for (size_t m = 0; m < s->nmoved; ++m) {
        bp_wscene_box(s, s->moved[m], box);
        if (bp_wref_move(ref, s->serial[s->moved[m]], box) != 0) return -1;
    }
    for (size_t m = 0; m < s->nrespawned; ++m)
        if (bp_wref_remove(ref, s->dead[m]) != 0 || ref_add_slot(ref, s, s->respawned[m]) != 0) return -1;
    return bp_wref_update(ref) == 0 ? 0 : -1;
}

int bp_wdrive_ref_scene_start(bp_wref *ref, const bp_scene *s) {
    float box[6];
    for (size_t k = 0; k < s->n; ++k) {
        bp_scene_box(s, k, box);
        if (bp_wref_add(ref, k, box, false, 1, UINT64_MAX) != 0) return -1;
    }
    return bp_wref_update(ref) == 0 ? 0 : -1;
}

int bp_wdrive_ref_scene_step(bp_wref *ref, const bp_scene *s) {
    float box[6];
    for (size_t k = 0; k < s->n; ++k) {
        bp_scene_box(s, k, box);
        if (bp_wref_move(ref, k, box) != 0) return -1;
    }
    return bp_wref_update(ref) == 0 ? 0 : -1;
}
