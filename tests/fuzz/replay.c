#define _POSIX_C_SOURCE 200809L
// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput with any compiler: each
// argument is a file or a directory of files (the target's corpus in tests/fuzz/corpus/), so
// the corpus and every regression input run in every build (CTest fuzz.replay.*).
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    char *buf = NULL;
    size_t n = 0;
    if (!bp_input_read(path, &buf, &n, stderr)) return 1;  // the CLI's whole-file reader
    // An exact-size copy, so that AddressSanitizer catches a read one past the input.
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    size_t files = 0;
    for (int k = 1; k < argc; ++k) {
        struct stat st;
        if (stat(argv[k], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[k]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[k])) return 1;
            ++files;
            continue;
        }
        DIR *d = opendir(argv[k]);
        if (!d) return 1;
        char **names = NULL;
        size_t count = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            char **nn = realloc(names, (count + 1) * sizeof *names);
            if (!nn) return 1;
            names = nn;
            size_t len = strlen(argv[k]) + strlen(e->d_name) + 2;
            names[count] = malloc(len);
            if (!names[count]) return 1;
            snprintf(names[count], len, "%s/%s", argv[k], e->d_name);
            ++count;
        }
        closedir(d);
        qsort(names, count, sizeof *names, cmp_names);  // the same order on every run
        for (size_t j = 0; j < count; ++j) {
            if (replay_file(names[j])) return 1;
            free(names[j]);
        }
        free(names);
        files += count;
    }
    printf("replayed %zu inputs\n", files);
    return files ? 0 : 1;
}
