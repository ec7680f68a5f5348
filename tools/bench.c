// `broadphase bench`: the docs/scenes.md benchmark. Each row (one of our methods, or a peer) replays
// the scene from frame 0 with its own state, so every row sees the same frames; frame 0 is an
// untimed warm-up, frames 1..F are timed around the broad-phase work only. This file holds the
// options, the scene x row loop and the outputs (tables, CSV, JSON, plots); the runners are in
// bench_run.c (our stateless methods), bench_peer.c (the peers), bench_world.c (the persistent
// world, and the world scenes for every row) and bench_memory.c (--memory). See bench.h.
#define _POSIX_C_SOURCE 200809L // fork, isatty, mkdir

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "peers.h"

// Every method in table order: the baselines first, the persistent world last.
const bm_method bm_methods[BM_METHOD_COUNT] = {
    {"memcpy", BM_MEMCPY, BP_METHOD_BRUTE, 0},
    {"naive-sweep", BM_NAIVE, BP_METHOD_SWEEP, 0},
    {"brute", BM_LIB, BP_METHOD_BRUTE, 0},
    {"sweep", BM_LIB, BP_METHOD_SWEEP, 0},
    {"sweep-resort", BM_RESORT, BP_METHOD_SWEEP, 0},
    {"grid", BM_LIB, BP_METHOD_GRID, 0},
    {"grid-sorted", BM_SORTED, BP_METHOD_GRID, 0},
    {"quadtree", BM_LIB, BP_METHOD_QUADTREE, 0},
    {"quadtree-loose", BM_LOOSE, BP_METHOD_QUADTREE, 0},
    {"rdc", BM_LIB, BP_METHOD_RDC, 0},
    {"auto", BM_LIB, BP_METHOD_AUTO, 0},
    {"world", BM_WORLD, BP_METHOD_AUTO, BP_WORLD_MODE_AUTO},
    {"world-incremental", BM_WORLD, BP_METHOD_AUTO, BP_WORLD_MODE_INCREMENTAL},
    {"world-rebuild", BM_WORLD, BP_METHOD_AUTO, BP_WORLD_MODE_REBUILD},
};

const char *bm_row_name(size_t row) {
    return bm_row_is_peer(row) ? bp_peer_name(row - BM_METHOD_COUNT) : bm_methods[row].name;
}

bool bm_row_on(const bm_opts *o, size_t row) {
    return bm_row_is_peer(row) ? o->peers[row - BM_METHOD_COUNT] : o->methods[row];
}

bool bm_row_serial(size_t row) { return bm_row_is_peer(row) || bm_is_baseline(&bm_methods[row]); }

int bm_row_threads(const bm_opts *o, size_t row) { return bm_row_serial(row) ? 1 : o->workers; }

const char *bm_scene_name(int scene) {
    return bm_scene_is_world(scene) ? bp_wscene_name(bm_wscene(scene)) : bp_scene_name((bp_scene_kind)scene);
}

static const char bm_usage[] =
    "usage: broadphase bench [--scene NAME|all] [--n N[,N...]] [--dim 2|3] [--method NAME[,NAME...]|all]\n"
    "                        [--peers] [--frames F[,F...]] [--format table|csv|json] [--seed S] [--check]\n"
    "                        [--memory] [--out DIR] [--threads T[,T...]] [--parallel-min N]\n"
    "\n"
    "Times the broad phase on the scenes of docs/scenes.md: each method replays the scene from frame 0\n"
    "with its own context (frame 0 is an untimed warm-up) and is timed, with a monotonic clock,\n"
    "around the pair-finding call after each of frames 1..F. Reported per method: mean ms per\n"
    "frame (total / F, the headline), median and worst frame, the pairs and the candidate checks\n"
    "at frame F, and (table) the speed-up over naive-sweep and over sweep in the same run\n"
    "(mean over mean; above 1 is faster). With several N, a table per scene follows: methods and\n"
    "peers as rows, N as columns, mean ms per frame, and the ratio best peer / our best method.\n"
    "\n"
    "The world rows (world, world-incremental, world-rebuild) run the persistent world\n"
    "(bp_world; the mode forced for the last two): on the scenes above every object is a moving\n"
    "proxy moved every frame; each frame times the moves (one batch call) and the update. The\n"
    "world scenes static (1% of the objects move, the rest are static) and shooter (N bullets\n"
    "that live 60 frames, N/100 ships, categories and masks) give the world only what changed:\n"
    "the moves, removes and adds (one batch call each) and the update are timed. There the\n"
    "stateless rows get every box each frame, and the pairs the scene does not count (two static\n"
    "objects, two bullets) are dropped after timing, so every row reports the same pairs.\n"
    "\n";

// The options, apart: ISO C bounds a string literal's length.
static const char bm_usage_options[] =
    "  --scene NAME   uniform, clustered, mixed, line, seed, sticks, sizes, the shapes beyond SCENES.md\n"
    "                 (pareto, plates, blobs), static, shooter, or all;\n"
    "                 a comma list works too (default: seed at N = 500 and uniform at N = 100000)\n"
    "  --n N,...      object counts (default: 500 for seed, 100000 for the others; shooter: bullets)\n"
    "  --dim 2|3      dimension (default 2)\n"
    "  --method LIST  comma list of brute, sweep, grid, quadtree, rdc, auto, the bench-only\n"
    "                 naive-sweep (seed 003's plain sort-and-sweep: qsort + active list),\n"
    "                 sweep-resort (sweep without temporal coherence), grid-sorted (the grid\n"
    "                 without its table for small worlds), quadtree-loose (the quadtree with\n"
    "                 loose cells), memcpy (one copy of the boxes: the floor under any method,\n"
    "                 finds no pairs), world, world-incremental, world-rebuild, and peer names;\n"
    "                 'all' (default) is every method of ours this build has, no peer\n"
    "  --peers        add every peer this build has that handles --dim (docs/peers.md):\n"
    "                 chipmunk-hash, chipmunk-bbtree, chipmunk-bbtree-vel, chipmunk-sweep1d,\n"
    "                 box2d-broadphase, bullet-dbvt, bullet-sap, cgal-box. Each peer's update\n"
    "                 and pair search is timed; its exact pairs are compared with ours (brute\n"
    "                 force at N <= 2000, sweep above) every frame after timing, and a peer that\n"
    "                 differs is shown as WRONG (first differing frame: pairs missing/extra).\n"
    "                 On the world scenes the peers run as persistent worlds (their proxies\n"
    "                 added once, only the moved ones updated, their own pair cache); their\n"
    "                 pairs, begins and ends are compared with the reference world's every frame\n"
    "  --frames F     timed frames (default 20); F,F,... gives each --n value its own count\n"
    "                 (e.g. --n 10000,100000,1000000 --frames 20,20,5)\n"
    "  --format FMT   table (default), csv with the columns\n"
    "                 scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks,\n"
    "                 kind,status,peak_bytes (kind ours|peer; status ok|skipped|wrong|failed; a skipped\n"
    "                 run has empty time, pair and check fields), or json: an array of one object\n"
    "                 per run with the same fields (null where empty) plus missing and extra\n"
    "  --seed S       scene seed (default 1)\n";

// ISO C bounds a string literal's length: the options, in a third part.
static const char bm_usage_threads[] =
    "  --threads T,.. worker counts (bp_context_def.workers, the calling thread included;\n"
    "                 default 1): each of our methods runs once per count, and with several a\n"
    "                 table per scene gives each method's time per count and its speed-up over\n"
    "                 the first count. Baselines and peers run once, single-threaded\n"
    "  --parallel-min N  calls with fewer boxes stay on one thread (bp_context_def.parallel_min;\n"
    "                 default 0: the library's measured threshold): to time workers on small N\n"
    "  --check        compare every frame's pair set of our methods with brute force\n"
    "                 (N <= 20000) or sweep; the world rows and the world scenes with the\n"
    "                 reference world (pairs, begins and ends; bench/world_ref.c). A mismatch\n"
    "                 is printed and makes the exit status 1. A wrong peer never changes the\n"
    "                 exit status: it is a finding about another library, shown in the output\n"
    "  --memory       at the largest N, run each method and peer again (frame 0 and 2 timed\n"
    "                 frames) in a fresh process and report its peak memory: the resident\n"
    "                 high-water mark (VmHWM, reset after building the scene) minus the resident\n"
    "                 size then, in bytes per object\n"
    "  --out DIR      also write DIR/bench.csv and, with gnuplot, a log-log plot per scene of\n"
    "                 mean ms per frame against N (DIR/bench-SCENE.png, bench-SCENE-3d.png)\n"
    "  --help         this text\n"
    "\n"
    "A method that would take more than 5 s per frame (estimated from its candidate count, or\n"
    "measured on the first frame) is skipped at that size; a peer also when its build or any\n"
    "step passes 5 s of processor time.\n";

// A comma list, split in place: copies `v` into buf (false when it does not fit) and
// bm_token hands out one entry at a time (*rest NULL after the last).
static bool bm_list(char *buf, size_t size, const char *v) {
    if (strlen(v) >= size) return false;
    strcpy(buf, v);
    return true;
}

static const char *bm_token(char **rest) {
    char *tok = *rest, *next = strchr(tok, ',');
    if (next) *next++ = '\0';
    *rest = next;
    return tok;
}

// --n, --frames, --threads: a comma list (at most `size` - 1 characters) of whole numbers from 1
// to hi, appended to out[*count..cap). `what` names them in the message.
static bool bm_parse_counts(const char *v, size_t size, const char *opt, const char *what, uint64_t hi,
                            uint64_t *out, size_t cap, size_t *count) {
    char buf[512];
    if (size > sizeof buf || !bm_list(buf, size, v)) return false;
    for (char *rest = buf; rest;) {
        const char *tok = bm_token(&rest);
        uint64_t x;
        if (!bp_parse_u64(tok, &x) || x < 1 || x > hi) {
            fprintf(stderr, "broadphase bench: %s wants %s from 1 to %llu, not '%s'\n", opt, what,
                    (unsigned long long)hi, tok);
            return false;
        }
        if (*count == cap) {
            fprintf(stderr, "broadphase bench: too many %s values\n", opt);
            return false;
        }
        out[(*count)++] = x;
    }
    return true;
}

static bool bm_parse_scenes(const char *v, bm_opts *o) {
    if (strcmp(v, "all") == 0) {
        for (int k = 0; k < BM_SCENE_COUNT; ++k) o->scenes[k] = true;
        return true;
    }
    char buf[256];
    if (!bm_list(buf, sizeof buf, v)) return false;
    for (char *rest = buf; rest;) {
        const char *tok = bm_token(&rest);
        bp_scene_kind kind;
        bp_wscene_kind wkind;
        if (bp_scene_from_name(tok, &kind) == 0) {
            o->scenes[kind] = true;
        } else if (bp_wscene_from_name(tok, &wkind) == 0) {
            o->scenes[BP_SCENE_COUNT + wkind] = true;
        } else {
            fprintf(stderr,
                    "broadphase bench: unknown scene '%s' (uniform, clustered, mixed, line, seed, sticks, sizes, "
                    "pareto, plates, blobs, static, shooter, all)\n",
                    tok);
            return false;
        }
    }
    return true;
}

static bool bm_parse_methods(const char *v, bm_opts *o) {
    if (strcmp(v, "all") == 0) {
        for (size_t k = 0; k < BM_METHOD_COUNT; ++k) o->methods[k] = bm_available(&bm_methods[k]);
        return true;
    }
    char buf[256];
    if (!bm_list(buf, sizeof buf, v)) return false;
    for (char *rest = buf; rest;) {
        const char *tok = bm_token(&rest);
        size_t k = 0;
        while (k < BM_METHOD_COUNT && strcmp(bm_methods[k].name, tok) != 0) ++k;
        size_t pk = bp_peer_find(tok);
        if (k == BM_METHOD_COUNT && pk < BM_PEER_MAX) {
            o->peers[pk] = true;
            continue;
        }
        if (k == BM_METHOD_COUNT) {
            fprintf(stderr,
                    "broadphase bench: unknown method '%s' (brute, sweep, grid, quadtree, rdc, auto, naive-sweep, "
                    "sweep-resort, grid-sorted, quadtree-loose, memcpy, world, world-incremental, world-rebuild, "
                    "all, or a peer this build has: %zu compiled in)\n",
                    tok, bp_peer_count());
            return false;
        }
        if (!bm_available(&bm_methods[k])) {
            fprintf(stderr, "broadphase bench: method '%s' is not available in this build\n", tok);
            return false;
        }
        o->methods[k] = true;
    }
    return true;
}

// --frames F or F,F,... (one per --n value, e.g. fewer frames at the largest N).
static bool bm_parse_frames(const char *v, bm_opts *o) {
    uint64_t f[sizeof o->frames_at / sizeof o->frames_at[0]];
    o->frames_count = 0;
    if (!bm_parse_counts(v, 512, "--frames", "counts", 1000000, f, sizeof f / sizeof f[0], &o->frames_count))
        return false;
    for (size_t k = 0; k < o->frames_count; ++k) o->frames_at[k] = (int)f[k];
    o->frames = o->frames_at[0];
    if (o->frames_count == 1) o->frames_count = 0;
    return true;
}

// "20" or "20/20/5": the frames of a scene's columns, for titles.
static void bm_frames_text(const bm_opts *o, char *buf, size_t size) {
    if (!o->frames_count) {
        snprintf(buf, size, "%d", o->frames);
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < o->frames_count && len < size; ++k) {
        int w = snprintf(buf + len, size - len, "%s%d", k ? "/" : "", o->frames_at[k]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

// --n N or N,N,...; a second --n adds to the first.
static bool bm_parse_ns(const char *v, bm_opts *o) {
    uint64_t n[sizeof o->ns / sizeof o->ns[0]];
    size_t count = o->n_count;
    if (!bm_parse_counts(v, 512, "--n", "counts", BP_MAX_BOXES, n, sizeof n / sizeof n[0], &count)) return false;
    for (size_t k = o->n_count; k < count; ++k) o->ns[k] = (size_t)n[k];
    o->n_count = count;
    return true;
}

// --threads T or T,T,... (worker counts).
static bool bm_parse_threads(const char *v, bm_opts *o) {
    uint64_t t[sizeof o->threads / sizeof o->threads[0]];
    o->threads_count = 0;
    if (!bm_parse_counts(v, 256, "--threads", "worker counts", BP_MAX_WORKERS, t, sizeof t / sizeof t[0],
                         &o->threads_count))
        return false;
    for (size_t k = 0; k < o->threads_count; ++k) o->threads[k] = (int)t[k];
    return true;
}

// Speed-up of r over the baseline b ("-" when either did not run).
static void bm_ratio(char *buf, size_t size, const bm_result *b, const bm_result *r) {
    if (b && b->outcome == BM_RAN && r->mean_ms > 0.0) snprintf(buf, size, "%.2fx", b->mean_ms / r->mean_ms);
    else snprintf(buf, size, "-");
}

static const char *bm_status_name(const bm_result *r) {
    if (r->outcome == BM_SKIPPED) return "skipped";
    if (r->outcome == BM_FAILED) return "failed";
    return r->wrong ? "wrong" : "ok";
}

static void bm_print_block(const bm_opts *o, int scene, size_t n, const bm_result *res) {
    // Ratios: naive-sweep (the baseline of the source documents) and the library's sweep (what
    // every other method has to beat), each from this same run.
    const bm_result *naive = NULL, *sweep = NULL;
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k]) continue;
        if (bm_methods[k].kind == BM_NAIVE) naive = &res[k];
        if (bm_methods[k].kind == BM_LIB && bm_methods[k].method == BP_METHOD_SWEEP) sweep = &res[k];
    }
    printf("\n%s  %dD  N = %zu  frames %d  seed %llu", bm_scene_name(scene), o->dim, n, o->frames,
           (unsigned long long)o->seed);
    if (o->threads_count > 1 || o->workers != 1) printf("  threads %d", o->workers);
    putchar('\n');
    printf("%-19s %11s %11s %11s %12s %14s %10s %10s\n", "method", "mean ms", "median ms", "max ms", "pairs",
           "checks", "vs naive", "vs sweep");
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        const bm_result *r = &res[k];
        const char *name = bm_row_name(k);
        if (r->outcome == BM_SKIPPED) {
            if (r->need_gb > 0.0) printf("%-19s skipped (would keep about %.3g GB of pairs: over half this machine's memory)\n", name, r->need_gb);
            else if (r->estimate_s > 0.0) printf("%-19s skipped (>5 s/frame; about %.3g s)\n", name, r->estimate_s);
            else printf("%-19s skipped (>5 s/frame: stopped at 5 s of processor time)\n", name);
            continue;
        }
        if (r->outcome == BM_FAILED) {
            printf("%-19s failed\n", name);
            continue;
        }
        char vs_naive[32], vs_sweep[32];
        bm_ratio(vs_naive, sizeof vs_naive, naive, r);
        bm_ratio(vs_sweep, sizeof vs_sweep, sweep, r);
        if (k < BM_METHOD_COUNT && bm_methods[k].kind == BM_MEMCPY) {
            // A copy finds no pairs: a speed-up over a method means nothing.
            snprintf(vs_naive, sizeof vs_naive, "-");
            snprintf(vs_sweep, sizeof vs_sweep, "-");
        }
        printf("%-19s %11.3f %11.3f %11.3f %12llu %14llu %10s %10s", name, r->mean_ms, r->median_ms, r->max_ms,
               (unsigned long long)r->pairs, (unsigned long long)r->checks, vs_naive, vs_sweep);
        if (r->wrong)
            printf("  WRONG: frame %zu: %zu pairs missing, %zu extra (%zu of %d frames differ)", r->wrong_frame,
                   r->missing, r->extra, r->wrong_frames, o->frames + 1);
        putchar('\n');
        if (r->wrong && bp_peer_known_defect(k - BM_METHOD_COUNT))
            printf("%-19s   known defect: %s\n", "", bp_peer_known_defect(k - BM_METHOD_COUNT));
    }
}

// One CSV line: scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks (issue #2's
// columns, in its order), then kind,status,peak_bytes (added by the peers and --memory).
static void bm_csv_line(FILE *f, const bm_opts *o, int scene, size_t n, size_t row, const bm_result *r) {
    fprintf(f, "%s,%d,%zu,%s,%d,%d,", bm_scene_name(scene), o->dim, n, bm_row_name(row), bm_row_threads(o, row),
            o->frames);
    if (r->outcome == BM_RAN)
        fprintf(f, "%.4f,%.4f,%.4f,%llu,%llu,", r->mean_ms, r->median_ms, r->max_ms, (unsigned long long)r->pairs,
                (unsigned long long)r->checks);
    else
        fprintf(f, ",,,,,");
    fprintf(f, "%s,%s,", bm_row_is_peer(row) ? "peer" : "ours", bm_status_name(r));
    if (r->peak_known) fprintf(f, "%llu", (unsigned long long)r->peak_bytes);
    fputc('\n', f);
}

static const char bm_csv_header[] =
    "scene,dim,n,method,threads,frames,mean_ms,median_ms,max_ms,pairs,checks,kind,status,peak_bytes\n";

static void bm_json_object(const bm_opts *o, int scene, size_t n, size_t row, const bm_result *r,
                           bool first) {
    printf("%s{\"scene\": \"%s\", \"dim\": %d, \"n\": %zu, \"method\": \"%s\", \"kind\": \"%s\", \"threads\": %d, \"frames\": %d, ",
           first ? "" : ",\n", bm_scene_name(scene), o->dim, n, bm_row_name(row),
           bm_row_is_peer(row) ? "peer" : "ours", bm_row_threads(o, row), o->frames);
    if (r->outcome == BM_RAN)
        printf("\"mean_ms\": %.4f, \"median_ms\": %.4f, \"max_ms\": %.4f, \"pairs\": %llu, \"checks\": %llu, ",
               r->mean_ms, r->median_ms, r->max_ms, (unsigned long long)r->pairs, (unsigned long long)r->checks);
    else
        printf("\"mean_ms\": null, \"median_ms\": null, \"max_ms\": null, \"pairs\": null, \"checks\": null, ");
    printf("\"status\": \"%s\", \"missing\": %zu, \"extra\": %zu, \"peak_bytes\": ", bm_status_name(r), r->missing,
           r->extra);
    if (r->peak_known) printf("%llu}", (unsigned long long)r->peak_bytes);
    else printf("null}");
}

typedef struct bm_sink {
    FILE *csv;        // --out DIR/bench.csv, or NULL
    bool json_first;  // no JSON object printed yet
} bm_sink;

// The persistent world keeps every pair (its pair set, and the events of a frame that changes
// them all): about this many bytes a pair (`line` 2D at 100,000 and 300,000: 8.0 and 41.5
// million pairs, peaks of 0.65 and 3.1 GB). At 1,000,000 `line` has 252 million pairs, which
// took the world past 18 GB and the benchmark machine (23 GB) out of memory.
#define BM_WORLD_BYTES_PER_PAIR 80.0

// Whether world row k would need more than half the machine's memory for the pairs the rows
// before it found at this N (skipped then, with the estimate in res[k]).
static bool bm_world_too_big(size_t k, bm_result *res) {
    uint64_t pairs = 0;
    for (size_t j = 0; j < k; ++j)
        if (res[j].outcome == BM_RAN && res[j].pairs > pairs) pairs = res[j].pairs;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return false;
    const double need = (double)pairs * BM_WORLD_BYTES_PER_PAIR;
    if (need <= 0.5 * (double)pages * (double)page) return false;
    bm_result *r = &res[k];
    memset(r, 0, sizeof *r);
    r->outcome = BM_SKIPPED;
    r->need_gb = need * 1e-9;
    return true;
}

// Runs every selected row at one scene/N into res[BM_ROW_MAX].
static int bm_block(const bm_opts *o, int scene, size_t n, bm_scratch *sc, bool *mismatch, bm_result *res,
                    bm_sink *sink) {
    int status = BP_EXIT_OK;
    // Long runs say what they are doing, on a terminal only (never in captured output).
    bool progress = isatty(STDERR_FILENO) == 1;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        if (progress) fprintf(stderr, "\r\033[K%s N = %zu: %s...", bm_scene_name(scene), n, bm_row_name(k));
        int rc;
        if (bm_row_is_peer(k)) rc = bm_run_peer_child(o, scene, n, k - BM_METHOD_COUNT, &res[k]);
        else if (!bm_scene_is_world(scene) && bm_methods[k].kind == BM_WORLD && bm_world_too_big(k, res))
            rc = 0;
        else if (bm_scene_is_world(scene) || bm_methods[k].kind == BM_WORLD)
            rc = bm_run_world(o, scene, n, &bm_methods[k], &res[k], NULL);
        else rc = bm_run(o, (bp_scene_kind)scene, n, &bm_methods[k], &res[k], sc, NULL);
        if (rc == 0 && o->memory && n == o->n_max && res[k].outcome == BM_RAN) {
            if (progress) fprintf(stderr, "\r\033[K%s N = %zu: %s memory...", bm_scene_name(scene), n, bm_row_name(k));
            bm_measure(o, scene, n, k, &res[k]);
        }
        if (progress) fprintf(stderr, "\r\033[K");
        if (rc < 0) status = BP_EXIT_FAIL;
        if (rc > 0) *mismatch = true;  // our methods only: a wrong peer is a finding, not a failure
        if (o->format == BM_CSV) bm_csv_line(stdout, o, scene, n, k, &res[k]);
        if (o->format == BM_JSON) {
            bm_json_object(o, scene, n, k, &res[k], sink->json_first);
            sink->json_first = false;
        }
        if (sink->csv) bm_csv_line(sink->csv, o, scene, n, k, &res[k]);
        fflush(stdout);
    }
    if (o->format == BM_TABLE) bm_print_block(o, scene, n, res);
    fflush(stdout);
    return status;
}

// A table cell: mean ms, or why there is none.
static void bm_cell(char *buf, size_t size, const bm_result *r) {
    if (r->outcome == BM_SKIPPED) snprintf(buf, size, r->need_gb > 0.0 ? "skipped >mem" : "skipped >5s");
    else if (r->outcome == BM_FAILED) snprintf(buf, size, "failed");
    else if (r->wrong) snprintf(buf, size, "WRONG -%zu/+%zu", r->missing, r->extra);
    else if (r->mean_ms >= 100.0) snprintf(buf, size, "%.0f", r->mean_ms);
    else if (r->mean_ms >= 1.0) snprintf(buf, size, "%.2f", r->mean_ms);
    else snprintf(buf, size, "%.3f", r->mean_ms);
}

// The best row among ours (library methods: not naive-sweep, seed 003's baseline) or among the
// peers that ran and agreed with us; BM_ROW_MAX when none.
static size_t bm_best(const bm_opts *o, const bm_result *res, bool peer) {
    size_t best = BM_ROW_MAX;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k) || bm_row_is_peer(k) != peer) continue;
        if (!peer && bm_is_baseline(&bm_methods[k])) continue;
        const bm_result *r = &res[k];
        if (r->outcome != BM_RAN || r->wrong) continue;
        if (best == BM_ROW_MAX || r->mean_ms < res[best].mean_ms) best = k;
    }
    return best;
}

// Whether peers ran at this N and every one of them was skipped (over 5 s per frame).
static bool bm_all_peers_skipped(const bm_opts *o, const bm_result *res) {
    bool any = false;
    for (size_t k = BM_METHOD_COUNT; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        if (res[k].outcome != BM_SKIPPED) return false;
        any = true;
    }
    return any;
}

static bool bm_any_peer(const bm_opts *o) {
    for (size_t k = 0; k < BM_PEER_MAX; ++k)
        if (o->peers[k]) return true;
    return false;
}

// The table of one scene: rows = methods then peers, columns = N, mean ms per frame; with peers,
// the best of each side and their ratio; with --memory, bytes per object at the largest N.
static void bm_print_summary(const bm_opts *o, int scene, const size_t *ns, size_t count,
                             const bm_result *all) {
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    printf("\n%s %dD: mean ms per frame (frames %s, seed %llu)\n", bm_scene_name(scene), o->dim, ftext,
           (unsigned long long)o->seed);
    printf("%-22s", "method");
    for (size_t c = 0; c < count; ++c) printf(" %16zu", ns[c]);
    putchar('\n');
    char cell[64];
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        printf("%-22s", bm_row_name(k));
        for (size_t c = 0; c < count; ++c) {
            bm_cell(cell, sizeof cell, &all[c * BM_ROW_MAX + k]);
            printf(" %16s", cell);
        }
        putchar('\n');
    }
    if (bm_any_peer(o)) {
        static const char *labels[3] = {"best ours", "best peer", "best peer / best ours"};
        for (int line = 0; line < 3; ++line) {
            printf("%-22s", labels[line]);
            for (size_t c = 0; c < count; ++c) {
                const bm_result *res = &all[c * BM_ROW_MAX];
                size_t ours = bm_best(o, res, false), peer = bm_best(o, res, true);
                if (line == 0) snprintf(cell, sizeof cell, "%s", ours < BM_ROW_MAX ? bm_row_name(ours) : "-");
                else if (line == 1) snprintf(cell, sizeof cell, "%s", peer < BM_ROW_MAX ? bm_row_name(peer) : "-");
                else if (ours < BM_ROW_MAX && peer < BM_ROW_MAX && res[ours].mean_ms > 0.0)
                    snprintf(cell, sizeof cell, "%.1fx", res[peer].mean_ms / res[ours].mean_ms);
                else if (ours < BM_ROW_MAX && bm_all_peers_skipped(o, res) && res[ours].mean_ms > 0.0)
                    // Every peer over 5 s per frame: a lower bound.
                    snprintf(cell, sizeof cell, ">%.0fx", BM_SKIP_SECONDS * 1e3 / res[ours].mean_ms);
                else snprintf(cell, sizeof cell, "-");
                printf(" %16s", cell);
            }
            putchar('\n');
        }
    }
    if (o->memory) {
        size_t c = count - 1;
        while (c > 0 && ns[c] != o->n_max) --c;
        printf("\n%s %dD: peak memory at N = %zu, bytes per object (resident high-water of a fresh process\n"
               "running frames 0 to 2 again, minus its resident size after building the scene)\n",
               bm_scene_name(scene), o->dim, ns[c]);
        for (size_t k = 0; k < BM_ROW_MAX; ++k) {
            if (!bm_row_on(o, k)) continue;
            const bm_result *r = &all[c * BM_ROW_MAX + k];
            if (r->peak_known) printf("%-22s %16.1f\n", bm_row_name(k), (double)r->peak_bytes / (double)ns[c]);
            else printf("%-22s %16s\n", bm_row_name(k), r->outcome == BM_RAN ? "unknown" : bm_status_name(r));
        }
    }
}

// --threads with several counts: each method's mean ms per frame per count, and its speed-up
// over the first count (mean over mean; above 1 is faster). `all` is [count][N][row].
static void bm_print_threads(const bm_opts *o, int scene, const size_t *ns, size_t count, const bm_result *all) {
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    printf("\n%s %dD: mean ms per frame by worker count (frames %s, seed %llu)\n", bm_scene_name(scene), o->dim,
           ftext, (unsigned long long)o->seed);
    printf("%-18s %9s", "method", "N");
    for (size_t t = 0; t < o->threads_count; ++t) printf(" %8d thr", o->threads[t]);
    for (size_t t = 1; t < o->threads_count; ++t) printf(" %6s %d/%d", "", o->threads[0], o->threads[t]);
    putchar('\n');
    char cell[64];
    for (size_t k = 0; k < BM_METHOD_COUNT; ++k) {
        if (!o->methods[k] || bm_row_serial(k)) continue;
        for (size_t c = 0; c < count; ++c) {
            printf("%-18s %9zu", bm_row_name(k), ns[c]);
            const bm_result *base = &all[c * BM_ROW_MAX + k];
            for (size_t t = 0; t < o->threads_count; ++t) {
                bm_cell(cell, sizeof cell, &all[(t * count + c) * BM_ROW_MAX + k]);
                printf(" %12s", cell);
            }
            for (size_t t = 1; t < o->threads_count; ++t) {
                const bm_result *r = &all[(t * count + c) * BM_ROW_MAX + k];
                if (base->outcome == BM_RAN && r->outcome == BM_RAN && r->mean_ms > 0.0)
                    snprintf(cell, sizeof cell, "%.2fx", base->mean_ms / r->mean_ms);
                else
                    snprintf(cell, sizeof cell, "-");
                printf(" %11s", cell);
            }
            putchar('\n');
        }
    }
}

// One colour per row (ours, then peers), so that no two lines share one.
static const char *const bm_colors[] = {"#7f7f7f", "#bcbd22", "#1f77b4", "#17becf", "#2ca02c", "#9467bd",
                                        "#d62728", "#000000", "#ff7f0e", "#8c564b", "#e377c2", "#aec7e8",
                                        "#98df8a", "#ff9896", "#c5b0d5", "#c49c94"};

// --out: a gnuplot script per scene (inline data) run in DIR. Returns false when gnuplot could
// not be started (not installed); a plot gnuplot itself fails on is reported and skipped.
static bool bm_plot(const bm_opts *o, int scene, const size_t *ns, size_t count, const bm_result *all) {
    char base[64], path[4200];
    snprintf(base, sizeof base, "bench-%s%s", bm_scene_name(scene), o->dim == 3 ? "-3d" : "");
    snprintf(path, sizeof path, "%s/%s.gp", o->out_dir, base);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "broadphase bench: cannot write %s\n", path);
        return true;
    }
    fprintf(f, "set terminal pngcairo noenhanced size 960,640\nset output '%s.png'\n", base);
    char ftext[200];
    bm_frames_text(o, ftext, sizeof ftext);
    fprintf(f, "set title '%s %dD: mean ms per frame (frames %s, seed %llu)'\n", bm_scene_name(scene), o->dim,
            ftext, (unsigned long long)o->seed);
    fprintf(f, "set logscale xy\nset xlabel 'N (objects)'\nset ylabel 'mean ms per frame'\nset grid\n"
               "set key outside right top\nset format x '%%.0s%%c'\n");
    size_t lo = ns[0], hi = ns[0];
    for (size_t c = 0; c < count; ++c) {
        if (ns[c] < lo) lo = ns[c];
        if (ns[c] > hi) hi = ns[c];
    }
    fprintf(f, "set xrange [%g:%g]\n", (double)lo / 1.5, (double)hi * 1.5);
    // One series per row with at least one timed point; peers dashed, wrong peers say so.
    bool any = false;
    for (size_t k = 0; k < BM_ROW_MAX; ++k) {
        if (!bm_row_on(o, k)) continue;
        bool has = false, wrong = false;
        for (size_t c = 0; c < count; ++c) {
            has = has || all[c * BM_ROW_MAX + k].outcome == BM_RAN;
            wrong = wrong || all[c * BM_ROW_MAX + k].wrong;
        }
        if (!has) continue;
        fprintf(f, "%s'-' using 1:2 with linespoints lw 2 lc rgb '%s' dashtype %d title '%s%s%s'",
                any ? ", \\\n     " : "plot ", bm_colors[k % (sizeof bm_colors / sizeof bm_colors[0])],
                bm_row_is_peer(k) ? 2 : 1, bm_row_is_peer(k) ? "peer " : "", bm_row_name(k), wrong ? " (WRONG)" : "");
        any = true;
    }
    fputc('\n', f);
    for (size_t k = 0; k < BM_ROW_MAX && any; ++k) {
        if (!bm_row_on(o, k)) continue;
        bool has = false;
        for (size_t c = 0; c < count; ++c) has = has || all[c * BM_ROW_MAX + k].outcome == BM_RAN;
        if (!has) continue;
        for (size_t c = 0; c < count; ++c) {
            const bm_result *r = &all[c * BM_ROW_MAX + k];
            if (r->outcome == BM_RAN) fprintf(f, "%zu %.6g\n", ns[c], r->mean_ms > 1e-6 ? r->mean_ms : 1e-6);
        }
        fprintf(f, "e\n");
    }
    bool ok = fclose(f) == 0;
    if (!ok || !any) return true;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return true;
    if (pid == 0) {
        // gnuplot's own messages go to stderr; stdout stays the table/csv/json.
        if (chdir(o->out_dir) != 0) _exit(126);
        snprintf(path, sizeof path, "%s.gp", base);
        execlp("gnuplot", "gnuplot", path, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return true;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return false;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "broadphase bench: gnuplot failed on %s/%s.gp\n", o->out_dir, base);
    return true;
}

// One option of `broadphase bench` at a->k. Returns BP_EXIT_OK, or BP_EXIT_USAGE (message printed).
static int bm_parse_option(bp_args *a, bm_opts *o, const char **mem_child) {
    const char *s = a->argv[a->k], *v;
    if (bp_arg_is(a, "--scene")) {
        if (!(v = bp_arg_value(a, "--scene")) || !bm_parse_scenes(v, o)) return BP_EXIT_USAGE;
        o->scene_given = true;
    } else if (bp_arg_is(a, "--n")) {
        if (!(v = bp_arg_value(a, "--n")) || !bm_parse_ns(v, o)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--dim")) {
        if (!(v = bp_arg_value(a, "--dim")) || !bp_parse_dim(v, &o->dim)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--method")) {
        if (!(v = bp_arg_value(a, "--method")) || !bm_parse_methods(v, o)) return BP_EXIT_USAGE;
        o->method_given = true;
    } else if (bp_arg_is(a, "--frames")) {
        if (!(v = bp_arg_value(a, "--frames")) || !bm_parse_frames(v, o)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--format")) {
        if (!(v = bp_arg_value(a, "--format"))) return BP_EXIT_USAGE;
        if (strcmp(v, "csv") == 0) o->format = BM_CSV;
        else if (strcmp(v, "json") == 0) o->format = BM_JSON;
        else if (strcmp(v, "table") == 0) o->format = BM_TABLE;
        else {
            fprintf(stderr, "broadphase bench: --format is table, csv or json, not '%s'\n", v);
            return BP_EXIT_USAGE;
        }
    } else if (bp_arg_is(a, "--threads")) {
        if (!(v = bp_arg_value(a, "--threads")) || !bm_parse_threads(v, o)) return BP_EXIT_USAGE;
    } else if (bp_arg_is(a, "--parallel-min")) {
        if (!(v = bp_arg_value(a, "--parallel-min"))) return BP_EXIT_USAGE;
        if (!bp_parse_u64(v, &o->parallel_min) || o->parallel_min > BP_MAX_BOXES) {
            fprintf(stderr, "broadphase bench: --parallel-min wants a box count, not '%s'\n", v);
            return BP_EXIT_USAGE;
        }
    } else if (bp_arg_is(a, "--seed")) {
        if (!(v = bp_arg_value(a, "--seed"))) return BP_EXIT_USAGE;
        if (!bp_parse_u64(v, &o->seed)) {
            fprintf(stderr, "broadphase bench: --seed wants an unsigned 64-bit integer, not '%s'\n", v);
            return BP_EXIT_USAGE;
        }
    } else if (bp_arg_is(a, "--out")) {
        if (!(v = bp_arg_value(a, "--out"))) return BP_EXIT_USAGE;
        if (!*v || strlen(v) > 4000) {
            fprintf(stderr, "broadphase bench: --out wants a directory name\n");
            return BP_EXIT_USAGE;
        }
        o->out_dir = v;
    } else if (bp_arg_is(a, "--memory-child")) {
        if (!(v = bp_arg_value(a, "--memory-child"))) return BP_EXIT_USAGE;
        *mem_child = v;
    } else if (strcmp(s, "--check") == 0) {
        o->check = true;
    } else if (strcmp(s, "--peers") == 0) {
        o->all_peers = true;
    } else if (strcmp(s, "--memory") == 0) {
        o->memory = true;
    } else {
        fprintf(stderr, "broadphase bench: unknown argument '%s' (see 'broadphase bench --help')\n", s);
        return BP_EXIT_USAGE;
    }
    return BP_EXIT_OK;
}

// The options into *o, with the defaults for what was not given. Returns BP_EXIT_OK or
// BP_EXIT_USAGE (message printed).
static int bm_parse_args(int argc, char **argv, bm_opts *o, const char **mem_child) {
    memset(o, 0, sizeof *o);
    o->dim = 2;
    o->frames = 20;
    o->seed = 1;
    o->threads[0] = 1;
    o->threads_count = 1;
    *mem_child = NULL;
    bp_args a = {argc, argv, 2, NULL};
    for (; a.k < argc; ++a.k)
        if (bm_parse_option(&a, o, mem_child) != BP_EXIT_OK) return BP_EXIT_USAGE;
    if (!o->method_given)
        for (size_t k = 0; k < BM_METHOD_COUNT; ++k) o->methods[k] = bm_available(&bm_methods[k]);
    if (!o->scene_given) o->scenes[BP_SCENE_SEED] = o->scenes[BP_SCENE_UNIFORM] = true;
    if (o->all_peers && bp_peer_count() == 0)
        fprintf(stderr, "broadphase bench: --peers: no peer library was found when this was built\n");
    for (size_t k = 0; k < BM_PEER_MAX && k < bp_peer_count(); ++k) {
        if (o->all_peers && bp_peer_supports(k, o->dim)) o->peers[k] = true;
        if (o->peers[k] && !bp_peer_supports(k, o->dim)) {
            fprintf(stderr, "broadphase bench: %s does not handle %dD scenes: left out\n", bp_peer_name(k), o->dim);
            o->peers[k] = false;
        }
    }
    for (size_t k = 0; k < o->n_count; ++k)
        if (o->ns[k] > o->n_max) o->n_max = o->ns[k];
    if (o->frames_count && o->frames_count != o->n_count) {
        fprintf(stderr, "broadphase bench: --frames has %zu counts for %zu --n values\n", o->frames_count, o->n_count);
        return BP_EXIT_USAGE;
    }
    o->workers = o->threads[0];
    return BP_EXIT_OK;
}

// --out DIR: the directory and DIR/bench.csv with its header. Returns BP_EXIT_OK or BP_EXIT_FAIL
// (message printed).
static int bm_open_out(const bm_opts *o, bm_sink *sink) {
    char path[4200];
    if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "broadphase bench: cannot create %s: %s\n", o->out_dir, strerror(errno));
        return BP_EXIT_FAIL;
    }
    snprintf(path, sizeof path, "%s/bench.csv", o->out_dir);
    sink->csv = fopen(path, "w");
    if (!sink->csv) {
        fprintf(stderr, "broadphase bench: cannot write %s: %s\n", path, strerror(errno));
        return BP_EXIT_FAIL;
    }
    fputs(bm_csv_header, sink->csv);
    return BP_EXIT_OK;
}

// What a run over the scenes carries from one to the next.
typedef struct bm_session {
    bm_sink sink;
    bm_scratch sc;
    bm_result *all;  // [thread count][N][row]: the first count's slice is what summaries and plots show
    size_t count;    // N values
    bool mismatch, gnuplot;
    int status;
} bm_session;

// Every N and worker count of one scene, then its summary tables and plot.
static void bm_run_scene(const bm_opts *o, int scene, bm_session *run) {
    const size_t count = run->count, tc = o->threads_count;
    size_t def_n = scene == BP_SCENE_SEED ? 500 : 100000;
    size_t ns[32];
    for (size_t k = 0; k < count; ++k) ns[k] = o->n_count ? o->ns[k] : def_n;
    bm_opts os = *o;
    if (!o->n_count) os.n_max = def_n;
    // Only the peers that run this scene in this dimension (the world scenes need a peer's
    // persistent interface).
    for (size_t k = 0; k < BM_PEER_MAX; ++k) {
        os.peers[k] = o->peers[k] && bm_peer_applies(scene, k, o->dim);
        if (o->peers[k] && !os.peers[k] && !o->all_peers)
            fprintf(stderr, "broadphase bench: %s has no persistent interface: left out of scene %s\n",
                    bp_peer_name(k), bm_scene_name(scene));
    }
    memset(run->all, 0, tc * count * BM_ROW_MAX * sizeof *run->all);
    for (size_t k = 0; k < count; ++k) {
        if (o->frames_count) os.frames = o->frames_at[k];
        for (size_t t = 0; t < tc; ++t) {
            // Peers and baselines are single-threaded: they run with the first count only.
            bm_opts ot = os;
            ot.workers = o->threads[t];
            if (t > 0) {
                for (size_t r = 0; r < BM_METHOD_COUNT; ++r)
                    if (bm_row_serial(r)) ot.methods[r] = false;
                memset(ot.peers, 0, sizeof ot.peers);
            }
            if (bm_block(&ot, scene, ns[k], &run->sc, &run->mismatch, &run->all[(t * count + k) * BM_ROW_MAX],
                         &run->sink) != BP_EXIT_OK)
                run->status = BP_EXIT_FAIL;
        }
    }
    // The per-scene table: with several N, with peers, or with --memory (one N alone is the block above).
    if (o->format == BM_TABLE && (count > 1 || bm_any_peer(&os) || o->memory))
        bm_print_summary(&os, scene, ns, count, run->all);
    if (o->format == BM_TABLE && tc > 1) bm_print_threads(&os, scene, ns, count, run->all);
    if (o->out_dir && run->gnuplot) run->gnuplot = bm_plot(&os, scene, ns, count, run->all);
    fflush(stdout);
}

// Closes the outputs and says what went wrong; returns the exit status.
static int bm_finish_session(const bm_opts *o, bm_session *run) {
    int status = run->status;
    if (o->format == BM_JSON) fputs("\n]\n", stdout);
    free(run->all);
    free(run->sc.keys);
    if (run->sink.csv && fclose(run->sink.csv) != 0) {
        fprintf(stderr, "broadphase bench: writing %s/bench.csv failed\n", o->out_dir);
        status = BP_EXIT_FAIL;
    }
    if (o->out_dir && !run->gnuplot)
        fprintf(stderr, "broadphase bench: gnuplot not found: wrote %s/bench.csv only, no plot\n", o->out_dir);
    if (fflush(stdout) != 0) status = BP_EXIT_FAIL;
    if (run->mismatch) {
        fprintf(stderr, "broadphase bench: --check found mismatches\n");
        status = BP_EXIT_FAIL;
    }
    return status;
}

int bp_cmd_bench(int argc, char **argv) {
    for (int k = 2; k < argc; ++k) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            fputs(bm_usage, stdout);
            fputs(bm_usage_options, stdout);
            fputs(bm_usage_threads, stdout);
            return BP_EXIT_OK;
        }
    }
    bm_opts o;
    const char *mem_child;  // --memory-child NAME: bm_measure's re-executed child
    if (bm_parse_args(argc, argv, &o, &mem_child) != BP_EXIT_OK) return BP_EXIT_USAGE;
    if (mem_child) return bm_memory_child(&o, mem_child);

    bm_session run = {{NULL, true}, {NULL, 0}, NULL, o.n_count ? o.n_count : 1, false, true, BP_EXIT_OK};
    if (o.out_dir && bm_open_out(&o, &run.sink) != BP_EXIT_OK) return BP_EXIT_FAIL;
    if (o.format == BM_CSV) fputs(bm_csv_header, stdout);
    if (o.format == BM_JSON) fputs("[\n", stdout);
    run.all = calloc(o.threads_count * run.count * BM_ROW_MAX, sizeof *run.all);
    if (!run.all) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        if (run.sink.csv) fclose(run.sink.csv);
        return BP_EXIT_FAIL;
    }
    // Seed first (the small demo), then the others in docs/scenes.md order, the world scenes last.
    static const int order[BM_SCENE_COUNT] = {BP_SCENE_SEED,   BP_SCENE_UNIFORM, BP_SCENE_CLUSTERED,
                                              BP_SCENE_MIXED,  BP_SCENE_LINE,    BP_SCENE_STICKS,
                                              BP_SCENE_SIZES,  BP_SCENE_PARETO,  BP_SCENE_PLATES,
                                              BP_SCENE_BLOBS,  BP_SCENE_COUNT + BP_WSCENE_STATIC,
                                              BP_SCENE_COUNT + BP_WSCENE_SHOOTER};
    _Static_assert(BM_SCENE_COUNT == 12, "every scene has its place in the order");
    for (int s = 0; s < BM_SCENE_COUNT; ++s)
        if (o.scenes[order[s]]) bm_run_scene(&o, order[s], &run);
    return bm_finish_session(&o, &run);
}
