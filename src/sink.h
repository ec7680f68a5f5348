// The one pair writer: every pair a method finds goes through a bp_sink, which makes it (min, max),
// keeps only the pairs that cross a bipartite split, and when full either grows the pair buffer,
// hands a batch to the user's callback, streams whole lines to a large output, or moves on to
// the next block of a worker. Its fields are read and written here and in sink.c only: methods
// use the functions below (bp_sink_push for one pair; a bp_pair_writer for hot loops).
#ifndef BP_SINK_H
#define BP_SINK_H

#include "core.h"

/// What a context keeps for its pairs between calls; a sink borrows it for one call.
typedef struct bp_pair_store {
    bp_pair *pairs;     // buffer-mode output (64-byte aligned through the hooks)
    size_t cap;
    size_t count;       // pairs in `pairs` after the last successful buffer-mode call
    bp_pair *chunk;     // staging: callback batches, streamed lines
    size_t chunk_cap;
} bp_pair_store;

/// How one call wants its pairs.
typedef struct bp_sink_spec {
    uint32_t split;     // bipartite: keep pairs (i < split <= j), j re-based on delivery; 0 = all
    bp_pair_fn *fn;     // NULL: into the store's buffer
    void *user;
    bool sorted;        // collect everything, sort (bp_pair_sort), then deliver
    bool may_stream;    // a large output may be streamed (not when workers find the pairs: their
                        // merge streams its copies itself, src/par.c)
} bp_sink_spec;

typedef struct bp_sink bp_sink;

/// A chain sink's source of buffers (src/par.c: a worker's blocks): given how many pairs the full
/// buffer holds, returns the next buffer and its capacity.
typedef bp_status bp_sink_next_fn(void *user, size_t filled, bp_pair **buf, size_t *cap);

struct bp_sink {
    bp_pair *buf;
    size_t count, cap;  // count < cap between pushes
    uint32_t split;
    bp_status (*flush)(bp_sink *s);  // called when count == cap; makes room or fails
    bp_context *ctx;
    bp_pair_store *store;
    bp_pair_fn *fn;
    void *user;
    uint64_t delivered;  // pairs handed to the callback, or streamed to `lines`
    // Streamed buffer mode: `buf` is the staging chunk, and whole 64-byte lines of 8 pairs go to
    // `lines` (the pair buffer) at `delivered`, written with non-temporal stores. NULL otherwise.
    bp_pair *lines;
    size_t lines_cap;
    bp_sink_next_fn *next;  // chain mode
    void *next_user;
};

/// Room a flush always leaves (the callback batch is larger than this).
#define BP_SINK_MIN_ROOM 64

/// Opens the sink of one call on the context's store. From BP_STREAM_PAIRS pairs on the last
/// buffer-mode call (and spec->may_stream), buffer mode streams. BP_ERR_NOMEM when the first
/// buffer cannot be had.
bp_status bp_sink_open(bp_sink *s, bp_context *ctx, bp_pair_store *store, const bp_sink_spec *spec);

/// A sink writing into buffers that `next` hands out (each full buffer is the caller's from then).
void bp_sink_open_chain(bp_sink *s, uint32_t split, bp_pair *buf, size_t cap, bp_sink_next_fn *next, void *user);

/// After the method: a buffer-mode sink then holds every pair in the store's buffer (streamed
/// lines joined), bp_sink_count of them. Callback mode: nothing to do.
bp_status bp_sink_collect(bp_sink *s);

/// The store's pairs of this call (buffer mode, after bp_sink_collect): for the sort.
static inline bp_pair *bp_sink_pairs(const bp_sink *s) { return s->store->pairs; }
static inline size_t bp_sink_count(const bp_sink *s) { return s->count; }

/// The end of a successful call: sorted pairs to the callback in batches, the callback's last
/// batch, or a bipartite buffer re-based. Returns the callback's BP_ERR_STOPPED.
bp_status bp_sink_finish(bp_sink *s);

/// Ends the call's use of the sink; returns the pairs it reported: delivered to the callback
/// (also after a stop or failure), or in the buffer. A failed call leaves the store's buffer
/// empty; a failed streamed one held its pairs back and reports none.
uint64_t bp_sink_close(bp_sink *s, bool ok);

/// The split of a bipartite call (0: all pairs).
static inline uint32_t bp_sink_split(const bp_sink *s) { return s->split; }

/// Whether the sink collects every pair of the call (bp_sink_claim works) rather than handing
/// batches to a callback.
bool bp_sink_buffered(const bp_sink *s);

/// For pairs found by workers (src/par.c), in order, canonical and filtered already. Buffer mode:
/// makes room for `count` more pairs and returns where they go; the caller writes them, then
/// calls bp_sink_commit. NULL in the other modes (or with *st = BP_ERR_NOMEM), where
/// bp_sink_append delivers them instead.
bp_pair *bp_sink_claim(bp_sink *s, size_t count, bp_status *st);
static inline void bp_sink_commit(bp_sink *s, size_t count) { s->count += count; }

/// Appends `count` such pairs as if they were pushed one by one (callback batches included).
bp_status bp_sink_append(bp_sink *s, const bp_pair *pairs, size_t count);

/// Pushes one pair (either orientation). Returns BP_OK or the flush's error, which the method
/// must return at once.
static inline bp_status bp_sink_push(bp_sink *s, uint32_t a, uint32_t b) {
    if (BP_UNLIKELY(s->split) && ((a < s->split) == (b < s->split))) return BP_OK;
    bp_pair p;
    p.i = a < b ? a : b;
    p.j = a < b ? b : a;
    s->buf[s->count++] = p;
    if (BP_UNLIKELY(s->count == s->cap)) return s->flush(s);
    return BP_OK;
}

/// Makes room for `k` (at most BP_SINK_MIN_ROOM) more pairs, flushing if needed, so that hot
/// loops can then write with bp_sink_put and no per-pair capacity test. The invariant is
/// count < cap between pushes (bp_sink_push writes first and flushes at cap), so the room kept
/// is k plus one: k unchecked writes that all hit must not leave the buffer full without a flush.
static inline bp_status bp_sink_room(bp_sink *s, size_t k) {
    if (BP_UNLIKELY(s->cap - s->count <= k)) return s->flush(s);
    return BP_OK;
}

/// Writes a candidate pair without a capacity test (room reserved with bp_sink_room) and keeps
/// it when `keep` is 1: a branchless way to compact the hits of a SIMD block. The slot is
/// written even when the pair is not kept.
static inline void bp_sink_put(bp_sink *s, uint32_t a, uint32_t b, unsigned keep) {
    bp_pair p;
    p.i = a < b ? a : b;
    p.j = a < b ? b : a;
    s->buf[s->count] = p;
    keep &= (unsigned)(!s->split | ((a < s->split) != (b < s->split)));
    s->count += keep;
}

/// For kernels that store several canonical pairs at once (room reserved, split 0): where the
/// next ones go; bp_sink_advance then keeps `k` of them.
static inline bp_pair *bp_sink_at(const bp_sink *s) { return s->buf + s->count; }
static inline void bp_sink_advance(bp_sink *s, size_t k) { s->count += k; }

/// The sink's buffer and count held in locals through a hot loop: the pair stores could alias the
/// sink's fields, so through the pointer every step would reload them and wait on the last step's
/// count. Opened from the sink, written back before a flush and at the end (bp_writer_close).
typedef struct bp_pair_writer {
    bp_pair *buf;
    size_t count, cap;
    uint32_t split;
} bp_pair_writer;

static inline bp_pair_writer bp_writer_open(const bp_sink *s) {
    bp_pair_writer w = {s->buf, s->count, s->cap, s->split};
    return w;
}

static inline void bp_writer_close(bp_sink *s, const bp_pair_writer *w) { s->count = w->count; }

/// bp_sink_room on the writer: room for k more slots (written or not) and one.
static inline bp_status bp_writer_room(bp_sink *s, bp_pair_writer *w, size_t k) {
    if (BP_LIKELY(w->cap - w->count > k)) return BP_OK;
    s->count = w->count;
    const bp_status st = s->flush(s);
    *w = bp_writer_open(s);
    return st;
}

/// bp_sink_put on the writer.
static inline void bp_writer_put(bp_pair_writer *w, uint32_t a, uint32_t b, unsigned keep) {
    w->buf[w->count].i = a < b ? a : b;
    w->buf[w->count].j = a < b ? b : a;
    keep &= (unsigned)(!w->split | ((a < w->split) != (b < w->split)));
    w->count += keep;
}

/// Where the next pairs go, for kernels that store several at once (canonical, and only where
/// the split is 0); bp_writer_advance then keeps `k` of them.
static inline bp_pair *bp_writer_at(const bp_pair_writer *w) { return w->buf + w->count; }
static inline void bp_writer_advance(bp_pair_writer *w, size_t k) { w->count += k; }

/// Streamed buffer mode with no bipartite split: whether kernels may write whole lines.
static inline bool bp_sink_streams(const bp_sink *s) { return s->lines != NULL && s->split == 0; }

/// Streamed mode: makes room for one more line of 8 pairs at lines + delivered.
bp_status bp_sink_grow_lines(bp_sink *s);

/// Streamed mode, for a kernel that keeps its own waiting pairs (the chunk empty): the next
/// whole line (8 pairs) of the pair buffer, for the caller to fill with non-temporal stores and
/// then bp_sink_line_done; NULL with *st set when the buffer cannot grow.
static inline bp_pair *bp_sink_next_line(bp_sink *s, bp_status *st) {
    if (BP_UNLIKELY(s->delivered + 8 > s->lines_cap)) {
        *st = bp_sink_grow_lines(s);
        if (*st != BP_OK) return NULL;
    }
    return s->lines + s->delivered;
}

/// The same for a kernel whose waiting pairs stay in the chunk: NULL when the sink does not
/// stream or pairs wait (they come first: the order must not depend on the mode).
static inline bp_pair *bp_sink_line(bp_sink *s, bp_status *st) {
    return s->lines && s->count == 0 ? bp_sink_next_line(s, st) : NULL;
}

static inline void bp_sink_line_done(bp_sink *s) { s->delivered += 8; }

/// Streamed mode, for a kernel that holds the pairs of an unfinished line itself: sends the
/// chunk's whole lines out and takes what is left of it (under 8 pairs: *waiting, from the
/// returned pointer), leaving the chunk empty. bp_sink_stream_return puts `count` pairs back.
static inline bp_pair *bp_sink_stream_take(bp_sink *s, size_t *waiting, bp_status *st) {
    if (s->count >= 8) {
        *st = s->flush(s);
        if (*st != BP_OK) return NULL;
    }
    *waiting = s->count;
    s->count = 0;
    return s->buf;
}
static inline bp_pair *bp_sink_stream_back(const bp_sink *s) { return s->buf; }
static inline void bp_sink_stream_return(bp_sink *s, size_t count) { s->count = count; }

#endif
