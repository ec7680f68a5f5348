// The pair writer's modes (src/sink.h): buffer, streamed buffer, callback batches, sorted,
// bipartite, and the chain of a worker's blocks.
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sink.h"

// Pairs handed to a callback per batch: every batch but the last has exactly this many, whatever
// the method and the workers (the chunk holds BP_SINK_MIN_ROOM + 1 more, carried to the next).
#define BP_CHUNK_PAIRS 4096
#define BP_CHUNK_CAP (BP_CHUNK_PAIRS + BP_SINK_MIN_ROOM + 1)
// From this many pairs (the last call's count: 8 MiB, more than a core's cache) buffer mode
// stages pairs in the chunk and appends each full chunk to the pair buffer with non-temporal
// stores: such an output leaves the cache anyway, and streaming stores do not read every line
// before writing it. Measured on the benchmark machine: 64 MiB written at 19.7 GB/s streamed
// against 9 GB/s with plain stores; sort-and-sweep on `line` 2D (every candidate a pair) from
// 10.6 to 5.7 ms at 100,000 boxes (8 million pairs), from 283 to 139 ms at 1,000,000.
#define BP_STREAM_PAIRS ((size_t)1 << 20)

// Buffer mode: grow the pair buffer.
static bp_status flush_grow(bp_sink *s) {
    bp_pair_store *ps = s->store;
    bp_status st = BP_OK;
    ps->pairs = bp_grow(s->ctx, ps->pairs, &ps->cap, s->cap + 1, sizeof *ps->pairs, true, &st);
    if (st != BP_OK) return st;
    s->buf = ps->pairs;
    s->cap = ps->cap;
    return BP_OK;
}

// Copies `count` pairs (a multiple of 8: whole 64-byte lines) with non-temporal stores where
// the destination allows them.
static void stream_copy(bp_pair *dst, const bp_pair *src, size_t count) {
#if defined(__SSE2__)
    if (((uintptr_t)dst & 15u) == 0) {
        __m128i *d = (__m128i *)(void *)dst;
        const __m128i *s = (const __m128i *)(const void *)src;
        for (size_t k = 0; k < count / 2; ++k) _mm_stream_si128(d + k, _mm_loadu_si128(s + k));
        return;
    }
#endif
    memcpy(dst, src, count * sizeof *dst);
}

// Streamed buffer mode: the pair buffer holds at least `need` pairs, old ones kept.
static bp_status reserve_lines(bp_sink *s, size_t need) {
    bp_pair_store *ps = s->store;
    bp_status st = BP_OK;
    ps->pairs = bp_grow(s->ctx, ps->pairs, &ps->cap, need, sizeof *ps->pairs, true, &st);
    s->lines = ps->pairs;
    s->lines_cap = ps->cap;
    return st;
}

bp_status bp_sink_grow_lines(bp_sink *s) { return reserve_lines(s, s->delivered + 8); }

// Streamed buffer mode: s->buf is the chunk, s->delivered the pairs already in the pair buffer
// (always whole lines, so every append starts on a line boundary). Appends the chunk's whole
// lines (8 pairs each) and moves the rest to the chunk's front.
static bp_status flush_stream(bp_sink *s) {
    const size_t whole = s->count & ~(size_t)7;
    bp_status st = reserve_lines(s, s->delivered + whole);
    if (st != BP_OK) return st;
    stream_copy(s->lines + s->delivered, s->buf, whole);
    s->delivered += whole;
    memmove(s->buf, s->buf + whole, (s->count - whole) * sizeof *s->buf);
    s->count -= whole;
    return BP_OK;
}

// Ends streamed buffer mode: the chunk's rest goes to the pair buffer, which the sink then
// describes as in plain buffer mode. The fence orders the streamed stores before any later
// store, so another thread that the caller hands the pairs to sees them.
static bp_status stream_finish(bp_sink *s) {
    const size_t total = s->delivered + s->count;
    bp_status st = reserve_lines(s, total);
    if (st != BP_OK) return st;
    memcpy(s->lines + s->delivered, s->buf, s->count * sizeof *s->buf);
#if defined(__SSE2__)
    _mm_sfence();
#endif
    s->buf = s->lines;
    s->cap = s->lines_cap;
    s->count = total;
    s->delivered = 0;
    s->lines = NULL;
    s->lines_cap = 0;
    s->flush = flush_grow;
    return BP_OK;
}

static bp_status deliver(bp_sink *s, bp_pair *pairs, size_t count) {
    if (count == 0) return BP_OK;
    if (s->split)
        for (size_t k = 0; k < count; ++k) pairs[k].j -= s->split;
    bool go_on = s->fn(pairs, count, s->user);
    s->delivered += count;
    return go_on ? BP_OK : BP_ERR_STOPPED;
}

// Callback mode: hands the first BP_CHUNK_PAIRS pairs (or all, at the end) to the user and keeps
// the rest for the next batch. The chunk holds BP_CHUNK_CAP pairs and a flush comes only when
// fewer than BP_SINK_MIN_ROOM + 1 are free, so every batch but the last is exactly
// BP_CHUNK_PAIRS long: the batches depend on the pairs only, not on how a method asked for room.
static bp_status flush_deliver(bp_sink *s) {
    const size_t c = s->count < BP_CHUNK_PAIRS ? s->count : BP_CHUNK_PAIRS;
    bp_status st = deliver(s, s->buf, c);
    memmove(s->buf, s->buf + c, (s->count - c) * sizeof *s->buf);
    s->count -= c;
    return st;
}

// Chain mode: the full buffer is the owner's; go on in the next one.
static bp_status flush_chain(bp_sink *s) {
    bp_status st = s->next(s->next_user, s->count, &s->buf, &s->cap);
    if (st == BP_OK) s->count = 0;
    return st;
}

static bp_status grow_array(bp_context *ctx, bp_pair **arr, size_t *cap, size_t need) {
    bp_status st = BP_OK;
    *arr = bp_grow(ctx, *arr, cap, need, sizeof **arr, false, &st);
    return st;
}

bp_status bp_sink_open(bp_sink *s, bp_context *ctx, bp_pair_store *store, const bp_sink_spec *spec) {
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->store = store;
    s->split = spec->split;
    // Set in both modes: sorted output to a callback is collected in buffer mode and then
    // delivered in batches.
    s->fn = spec->fn;
    s->user = spec->user;
    const bool buffer_mode = spec->fn == NULL || spec->sorted;
    const bool streamed = buffer_mode && spec->may_stream && store->count >= BP_STREAM_PAIRS && store->pairs &&
                          ((uintptr_t)store->pairs & 63u) == 0;  // whole lines: needs the hooks' alignment
    if ((streamed || !buffer_mode) && !store->chunk) {
        const bp_status st = grow_array(ctx, &store->chunk, &store->chunk_cap, BP_CHUNK_CAP);
        if (st != BP_OK) return st;
    }
    if (streamed) {
        s->buf = store->chunk;
        s->cap = store->chunk_cap;
        s->flush = flush_stream;
        s->lines = store->pairs;
        s->lines_cap = store->cap;
    } else if (buffer_mode) {
        if (!store->pairs) {
            const bp_status st = grow_array(ctx, &store->pairs, &store->cap, 1024);
            if (st != BP_OK) return st;
        }
        s->buf = store->pairs;
        s->cap = store->cap;
        s->flush = flush_grow;
    } else {
        s->buf = store->chunk;
        s->cap = BP_CHUNK_CAP;
        s->flush = flush_deliver;
    }
    return BP_OK;
}

void bp_sink_open_chain(bp_sink *s, uint32_t split, bp_pair *buf, size_t cap, bp_sink_next_fn *next, void *user) {
    memset(s, 0, sizeof *s);
    s->split = split;
    s->buf = buf;
    s->cap = cap;
    s->flush = flush_chain;
    s->next = next;
    s->next_user = user;
}

bool bp_sink_buffered(const bp_sink *s) { return s->flush == flush_grow || s->flush == flush_stream; }

bp_status bp_sink_collect(bp_sink *s) {
    if (s->lines) {
        const bp_status st = stream_finish(s);
        if (st != BP_OK) return st;
    }
    if (bp_sink_buffered(s)) s->store->count = s->count;
    return BP_OK;
}

bp_status bp_sink_finish(bp_sink *s) {
    if (!bp_sink_buffered(s)) {  // callback mode: what the chunk still holds, in whole batches
        bp_status st = BP_OK;
        while (s->count && st == BP_OK) st = flush_deliver(s);
        return st;
    }
    if (s->fn) {  // sorted delivery to a callback: in batches from the sorted buffer
        bp_status st = BP_OK;
        for (size_t k = 0; k < s->count && st == BP_OK; k += BP_CHUNK_PAIRS) {
            const size_t c = s->count - k < BP_CHUNK_PAIRS ? s->count - k : BP_CHUNK_PAIRS;
            st = deliver(s, s->store->pairs + k, c);
        }
        return st;
    }
    if (s->split)
        for (size_t k = 0; k < s->count; ++k) s->store->pairs[k].j -= s->split;
    return BP_OK;
}

uint64_t bp_sink_close(bp_sink *s, bool ok) {
    if (ok) return s->fn ? s->delivered : s->count;
    s->store->count = 0;
    return s->lines ? 0 : s->delivered;  // streamed: pairs held back, none delivered
}

bp_pair *bp_sink_claim(bp_sink *s, size_t count, bp_status *st) {
    if (s->flush != flush_grow) return NULL;
    bp_pair_store *ps = s->store;
    if (s->cap - s->count <= count) {  // count < cap holds after the caller's writes
        // A quarter more than asked: the next frame's merge, a few pairs larger, must not double
        // the buffer onto fresh pages (line 2D at 100,000 with 2 workers: a 157 ms frame).
        const size_t need = s->count + count + 1, want = need + need / 4;
        ps->pairs = bp_grow(s->ctx, ps->pairs, &ps->cap, want > need ? want : need, sizeof *ps->pairs, s->count > 0, st);
        if (*st != BP_OK) return NULL;
        s->buf = ps->pairs;
        s->cap = ps->cap;
    }
    return s->buf + s->count;
}

bp_status bp_sink_append(bp_sink *s, const bp_pair *pairs, size_t count) {
    while (count) {
        size_t room = s->cap - s->count;  // >= 1 between pushes
        size_t c = count < room ? count : room;
        memcpy(s->buf + s->count, pairs, c * sizeof *pairs);
        s->count += c;
        pairs += c;
        count -= c;
        if (s->count == s->cap) {
            bp_status st = s->flush(s);
            if (st != BP_OK) return st;
        }
    }
    return BP_OK;
}
