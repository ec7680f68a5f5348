// `broadphase bench --peers`: the peers of bench/peers (docs/peers.md) on the same frames under
// the same rules as our methods, their exact pairs compared with ours every frame (issue #6).
// Each runs in a forked child with a processor-time watchdog. On the world scenes a peer runs
// through its persistent interface instead (bench_world.c).
#define _POSIX_C_SOURCE 200809L // fork, pipe, sigaction, setitimer

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "peers.h"

// The peers run in a forked child (bm_run_peer_child) with a watchdog: a processor-time timer
// armed around each step. The adapters stop themselves at 5 s in their own loops, but not inside
// every loop of the peer library (Box2D's tree queries in UpdatePairs, for one, take half a
// minute at N = 1,000,000); the timer's handler reports "skipped" through the pipe and ends the
// child. bm_watchdog_fd is the pipe's write end in the child, -1 elsewhere.
static int bm_watchdog_fd = -1;
typedef struct bm_child_msg {
    int rc;
    bm_result res;
} bm_child_msg;
static bm_child_msg bm_watchdog_msg;  // "skipped", filled before arming: the handler only writes it

static void bm_on_watchdog(int sig) {
    (void)sig;
    ssize_t w = write(bm_watchdog_fd, &bm_watchdog_msg, sizeof bm_watchdog_msg);
    _exit(w == (ssize_t)sizeof bm_watchdog_msg ? 0 : 1);
}

// Arms (seconds > 0) or disarms the processor-time watchdog.
static void bm_watchdog(double seconds) {
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_PROF, &it, NULL);
}

// After timing frame f: the peer's exact pairs against the reference's; a difference marks the
// result wrong. Returns 0, or -1 on an error (message printed).
static int bm_compare_peer(void *peer, const char *pname, bp_context *ref, int dim, const float *boxes, size_t n,
                           size_t f, size_t frames, bm_result *res) {
    const uint32_t *got;
    size_t count, missing = 0, extra = 0;
    bp_pairs want;
    if (bp_peer_exact_pairs(peer, boxes, &got, &count) != 0) {
        fprintf(stderr, "broadphase bench: %s: out of memory filtering its pairs\n", pname);
        return -1;
    }
    bp_status st = bm_lib_call(ref, dim, boxes, n, &want);
    if (st != BP_OK) {
        fprintf(stderr, "broadphase bench: reference: %s\n", bp_status_string(st));
        return -1;
    }
    // bp_pair is two uint32_t: the peers' pair layout (peers.h).
    if (!bp_peer_compare(got, count, (const uint32_t *)(const void *)want.pairs, want.count, &missing, &extra))
        bm_mark_wrong(res, f, missing, extra);
    if (f == frames) res->pairs = count;
    return 0;
}

// The frames of bm_run_scene_peer: frame 0 (the peer's build) untimed, then each step timed
// around bp_peer_step. `ref` NULL with `mem` (no comparison). Returns as bm_run_scene_peer.
static int bm_peer_frames(const bm_opts *o, bp_scene *scene, size_t n, void *peer, size_t pk, bp_context *ref,
                          float *boxes, float *vel, double *times, bm_result *res, bm_mem *mem) {
    const char *pname = bp_peer_name(pk);
    const size_t frames = (size_t)o->frames, d = (size_t)o->dim;
    for (size_t f = 0;; ++f) {
        if (f > 0) bp_scene_step(scene);
        bp_scene_boxes(scene, boxes);
        for (size_t i = 0; i < n * d; ++i) vel[i] = (float)scene->v[i];
        bm_watchdog_arm(BM_SKIP_SECONDS);
        double t0 = bm_now();
        int prc = bp_peer_step(peer, boxes, n, vel);
        double t = bm_now() - t0;
        bm_watchdog_arm(0.0);
        int end = bm_peer_outcome(prc, res, pname, bp_scene_name(scene->kind), n, f);
        if (end != 0) return end > 0 ? 0 : -1;
        if (!mem && bm_compare_peer(peer, pname, ref, o->dim, boxes, n, f, frames, res) != 0) return -1;
        if (f == frames) res->checks = bp_peer_candidates(peer);
        if (bm_frame_end(res, times, f, t, frames, mem)) return 0;
    }
}

// Runs peer pk on one scene/N under the same rules as bm_run: frame 0 (the peer's build) untimed,
// frames 1..F timed around bp_peer_step with the same clock. Its exact pairs are compared with
// ours (brute force up to BM_PEER_BRUTE_MAX boxes, sweep above) every frame, after timing; a
// difference marks it wrong (the first one is kept). A step past 5 s of processor time (the
// adapters' limit, so the build counts too) or a first timed frame past 5 s skips it. Returns 0,
// or -1 on an error (message printed). With `mem`: no comparison, peak memory measured.
static int bm_run_scene_peer(const bm_opts *o, bp_scene_kind kind, size_t n, size_t pk, bm_result *res, bm_mem *mem) {
    bp_scene scene;
    if (bm_scene_start(res, &scene, o, kind, n) != 0) return -1;
    int rc = -1;
    size_t frames = (size_t)o->frames, d = (size_t)o->dim;
    float *boxes = malloc(n * 2 * d * sizeof *boxes);
    float *vel = malloc(n * d * sizeof *vel);
    double *times = malloc(frames * sizeof *times);
    bp_context *ref = NULL;
    void *peer = NULL;
    if (!boxes || !vel || !times) {
        fprintf(stderr, "broadphase bench: out of memory\n");
        goto done;
    }
    bp_scene_boxes(&scene, boxes);
    for (size_t i = 0; i < n * d; ++i) vel[i] = (float)scene.v[i];  // resident before the baseline
    if (mem) bm_mem_start(mem);
    if (!mem && bm_reference_create(o->dim, n <= BM_PEER_BRUTE_MAX ? BP_METHOD_BRUTE : BP_METHOD_SWEEP, &ref) != BP_OK)
        goto done;
    // The scene's objects stay in [0, W]^dim (docs/scenes.md); bullet-sap quantizes to these bounds.
    float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3];
    for (int a = 0; a < 3; ++a) hi[a] = (float)scene.world;
    peer = bp_peer_create(pk, o->dim, n, lo, hi);
    if (!peer) {
        fprintf(stderr, "broadphase bench: %s: cannot create it for N = %zu in %dD\n", bp_peer_name(pk), n, o->dim);
        goto done;
    }
    bp_peer_set_time_limit(peer, BM_SKIP_SECONDS);
    rc = bm_peer_frames(o, &scene, n, peer, pk, ref, boxes, vel, times, res, mem);
done:
    bp_peer_destroy(peer);
    bp_context_destroy(ref);
    free(times);
    free(vel);
    free(boxes);
    bp_scene_free(&scene);
    return rc;
}

// bm_run_peer in a forked child with the watchdog (above); same contract. A child that dies
// (a peer crashing) is reported as failed.
int bm_run_peer_child(const bm_opts *o, int scene, size_t n, size_t pk, bm_result *res) {
    memset(res, 0, sizeof *res);
    res->outcome = BM_FAILED;
    fflush(stdout);
    fflush(stderr);
    int fd[2];
    if (pipe(fd) != 0) return bm_run_peer(o, scene, n, pk, res, NULL);  // no isolation, no watchdog
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return bm_run_peer(o, scene, n, pk, res, NULL);
    }
    if (pid == 0) {
        close(fd[0]);
        bm_watchdog_fd = fd[1];
        memset(&bm_watchdog_msg, 0, sizeof bm_watchdog_msg);
        bm_watchdog_msg.res.outcome = BM_SKIPPED;  // estimate 0: "stopped at 5 s of processor time"
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = bm_on_watchdog;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGPROF, &sa, NULL) != 0) bm_watchdog_fd = -1;
        bm_child_msg msg;
        memset(&msg, 0, sizeof msg);
        msg.rc = bm_run_peer(o, scene, n, pk, &msg.res, NULL);
        bm_watchdog(0.0);
        ssize_t w = write(fd[1], &msg, sizeof msg);
        fflush(stderr);
        _exit(w == (ssize_t)sizeof msg ? 0 : 1);  // no atexit handlers, no second stdio flush
    }
    close(fd[1]);
    bm_child_msg msg;
    char *buf = (char *)&msg;
    size_t len = 0;
    while (len < sizeof msg) {
        ssize_t got = read(fd[0], buf + len, sizeof msg - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
    }
    close(fd[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
    }
    if (len != sizeof msg) {
        fprintf(stderr, "broadphase bench: %s on %s N = %zu: the child process died%s\n", bp_peer_name(pk),
                bm_scene_name(scene), n, WIFSIGNALED(wst) ? " on a signal" : "");
        return -1;
    }
    *res = msg.res;
    return msg.rc;
}


void bm_watchdog_arm(double seconds) {
    if (bm_watchdog_fd >= 0) bm_watchdog(seconds);
}

int bm_run_peer(const bm_opts *o, int scene, size_t n, size_t pk, bm_result *res, bm_mem *mem) {
    if (bm_scene_is_world(scene)) return bm_run_world_peer(o, bm_wscene(scene), n, pk, res, mem);
    return bm_run_scene_peer(o, (bp_scene_kind)scene, n, pk, res, mem);
}
