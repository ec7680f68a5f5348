// `broadphase bench --memory`: the peak resident memory of one row, measured in a fresh process.
#define _POSIX_C_SOURCE 200809L // fork, pipe, execv

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

// Peak memory of a run (--memory), measured inside a child process: the resident high-water mark
// (VmHWM, reset through /proc/self/clear_refs once the scene is built) minus the resident size
// then. Where clear_refs is missing, getrusage's ru_maxrss stands in for both.

// A "Key:   123 kB" line of /proc/self/status, in bytes; 0 when absent.
static uint64_t bm_status_bytes(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    uint64_t v = 0;
    size_t len = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, len) == 0) {
            v = strtoull(line + len, NULL, 10) * 1024u;
            break;
        }
    }
    fclose(f);
    return v;
}

static uint64_t bm_maxrss_bytes(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

void bm_mem_start(bm_mem *m) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    m->hwm = false;
    if (f) {
        bool ok = fputs("5", f) >= 0;
        m->hwm = fclose(f) == 0 && ok;
    }
    m->base = m->hwm ? bm_status_bytes("VmRSS:") : 0;
    if (m->base == 0) {
        m->hwm = false;
        m->base = bm_maxrss_bytes();
    }
}

uint64_t bm_mem_peak(const bm_mem *m) {
    uint64_t now = m->hwm ? bm_status_bytes("VmHWM:") : bm_maxrss_bytes();
    return now > m->base ? now - m->base : 0;
}

// --memory: runs row `row` again in a fresh process (this program re-executed with the hidden
// option --memory-child, so that its heap starts empty: a forked child would reuse pages the
// parent had already touched and show no growth) and stores its peak in res. Leaves
// res->peak_known false when that fails.
void bm_measure(const bm_opts *o, int scene, size_t n, size_t row, bm_result *res) {
    char nbuf[32], dbuf[8], sbuf[32], fbuf[32];
    snprintf(nbuf, sizeof nbuf, "%zu", n);
    snprintf(dbuf, sizeof dbuf, "%d", o->dim);
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)o->seed);
    // The build (frame 0) and two timed frames: where the peak is reached (structures at full
    // size, a pair output of a moved frame), at a third of the time of 5 frames at N = 1,000,000.
    snprintf(fbuf, sizeof fbuf, "%d", o->frames < BM_MEMORY_FRAMES ? o->frames : BM_MEMORY_FRAMES);
    char tbuf[16], pbuf[32];
    snprintf(tbuf, sizeof tbuf, "%d", o->workers);
    snprintf(pbuf, sizeof pbuf, "%llu", (unsigned long long)o->parallel_min);
    char *args[] = {"broadphase", "bench", "--memory-child", (char *)bm_row_name(row), "--scene",
                    (char *)bm_scene_name(scene), "--n", nbuf, "--dim", dbuf, "--seed", sbuf, "--frames", fbuf,
                    "--threads", tbuf, "--parallel-min", pbuf, NULL};
    fflush(stdout);
    fflush(stderr);
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0) _exit(126);
        close(fd[1]);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(fd[1]);
    char buf[64];
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
        if (len == sizeof buf - 1) break;
    }
    buf[len] = '\0';
    close(fd[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
    }
    uint64_t v;
    char *nl = strchr(buf, '\n');
    if (nl) *nl = '\0';
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && bp_parse_u64(buf, &v)) {
        res->peak_known = true;
        res->peak_bytes = v;
    }
}

// The child side of bm_measure: runs `name` once with the measurement on and prints its peak.
int bm_memory_child(const bm_opts *o, const char *name) {
    int scene = BP_SCENE_UNIFORM;
    for (int s = 0; s < BM_SCENE_COUNT; ++s)
        if (o->scenes[s]) scene = s;
    size_t n = o->n_count ? o->ns[0] : 1000;
    size_t row = 0;
    while (row < BM_ROW_MAX && (bm_row_name(row) == NULL || strcmp(bm_row_name(row), name) != 0)) ++row;
    if (row == BM_ROW_MAX) return BP_EXIT_USAGE;
    bm_result r;
    bm_scratch sc = {NULL, 0};
    bm_mem mem;
    int rc;
    if (bm_row_is_peer(row)) rc = bm_run_peer(o, scene, n, row - BM_METHOD_COUNT, &r, &mem);
    else if (bm_scene_is_world(scene) || bm_methods[row].kind == BM_WORLD)
        rc = bm_run_world(o, scene, n, &bm_methods[row], &r, &mem);
    else rc = bm_run(o, (bp_scene_kind)scene, n, &bm_methods[row], &r, &sc, &mem);
    free(sc.keys);
    if (rc != 0 || r.outcome != BM_RAN || !r.peak_known) return BP_EXIT_FAIL;
    printf("%llu\n", (unsigned long long)r.peak_bytes);
    return fflush(stdout) == 0 ? BP_EXIT_OK : BP_EXIT_FAIL;
}
